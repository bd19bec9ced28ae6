/* npucc_conv_s8_fast.c - int8 Conv as a register-blocked int8 GEMM (see npucc_conv_s8_fast.h).
 * Group-1 convolutions gather the input patches of two output pixels into a small
 * panel (padding = x_zp; a 1x1 convolution's patch is one strided column), then
 * every pair of output channels runs npucc_dot_2x2 over the panel: four int32
 * accumulators in registers, two weight rows and two patches streamed once.
 * Depthwise convolutions run the taps directly, with the bounds checks only on
 * the border pixels. Requantization: npucc_rq32_i8 with precomputed words. */
#include "npucc_conv_s8_fast.h"
#include "npucc_dot_s8.h"
#include "npucc_requant.h"

/* The C*KH*KW input values under output pixel (oy, ox), channel-major like the weights. */
static void npucc_cf_gather(const int8_t *NPUCC_RESTRICT img, int8_t *NPUCC_RESTRICT col,
                            int32_t C, int32_t H, int32_t W, int32_t KH, int32_t KW, int32_t DH,
                            int32_t DW, int32_t iy0, int32_t ix0, int32_t x_zp) {
  int32_t c, ky, kx, plane = H * W;
  int32_t inside = iy0 >= 0 && ix0 >= 0 && iy0 + (KH - 1) * DH < H && ix0 + (KW - 1) * DW < W;
  if (KH == 1 && KW == 1 && inside) {
    const int8_t *p = img + (size_t)iy0 * W + ix0;
    for (c = 0; c < C; c++)
      col[c] = p[(size_t)c * plane];
    return;
  }
  for (c = 0; c < C; c++) {
    const int8_t *pl = img + (size_t)c * plane;
    for (ky = 0; ky < KH; ky++) {
      int32_t iy = iy0 + ky * DH;
      const int8_t *row;
      if (iy < 0 || iy >= H) { /* a padding row: no pointer into it is formed */
        for (kx = 0; kx < KW; kx++)
          *col++ = (int8_t)x_zp;
        continue;
      }
      row = pl + (size_t)iy * W;
      if (inside) {
        for (kx = 0; kx < KW; kx++)
          *col++ = row[ix0 + kx * DW];
      } else {
        for (kx = 0; kx < KW; kx++) {
          int32_t ix = ix0 + kx * DW;
          *col++ = ix >= 0 && ix < W ? row[ix] : (int8_t)x_zp;
        }
      }
    }
  }
}

void npucc_conv2d_s8_fast(const int8_t *X, const int8_t *Wt, const int32_t *bias_f, int8_t *Y,
                          int8_t *panel, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                          int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                          int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                          int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                          int32_t rounding) {
  int32_t K = C * KH * KW, plane = OH * OW, n, p, m;
  int32_t lo = npucc_max_i32(act_min, -128), hi = npucc_min_i32(act_max, 127);
  int8_t *c0 = panel, *c1 = panel + K;
  for (n = 0; n < N; n++) {
    const int8_t *img = X + (size_t)n * C * H * W;
    int8_t *yn = Y + (size_t)n * M * plane;
    for (p = 0; p < plane; p += 2) {
      int32_t two = p + 1 < plane, q = two ? p + 1 : p;
      npucc_cf_gather(img, c0, C, H, W, KH, KW, DH, DW, (p / OW) * SH - PT, (p % OW) * SW - PL,
                      x_zp);
      npucc_cf_gather(img, c1, C, H, W, KH, KW, DH, DW, (q / OW) * SH - PT, (q % OW) * SW - PL,
                      x_zp);
      for (m = 0; m + 2 <= M; m += 2) {
        int32_t acc[4];
        const int32_t *r0 = rq + (size_t)m * NPUCC_RQ32_WORDS, *r1 = r0 + NPUCC_RQ32_WORDS;
        int8_t *y0 = yn + (size_t)m * plane + p, *y1 = y0 + plane;
        acc[0] = acc[1] = bias_f[m];
        acc[2] = acc[3] = bias_f[m + 1];
        npucc_dot_2x2(Wt + (size_t)m * K, Wt + (size_t)(m + 1) * K, c0, c1, K, acc);
        y0[0] = npucc_rq32_i8(acc[0], r0, rounding, out_zp, lo, hi);
        y1[0] = npucc_rq32_i8(acc[2], r1, rounding, out_zp, lo, hi);
        if (two) {
          y0[1] = npucc_rq32_i8(acc[1], r0, rounding, out_zp, lo, hi);
          y1[1] = npucc_rq32_i8(acc[3], r1, rounding, out_zp, lo, hi);
        }
      }
      if (m < M) {
        int32_t acc[2];
        const int32_t *r0 = rq + (size_t)m * NPUCC_RQ32_WORDS;
        int8_t *y0 = yn + (size_t)m * plane + p;
        acc[0] = acc[1] = bias_f[m];
        npucc_dot_1x2(Wt + (size_t)m * K, c0, c1, K, acc);
        y0[0] = npucc_rq32_i8(acc[0], r0, rounding, out_zp, lo, hi);
        if (two)
          y0[1] = npucc_rq32_i8(acc[1], r0, rounding, out_zp, lo, hi);
      }
    }
  }
}

/* n outputs of a 3x3 depthwise row (three rows rs bytes apart, taps 1 apart, stride SW):
 * the weights and the requantization words in locals (int8 stores may alias any pointer). */
static NPUCC_NOINLINE void npucc_cf_dw3_row(const int8_t *NPUCC_RESTRICT p0, size_t rs,
                                            int32_t SW, int32_t n, const int8_t *wk, int32_t b,
                                            const int32_t *r, int32_t rounding, int32_t zp,
                                            int32_t lo, int32_t hi, int8_t *NPUCC_RESTRICT y) {
  int32_t w0 = wk[0], w1 = wk[1], w2 = wk[2], w3 = wk[3], w4 = wk[4], w5 = wk[5], w6 = wk[6];
  int32_t w7 = wk[7], w8 = wk[8], i;
  int32_t rqv[NPUCC_RQ32_WORDS];
  rqv[0] = r[0];
  rqv[1] = r[1];
  rqv[2] = r[2];
  rqv[3] = r[3];
  for (i = 0; i < n; i++, p0 += SW) {
    const int8_t *p1 = p0 + rs, *p2 = p1 + rs;
    int32_t acc = b + w0 * p0[0] + w1 * p0[1] + w2 * p0[2] + w3 * p1[0] + w4 * p1[1] +
                  w5 * p1[2] + w6 * p2[0] + w7 * p2[1] + w8 * p2[2];
    y[i] = npucc_rq32_i8(acc, rqv, rounding, zp, lo, hi);
  }
}

/* The KH input rows under output row oy, each PW = (OW-1)*SW + (KW-1)*DW + 1 bytes wide
 * from column -PL, with x_zp outside the image: every tap then reads inside `rows`. */
static void npucc_cf_dw_rows(const int8_t *NPUCC_RESTRICT img, int8_t *NPUCC_RESTRICT rows,
                             int32_t H, int32_t W, int32_t KH, int32_t DH, int32_t iy0,
                             int32_t PL, int32_t PW, int32_t x_zp) {
  int32_t ky, x, left = npucc_min_i32(PL, PW), mid = npucc_max_i32(0, npucc_min_i32(W, PW - PL));
  int8_t z = (int8_t)x_zp;
  for (ky = 0; ky < KH; ky++) {
    int32_t iy = iy0 + ky * DH;
    int8_t *d = rows + (size_t)ky * PW;
    if (iy < 0 || iy >= H) {
      for (x = 0; x < PW; x++)
        d[x] = z;
      continue;
    }
    for (x = 0; x < left; x++)
      d[x] = z;
    memcpy(d + left, img + (size_t)iy * W, (size_t)mid);
    for (x = left + mid; x < PW; x++)
      d[x] = z;
  }
}

void npucc_dwconv2d_s8_fast(const int8_t *X, const int8_t *Wt, const int32_t *bias_f, int8_t *Y,
                            int8_t *rows, int32_t N, int32_t C, int32_t H, int32_t W, int32_t OH,
                            int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                            int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t x_zp,
                            int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *rq,
                            int32_t rounding) {
  int32_t lo = npucc_max_i32(act_min, -128), hi = npucc_min_i32(act_max, 127);
  int32_t n, c, oy, ox, ky, kx, PW = (OW - 1) * SW + (KW - 1) * DW + 1;
  int32_t s3 = KH == 3 && KW == 3 && DW == 1;
  for (n = 0; n < N; n++) {
    for (c = 0; c < C; c++) {
      const int8_t *img = X + ((size_t)n * C + c) * H * W;
      const int8_t *wk = Wt + (size_t)c * KH * KW;
      const int32_t *r = rq + (size_t)c * NPUCC_RQ32_WORDS;
      int8_t *yc = Y + ((size_t)n * C + c) * OH * OW;
      int32_t b = bias_f[c];
      for (oy = 0; oy < OH; oy++) {
        int8_t *yr = yc + (size_t)oy * OW;
        npucc_cf_dw_rows(img, rows, H, W, KH, DH, oy * SH - PT, PL, PW, x_zp);
        if (s3) {
          npucc_cf_dw3_row(rows, (size_t)PW, SW, OW, wk, b, r, rounding, out_zp, lo, hi, yr);
          continue;
        }
        for (ox = 0; ox < OW; ox++) {
          const int8_t *p = rows + (size_t)ox * SW;
          int32_t acc = b;
          for (ky = 0; ky < KH; ky++)
            for (kx = 0; kx < KW; kx++)
              acc += wk[ky * KW + kx] * p[(size_t)ky * PW + (size_t)kx * DW];
          yr[ox] = npucc_rq32_i8(acc, r, rounding, out_zp, lo, hi);
        }
      }
    }
  }
}
