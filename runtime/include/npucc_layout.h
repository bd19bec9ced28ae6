/*===- npucc_layout.h - Byte offsets of the NPU's data layouts ----------===*
 *
 * One definition of every layout a description can ask for (issue 19,
 * phase 6; docs/target.md "Weight layouts"), shared by the compiler (which
 * writes them: lib/lower/npu/Records.cpp), the simulator (which reads them:
 * runtime/sim/npucc_sim_mac.c, npucc_sim_ops.c) and the unit tests
 * (test/unit/layout_test.cpp checks them against a naive definition).
 *
 * Weights of a conv (or matmul: kh = kw = 1, o = n, i = k) with O output
 * channels, I input channels and a KH x KW kernel:
 *   NPUCC_WL_OHWI     [O][KH][KW][I]                 (the default)
 *   NPUCC_WL_OIHW     [O][I][KH][KW]
 *   NPUCC_WL_HWIO     [KH][KW][I][O]
 *   NPUCC_WL_BLOCKED  [O/bo][KH][KW][I/bi][bo][bi]   O padded to a multiple
 *                     of bo and I to one of bi with zero weights
 *
 * Activations of an H x W x C image (conv, depthwise and pool operands in
 * the scratchpad; system memory keeps NHWC):
 *   NPUCC_AL_NHWC     [H][W][C]                      (the default)
 *   NPUCC_AL_BLOCKED  [C/b][H][W][b]                 C padded to a multiple
 *                     of b; the pad channels are written (zeros) but never
 *                     computed with
 * C99, no allocation, no I/O.
 *
 *===----------------------------------------------------------------------===*/
#ifndef NPUCC_LAYOUT_H
#define NPUCC_LAYOUT_H

#include <stdint.h>

#define NPUCC_WL_OHWI 0
#define NPUCC_WL_OIHW 1
#define NPUCC_WL_HWIO 2
#define NPUCC_WL_BLOCKED 3
#define NPUCC_WL_COUNT 4

/* A weight layout: its kind and, for NPUCC_WL_BLOCKED, the output- and
 * input-channel blocks (others: 1). */
typedef struct npucc_wlayout {
  uint8_t kind;
  uint16_t bo, bi;
} npucc_wlayout;

static inline int64_t npucc_layout_round_up(int64_t v, int64_t b) {
  return b > 1 ? (v + b - 1) / b * b : v;
}

/* Bytes of the weights of O x KH x KW x I int8 elements in layout `l`. */
static inline uint64_t npucc_wlayout_bytes(npucc_wlayout l, int64_t o, int64_t kh, int64_t kw,
                                           int64_t i) {
  if (l.kind == NPUCC_WL_BLOCKED)
    return (uint64_t)(npucc_layout_round_up(o, l.bo) * kh * kw * npucc_layout_round_up(i, l.bi));
  return (uint64_t)(o * kh * kw * i);
}

/* Offset of element (oc, ky, kx, ic) of O x KH x KW x I weights in layout `l`. */
static inline uint64_t npucc_wlayout_offset(npucc_wlayout l, int64_t o, int64_t kh, int64_t kw,
                                            int64_t i, int64_t oc, int64_t ky, int64_t kx,
                                            int64_t ic) {
  int64_t bo = l.bo > 1 ? l.bo : 1, bi = l.bi > 1 ? l.bi : 1;
  switch (l.kind) {
  case NPUCC_WL_OIHW:
    return (uint64_t)(((oc * i + ic) * kh + ky) * kw + kx);
  case NPUCC_WL_HWIO:
    return (uint64_t)(((ky * kw + kx) * i + ic) * o + oc);
  case NPUCC_WL_BLOCKED: {
    int64_t ib = npucc_layout_round_up(i, bi) / bi;
    return (uint64_t)((((((oc / bo) * kh + ky) * kw + kx) * ib + ic / bi) * bo + oc % bo) * bi +
                      ic % bi);
  }
  default:
    return (uint64_t)(((oc * kh + ky) * kw + kx) * i + ic);
  }
}

#define NPUCC_AL_NHWC 0
#define NPUCC_AL_BLOCKED 1

/* An activation layout: its kind and, for NPUCC_AL_BLOCKED, the channel
 * block b (others: 1). */
typedef struct npucc_alayout {
  uint8_t kind;
  uint16_t block;
} npucc_alayout;

/* Bytes of an H x W x C int8 image in layout `l` (pad channels included). */
static inline uint64_t npucc_alayout_bytes(npucc_alayout l, int64_t h, int64_t w, int64_t c) {
  if (l.kind == NPUCC_AL_BLOCKED && l.block > 0)
    return (uint64_t)(h * w * npucc_layout_round_up(c, l.block));
  return (uint64_t)(h * w * c);
}

/* Offset of element (y, x, ch) of an H x W x C image in layout `l`. */
static inline uint64_t npucc_alayout_offset(npucc_alayout l, int64_t h, int64_t w, int64_t c,
                                            int64_t y, int64_t x, int64_t ch) {
  if (l.kind == NPUCC_AL_BLOCKED && l.block > 0)
    return (uint64_t)((((ch / l.block) * h + y) * w + x) * l.block + ch % l.block);
  return (uint64_t)((y * w + x) * c + ch);
}

#endif /* NPUCC_LAYOUT_H */
