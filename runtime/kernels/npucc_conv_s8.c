/* npucc_conv_s8.c - int8 Conv: per output channel, int32 accumulators over the output
 * plane are updated one kernel tap at a time (contiguous inner loop over output
 * columns, valid ranges precomputed so padding costs nothing), then requantized.
 * Covers regular, grouped, depthwise, 1x1 pointwise and dilated convolutions.
 * See npucc_conv_s8.h. */
#include "npucc_conv_s8.h"
#include "npucc_requant.h"

/* Output positions o in [0, out) whose input o*stride + off lies in [0, in): [*lo, *hi). */
static void npucc_cs8_range(int32_t off, int32_t stride, int32_t in, int32_t out, int32_t *lo,
                            int32_t *hi) {
  int32_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int32_t b = in - 1 - off < 0 ? 0 : (in - 1 - off) / stride + 1;
  b = npucc_min_i32(b, out);
  *lo = npucc_min_i32(a, b);
  *hi = b;
}

/* acc[oh][ow] += wv * (x[ih][iw] - x_zp) for one kernel tap over the whole plane. */
static void npucc_cs8_tap(const int8_t *NPUCC_RESTRICT img, int32_t *NPUCC_RESTRICT acc, int32_t wv, int32_t x_zp, int32_t H,
                          int32_t W, int32_t OH, int32_t OW, int32_t SH, int32_t SW,
                          int32_t offy, int32_t offx) {
  int32_t oy0, oy1, ox0, ox1, oy, ox;
  npucc_cs8_range(offy, SH, H, OH, &oy0, &oy1);
  npucc_cs8_range(offx, SW, W, OW, &ox0, &ox1);
  for (oy = oy0; oy < oy1; oy++) {
    const int8_t *NPUCC_RESTRICT xr = img + (size_t)(oy * SH + offy) * W + offx;
    int32_t *NPUCC_RESTRICT ar = acc + (size_t)oy * OW;
    if (SW == 1) {
      for (ox = ox0; ox < ox1; ox++)
        ar[ox] += wv * ((int32_t)xr[ox] - x_zp);
    } else {
      for (ox = ox0; ox < ox1; ox++)
        ar[ox] += wv * ((int32_t)xr[ox * SW] - x_zp);
    }
  }
}

/* acc[i] += wv * (x[i] - x_zp), i < n (the 1x1 pointwise case). */
static void npucc_cs8_axpy(int32_t *NPUCC_RESTRICT acc, const int8_t *NPUCC_RESTRICT x,
                           int32_t wv, int32_t x_zp, int32_t n) {
  int32_t i, off = -wv * x_zp;
  for (i = 0; i < n; i++)
    acc[i] += wv * (int32_t)x[i] + off;
}

/* Y (int8, requantized) or Y32 (int32 accumulators, when Y32 is not NULL). */
static void npucc_cs8_core(const int8_t *X, const int8_t *Wt, const int32_t *bias, int8_t *Y,
                           int32_t *Y32, int32_t *scratch, int32_t N, int32_t C, int32_t H,
                           int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                           int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT, int32_t PL,
                           int32_t group, int32_t x_zp, int32_t out_zp, int32_t act_min,
                           int32_t act_max, const int32_t *w_zp, const int32_t *mult,
                           const int32_t *shift, int32_t rounding) {
  int32_t cg = C / group, mg = M / group, plane = OH * OW, n, m, c, ky, kx, i;
  int32_t pointwise = KH == 1 && KW == 1 && SH == 1 && SW == 1 && PT == 0 && PL == 0 &&
                      OH == H && OW == W;
  for (n = 0; n < N; n++) {
    for (m = 0; m < M; m++) {
      int32_t g = m / mg, wz = w_zp ? w_zp[m] : 0;
      const int8_t *wm = Wt + (size_t)m * cg * KH * KW;
      size_t yoff = ((size_t)n * M + m) * plane;
      int32_t b = bias ? bias[m] : 0;
      for (i = 0; i < plane; i++)
        scratch[i] = b;
      for (c = 0; c < cg; c++) {
        const int8_t *img = X + ((size_t)n * C + (size_t)g * cg + c) * H * W;
        const int8_t *wk = wm + (size_t)c * KH * KW;
        if (pointwise) {
          int32_t wv = (int32_t)wk[0] - wz;
          if (wv == 0)
            continue;
          npucc_cs8_axpy(scratch, img, wv, x_zp, plane);
          continue;
        }
        for (ky = 0; ky < KH; ky++) {
          for (kx = 0; kx < KW; kx++) {
            int32_t wv = (int32_t)wk[ky * KW + kx] - wz;
            if (wv == 0)
              continue;
            npucc_cs8_tap(img, scratch, wv, x_zp, H, W, OH, OW, SH, SW, ky * DH - PT,
                          kx * DW - PL);
          }
        }
      }
      if (Y32) {
        for (i = 0; i < plane; i++)
          Y32[yoff + (size_t)i] = scratch[i];
      } else {
        for (i = 0; i < plane; i++)
          Y[yoff + (size_t)i] =
              npucc_requant_i8_r(scratch[i], mult[m], shift[m], out_zp, act_min, act_max, rounding);
      }
    }
  }
}

void npucc_conv2d_s8(const int8_t *X, const int8_t *Wt, const int32_t *bias, int8_t *Y,
                     int32_t *scratch, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                     int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                     int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t group, int32_t x_zp,
                     int32_t out_zp, int32_t act_min, int32_t act_max, const int32_t *w_zp,
                     const int32_t *mult, const int32_t *shift, int32_t rounding) {
  npucc_cs8_core(X, Wt, bias, Y, NULL, scratch, N, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT,
                 PL, group, x_zp, out_zp, act_min, act_max, w_zp, mult, shift, rounding);
}

void npucc_conv2d_s8_acc32(const int8_t *X, const int8_t *Wt, const int32_t *bias, int32_t *Y,
                           int32_t *scratch, int32_t N, int32_t C, int32_t H, int32_t W,
                           int32_t M, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                           int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT,
                           int32_t PL, int32_t group, int32_t x_zp, const int32_t *w_zp) {
  npucc_cs8_core(X, Wt, bias, NULL, Y, scratch, N, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT,
                 PL, group, x_zp, 0, -128, 127, w_zp, NULL, NULL, NPUCC_RQ_EXACT);
}
