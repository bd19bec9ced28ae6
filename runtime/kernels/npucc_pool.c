/* npucc_pool.c - float32 MaxPool, AveragePool and global pooling kernels (C99).
 * See npucc_pool.h for the conventions. */
#include "npucc_pool.h"

/* Taps k in [0, K) whose position base + k*dil lies in [lo, hi): [*k0, *k1). */
static void npucc_pool_taps(int32_t base, int32_t dil, int32_t K, int32_t lo, int32_t hi,
                            int32_t *k0, int32_t *k1) {
  int32_t a = base >= lo ? 0 : (lo - base + dil - 1) / dil;
  int32_t b = hi - 1 - base < 0 ? 0 : (hi - 1 - base) / dil + 1;
  b = npucc_min_i32(b, K);
  *k0 = npucc_min_i32(a, b);
  *k1 = b;
}

void npucc_maxpool2d_f32(const float *X, float *Y, int32_t NC, int32_t H, int32_t W, int32_t OH,
                         int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW, int32_t DH,
                         int32_t DW, int32_t PT, int32_t PL) {
  int32_t p, oy, ox, ky, kx;
  for (p = 0; p < NC; p++) {
    const float *img = X + (size_t)p * H * W;
    float *out = Y + (size_t)p * OH * OW;
    for (oy = 0; oy < OH; oy++) {
      int32_t by = oy * SH - PT, ky0, ky1;
      npucc_pool_taps(by, DH, KH, 0, H, &ky0, &ky1);
      for (ox = 0; ox < OW; ox++) {
        int32_t bx = ox * SW - PL, kx0, kx1;
        float m = -3.40282347e38f;
        npucc_pool_taps(bx, DW, KW, 0, W, &kx0, &kx1);
        for (ky = ky0; ky < ky1; ky++) {
          const float *row = img + (size_t)(by + ky * DH) * W;
          for (kx = kx0; kx < kx1; kx++) {
            float v = row[bx + kx * DW];
            m = v > m ? v : m;
          }
        }
        out[(size_t)oy * OW + ox] = m;
      }
    }
  }
}

void npucc_avgpool2d_f32(const float *X, float *Y, int32_t NC, int32_t H, int32_t W, int32_t OH,
                         int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW, int32_t DH,
                         int32_t DW, int32_t PT, int32_t PL, int32_t PB, int32_t PR,
                         int32_t count_include_pad) {
  int32_t p, oy, ox, ky, kx;
  for (p = 0; p < NC; p++) {
    const float *img = X + (size_t)p * H * W;
    float *out = Y + (size_t)p * OH * OW;
    for (oy = 0; oy < OH; oy++) {
      int32_t by = oy * SH - PT, ky0, ky1, cy0, cy1;
      npucc_pool_taps(by, DH, KH, 0, H, &ky0, &ky1);
      if (count_include_pad)
        npucc_pool_taps(by, DH, KH, -PT, H + PB, &cy0, &cy1);
      else {
        cy0 = ky0;
        cy1 = ky1;
      }
      for (ox = 0; ox < OW; ox++) {
        int32_t bx = ox * SW - PL, kx0, kx1, cx0, cx1, count;
        float s = 0.0f;
        npucc_pool_taps(bx, DW, KW, 0, W, &kx0, &kx1);
        if (count_include_pad)
          npucc_pool_taps(bx, DW, KW, -PL, W + PR, &cx0, &cx1);
        else {
          cx0 = kx0;
          cx1 = kx1;
        }
        for (ky = ky0; ky < ky1; ky++) {
          const float *row = img + (size_t)(by + ky * DH) * W;
          for (kx = kx0; kx < kx1; kx++)
            s += row[bx + kx * DW];
        }
        count = (cy1 - cy0) * (cx1 - cx0);
        out[(size_t)oy * OW + ox] = count > 0 ? s / (float)count : 0.0f;
      }
    }
  }
}

void npucc_global_avgpool_f32(const float *X, float *Y, int32_t NC, int32_t spatial) {
  int32_t p, i, t;
  for (p = 0; p < NC; p++) {
    const float *x = X + (size_t)p * spatial;
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, s = 0.0f;
    for (i = 0; i + 8 <= spatial; i += 8)
      for (t = 0; t < 8; t++)
        acc[t] += x[i + t];
    for (; i < spatial; i++)
      s += x[i];
    s += ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    Y[p] = spatial > 0 ? s / (float)spatial : 0.0f;
  }
}

void npucc_global_maxpool_f32(const float *X, float *Y, int32_t NC, int32_t spatial) {
  int32_t p, i;
  for (p = 0; p < NC; p++) {
    const float *x = X + (size_t)p * spatial;
    float m = -3.40282347e38f;
    for (i = 0; i < spatial; i++)
      m = x[i] > m ? x[i] : m;
    Y[p] = m;
  }
}
