/* npucc_resize.c - Linear Resize kernels (C99).
 *
 * Bilinear: per output row, the two source rows are interpolated along x,
 * then blended along y. N-D: every output element sums its 2^rank corners,
 * skipping the corners of axes whose weight is zero. */
#include "npucc_resize.h"

void npucc_resize_bilinear_f32(const float *x, float *y, int32_t planes, int32_t ih, int32_t iw,
                               int32_t oh, int32_t ow, const int32_t *ymap, const float *wy,
                               const int32_t *xmap, const float *wx) {
  int32_t p, oy, ox;
  for (p = 0; p < planes; p++) {
    const float *xp = x + (ptrdiff_t)p * ih * iw;
    float *yp = y + (ptrdiff_t)p * oh * ow;
    for (oy = 0; oy < oh; oy++) {
      const float *r0 = xp + (ptrdiff_t)ymap[2 * oy] * iw;
      const float *r1 = xp + (ptrdiff_t)ymap[2 * oy + 1] * iw;
      const float b = wy[oy], a = 1.0f - b;
      float *yr = yp + (ptrdiff_t)oy * ow;
      for (ox = 0; ox < ow; ox++) {
        const int32_t x0 = xmap[2 * ox], x1 = xmap[2 * ox + 1];
        const float d = wx[ox], c = 1.0f - d;
        const float top = c * r0[x0] + d * r0[x1];
        const float bot = c * r1[x0] + d * r1[x1];
        yr[ox] = a * top + b * bot;
      }
    }
  }
}

void npucc_resize_linear_f32_nd(const float *x, float *y, int32_t rank, const int32_t *in_shape,
                                const int32_t *out_shape, const int32_t *map, const float *w) {
  int32_t idx[NPUCC_RESIZE_MAX_RANK], start[NPUCC_RESIZE_MAX_RANK];
  ptrdiff_t xstr[NPUCC_RESIZE_MAX_RANK];
  ptrdiff_t total = 1, e;
  int32_t k;
  if (rank <= 0) {
    y[0] = x[0];
    return;
  }
  xstr[rank - 1] = 1;
  for (k = rank - 2; k >= 0; k--)
    xstr[k] = xstr[k + 1] * in_shape[k + 1];
  for (k = 0; k < rank; k++) {
    idx[k] = 0;
    start[k] = k == 0 ? 0 : start[k - 1] + out_shape[k - 1];
    total *= out_shape[k];
  }
  for (e = 0; e < total; e++) {
    const int32_t ncorner = 1 << rank;
    float acc = 0.0f;
    int32_t c;
    for (c = 0; c < ncorner; c++) {
      float wt = 1.0f;
      ptrdiff_t off = 0;
      for (k = 0; k < rank; k++) {
        const int32_t t = start[k] + idx[k];
        const int32_t hi = (c >> (rank - 1 - k)) & 1;
        const float wk = hi ? w[t] : 1.0f - w[t];
        if (wk == 0.0f)
          break;
        wt *= wk;
        off += map[2 * t + hi] * xstr[k];
      }
      if (k == rank)
        acc += wt * x[off];
    }
    y[e] = acc;
    for (k = rank - 1; k >= 0; k--) {
      if (++idx[k] < out_shape[k])
        break;
      idx[k] = 0;
    }
  }
}
