/* npucc_conv_s8_fast.h - int8 2-D convolution, fast CPU form (C99, integer only).
 *
 * Same result as npucc_conv2d_s8 (npucc_conv_s8.h) bit for bit, for the cases the
 * compiler routes here (--cpu-kernels=fast): zero weight zero points and group 1
 * (npucc_conv2d_s8_fast) or depthwise with one output channel per input channel
 * (npucc_dwconv2d_s8_fast). Activations are ONNX's X [N][C][H][W], Y [N][M][OH][OW].
 * The compiler precomputes per output channel
 *   bias_f[m] = bias[m] - x_zp * sum_k W[m][k]   (input zero point folded in), and
 *   rq[4m..4m+3] = npucc_rq32_prep(mult[m], shift[m], rounding)  (npucc_requant.h),
 * so the inner loops are pure int8 dot products and padding reads x_zp.
 * Group 1 takes its weights packed by npucc_conv_s8_pack (below; the compiler packs
 * them at compile time) and `panel` holds 4 * npucc_conv_s8_kpad(C*KH*KW) bytes (two
 * output pixels' input patches: two int16 per k, or on Arm cores without the DSP
 * extension one int32 per k holding both; npucc_conv_s8_fast.c); both must be 8-byte
 * aligned (constants and arena slices are). Depthwise weights keep ONNX's [C][1][KH][KW]; the depthwise
 * kernel's `work` scratch (npucc_dwconv_s8_fast_scratch bytes, 4-byte aligned) holds
 * int32 sums and int16 input rows padded with x_zp. Pads are the
 * top/left pads; bottom/right ones are implied.
 * Channels whose weights are all zero have a constant output (bias_f[m] requantized); the
 * compiler leaves them out of the group-1 kernel's work with `chmap` (NULL: none): chmap[0]
 * = L, the number of computed channels, chmap[1 + j] = the output channel of packed slot
 * j < L (Wp, bias_f and rq hold the L computed channels in slot order), then one pair
 * (output channel, int8 value) for each of the M - L constant channels, whose planes the
 * kernel fills (with L = 0, Wp, bias_f and rq may be null and the panel is not used). */
#ifndef NPUCC_CONV_S8_FAST_H
#define NPUCC_CONV_S8_FAST_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Packed group-1 weights: output channels in blocks of 4 (the last block padded with
 * zero rows) and, per block, K = C*KH*KW in groups of 4 (the last group padded with
 * zeros). Group g of block b is 16 bytes at (b * kpad(K)/4 + g) * 16: channel c's four
 * weights k = 4g..4g+3 at byte 4c, in the order k0, k2, k1, k3, so that SXTB16 of the
 * word is the 16-bit pair (k0, k1) and SXTB16 of the word rotated by 8 is (k2, k3). */
static inline int32_t npucc_conv_s8_kpad(int32_t K) { return (K + 3) / 4 * 4; }
static inline size_t npucc_conv_s8_packed_bytes(int32_t M, int32_t K) {
  return (size_t)((M + 3) / 4) * 4 * (size_t)npucc_conv_s8_kpad(K);
}
static inline size_t npucc_conv_s8_packed_index(int32_t m, int32_t k, int32_t K) {
  static const unsigned char pos[4] = {0, 2, 1, 3};
  return ((size_t)(m / 4) * (size_t)(npucc_conv_s8_kpad(K) / 4) + (size_t)(k / 4)) * 16 +
         (size_t)(m % 4) * 4 + pos[k % 4];
}
/* The depthwise kernel's scratch. A 3x3 kernel at stride 1 without dilation (DW = DH =
 * 1, both strides 1) runs in bands of R = npucc_dwconv_s8_fast_band(...) rows of the
 * plane, transposed when it is taller than wide (npucc_dwconv_s8_fast_tr: the bands then
 * run down columns, so that their rows are the longer side; OL = the rows' length, OW or
 * OH): R * (OL + 2) int32 sums, then (R + 2) * (OL + 2) int16 input rows back to back.
 * Anything else: OW int32 sums, then KH + 1 int16 rows (the input rows of one output row,
 * and one row of x_zp) of (OW-1)*SW + (KW-1)*DW + 1 values, plus one, rounded up to 4
 * values. */
#define NPUCC_DWCONV_S8_BAND_SUMS 128 /* a band's sums, at most (unless one row is more) */
static inline int32_t npucc_dwconv_s8_fast_tr(int32_t OH, int32_t OW) { return OH > OW; }
static inline int32_t npucc_dwconv_s8_fast_band(int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                                int32_t SH, int32_t SW, int32_t DH, int32_t DW) {
  int32_t tr = npucc_dwconv_s8_fast_tr(OH, OW), OL = tr ? OH : OW, NR = tr ? OW : OH;
  int32_t R = NPUCC_DWCONV_S8_BAND_SUMS / (OL + 2);
  if (KH != 3 || KW != 3 || SH != 1 || SW != 1 || DH != 1 || DW != 1)
    return 0;
  return R < 1 ? 1 : (R > NR ? NR : R);
}
static inline size_t npucc_dwconv_s8_fast_row_len(int32_t OW, int32_t KW, int32_t SW, int32_t DW) {
  return (size_t)(((OW - 1) * SW + (KW - 1) * DW + 1 + 1 + 3) / 4 * 4);
}
static inline size_t npucc_dwconv_s8_fast_scratch(int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                                  int32_t SH, int32_t SW, int32_t DH, int32_t DW) {
  int32_t R = npucc_dwconv_s8_fast_band(OH, OW, KH, KW, SH, SW, DH, DW);
  size_t RS = (size_t)(npucc_dwconv_s8_fast_tr(OH, OW) ? OH : OW) + 2;
  if (R)
    return (size_t)R * RS * 4 + (size_t)(R + 2) * RS * 2;
  return (size_t)OW * 4 + (size_t)(KH + 1) * 2 * npucc_dwconv_s8_fast_row_len(OW, KW, SW, DW);
}

/* w [M][K] (ONNX order) into out[npucc_conv_s8_packed_bytes(M, K)]. */
static inline void npucc_conv_s8_pack(const int8_t *w, int32_t M, int32_t K, int8_t *out) {
  int32_t m, k;
  memset(out, 0, npucc_conv_s8_packed_bytes(M, K));
  for (m = 0; m < M; m++)
    for (k = 0; k < K; k++)
      out[npucc_conv_s8_packed_index(m, k, K)] = w[(size_t)m * (size_t)K + (size_t)k];
}

void npucc_conv2d_s8_fast(const int8_t *X, const int8_t *Wp, const int32_t *bias_f, int8_t *Y,
                          int16_t *panel, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                          int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                          int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                          int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                          int32_t rounding, const int32_t *chmap);
void npucc_dwconv2d_s8_fast(const int8_t *X, const int8_t *Wt, const int32_t *bias_f, int8_t *Y,
                            int32_t *work, int32_t N, int32_t C, int32_t H, int32_t W, int32_t OH,
                            int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                            int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                            int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                            int32_t rounding);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_CONV_S8_FAST_H */
