/* npucc_rq32.c - The one out-of-line copy of npucc_rq32_generic (npucc_rq32.h), the
 * generic path of the fast kernels' requantization. */
#include "npucc_rq32.h"

int8_t npucc_rq32_generic(int32_t acc, const int32_t *rq, int32_t rounding, int32_t out_zp,
                          int32_t lo, int32_t hi) {
  return npucc_rq32_generic_body(acc, rq, rounding, out_zp, lo, hi);
}
