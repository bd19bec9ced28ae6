/* npucc_resize.h - Linear Resize kernels (C99); nearest Resize uses
 * npucc_remap (npucc_move.h).
 *
 * The compiler precomputes, for every output coordinate o of an axis, the
 * two source indices i0, i1 (already clamped to the input) and the weight w
 * of i1, so that value = (1 - w) * x[i0] + w * x[i1].
 *
 *   npucc_resize_bilinear_f32(x, y, planes, ih, iw, oh, ow, ymap, wy, xmap, wx)
 *       x is [planes][ih][iw], y is [planes][oh][ow]; ymap holds (i0, i1)
 *       pairs per output row (2 * oh ints), wy one weight per row; xmap/wx
 *       the same per output column. Columns are interpolated first.
 *   npucc_resize_linear_f32_nd(x, y, rank, in_shape, out_shape, map, w)
 *       any rank <= NPUCC_RESIZE_MAX_RANK: map/w concatenate the per-axis
 *       tables (axis k starts at sum of out_shape[0..k) entries: 2 ints and 1
 *       float per output coordinate). */
#ifndef NPUCC_RESIZE_H
#define NPUCC_RESIZE_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPUCC_RESIZE_MAX_RANK 6

void npucc_resize_bilinear_f32(const float *x, float *y, int32_t planes, int32_t ih, int32_t iw,
                               int32_t oh, int32_t ow, const int32_t *ymap, const float *wy,
                               const int32_t *xmap, const float *wx);
void npucc_resize_linear_f32_nd(const float *x, float *y, int32_t rank, const int32_t *in_shape,
                                const int32_t *out_shape, const int32_t *map, const float *w);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_RESIZE_H */
