/* npucc_conv.c - float32 Conv (SGEMM over an implicit im2col), direct depthwise Conv and
 * ConvTranspose (SGEMM then col2im scatter) kernels (C99). See npucc_conv.h. */
#include "npucc_conv.h"

/* Clamps n floats in place (skipped when the bounds are +-FLT_MAX). */
static void npucc_conv_clamp(float *y, size_t n, float lo, float hi) {
  size_t i;
  if (lo <= -3.0e38f && hi >= 3.0e38f)
    return;
  for (i = 0; i < n; i++) {
    float v = y[i];
    v = v < lo ? lo : v;
    y[i] = v > hi ? hi : v;
  }
}

/* Output positions o in [0, out) whose input o*stride + off lies in [0, in): [*lo, *hi). */
static void npucc_conv_valid_range(int32_t off, int32_t stride, int32_t in, int32_t out,
                                   int32_t *lo, int32_t *hi) {
  int32_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int32_t b = in - 1 - off < 0 ? 0 : (in - 1 - off) / stride + 1;
  b = npucc_min_i32(b, out);
  *lo = npucc_min_i32(a, b);
  *hi = b;
}

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

/* One output value of a depthwise plane with bounds checks (borders). */
static float npucc_dw_point(const float *img, const float *wk, float b, int32_t W, int32_t KW,
                            int32_t DW, int32_t by, int32_t ky0, int32_t ky1, int32_t DH,
                            int32_t bx) {
  float s = b;
  int32_t ky, kx;
  for (ky = ky0; ky < ky1; ky++) {
    const float *xr = img + (size_t)(by + ky * DH) * W;
    for (kx = 0; kx < KW; kx++) {
      int32_t ix = bx + kx * DW;
      if (ix >= 0 && ix < W)
        s += wk[ky * KW + kx] * xr[ix];
    }
  }
  return s;
}

/* Interior outputs [ox, oxb) of one row, 8 at a time, stride 1; returns
 * the first output not done. Eight named accumulators in their own loop
 * nest so that gcc's SLP vectorizer turns them into two vectors at -O2. */
static int32_t npucc_dw_run8_s1(const float *img, const float *wk, float b,
                                float *NPUCC_RESTRICT yrow, int32_t W, int32_t KW, int32_t DH,
                                int32_t DW, int32_t PL, int32_t by, int32_t ky0, int32_t ky1,
                                int32_t ox, int32_t oxb) {
  int32_t ky, kx;
  for (; ox + 8 <= oxb; ox += 8) {
    float a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    for (ky = ky0; ky < ky1; ky++) {
      const float *NPUCC_RESTRICT xr = img + (size_t)(by + ky * DH) * W + (ox - PL);
      const float *NPUCC_RESTRICT wr = wk + ky * KW;
      for (kx = 0; kx < KW; kx++) {
        float w = wr[kx];
        const float *NPUCC_RESTRICT xp = xr + kx * DW;
        a0 += w * xp[0]; a1 += w * xp[1]; a2 += w * xp[2]; a3 += w * xp[3];
        a4 += w * xp[4]; a5 += w * xp[5]; a6 += w * xp[6]; a7 += w * xp[7];
      }
    }
    yrow[ox + 0] = a0; yrow[ox + 1] = a1;
    yrow[ox + 2] = a2; yrow[ox + 3] = a3;
    yrow[ox + 4] = a4; yrow[ox + 5] = a5;
    yrow[ox + 6] = a6; yrow[ox + 7] = a7;
  }
  return ox;
}

/* Like npucc_dw_run8_s1 for any stride. */
static int32_t npucc_dw_run8(const float *img, const float *wk, float b,
                             float *NPUCC_RESTRICT yrow, int32_t W, int32_t KW, int32_t SW,
                             int32_t DH, int32_t DW, int32_t PL, int32_t by, int32_t ky0,
                             int32_t ky1, int32_t ox, int32_t oxb) {
  int32_t ky, kx;
  for (; ox + 8 <= oxb; ox += 8) {
    float a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;
    for (ky = ky0; ky < ky1; ky++) {
      const float *xr = img + (size_t)(by + ky * DH) * W + (ox * SW - PL);
      const float *wr = wk + ky * KW;
      for (kx = 0; kx < KW; kx++) {
        float w = wr[kx];
        const float *xp = xr + kx * DW;
        a0 += w * xp[0]; a1 += w * xp[SW]; a2 += w * xp[2 * SW]; a3 += w * xp[3 * SW];
        a4 += w * xp[4 * SW]; a5 += w * xp[5 * SW]; a6 += w * xp[6 * SW]; a7 += w * xp[7 * SW];
      }
    }
    yrow[ox + 0] = a0; yrow[ox + 1] = a1;
    yrow[ox + 2] = a2; yrow[ox + 3] = a3;
    yrow[ox + 4] = a4; yrow[ox + 5] = a5;
    yrow[ox + 6] = a6; yrow[ox + 7] = a7;
  }
  return ox;
}

/* One channel plane, unclamped. Interior columns (all taps inside the row)
 * are done 8, then 4 outputs at a time with named accumulators, then one by
 * one without bounds checks; border columns take the checked path. */
static void npucc_dw_plane(const float *img, const float *wk, float b, float *out, int32_t H,
                           int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH,
                           int32_t SW, int32_t DH, int32_t DW, int32_t PT, int32_t PL) {
  int32_t oy, ox, ky, kx, oxa, oxb;
  npucc_conv_valid_range(-PL, SW, W - (KW - 1) * DW, OW, &oxa, &oxb);
  for (oy = 0; oy < OH; oy++) {
    float *NPUCC_RESTRICT yrow = out + (size_t)oy * OW;
    int32_t by = oy * SH - PT, ky0, ky1;
    npucc_conv_valid_range(by, DH, H, KH, &ky0, &ky1);
    for (ox = 0; ox < oxa; ox++)
      yrow[ox] = npucc_dw_point(img, wk, b, W, KW, DW, by, ky0, ky1, DH, ox * SW - PL);
    if (SW == 1)
      ox = npucc_dw_run8_s1(img, wk, b, yrow, W, KW, DH, DW, PL, by, ky0, ky1, ox, oxb);
    else
      ox = npucc_dw_run8(img, wk, b, yrow, W, KW, SW, DH, DW, PL, by, ky0, ky1, ox, oxb);
    for (; ox + 4 <= oxb; ox += 4) {
      float a0 = b, a1 = b, a2 = b, a3 = b;
      for (ky = ky0; ky < ky1; ky++) {
        const float *xr = img + (size_t)(by + ky * DH) * W + (ox * SW - PL);
        const float *wr = wk + ky * KW;
        for (kx = 0; kx < KW; kx++) {
          float w = wr[kx];
          const float *xp = xr + kx * DW;
          a0 += w * xp[0]; a1 += w * xp[SW]; a2 += w * xp[2 * SW]; a3 += w * xp[3 * SW];
        }
      }
      yrow[ox + 0] = a0; yrow[ox + 1] = a1; yrow[ox + 2] = a2; yrow[ox + 3] = a3;
    }
    for (; ox < oxb; ox++) { /* interior: no bounds checks */
      float a0 = b;
      for (ky = ky0; ky < ky1; ky++) {
        const float *xr = img + (size_t)(by + ky * DH) * W + (ox * SW - PL);
        const float *wr = wk + ky * KW;
        for (kx = 0; kx < KW; kx++)
          a0 += wr[kx] * xr[kx * DW];
      }
      yrow[ox] = a0;
    }
    for (; ox < OW; ox++)
      yrow[ox] = npucc_dw_point(img, wk, b, W, KW, DW, by, ky0, ky1, DH, ox * SW - PL);
  }
}

void npucc_depthwise_conv2d_f32(const float *X, const float *Wt, const float *bias, float *Y,
                                int32_t N, int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH,
                                int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                                int32_t DH, int32_t DW, int32_t PT, int32_t PL, float act_min,
                                float act_max) {
  int32_t mult = M / C, n, m;
  for (n = 0; n < N; n++)
    for (m = 0; m < M; m++) {
      float *plane = Y + ((size_t)n * M + m) * OH * OW;
      npucc_dw_plane(X + ((size_t)n * C + (size_t)(m / mult)) * H * W, Wt + (size_t)m * KH * KW,
                     bias ? bias[m] : 0.0f, plane, H, W, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL);
      npucc_conv_clamp(plane, (size_t)OH * OW, act_min, act_max);
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
      npucc_conv_clamp(yg, (size_t)mg * OH * OW, act_min, act_max);
    }
  }
}
