/* sgemm_bench.c - Single-thread GFLOP/s of the npucc float32 SGEMM and conv kernels.
 *
 * Build (from the repo root), e.g.:
 *   cc -std=c99 -O2 -Iruntime/kernels bench/kernels/sgemm_bench.c runtime/kernels/npucc_gemm.c \
 *      runtime/kernels/npucc_conv.c runtime/kernels/npucc_dwconv.c -lm -o sgemm_bench
 * Host-only tool (uses clock_gettime and printf, unlike the kernels). Times are process CPU
 * time (CLOCK_PROCESS_CPUTIME_ID), so a busy machine distorts them less than wall time. */
#define _POSIX_C_SOURCE 199309L
#include "npucc_conv.h"
#include "npucc_dwconv.h"
#include "npucc_gemm.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *rand_buf(size_t n) {
  float *p = (float *)malloc(n * sizeof(float));
  size_t i;
  for (i = 0; i < n; i++)
    p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  return p;
}

/* Runs fn repeatedly for at least ~0.5 s and returns the best GFLOP/s. */
#define BENCH(label, flops, stmt)                                                                  \
  do {                                                                                             \
    double best = 1e30, total = 0.0;                                                               \
    int reps = 0;                                                                                  \
    while (total < 0.5 || reps < 3) {                                                              \
      double t0 = now_s();                                                                         \
      stmt;                                                                                        \
      t0 = now_s() - t0;                                                                           \
      total += t0;                                                                                 \
      reps++;                                                                                      \
      if (t0 < best)                                                                               \
        best = t0;                                                                                 \
    }                                                                                              \
    printf("%-44s %8.3f ms  %6.2f GFLOP/s\n", label, best * 1e3, (flops) / best * 1e-9);          \
  } while (0)

static void bench_gemm(int M, int N, int K) {
  float *A = rand_buf((size_t)M * K), *B = rand_buf((size_t)K * N), *Y = rand_buf((size_t)M * N);
  float *s = rand_buf(npucc_sgemm_scratch_floats(M, N, K) + 1);
  char label[64];
  snprintf(label, sizeof label, "sgemm %dx%dx%d", M, N, K);
  BENCH(label, 2.0 * M * N * K,
        npucc_gemm_f32(A, B, NULL, Y, s, M, N, K, 0, 0, 1.0f, 0.0f, 0, -FLT_MAX, FLT_MAX));
  free(A); free(B); free(Y); free(s);
}

static void bench_conv(int C, int H, int W, int M, int K, int S, int group) {
  int OH = (H + 2 * (K / 2) - K) / S + 1, OW = (W + 2 * (K / 2) - K) / S + 1;
  float *X = rand_buf((size_t)C * H * W), *Wt = rand_buf((size_t)M * (C / group) * K * K);
  float *bias = rand_buf((size_t)M), *Y = rand_buf((size_t)M * OH * OW);
  size_t sc = npucc_conv2d_scratch_floats(C, M, OH, OW, K, K, group);
  size_t sd = npucc_depthwise_conv2d_scratch_floats(OH, OW, K, K, S, S, 1, 1);
  float *s = rand_buf((sc > sd ? sc : sd) + 1);
  double flops = 2.0 * M * OH * OW * (C / group) * K * K;
  char label[96];
  if (C / group == 1) {
    snprintf(label, sizeof label, "depthwise 1x%dx%dx%d k%d s%d", C, H, W, K, S);
    BENCH(label, flops,
          npucc_depthwise_conv2d_f32(X, Wt, bias, Y, s, 1, C, H, W, M, OH, OW, K, K, S, S, 1, 1,
                                     K / 2, K / 2, 0.0f, 6.0f));
  } else {
    snprintf(label, sizeof label, "conv 1x%dx%dx%d -> %d k%d s%d g%d", C, H, W, M, K, S, group);
    BENCH(label, flops,
          npucc_conv2d_f32(X, Wt, bias, Y, s, 1, C, H, W, M, OH, OW, K, K, S, S, 1, 1, K / 2,
                           K / 2, group, 0.0f, 6.0f));
  }
  free(X); free(Wt); free(bias); free(Y); free(s);
}

int main(void) {
  bench_gemm(256, 256, 256);
  bench_gemm(512, 512, 512);
  bench_gemm(64, 3136, 576);
  bench_gemm(1, 1000, 1280);
  bench_gemm(1000, 1, 1280);
  bench_conv(32, 48, 48, 64, 3, 1, 1);
  bench_conv(8, 14, 14, 16, 5, 1, 1);
  bench_conv(3, 224, 224, 32, 3, 2, 1);
  bench_conv(64, 56, 56, 128, 1, 1, 1);
  bench_conv(128, 28, 28, 128, 3, 1, 1);
  bench_conv(32, 112, 112, 32, 3, 1, 32);
  bench_conv(144, 56, 56, 144, 3, 2, 144);
  bench_conv(256, 7, 7, 256, 3, 1, 256);
  /* Shapes of the float models furthest from ONNX Runtime (docs/benchmarks.md). */
  bench_conv(32, 25, 5, 32, 1, 1, 1);     /* ali_kws_f32 pointwise */
  bench_conv(32, 25, 5, 32, 3, 1, 32);    /* ali_kws_f32 depthwise */
  bench_conv(128, 6, 6, 128, 1, 1, 1);    /* mlpt_vww_f32 pointwise */
  bench_conv(128, 6, 6, 128, 3, 1, 128);  /* mlpt_vww_f32 depthwise */
  bench_conv(32, 24, 24, 32, 3, 2, 32);   /* mlpt_vww_f32 strided depthwise */
  bench_conv(24, 6, 6, 144, 1, 1, 1);     /* mobilenetv2 expand */
  bench_conv(144, 6, 6, 144, 3, 1, 144);  /* mobilenetv2 depthwise */
  bench_conv(112, 3, 3, 1280, 1, 1, 1);   /* mobilenetv2 last pointwise */
  return 0;
}
