/* npucc_dwconv.h - float32 depthwise 2-D convolution kernel (C99).
 *
 * Layouts are ONNX's: X [N][C][H][W], weights [M][1][KH][KW], Y [N][M][OH][OW]
 * with group == C and M = C * multiplier (output channel m reads input
 * channel m / multiplier). Pads are the top/left pads; the bottom/right pads
 * are implied by OH/OW. bias may be NULL. The output is clamped to
 * [act_min, act_max] (pass -FLT_MAX/FLT_MAX for no fused activation).
 * 1-D convolutions are 2-D ones with H = KH = 1.
 *
 * Each input channel is first copied, zero-padded, into the scratch buffer
 * and split into SH x SW stride phases, so that every tap of every output
 * reads the same phase plane at a fixed offset: the whole output plane is
 * then one flat, branch-free loop (16 outputs at a time) that compilers
 * vectorize at -O2 however narrow the image is. Planes larger than
 * NPUCC_DW_FLAT_MAX floats (which would not stay in L1) use a row kernel
 * without scratch instead: interior columns 8 at a time, borders checked. */
#ifndef NPUCC_DWCONV_H
#define NPUCC_DWCONV_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Outputs computed per step of the flat loop (also the scratch slack). */
#define NPUCC_DW_CHUNK 16
/* Largest phase-plane size (floats, about 32 KiB) of the phase-plane kernel. */
#define NPUCC_DW_FLAT_MAX 8192
/* Taps accumulated per pass over the plane (larger kernels take several passes). */
#define NPUCC_DW_TAPS 25

/* Scratch floats of npucc_depthwise_conv2d_f32 (independent of the channel count;
 * 0 for planes over NPUCC_DW_FLAT_MAX, where scratch may be NULL). */
size_t npucc_depthwise_conv2d_scratch_floats(int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                             int32_t SH, int32_t SW, int32_t DH, int32_t DW);

void npucc_depthwise_conv2d_f32(const float *X, const float *Wt, const float *bias, float *Y,
                                float *scratch, int32_t N, int32_t C, int32_t H, int32_t W,
                                int32_t M, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT,
                                int32_t PL, float act_min, float act_max);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_DWCONV_H */
