/* npucc_conv.c - float32 Conv (indirect convolution: register tiles over pointers into the
 * image or into per-chunk windows of its kernel rows) and ConvTranspose (SGEMM then col2im
 * scatter) kernels (C99). See npucc_conv.h; depthwise Conv is in npucc_dwconv.c. */
#include "npucc_conv.h"

/* Rows (output channels) and columns (output pixels) of the register tile.
 * With SIMD (SSE2, AVX, NEON) 8 x 8: 8 AVX registers, 8 independent addition
 * chains. Without (Cortex-M, RV32), 4 x 4: 16 accumulators, 4 weights and 4
 * inputs fit the 32 single-precision registers of an FPv4/FPv5 or RV32F core.
 * -DNPUCC_CONV_SMALL_TILE=0/1 overrides the choice. Only the tile shape
 * differs: each output is the same sum in the same order. */
#ifndef NPUCC_CONV_SMALL_TILE
#if defined(__SSE2__) || defined(__AVX__) || defined(__ARM_NEON) || defined(__ARM_NEON__)
#define NPUCC_CONV_SMALL_TILE 0
#else
#define NPUCC_CONV_SMALL_TILE 1
#endif
#endif
#if NPUCC_CONV_SMALL_TILE
#define NPUCC_CONV_MR 4
#define NPUCC_CONV_NR 4
#else
#define NPUCC_CONV_MR 8
#define NPUCC_CONV_NR 8
#endif
/* Floats per im2col row in the scratch: the widest tile, whatever the build
 * (the compiler sizes the scratch without knowing it). */
#define NPUCC_CONV_SCRATCH_NR 8

/* tile[MR][NR] = sum over k < kc of arow[r][k] * brow[k][0..NR): A (the
 * weights) read in place, each im2col row segment through a pointer. The
 * accumulators are named scalars for gcc's SLP vectorizer (arrays for clang),
 * as in npucc_gemm.c; every sum runs over k in order from 0. */
#if NPUCC_CONV_SMALL_TILE
static void npucc_conv_micro(int32_t kc, const float *const *arow, const float *const *brow,
                             int32_t off, float *NPUCC_RESTRICT tile) {
  const float *NPUCC_RESTRICT p0 = arow[0], *NPUCC_RESTRICT p1 = arow[1];
  const float *NPUCC_RESTRICT p2 = arow[2], *NPUCC_RESTRICT p3 = arow[3];
  float c00 = 0.0f, c01 = 0.0f, c02 = 0.0f, c03 = 0.0f, c10 = 0.0f, c11 = 0.0f, c12 = 0.0f;
  float c13 = 0.0f, c20 = 0.0f, c21 = 0.0f, c22 = 0.0f, c23 = 0.0f, c30 = 0.0f, c31 = 0.0f;
  float c32 = 0.0f, c33 = 0.0f;
  int32_t k;
  for (k = 0; k < kc; k++) {
    const float *NPUCC_RESTRICT b = brow[k] + off;
    float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3], a;
    a = p0[k]; c00 += a * b0; c01 += a * b1; c02 += a * b2; c03 += a * b3;
    a = p1[k]; c10 += a * b0; c11 += a * b1; c12 += a * b2; c13 += a * b3;
    a = p2[k]; c20 += a * b0; c21 += a * b1; c22 += a * b2; c23 += a * b3;
    a = p3[k]; c30 += a * b0; c31 += a * b1; c32 += a * b2; c33 += a * b3;
  }
  tile[0] = c00; tile[1] = c01; tile[2] = c02; tile[3] = c03;
  tile[4] = c10; tile[5] = c11; tile[6] = c12; tile[7] = c13;
  tile[8] = c20; tile[9] = c21; tile[10] = c22; tile[11] = c23;
  tile[12] = c30; tile[13] = c31; tile[14] = c32; tile[15] = c33;
}
#elif defined(__clang__)
NPUCC_HOT
static void npucc_conv_micro(int32_t kc, const float *const *arow, const float *const *brow,
                             int32_t off, float *NPUCC_RESTRICT tile) {
  float c[NPUCC_CONV_MR][NPUCC_CONV_NR];
  int32_t i, j, k;
  for (i = 0; i < NPUCC_CONV_MR; i++)
    for (j = 0; j < NPUCC_CONV_NR; j++)
      c[i][j] = 0.0f;
  for (k = 0; k < kc; k++) {
    const float *NPUCC_RESTRICT b = brow[k] + off;
    for (i = 0; i < NPUCC_CONV_MR; i++) {
      float a = arow[i][k];
      for (j = 0; j < NPUCC_CONV_NR; j++)
        c[i][j] += a * b[j];
    }
  }
  for (i = 0; i < NPUCC_CONV_MR; i++)
    for (j = 0; j < NPUCC_CONV_NR; j++)
      tile[i * NPUCC_CONV_NR + j] = c[i][j];
}
/* The first 4 rows of npucc_conv_micro, for the last rows of a layer whose
 * output channels are not a multiple of 8 (or fewer than 5). */
NPUCC_HOT
static void npucc_conv_micro4(int32_t kc, const float *const *arow, const float *const *brow,
                              int32_t off, float *NPUCC_RESTRICT tile) {
  float c[4][NPUCC_CONV_NR];
  int32_t i, j, k;
  for (i = 0; i < 4; i++)
    for (j = 0; j < NPUCC_CONV_NR; j++)
      c[i][j] = 0.0f;
  for (k = 0; k < kc; k++) {
    const float *NPUCC_RESTRICT b = brow[k] + off;
    for (i = 0; i < 4; i++) {
      float a = arow[i][k];
      for (j = 0; j < NPUCC_CONV_NR; j++)
        c[i][j] += a * b[j];
    }
  }
  for (i = 0; i < 4; i++)
    for (j = 0; j < NPUCC_CONV_NR; j++)
      tile[i * NPUCC_CONV_NR + j] = c[i][j];
}
#else
#define NPUCC_CONV_DECL(r)                                                                         \
  float c##r##0 = 0.0f, c##r##1 = 0.0f, c##r##2 = 0.0f, c##r##3 = 0.0f, c##r##4 = 0.0f,          \
        c##r##5 = 0.0f, c##r##6 = 0.0f, c##r##7 = 0.0f;                                           \
  const float *NPUCC_RESTRICT p##r = arow[r]
#define NPUCC_CONV_FMA(r)                                                                          \
  {                                                                                                \
    float ar = p##r[k];                                                                            \
    c##r##0 += ar * b0; c##r##1 += ar * b1; c##r##2 += ar * b2; c##r##3 += ar * b3;              \
    c##r##4 += ar * b4; c##r##5 += ar * b5; c##r##6 += ar * b6; c##r##7 += ar * b7;              \
  }
#define NPUCC_CONV_OUT(r)                                                                          \
  {                                                                                                \
    float *t = tile + (r) * NPUCC_CONV_NR;                                                         \
    t[0] = c##r##0; t[1] = c##r##1; t[2] = c##r##2; t[3] = c##r##3;                              \
    t[4] = c##r##4; t[5] = c##r##5; t[6] = c##r##6; t[7] = c##r##7;                              \
  }
NPUCC_HOT
static void npucc_conv_micro(int32_t kc, const float *const *arow, const float *const *brow,
                             int32_t off, float *NPUCC_RESTRICT tile) {
  int32_t k;
  NPUCC_CONV_DECL(0); NPUCC_CONV_DECL(1); NPUCC_CONV_DECL(2); NPUCC_CONV_DECL(3);
  NPUCC_CONV_DECL(4); NPUCC_CONV_DECL(5); NPUCC_CONV_DECL(6); NPUCC_CONV_DECL(7);
  for (k = 0; k < kc; k++) {
    const float *NPUCC_RESTRICT b = brow[k] + off;
    float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3], b4 = b[4], b5 = b[5], b6 = b[6], b7 = b[7];
    NPUCC_CONV_FMA(0) NPUCC_CONV_FMA(1) NPUCC_CONV_FMA(2) NPUCC_CONV_FMA(3)
    NPUCC_CONV_FMA(4) NPUCC_CONV_FMA(5) NPUCC_CONV_FMA(6) NPUCC_CONV_FMA(7)
  }
  NPUCC_CONV_OUT(0) NPUCC_CONV_OUT(1) NPUCC_CONV_OUT(2) NPUCC_CONV_OUT(3)
  NPUCC_CONV_OUT(4) NPUCC_CONV_OUT(5) NPUCC_CONV_OUT(6) NPUCC_CONV_OUT(7)
}
/* The first 4 rows of npucc_conv_micro, for the last rows of a layer whose
 * output channels are not a multiple of 8 (or fewer than 5). */
NPUCC_HOT
static void npucc_conv_micro4(int32_t kc, const float *const *arow, const float *const *brow,
                              int32_t off, float *NPUCC_RESTRICT tile) {
  int32_t k;
  NPUCC_CONV_DECL(0); NPUCC_CONV_DECL(1); NPUCC_CONV_DECL(2); NPUCC_CONV_DECL(3);
  for (k = 0; k < kc; k++) {
    const float *NPUCC_RESTRICT b = brow[k] + off;
    float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3], b4 = b[4], b5 = b[5], b6 = b[6], b7 = b[7];
    NPUCC_CONV_FMA(0) NPUCC_CONV_FMA(1) NPUCC_CONV_FMA(2) NPUCC_CONV_FMA(3)
  }
  NPUCC_CONV_OUT(0) NPUCC_CONV_OUT(1) NPUCC_CONV_OUT(2) NPUCC_CONV_OUT(3)
}
#undef NPUCC_CONV_DECL
#undef NPUCC_CONV_FMA
#undef NPUCC_CONV_OUT
#endif

/* Y[i][j] = tile + (first depth block ? bias : Y), clamped after the last
 * block, for mr rows (ldy apart) and nr columns: the same operations in the
 * same order as the SGEMM's write-back. */
static void npucc_conv_store(const float *tile, float *Y, int32_t ldy, int32_t mr, int32_t nr,
                             const float *bias, int32_t first, int32_t clamp, float lo, float hi) {
  int32_t i, j;
  for (i = 0; i < mr; i++) {
    float *NPUCC_RESTRICT y = Y + (size_t)i * ldy;
    const float *NPUCC_RESTRICT t = tile + i * NPUCC_CONV_NR;
    float b = first && bias ? bias[i] : 0.0f, v[NPUCC_CONV_NR];
    for (j = 0; j < NPUCC_CONV_NR; j++) /* fixed-length loops: they vectorize */
      v[j] = t[j] + b;
    if (!first && nr == NPUCC_CONV_NR) {
      for (j = 0; j < NPUCC_CONV_NR; j++)
        v[j] += y[j];
    } else if (!first) {
      for (j = 0; j < nr; j++)
        v[j] += y[j];
    }
    if (clamp)
      for (j = 0; j < NPUCC_CONV_NR; j++)
        v[j] = v[j] < lo ? lo : (v[j] > hi ? hi : v[j]);
    if (nr == NPUCC_CONV_NR) {
      for (j = 0; j < NPUCC_CONV_NR; j++)
        y[j] = v[j];
    } else {
      for (j = 0; j < nr; j++)
        y[j] = v[j];
    }
  }
}

size_t npucc_conv2d_scratch_floats(int32_t C, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                                   int32_t KW, int32_t group) {
  int32_t kdim = C / group * KH * KW;
  (void)M;
  (void)OH;
  (void)OW;
  return (size_t)(npucc_min_i32(kdim, NPUCC_CONV_KC) + 1) * NPUCC_CONV_SCRATCH_NR;
}

/* Points rows[k] (k < kc, im2col rows k0.. of one group's image of img_len
 * floats) at the NR input values under output pixels (oy, ox0 .. ox0+nr): in
 * the image itself when they are contiguous and inside it, else gathered,
 * zero-padded, into gath[k * NR ..]; `zero` is NR zeros for rows outside. */
static void npucc_conv_rows(const float *img, size_t img_len, int32_t H, int32_t W,
                            int32_t KH, int32_t KW, int32_t SW, int32_t DH, int32_t DW,
                            int32_t iy0, int32_t ix0, int32_t nr, int32_t k0, int32_t kc,
                            float *gath, const float *zero, const float **rows) {
  int32_t kx = 0, ky = 0, ch = 0, k, t;
  if (k0 > 0) { /* no divisions for the first (often the only) depth block */
    kx = k0 % KW;
    ky = (k0 / KW) % KH;
    ch = k0 / (KW * KH);
  }
  for (k = 0; k < kc; k++) {
    int32_t iy = iy0 + ky * DH, ix = ix0 + kx * DW;
    if (iy < 0 || iy >= H) {
      rows[k] = zero;
    } else {
      const float *src = img + ((size_t)ch * H + iy) * W;
      /* In place when the nr values are inside the row; the tile's columns
       * past nr (discarded) may read on into the next rows of the image. */
      if (SW == 1 && ix >= 0 && ix + nr <= W &&
          ((size_t)ch * H + iy) * W + ix + NPUCC_CONV_NR <= img_len) {
        rows[k] = src + ix;
      } else {
        /* Columns [lo, hi) of the tile read inside the row, the others are 0. */
        float *g = gath + (size_t)k * NPUCC_CONV_NR;
        int32_t lo, hi;
        if (SW == 1) {
          lo = ix < 0 ? -ix : 0;
          hi = W - ix;
        } else if (ix >= 0 && ix + (nr - 1) * SW < W) { /* inside: no divisions */
          lo = 0;
          hi = nr;
        } else {
          lo = ix < 0 ? (-ix + SW - 1) / SW : 0;
          hi = ix < W ? (W - 1 - ix) / SW + 1 : 0;
        }
        lo = npucc_min_i32(lo, nr);
        hi = npucc_max_i32(lo, npucc_min_i32(hi, nr));
        for (t = 0; t < lo; t++)
          g[t] = 0.0f;
        for (; t < hi; t++)
          g[t] = src[ix + t * SW];
        for (; t < NPUCC_CONV_NR; t++)
          g[t] = 0.0f;
        rows[k] = g;
      }
    }
    if (++kx == KW) {
      kx = 0;
      if (++ky == KH) {
        ky = 0;
        ch++;
      }
    }
  }
}

/* Output pixels per chunk of the window path for depth block [k0, k0+kc), a
 * multiple of the tile width, or 0 when that path does not apply: it needs a
 * stride, or a kernel wider than 1 and output rows wider than one tile
 * (otherwise reading the rows in place costs less than copying them), and
 * one window per kernel row of the block (SW phases of cw + (KW-1)*DW/SW
 * floats) must fit the scratch. */
static int32_t npucc_conv_chunk(int32_t kdim, int32_t k0, int32_t kc, int32_t KW, int32_t SW,
                                int32_t DW, int32_t OW) {
  int32_t npairs = (k0 + kc - 1) / KW - k0 / KW + 1;
  int32_t room = (npucc_min_i32(kdim, NPUCC_CONV_KC) + 1) * NPUCC_CONV_SCRATCH_NR;
  int32_t cw = room / (npairs * SW) - (KW - 1) * DW / SW;
  if (SW == 1 && (KW == 1 || OW <= NPUCC_CONV_NR))
    return 0;
  cw = npucc_min_i32(cw, OW + NPUCC_CONV_NR - 1) / NPUCC_CONV_NR * NPUCC_CONV_NR;
  return cw > 0 ? cw : 0;
}

/* Fills the windows of kernel rows p0 .. p0+np (p = channel * KH + ky) for
 * output row iy0 (top input row) and chunk columns starting at input column
 * x0: window j, phase ph holds win[(j * SW + ph) * L + t] = image[ch][iy0 +
 * ky*DH][x0 + t*SW + ph], zero outside the image. Im2col row (p, kx) of
 * chunk pixel t is then phase (kx*DW) % SW at (kx*DW) / SW + t. */
static void npucc_conv_windows(const float *img, int32_t H, int32_t W, int32_t KH, int32_t SW,
                               int32_t DH, int32_t iy0, int32_t x0, int32_t p0, int32_t np,
                               int32_t L, float *win) {
  int32_t ph, j, t, u, ch0 = p0 / KH, ky0 = p0 % KH;
  size_t step = (size_t)SW * L;
  if (SW == 2 && x0 >= 0 && x0 + 2 * L <= W) {
    /* Stride 2 inside the image: both phases in one pass over the row. */
    int32_t ch = ch0, ky = ky0;
    for (j = 0; j < np; j++, win += step) {
      int32_t iy = iy0 + ky * DH;
      if (iy < 0 || iy >= H) {
        for (t = 0; t < 2 * L; t++)
          win[t] = 0.0f;
      } else {
        const float *NPUCC_RESTRICT src = img + ((size_t)ch * H + iy) * W + x0;
        float *NPUCC_RESTRICT d0 = win, *NPUCC_RESTRICT d1 = win + L;
        for (t = 0; t + 4 <= L; t += 4) /* fixed-length: SLP-vectorized shuffles */
          for (u = 0; u < 4; u++) {
            d0[t + u] = src[2 * (t + u)];
            d1[t + u] = src[2 * (t + u) + 1];
          }
        for (; t < L; t++) {
          d0[t] = src[2 * t];
          d1[t] = src[2 * t + 1];
        }
      }
      if (++ky == KH) {
        ky = 0;
        ch++;
      }
    }
    return;
  }
  for (ph = 0; ph < SW; ph++) {
    int32_t xs = x0 + ph, lo, hi, ch = ch0, ky = ky0; /* value t is row[xs + t * SW] */
    float *d = win + (size_t)ph * L;
    if (xs >= 0 && xs + (L - 1) * SW < W) { /* inside: no divisions */
      lo = 0;
      hi = L;
    } else {
      lo = npucc_min_i32(xs >= 0 ? 0 : (-xs + SW - 1) / SW, L);
      hi = npucc_max_i32(lo, npucc_min_i32(xs < W ? (W - 1 - xs) / SW + 1 : 0, L));
    }
    for (j = 0; j < np; j++, d += step) {
      int32_t iy = iy0 + ky * DH;
      if (iy < 0 || iy >= H) {
        for (t = 0; t < L; t++)
          d[t] = 0.0f;
      } else {
        const float *src = img + ((size_t)ch * H + iy) * W + xs;
        for (t = 0; t < lo; t++)
          d[t] = 0.0f;
        if (SW == 1) {
          memcpy(d + lo, src + lo, sizeof(float) * (size_t)(hi - lo));
        } else {
          for (t = lo; t < hi; t++)
            d[t] = src[t * SW];
        }
        for (t = hi; t < L; t++)
          d[t] = 0.0f;
      }
      if (++ky == KH) {
        ky = 0;
        ch++;
      }
    }
  }
}

/* Gathers im2col rows k0 .. k0+kc of the nr output pixels p0 .. p0+nr of the
 * flattened output plane (several output rows when they are narrow) into
 * g[k * NR + t], zero outside the image and past nr. */
static void npucc_conv_gather_flat(const float *img, int32_t H, int32_t W, int32_t KH, int32_t KW,
                                   int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT,
                                   int32_t PL, int32_t OW, int32_t p0, int32_t nr, int32_t k0,
                                   int32_t kc, float *g) {
  int32_t kx = k0 % KW, ky = k0 / KW % KH, ch = k0 / (KW * KH), k, t, u;
  int32_t oy0 = p0 / OW, ox0 = p0 % OW;
  for (k = 0; k < kc; k++, g += NPUCC_CONV_NR) {
    const float *plane = img + (size_t)ch * H * W;
    int32_t oy = oy0, ox = ox0;
    for (t = 0; t < nr; ox = 0, oy++) { /* one output row's run of the tile */
      int32_t run = npucc_min_i32(nr - t, OW - ox), iy = oy * SH - PT + ky * DH;
      int32_t ix = ox * SW - PL + kx * DW;
      if (iy < 0 || iy >= H) {
        for (u = 0; u < run; u++)
          g[t + u] = 0.0f;
      } else {
        const float *src = plane + (size_t)iy * W;
        for (u = 0; u < run; u++, ix += SW)
          g[t + u] = (uint32_t)ix < (uint32_t)W ? src[ix] : 0.0f;
      }
      t += run;
    }
    for (; t < NPUCC_CONV_NR; t++)
      g[t] = 0.0f;
    if (++kx == KW) {
      kx = 0;
      if (++ky == KH) {
        ky = 0;
        ch++;
      }
    }
  }
}

/* Runs the mg output channels of one tile (nr pixels at Y, rows ldy apart)
 * over depth block k0 / kc whose im2col rows are rows[k] + off. */
static void npucc_conv_tile(const float *wg, int32_t kdim, int32_t mg, int32_t k0, int32_t kc,
                            const float *const *rows, int32_t off, float *Y, int32_t ldy,
                            int32_t nr, const float *bias, int32_t first, int32_t clamp, float lo,
                            float hi) {
  float tile[NPUCC_CONV_MR * NPUCC_CONV_NR];
  const float *arow[NPUCC_CONV_MR];
  int32_t i, r;
  for (i = 0; i < mg; i += NPUCC_CONV_MR) {
    int32_t mr = npucc_min_i32(NPUCC_CONV_MR, mg - i);
    for (r = 0; r < NPUCC_CONV_MR; r++)
      arow[r] = wg + (size_t)(i + npucc_min_i32(r, mr - 1)) * kdim + k0;
#if !NPUCC_CONV_SMALL_TILE
    if (mr <= 4)
      npucc_conv_micro4(kc, arow, rows, off, tile);
    else
#endif
      npucc_conv_micro(kc, arow, rows, off, tile);
    npucc_conv_store(tile, Y + (size_t)i * ldy, ldy, mr, nr, bias ? bias + i : NULL, first, clamp,
                     lo, hi);
  }
}

void npucc_conv2d_f32(const float *X, const float *Wt, const float *bias, float *Y,
                      float *scratch, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                      int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH, int32_t SW,
                      int32_t DH, int32_t DW, int32_t PT, int32_t PL, int32_t group,
                      float act_min, float act_max) {
  int32_t cg = C / group, mg = M / group, kdim = cg * KH * KW, n, g, oy, ox, k0, k, r;
  int32_t clamp = act_min > -3.0e38f || act_max < 3.0e38f;
  /* A pointwise convolution is one over a single row of OH*OW pixels. */
  int32_t pointwise = KH == 1 && KW == 1 && SH == 1 && SW == 1 && PT == 0 && PL == 0 &&
                      OH == H && OW == W;
  int32_t h = pointwise ? 1 : H, w = pointwise ? H * W : W;
  int32_t oh = pointwise ? 1 : OH, ow = pointwise ? OH * OW : OW;
  float *zero = scratch, *gath = scratch + NPUCC_CONV_NR;
  const float *rows[NPUCC_CONV_KC];
  if (pointwise && (kdim <= NPUCC_GEMM_KC || mg == 1 || OH * OW == 1)) {
    /* The image is the K x N matrix: the SGEMM's unpacked path reads it in
     * place (scratch: K x 8 floats for a partial last panel), its
     * matrix-vector cases need none. */
    npucc_gemm_bsrc bs;
    memset(&bs, 0, sizeof(bs));
    bs.rs = H * W;
    bs.cs = 1;
    for (n = 0; n < N; n++) {
      for (g = 0; g < group; g++) {
        bs.data = X + ((size_t)n * C + (size_t)g * cg) * H * W;
        npucc_sgemm_core_f32(mg, OH * OW, kdim, 1.0f, Wt + (size_t)g * mg * kdim, kdim, 1, &bs,
                             Y + ((size_t)n * M + (size_t)g * mg) * OH * OW, OH * OW, 0,
                             bias ? bias + (size_t)g * mg : NULL, act_min, act_max, scratch);
      }
    }
    return;
  }
  for (n = 0; n < N; n++) {
    for (g = 0; g < group; g++) {
      const float *img = X + ((size_t)n * C + (size_t)g * cg) * H * W;
      const float *wg = Wt + (size_t)g * mg * kdim;
      const float *bg = bias ? bias + (size_t)g * mg : NULL;
      float *yg = Y + ((size_t)n * M + (size_t)g * mg) * OH * OW;
      /* Depth blocks outermost: each output still adds them in k order. */
      for (k0 = 0; k0 < kdim; k0 += NPUCC_CONV_KC) {
        int32_t kc = npucc_min_i32(NPUCC_CONV_KC, kdim - k0);
        int32_t first = k0 == 0, last = k0 + kc >= kdim && clamp;
        int32_t cw = pointwise ? 0 : npucc_conv_chunk(kdim, k0, kc, KW, SW, DW, OW);
        if (SW > 1 && OW < NPUCC_CONV_NR && OH > 1) {
          /* Strided output rows narrower than a tile (every row is gathered
           * anyway): tiles of consecutive pixels of the flattened plane,
           * across output rows, gathered per tile. */
          int32_t p, np = OH * OW;
          for (k = 0; k < kc; k++)
            rows[k] = gath + (size_t)k * NPUCC_CONV_NR;
          for (p = 0; p < np; p += NPUCC_CONV_NR) {
            int32_t nr = npucc_min_i32(NPUCC_CONV_NR, np - p);
            npucc_conv_gather_flat(img, H, W, KH, KW, SH, SW, DH, DW, PT, PL, OW, p, nr, k0, kc,
                                   gath);
            npucc_conv_tile(wg, kdim, mg, k0, kc, rows, 0, yg + p, OH * OW, nr, bg, first, last,
                            act_min, act_max);
          }
          continue;
        }
        if (cw > 0) {
          /* Window path: the kernel rows of the block are copied once per
           * chunk of cw pixels of an output row (zero-padded, split into
           * stride phases) and every tile of the chunk reads them in place. */
          int32_t p0 = k0 / KW, np = (k0 + kc - 1) / KW - p0 + 1;
          int32_t L = cw + (KW - 1) * DW / SW, kx = k0 % KW, p = 0, cx, t;
          for (k = 0; k < kc; k++) {
            int32_t d = kx * DW;
            rows[k] = scratch + ((size_t)p * SW + d % SW) * L + d / SW;
            if (++kx == KW) {
              kx = 0;
              p++;
            }
          }
          for (oy = 0; oy < OH; oy++) {
            for (cx = 0; cx < OW; cx += cw) {
              int32_t cn = npucc_min_i32(cw, OW - cx);
              npucc_conv_windows(img, H, W, KH, SW, DH, oy * SH - PT, cx * SW - PL, p0, np, L,
                                 scratch);
              for (t = 0; t < cn; t += NPUCC_CONV_NR)
                npucc_conv_tile(wg, kdim, mg, k0, kc, rows, t, yg + (size_t)oy * OW + cx + t,
                                OH * OW, npucc_min_i32(NPUCC_CONV_NR, cn - t), bg, first, last,
                                act_min, act_max);
            }
          }
          continue;
        }
        for (r = 0; r < NPUCC_CONV_NR; r++)
          zero[r] = 0.0f;
        for (oy = 0; oy < oh; oy++) {
          for (ox = 0; ox < ow; ox += NPUCC_CONV_NR) {
            int32_t nr = npucc_min_i32(NPUCC_CONV_NR, ow - ox);
            npucc_conv_rows(img, (size_t)cg * H * W, h, w, KH, KW, SW, DH, DW, oy * SH - PT,
                            ox * SW - PL, nr, k0, kc, gath, zero, rows);
            npucc_conv_tile(wg, kdim, mg, k0, kc, rows, 0, yg + (size_t)oy * ow + ox, OH * OW, nr,
                            bg, first, last, act_min, act_max);
          }
        }
      }
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
