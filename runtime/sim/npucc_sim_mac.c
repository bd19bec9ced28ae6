/* npucc_sim_mac.c - Semantics and checks of the MAC-array commands: conv,
 * depthwise (with a channel multiplier) and matmul (int8 x int8 -> int32 +
 * bias, requantized per channel or per tensor via npucc_requant.h; uint8
 * data and uint8 weights with the correction_terms stage), with the fused
 * max or select pool stage, each within its operation's limits from the
 * description (requant modes and tables, accumulator width, pool windows;
 * the checks shared with the other commands are in npucc_sim_ops.c).
 * Memory layouts (all little-endian):
 *   activations HWC int8; conv weights OHWI int8; depthwise weights
 *   [k_h][k_w][in_ch * depth_mult] int8 (output channel c * depth_mult + j
 *   reads input channel c); matmul A [m][k], W [n][k]; bias int32[out_ch];
 *   per-channel requant table at rq_addr: int32 mult[out_ch] followed by
 *   int32 shift[out_ch].
 * Each output element goes through the stages of the description's
 * pipeline (npucc_target_desc.arith; npucc_stages.h holds the arithmetic of
 * each stage, shared with the compiler's interpreter). */
#include "npucc_sim_internal.h"

#include "npucc_layout.h"
#include "npucc_requant.h"
#include "npucc_stages.h"

#include <stdlib.h>
#include <string.h>

#define P(id) p[NPUCC_P_##id]
#define LIMIT NPUCC_DEVERR_LIMIT

static int32_t rd_i32(const uint8_t *b, size_t i) {
  const uint8_t *q = b + 4 * i;
  return (int32_t)((uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) |
                   ((uint32_t)q[3] << 24));
}

/* The MAC-array commands' stage parameters; check_quant checks them and reads
 * the bias and requant tables. st: the stage of each pipeline slot. */
typedef struct rq_ctx {
  const uint8_t *bias, *rq, *lut; /* lut: the lut256 or pwl stage's table (act_addr) */
  int per_channel;
  int32_t mult, shift, out_zp, lo, hi;
  int st[NPUCC_SLOT_COUNT];
  unsigned acc_bits;
  /* correction_terms: corr_x, corr_x_shift, corr_w, corr_w_shift; corr_add */
  int32_t corr[4];
  int64_t corr_add;
} rq_ctx;

static int check_quant(npucc_sim *s, int idx, int kind, const int64_t *p, int64_t channels,
                       rq_ctx *q) {
  const npucc_op_limits *l = &s->d->ops[kind];
  sim_window w;
  int i;
  if (sim_check_zp_clamp(s, idx, kind, p))
    return -1;
  q->out_zp = (int32_t)P(OUT_ZP);
  q->lo = (int32_t)P(ACT_MIN);
  q->hi = (int32_t)P(ACT_MAX);
  for (i = 0; i < NPUCC_SLOT_COUNT; ++i) {
    q->st[i] = npucc_stage_of(s->d->arith, kind, i);
    if (npucc_stage_slot(q->st[i]) != i)
      return sim_fail(s, idx, LIMIT, "pipeline slot %d holds stage %d, not one of that slot", i,
                      q->st[i]);
  }
  q->acc_bits = s->d->acc_bits >= 2 && s->d->acc_bits <= 63 ? s->d->acc_bits : 32;
  if (q->st[NPUCC_SLOT_CORRECTION] == NPUCC_STAGE_CORR_TERMS) {
    if (sim_check_corr_widths(s, idx, kind, p))
      return -1;
    q->corr[0] = (int32_t)P(CORR_X), q->corr[1] = (int32_t)P(CORR_X_SHIFT);
    q->corr[2] = (int32_t)P(CORR_W), q->corr[3] = (int32_t)P(CORR_W_SHIFT);
    q->corr_add = P(CORR_ADD);
  }
  q->per_channel = P(PER_CHANNEL) != 0;
  if (q->per_channel && !(l->requant & NPUCC_RQ_PER_CHANNEL))
    return sim_fail(s, idx, LIMIT, "field value out of range: per-channel requant not supported");
  if (!q->per_channel && !(l->requant & NPUCC_RQ_PER_TENSOR))
    return sim_fail(s, idx, LIMIT, "field value out of range: per-tensor requant not supported");
  if (P(REQUANT_SHIFT) < -31 || P(REQUANT_SHIFT) > 31)
    return sim_fail(s, idx, LIMIT, "field value out of range: requant_shift %lld",
                    (long long)P(REQUANT_SHIFT));
  q->mult = (int32_t)P(REQUANT_MULT);
  q->shift = (int32_t)P(REQUANT_SHIFT);
  if (sim_const_operand(s, idx, kind, P(BIAS_ADDR), (uint64_t)channels * 4, NPUCC_OPND_BIAS,
                        "bias_addr", &w) ||
      sim_check_read(s, idx, &w, (uint64_t)channels * 4, "bias"))
    return -1;
  q->bias = w.ptr;
  q->rq = NULL;
  q->lut = NULL;
  if (q->st[NPUCC_SLOT_ACTIVATION] == NPUCC_STAGE_ACT_LUT256) {
    if (sim_const_operand(s, idx, kind, P(ACT_ADDR), 256, NPUCC_OPND_ACT, "act_addr", &w) ||
        sim_check_read(s, idx, &w, 256, "activation table"))
      return -1;
    q->lut = w.ptr;
  }
  if (q->st[NPUCC_SLOT_ACTIVATION] == NPUCC_STAGE_ACT_PWL) {
    if (sim_const_operand(s, idx, kind, P(ACT_ADDR), NPUCC_PWL_TABLE_BYTES, NPUCC_OPND_ACT,
                          "act_addr", &w) ||
        sim_check_read(s, idx, &w, NPUCC_PWL_TABLE_BYTES, "pwl segment table"))
      return -1;
    q->lut = w.ptr;
  }
  if (q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_FP32 && !q->per_channel)
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: fp32_scale reads its scales from the rq table "
                    "(per_channel 0)");
  if (q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_SHIFT && !q->per_channel)
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: shift reads its shifts from the rq table "
                    "(per_channel 0)");
  if (q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_MUL_SHIFT_ADD && !q->per_channel)
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: mul_shift_add reads its parameters from the rq "
                    "table (per_channel 0)");
  if (q->per_channel) {
    /* q31: int32 mult[], int32 shift[]; fp32_scale: binary32 scale[]; shift:
     * int32 shift[]; mul_shift_add: int32 mul[], int32 shift[], int32 add[]. */
    int narrow = q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_FP32 ||
                 q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_SHIFT;
    int wide = q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_MUL_SHIFT_ADD;
    uint64_t bytes = (uint64_t)channels * (narrow ? 4 : wide ? 12 : 8);
    if (sim_const_operand(s, idx, kind, P(RQ_ADDR), bytes, NPUCC_OPND_RQ, "rq_addr", &w) ||
        sim_check_read(s, idx, &w, bytes, "requant table"))
      return -1;
    q->rq = w.ptr;
    if (q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_FP32)
      for (i = 0; i < (int)channels; ++i)
        if (!npucc_stage_fp32_finite((uint32_t)rd_i32(q->rq, (size_t)i)))
          return sim_fail(s, idx, LIMIT, "requant table: scale of channel %d is not finite", i);
    if (q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_SHIFT)
      for (i = 0; i < (int)channels; ++i)
        if (rd_i32(q->rq, (size_t)i) < 0 || rd_i32(q->rq, (size_t)i) > 31)
          return sim_fail(s, idx, LIMIT, "requant table: shift %ld of channel %d outside 0..31",
                          (long)rd_i32(q->rq, (size_t)i), i);
    if (wide)
      for (i = 0; i < (int)channels; ++i)
        if (rd_i32(q->rq, (size_t)(channels + i)) < 0 || rd_i32(q->rq, (size_t)(channels + i)) > 63)
          return sim_fail(s, idx, LIMIT, "requant table: shift %ld of channel %d outside 0..63",
                          (long)rd_i32(q->rq, (size_t)(channels + i)), i);
    if (wide && sim_check_msa_widths(s, idx, kind, channels, q->rq) != 0)
      return -1;
  }
  if (q->lut && q->st[NPUCC_SLOT_ACTIVATION] == NPUCC_STAGE_ACT_PWL)
    return sim_check_pwl_segments(s, idx, kind, q->lut);
  return 0;
}

/* The activation stage: the fused clamp, the layer's 256-byte table, or
 * its pwl segments (144 bytes). */
static int32_t activate(const rq_ctx *q, int32_t v) {
  if (q->lut && q->st[NPUCC_SLOT_ACTIVATION] == NPUCC_STAGE_ACT_PWL)
    return npucc_stage_act_pwl(v, q->lut);
  if (q->lut)
    return npucc_stage_act_lut256(v, q->lut);
  return npucc_stage_act_clamp(v, q->lo, q->hi);
}

/* The stages after the MAC: requant (with the bias), activation, output. */
static uint8_t requant(const rq_ctx *q, int64_t ch, int64_t channels, int32_t acc) {
  int32_t m = q->mult, sh = q->shift, v;
  if (q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_FP32) {
    v = npucc_sat_i32((int64_t)acc + rd_i32(q->bias, (size_t)ch));
    v = npucc_stage_rq_fp32(v, (uint32_t)rd_i32(q->rq, (size_t)ch), q->out_zp);
    return npucc_stage_out_int8(activate(q, v));
  }
  if (q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_MUL_SHIFT_ADD) {
    v = npucc_sat_i32((int64_t)acc + rd_i32(q->bias, (size_t)ch));
    v = npucc_stage_rq_msa(v, rd_i32(q->rq, (size_t)ch), rd_i32(q->rq, (size_t)(channels + ch)),
                           rd_i32(q->rq, (size_t)(2 * channels + ch)));
    return npucc_stage_out_int8(activate(q, v));
  }
  if (q->st[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_SHIFT) {
    v = npucc_sat_i32((int64_t)acc + rd_i32(q->bias, (size_t)ch));
    v = npucc_stage_rq_shift(v, rd_i32(q->rq, (size_t)ch), q->out_zp);
    return npucc_stage_out_int8(activate(q, v));
  }
  if (q->per_channel) {
    m = rd_i32(q->rq, (size_t)ch);
    sh = rd_i32(q->rq, (size_t)(channels + ch));
    if (sh < -31)
      sh = -31;
    if (sh > 31)
      sh = 31;
  }
  v = npucc_sat_i32((int64_t)acc + rd_i32(q->bias, (size_t)ch));
  v = npucc_stage_rq_q31(v, m, sh, q->out_zp);
  return npucc_stage_out_int8(activate(q, v));
}

/* The output stage over a computed (and pooled) tile of n int8 bytes: uint8
 * stores each value plus 128 (npucc_stage_out_uint8). */
static void output_stage(const rq_ctx *q, uint8_t *b, uint64_t n) {
  uint64_t i;
  if (q->st[NPUCC_SLOT_OUTPUT] == NPUCC_STAGE_OUT_UINT8)
    for (i = 0; i < n; ++i)
      b[i] = npucc_stage_out_uint8((int8_t)b[i]);
}

/* The input, correction and MAC stages for one output element: the sums of
 * the products, inputs and weights as the correction stage needs them. */
typedef struct mac_sums {
  int64_t acc, sum_x, sum_w;
} mac_sums;

static void mac_tap(const rq_ctx *q, mac_sums *m, uint8_t xb, uint8_t wb, int32_t zp) {
  int32_t x = q->st[NPUCC_SLOT_INPUT] == NPUCC_STAGE_IN_UINT8 ? npucc_stage_in_uint8(xb)
                                                              : npucc_stage_in_int8(xb);
  if (q->st[NPUCC_SLOT_CORRECTION] == NPUCC_STAGE_CORR_TERMS) {
    int32_t w = (int32_t)wb; /* uint8 weights, their zero point in the terms */
    m->acc = npucc_stage_mac(m->acc, x * w);
    m->sum_x += x, m->sum_w += w;
  } else {
    m->acc = npucc_stage_mac(m->acc, npucc_stage_subtract_zp(x, zp, (int8_t)wb));
  }
}

/* A padding tap: it holds the input zero point. subtract_zp adds nothing for
 * it; correction_terms multiplies it (the stored zero point) as any input. */
static void mac_pad(const rq_ctx *q, mac_sums *m, uint8_t wb, int32_t zp) {
  if (q->st[NPUCC_SLOT_CORRECTION] == NPUCC_STAGE_CORR_TERMS) {
    m->acc = npucc_stage_mac(m->acc, zp * (int32_t)wb);
    m->sum_x += zp, m->sum_w += wb;
  }
}

/* The accumulator's width: an overflow is a limit error. */
static int check_acc(npucc_sim *s, int idx, const rq_ctx *q, int64_t acc) {
  if (npucc_stage_acc_fits(acc, q->acc_bits))
    return 0;
  return sim_fail(s, idx, LIMIT, "accumulator overflow: %lld does not fit %u bits", (long long)acc,
                  q->acc_bits);
}

/* The correction stage's result for one output element (c_group: the input
 * channels it reads), both the raw sum and the result checked against the
 * accumulator's width; 0 or -1 after sim_fail. */
static int corrected(npucc_sim *s, int idx, const rq_ctx *q, mac_sums *m, int64_t c_group) {
  if (q->st[NPUCC_SLOT_CORRECTION] != NPUCC_STAGE_CORR_TERMS)
    return check_acc(s, idx, q, m->acc);
  if (check_acc(s, idx, q, m->acc))
    return -1;
  m->acc = npucc_stage_corr_terms(m->acc, m->sum_x, m->sum_w, q->corr[0], q->corr[1], q->corr[2],
                                  q->corr[3], q->corr_add, c_group);
  return check_acc(s, idx, q, m->acc);
}

/* The weight layout of operation `kind` (npucc_layout.h). */
static npucc_wlayout weight_layout(const npucc_sim *s, int kind) {
  npucc_wlayout l;
  l.kind = s->d->weight_layout[kind];
  l.bo = s->d->weight_block_o[kind];
  l.bi = s->d->weight_block_i[kind];
  return l;
}

/* The pool stage's window pool_k: 1 (no pool), or, with the max or select
 * stage, a size that divides the computed out_h x out_w (the compiler
 * computes only whole windows) and the description lists; select's kept
 * pixel (pool_off_y, pool_off_x) inside it and offered. 0 on success. */
static int check_pool(npucc_sim *s, int idx, int kind, const int64_t *p) {
  int st = npucc_stage_of(s->d->arith, kind, NPUCC_SLOT_POOL);
  if (P(POOL_K) < 1 || P(POOL_K) > 31)
    return sim_fail(s, idx, LIMIT, "field value out of range: pool_k %lld", (long long)P(POOL_K));
  if (P(POOL_OFF_Y) < 0 || P(POOL_OFF_X) < 0 || P(POOL_OFF_Y) >= P(POOL_K) ||
      P(POOL_OFF_X) >= P(POOL_K))
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: pool offset (%lld, %lld) outside the %lldx%lld "
                    "window",
                    (long long)P(POOL_OFF_Y), (long long)P(POOL_OFF_X), (long long)P(POOL_K),
                    (long long)P(POOL_K));
  if (P(POOL_K) > 1 && st != NPUCC_STAGE_POOL_MAX && st != NPUCC_STAGE_POOL_SELECT)
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: pool_k %lld but the operation's pool stage is "
                    "none",
                    (long long)P(POOL_K));
  if (P(OUT_H) % P(POOL_K) || P(OUT_W) % P(POOL_K))
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: pool_k %lld does not divide the output %lldx%lld",
                    (long long)P(POOL_K), (long long)P(OUT_H), (long long)P(OUT_W));
  return sim_check_pool_lists(s, idx, kind, P(POOL_K), P(POOL_OFF_Y), P(POOL_OFF_X));
}

/* The fused pool stages: each k x k, stride k window of the computed tile
 * `in` (oh x ow x c in layout al) into `out` ((oh / k) x (ow / k) x c): its
 * maximum (max), or its pixel (oy_k, ox_k) when `select` is set. */
static void pool_stage(npucc_alayout al, const uint8_t *in, int64_t oh, int64_t ow, int64_t c,
                       int64_t k, int select, int oy_k, int ox_k, uint8_t *out) {
  int64_t y, x, ch;
  for (ch = 0; ch < c; ++ch) {
    uint64_t o = npucc_alayout_offset(al, oh, ow, c, 0, 0, ch);
    long row = (long)(npucc_alayout_offset(al, oh, ow, c, 1, 0, ch) - o);
    long col = (long)(npucc_alayout_offset(al, oh, ow, c, 0, 1, ch) - o);
    for (y = 0; y < oh / k; ++y)
      for (x = 0; x < ow / k; ++x) {
        const int8_t *win =
            (const int8_t *)in + npucc_alayout_offset(al, oh, ow, c, y * k, x * k, ch);
        out[npucc_alayout_offset(al, oh / k, ow / k, c, y, x, ch)] =
            (uint8_t)(select ? npucc_stage_pool_select(win, row, col, oy_k, ox_k)
                             : npucc_stage_pool_max(win, row, col, (int)k));
      }
  }
}

/* conv and depthwise: out[oy][ox][oc] over input and output in the
 * operation's activation layout (NHWC or channel-blocked: the whole padded
 * groups are read and written, pad output channels as zeros); conv weights
 * in the operation's layout, depthwise [k_h][k_w][channels]. out_h x out_w
 * is the computed resolution; with pool_k > 1 (the max or select pool
 * stage) the stored output is its (out_h / pool_k) x (out_w / pool_k) max
 * pool or selection. */
int sim_exec_conv(npucc_sim *s, int idx, int kind, const int64_t *p) {
  const npucc_op_limits *l = &s->d->ops[kind];
  int dw = kind == NPUCC_KIND_DEPTHWISE;
  int64_t ic = P(IN_CH), dm = dw ? P(DEPTH_MULT) : 1, oc_n = dw ? P(IN_CH) * dm : P(OUT_CH);
  int64_t oy, ox, oc, ky, kx, c, pk;
  uint64_t in_sz, out_sz, w_sz, tile_sz;
  npucc_wlayout wl = weight_layout(s, kind);
  npucc_alayout al = sim_act_layout(s, kind);
  sim_window wi, ww, wo;
  rq_ctx q;
  uint8_t *tmp;
  if (dw && !sim_in_mask(l->depth_mult_mask, dm))
    return sim_fail(s, idx, LIMIT, "field value out of range: channel multiplier %lld",
                    (long long)dm);
  if (sim_check_channels(s, idx, l, ic, oc_n) || sim_check_spatial(s, idx, kind, p) ||
      check_pool(s, idx, kind, p) || sim_check_banks(s, idx, kind, p))
    return -1;
  pk = P(POOL_K);
  in_sz = npucc_alayout_bytes(al, P(IN_H), P(IN_W), ic);
  w_sz =
      dw ? (uint64_t)(P(K_H) * P(K_W) * oc_n) : npucc_wlayout_bytes(wl, oc_n, P(K_H), P(K_W), ic);
  tile_sz = npucc_alayout_bytes(al, P(OUT_H), P(OUT_W), oc_n);
  out_sz = npucc_alayout_bytes(al, P(OUT_H) / pk, P(OUT_W) / pk, oc_n);
  if (sim_operand(s, idx, P(IN_ADDR), in_sz, NPUCC_OPND_IN, "in_addr", &wi) ||
      sim_check_read(s, idx, &wi, in_sz, "input") ||
      sim_const_operand(s, idx, kind, P(W_ADDR), w_sz, NPUCC_OPND_W, "w_addr", &ww) ||
      sim_check_read(s, idx, &ww, w_sz, "weights") || check_quant(s, idx, kind, p, oc_n, &q) ||
      sim_operand(s, idx, P(OUT_ADDR), out_sz, NPUCC_OPND_OUT, "out_addr", &wo))
    return -1;
  tmp = (uint8_t *)calloc((size_t)tile_sz, 1);
  if (tmp == NULL)
    return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL, "out of memory");
  for (oy = 0; oy < P(OUT_H); ++oy)
    for (ox = 0; ox < P(OUT_W); ++ox)
      for (oc = 0; oc < oc_n; ++oc) {
        mac_sums m = {0, 0, 0};
        int32_t zp = (int32_t)P(IN_ZP);
        for (ky = 0; ky < P(K_H); ++ky) {
          int64_t iy = oy * P(STRIDE_H) - P(PAD_TOP) + ky * P(DIL_H);
          for (kx = 0; kx < P(K_W); ++kx) {
            int64_t ix = ox * P(STRIDE_W) - P(PAD_LEFT) + kx * P(DIL_W);
            int inside = iy >= 0 && iy < P(IN_H) && ix >= 0 && ix < P(IN_W);
#define IN_AT(ch) wi.ptr[npucc_alayout_offset(al, P(IN_H), P(IN_W), ic, iy, ix, (ch))]
#define W_AT(ch) ww.ptr[npucc_wlayout_offset(wl, oc_n, P(K_H), P(K_W), ic, oc, ky, kx, (ch))]
            if (dw) {
              uint8_t wv = ww.ptr[(ky * P(K_W) + kx) * oc_n + oc];
              if (inside)
                mac_tap(&q, &m, IN_AT(oc / dm), wv, zp);
              else
                mac_pad(&q, &m, wv, zp);
            } else {
              for (c = 0; c < ic; ++c)
                if (inside)
                  mac_tap(&q, &m, IN_AT(c), W_AT(c), zp);
                else
                  mac_pad(&q, &m, W_AT(c), zp);
            }
          }
        }
        if (corrected(s, idx, &q, &m, dw ? 1 : ic)) {
          free(tmp);
          return -1;
        }
        tmp[npucc_alayout_offset(al, P(OUT_H), P(OUT_W), oc_n, oy, ox, oc)] =
            requant(&q, oc, oc_n, (int32_t)m.acc);
      }
  if (pk > 1) {
    uint8_t *pooled = (uint8_t *)calloc((size_t)out_sz, 1);
    if (pooled == NULL) {
      free(tmp);
      return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL, "out of memory");
    }
    pool_stage(al, tmp, P(OUT_H), P(OUT_W), oc_n, pk,
               npucc_stage_of(s->d->arith, kind, NPUCC_SLOT_POOL) == NPUCC_STAGE_POOL_SELECT,
               (int)P(POOL_OFF_Y), (int)P(POOL_OFF_X), pooled);
    free(tmp);
    tmp = pooled;
  }
  output_stage(&q, tmp, out_sz);
  if (sim_check_write(s, idx, &wo, out_sz, "output")) {
    free(tmp);
    return -1;
  }
  memcpy(wo.ptr, tmp, (size_t)out_sz);
  free(tmp);
  return 0;
}
#undef IN_AT
#undef W_AT

int sim_exec_matmul(npucc_sim *s, int idx, const int64_t *p) {
  const npucc_op_limits *l = &s->d->ops[NPUCC_KIND_MATMUL];
  int64_t m = P(M), k = P(K), n = P(N), i, j, c;
  npucc_wlayout wl = weight_layout(s, NPUCC_KIND_MATMUL);
  uint64_t w_sz = npucc_wlayout_bytes(wl, n, 1, 1, k);
  sim_window wa, ww, wo;
  rq_ctx q;
  uint8_t *tmp;
  if (m <= 0 || sim_over(l->max_m, m) || sim_over(l->max_k, k) || sim_over(l->max_n, n))
    return sim_fail(s, idx, LIMIT, "field value out of range: m=%lld k=%lld n=%lld", (long long)m,
                    (long long)k, (long long)n);
  if (sim_check_channels(s, idx, l, k, n) || sim_check_banks(s, idx, NPUCC_KIND_MATMUL, p) ||
      sim_operand(s, idx, P(IN_ADDR), (uint64_t)(m * k), NPUCC_OPND_IN, "in_addr", &wa) ||
      sim_check_read(s, idx, &wa, (uint64_t)(m * k), "input") ||
      sim_const_operand(s, idx, NPUCC_KIND_MATMUL, P(W_ADDR), w_sz, NPUCC_OPND_W, "w_addr", &ww) ||
      sim_check_read(s, idx, &ww, w_sz, "weights") ||
      check_quant(s, idx, NPUCC_KIND_MATMUL, p, n, &q) ||
      sim_operand(s, idx, P(OUT_ADDR), (uint64_t)(m * n), NPUCC_OPND_OUT, "out_addr", &wo))
    return -1;
  tmp = (uint8_t *)malloc((size_t)(m * n));
  if (tmp == NULL)
    return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL, "out of memory");
  for (i = 0; i < m; ++i)
    for (j = 0; j < n; ++j) {
      mac_sums ms = {0, 0, 0};
      const uint8_t *a = wa.ptr + i * k;
      for (c = 0; c < k; ++c)
        mac_tap(&q, &ms, a[c], ww.ptr[npucc_wlayout_offset(wl, n, 1, 1, k, j, 0, 0, c)],
                (int32_t)P(IN_ZP));
      if (corrected(s, idx, &q, &ms, k)) {
        free(tmp);
        return -1;
      }
      tmp[i * n + j] = requant(&q, j, n, (int32_t)ms.acc);
    }
  output_stage(&q, tmp, (uint64_t)(m * n));
  if (sim_check_write(s, idx, &wo, (uint64_t)(m * n), "output")) {
    free(tmp);
    return -1;
  }
  memcpy(wo.ptr, tmp, (size_t)(m * n));
  free(tmp);
  return 0;
}
