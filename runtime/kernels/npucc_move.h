/* npucc_move.h - Data movement kernels, independent of the element type (C99).
 *
 * Elements are `esize` bytes (1, 2, 4 or 8 take fast paths); strides and
 * offsets are in elements unless the name says bytes. Ranks are at most
 * NPUCC_MOVE_MAX_RANK.
 *
 *   npucc_copy(x, y, bytes)                       memcpy (nothing if y == x)
 *   npucc_fill(y, n, esize, bytes)                y[0..n) = the element whose
 *       esize bytes are bytes[0..esize) (int32 values 0..255)
 *   npucc_strided_copy(x, y, esize, base, rank, shape, strides)
 *       y dense with `shape`; y[idx] = x[base + sum(idx[k] * strides[k])],
 *       strides may be negative or 0 (Transpose, Slice, Expand-like copies)
 *   npucc_transpose2d(x, y, esize, batch, rows, cols)
 *       y[b][c][r] = x[b][r][c]
 *   npucc_copy_rows(x, y, rows, row_bytes, x_stride, y_stride, x_off, y_off)
 *       row r: y[y_off + r*y_stride ..] = x[x_off + r*x_stride ..], in bytes
 *       (one Concat input or one Split output)
 *   npucc_remap(x, y, esize, rank, in_shape, out_shape, map_off, maps, padbytes)
 *       y[o] = x[src(o)] where, per axis k, src_k = o_k when map_off[k] < 0,
 *       else maps[map_off[k] + o_k]; a negative src_k selects the pad element
 *       whose bytes are padbytes[0..esize) (zero when padbytes is NULL).
 *       Pad (all modes) and nearest Resize.
 *   npucc_gather_idx64 / npucc_gather_idx32(x, idx, y, outer, axis_n, nidx,
 *       inner_bytes): y[o][j][:] = x[o][idx[j]][:]; negative indices count
 *       from the end, out-of-range ones are clamped. */
#ifndef NPUCC_MOVE_H
#define NPUCC_MOVE_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPUCC_MOVE_MAX_RANK 6

void npucc_copy(const void *x, void *y, int32_t bytes);
void npucc_fill(void *y, int32_t n, int32_t esize, const int32_t *bytes);
void npucc_strided_copy(const void *x, void *y, int32_t esize, int32_t base, int32_t rank,
                        const int32_t *shape, const int32_t *strides);
void npucc_transpose2d(const void *x, void *y, int32_t esize, int32_t batch, int32_t rows,
                       int32_t cols);
void npucc_copy_rows(const void *x, void *y, int32_t rows, int32_t row_bytes, int32_t x_stride,
                     int32_t y_stride, int32_t x_off, int32_t y_off);
void npucc_remap(const void *x, void *y, int32_t esize, int32_t rank, const int32_t *in_shape,
                 const int32_t *out_shape, const int32_t *map_off, const int32_t *maps,
                 const int32_t *padbytes);
void npucc_gather_idx64(const void *x, const int64_t *idx, void *y, int32_t outer, int32_t axis_n,
                        int32_t nidx, int32_t inner_bytes);
void npucc_gather_idx32(const void *x, const int32_t *idx, void *y, int32_t outer, int32_t axis_n,
                        int32_t nidx, int32_t inner_bytes);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_MOVE_H */
