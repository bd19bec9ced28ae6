/* npucc_conv_s8_fast.c - int8 Conv as a register-blocked int8 GEMM (see npucc_conv_s8_fast.h).
 * Group-1 convolutions gather the input patches of two output pixels into a small
 * int16 panel (padding = x_zp; a 1x1 convolution's patch is one strided column),
 * then every block of four output channels (weights packed at compile time by
 * npucc_conv_s8_pack) runs npucc_cf_dot4x2 over the panel: eight int32
 * accumulators in registers, one weight stream and two patches. With the Arm DSP
 * extension the block runs as two 2x2 halves of SMLAD (two 16-bit products per
 * instruction). Depthwise convolutions keep a ring of input rows padded with x_zp,
 * sum one output row into int32 (weights in registers), then requantize the row
 * (the requantization words in registers). Requantization: npucc_rq32_i8 words. */
#include "npucc_conv_s8_fast.h"
#include "npucc_dot_s8.h"
#include "npucc_requant.h"

/* The C*KH*KW input values under output pixel (oy, ox), channel-major like the
 * weights, widened to int16, into one pixel's half of the panel: the panel holds two
 * pixels' patches interleaved in groups of four k ([K4/4][pixel][4]), so that the dot
 * product reads both through one pointer; `col` points at this pixel's first group. */
#define NPUCC_CF_PUT(v)                                                                            \
  do {                                                                                             \
    *col++ = (int16_t)(v);                                                                         \
    if (++q == 4) {                                                                                \
      q = 0;                                                                                       \
      col += 4;                                                                                    \
    }                                                                                              \
  } while (0)
static void npucc_cf_gather(const int8_t *NPUCC_RESTRICT img, int16_t *NPUCC_RESTRICT col,
                            int32_t C, int32_t H, int32_t W, int32_t KH, int32_t KW, int32_t DH,
                            int32_t DW, int32_t iy0, int32_t ix0, int32_t x_zp) {
  int32_t c, ky, kx, q = 0, plane = H * W;
  int32_t inside = iy0 >= 0 && ix0 >= 0 && iy0 + (KH - 1) * DH < H && ix0 + (KW - 1) * DW < W;
  if (KH == 1 && KW == 1 && inside) {
    const int8_t *p = img + (size_t)iy0 * W + ix0;
    size_t s = (size_t)plane;
    for (c = 0; c + 4 <= C; c += 4, p += 4 * s, col += 8) {
      col[0] = p[0];
      col[1] = p[s];
      col[2] = p[2 * s];
      col[3] = p[3 * s];
    }
    for (; c < C; c++, p += s)
      *col++ = *p;
    return;
  }
  for (c = 0; c < C; c++) {
    const int8_t *pl = img + (size_t)c * plane;
    for (ky = 0; ky < KH; ky++) {
      int32_t iy = iy0 + ky * DH;
      const int8_t *row;
      if (iy < 0 || iy >= H) { /* a padding row: no pointer into it is formed */
        for (kx = 0; kx < KW; kx++)
          NPUCC_CF_PUT(x_zp);
        continue;
      }
      row = pl + (size_t)iy * W;
      if (inside) {
        for (kx = 0; kx < KW; kx++)
          NPUCC_CF_PUT(row[ix0 + kx * DW]);
      } else {
        for (kx = 0; kx < KW; kx++) {
          int32_t ix = ix0 + kx * DW;
          NPUCC_CF_PUT(ix >= 0 && ix < W ? row[ix] : x_zp);
        }
      }
    }
  }
}
#undef NPUCC_CF_PUT

/* Both pixels' patches at once when they lie side by side (same row, the second SW
 * columns right) and wholly inside the image: each k writes its two values next to
 * each other in the interleaved panel. */
static void npucc_cf_gather_pair(const int8_t *NPUCC_RESTRICT img, int16_t *NPUCC_RESTRICT col,
                                 int32_t C, int32_t H, int32_t W, int32_t KH, int32_t KW,
                                 int32_t DH, int32_t DW, int32_t iy0, int32_t ix0, int32_t SW) {
  int32_t c, ky, kx, q = 0;
  for (c = 0; c < C; c++) {
    const int8_t *row = img + ((size_t)c * H + (size_t)iy0) * W + ix0;
    for (ky = 0; ky < KH; ky++, row += (size_t)DH * W) {
      const int8_t *t = row;
      for (kx = 0; kx < KW; kx++, t += DW) {
        col[0] = t[0];
        col[4] = t[SW];
        col++;
        if (++q == 4) {
          q = 0;
          col += 4;
        }
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

/* acc[2c + j] += sum_k w[c][k] * x_j[k] for the four channels of one packed block
 * (npucc_conv_s8_pack) and the two interleaved int16 patches of the panel x, over G
 * groups of four k. */
static NPUCC_NOINLINE void npucc_cf_dot4x2(const int8_t *NPUCC_RESTRICT wp,
                                           const int16_t *NPUCC_RESTRICT x, int32_t G,
                                           int32_t *NPUCC_RESTRICT acc) {
#ifdef NPUCC_DOT_DSP
  int32_t h;
  for (h = 0; h < 2; h++) { /* channels 2h, 2h+1: SMLAD on (k0,k1) and (k2,k3) pairs */
    const int8_t *w = (const int8_t *)NPUCC_CF_ALIGNED8(wp + 8 * h);
    const int16_t *p = (const int16_t *)NPUCC_CF_ALIGNED8(x);
    int32_t a00 = acc[4 * h], a01 = acc[4 * h + 1], a10 = acc[4 * h + 2], a11 = acc[4 * h + 3];
    int32_t g = G;
#define NPUCC_CF_GROUP(P, Wq)                                                                      \
  do {                                                                                             \
    int32_t pa, pb, qa, qb, wa, wb, wa0, wa1, wb0, wb1;                                            \
    memcpy(&wa, (Wq), 4);                                                                          \
    memcpy(&wb, (Wq) + 4, 4);                                                                      \
    memcpy(&pa, (P), 4);                                                                           \
    memcpy(&pb, (P) + 2, 4);                                                                       \
    memcpy(&qa, (P) + 4, 4);                                                                       \
    memcpy(&qb, (P) + 6, 4);                                                                       \
    wa0 = __sxtb16(wa);                                                                            \
    wa1 = npucc_sxtb16_odd(wa);                                                                    \
    wb0 = __sxtb16(wb);                                                                            \
    wb1 = npucc_sxtb16_odd(wb);                                                                    \
    a00 = __smlad(wa1, pb, __smlad(wa0, pa, a00));                                                 \
    a01 = __smlad(wa1, qb, __smlad(wa0, qa, a01));                                                 \
    a10 = __smlad(wb1, pb, __smlad(wb0, pa, a10));                                                 \
    a11 = __smlad(wb1, qb, __smlad(wb0, qa, a11));                                                 \
  } while (0)
    for (; g > 0; g--, p += 8, w += 16)
      NPUCC_CF_GROUP(p, w);
#undef NPUCC_CF_GROUP
    acc[4 * h] = a00;
    acc[4 * h + 1] = a01;
    acc[4 * h + 2] = a10;
    acc[4 * h + 3] = a11;
  }
#else
  const int16_t *end = x + 8 * G;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t a4 = acc[4], a5 = acc[5], a6 = acc[6], a7 = acc[7];
  for (; x != end; x += 8, wp += 16) {
    int32_t u = x[0], v = x[4]; /* k0: byte 0 of each channel's word */
    a0 += wp[0] * u;
    a1 += wp[0] * v;
    a2 += wp[4] * u;
    a3 += wp[4] * v;
    a4 += wp[8] * u;
    a5 += wp[8] * v;
    a6 += wp[12] * u;
    a7 += wp[12] * v;
    u = x[1]; /* k1: byte 2 */
    v = x[5];
    a0 += wp[2] * u;
    a1 += wp[2] * v;
    a2 += wp[6] * u;
    a3 += wp[6] * v;
    a4 += wp[10] * u;
    a5 += wp[10] * v;
    a6 += wp[14] * u;
    a7 += wp[14] * v;
    u = x[2]; /* k2: byte 1 */
    v = x[6];
    a0 += wp[1] * u;
    a1 += wp[1] * v;
    a2 += wp[5] * u;
    a3 += wp[5] * v;
    a4 += wp[9] * u;
    a5 += wp[9] * v;
    a6 += wp[13] * u;
    a7 += wp[13] * v;
    u = x[3]; /* k3: byte 3 */
    v = x[7];
    a0 += wp[3] * u;
    a1 += wp[3] * v;
    a2 += wp[7] * u;
    a3 += wp[7] * v;
    a4 += wp[11] * u;
    a5 += wp[11] * v;
    a6 += wp[15] * u;
    a7 += wp[15] * v;
  }
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

/* npucc_rq32_exact with the words in locals (mult, sh = rq[1] >= 0, rnd = rq[3]:rq[2]),
 * plus the zero point, clamped: int8 stores may alias any pointer, locals they cannot. */
static inline int8_t npucc_cf_exact(int32_t acc, int32_t mult, int32_t sh, int64_t rnd,
                                    int32_t zp, int32_t lo, int32_t hi) {
  int64_t p = (int64_t)acc * mult;
  int32_t bit = ((int32_t)(p >> 32) >> sh) & 1;
  int32_t v = ((int32_t)((p + rnd + bit) >> 32) >> sh) + zp;
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return (int8_t)v;
}

/* One channel's EXACT requantization with npucc_rq32_exact's fast words (rq[1] >= 0). */
typedef struct {
  int32_t mult, sh, rlo, rhi, zp, lo, hi;
} npucc_cf_rq;

/* y[i] = requantized s[i] (EXACT, q's words). */
static NPUCC_NOINLINE void npucc_cf_rq_row_exact(const int32_t *NPUCC_RESTRICT s, int32_t n,
                                                 const npucc_cf_rq *q, int8_t *NPUCC_RESTRICT y) {
  int32_t i, mult = q->mult, sh = q->sh, zp = q->zp, lo = q->lo, hi = q->hi;
  int64_t rnd = (int64_t)(((uint64_t)(uint32_t)q->rhi << 32) | (uint32_t)q->rlo);
  for (i = 0; i < n; i++)
    y[i] = npucc_cf_exact(s[i], mult, sh, rnd, zp, lo, hi);
}

/* y[i] = requantized s[i] for one channel's words r. */
static void npucc_cf_rq_row(const int32_t *NPUCC_RESTRICT s, int32_t n, const int32_t *r,
                            int32_t rounding, int32_t zp, int32_t lo, int32_t hi,
                            int8_t *NPUCC_RESTRICT y) {
  int32_t i, rw[NPUCC_RQ32_WORDS];
  if (r[1] >= 0 && rounding != NPUCC_RQ_FP32) {
    npucc_cf_rq q;
    q.mult = r[0];
    q.sh = r[1];
    q.rlo = r[2];
    q.rhi = r[3];
    q.zp = zp;
    q.lo = lo;
    q.hi = hi;
    npucc_cf_rq_row_exact(s, n, &q, y);
    return;
  }
  rw[0] = r[0];
  rw[1] = r[1];
  rw[2] = r[2];
  rw[3] = r[3];
  for (i = 0; i < n; i++)
    y[i] = npucc_rq32_i8(s[i], rw, rounding, zp, lo, hi);
}

/* The output stage of a convolution: rounding, zero point, clamp bounds. */
typedef struct {
  int32_t rounding, zp, lo, hi;
} npucc_cf_out;

/* y[c * plane + j] = requantized acc[2c + j] for the channels of words r..rend (4 words
 * each) and pixels j = 0 and j = d (d = 0 for a lone last pixel: its second value is
 * stored first and then overwritten). EXACT rounding: the fast words inline, anything
 * else through npucc_rq32_i8. Inlined into two call sites below, one with the common
 * full-range clamp as constants (fewer live registers). */
static inline void npucc_cf_store_exact(const int32_t *NPUCC_RESTRICT acc, const int32_t *r,
                                        const int32_t *rend, int32_t d, int8_t *NPUCC_RESTRICT y,
                                        int32_t plane, int32_t zp, int32_t lo, int32_t hi) {
  for (; r != rend; r += NPUCC_RQ32_WORDS, acc += 2, y += plane) {
    int32_t mult = r[0], sh = r[1];
    int64_t rnd = (int64_t)(((uint64_t)(uint32_t)r[3] << 32) | (uint32_t)r[2]);
    if (sh < 0) {
      y[d] = npucc_rq32_i8(acc[1], r, NPUCC_RQ_EXACT, zp, lo, hi);
      y[0] = npucc_rq32_i8(acc[0], r, NPUCC_RQ_EXACT, zp, lo, hi);
      continue;
    }
    y[d] = npucc_cf_exact(acc[1], mult, sh, rnd, zp, lo, hi);
    y[0] = npucc_cf_exact(acc[0], mult, sh, rnd, zp, lo, hi);
  }
}

/* y[c * plane + j] = requantized acc[2c + j] for the mc channels of a block (words r, 4 per
 * channel) and one or two pixels. */
static NPUCC_NOINLINE void npucc_cf_store_block(const int32_t *NPUCC_RESTRICT acc, int32_t mc,
                                                int32_t two, const int32_t *r,
                                                const npucc_cf_out *o, int8_t *NPUCC_RESTRICT y,
                                                int32_t plane) {
  int32_t c, j, zp = o->zp, lo = o->lo, hi = o->hi, rounding = o->rounding;
  const int32_t *rend = r + mc * NPUCC_RQ32_WORDS;
  if (rounding != NPUCC_RQ_FP32 && lo == -128 && hi == 127) {
    npucc_cf_store_exact(acc, r, rend, two, y, plane, zp, -128, 127);
    return;
  }
  if (rounding != NPUCC_RQ_FP32) {
    npucc_cf_store_exact(acc, r, rend, two, y, plane, zp, lo, hi);
    return;
  }
  for (c = 0; c < mc; c++, r += NPUCC_RQ32_WORDS, y += plane)
    for (j = 0; j <= two; j++)
      y[j] = npucc_rq32_i8(acc[2 * c + j], r, rounding, zp, lo, hi);
}

void npucc_conv2d_s8_fast(const int8_t *X, const int8_t *Wp, const int32_t *bias_f, int8_t *Y,
                          int16_t *panel, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                          int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                          int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                          int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                          int32_t rounding) {
  int32_t K = C * KH * KW, K4 = npucc_conv_s8_kpad(K), plane = OH * OW, n, p, m, k;
  npucc_cf_out o;
  o.rounding = rounding;
  o.zp = out_zp;
  o.lo = npucc_max_i32(act_min, -128);
  o.hi = npucc_min_i32(act_max, 127);
  for (k = K; k < K4; k++) /* both pixels' last group; the packed weights are zero there */
    panel[k / 4 * 8 + k % 4] = panel[k / 4 * 8 + 4 + k % 4] = 0;
  for (n = 0; n < N; n++) {
    const int8_t *img = X + (size_t)n * C * H * W;
    int8_t *yn = Y + (size_t)n * M * plane;
    for (p = 0; p < plane; p += 2) {
      int32_t two = p + 1 < plane, q = two ? p + 1 : p;
      int32_t iy0 = (p / OW) * SH - PT, ix0 = (p % OW) * SW - PL;
      int32_t iy1 = (q / OW) * SH - PT, ix1 = (q % OW) * SW - PL;
      if (KH * KW > 1 && iy1 == iy0 && ix1 == ix0 + SW && iy0 >= 0 && ix0 >= 0 &&
          iy0 + (KH - 1) * DH < H && ix1 + (KW - 1) * DW < W) {
        npucc_cf_gather_pair(img, panel, C, H, W, KH, KW, DH, DW, iy0, ix0, SW);
      } else {
        npucc_cf_gather(img, panel, C, H, W, KH, KW, DH, DW, iy0, ix0, x_zp);
        npucc_cf_gather(img, panel + 4, C, H, W, KH, KW, DH, DW, iy1, ix1, x_zp);
      }
      for (m = 0; m < M; m += 4) {
        int32_t acc[8], c, mc = npucc_min_i32(4, M - m);
        for (c = 0; c < 4; c++)
          acc[2 * c] = acc[2 * c + 1] = c < mc ? bias_f[m + c] : 0;
        npucc_cf_dot4x2(Wp + (size_t)m * K4, panel, K4 / 4, acc);
        npucc_cf_store_block(acc, mc, two, rq + (size_t)m * NPUCC_RQ32_WORDS, &o,
                             yn + (size_t)m * plane + p, plane);
      }
    }
  }
}

/* s[i] = b + the 3x3 taps of output i (int16 rows p0, p1, p2; taps 1 apart, stride SW). */
#ifdef NPUCC_DOT_DSP
/* Two outputs per step at stride 1: per row, the words (x0,x1), (x1,x2), (x2,x3) give
 * a = SMLAD((w0,w1),(x0,x1)) + w2*x2 and c = SMLAD((w0,w1),(x1,x2)) + w2*x3; the weights
 * are five registers of 16-bit pairs, (w2, w5) sharing one. */
static inline int32_t npucc_cf_ld2(const int16_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline int32_t npucc_cf_pair16(int32_t lo, int32_t hi) {
  return (int32_t)(((uint32_t)lo & 0xFFFFu) | ((uint32_t)hi << 16));
}
#endif
/* A 3x3 depthwise channel's weights as the sums loop holds them (DSP: the 16-bit pairs
 * (w0,w1), (w3,w4), (w6,w7), (w2,w5) and w8; portable: w0..w8) and its folded bias. */
typedef struct {
  int32_t w[9], b;
} npucc_cf_dw3w;

static void npucc_cf_dw3_weights(const int8_t *wk, int32_t b, npucc_cf_dw3w *k) {
#ifdef NPUCC_DOT_DSP
  k->w[0] = npucc_cf_pair16(wk[0], wk[1]);
  k->w[1] = npucc_cf_pair16(wk[3], wk[4]);
  k->w[2] = npucc_cf_pair16(wk[6], wk[7]);
  k->w[3] = npucc_cf_pair16(wk[2], wk[5]);
  k->w[4] = wk[8];
#else
  int32_t i;
  for (i = 0; i < 9; i++)
    k->w[i] = wk[i];
#endif
  k->b = b;
}

static NPUCC_NOINLINE void npucc_cf_dw3_sums(const int16_t *NPUCC_RESTRICT p0,
                                             const int16_t *NPUCC_RESTRICT p1,
                                             const int16_t *NPUCC_RESTRICT p2, int32_t SW, int32_t n,
                                             const npucc_cf_dw3w *k, int32_t *NPUCC_RESTRICT s) {
  int32_t i = 0, b = k->b;
#ifdef NPUCC_DOT_DSP
  int32_t w01 = k->w[0], w34 = k->w[1], w67 = k->w[2], w25 = k->w[3], w8 = k->w[4];
  if (SW == 1) {
    for (; i + 2 <= n; i += 2, p0 += 2, p1 += 2, p2 += 2) {
      int32_t u = npucc_cf_ld2(p0), v = npucc_cf_ld2(p0 + 1), t = npucc_cf_ld2(p0 + 2);
      int32_t a = __smlad(w01, u, b), c = __smlad(w01, v, b);
      a = __smlabb(w25, t, a);
      c = __smlabt(w25, t, c);
      u = npucc_cf_ld2(p1);
      v = npucc_cf_ld2(p1 + 1);
      t = npucc_cf_ld2(p1 + 2);
      a = __smlad(w34, u, a);
      c = __smlad(w34, v, c);
      a = __smlatb(w25, t, a);
      c = __smlatt(w25, t, c);
      u = npucc_cf_ld2(p2);
      v = npucc_cf_ld2(p2 + 1);
      t = npucc_cf_ld2(p2 + 2);
      a = __smlad(w67, u, a);
      c = __smlad(w67, v, c);
      a = __smlabb(w8, t, a);
      c = __smlabt(w8, t, c);
      s[i] = a;
      s[i + 1] = c;
    }
  }
  for (; i < n; i++, p0 += SW, p1 += SW, p2 += SW) {
    int32_t a = __smlad(w01, npucc_cf_ld2(p0), b);
    a = __smlad(w34, npucc_cf_ld2(p1), a);
    a = __smlad(w67, npucc_cf_ld2(p2), a);
    a = __smlabb(w25, p0[2], a);
    a = __smlatb(w25, p1[2], a);
    s[i] = __smlabb(w8, p2[2], a);
  }
#else
  int32_t w0 = k->w[0], w1 = k->w[1], w2 = k->w[2], w3 = k->w[3], w4 = k->w[4], w5 = k->w[5];
  int32_t w6 = k->w[6], w7 = k->w[7], w8 = k->w[8];
  for (; i < n; i++, p0 += SW, p1 += SW, p2 += SW)
    s[i] = b + w0 * p0[0] + w1 * p0[1] + w2 * p0[2] + w3 * p1[0] + w4 * p1[1] + w5 * p1[2] +
           w6 * p2[0] + w7 * p2[1] + w8 * p2[2];
#endif
}

/* d[0..n) = the int8 values s[0..n) widened to int16. */
static void npucc_cf_widen(int16_t *NPUCC_RESTRICT d, const int8_t *NPUCC_RESTRICT s, int32_t n) {
  int32_t i = 0;
#ifdef NPUCC_DOT_DSP
  for (; i + 4 <= n; i += 4) { /* SXTB16 twice, then PKHBT/PKHTB: two words */
    int32_t v = npucc_ld4(s + i), e = __sxtb16(v), o = npucc_sxtb16_odd(v);
    int32_t lo = npucc_cf_pair16(e, o), hi = (int32_t)(((uint32_t)e >> 16) | ((uint32_t)o & 0xFFFF0000u));
    memcpy(d + i, &lo, 4);
    memcpy(d + i + 2, &hi, 4);
  }
#endif
  for (; i < n; i++)
    d[i] = s[i];
}

/* One output row of a 3x3 depthwise channel: the sums, then their requantization. */
static void npucc_cf_dw3_row(const int16_t *const rp[3], int32_t SW, int32_t OW,
                             const npucc_cf_dw3w *k, const npucc_cf_rq *q, int32_t fast,
                             const int32_t *r, int32_t rounding, int32_t *sums, int8_t *y) {
  npucc_cf_dw3_sums(rp[0], rp[1], rp[2], SW, OW, k, sums);
  if (fast)
    npucc_cf_rq_row_exact(sums, OW, q, y);
  else
    npucc_cf_rq_row(sums, OW, r, rounding, q->zp, q->lo, q->hi, y);
}

/* One channel of a 3x3 depthwise convolution with DW = 1. Stride 1 without dilation keeps
 * a ring of three int16 input rows (one new row per output row; rows outside the image
 * read zrow); other strides and dilations widen the three rows of each output row. */
static NPUCC_NOINLINE void npucc_cf_dw3_channel(const int8_t *img, int32_t H, int32_t W,
                                                int32_t OH, int32_t OW, int32_t SH, int32_t SW,
                                                int32_t DH, int32_t PT, int32_t left, int32_t mid,
                                                int16_t *rows, int32_t RL, const int16_t *zrow,
                                                const npucc_cf_dw3w *k, const int32_t *r,
                                                int32_t rounding, const npucc_cf_out *o,
                                                int32_t *sums, int8_t *y) {
  int32_t oy, ky, fast = r[1] >= 0 && rounding != NPUCC_RQ_FP32;
  int16_t *slot[3];
  const int16_t *rp[3];
  npucc_cf_rq q;
  q.mult = r[0];
  q.sh = r[1];
  q.rlo = r[2];
  q.rhi = r[3];
  q.zp = o->zp;
  q.lo = o->lo;
  q.hi = o->hi;
  slot[0] = rows;
  slot[1] = rows + RL;
  slot[2] = rows + 2 * RL;
  for (oy = 0; oy < OH; oy++, y += OW) {
    int32_t iy0 = oy * SH - PT;
    if (SH == 1 && DH == 1 && oy > 0) { /* the ring: rows iy0, iy0+1 are there */
      int16_t *t = slot[0];
      slot[0] = slot[1];
      slot[1] = slot[2];
      slot[2] = t;
      rp[0] = rp[1];
      rp[1] = rp[2];
      rp[2] = zrow;
      if (iy0 + 2 >= 0 && iy0 + 2 < H) {
        npucc_cf_widen(t + left, img + (size_t)(iy0 + 2) * W, mid);
        rp[2] = t;
      }
    } else {
      for (ky = 0; ky < 3; ky++) {
        int32_t iy = iy0 + ky * DH;
        rp[ky] = zrow;
        if (iy >= 0 && iy < H) {
          npucc_cf_widen(slot[ky] + left, img + (size_t)iy * W, mid);
          rp[ky] = slot[ky];
        }
      }
    }
    npucc_cf_dw3_row(rp, SW, OW, k, &q, fast, r, rounding, sums, y);
  }
}

void npucc_dwconv2d_s8_fast(const int8_t *X, const int8_t *Wt, const int32_t *bias_f, int8_t *Y,
                            int32_t *work, int32_t N, int32_t C, int32_t H, int32_t W, int32_t OH,
                            int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                            int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                            int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                            int32_t rounding) {
  int32_t lo = npucc_max_i32(act_min, -128), hi = npucc_min_i32(act_max, 127);
  int32_t n, c, oy, ox, ky, kx, i, PW = (OW - 1) * SW + (KW - 1) * DW + 1;
  npucc_cf_out o;
  o.rounding = rounding;
  o.zp = out_zp;
  o.lo = lo;
  o.hi = hi;
  int32_t RL = (int32_t)npucc_dwconv_s8_fast_row_len(OW, KW, SW, DW);
  int32_t left = npucc_min_i32(PL, PW), mid = npucc_max_i32(0, npucc_min_i32(W, PW - PL));
  int32_t *sums = work;
  int16_t *rows = (int16_t *)(work + OW), *zrow = rows + (size_t)KH * RL;
  /* every row's padding columns and the padding row hold x_zp once and for all: the
   * ring only ever rewrites columns left..left+mid-1 */
  for (i = 0; i < (KH + 1) * RL; i++)
    rows[i] = (int16_t)x_zp;
  for (n = 0; n < N; n++) {
    for (c = 0; c < C; c++) {
      const int8_t *img = X + ((size_t)n * C + c) * H * W;
      const int8_t *wk = Wt + (size_t)c * KH * KW;
      const int32_t *r = rq + (size_t)c * NPUCC_RQ32_WORDS;
      int8_t *yc = Y + ((size_t)n * C + c) * OH * OW;
      if (KH == 3 && KW == 3 && DW == 1) {
        npucc_cf_dw3w k;
        npucc_cf_dw3_weights(wk, bias_f[c], &k);
        npucc_cf_dw3_channel(img, H, W, OH, OW, SH, SW, DH, PT, left, mid, rows, RL, zrow, &k, r,
                             rounding, &o, sums, yc);
        continue;
      }
      for (oy = 0; oy < OH; oy++) { /* any other kernel: rows into slots ky, taps in order */
        int32_t iy0 = oy * SH - PT;
        for (ox = 0; ox < OW; ox++)
          sums[ox] = bias_f[c];
        for (ky = 0; ky < KH; ky++) {
          int32_t iy = iy0 + ky * DH;
          int16_t *row = rows + (size_t)ky * RL;
          if (iy < 0 || iy >= H)
            row = zrow;
          else
            npucc_cf_widen(row + left, img + (size_t)iy * W, mid);
          for (kx = 0; kx < KW; kx++) {
            int32_t wv = wk[ky * KW + kx];
            const int16_t *t = row + (size_t)kx * DW;
            for (ox = 0; ox < OW; ox++)
              sums[ox] += wv * t[(size_t)ox * SW];
          }
        }
        npucc_cf_rq_row(sums, OW, r, rounding, out_zp, lo, hi, yc + (size_t)oy * OW);
      }
    }
  }
}
