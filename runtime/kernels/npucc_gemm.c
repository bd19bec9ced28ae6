/* npucc_gemm.c - Packed, cache-blocked float32 SGEMM and the Gemm/MatMul kernels (C99).
 *
 * Blocking follows the usual three-level scheme: B is packed KC x NC at a
 * time into NR-wide column panels, A is packed MC x KC at a time into
 * MR-high row panels (alpha folded in), and an MR x NR register tile is
 * accumulated over KC with fixed-length loops that compilers vectorize at
 * -O2 without -ffast-math. Bias, accumulation and the fused clamp are
 * applied when a tile is written back. Packing zero-pads partial panels so
 * the inner kernel never sees an edge. Row-major products with K <= KC (small
 * pointwise convolutions, MatMul/Gemm without transposes) skip packing and
 * run a 4 x 8 tile on A and B in place; matrix-vector products use dot/axpy loops. */
#include "npucc_gemm.h"

#define NPUCC_MR NPUCC_GEMM_MR
#define NPUCC_NR NPUCC_GEMM_NR

static int32_t npucc_gemm_round_up(int32_t x, int32_t m) { return (x + m - 1) / m * m; }

size_t npucc_sgemm_scratch_floats(int32_t M, int32_t N, int32_t K) {
  int32_t mc = npucc_min_i32(NPUCC_GEMM_MC, npucc_gemm_round_up(M, NPUCC_MR));
  int32_t nc = npucc_min_i32(NPUCC_GEMM_NC, npucc_gemm_round_up(N, NPUCC_NR));
  int32_t kc = npucc_min_i32(NPUCC_GEMM_KC, K);
  if (M <= 0 || N <= 0 || K <= 0)
    return 0;
  return (size_t)mc * (size_t)kc + (size_t)kc * (size_t)nc;
}

/* Packs rows [i0, i0+mc) x depth [k0, k0+kc) of alpha*A into MR-row panels:
 * panel p holds, for each k, MR consecutive values (rows past M are 0). */
static void npucc_gemm_pack_a(const float *A, int32_t rsa, int32_t csa, int32_t M, int32_t i0,
                              int32_t mc, int32_t k0, int32_t kc, float alpha,
                              float *NPUCC_RESTRICT ap) {
  int32_t p, r, kk;
  for (p = 0; p < mc; p += NPUCC_MR) {
    float *dst = ap + (size_t)p * kc;
    int32_t rows = npucc_min_i32(NPUCC_MR, M - (i0 + p));
    if (csa == 1) {
      for (r = 0; r < rows; r++) {
        const float *src = A + (size_t)(i0 + p + r) * rsa + k0;
        for (kk = 0; kk < kc; kk++)
          dst[kk * NPUCC_MR + r] = alpha * src[kk];
      }
    } else {
      for (kk = 0; kk < kc; kk++) {
        const float *src = A + (size_t)(k0 + kk) * csa + (size_t)(i0 + p) * rsa;
        for (r = 0; r < rows; r++)
          dst[kk * NPUCC_MR + r] = alpha * src[(size_t)r * rsa];
      }
    }
    for (r = rows; r < NPUCC_MR; r++)
      for (kk = 0; kk < kc; kk++)
        dst[kk * NPUCC_MR + r] = 0.0f;
  }
}

/* Packs depth [k0, k0+kc) x columns [j0, j0+nc) of a strided B into
 * NR-wide panels: panel q holds, for each k, NR consecutive values. */
static void npucc_gemm_pack_b_matrix(const npucc_gemm_bsrc *s, int32_t N, int32_t k0, int32_t kc,
                                     int32_t j0, int32_t nc, float *NPUCC_RESTRICT bp) {
  int32_t q, kk, l;
  for (q = 0; q < nc; q += NPUCC_NR) {
    float *dst = bp + (size_t)q * kc;
    int32_t cols = npucc_min_i32(NPUCC_NR, N - (j0 + q));
    if (s->cs == 1 && cols == NPUCC_NR) {
      for (kk = 0; kk < kc; kk++) {
        const float *src = s->data + (size_t)(k0 + kk) * s->rs + (j0 + q);
        for (l = 0; l < NPUCC_NR; l++)
          dst[kk * NPUCC_NR + l] = src[l];
      }
    } else if (s->cs == 1) {
      for (kk = 0; kk < kc; kk++) {
        const float *src = s->data + (size_t)(k0 + kk) * s->rs + (j0 + q);
        for (l = 0; l < cols; l++)
          dst[kk * NPUCC_NR + l] = src[l];
        for (; l < NPUCC_NR; l++)
          dst[kk * NPUCC_NR + l] = 0.0f;
      }
    } else {
      for (l = 0; l < cols; l++) {
        const float *src = s->data + (size_t)(j0 + q + l) * s->cs + (size_t)k0 * s->rs;
        for (kk = 0; kk < kc; kk++)
          dst[kk * NPUCC_NR + l] = src[(size_t)kk * s->rs];
      }
      for (; l < NPUCC_NR; l++)
        for (kk = 0; kk < kc; kk++)
          dst[kk * NPUCC_NR + l] = 0.0f;
    }
  }
}

/* Packs like npucc_gemm_pack_b_matrix, reading the implicit im2col matrix:
 * each im2col row segment is gathered into a contiguous row (zero runs,
 * contiguous or strided copies), then split into the NR-wide panels. */
static void npucc_gemm_pack_b_conv(const npucc_gemm_bsrc *s, int32_t k0, int32_t kc, int32_t j0,
                                   int32_t nc, float *bp) {
  float row[NPUCC_GEMM_NC];
  int32_t kk, t, q, l;
  int32_t npanel = npucc_gemm_round_up(nc, NPUCC_NR);
  for (t = nc; t < npanel; t++)
    row[t] = 0.0f;
  for (kk = 0; kk < kc; kk++) {
    int32_t k = k0 + kk;
    int32_t kx = k % s->k_w, ky = (k / s->k_w) % s->k_h, ch = k / (s->k_w * s->k_h);
    const float *img = s->data + (size_t)ch * s->in_h * s->in_w;
    int32_t dy = ky * s->dil_h - s->pad_t, dx = kx * s->dil_w - s->pad_l;
    int32_t oy = j0 / s->out_w, ox = j0 % s->out_w, pos = 0;
    /* Output columns whose input x lies inside the row: [ox_lo, ox_hi). */
    int32_t ox_lo = dx >= 0 ? 0 : (-dx + s->stride_w - 1) / s->stride_w;
    int32_t ox_hi = s->in_w - 1 - dx < 0 ? 0 : (s->in_w - 1 - dx) / s->stride_w + 1;
    ox_hi = npucc_min_i32(ox_hi, s->out_w);
    ox_lo = npucc_min_i32(ox_lo, ox_hi);
    while (pos < nc) {
      int32_t run = npucc_min_i32(nc - pos, s->out_w - ox);
      int32_t end = ox + run;
      int32_t iy = oy * s->stride_h + dy;
      int32_t base = pos - ox; /* row[base + t] holds column t of this output row */
      if (iy < 0 || iy >= s->in_h) {
        memset(row + pos, 0, sizeof(float) * (size_t)run);
      } else {
        const float *src = img + (size_t)iy * s->in_w;
        int32_t a = npucc_max_i32(ox, npucc_min_i32(ox_lo, end));
        int32_t b = npucc_max_i32(a, npucc_min_i32(ox_hi, end));
        for (t = ox; t < a; t++)
          row[base + t] = 0.0f;
        if (s->stride_w == 1) {
          if (b > a)
            memcpy(row + (base + a), src + (a + dx), sizeof(float) * (size_t)(b - a));
        } else {
          for (t = a; t < b; t++)
            row[base + t] = src[t * s->stride_w + dx];
        }
        for (t = b; t < end; t++)
          row[base + t] = 0.0f;
      }
      pos += run;
      ox = 0;
      oy++;
    }
    for (q = 0; q < npanel; q += NPUCC_NR) {
      float *NPUCC_RESTRICT d = bp + (size_t)q * kc + (size_t)kk * NPUCC_NR;
      const float *NPUCC_RESTRICT r = row + q;
      for (l = 0; l < NPUCC_NR; l++)
        d[l] = r[l];
    }
  }
}

/* tile[MR][NR] = sum over k of ap[k][0..MR) (outer) bp[k][0..NR). The 64
 * accumulators are named scalars so that they live in registers: gcc's SLP
 * vectorizer packs each row into vectors at -O2 (loop-carried arrays stay
 * in memory at -O2). Clang does not, so it gets an equivalent array form. */
#if defined(__clang__)
NPUCC_HOT
static void npucc_gemm_micro(int32_t kc, const float *NPUCC_RESTRICT ap,
                             const float *NPUCC_RESTRICT bp, float *NPUCC_RESTRICT tile) {
  float c0[NPUCC_NR], c1[NPUCC_NR], c2[NPUCC_NR], c3[NPUCC_NR];
  float c4[NPUCC_NR], c5[NPUCC_NR], c6[NPUCC_NR], c7[NPUCC_NR];
  int32_t j, k;
  for (j = 0; j < NPUCC_NR; j++) {
    c0[j] = 0.0f; c1[j] = 0.0f; c2[j] = 0.0f; c3[j] = 0.0f;
    c4[j] = 0.0f; c5[j] = 0.0f; c6[j] = 0.0f; c7[j] = 0.0f;
  }
  for (k = 0; k < kc; k++) {
    const float *NPUCC_RESTRICT b = bp + (size_t)k * NPUCC_NR;
    const float *NPUCC_RESTRICT a = ap + (size_t)k * NPUCC_MR;
    float a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    float a4 = a[4], a5 = a[5], a6 = a[6], a7 = a[7];
    for (j = 0; j < NPUCC_NR; j++) {
      float bj = b[j];
      c0[j] += a0 * bj; c1[j] += a1 * bj; c2[j] += a2 * bj; c3[j] += a3 * bj;
      c4[j] += a4 * bj; c5[j] += a5 * bj; c6[j] += a6 * bj; c7[j] += a7 * bj;
    }
  }
  for (j = 0; j < NPUCC_NR; j++) {
    tile[0 * NPUCC_NR + j] = c0[j]; tile[1 * NPUCC_NR + j] = c1[j];
    tile[2 * NPUCC_NR + j] = c2[j]; tile[3 * NPUCC_NR + j] = c3[j];
    tile[4 * NPUCC_NR + j] = c4[j]; tile[5 * NPUCC_NR + j] = c5[j];
    tile[6 * NPUCC_NR + j] = c6[j]; tile[7 * NPUCC_NR + j] = c7[j];
  }
}
#else
#define NPUCC_GEMM_DECL(r)                                                                         \
  float c##r##0 = 0.0f, c##r##1 = 0.0f, c##r##2 = 0.0f, c##r##3 = 0.0f, c##r##4 = 0.0f,          \
        c##r##5 = 0.0f, c##r##6 = 0.0f, c##r##7 = 0.0f
#define NPUCC_GEMM_FMA(r)                                                                          \
  {                                                                                                \
    float ar = a[r];                                                                               \
    c##r##0 += ar * b0; c##r##1 += ar * b1; c##r##2 += ar * b2; c##r##3 += ar * b3;              \
    c##r##4 += ar * b4; c##r##5 += ar * b5; c##r##6 += ar * b6; c##r##7 += ar * b7;              \
  }
#define NPUCC_GEMM_OUT(r)                                                                          \
  {                                                                                                \
    float *t = tile + (r) * NPUCC_NR;                                                              \
    t[0] = c##r##0; t[1] = c##r##1; t[2] = c##r##2; t[3] = c##r##3;                              \
    t[4] = c##r##4; t[5] = c##r##5; t[6] = c##r##6; t[7] = c##r##7;                              \
  }
NPUCC_HOT
static void npucc_gemm_micro(int32_t kc, const float *NPUCC_RESTRICT ap,
                             const float *NPUCC_RESTRICT bp, float *NPUCC_RESTRICT tile) {
  int32_t k;
  NPUCC_GEMM_DECL(0); NPUCC_GEMM_DECL(1); NPUCC_GEMM_DECL(2); NPUCC_GEMM_DECL(3);
  NPUCC_GEMM_DECL(4); NPUCC_GEMM_DECL(5); NPUCC_GEMM_DECL(6); NPUCC_GEMM_DECL(7);
  for (k = 0; k < kc; k++) {
    const float *NPUCC_RESTRICT b = bp + (size_t)k * NPUCC_NR;
    const float *NPUCC_RESTRICT a = ap + (size_t)k * NPUCC_MR;
    float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3], b4 = b[4], b5 = b[5], b6 = b[6], b7 = b[7];
    NPUCC_GEMM_FMA(0) NPUCC_GEMM_FMA(1) NPUCC_GEMM_FMA(2) NPUCC_GEMM_FMA(3)
    NPUCC_GEMM_FMA(4) NPUCC_GEMM_FMA(5) NPUCC_GEMM_FMA(6) NPUCC_GEMM_FMA(7)
  }
  NPUCC_GEMM_OUT(0) NPUCC_GEMM_OUT(1) NPUCC_GEMM_OUT(2) NPUCC_GEMM_OUT(3)
  NPUCC_GEMM_OUT(4) NPUCC_GEMM_OUT(5) NPUCC_GEMM_OUT(6) NPUCC_GEMM_OUT(7)
}
#undef NPUCC_GEMM_DECL
#undef NPUCC_GEMM_FMA
#undef NPUCC_GEMM_OUT
#endif

/* Rows of the register tile of the unpacked path: 4 x 8 accumulators fill
 * 8 of the 16 SSE registers (an 8 x 8 tile spills at -O2 without AVX). */
#define NPUCC_GEMM_DR 4
/* Up to this many columns the packed path reads A in place (A would be
 * packed for only a few column panels: the packing costs as much as the use). */
#define NPUCC_GEMM_DIRECT_A_N 64

/* tile[DR][NR] = sum over k of arow[r][k] * B[k * rsb + j], A and B read
 * in place (no packing). Used for operands small enough to stay in cache,
 * where packing costs as much as the product itself. */
#if defined(__clang__)
NPUCC_HOT
static void npucc_gemm_micro_direct(int32_t K, const float *const *arow, const float *B,
                                    int32_t rsb, float *NPUCC_RESTRICT tile) {
  float c0[NPUCC_NR], c1[NPUCC_NR], c2[NPUCC_NR], c3[NPUCC_NR];
  const float *NPUCC_RESTRICT r0 = arow[0], *NPUCC_RESTRICT r1 = arow[1];
  const float *NPUCC_RESTRICT r2 = arow[2], *NPUCC_RESTRICT r3 = arow[3];
  int32_t j, k;
  for (j = 0; j < NPUCC_NR; j++) {
    c0[j] = 0.0f; c1[j] = 0.0f; c2[j] = 0.0f; c3[j] = 0.0f;
  }
  for (k = 0; k < K; k++) {
    const float *NPUCC_RESTRICT b = B + (size_t)k * rsb;
    float a0 = r0[k], a1 = r1[k], a2 = r2[k], a3 = r3[k];
    for (j = 0; j < NPUCC_NR; j++) {
      float bj = b[j];
      c0[j] += a0 * bj; c1[j] += a1 * bj; c2[j] += a2 * bj; c3[j] += a3 * bj;
    }
  }
  for (j = 0; j < NPUCC_NR; j++) {
    tile[0 * NPUCC_NR + j] = c0[j]; tile[1 * NPUCC_NR + j] = c1[j];
    tile[2 * NPUCC_NR + j] = c2[j]; tile[3 * NPUCC_NR + j] = c3[j];
  }
}
#else
#define NPUCC_GEMM_DECL(r)                                                                         \
  float c##r##0 = 0.0f, c##r##1 = 0.0f, c##r##2 = 0.0f, c##r##3 = 0.0f, c##r##4 = 0.0f,          \
        c##r##5 = 0.0f, c##r##6 = 0.0f, c##r##7 = 0.0f;                                           \
  const float *NPUCC_RESTRICT p##r = arow[r]
#define NPUCC_GEMM_FMA(r)                                                                          \
  {                                                                                                \
    float ar = p##r[k];                                                                            \
    c##r##0 += ar * b0; c##r##1 += ar * b1; c##r##2 += ar * b2; c##r##3 += ar * b3;              \
    c##r##4 += ar * b4; c##r##5 += ar * b5; c##r##6 += ar * b6; c##r##7 += ar * b7;              \
  }
#define NPUCC_GEMM_OUT(r)                                                                          \
  {                                                                                                \
    float *t = tile + (r) * NPUCC_NR;                                                              \
    t[0] = c##r##0; t[1] = c##r##1; t[2] = c##r##2; t[3] = c##r##3;                              \
    t[4] = c##r##4; t[5] = c##r##5; t[6] = c##r##6; t[7] = c##r##7;                              \
  }
NPUCC_HOT
static void npucc_gemm_micro_direct(int32_t K, const float *const *arow, const float *B,
                                    int32_t rsb, float *NPUCC_RESTRICT tile) {
  int32_t k;
  NPUCC_GEMM_DECL(0); NPUCC_GEMM_DECL(1); NPUCC_GEMM_DECL(2); NPUCC_GEMM_DECL(3);
  for (k = 0; k < K; k++) {
    const float *NPUCC_RESTRICT b = B + (size_t)k * rsb;
    float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3], b4 = b[4], b5 = b[5], b6 = b[6], b7 = b[7];
    NPUCC_GEMM_FMA(0) NPUCC_GEMM_FMA(1) NPUCC_GEMM_FMA(2) NPUCC_GEMM_FMA(3)
  }
  NPUCC_GEMM_OUT(0) NPUCC_GEMM_OUT(1) NPUCC_GEMM_OUT(2) NPUCC_GEMM_OUT(3)
}
#undef NPUCC_GEMM_DECL
#undef NPUCC_GEMM_FMA
#undef NPUCC_GEMM_OUT
#endif

/* C[mr x nr] = (load_c ? C : 0) + bias[i] + tile, clamped when `clamp`. */
static void npucc_gemm_store(const float *NPUCC_RESTRICT tile, float *NPUCC_RESTRICT C,
                             int32_t ldc, int32_t mr, int32_t nr, int32_t load_c,
                             const float *bias, int32_t clamp, float lo, float hi) {
  int32_t i, j;
  if (nr == NPUCC_NR) { /* full-width rows: fixed-length loops that vectorize */
    for (i = 0; i < mr; i++) {
      float *NPUCC_RESTRICT c = C + (size_t)i * ldc;
      const float *NPUCC_RESTRICT t = tile + i * NPUCC_NR;
      float b = bias ? bias[i] : 0.0f;
      float v[NPUCC_NR];
      for (j = 0; j < NPUCC_NR; j++)
        v[j] = t[j] + b;
      if (load_c)
        for (j = 0; j < NPUCC_NR; j++)
          v[j] += c[j];
      if (clamp)
        for (j = 0; j < NPUCC_NR; j++)
          v[j] = v[j] < lo ? lo : (v[j] > hi ? hi : v[j]);
      for (j = 0; j < NPUCC_NR; j++)
        c[j] = v[j];
    }
    return;
  }
  for (i = 0; i < mr; i++) {
    float *NPUCC_RESTRICT c = C + (size_t)i * ldc;
    const float *NPUCC_RESTRICT t = tile + i * NPUCC_NR;
    float b = bias ? bias[i] : 0.0f;
    if (load_c) {
      for (j = 0; j < nr; j++)
        c[j] = t[j] + b + c[j];
    } else {
      for (j = 0; j < nr; j++)
        c[j] = t[j] + b;
    }
    if (clamp)
      for (j = 0; j < nr; j++)
        c[j] = npucc_clampf(c[j], lo, hi);
  }
}

/* sum a[k] * b[k * bs] for k < n, with 8 independent partial sums. */
static float npucc_gemm_dot(int32_t n, const float *NPUCC_RESTRICT a,
                            const float *NPUCC_RESTRICT b, int32_t bs) {
  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, s = 0.0f;
  int32_t k = 0, t;
  if (bs == 1)
    for (; k + 8 <= n; k += 8)
      for (t = 0; t < 8; t++)
        acc[t] += a[k + t] * b[k + t];
  for (; k < n; k++)
    s += a[k] * b[(size_t)k * bs];
  return s + (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])));
}

/* Finishes one output value: alpha * sum, bias, accumulation, clamp. */
static float npucc_gemm_finish(float sum, float alpha, float bias, const float *c, int32_t clamp,
                               float lo, float hi) {
  float v = alpha * sum + bias + (c ? *c : 0.0f);
  return clamp ? npucc_clampf(v, lo, hi) : v;
}

/* Matrix-vector cases of the core (M == 1 or N == 1, B a plain matrix):
 * packing would cost as much as the product itself. Returns 0 when the
 * operands do not fit one of the handled layouts. */
static int npucc_gemm_vector_case(int32_t M, int32_t N, int32_t K, float alpha, const float *A,
                                  int32_t rsa, int32_t csa, const npucc_gemm_bsrc *B, float *C,
                                  int32_t ldc, int32_t accumulate, const float *row_bias,
                                  int32_t clamp, float lo, float hi) {
  int32_t i, j, k, t;
  if (B->is_conv)
    return 0;
  if (M == 1 && B->cs == 1) { /* row vector times row-major B: y += a[k] * B[k, :] */
    float *NPUCC_RESTRICT y = C;
    float b0 = row_bias ? row_bias[0] : 0.0f;
    if (!accumulate)
      memset(y, 0, sizeof(float) * (size_t)N);
    /* y += (alpha * a[k]) * B[k, :]; bias and clamp are applied after. */
    for (k = 0; k < K; k++) {
      const float *NPUCC_RESTRICT brow = B->data + (size_t)k * B->rs;
      float a = alpha * A[(size_t)k * csa];
      j = 0;
      for (; j + 8 <= N; j += 8)
        for (t = 0; t < 8; t++)
          y[j + t] += a * brow[j + t];
      for (; j < N; j++)
        y[j] += a * brow[j];
    }
    for (j = 0; j < N; j++)
      y[j] = npucc_gemm_finish(0.0f, alpha, b0, &y[j], clamp, lo, hi);
    return 1;
  }
  if (M == 1 && B->rs == 1 && csa == 1) { /* dot products with the rows of B^T */
    for (j = 0; j < N; j++)
      C[j] = npucc_gemm_finish(npucc_gemm_dot(K, A, B->data + (size_t)j * B->cs, 1), alpha,
                               row_bias ? row_bias[0] : 0.0f, accumulate ? &C[j] : NULL, clamp,
                               lo, hi);
    return 1;
  }
  if (N == 1 && csa == 1) { /* A rows times a column of B */
    for (i = 0; i < M; i++)
      C[(size_t)i * ldc] = npucc_gemm_finish(
          npucc_gemm_dot(K, A + (size_t)i * rsa, B->data, B->rs), alpha,
          row_bias ? row_bias[i] : 0.0f, accumulate ? &C[(size_t)i * ldc] : NULL, clamp, lo, hi);
    return 1;
  }
  return 0;
}

/* The unpacked path of the core for a row-major A and B with K <= NPUCC_GEMM_KC
 * (B's 8-column panel, K cache lines, then stays in L1 across the row tiles).
 * Rows past M re-read row M-1; a partial last column panel is copied,
 * zero-padded, into scratch (K x NR floats). alpha must be 1. */
static void npucc_gemm_direct(int32_t M, int32_t N, int32_t K, const float *A, int32_t rsa,
                              const npucc_gemm_bsrc *B, float *C, int32_t ldc,
                              int32_t accumulate, const float *row_bias, int32_t clamp,
                              float lo, float hi, float *scratch) {
  float tile[NPUCC_GEMM_DR * NPUCC_NR];
  const float *arow[NPUCC_GEMM_DR];
  int32_t i, j, k, r, l;
  for (j = 0; j < N; j += NPUCC_NR) {
    int32_t nr = npucc_min_i32(NPUCC_NR, N - j);
    const float *bp = B->data + j;
    int32_t rsb = B->rs;
    if (nr < NPUCC_NR) {
      for (k = 0; k < K; k++) {
        const float *src = B->data + (size_t)k * B->rs + j;
        for (l = 0; l < nr; l++)
          scratch[k * NPUCC_NR + l] = src[l];
        for (; l < NPUCC_NR; l++)
          scratch[k * NPUCC_NR + l] = 0.0f;
      }
      bp = scratch;
      rsb = NPUCC_NR;
    }
    for (i = 0; i < M; i += NPUCC_GEMM_DR) {
      int32_t mr = npucc_min_i32(NPUCC_GEMM_DR, M - i);
      for (r = 0; r < NPUCC_GEMM_DR; r++)
        arow[r] = A + (size_t)(i + npucc_min_i32(r, mr - 1)) * rsa;
      npucc_gemm_micro_direct(K, arow, bp, rsb, tile);
      npucc_gemm_store(tile, C + (size_t)i * ldc + j, ldc, mr, nr, accumulate,
                       row_bias ? row_bias + i : NULL, clamp, lo, hi);
    }
  }
}

void npucc_sgemm_core_f32(int32_t M, int32_t N, int32_t K, float alpha, const float *A,
                          int32_t rsa, int32_t csa, const npucc_gemm_bsrc *B, float *C,
                          int32_t ldc, int32_t accumulate, const float *row_bias, float act_min,
                          float act_max, float *scratch) {
  int32_t clamp = act_min > -3.0e38f || act_max < 3.0e38f;
  int32_t mc_max = npucc_min_i32(NPUCC_GEMM_MC, npucc_gemm_round_up(M, NPUCC_MR));
  int32_t kc_max = npucc_min_i32(NPUCC_GEMM_KC, K);
  float *ap = scratch, *bp = scratch + (size_t)mc_max * kc_max;
  float tile[NPUCC_MR * NPUCC_NR];
  const float *arow[NPUCC_GEMM_DR];
  int32_t direct_a = csa == 1 && alpha == 1.0f && N <= NPUCC_GEMM_DIRECT_A_N;
  int32_t jc, pc, ic, jr, ir;
  if (M <= 0 || N <= 0)
    return;
  if ((M == 1 || N == 1) && K > 0 &&
      npucc_gemm_vector_case(M, N, K, alpha, A, rsa, csa, B, C, ldc, accumulate, row_bias, clamp,
                             act_min, act_max))
    return;
  if (K > 0 && K <= NPUCC_GEMM_KC && alpha == 1.0f && csa == 1 && !B->is_conv && B->cs == 1) {
    npucc_gemm_direct(M, N, K, A, rsa, B, C, ldc, accumulate, row_bias, clamp, act_min, act_max,
                      scratch);
    return;
  }
  if (K <= 0) { /* empty sum: only bias, accumulation and clamp */
    memset(tile, 0, sizeof(tile));
    for (ic = 0; ic < M; ic += NPUCC_MR)
      for (jc = 0; jc < N; jc += NPUCC_NR)
        npucc_gemm_store(tile, C + (size_t)ic * ldc + jc, ldc, npucc_min_i32(NPUCC_MR, M - ic),
                         npucc_min_i32(NPUCC_NR, N - jc), accumulate,
                         row_bias ? row_bias + ic : NULL, clamp, act_min, act_max);
    return;
  }
  for (jc = 0; jc < N; jc += NPUCC_GEMM_NC) {
    int32_t nc = npucc_min_i32(NPUCC_GEMM_NC, N - jc);
    for (pc = 0; pc < K; pc += NPUCC_GEMM_KC) {
      int32_t kc = npucc_min_i32(NPUCC_GEMM_KC, K - pc);
      int32_t first = pc == 0, last = pc + kc >= K;
      if (B->is_conv)
        npucc_gemm_pack_b_conv(B, pc, kc, jc, nc, bp);
      else
        npucc_gemm_pack_b_matrix(B, N, pc, kc, jc, nc, bp);
      for (ic = 0; ic < M; ic += NPUCC_GEMM_MC) {
        int32_t mc = npucc_min_i32(NPUCC_GEMM_MC, M - ic);
        if (direct_a) { /* few columns: A is read about once, so read it in place */
          for (jr = 0; jr < nc; jr += NPUCC_NR) {
            int32_t nr = npucc_min_i32(NPUCC_NR, nc - jr);
            for (ir = 0; ir < mc; ir += NPUCC_GEMM_DR) {
              int32_t mr = npucc_min_i32(NPUCC_GEMM_DR, mc - ir), i = ic + ir, r;
              for (r = 0; r < NPUCC_GEMM_DR; r++)
                arow[r] = A + (size_t)(i + npucc_min_i32(r, mr - 1)) * rsa + pc;
              npucc_gemm_micro_direct(kc, arow, bp + (size_t)jr * kc, NPUCC_NR, tile);
              npucc_gemm_store(tile, C + (size_t)i * ldc + jc + jr, ldc, mr, nr,
                               accumulate || !first, first && row_bias ? row_bias + i : NULL,
                               last && clamp, act_min, act_max);
            }
          }
          continue;
        }
        npucc_gemm_pack_a(A, rsa, csa, M, ic, npucc_gemm_round_up(mc, NPUCC_MR), pc, kc, alpha,
                          ap);
        for (jr = 0; jr < nc; jr += NPUCC_NR) {
          int32_t nr = npucc_min_i32(NPUCC_NR, nc - jr);
          for (ir = 0; ir < mc; ir += NPUCC_MR) {
            int32_t mr = npucc_min_i32(NPUCC_MR, mc - ir);
            int32_t i = ic + ir;
            npucc_gemm_micro(kc, ap + (size_t)ir * kc, bp + (size_t)jr * kc, tile);
            npucc_gemm_store(tile, C + (size_t)i * ldc + jc + jr, ldc, mr, nr,
                             accumulate || !first, first && row_bias ? row_bias + i : NULL,
                             last && clamp, act_min, act_max);
          }
        }
      }
    }
  }
}

void npucc_gemm_f32(const float *A, const float *B, const float *C, float *Y, float *scratch,
                    int32_t M, int32_t N, int32_t K, int32_t trans_a, int32_t trans_b,
                    float alpha, float beta, int32_t c_mode, float act_min, float act_max) {
  npucc_gemm_bsrc bs;
  int32_t i, j, acc = 0;
  memset(&bs, 0, sizeof(bs));
  bs.data = B;
  bs.rs = trans_b ? 1 : N;
  bs.cs = trans_b ? K : 1;
  if (C && c_mode != 0 && beta != 0.0f) {
    for (i = 0; i < M; i++) {
      float *y = Y + (size_t)i * N;
      for (j = 0; j < N; j++) {
        float c = c_mode == 1 ? C[0]
                  : c_mode == 2 ? C[j]
                  : c_mode == 3 ? C[i]
                                : C[(size_t)i * N + j];
        y[j] = beta * c;
      }
    }
    acc = 1;
  }
  npucc_sgemm_core_f32(M, N, K, alpha, A, trans_a ? 1 : K, trans_a ? M : 1, &bs, Y, N, acc, NULL,
                       act_min, act_max, scratch);
}

void npucc_matmul_f32(const float *A, const float *B, float *Y, float *scratch, int32_t batch,
                      int32_t M, int32_t N, int32_t K, float act_min, float act_max,
                      const int32_t *a_off, const int32_t *b_off) {
  npucc_gemm_bsrc bs;
  int32_t b;
  memset(&bs, 0, sizeof(bs));
  bs.rs = N;
  bs.cs = 1;
  for (b = 0; b < batch; b++) {
    bs.data = B + b_off[b];
    npucc_sgemm_core_f32(M, N, K, 1.0f, A + a_off[b], K, 1, &bs, Y + (size_t)b * M * N, N, 0,
                         NULL, act_min, act_max, scratch);
  }
}
