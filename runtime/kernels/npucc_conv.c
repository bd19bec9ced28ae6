/* npucc_conv.c - float32 Conv (SGEMM over an implicit im2col) and ConvTranspose (SGEMM
 * then col2im scatter) kernels (C99). See npucc_conv.h; depthwise Conv is in npucc_dwconv.c. */
#include "npucc_conv.h"


size_t npucc_conv2d_scratch_floats(int32_t C, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                                   int32_t KW, int32_t group) {
  return npucc_sgemm_scratch_floats(M / group, OH * OW, C / group * KH * KW);
}

void npucc_conv2d_f32(const float *X, const float *Wt, const float *bias, float *Y,
                      float *scratch, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                      int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                      int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t group,
                      float act_min, float act_max) {
  int32_t cg = C / group, mg = M / group, kdim = cg * KH * KW, n, g;
  int32_t pointwise = KH == 1 && KW == 1 && SH == 1 && SW == 1 && PT == 0 && PL == 0 &&
                      OH == H && OW == W;
  npucc_gemm_bsrc bs;
  memset(&bs, 0, sizeof(bs));
  if (pointwise) { /* the image itself is the K x N matrix */
    bs.rs = H * W;
    bs.cs = 1;
  } else {
    bs.is_conv = 1;
    bs.in_h = H;
    bs.in_w = W;
    bs.k_h = KH;
    bs.k_w = KW;
    bs.stride_h = SH;
    bs.stride_w = SW;
    bs.dil_h = DH;
    bs.dil_w = DW;
    bs.pad_t = PT;
    bs.pad_l = PL;
    bs.out_w = OW;
  }
  for (n = 0; n < N; n++) {
    for (g = 0; g < group; g++) {
      bs.data = X + ((size_t)n * C + (size_t)g * cg) * H * W;
      npucc_sgemm_core_f32(mg, OH * OW, kdim, 1.0f, Wt + (size_t)g * mg * kdim, kdim, 1, &bs,
                           Y + ((size_t)n * M + (size_t)g * mg) * OH * OW, OH * OW, 0,
                           bias ? bias + (size_t)g * mg : NULL, act_min, act_max, scratch);
    }
  }
}

size_t npucc_conv_transpose2d_scratch_floats(int32_t C, int32_t H, int32_t W, int32_t M,
                                             int32_t KH, int32_t KW, int32_t group) {
  int32_t rows = M / group * KH * KW, cols = npucc_min_i32(H * W, NPUCC_CONVT_NC);
  return (size_t)rows * cols + npucc_sgemm_scratch_floats(rows, cols, C / group);
}

void npucc_conv_transpose2d_f32(const float *X, const float *Wt, const float *bias, float *Y,
                                float *scratch, int32_t N, int32_t C, int32_t H, int32_t W,
                                int32_t M, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT,
                                int32_t PL, int32_t group, float act_min, float act_max) {
  int32_t cg = C / group, mg = M / group, rows = mg * KH * KW, hw = H * W;
  int32_t chunk = npucc_min_i32(hw, NPUCC_CONVT_NC);
  float *col = scratch, *gemm_scratch = scratch + (size_t)rows * chunk;
  int32_t n, g, j0, r, j, m;
  npucc_gemm_bsrc bs;
  memset(&bs, 0, sizeof(bs));
  bs.rs = hw;
  bs.cs = 1;
  for (n = 0; n < N; n++) {
    for (g = 0; g < group; g++) {
      float *yg = Y + ((size_t)n * M + (size_t)g * mg) * OH * OW;
      for (m = 0; m < mg; m++) {
        float b = bias ? bias[g * mg + m] : 0.0f;
        float *plane = yg + (size_t)m * OH * OW;
        for (j = 0; j < OH * OW; j++)
          plane[j] = b;
      }
      for (j0 = 0; j0 < hw; j0 += chunk) {
        int32_t nc = npucc_min_i32(chunk, hw - j0);
        /* col[(m*KH+ky)*KW+kx][j] = sum_c W[c][m][ky][kx] * X[c][j0 + j] */
        bs.data = X + ((size_t)n * C + (size_t)g * cg) * hw + j0;
        npucc_sgemm_core_f32(rows, nc, cg, 1.0f, Wt + (size_t)g * cg * rows, 1, rows, &bs, col, nc,
                             0, NULL, -3.4028235e38f, 3.4028235e38f, gemm_scratch);
        for (r = 0; r < rows; r++) {
          int32_t kx = r % KW, ky = (r / KW) % KH;
          const float *src = col + (size_t)r * nc;
          float *plane = yg + (size_t)(r / (KW * KH)) * OH * OW;
          int32_t iy = (j0) / W, ix = j0 % W;
          for (j = 0; j < nc; j++) {
            int32_t oy = iy * SH - PT + ky * DH, ox = ix * SW - PL + kx * DW;
            if (oy >= 0 && oy < OH && ox >= 0 && ox < OW)
              plane[(size_t)oy * OW + ox] += src[j];
            if (++ix == W) {
              ix = 0;
              iy++;
            }
          }
        }
      }
      npucc_clamp_inplace_f32(yg, (size_t)mg * OH * OW, act_min, act_max);
    }
  }
}
