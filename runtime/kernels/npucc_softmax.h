/* npucc_softmax.h - Softmax over one axis (C99).
 *
 * x and y are dense [outer][axis][inner]; for every (o, i) the `axis`
 * values are replaced by exp(v - max) / sum(exp(v - max)). y may be x. */
#ifndef NPUCC_SOFTMAX_H
#define NPUCC_SOFTMAX_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void npucc_softmax_f32(const float *x, float *y, int32_t outer, int32_t axis, int32_t inner);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_SOFTMAX_H */
