/* npucc_reduce.h - Mean reductions (C99).
 *
 *   npucc_reduce_mean_f32(x, y, outer, red, inner)
 *       x is [outer][red][inner], y is [outer][inner]: the mean over `red`.
 *   npucc_reduce_mean_f32_nd(x, y, ny, rank, shape, ystrides, count)
 *       general case: x is dense with `shape` (rank <= NPUCC_REDUCE_MAX_RANK);
 *       element idx of x adds into y[sum(idx[k] * ystrides[k])] (ystrides is 0
 *       on reduced axes); y has ny elements, each the mean of `count` values.
 * Sums are accumulated in float. */
#ifndef NPUCC_REDUCE_H
#define NPUCC_REDUCE_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPUCC_REDUCE_MAX_RANK 6

void npucc_reduce_mean_f32(const float *x, float *y, int32_t outer, int32_t red, int32_t inner);
void npucc_reduce_mean_f32_nd(const float *x, float *y, int32_t ny, int32_t rank,
                              const int32_t *shape, const int32_t *ystrides, int32_t count);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_REDUCE_H */
