/* npucc_dot_s8.h - int8 dot-product micro-kernels of the fast CPU kernels (C99, header-only).
 *
 * Register-blocked int32 accumulation of K-long int8 rows, the inner loops of
 * npucc_conv_s8_fast.c and npucc_gemm_s8_fast.c:
 *   npucc_dot_2x2: a00 += w0.x0, a01 += w0.x1, a10 += w1.x0, a11 += w1.x1
 *   npucc_dot_1x2: a0 += w.x0, a1 += w.x1 (and npucc_dot_2x2 with x1 == x0 for 2x1)
 *   npucc_dot_1x1: a += w.x
 * On cores with the Arm DSP extension (__ARM_FEATURE_DSP, e.g. Cortex-M4/M7/M33) four int8
 * pairs at a time go through SXTB16 + SMLAD (two 16x16 products added to the
 * accumulator); define NPUCC_PORTABLE_ONLY to use the portable C loop there too. Both
 * paths compute the same int32 sums (the products are exact and integer addition is
 * associative modulo 2^32), so results are bit-identical. */
#ifndef NPUCC_DOT_S8_H
#define NPUCC_DOT_S8_H

#include "npucc_common.h"

#if defined(__ARM_FEATURE_DSP) && !defined(NPUCC_PORTABLE_ONLY)
#include <arm_acle.h>
#define NPUCC_DOT_DSP 1

/* Four int8 from any address (LDR allows unaligned access on these cores). */
static inline int32_t npucc_ld4(const int8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}
/* Bytes 1 and 3 sign-extended to 16 bits: SXTB16 with its rotate operand (one instruction;
 * compilers do not fold a separate rotation into it). */
static inline int32_t npucc_sxtb16_odd(int32_t v) {
#if defined(__GNUC__)
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
#else
  uint32_t u = (uint32_t)v;
  return __sxtb16((int32_t)((u >> 8) | (u << 24)));
#endif
}
#endif

/* Arm cores with a 32x32->64 multiply-accumulate (SMLAL: the ARM instruction set, or
 * Thumb-2, i.e. Cortex-M3 and up, not M0/M0+/M23) without the DSP extension, or with
 * NPUCC_PORTABLE_ONLY: the convolution kernels multiply one int8 weight with two
 * activations at once, as x0 + x1 * 2^23 in one 32-bit operand, and split the 64-bit sum. */
#if !defined(NPUCC_DOT_DSP) &&                                                                  \
    (defined(__ARM_ARCH_ISA_ARM) || (defined(__ARM_ARCH_ISA_THUMB) && __ARM_ARCH_ISA_THUMB >= 2))
#define NPUCC_DOT_SWAR 1
#endif

static inline void npucc_dot_2x2(const int8_t *NPUCC_RESTRICT w0, const int8_t *NPUCC_RESTRICT w1,
                                 const int8_t *NPUCC_RESTRICT x0, const int8_t *NPUCC_RESTRICT x1,
                                 int32_t K, int32_t acc[4]) {
  int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3], k = 0;
#ifdef NPUCC_DOT_DSP
  for (; k + 4 <= K; k += 4) {
    int32_t wa = npucc_ld4(w0 + k), wb = npucc_ld4(w1 + k);
    int32_t xa = npucc_ld4(x0 + k), xb = npucc_ld4(x1 + k);
    int32_t wa0 = __sxtb16(wa), wa1 = npucc_sxtb16_odd(wa);
    int32_t wb0 = __sxtb16(wb), wb1 = npucc_sxtb16_odd(wb);
    int32_t xa0 = __sxtb16(xa), xa1 = npucc_sxtb16_odd(xa);
    int32_t xb0 = __sxtb16(xb), xb1 = npucc_sxtb16_odd(xb);
    a00 = __smlad(wa0, xa0, __smlad(wa1, xa1, a00));
    a01 = __smlad(wa0, xb0, __smlad(wa1, xb1, a01));
    a10 = __smlad(wb0, xa0, __smlad(wb1, xa1, a10));
    a11 = __smlad(wb0, xb0, __smlad(wb1, xb1, a11));
  }
#else
  for (; k + 2 <= K; k += 2) {
    int32_t wa = w0[k], wb = w1[k], xa = x0[k], xb = x1[k];
    int32_t wc = w0[k + 1], wd = w1[k + 1], xc = x0[k + 1], xd = x1[k + 1];
    a00 += wa * xa + wc * xc;
    a01 += wa * xb + wc * xd;
    a10 += wb * xa + wd * xc;
    a11 += wb * xb + wd * xd;
  }
#endif
  for (; k < K; k++) {
    int32_t wa = w0[k], wb = w1[k], xa = x0[k], xb = x1[k];
    a00 += wa * xa;
    a01 += wa * xb;
    a10 += wb * xa;
    a11 += wb * xb;
  }
  acc[0] = a00;
  acc[1] = a01;
  acc[2] = a10;
  acc[3] = a11;
}

static inline void npucc_dot_1x2(const int8_t *NPUCC_RESTRICT w, const int8_t *NPUCC_RESTRICT x0,
                                 const int8_t *NPUCC_RESTRICT x1, int32_t K, int32_t acc[2]) {
  int32_t a0 = acc[0], a1 = acc[1], k = 0;
#ifdef NPUCC_DOT_DSP
  for (; k + 4 <= K; k += 4) {
    int32_t wa = npucc_ld4(w + k), xa = npucc_ld4(x0 + k), xb = npucc_ld4(x1 + k);
    int32_t w0 = __sxtb16(wa), w1 = npucc_sxtb16_odd(wa);
    a0 = __smlad(w0, __sxtb16(xa), __smlad(w1, npucc_sxtb16_odd(xa), a0));
    a1 = __smlad(w0, __sxtb16(xb), __smlad(w1, npucc_sxtb16_odd(xb), a1));
  }
#endif
  for (; k < K; k++) {
    int32_t wv = w[k];
    a0 += wv * x0[k];
    a1 += wv * x1[k];
  }
  acc[0] = a0;
  acc[1] = a1;
}

static inline int32_t npucc_dot_1x1(const int8_t *NPUCC_RESTRICT w, const int8_t *NPUCC_RESTRICT x,
                                    int32_t K, int32_t a) {
  int32_t k = 0;
#ifdef NPUCC_DOT_DSP
  for (; k + 4 <= K; k += 4) {
    int32_t wa = npucc_ld4(w + k), xa = npucc_ld4(x + k);
    a = __smlad(__sxtb16(wa), __sxtb16(xa),
                __smlad(npucc_sxtb16_odd(wa), npucc_sxtb16_odd(xa), a));
  }
#else
  for (; k + 2 <= K; k += 2)
    a += w[k] * x[k] + w[k + 1] * x[k + 1];
#endif
  for (; k < K; k++)
    a += w[k] * x[k];
  return a;
}

#endif /* NPUCC_DOT_S8_H */
