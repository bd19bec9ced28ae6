/* npucc_pool_s8.c - int8 MaxPool, AveragePool (count folded into per-count multipliers)
 * and mean reduction over a middle axis block. See npucc_pool_s8.h. */
#include "npucc_pool_s8.h"
#include "npucc_requant.h"

void npucc_maxpool2d_s8(const int8_t *X, int8_t *Y, int32_t NC, int32_t H, int32_t W, int32_t OH,
                        int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW, int32_t DH,
                        int32_t DW, int32_t PT, int32_t PL) {
  int32_t p, oy, ox, ky, kx;
  for (p = 0; p < NC; p++) {
    const int8_t *img = X + (size_t)p * H * W;
    int8_t *yp = Y + (size_t)p * OH * OW;
    for (oy = 0; oy < OH; oy++) {
      for (ox = 0; ox < OW; ox++) {
        int32_t m = -128;
        for (ky = 0; ky < KH; ky++) {
          int32_t iy = oy * SH - PT + ky * DH;
          if (iy < 0 || iy >= H)
            continue;
          for (kx = 0; kx < KW; kx++) {
            int32_t ix = ox * SW - PL + kx * DW;
            if (ix >= 0 && ix < W && img[(size_t)iy * W + ix] > m)
              m = img[(size_t)iy * W + ix];
          }
        }
        yp[(size_t)oy * OW + ox] = (int8_t)m;
      }
    }
  }
}

/* The sum of x[0..n). */
static int32_t npucc_sum_s8(const int8_t *x, int32_t n) {
  int32_t a = 0, b = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    a += x[i] + x[i + 1];
    b += x[i + 2] + x[i + 3];
  }
  for (; i < n; i++)
    a += x[i];
  return a + b;
}

void npucc_avgpool2d_s8(const int8_t *X, int8_t *Y, int32_t NC, int32_t H, int32_t W, int32_t OH,
                        int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW, int32_t PT,
                        int32_t PL, int32_t PB, int32_t PR, int32_t count_include_pad,
                        int32_t x_zp, int32_t out_zp, const int32_t *mult,
                        const int32_t *shift) {
  int32_t p, oy, ox, iy;
  for (p = 0; p < NC; p++) {
    const int8_t *img = X + (size_t)p * H * W;
    int8_t *yp = Y + (size_t)p * OH * OW;
    for (oy = 0; oy < OH; oy++) {
      int32_t y0 = oy * SH - PT, y1 = y0 + KH;
      int32_t vy0 = npucc_max_i32(y0, 0), vy1 = npucc_min_i32(y1, H);
      int32_t cy = count_include_pad
                       ? npucc_min_i32(y1, H + PB) - npucc_max_i32(y0, -PT)
                       : vy1 - vy0;
      for (ox = 0; ox < OW; ox++) {
        int32_t x0 = ox * SW - PL, x1 = x0 + KW;
        int32_t vx0 = npucc_max_i32(x0, 0), vx1 = npucc_min_i32(x1, W);
        int32_t cx = count_include_pad
                         ? npucc_min_i32(x1, W + PR) - npucc_max_i32(x0, -PL)
                         : vx1 - vx0;
        int32_t acc = 0, count, nx = vx1 - vx0, ny = vy1 - vy0;
        if (nx > 0 && ny > 0) {
          if (nx == W) { /* whole rows: one run (e.g. a global average) */
            acc = npucc_sum_s8(img + (size_t)vy0 * W, ny * W);
          } else {
            for (iy = vy0; iy < vy1; iy++)
              acc += npucc_sum_s8(img + (size_t)iy * W + vx0, nx);
          }
          acc -= nx * ny * x_zp; /* x_zp off every value inside the image */
        }
        count = cy > 0 && cx > 0 ? cy * cx : 0;
        yp[(size_t)oy * OW + ox] =
            count > 0 ? npucc_requant_i8(acc, mult[count], shift[count], out_zp, -128, 127)
                      : (int8_t)npucc_clamp_i32(out_zp, -128, 127);
      }
    }
  }
}

void npucc_reduce_mean_s8(const int8_t *X, int8_t *Y, int32_t outer, int32_t red, int32_t inner,
                          int32_t x_zp, int32_t out_zp, int32_t mult, int32_t shift) {
  int32_t o, r, i;
  for (o = 0; o < outer; o++) {
    const int8_t *xo = X + (size_t)o * red * inner;
    int8_t *yo = Y + (size_t)o * inner;
    if (inner == 1) {
      int32_t acc = 0;
      for (r = 0; r < red; r++)
        acc += (int32_t)xo[r] - x_zp;
      yo[0] = npucc_requant_i8(acc, mult, shift, out_zp, -128, 127);
      continue;
    }
    for (i = 0; i < inner; i++) {
      int32_t acc = 0;
      for (r = 0; r < red; r++)
        acc += (int32_t)xo[(size_t)r * inner + i] - x_zp;
      yo[i] = npucc_requant_i8(acc, mult, shift, out_zp, -128, 127);
    }
  }
}
