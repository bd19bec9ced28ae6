/* npucc_rq32.h - npucc_requant.h for the fast CPU kernels (C99): its npucc_rq32_i8 with the
 * generic path (multipliers outside the 32-bit fast words, about 2.6 KB of code) declared
 * here and defined once, in npucc_rq32.c, instead of one static copy per kernel file.
 * Include it before anything that includes npucc_requant.h. */
#ifndef NPUCC_RQ32_H
#define NPUCC_RQ32_H

#define NPUCC_RQ32_GENERIC_EXTERN 1
#include "npucc_requant.h"

#endif /* NPUCC_RQ32_H */
