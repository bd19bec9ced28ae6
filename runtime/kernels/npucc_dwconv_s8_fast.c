/* npucc_dwconv_s8_fast.c - int8 depthwise Conv, fast CPU form (see npucc_conv_s8_fast.h).
 * Input rows are widened to int16 once into a small scratch, padded with x_zp, so that no
 * tap needs a bounds check. 3x3 kernels (DW = 1) sum an output row with the weights in
 * registers (DSP: 16-bit weight pairs through SMLAD/SMLAxy, two outputs per step at
 * stride 1), then requantize (npucc_rqrow_s8.h). At stride 1 without dilation they run in
 * bands of output rows whose input rows lie back to back (one run of sums per band);
 * strides of 2 and dilations widen the three input rows of each output row. Other
 * kernels sum tap by tap. */
#include "npucc_conv_s8_fast.h"
#include "npucc_dot_s8.h"
#include "npucc_rq32.h"
#include "npucc_rqrow_s8.h"

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

/* s[r * RS + i] = b + the 3x3 taps of output i of row r < rows (int16 rows p0, p1, p2 for
 * row 0, the next row's RS values on; taps 1 apart, stride SW; rows > 1 only at SW = 1). */
static NPUCC_NOINLINE void npucc_cf_dw3_sums(const int16_t *NPUCC_RESTRICT p0,
                                             const int16_t *NPUCC_RESTRICT p1,
                                             const int16_t *NPUCC_RESTRICT p2, int32_t SW, int32_t n,
                                             int32_t rows, int32_t RS, const npucc_cf_dw3w *k,
                                             int32_t *NPUCC_RESTRICT s) {
  int32_t i = 0, b = k->b;
#ifdef NPUCC_DOT_DSP
  int32_t w01 = k->w[0], w34 = k->w[1], w67 = k->w[2], w25 = k->w[3], w8 = k->w[4];
  if (SW == 1) { /* the rows as one run (the sums between two rows are dropped later) */
    n += (rows - 1) * RS;
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
  int32_t w6 = k->w[6], w7 = k->w[7], w8 = k->w[8], r;
  for (r = 0; r < rows; r++, s += RS) { /* row by row: no sums between rows */
    const int16_t *q0 = p0 + (size_t)r * RS, *q1 = p1 + (size_t)r * RS, *q2 = p2 + (size_t)r * RS;
    for (i = 0; i < n; i++, q0 += SW, q1 += SW, q2 += SW)
      s[i] = b + w0 * q0[0] + w1 * q0[1] + w2 * q0[2] + w3 * q1[0] + w4 * q1[1] + w5 * q1[2] +
             w6 * q2[0] + w7 * q2[1] + w8 * q2[2];
  }
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

/* d[0..n) = the int8 values s[0], s[step], ... widened to int16 (a column of the plane). */
static void npucc_cf_widen_col(int16_t *NPUCC_RESTRICT d, const int8_t *NPUCC_RESTRICT s,
                               int32_t n, int32_t step) {
  int32_t i = 0;
  size_t s1 = (size_t)step, s2 = 2 * s1, s3 = 3 * s1;
  for (; i + 4 <= n; i += 4, s += 4 * s1) {
    int32_t a = s[0], b = s[s1], c = s[s2], e = s[s3];
    d[i] = (int16_t)a;
    d[i + 1] = (int16_t)b;
    d[i + 2] = (int16_t)c;
    d[i + 3] = (int16_t)e;
  }
  for (; i < n; i++, s += s1)
    d[i] = *s;
}

/* Where a band's rows come from and go to: input row iy of the oriented plane at img + iy
 * * XS with its values XE apart, output row oy at y + oy * YS with its values YE apart
 * (XS = W, XE = 1, YS = OW, YE = 1; transposed, the columns: XS = 1, XE = W, YS = 1,
 * YE = OW). */
typedef struct {
  int32_t XS, XE, YS, YE;
} npucc_cf_orient;

/* One channel of a 3x3 depthwise convolution at strides 1 (DW = DH = 1): bands of up to R
 * rows of the oriented plane (H input rows, OH x OW outputs, PT pad rows on top). The
 * band's R + 2 input rows lie back to back, RS = OW + 2 values apart (x_zp in the padding
 * columns and in rows outside the image), so the whole band is one run of
 * (rr - 1) * RS + OW sums over three row pointers RS apart: no per-row set-up, and the
 * RS - OW sums between two rows are computed and dropped. */
static NPUCC_ALWAYS_INLINE void npucc_cf_dw3_band(const int8_t *img, int32_t H, int32_t OH,
                                                  int32_t OW, int32_t PT, int32_t left,
                                                  int32_t mid, int16_t *band, int32_t R,
                                                  int32_t x_zp, const npucc_cf_dw3w *k,
                                                  const int32_t *r, const npucc_cf_out *o,
                                                  int32_t *sums, int8_t *y,
                                                  const npucc_cf_orient *g, int32_t col) {
  int32_t RS = OW + 2, oy0, b, j;
  for (oy0 = 0; oy0 < OH; oy0 += R, y += (size_t)R * g->YS) {
    int32_t rr = npucc_min_i32(R, OH - oy0);
    for (b = 0; b < rr + 2; b++) {
      int32_t iy = oy0 - PT + b;
      int16_t *d = band + (size_t)b * RS;
      if (iy < 0 || iy >= H) {
        for (j = 0; j < RS; j++)
          d[j] = (int16_t)x_zp;
      } else if (col) { /* a constant where this is inlined */
        npucc_cf_widen_col(d + left, img + (size_t)iy, mid, g->XE);
      } else {
        npucc_cf_widen(d + left, img + (size_t)iy * g->XS, mid);
      }
    }
    npucc_cf_dw3_sums(band, band + RS, band + 2 * RS, 1, OW, rr, RS, k, sums);
    npucc_cf_rq_rows(sums, rr, RS, OW, r, o, y, g->YS, g->YE);
  }
}
/* ... along the rows of the plane, or down its columns (npucc_dwconv_s8_fast_tr): two
 * out-of-line copies with the orientation a constant. */
#define NPUCC_CF_DW3_BAND_FN(name, col)                                                           \
  static NPUCC_NOINLINE void name(const int8_t *img, int32_t H, int32_t OH, int32_t OW,           \
                                  int32_t PT, int32_t left, int32_t mid, int16_t *band,           \
                                  int32_t R, int32_t x_zp, const npucc_cf_dw3w *k,                \
                                  const int32_t *r, const npucc_cf_out *o, int32_t *sums,         \
                                  int8_t *y, const npucc_cf_orient *g) {                          \
    npucc_cf_dw3_band(img, H, OH, OW, PT, left, mid, band, R, x_zp, k, r, o, sums, y, g, col);    \
  }
NPUCC_CF_DW3_BAND_FN(npucc_cf_dw3_band_rows, 0)
NPUCC_CF_DW3_BAND_FN(npucc_cf_dw3_band_cols, 1)
#undef NPUCC_CF_DW3_BAND_FN

/* One channel of a 3x3 depthwise convolution (DW = 1) at stride 2 or with dilation: the
 * three input rows of each output row widened into slots (rows outside the image read
 * zrow), the row's sums, then their requantization. */
static NPUCC_NOINLINE void npucc_cf_dw3_rows(const int8_t *img, int32_t H, int32_t W,
                                             int32_t OH, int32_t OW, int32_t SH, int32_t SW,
                                             int32_t DH, int32_t PT, int32_t left, int32_t mid,
                                             int16_t *rows, int32_t RL, const int16_t *zrow,
                                             const npucc_cf_dw3w *k, const int32_t *r,
                                             const npucc_cf_out *o, int32_t *sums, int8_t *y) {
  int32_t oy, ky;
  for (oy = 0; oy < OH; oy++, y += OW) {
    const int16_t *rp[3];
    for (ky = 0; ky < 3; ky++) {
      int32_t iy = oy * SH - PT + ky * DH;
      int16_t *slot = rows + (size_t)ky * RL;
      rp[ky] = zrow;
      if (iy >= 0 && iy < H) {
        npucc_cf_widen(slot + left, img + (size_t)iy * W, mid);
        rp[ky] = slot;
      }
    }
    npucc_cf_dw3_sums(rp[0], rp[1], rp[2], SW, OW, 1, 0, k, sums);
    npucc_cf_rq_rows(sums, 1, OW, OW, r, o, y, OW, 1);
  }
}

void npucc_dwconv2d_s8_fast(const int8_t *X, const int8_t *Wt, const int32_t *bias_f, int8_t *Y,
                            int32_t *work, int32_t N, int32_t C, int32_t H, int32_t W, int32_t OH,
                            int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                            int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                            int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                            int32_t rounding) {
  int32_t n, c, oy, ox, ky, kx, i, PW = (OW - 1) * SW + (KW - 1) * DW + 1;
  int32_t RL = (int32_t)npucc_dwconv_s8_fast_row_len(OW, KW, SW, DW);
  int32_t left = npucc_min_i32(PL, PW), mid = npucc_max_i32(0, npucc_min_i32(W, PW - PL));
  int32_t s3 = KH == 3 && KW == 3 && DW == 1;
  int32_t R = npucc_dwconv_s8_fast_band(OH, OW, KH, KW, SH, SW, DH, DW);
  int32_t tr = R && npucc_dwconv_s8_fast_tr(OH, OW); /* bands down the columns */
  int32_t RS = (tr ? OH : OW) + 2, *sums = work;
  int16_t *rows = (int16_t *)(work + (R ? R * RS : OW)), *zrow = rows + (size_t)KH * RL;
  npucc_cf_orient g;
  npucc_cf_out o;
  o.rounding = rounding;
  o.zp = out_zp;
  o.lo = npucc_max_i32(act_min, -128);
  o.hi = npucc_min_i32(act_max, 127);
  /* every row's padding columns (and the padding row) hold x_zp once and for all: rows
   * only ever get columns left..left+mid-1 rewritten */
  for (i = 0; i < (R ? (R + 2) * RS : (KH + 1) * RL); i++)
    rows[i] = (int16_t)x_zp;
  if (tr) { /* the transposed plane: W rows of H values, pads swapped */
    g.XS = 1;
    g.XE = W;
    g.YS = 1;
    g.YE = OW;
    left = npucc_min_i32(PT, RS);
    mid = npucc_max_i32(0, npucc_min_i32(H, RS - PT));
  } else {
    g.XS = W;
    g.XE = 1;
    g.YS = OW;
    g.YE = 1;
  }
  for (n = 0; n < N; n++) {
    for (c = 0; c < C; c++) {
      const int8_t *img = X + ((size_t)n * C + c) * H * W;
      const int8_t *wk = Wt + (size_t)c * KH * KW;
      const int32_t *r = rq + (size_t)c * NPUCC_RQ32_WORDS;
      int8_t *yc = Y + ((size_t)n * C + c) * OH * OW;
      if (s3) {
        npucc_cf_dw3w k;
        static const unsigned char tpos[9] = {0, 3, 6, 1, 4, 7, 2, 5, 8};
        int8_t wt[9];
        for (i = 0; i < 9 && tr; i++) /* the transposed kernel */
          wt[i] = wk[tpos[i]];
        npucc_cf_dw3_weights(tr ? wt : wk, bias_f[c], &k);
        if (tr)
          npucc_cf_dw3_band_cols(img, W, OW, OH, PL, left, mid, rows, R, x_zp, &k, r, &o, sums,
                                 yc, &g);
        else if (R)
          npucc_cf_dw3_band_rows(img, H, OH, OW, PT, left, mid, rows, R, x_zp, &k, r, &o, sums,
                                 yc, &g);
        else
          npucc_cf_dw3_rows(img, H, W, OH, OW, SH, SW, DH, PT, left, mid, rows, RL, zrow, &k, r, &o,
                            sums, yc);
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
        npucc_cf_rq_rows(sums, 1, OW, OW, r, &o, yc + (size_t)oy * OW, OW, 1);
      }
    }
  }
}
