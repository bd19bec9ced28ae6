/* npucc_gemm.h - float32 matrix products: packed SGEMM core, Gemm, MatMul (C99).
 *
 * The SGEMM core (npucc_sgemm_core_f32) computes
 *     C[M x N] = (accumulate ? C : 0) + row_bias + alpha * A[M x K] * B[K x N]
 * then clamps to [act_min, act_max]. A is a strided matrix; B is a strided
 * matrix or an implicit im2col view of an NCHW image (no im2col buffer is
 * ever materialized; the float Conv kernel now runs its own indirect loop,
 * npucc_conv.c, and is checked bit for bit against this view). Both operands are
 * packed block by block into the caller's scratch buffer, whose size in
 * floats is npucc_sgemm_scratch_floats(M, N, K); products small enough to
 * stay in cache (row-major A and B, K <= NPUCC_GEMM_KC, alpha 1) are run on
 * the operands in place instead, and A is read in place (not packed) when
 * N <= 64. Neither needs more scratch than the packed path. The inner 8x8
 * and 4x8 kernels are plain C written so that gcc/clang vectorize them at -O2.
 *
 * Blocking parameters are part of the scratch-size contract with the
 * compiler's lowering (lib/lower/cpu/MatMul.cpp mirrors them). */
#ifndef NPUCC_GEMM_H
#define NPUCC_GEMM_H

#include "npucc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPUCC_GEMM_MR 8   /* rows of the register tile */
#define NPUCC_GEMM_NR 8   /* columns of the register tile */
#define NPUCC_GEMM_MC 64  /* rows of A packed at once (multiple of MR) */
#define NPUCC_GEMM_KC 256 /* depth of one packed block */
#define NPUCC_GEMM_NC 256 /* columns of B packed at once (multiple of NR) */

/* Source of the B operand. Matrix mode (is_conv == 0): element (k, j) is
 * data[k * rs + j * cs]. Im2col mode (is_conv != 0): data points at the
 * first channel of an image [C][in_h][in_w]; row k = (c * k_h + ky) * k_w + kx,
 * column j = oy * out_w + ox, element = image[c][oy*stride_h - pad_t + ky*dil_h]
 * [ox*stride_w - pad_l + kx*dil_w], or 0 outside the image. */
typedef struct {
  const float *data;
  int32_t rs, cs;
  int32_t is_conv;
  int32_t in_h, in_w, k_h, k_w;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_t, pad_l, out_w;
} npucc_gemm_bsrc;

/* Floats of scratch needed by npucc_sgemm_core_f32 for an M x N x K product. */
size_t npucc_sgemm_scratch_floats(int32_t M, int32_t N, int32_t K);

/* A(i, k) = A[i * rsa + k * csa]. row_bias may be NULL. C rows are ldc apart. */
void npucc_sgemm_core_f32(int32_t M, int32_t N, int32_t K, float alpha, const float *A,
                          int32_t rsa, int32_t csa, const npucc_gemm_bsrc *B, float *C,
                          int32_t ldc, int32_t accumulate, const float *row_bias, float act_min,
                          float act_max, float *scratch);

/* ONNX Gemm: Y = clamp(alpha * op(A) * op(B) + beta * C). op(A) is M x K,
 * op(B) is K x N. c_mode says how C broadcasts: 0 absent, 1 scalar, 2 one
 * value per column ([N] or [1,N]), 3 one value per row ([M,1]), 4 full [M,N].
 * C may be NULL when c_mode == 0. Scratch: npucc_sgemm_scratch_floats(M,N,K). */
void npucc_gemm_f32(const float *A, const float *B, const float *C, float *Y, float *scratch,
                    int32_t M, int32_t N, int32_t K, int32_t trans_a, int32_t trans_b,
                    float alpha, float beta, int32_t c_mode, float act_min, float act_max);

/* ONNX MatMul over `batch` products Y[b] (M x N, contiguous) = A[b] * B[b].
 * a_off[b] / b_off[b] are element offsets of each batch's A (M x K,
 * row-major) and B (K x N, row-major), so broadcast batch dimensions cost
 * nothing. Scratch: npucc_sgemm_scratch_floats(M, N, K). */
void npucc_matmul_f32(const float *A, const float *B, float *Y, float *scratch, int32_t batch,
                      int32_t M, int32_t N, int32_t K, float act_min, float act_max,
                      const int32_t *a_off, const int32_t *b_off);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_GEMM_H */
