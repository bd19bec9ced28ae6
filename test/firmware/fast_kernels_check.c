/* fast_kernels_check.c - Bare-metal check that the fast int8 kernels (npucc_conv_s8_fast.c,
 * npucc_gemm_s8_fast.c, npucc_fc_s8_fast.c, npucc_eltwise_s8_fast.c, npucc_rq32_i8) give the reference kernels' bytes on the target
 * itself: with the Arm DSP (SXTB16/SMLAD) path on Cortex-M4, with -DNPUCC_PORTABLE_ONLY,
 * and on RV32. Random shapes and data from a fixed xorshift seed; the folded bias and the
 * requantization words are computed here as the compiler does. Prints PASS or FAIL.
 * Built and run under QEMU by test/e2e/firmware_test.sh. Test-only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "npucc_conv_s8.h"
#include "npucc_conv_s8_fast.h"
#include "npucc_eltwise_s8.h"
#include "npucc_eltwise_s8_fast.h"
#include "npucc_fc_s8_fast.h"
#include "npucc_gemm_s8.h"
#include "npucc_gemm_s8_fast.h"
#include "npucc_quantize.h"
#include "npucc_requant.h"

static uint32_t st = 2463534242u;
static uint32_t rnd(void) {
  st ^= st << 13;
  st ^= st >> 17;
  st ^= st << 5;
  return st;
}
static int32_t ri(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)); }

static int8_t X[20000], Wt[20000], Y0[40000], Y1[40000];
/* The packed weights and the panel are 8-byte aligned, as in generated code. */
static union {
  int64_t align;
  int8_t v[20000];
} wpack;
static union {
  int64_t align;
  int16_t v[1024];
} pan;
#define Wp (wpack.v)
#define panel (pan.v)
static int32_t bias[64], bf[64], mult[64], shift[64], rq[256], scratch[4096];

static void channel(int32_t m, int32_t rounding) {
  mult[m] = (int32_t)((1u << 30) + (rnd() % (1u << 30)));
  if (rounding == NPUCC_RQ_FP32)
    mult[m] &= ~127;
  shift[m] = ri(-1, 14);
  npucc_rq32_prep(mult[m], shift[m], rounding, rq + 4 * m);
}

/* The chmap of npucc_conv2d_s8_fast for the M x K weights Wt, as the compiler builds it
 * (lib/lower/cpu/QuantFast.cpp): NULL if no channel's weights are all zero, else the
 * computed channels' weights, folded biases and words compacted into Wl, bfl and rql. */
static int8_t Wl[20000];
static int32_t chmap[1 + 3 * 64], bfl[64], rql[256];
static const int32_t *constant_channels(int32_t M, int32_t K, int32_t rounding, int32_t yzp,
                                        int32_t lo, int32_t hi) {
  int32_t m, k, L = 0, nd = 0, d[2 * 64];
  for (m = 0; m < M; m++) {
    for (k = 0; k < K && Wt[m * K + k] == 0; k++) {
    }
    if (k == K) {
      d[2 * nd] = m;
      d[2 * nd++ + 1] = npucc_rq32_i8(bf[m], rq + 4 * m, rounding, yzp, lo, hi);
      continue;
    }
    memcpy(Wl + L * K, Wt + m * K, (size_t)K);
    memcpy(rql + 4 * L, rq + 4 * m, 4 * sizeof(int32_t));
    bfl[L] = bf[m];
    chmap[1 + L++] = m;
  }
  if (nd == 0)
    return NULL;
  chmap[0] = L;
  memcpy(chmap + 1 + L, d, (size_t)nd * 2 * sizeof(int32_t));
  return chmap;
}

static int conv_cases(void) {
  int t, bad = 0;
  for (t = 0; t < 600; t++) {
    int32_t rounding = t & 1, dw = t % 3 == 0, N = 1, C = ri(1, 9), H = ri(1, 12), W = ri(1, 12);
    int32_t KH = ri(1, 3), KW = ri(1, 3), SH = ri(1, 2), SW = ri(1, 2), DH = ri(1, 2), DW = ri(1, 2);
    int32_t PT = ri(0, 2), PL = ri(0, 2), PB = ri(0, 2), PR = ri(0, 2), M = dw ? C : ri(1, 9);
    int32_t G = dw ? C : 1, OH, OW, m, k, K, i, xzp = ri(-128, 127), yzp = ri(-128, 127);
    int32_t lo = -128, hi = 127, xe, we;
    if (t % 5 == 0) {
      KH = KW = 3;
      DH = DW = 1;
    }
    if (t % 7 == 0) {
      KH = KW = 1;
      PT = PL = PB = PR = 0;
      SH = SW = DH = DW = 1;
    }
    if (t % 11 == 0) { /* a taller and wider plane: the depthwise ring over many rows */
      H = ri(13, 30);
      W = ri(13, 30);
    }
    if ((t % 13 == 2 || t % 17 == 3) && !dw) { /* K = C*3*3 > 252: the SWAR dot's chunks */
      C = ri(30, 40);
      KH = KW = 3;
      H = ri(3, 8);
      W = ri(3, 8);
    }
    OH = (H + PT + PB - ((KH - 1) * DH + 1)) / SH + 1;
    OW = (W + PL + PR - ((KW - 1) * DW + 1)) / SW + 1;
    if (OH < 1 || OW < 1)
      continue;
    if (t % 4 == 1) {
      lo = ri(-128, 0);
      hi = ri(lo, 127);
    }
    K = (C / G) * KH * KW;
    xe = ri(0, 1) ? -128 : 127; /* t % 17 == 3: every input xe, every weight we: the */
    we = ri(0, 1) ? -128 : 127; /* largest sums, e.g. 2^14 per product */
    for (i = 0; i < N * C * H * W; i++)
      X[i] = (int8_t)(t % 17 == 3 ? xe : ri(-128, 127));
    for (i = 0; i < M * K; i++)
      Wt[i] = (int8_t)(t % 17 == 3 ? we : ri(-128, 127));
    if (!dw && t % 3 == 2) /* channels with all-zero weights: constant planes (chmap) */
      for (m = 0; m < M; m++)
        if ((m + t) % 3 == 0 || t % 9 == 8) /* t % 9 == 8: all of them */
          memset(Wt + m * K, 0, (size_t)K);
    for (m = 0; m < M; m++) {
      int32_t s = 0;
      bias[m] = ri(-100000, 100000);
      channel(m, rounding);
      for (k = 0; k < K; k++)
        s += Wt[m * K + k];
      bf[m] = bias[m] - xzp * s;
    }
    npucc_conv2d_s8(X, Wt, bias, Y0, scratch, N, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT,
                    PL, G, xzp, yzp, lo, hi, NULL, mult, shift, rounding);
    if (dw) {
      npucc_dwconv2d_s8_fast(X, Wt, bf, Y1, scratch, N, C, H, W, OH, OW, KH, KW, SH, SW, DH, DW,
                             PT, PL, xzp, yzp, lo, hi, rq, rounding);
    } else {
      const int32_t *map = constant_channels(M, K, rounding, yzp, lo, hi);
      /* what the compiler does at compile time */
      npucc_conv_s8_pack(map ? Wl : Wt, map ? map[0] : M, K, Wp);
      npucc_conv2d_s8_fast(X, Wp, map ? bfl : bf, Y1, panel, N, C, H, W, M, OH, OW, KH, KW, SH,
                           SW, DH, DW, PT, PL, xzp, yzp, lo, hi, map ? rql : rq, rounding, map);
    }
    for (i = 0; i < N * M * OH * OW; i++)
      if (Y0[i] != Y1[i]) {
        if (bad++ < 5)
          printf("conv case %d (depthwise %d) output %d: %d, reference %d\n", t, (int)dw, (int)i,
                 Y1[i], Y0[i]);
        break;
      }
  }
  return bad;
}

static int gemm_cases(void) {
  int t, bad = 0;
  for (t = 0; t < 600; t++) {
    int32_t rounding = t & 1, rows = ri(1, 5), N = ri(1, 13), K = ri(1, 70), tr = t % 2 == 0;
    int32_t per = t % 3 ? N : 1, i, j, k, azp = ri(-128, 127), yzp = ri(-128, 127);
    for (i = 0; i < rows * K; i++)
      X[i] = (int8_t)ri(-128, 127);
    for (i = 0; i < N * K; i++)
      Wt[i] = (int8_t)ri(-128, 127);
    for (j = 0; j < per; j++)
      channel(j, rounding);
    for (j = 0; j < N; j++) {
      int32_t s = 0;
      bias[j] = ri(-100000, 100000);
      for (k = 0; k < K; k++)
        s += Wt[tr ? j * K + k : k * N + j];
      bf[j] = bias[j] - azp * s;
    }
    npucc_gemm_s8(X, Wt, bias, Y0, scratch, 1, rows, N, K, 0, tr ? 1 : N, tr ? K : 1, azp, yzp,
                  -128, 127, per, NULL, mult, shift, rounding);
    npucc_gemm_s8_fast(X, Wt, bf, Y1, rows, N, K, tr ? 1 : N, tr ? K : 1, yzp, -128, 127, per, rq,
                       rounding);
    for (i = 0; i < rows * N; i++)
      if (Y0[i] != Y1[i]) {
        if (bad++ < 5)
          printf("gemm case %d output %d: %d, reference %d\n", t, (int)i, Y1[i], Y0[i]);
        break;
      }
    /* the fully connected kernel (one row in models; any number here): [N][K] packed */
    for (j = 0; j < N; j++)
      for (k = 0; k < K; k++)
        Wl[j * K + k] = Wt[tr ? j * K + k : k * N + j];
    npucc_fc_s8_pack(Wl, N, K, Wp);
    npucc_fc_s8_fast(X, Wp, bf, Y1, rows, N, K, yzp, -128, 127, per, rq, rounding);
    for (i = 0; i < rows * N; i++)
      if (Y0[i] != Y1[i]) {
        if (bad++ < 5)
          printf("fc case %d output %d: %d, reference %d\n", t, (int)i, Y1[i], Y0[i]);
        break;
      }
  }
  return bad;
}

/* Add (tables as the compiler builds them), Mul and float QuantizeLinear near ties. */
static int elementwise_cases(void) {
  static float F[2048];
  int t, bad = 0, i;
  for (t = 0; t < 600; t++) {
    int32_t azp = ri(-128, 127), bzp = ri(-128, 127), ozp = ri(-128, 127), lo = -128, hi = 127;
    int32_t am = (int32_t)((1u << 30) + rnd() % (1u << 30));
    int32_t bm = (int32_t)((1u << 30) + rnd() % (1u << 30));
    int32_t om = (int32_t)((1u << 30) + rnd() % (1u << 30));
    int32_t ash = ri(0, 3), bsh = ri(0, 3), osh = ri(0, 31), ta[256], tb[256], rqw[4];
    int32_t shape[2], as[2], bs[2], n;
    float s = ldexpf(1.0f + (float)ri(0, 1000) / 1000.0f, -ri(1, 10));
    shape[0] = ri(1, 7);
    shape[1] = ri(1, 40);
    n = shape[0] * shape[1];
    as[0] = shape[1];
    as[1] = 1;
    bs[0] = (t & 1) ? shape[1] : 0;
    bs[1] = (t & 2) ? 1 : 0;
    if (t % 4 == 1) {
      lo = ri(-128, 0);
      hi = ri(lo, 127);
    }
    for (i = 0; i < n; i++) {
      X[i] = (int8_t)ri(-128, 127);
      Wt[i] = (int8_t)ri(-128, 127);
    }
    for (i = 0; i < 256; i++) {
      ta[i] = npucc_mul_qmult((i - 128 - azp) * (1 << 20), am, ash);
      tb[i] = npucc_mul_qmult((i - 128 - bzp) * (1 << 20), bm, bsh);
    }
    npucc_add_s8(X, Wt, Y0, azp, bzp, 20, am, ash, bm, bsh, om, osh, ozp, lo, hi, 2, shape, as, bs);
    npucc_add_s8_fast(X, Wt, Y1, ta, tb, om, osh, ozp, lo, hi, 2, shape, as, bs);
    if (memcmp(Y0, Y1, (size_t)n) && bad++ < 5)
      printf("add case %d\n", t);
    osh = ri(-2, 14);
    npucc_rq32_prep(om, osh, NPUCC_RQ_EXACT, rqw);
    npucc_mul_s8(X, Wt, Y0, azp, bzp, om, osh, ozp, lo, hi, 2, shape, as, bs);
    npucc_mul_s8_fast(X, Wt, Y1, azp, bzp, rqw, ozp, lo, hi, 2, shape, as, bs);
    if (memcmp(Y0, Y1, (size_t)n) && bad++ < 5)
      printf("mul case %d\n", t);
    for (i = 0; i < n; i++) {
      float half = ((float)ri(-600, 600) + 0.5f) * s;
      int k = ri(0, 4);
      F[i] = k == 0 ? half : (k == 1 ? nextafterf(half, 0.0f) : (float)ri(-100000, 100000) * s / 997.0f);
      if (k == 2)
        F[i] = (float)ri(-3, 3) * 1e30f;
    }
    F[0] = NAN;
    npucc_quantize_f32_s8(F, Y0, 1, 1, n, &s, &ozp);
    npucc_quantize_f32_s8_fast(F, Y1, n, &s, ozp);
    if (memcmp(Y0, Y1, (size_t)n) && bad++ < 5)
      printf("quantize case %d\n", t);
  }
  return bad;
}

int main(void) {
  int bad = conv_cases() + gemm_cases() + elementwise_cases();
#if defined(__ARM_FEATURE_DSP) && !defined(NPUCC_PORTABLE_ONLY)
  const char *path = "dsp";
#else
  const char *path = "portable";
#endif
  printf("fast kernels (%s path): %d mismatching cases\n%s\n", path, bad, bad ? "FAIL" : "PASS");
  return bad != 0;
}
