/* npucc_dwconv.c - float32 depthwise Conv over zero-padded stride phases (C99).
 *
 * For output (oy, ox) and tap (ky, kx) the padded input row is
 * oy*SH + ky*DH = SH*(oy + dy) + q with q = ky*DH % SH, dy = ky*DH / SH (and
 * likewise p, dx for columns). Phase plane (q, p) holds padded rows q, q+SH,
 * ... and columns p, p+SW, ..., Wq floats per row, so the tap reads phase
 * (q, p) at row oy + dy, column ox + dx: with the flat index j = oy*Wq + ox
 * every tap is the constant offset off(q, p) + dy*Wq + dx. The flat loop
 * computes all j < (OH-1)*Wq + OW (columns ox >= OW are thrown away), then
 * the valid columns are copied out and clamped. See npucc_dwconv.h. */
#include "npucc_dwconv.h"

/* Geometry of the phase planes of one channel. */
typedef struct {
  int32_t hq, wq;  /* rows and columns of one phase plane */
  int32_t planes;  /* SH * SW * hq * wq floats */
  int32_t flat;    /* outputs of the flat loop, rounded up to NPUCC_DW_CHUNK */
} npucc_dw_geom;

static npucc_dw_geom npucc_dw_geometry(int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                       int32_t SH, int32_t SW, int32_t DH, int32_t DW) {
  npucc_dw_geom g;
  int32_t hp = (OH - 1) * SH + (KH - 1) * DH + 1, wp = (OW - 1) * SW + (KW - 1) * DW + 1;
  int32_t len;
  g.hq = (hp + SH - 1) / SH;
  g.wq = (wp + SW - 1) / SW;
  g.planes = SH * SW * g.hq * g.wq;
  len = (OH - 1) * g.wq + OW;
  g.flat = (len + NPUCC_DW_CHUNK - 1) / NPUCC_DW_CHUNK * NPUCC_DW_CHUNK;
  return g;
}

size_t npucc_depthwise_conv2d_scratch_floats(int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                             int32_t SH, int32_t SW, int32_t DH, int32_t DW) {
  npucc_dw_geom g = npucc_dw_geometry(OH, OW, KH, KW, SH, SW, DH, DW);
  if (g.planes > NPUCC_DW_FLAT_MAX)
    return 0;
  return (size_t)g.planes + NPUCC_DW_CHUNK + (size_t)g.flat;
}

/* Fills the phase planes of one channel img [H][W]: plane (q, p) element
 * (r, c) = img[r*SH + q - PT][c*SW + p - PL]. Only elements inside the image
 * are written: the padding is the same for every channel, so the caller
 * zeroes the planes once per call. */
static void npucc_dw_fill(const float *img, float *NPUCC_RESTRICT dst, const npucc_dw_geom *g,
                          int32_t H, int32_t W, int32_t SH, int32_t SW, int32_t PT, int32_t PL) {
  int32_t q, p, r, c;
  for (q = 0; q < SH; q++)
    for (p = 0; p < SW; p++) {
      float *plane = dst + (size_t)(q * SW + p) * g->hq * g->wq;
      /* Columns c whose input x = c*SW + p - PL lies in [0, W): [c0, c1); rows likewise. */
      int32_t x0 = p - PL, y0 = q - PT;
      int32_t c0 = x0 >= 0 ? 0 : (-x0 + SW - 1) / SW;
      int32_t c1 = W - 1 - x0 < 0 ? 0 : (W - 1 - x0) / SW + 1;
      int32_t r0 = y0 >= 0 ? 0 : (-y0 + SH - 1) / SH;
      int32_t r1 = H - 1 - y0 < 0 ? 0 : (H - 1 - y0) / SH + 1;
      c1 = npucc_min_i32(c1, g->wq);
      r1 = npucc_min_i32(r1, g->hq);
      for (r = r0; r < r1; r++) {
        float *NPUCC_RESTRICT row = plane + (size_t)r * g->wq;
        const float *NPUCC_RESTRICT src = img + (size_t)(r * SH + y0) * W + x0;
        if (SW == 1 && c1 - c0 >= 16) {
          memcpy(row + c0, src + c0, sizeof(float) * (size_t)(c1 - c0));
        } else if (SW == 1) {
          for (c = c0; c < c1; c++)
            row[c] = src[c];
        } else {
          for (c = c0; c < c1; c++)
            row[c] = src[(size_t)c * SW];
        }
      }
    }
}

/* out[j] = (init ? b : out[j]) + sum over taps t < nt of w[t] * src[off[t] + j], for
 * j < flat (a multiple of NPUCC_DW_CHUNK). Sixteen named accumulators, so that
 * gcc's SLP vectorizer keeps them in vector registers at -O2. */
NPUCC_HOT
static void npucc_dw_taps(const float *NPUCC_RESTRICT src, const int32_t *off, const float *w,
                          int32_t nt, float b, int init, float *NPUCC_RESTRICT out,
                          int32_t flat) {
  int32_t j, t;
  for (j = 0; j < flat; j += NPUCC_DW_CHUNK) {
    float *NPUCC_RESTRICT o = out + j;
    float a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15;
    if (init) {
      a0 = b; a1 = b; a2 = b; a3 = b; a4 = b; a5 = b; a6 = b; a7 = b;
      a8 = b; a9 = b; a10 = b; a11 = b; a12 = b; a13 = b; a14 = b; a15 = b;
    } else {
      a0 = o[0]; a1 = o[1]; a2 = o[2]; a3 = o[3]; a4 = o[4]; a5 = o[5]; a6 = o[6]; a7 = o[7];
      a8 = o[8]; a9 = o[9]; a10 = o[10]; a11 = o[11];
      a12 = o[12]; a13 = o[13]; a14 = o[14]; a15 = o[15];
    }
    for (t = 0; t < nt; t++) {
      const float *NPUCC_RESTRICT s = src + off[t] + j;
      float wt = w[t];
      a0 += wt * s[0]; a1 += wt * s[1]; a2 += wt * s[2]; a3 += wt * s[3];
      a4 += wt * s[4]; a5 += wt * s[5]; a6 += wt * s[6]; a7 += wt * s[7];
      a8 += wt * s[8]; a9 += wt * s[9]; a10 += wt * s[10]; a11 += wt * s[11];
      a12 += wt * s[12]; a13 += wt * s[13]; a14 += wt * s[14]; a15 += wt * s[15];
    }
    o[0] = a0; o[1] = a1; o[2] = a2; o[3] = a3; o[4] = a4; o[5] = a5; o[6] = a6; o[7] = a7;
    o[8] = a8; o[9] = a9; o[10] = a10; o[11] = a11;
    o[12] = a12; o[13] = a13; o[14] = a14; o[15] = a15;
  }
}

/* Copies the valid columns of the flat result into the output plane, clamped. */
static void npucc_dw_store(const float *NPUCC_RESTRICT flat, int32_t wq, float *NPUCC_RESTRICT y,
                           int32_t OH, int32_t OW, float lo, float hi) {
  int32_t oy, ox;
  int clamp = lo > -3.0e38f || hi < 3.0e38f;
  if (!clamp && wq == OW) {
    memcpy(y, flat, sizeof(float) * (size_t)OH * OW);
    return;
  }
  for (oy = 0; oy < OH; oy++) {
    const float *NPUCC_RESTRICT s = flat + (size_t)oy * wq;
    float *NPUCC_RESTRICT d = y + (size_t)oy * OW;
    if (clamp) {
      for (ox = 0; ox < OW; ox++) {
        float v = s[ox];
        v = v < lo ? lo : v;
        d[ox] = v > hi ? hi : v;
      }
    } else {
      memcpy(d, s, sizeof(float) * (size_t)OW);
    }
  }
}


/* ---- Row kernel for large planes (no scratch) ---------------------------- */

/* Output positions o in [0, out) whose input o*stride + off lies in [0, in): [*lo, *hi). */
static void npucc_dw_valid_range(int32_t off, int32_t stride, int32_t in, int32_t out,
                                   int32_t *lo, int32_t *hi) {
  int32_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int32_t b = in - 1 - off < 0 ? 0 : (in - 1 - off) / stride + 1;
  b = npucc_min_i32(b, out);
  *lo = npucc_min_i32(a, b);
  *hi = b;
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
NPUCC_HOT
static void npucc_dw_rows(const float *img, const float *wk, float b, float *out, int32_t H,
                           int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t SH,
                           int32_t SW, int32_t DH, int32_t DW, int32_t PT, int32_t PL) {
  int32_t oy, ox, ky, kx, oxa, oxb;
  npucc_dw_valid_range(-PL, SW, W - (KW - 1) * DW, OW, &oxa, &oxb);
  for (oy = 0; oy < OH; oy++) {
    float *NPUCC_RESTRICT yrow = out + (size_t)oy * OW;
    int32_t by = oy * SH - PT, ky0, ky1;
    npucc_dw_valid_range(by, DH, H, KH, &ky0, &ky1);
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

/* ---- Phase-plane kernel ---------------------------------------------------- */

/* Plane offsets of taps [t0, t0 + nt): tap (ky, kx) reads phase
 * (ky*DH % SH, kx*DW % SW) at row ky*DH / SH, column kx*DW / SW. */
static void npucc_dw_offsets(int32_t *off, int32_t t0, int32_t nt, const npucc_dw_geom *g,
                             int32_t KW, int32_t SH, int32_t SW, int32_t DH, int32_t DW) {
  int32_t t;
  for (t = 0; t < nt; t++) {
    int32_t ky = (t0 + t) / KW, kx = (t0 + t) % KW;
    int32_t q = ky * DH % SH, p = kx * DW % SW;
    off[t] = (q * SW + p) * g->hq * g->wq + ky * DH / SH * g->wq + kx * DW / SW;
  }
}

void npucc_depthwise_conv2d_f32(const float *X, const float *Wt, const float *bias, float *Y,
                                float *scratch, int32_t N, int32_t C, int32_t H, int32_t W,
                                int32_t M, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                int32_t SH, int32_t SW, int32_t DH, int32_t DW, int32_t PT,
                                int32_t PL, float act_min, float act_max) {
  npucc_dw_geom g = npucc_dw_geometry(OH, OW, KH, KW, SH, SW, DH, DW);
  float *planes = scratch, *flat; /* scratch is null (unused) with large planes */
  int32_t off[NPUCC_DW_TAPS];
  int32_t mult = M / C, taps = KH * KW, n, c, k, t0;
  if (g.planes > NPUCC_DW_FLAT_MAX) { /* large planes: the row kernel, in place */
    for (n = 0; n < N; n++)
      for (k = 0; k < M; k++) {
        float *plane = Y + ((size_t)n * M + k) * OH * OW;
        npucc_dw_rows(X + ((size_t)n * C + (size_t)(k / mult)) * H * W, Wt + (size_t)k * taps,
                      bias ? bias[k] : 0.0f, plane, H, W, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL);
        npucc_clamp_inplace_f32(plane, (size_t)OH * OW, act_min, act_max);
      }
    return;
  }
  flat = scratch + (size_t)g.planes + NPUCC_DW_CHUNK;
  /* Padding and the slack read (never used) by the last chunk stay zero. */
  memset(planes, 0, sizeof(float) * ((size_t)g.planes + NPUCC_DW_CHUNK));
  for (n = 0; n < N; n++)
    for (c = 0; c < C; c++) {
      npucc_dw_fill(X + ((size_t)n * C + c) * H * W, planes, &g, H, W, SH, SW, PT, PL);
      for (k = 0; k < mult; k++) {
        int32_t m = c * mult + k;
        const float *wk = Wt + (size_t)m * taps;
        for (t0 = 0; t0 < taps; t0 += NPUCC_DW_TAPS) {
          int32_t nt = npucc_min_i32(NPUCC_DW_TAPS, taps - t0);
          if (taps > NPUCC_DW_TAPS || (n == 0 && c == 0 && k == 0)) /* one pass: once */
            npucc_dw_offsets(off, t0, nt, &g, KW, SH, SW, DH, DW);
          npucc_dw_taps(planes, off, wk + t0, nt, bias ? bias[m] : 0.0f, t0 == 0, flat, g.flat);
        }
        npucc_dw_store(flat, g.wq, Y + ((size_t)n * M + m) * OH * OW, OH, OW, act_min, act_max);
      }
    }
}
