/* npucc_conv.h - float32 2-D convolution kernels: Conv and ConvTranspose (C99).
 *
 * Layouts are ONNX's: X [N][C][H][W], Conv weights [M][C/group][KH][KW],
 * ConvTranspose weights [C][M/group][KH][KW], Y [N][M][OH][OW]. Pads are the
 * top/left pads; the bottom/right pads (and ConvTranspose output_padding)
 * are implied by OH/OW. bias may be NULL. The output is clamped to
 * [act_min, act_max] (pass -FLT_MAX/FLT_MAX for no fused activation).
 * 1-D convolutions are 2-D ones with H = KH = 1.
 *
 * npucc_conv2d_f32 is an indirect convolution: 8 x 8 register tiles (4 x 4
 * without SIMD; output channels x consecutive pixels of one output row) whose
 * weights are read in place and whose im2col rows are read through one
 * pointer per row. Where the convolution is strided, or its kernel is wider
 * than 1 and its output rows than a tile, each kernel row of a depth block
 * (channel, ky) is first copied once per chunk of an output row into a
 * window (zero-padded, split into the SW stride phases) and the KW im2col
 * rows of every tile of the chunk point into it, moving by one tile width
 * from tile to tile; the chunk is as wide as the scratch allows. Strided
 * output rows narrower than a tile are run as one flattened plane instead:
 * tiles of consecutive pixels across output rows, gathered per tile.
 * Otherwise (1-wide kernels, rows of one tile, or windows that do not fit)
 * the rows are read in place or gathered per tile (one tile row,
 * zero-padded) where a row meets the padding, the end of the output row or a
 * stride. Each output sums over k in order, in blocks of NPUCC_CONV_KC with the bias added after the
 * first: the same operations as the packed SGEMM over an implicit im2col
 * view it replaced, so the results are bit-identical. Its scratch,
 * npucc_conv2d_scratch_floats, is (min(K, NPUCC_CONV_KC) + 1) x 8 floats (at
 * most 8,224 bytes) whatever the image size, plus NPUCC_CONV_KC row pointers
 * on the stack. A pointwise convolution (1x1, stride 1, no pads) with K <=
 * NPUCC_GEMM_KC, one output channel or one pixel runs the SGEMM's unpacked or
 * matrix-vector path on the image in place instead (as before; its scratch
 * fits). ConvTranspose runs the SGEMM (needs npucc_gemm.c). Depthwise
 * convolutions (C/group == 1) have their own kernel in npucc_dwconv.h. */
#ifndef NPUCC_CONV_H
#define NPUCC_CONV_H

#include "npucc_common.h"
#include "npucc_gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Depth (im2col rows) of one block of npucc_conv2d_f32: bounds its scratch
 * and its stack (one row pointer per row of a block). */
#define NPUCC_CONV_KC 256

/* Columns of the ConvTranspose GEMM processed per pass (bounds scratch). */
#define NPUCC_CONVT_NC 256

/* Scratch floats of npucc_conv2d_f32. */
size_t npucc_conv2d_scratch_floats(int32_t C, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                                   int32_t KW, int32_t group);

void npucc_conv2d_f32(const float *X, const float *Wt, const float *bias, float *Y,
                      float *scratch, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                      int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                      int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t group,
                      float act_min, float act_max);

/* Scratch floats of npucc_conv_transpose2d_f32. */
size_t npucc_conv_transpose2d_scratch_floats(int32_t C, int32_t H, int32_t W, int32_t M,
                                             int32_t KH, int32_t KW, int32_t group);

void npucc_conv_transpose2d_f32(const float *X, const float *Wt, const float *bias, float *Y,
                                float *scratch, int32_t N, int32_t C, int32_t H, int32_t W,
                                int32_t M, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT,
                                int32_t PL, int32_t group, float act_min, float act_max);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_CONV_H */
