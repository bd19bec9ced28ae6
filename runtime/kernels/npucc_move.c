/* npucc_move.c - Data movement kernels, independent of the element type (C99).
 *
 * Elements are moved with fixed-size memcpy calls (which compilers turn into
 * single loads/stores) so that no buffer is accessed through a pointer of
 * another type. */
#include "npucc_move.h"

typedef unsigned char npucc_mv_byte;

/* Copies n elements, the source advancing by xs elements. */
static void npucc_mv_row(const npucc_mv_byte *x, ptrdiff_t xs, npucc_mv_byte *y, int32_t n,
                         int32_t esize) {
  int32_t i;
  if (xs == 1) {
    memcpy(y, x, (size_t)n * (size_t)esize);
    return;
  }
#define NPUCC_MV_ROW_CASE(SZ)                                                                      \
  case SZ:                                                                                         \
    for (i = 0; i < n; i++)                                                                        \
      memcpy(y + (ptrdiff_t)i * SZ, x + (ptrdiff_t)i * xs * SZ, SZ);                               \
    return;
  switch (esize) {
    NPUCC_MV_ROW_CASE(1)
    NPUCC_MV_ROW_CASE(2)
    NPUCC_MV_ROW_CASE(4)
    NPUCC_MV_ROW_CASE(8)
  default:
    for (i = 0; i < n; i++)
      memcpy(y + (ptrdiff_t)i * esize, x + (ptrdiff_t)i * xs * esize, (size_t)esize);
  }
#undef NPUCC_MV_ROW_CASE
}

void npucc_copy(const void *x, void *y, int32_t bytes) {
  if (x != y && bytes > 0)
    memcpy(y, x, (size_t)bytes);
}

void npucc_fill(void *y, int32_t n, int32_t esize, const int32_t *bytes) {
  npucc_mv_byte pat[16];
  npucc_mv_byte *d = (npucc_mv_byte *)y;
  int32_t i, zero = 1;
  if (esize <= 0 || esize > 16 || n <= 0)
    return;
  for (i = 0; i < esize; i++) {
    pat[i] = (npucc_mv_byte)(bytes ? bytes[i] : 0);
    zero &= pat[i] == 0;
  }
  if (zero) {
    memset(d, 0, (size_t)n * (size_t)esize);
    return;
  }
  for (i = 0; i < n; i++)
    memcpy(d + (ptrdiff_t)i * esize, pat, (size_t)esize);
}

void npucc_strided_copy(const void *x, void *y, int32_t esize, int32_t base, int32_t rank,
                        const int32_t *shape, const int32_t *strides) {
  const npucc_mv_byte *xb = (const npucc_mv_byte *)x;
  npucc_mv_byte *yb = (npucc_mv_byte *)y;
  int32_t idx[NPUCC_MOVE_MAX_RANK];
  ptrdiff_t ox = base, rows = 1, r;
  int32_t k, last, n;
  if (rank <= 0) {
    memcpy(yb, xb + (ptrdiff_t)base * esize, (size_t)esize);
    return;
  }
  last = rank - 1;
  n = shape[last];
  for (k = 0; k < last; k++) {
    idx[k] = 0;
    rows *= shape[k];
  }
  for (r = 0; r < rows; r++) {
    npucc_mv_row(xb + ox * esize, strides[last], yb + r * n * esize, n, esize);
    for (k = last - 1; k >= 0; k--) {
      idx[k]++;
      ox += strides[k];
      if (idx[k] < shape[k])
        break;
      ox -= (ptrdiff_t)strides[k] * shape[k];
      idx[k] = 0;
    }
  }
}

/* 16 x 16 tiles keep both the rows read and the rows written in cache. */
#define NPUCC_MV_TILE 16
void npucc_transpose2d(const void *x, void *y, int32_t esize, int32_t batch, int32_t rows,
                       int32_t cols) {
  const npucc_mv_byte *xb = (const npucc_mv_byte *)x;
  npucc_mv_byte *yb = (npucc_mv_byte *)y;
  const ptrdiff_t plane = (ptrdiff_t)rows * cols * esize;
  int32_t b, r0, c0, r, c;
  for (b = 0; b < batch; b++) {
    const npucc_mv_byte *xp = xb + b * plane;
    npucc_mv_byte *yp = yb + b * plane;
    for (r0 = 0; r0 < rows; r0 += NPUCC_MV_TILE) {
      const int32_t r1 = npucc_min_i32(r0 + NPUCC_MV_TILE, rows);
      for (c0 = 0; c0 < cols; c0 += NPUCC_MV_TILE) {
        const int32_t c1 = npucc_min_i32(c0 + NPUCC_MV_TILE, cols);
#define NPUCC_MV_T2D_CASE(SZ)                                                                      \
  case SZ:                                                                                         \
    for (r = r0; r < r1; r++)                                                                      \
      for (c = c0; c < c1; c++)                                                                    \
        memcpy(yp + ((ptrdiff_t)c * rows + r) * SZ, xp + ((ptrdiff_t)r * cols + c) * SZ, SZ);      \
    break;
        switch (esize) {
          NPUCC_MV_T2D_CASE(1)
          NPUCC_MV_T2D_CASE(2)
          NPUCC_MV_T2D_CASE(4)
          NPUCC_MV_T2D_CASE(8)
        default:
          for (r = r0; r < r1; r++)
            for (c = c0; c < c1; c++)
              memcpy(yp + ((ptrdiff_t)c * rows + r) * esize, xp + ((ptrdiff_t)r * cols + c) * esize,
                     (size_t)esize);
        }
#undef NPUCC_MV_T2D_CASE
      }
    }
  }
}

void npucc_copy_rows(const void *x, void *y, int32_t rows, int32_t row_bytes, int32_t x_stride,
                     int32_t y_stride, int32_t x_off, int32_t y_off) {
  const npucc_mv_byte *xb = (const npucc_mv_byte *)x + x_off;
  npucc_mv_byte *yb = (npucc_mv_byte *)y + y_off;
  int32_t r;
  if (row_bytes <= 0)
    return;
  for (r = 0; r < rows; r++)
    memcpy(yb + (ptrdiff_t)r * y_stride, xb + (ptrdiff_t)r * x_stride, (size_t)row_bytes);
}

void npucc_remap(const void *x, void *y, int32_t esize, int32_t rank, const int32_t *in_shape,
                 const int32_t *out_shape, const int32_t *map_off, const int32_t *maps,
                 const int32_t *padbytes) {
  const npucc_mv_byte *xb = (const npucc_mv_byte *)x;
  npucc_mv_byte *yb = (npucc_mv_byte *)y;
  npucc_mv_byte pad[16];
  ptrdiff_t xstr[NPUCC_MOVE_MAX_RANK];
  int32_t idx[NPUCC_MOVE_MAX_RANK];
  ptrdiff_t rows = 1, r;
  int32_t k, last, n, i;
  if (esize <= 0 || esize > 16)
    return;
  for (i = 0; i < esize; i++)
    pad[i] = (npucc_mv_byte)(padbytes ? padbytes[i] : 0);
  if (rank <= 0) {
    memcpy(yb, xb, (size_t)esize);
    return;
  }
  last = rank - 1;
  n = out_shape[last];
  xstr[last] = 1;
  for (k = last - 1; k >= 0; k--)
    xstr[k] = xstr[k + 1] * in_shape[k + 1];
  for (k = 0; k < last; k++) {
    idx[k] = 0;
    rows *= out_shape[k];
  }
  for (r = 0; r < rows; r++) {
    npucc_mv_byte *yr = yb + r * n * esize;
    ptrdiff_t ox = 0;
    int32_t padded = 0;
    for (k = 0; k < last; k++) {
      const int32_t s = map_off[k] < 0 ? idx[k] : maps[map_off[k] + idx[k]];
      if (s < 0)
        padded = 1;
      ox += s * xstr[k];
    }
    if (padded) {
      for (i = 0; i < n; i++)
        memcpy(yr + (ptrdiff_t)i * esize, pad, (size_t)esize);
    } else if (map_off[last] < 0) {
      memcpy(yr, xb + ox * esize, (size_t)n * (size_t)esize);
    } else {
      const int32_t *m = maps + map_off[last];
      const npucc_mv_byte *xr = xb + ox * esize;
#define NPUCC_MV_REMAP_CASE(SZ)                                                                    \
  case SZ:                                                                                         \
    for (i = 0; i < n; i++)                                                                        \
      memcpy(yr + (ptrdiff_t)i * SZ, m[i] < 0 ? pad : xr + (ptrdiff_t)m[i] * SZ, SZ);              \
    break;
      switch (esize) {
        NPUCC_MV_REMAP_CASE(1)
        NPUCC_MV_REMAP_CASE(2)
        NPUCC_MV_REMAP_CASE(4)
        NPUCC_MV_REMAP_CASE(8)
      default:
        for (i = 0; i < n; i++)
          memcpy(yr + (ptrdiff_t)i * esize, m[i] < 0 ? pad : xr + (ptrdiff_t)m[i] * esize,
                 (size_t)esize);
      }
#undef NPUCC_MV_REMAP_CASE
    }
    for (k = last - 1; k >= 0; k--) {
      if (++idx[k] < out_shape[k])
        break;
      idx[k] = 0;
    }
  }
}

#define NPUCC_MV_GATHER(FN, IT)                                                                    \
  void FN(const void *x, const IT *idx, void *y, int32_t outer, int32_t axis_n, int32_t nidx,      \
          int32_t inner_bytes) {                                                                   \
    const npucc_mv_byte *xb = (const npucc_mv_byte *)x;                                            \
    npucc_mv_byte *yb = (npucc_mv_byte *)y;                                                        \
    int32_t o, j;                                                                                  \
    if (axis_n <= 0)                                                                               \
      return;                                                                                      \
    for (o = 0; o < outer; o++)                                                                    \
      for (j = 0; j < nidx; j++) {                                                                 \
        int64_t k = (int64_t)idx[j];                                                               \
        if (k < 0)                                                                                 \
          k += axis_n;                                                                             \
        k = k < 0 ? 0 : (k >= axis_n ? axis_n - 1 : k);                                            \
        memcpy(yb + ((ptrdiff_t)o * nidx + j) * inner_bytes,                                       \
               xb + ((ptrdiff_t)o * axis_n + (ptrdiff_t)k) * inner_bytes, (size_t)inner_bytes);    \
      }                                                                                            \
  }
NPUCC_MV_GATHER(npucc_gather_idx64, int64_t)
NPUCC_MV_GATHER(npucc_gather_idx32, int32_t)
