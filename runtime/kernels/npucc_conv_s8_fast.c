/* npucc_conv_s8_fast.c - int8 Conv as a register-blocked int8 GEMM (see npucc_conv_s8_fast.h).
 * Group-1 convolutions gather the input patches of two output pixels into a small panel
 * (padding = x_zp; a 1x1 convolution's patch is one strided column), then every block of
 * four output channels (weights packed at compile time by npucc_conv_s8_pack) runs
 * npucc_cf_dot4x2 over the panel: eight int32 sums (4 channels x 2 pixels), one weight
 * stream and one panel stream. Arm without the DSP extension: one SMLAL per weight and
 * k on both pixels; with it: two 2x2 halves of SMLAD (two 16-bit products per
 * instruction); elsewhere a 4x2 multiply-add loop. Each block is requantized with the
 * words in locals (npucc_rqrow_s8.h). Depthwise convolutions: npucc_dwconv_s8_fast.c. */
#include "npucc_conv_s8_fast.h"
#include "npucc_dot_s8.h"
#include "npucc_rq32.h"
#include "npucc_rqrow_s8.h"

/* The panel holds the two pixels' patches. With the Arm DSP extension, and on cores other
 * than Arm, they are int16 interleaved in groups of four k ([K4/4][pixel][4]), so that the
 * dot product reads both through one pointer: value k of pixel j at NPUCC_CF_POS(k) + 4j.
 * On Arm cores without it (or with NPUCC_PORTABLE_ONLY) one int32 per k holds both,
 * X_k = x0_k + x1_k * 2^23, and the dot product multiplies a weight with both pixels at
 * once into a 64-bit sum (SMLAL; see npucc_cf_dot4x2). Same size: 4 bytes per k. */
#define NPUCC_CF_POS(k) ((size_t)(k) + (size_t)((k) & ~3))
#if defined(NPUCC_DOT_SWAR)
typedef int32_t npucc_cf_pan;
#define NPUCC_CF_PUT(col, k, j, v)                                                                 \
  ((j) ? (void)((col)[k] += (int32_t)(v) * 8388608) : (void)((col)[k] = (int32_t)(v)))
#define NPUCC_CF_PUT2(col, k, v0, v1) ((col)[k] = (int32_t)(v0) + (int32_t)(v1) * 8388608)
#define NPUCC_CF_GROUP_STEP 4 /* panel entries per group of four k */
#define NPUCC_CF_GPUT(q, i, v0, v1) ((q)[i] = (int32_t)(v0) + (int32_t)(v1) * 8388608)
#else
typedef int16_t npucc_cf_pan;
#define NPUCC_CF_PUT(col, k, j, v) ((col)[NPUCC_CF_POS(k) + 4 * (size_t)(j)] = (int16_t)(v))
#define NPUCC_CF_PUT2(col, k, v0, v1)                                                              \
  ((col)[NPUCC_CF_POS(k)] = (int16_t)(v0), (col)[NPUCC_CF_POS(k) + 4] = (int16_t)(v1))
#define NPUCC_CF_GROUP_STEP 8
#define NPUCC_CF_GPUT(q, i, v0, v1) ((q)[i] = (int16_t)(v0), (q)[4 + (i)] = (int16_t)(v1))
#endif
/* NPUCC_CF_GPUT(q, i, v0, v1): value k = 4g + i of both pixels, q = the panel at group g
 * (g * NPUCC_CF_GROUP_STEP entries in). */

/* The C*KH*KW input values under output pixel (oy, ox), channel-major like the
 * weights, into pixel j's values of the panel (pixel 0 first). */
static void npucc_cf_gather(const int8_t *NPUCC_RESTRICT img, npucc_cf_pan *NPUCC_RESTRICT col,
                            int32_t j, int32_t C, int32_t H, int32_t W, int32_t KH, int32_t KW,
                            int32_t DH, int32_t DW, int32_t iy0, int32_t ix0, int32_t x_zp) {
  int32_t c, ky, kx, k = 0, plane = H * W;
  int32_t hin = ix0 >= 0 && ix0 + (KW - 1) * DW < W;
  if (KH == 1 && KW == 1 && hin && iy0 >= 0 && iy0 < H) {
    const int8_t *p = img + (size_t)iy0 * W + ix0;
    size_t s = (size_t)plane;
    for (c = 0; c + 4 <= C; c += 4, p += 4 * s) {
      NPUCC_CF_PUT(col, c, j, p[0]);
      NPUCC_CF_PUT(col, c + 1, j, p[s]);
      NPUCC_CF_PUT(col, c + 2, j, p[2 * s]);
      NPUCC_CF_PUT(col, c + 3, j, p[3 * s]);
    }
    for (; c < C; c++, p += s)
      NPUCC_CF_PUT(col, c, j, *p);
    return;
  }
  for (c = 0; c < C; c++) {
    const int8_t *pl = img + (size_t)c * plane;
    for (ky = 0; ky < KH; ky++) {
      int32_t iy = iy0 + ky * DH;
      const int8_t *row;
      if (iy < 0 || iy >= H) { /* a padding row: no pointer into it is formed */
        for (kx = 0; kx < KW; kx++, k++)
          NPUCC_CF_PUT(col, k, j, x_zp);
        continue;
      }
      row = pl + (size_t)iy * W;
      if (hin) { /* the window's columns are all inside */
        for (kx = 0; kx < KW; kx++, k++)
          NPUCC_CF_PUT(col, k, j, row[ix0 + kx * DW]);
        continue;
      }
      for (kx = 0; kx < KW; kx++, k++) {
        int32_t ix = ix0 + kx * DW;
        NPUCC_CF_PUT(col, k, j, ix >= 0 && ix < W ? row[ix] : x_zp);
      }
    }
  }
}

/* Both pixels' patches at once when they lie side by side (same row, the second SW
 * columns right) and wholly inside the image. Rows of three taps (KW = 3, DW = 1) have
 * their own loop over all C*KH input rows. */
static NPUCC_NOINLINE void npucc_cf_gather_pair3(const int8_t *NPUCC_RESTRICT row,
                                                 npucc_cf_pan *NPUCC_RESTRICT col, int32_t C,
                                                 int32_t KH, size_t rstep, size_t cstep,
                                                 int32_t SW) {
  int32_t c, ky;
  size_t k = 0;
  for (c = 0; c < C; c++, row += cstep) {
    for (ky = 0; ky < KH; ky++, row += rstep, k += 3) {
      NPUCC_CF_PUT2(col, k, row[0], row[SW]);
      NPUCC_CF_PUT2(col, k + 1, row[1], row[SW + 1]);
      NPUCC_CF_PUT2(col, k + 2, row[2], row[SW + 2]);
    }
  }
}
/* ... and a 1x1 patch: one value per channel, a group of four channels a step. */
static NPUCC_NOINLINE void npucc_cf_gather_pair1(const int8_t *NPUCC_RESTRICT t,
                                                 npucc_cf_pan *NPUCC_RESTRICT col, int32_t C,
                                                 size_t s, int32_t SW) {
  int32_t c, i;
  for (c = C >> 2; c > 0; c--, col += NPUCC_CF_GROUP_STEP)
    for (i = 0; i < 4; i++, t += s)
      NPUCC_CF_GPUT(col, i, t[0], t[SW]);
  for (i = 0; i < (C & 3); i++, t += s)
    NPUCC_CF_GPUT(col, i, t[0], t[SW]);
}
static void npucc_cf_gather_pair(const int8_t *NPUCC_RESTRICT img, npucc_cf_pan *NPUCC_RESTRICT col,
                                 int32_t C, int32_t H, int32_t W, int32_t KH, int32_t KW,
                                 int32_t DH, int32_t DW, int32_t iy0, int32_t ix0, int32_t SW) {
  int32_t c, ky, kx, k = 0;
  if (KH == 1 && KW == 1) {
    npucc_cf_gather_pair1(img + (size_t)iy0 * W + ix0, col, C, (size_t)H * W, SW);
    return;
  }
  if (KW == 3 && DW == 1) {
    size_t rstep = (size_t)DH * W;
    npucc_cf_gather_pair3(img + (size_t)iy0 * W + ix0, col, C, KH, rstep,
                          (size_t)H * W - (size_t)KH * rstep, SW);
    return;
  }
  for (c = 0; c < C; c++) {
    const int8_t *row = img + ((size_t)c * H + (size_t)iy0) * W + ix0;
    for (ky = 0; ky < KH; ky++, row += (size_t)DH * W) {
      for (kx = 0; kx < KW; kx++, k++) {
        const int8_t *t = row + (size_t)kx * DW;
        NPUCC_CF_PUT2(col, k, t[0], t[SW]);
      }
    }
  }
}

/* The panel (arena scratch) and the packed weights (a constant array) are 8-byte aligned:
 * the DSP loop may then fetch two words with one LDRD. */
#if defined(__GNUC__)
#define NPUCC_CF_ALIGNED8(p) __builtin_assume_aligned((p), 8)
#else
#define NPUCC_CF_ALIGNED8(p) (p)
#endif

/* Two words from an 8-byte aligned pointer, which then advances by `step` bytes: one
 * post-indexed LDRD with GCC or clang (they do not form it from two loads themselves). */
#if defined(NPUCC_DOT_DSP) && defined(__GNUC__)
#define NPUCC_CF_LDRD(a, b, ptr, step)                                                            \
  __asm__("ldrd %0, %1, [%2], #" #step : "=r"(a), "=r"(b), "+r"(ptr) : : )
#elif defined(NPUCC_DOT_DSP)
#define NPUCC_CF_LDRD(a, b, ptr, step)                                                            \
  (memcpy(&(a), (ptr), 4), memcpy(&(b), (const char *)(ptr) + 4, 4),                              \
   (ptr) = (const void *)((const char *)(ptr) + (step)))
#endif

/* acc[2c + j] = b[c] + sum_k w[c][k] * x_j[k] for the four channels of one packed block
 * (npucc_conv_s8_pack) and the two interleaved int16 patches of the panel x, over G
 * groups of four k. */
static NPUCC_NOINLINE void npucc_cf_dot4x2(const int8_t *NPUCC_RESTRICT wp,
                                           const npucc_cf_pan *NPUCC_RESTRICT x, int32_t G,
                                           const int32_t *b, int32_t *NPUCC_RESTRICT acc) {
#if defined(NPUCC_DOT_SWAR)
  /* One 32x32->64 multiply-accumulate (SMLAL) per weight and k gives both pixels:
   * s_c = sum w_c,k * X_k = L + H * 2^23 with L = sum w*x0, H = sum w*x1. Over at most 252
   * k, |L| <= 252 * 128 * 128 < 2^22, so L is the sign-extended low 23 bits of s_c and
   * H = (s_c - L) / 2^23, both exact; chunks of 63 groups then go into acc. */
  int32_t g = 0, c;
  for (c = 0; c < 4; c++)
    acc[2 * c] = acc[2 * c + 1] = b[c];
  while (g < G) {
    int32_t gend = G - g > 63 ? g + 63 : G;
    int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, sv[4];
#define NPUCC_CF_K(i, o) /* X_k, k = i of the group, times byte o of each channel's word */   \
  do {                                                                                             \
    int32_t X = x[i];                                                                              \
    s0 += (int64_t)wp[o] * X;                                                                      \
    s1 += (int64_t)wp[4 + (o)] * X;                                                                \
    s2 += (int64_t)wp[8 + (o)] * X;                                                                \
    s3 += (int64_t)wp[12 + (o)] * X;                                                               \
  } while (0)
    for (; g < gend; g++, x += 4, wp += 16) {
      NPUCC_CF_K(0, 0);
      NPUCC_CF_K(1, 2);
      NPUCC_CF_K(2, 1);
      NPUCC_CF_K(3, 3);
    }
#undef NPUCC_CF_K
    sv[0] = s0;
    sv[1] = s1;
    sv[2] = s2;
    sv[3] = s3;
    for (c = 0; c < 4; c++) { /* arithmetic right shifts, as npucc_requant.h assumes */
      int32_t lo = (int32_t)((uint32_t)sv[c] << 9) >> 9;
      acc[2 * c] += lo;
      acc[2 * c + 1] += (int32_t)((sv[c] - lo) >> 23);
    }
  }
#elif defined(NPUCC_DOT_DSP)
  int32_t h;
  for (h = 0; h < 2; h++) { /* channels 2h, 2h+1: SMLAD on (k0,k1) and (k2,k3) pairs */
    const int8_t *w = (const int8_t *)NPUCC_CF_ALIGNED8(wp + 8 * h);
    const int16_t *p = (const int16_t *)NPUCC_CF_ALIGNED8(x);
    int32_t a00 = b[2 * h], a01 = a00, a10 = b[2 * h + 1], a11 = a10;
    int32_t g = G;
#define NPUCC_CF_GROUP()                                                                           \
  do {                                                                                             \
    int32_t pa, pb, qa, qb, wa, wb, w0, w1;                                                        \
    NPUCC_CF_LDRD(wa, wb, w, 16); /* the two channels' words of the group */                      \
    NPUCC_CF_LDRD(pa, pb, p, 8);  /* pixel 0: (k0,k1), (k2,k3) */                                 \
    NPUCC_CF_LDRD(qa, qb, p, 8);  /* pixel 1 */                                                   \
    w0 = __sxtb16(wa);                                                                             \
    w1 = npucc_sxtb16_odd(wa);                                                                     \
    a00 = __smlad(w1, pb, __smlad(w0, pa, a00));                                                   \
    a01 = __smlad(w1, qb, __smlad(w0, qa, a01));                                                   \
    w0 = __sxtb16(wb);                                                                             \
    w1 = npucc_sxtb16_odd(wb);                                                                     \
    a10 = __smlad(w1, pb, __smlad(w0, pa, a10));                                                   \
    a11 = __smlad(w1, qb, __smlad(w0, qa, a11));                                                   \
  } while (0)
    if (g & 1)
      NPUCC_CF_GROUP();
    for (g >>= 1; g > 0; g--) {
      NPUCC_CF_GROUP();
      NPUCC_CF_GROUP();
    }
#undef NPUCC_CF_GROUP
    acc[4 * h] = a00;
    acc[4 * h + 1] = a01;
    acc[4 * h + 2] = a10;
    acc[4 * h + 3] = a11;
  }
#else
  const int16_t *end = x + 8 * G;
  int32_t a0 = b[0], a1 = a0, a2 = b[1], a3 = a2, a4 = b[2], a5 = a4, a6 = b[3], a7 = a6;
  /* value k = i of the group (both pixels, four apart) times byte o of each channel's word
   * (npucc_conv_s8_pack: k0, k1, k2, k3 at bytes 0, 2, 1, 3) */
#define NPUCC_CF_K(i, o)                                                                           \
  do {                                                                                             \
    int32_t u = x[i], v = x[4 + (i)];                                                              \
    a0 += wp[o] * u;                                                                               \
    a1 += wp[o] * v;                                                                               \
    a2 += wp[4 + (o)] * u;                                                                         \
    a3 += wp[4 + (o)] * v;                                                                         \
    a4 += wp[8 + (o)] * u;                                                                         \
    a5 += wp[8 + (o)] * v;                                                                         \
    a6 += wp[12 + (o)] * u;                                                                        \
    a7 += wp[12 + (o)] * v;                                                                        \
  } while (0)
  for (; x != end; x += 8, wp += 16) {
    NPUCC_CF_K(0, 0);
    NPUCC_CF_K(1, 2);
    NPUCC_CF_K(2, 1);
    NPUCC_CF_K(3, 3);
  }
#undef NPUCC_CF_K
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
  acc[4] = a4;
  acc[5] = a5;
  acc[6] = a6;
  acc[7] = a7;
#endif
}

#if !defined(NPUCC_DOT_SWAR)
/* acc[2c] = acc[2c + 1] = b[c] + sum_k w[c][k] * x_0[k]: npucc_cf_dot4x2 for a lone pixel
 * (pixel 0 of the panel; the last of an odd plane, or a fully connected layer), half the
 * work. (The SWAR panel holds the pixel in both lanes at the same cost.) */
static NPUCC_NOINLINE void npucc_cf_dot4x1(const int8_t *NPUCC_RESTRICT wp,
                                           const npucc_cf_pan *NPUCC_RESTRICT x, int32_t G,
                                           const int32_t *b, int32_t *NPUCC_RESTRICT acc) {
  int32_t a0 = b[0], a1 = b[1], a2 = b[2], a3 = b[3];
#if defined(NPUCC_DOT_DSP)
  const int8_t *w = (const int8_t *)NPUCC_CF_ALIGNED8(wp);
  const int16_t *p = (const int16_t *)NPUCC_CF_ALIGNED8(x);
  for (; G > 0; G--) {
    int32_t pa, pb, wa, wb;
    NPUCC_CF_LDRD(pa, pb, p, 16); /* pixel 0: (k0,k1), (k2,k3); pixel 1 skipped */
    NPUCC_CF_LDRD(wa, wb, w, 8);  /* channels 0 and 1 */
    a0 = __smlad(npucc_sxtb16_odd(wa), pb, __smlad(__sxtb16(wa), pa, a0));
    a1 = __smlad(npucc_sxtb16_odd(wb), pb, __smlad(__sxtb16(wb), pa, a1));
    NPUCC_CF_LDRD(wa, wb, w, 8); /* channels 2 and 3 */
    a2 = __smlad(npucc_sxtb16_odd(wa), pb, __smlad(__sxtb16(wa), pa, a2));
    a3 = __smlad(npucc_sxtb16_odd(wb), pb, __smlad(__sxtb16(wb), pa, a3));
  }
#else
  const int16_t *end = x + 8 * G;
  for (; x != end; x += 8, wp += 16) { /* k = i of the group times byte o of each word */
    int32_t u0 = x[0], u1 = x[1], u2 = x[2], u3 = x[3];
    a0 += wp[0] * u0 + wp[2] * u1 + wp[1] * u2 + wp[3] * u3;
    a1 += wp[4] * u0 + wp[6] * u1 + wp[5] * u2 + wp[7] * u3;
    a2 += wp[8] * u0 + wp[10] * u1 + wp[9] * u2 + wp[11] * u3;
    a3 += wp[12] * u0 + wp[14] * u1 + wp[13] * u2 + wp[15] * u3;
  }
#endif
  acc[0] = acc[1] = a0;
  acc[2] = acc[3] = a1;
  acc[4] = acc[5] = a2;
  acc[6] = acc[7] = a3;
}
#define NPUCC_CF_DOT1 npucc_cf_dot4x1
#else
#define NPUCC_CF_DOT1 npucc_cf_dot4x2
#endif

/* y[j] and y[d] (see below) for one channel whose words are not the EXACT fast ones (a
 * multiplier >= 0.5; npucc_rq32_i8 takes it out of line): out of line as well, so that the
 * loop below keeps its registers. */
static NPUCC_NOINLINE void npucc_cf_store_other(const int32_t *acc, const int32_t *r, int32_t d,
                                                int8_t *y, int32_t zp, int32_t lo, int32_t hi) {
  y[d] = npucc_rq32_i8(acc[1], r, NPUCC_RQ_EXACT, zp, lo, hi);
  y[0] = npucc_rq32_i8(acc[0], r, NPUCC_RQ_EXACT, zp, lo, hi);
}

/* y[o_c + j] = requantized acc[2c + j] for the channels c of words r..rend (4 words each)
 * and pixels j = 0 and j = d (d = 0 for a lone last pixel: its second value is stored
 * first and then overwritten), o_c = c * plane, or ch[c] * plane with a channel map.
 * EXACT rounding: the fast words inline, anything else through npucc_cf_store_other.
 * Inlined into four call sites below (with and without the map, with the common
 * full-range clamp as constants or not: fewer live registers). */
static NPUCC_ALWAYS_INLINE void npucc_cf_store_exact(const int32_t *NPUCC_RESTRICT acc,
                                                     const int32_t *r, const int32_t *rend,
                                                     int32_t d, int8_t *yb, const int32_t *ch,
                                                     int32_t plane, int32_t zp, int32_t lo,
                                                     int32_t hi, int32_t full) {
  int8_t *NPUCC_RESTRICT y = yb;
  for (; r != rend; r += NPUCC_RQ32_WORDS, acc += 2, y += plane) {
    int8_t *yc = ch ? yb + (size_t)*ch++ * (size_t)plane : y;
    int32_t mult = r[0], sh = r[1];
    int64_t rnd = (int64_t)(((uint64_t)(uint32_t)r[3] << 32) | (uint32_t)r[2]);
    if (sh < 0) {
      npucc_cf_store_other(acc, r, d, yc, zp, lo, hi);
    } else if (full) { /* a constant where this is inlined */
      yc[d] = npucc_cf_exact_sat(acc[1], mult, sh, rnd, zp);
      yc[0] = npucc_cf_exact_sat(acc[0], mult, sh, rnd, zp);
    } else {
      yc[d] = npucc_cf_exact(acc[1], mult, sh, rnd, zp, lo, hi);
      yc[0] = npucc_cf_exact(acc[0], mult, sh, rnd, zp, lo, hi);
    }
  }
}

/* y[o_c + j] = requantized acc[2c + j] for the mc channels of a block (words r, 4 per
 * channel) and one or two pixels (o_c as above). */
static NPUCC_NOINLINE void npucc_cf_store_block(const int32_t *NPUCC_RESTRICT acc, int32_t mc,
                                                int32_t two, const int32_t *r,
                                                const npucc_cf_out *o, int8_t *y,
                                                const int32_t *ch, int32_t plane) {
  int32_t c, j, zp = o->zp, lo = o->lo, hi = o->hi, rounding = o->rounding;
  const int32_t *rend = r + mc * NPUCC_RQ32_WORDS;
  if (rounding != NPUCC_RQ_FP32 && lo == -128 && hi == 127) {
    if (ch)
      npucc_cf_store_exact(acc, r, rend, two, y, ch, plane, zp, -128, 127, 1);
    else
      npucc_cf_store_exact(acc, r, rend, two, y, NULL, plane, zp, -128, 127, 1);
    return;
  }
  if (rounding != NPUCC_RQ_FP32) {
    if (ch)
      npucc_cf_store_exact(acc, r, rend, two, y, ch, plane, zp, lo, hi, 0);
    else
      npucc_cf_store_exact(acc, r, rend, two, y, NULL, plane, zp, lo, hi, 0);
    return;
  }
  for (c = 0; c < mc; c++, r += NPUCC_RQ32_WORDS) {
    int8_t *yc = y + (size_t)(ch ? ch[c] : c) * (size_t)plane;
    for (j = 0; j <= two; j++)
      yc[j] = npucc_rq32_i8(acc[2 * c + j], r, rounding, zp, lo, hi);
  }
}

/* The common case of npucc_cf_store_block, straight-line: four channels, two pixels, the
 * EXACT fast words (shift >= 0) of every channel, the full int8 range, no channel map. */
static NPUCC_NOINLINE void npucc_cf_store4(const int32_t *NPUCC_RESTRICT acc, const int32_t *r,
                                           int32_t zp, int8_t *NPUCC_RESTRICT y, int32_t plane) {
#define NPUCC_CF_ST(c)                                                                             \
  do {                                                                                             \
    int32_t mult = r[4 * (c)], sh = r[4 * (c) + 1];                                                \
    int64_t rnd = (int64_t)(((uint64_t)(uint32_t)r[4 * (c) + 3] << 32) | (uint32_t)r[4 * (c) + 2]); \
    y[1] = npucc_cf_exact_sat(acc[2 * (c) + 1], mult, sh, rnd, zp);                                \
    y[0] = npucc_cf_exact_sat(acc[2 * (c)], mult, sh, rnd, zp);                                    \
    y += plane;                                                                                    \
  } while (0)
  NPUCC_CF_ST(0);
  NPUCC_CF_ST(1);
  NPUCC_CF_ST(2);
  NPUCC_CF_ST(3);
#undef NPUCC_CF_ST
}

/* The planes of the channels whose weights are all zero: chmap's pairs (channel, value)
 * after its live list, each channel's plane filled with its constant output. */
static void npucc_cf_fill_constant(int8_t *yn, const int32_t *chmap, int32_t M, size_t plane) {
  int32_t i, L = chmap[0];
  const int32_t *d = chmap + 1 + L;
  for (i = 0; i < M - L; i++, d += 2)
    memset(yn + (size_t)d[0] * plane, (unsigned char)(d[1] & 0xFF), plane);
}

void npucc_conv2d_s8_fast(const int8_t *X, const int8_t *Wp, const int32_t *bias_f, int8_t *Y,
                          int16_t *panel, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                          int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                          int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                          int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                          int32_t rounding, const int32_t *chmap) {
  int32_t K = C * KH * KW, K4 = npucc_conv_s8_kpad(K), plane = OH * OW, n, p, m, k;
  int32_t L = chmap ? chmap[0] : M; /* the computed channels: packed slots 0..L-1 */
  int32_t btail[4], fast4;
  npucc_cf_pan *pan = (npucc_cf_pan *)(void *)panel;
  npucc_cf_out o;
  o.rounding = rounding;
  o.zp = out_zp;
  o.lo = npucc_max_i32(act_min, -128);
  o.hi = npucc_min_i32(act_max, 127);
  if (L == 0) { /* every channel constant: no weights, the panel not used */
    for (n = 0; n < N; n++)
      npucc_cf_fill_constant(Y + (size_t)n * M * plane, chmap, M, (size_t)plane);
    return;
  }
  /* every channel's words the EXACT fast ones, the full range, no map: npucc_cf_store4 */
  fast4 = rounding != NPUCC_RQ_FP32 && o.lo == -128 && o.hi == 127 && !chmap;
  for (m = 0; m < L && fast4; m++)
    fast4 = rq[(size_t)m * NPUCC_RQ32_WORDS + 1] >= 0;
  for (k = K; k < K4; k++) /* both pixels' last group; the packed weights are zero there */
    NPUCC_CF_PUT2(pan, k, 0, 0);
  for (k = 0; k < 4; k++) /* the last block's biases (zero in its padding rows) */
    btail[k] = (L & ~3) + k < L ? bias_f[(L & ~3) + k] : 0;
  for (n = 0; n < N; n++) {
    const int8_t *img = X + (size_t)n * C * H * W;
    int8_t *yn = Y + (size_t)n * M * plane;
    if (chmap)
      npucc_cf_fill_constant(yn, chmap, M, (size_t)plane);
    for (p = 0; p < plane; p += 2) {
      int32_t two = p + 1 < plane, q = two ? p + 1 : p;
      int32_t iy0 = (p / OW) * SH - PT, ix0 = (p % OW) * SW - PL;
      int32_t iy1 = (q / OW) * SH - PT, ix1 = (q % OW) * SW - PL;
      if (iy1 == iy0 && ix1 == ix0 + SW && iy0 >= 0 && ix0 >= 0 &&
          iy0 + (KH - 1) * DH < H && ix1 + (KW - 1) * DW < W) {
        npucc_cf_gather_pair(img, pan, C, H, W, KH, KW, DH, DW, iy0, ix0, SW);
      } else {
        npucc_cf_gather(img, pan, 0, C, H, W, KH, KW, DH, DW, iy0, ix0, x_zp);
        npucc_cf_gather(img, pan, 1, C, H, W, KH, KW, DH, DW, iy1, ix1, x_zp);
      }
      for (m = 0; m < L; m += 4) {
        int32_t acc[8], mc = npucc_min_i32(4, L - m);
        if (two)
          npucc_cf_dot4x2(Wp + (size_t)m * K4, pan, K4 / 4, mc == 4 ? bias_f + m : btail, acc);
        else
          NPUCC_CF_DOT1(Wp + (size_t)m * K4, pan, K4 / 4, mc == 4 ? bias_f + m : btail, acc);
        if (fast4 && mc == 4 && two)
          npucc_cf_store4(acc, rq + (size_t)m * NPUCC_RQ32_WORDS, out_zp, yn + (size_t)m * plane + p,
                          plane);
        else if (chmap)
          npucc_cf_store_block(acc, mc, two, rq + (size_t)m * NPUCC_RQ32_WORDS, &o, yn + p,
                               chmap + 1 + m, plane);
        else
          npucc_cf_store_block(acc, mc, two, rq + (size_t)m * NPUCC_RQ32_WORDS, &o,
                               yn + (size_t)m * plane + p, NULL, plane);
      }
    }
  }
}
