/* npucc_common.h - Small helpers shared by all npucc CPU kernels (C99).
 *
 * Header-only: include guards, fixed-width integer types, a `restrict`
 * macro that also works when a kernel .c file is compiled as C++ (unit
 * tests), and min/max/clamp helpers. No allocation, no I/O. */
#ifndef NPUCC_COMMON_H
#define NPUCC_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* C99 `restrict`; C++ compilers spell it __restrict. */
#if defined(__cplusplus)
#define NPUCC_RESTRICT __restrict
#else
#define NPUCC_RESTRICT restrict
#endif

/* gcc stops vectorizing a restrict loop once it is inlined into a caller that
 * dispatches on aliasing, so such loop bodies are kept out of line. */
#if defined(__GNUC__)
#define NPUCC_NOINLINE __attribute__((noinline))
#else
#define NPUCC_NOINLINE
#endif
/* A helper written once but meant to be specialised at each call site (e.g. with its
 * clamp bounds as constants), which gcc's size heuristics would otherwise call. */
#if defined(__GNUC__)
#define NPUCC_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define NPUCC_ALWAYS_INLINE inline
#endif

/* Host builds on x86-64 GNU/Linux with GCC also compile the hottest inner
 * loops (NPUCC_HOT) for AVX2 and pick the variant at load time (GNU ifunc), so
 * that the portable C runs 8 floats wide where the CPU allows it. The C
 * semantics (operation order, no FMA contraction under -std=c99) are
 * unchanged, so results are identical. Define NPUCC_NO_MULTIVERSION to
 * disable; other targets (and sanitizer builds) never see it. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    __STDC_HOSTED__ == 1 && !defined(NPUCC_NO_MULTIVERSION) && !defined(__SANITIZE_ADDRESS__)
#define NPUCC_HOT __attribute__((target_clones("avx2", "default")))
#else
#define NPUCC_HOT
#endif

static inline int32_t npucc_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t npucc_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int64_t npucc_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t npucc_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline float npucc_minf(float a, float b) { return a < b ? a : b; }
static inline float npucc_maxf(float a, float b) { return a > b ? a : b; }

/* Clamps x to [lo, hi]. A NaN x is returned unchanged. */
static inline float npucc_clampf(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* Clamps n floats in place (a fused activation); nothing to do when the
 * bounds are +-FLT_MAX. */
static inline void npucc_clamp_inplace_f32(float *y, size_t n, float lo, float hi) {
  size_t i;
  if (lo <= -3.0e38f && hi >= 3.0e38f)
    return;
  for (i = 0; i < n; i++)
    y[i] = npucc_clampf(y[i], lo, hi);
}

/* An int32 saturated to int8's range: one SSAT where the core has it (ACLE __ssat; not
 * with NPUCC_PORTABLE_ONLY), else two compares. */
#if defined(__ARM_FEATURE_SAT) && !defined(NPUCC_PORTABLE_ONLY)
#include <arm_acle.h>
#define NPUCC_SAT8(v) __ssat((v), 8)
#else
#define NPUCC_SAT8(v) ((v) < -128 ? -128 : ((v) > 127 ? 127 : (v)))
#endif

#endif /* NPUCC_COMMON_H */
