/* npucc_sim_ops.c - Semantics and checks of the simulated commands other
 * than the MAC array's: the dispatch (sim_exec, sizes in range, the
 * operation supported), DMA (1D/2D/3D strided, zero fill, within the DMA's
 * limits), max/avg pooling and elementwise add, and the checks every
 * operation shares (zero points and fused clamp, channel counts and
 * multiples, kernel, strides, dilations, spatial limits and padding per side,
 * the scratchpad's bank rules, the activation layout). conv, depthwise and
 * matmul with their stage pipeline: npucc_sim_mac.c.
 * Memory layouts (all little-endian): activations HWC int8 (or the
 * operation's channel-blocked layout, npucc_layout.h).
 * Cycles and MAC counts come from npucc_timing.h (see npucc_sim.c). */
#include "npucc_sim_internal.h"

#include "npucc_requant.h"
#include "npucc_stages.h"
#include "npucc_timing.h"

#include <stdlib.h>
#include <string.h>

#define P(id) p[NPUCC_P_##id]
#define LIMIT NPUCC_DEVERR_LIMIT

static int exec_dma(npucc_sim *s, int idx, const int64_t *p) {
  const npucc_target_desc *d = s->d;
  npucc_sim_cmd_stats *st = &s->cmds[idx];
  int64_t pl, r;
  uint32_t align = d->dma_alignment ? d->dma_alignment : 1;
  if (P(LENGTH) <= 0 || P(ROWS) <= 0 || P(PLANES) <= 0)
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: length=%lld rows=%lld planes=%lld must be "
                    "positive",
                    (long long)P(LENGTH), (long long)P(ROWS), (long long)P(PLANES));
  if ((P(ROWS) > 1 && d->dma_dims < 2) || (P(PLANES) > 1 && d->dma_dims < 3))
    return sim_fail(s, idx, LIMIT, "field value out of range: rows=%lld planes=%lld on a %uD DMA",
                    (long long)P(ROWS), (long long)P(PLANES), (unsigned)d->dma_dims);
  if (sim_over(d->dma_max_length, P(LENGTH)) || sim_over(d->dma_max_rows, P(ROWS)) ||
      sim_over(d->dma_max_planes, P(PLANES)))
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: length %lld rows %lld planes %lld exceed the "
                    "DMA's limits %llu/%llu/%llu",
                    (long long)P(LENGTH), (long long)P(ROWS), (long long)P(PLANES),
                    (unsigned long long)d->dma_max_length, (unsigned long long)d->dma_max_rows,
                    (unsigned long long)d->dma_max_planes);
  if ((P(ROWS) > 1 && (sim_over(d->dma_max_stride, P(SRC_STRIDE)) ||
                       sim_over(d->dma_max_stride, P(DST_STRIDE)))) ||
      (P(PLANES) > 1 && (sim_over(d->dma_max_plane_stride, P(SRC_PLANE_STRIDE)) ||
                         sim_over(d->dma_max_plane_stride, P(DST_PLANE_STRIDE)))))
    return sim_fail(s, idx, LIMIT, "field value out of range: a stride exceeds the DMA's limits");
  if (P(ZERO_FILL) && !d->dma_zero_fill)
    return sim_fail(s, idx, LIMIT, "field value out of range: this DMA has no zero fill");
  if ((!P(ZERO_FILL) && P(SRC_ADDR) % align) || P(DST_ADDR) % align)
    return sim_fail(s, idx, NPUCC_DEVERR_ALIGN,
                    "misaligned DMA address: src 0x%08llx dst 0x%08llx (alignment %u)",
                    (unsigned long long)P(SRC_ADDR), (unsigned long long)P(DST_ADDR),
                    (unsigned)align);
  for (pl = 0; pl < P(PLANES); ++pl)
    for (r = 0; r < P(ROWS); ++r) {
      int64_t sa = P(SRC_ADDR) + pl * P(SRC_PLANE_STRIDE) + r * P(SRC_STRIDE);
      int64_t da = P(DST_ADDR) + pl * P(DST_PLANE_STRIDE) + r * P(DST_STRIDE);
      uint64_t len = (uint64_t)P(LENGTH);
      sim_window sw, dw;
      if (sim_resolve(s, idx, da, len, 1, "DMA destination", &dw))
        return -1;
      if (!P(ZERO_FILL)) {
        if (sim_resolve(s, idx, sa, len, 0, "DMA source", &sw) ||
            sim_check_read(s, idx, &sw, len, "DMA source"))
          return -1;
        if (sw.spm < 0)
          st->sys_bytes_read += len;
      }
      if (sim_check_write(s, idx, &dw, len, "DMA destination"))
        return -1;
      if (dw.spm < 0)
        st->sys_bytes_written += len;
      if (P(ZERO_FILL))
        memset(dw.ptr, 0, (size_t)len);
      else
        memmove(dw.ptr, sw.ptr, (size_t)len);
    }
  return 0;
}

int sim_check_zp_clamp(npucc_sim *s, int idx, int kind, const int64_t *p) {
  /* A uint8 input's zero point is 0..255 (out_zp stays the int8 one: the
   * uint8 output stage adds 128 after the activation). */
  int u8 = kind != NPUCC_KIND_POOL && kind != NPUCC_KIND_ELTWISE &&
           npucc_stage_of(s->d->arith, kind, NPUCC_SLOT_INPUT) == NPUCC_STAGE_IN_UINT8;
  if (P(IN_ZP) < (u8 ? 0 : -128) || P(IN_ZP) > (u8 ? 255 : 127) || P(OUT_ZP) < -128 ||
      P(OUT_ZP) > 127)
    return sim_fail(s, idx, LIMIT, "field value out of range: zero points %lld/%lld",
                    (long long)P(IN_ZP), (long long)P(OUT_ZP));
  if (P(ACT_MIN) > P(ACT_MAX) || P(ACT_MIN) < -128 || P(ACT_MAX) > 127)
    return sim_fail(s, idx, LIMIT, "field value out of range: act_min %lld act_max %lld",
                    (long long)P(ACT_MIN), (long long)P(ACT_MAX));
  if (!s->d->ops[kind].fused_clamp && (P(ACT_MIN) > -128 || P(ACT_MAX) < 127))
    return sim_fail(s, idx, LIMIT, "fused clamp not supported by this operation");
  return 0;
}

int sim_check_channels(npucc_sim *s, int idx, const npucc_op_limits *l, int64_t in, int64_t out) {
  if (in <= 0 || (l->in_ch_multiple && in % l->in_ch_multiple) || sim_over(l->max_in_ch, in))
    return sim_fail(s, idx, LIMIT, "field value out of range: %lld input channels", (long long)in);
  if (out >= 0 && (out <= 0 || (l->out_ch_multiple && out % l->out_ch_multiple) ||
                   sim_over(l->max_out_ch, out)))
    return sim_fail(s, idx, LIMIT, "field value out of range: %lld output channels",
                    (long long)out);
  return 0;
}

int sim_check_spatial(npucc_sim *s, int idx, int kind, const int64_t *p) {
  const npucc_op_limits *l = &s->d->ops[kind];
  int64_t dh = kind == NPUCC_KIND_POOL ? 1 : P(DIL_H), dw = kind == NPUCC_KIND_POOL ? 1 : P(DIL_W);
  int64_t pb, pr;
  if (!sim_in_mask(l->kh_mask, P(K_H)) || !sim_in_mask(l->kw_mask, P(K_W)))
    return sim_fail(s, idx, LIMIT, "field value out of range: kernel %lldx%lld not supported",
                    (long long)P(K_H), (long long)P(K_W));
  if (!sim_in_mask(l->stride_mask, P(STRIDE_H)) || !sim_in_mask(l->stride_mask, P(STRIDE_W)))
    return sim_fail(s, idx, LIMIT, "field value out of range: stride %lldx%lld not supported",
                    (long long)P(STRIDE_H), (long long)P(STRIDE_W));
  if (kind != NPUCC_KIND_POOL &&
      (!sim_in_mask(l->dilation_mask, dh) || !sim_in_mask(l->dilation_mask, dw)))
    return sim_fail(s, idx, LIMIT, "field value out of range: dilation %lldx%lld not supported",
                    (long long)dh, (long long)dw);
  if (P(IN_H) <= 0 || P(IN_W) <= 0 || P(OUT_H) <= 0 || P(OUT_W) <= 0)
    return sim_fail(s, idx, LIMIT, "field value out of range: empty input or output");
  if (sim_over(l->max_in_h, P(IN_H)) || sim_over(l->max_in_w, P(IN_W)) ||
      sim_over(l->max_out_h, P(OUT_H)) || sim_over(l->max_out_w, P(OUT_W)))
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: input %lldx%lld or output %lldx%lld exceeds the "
                    "operation's limits",
                    (long long)P(IN_H), (long long)P(IN_W), (long long)P(OUT_H),
                    (long long)P(OUT_W));
  pb = (P(OUT_H) - 1) * P(STRIDE_H) + dh * (P(K_H) - 1) + 1 - P(PAD_TOP) - P(IN_H);
  pr = (P(OUT_W) - 1) * P(STRIDE_W) + dw * (P(K_W) - 1) + 1 - P(PAD_LEFT) - P(IN_W);
  if (P(PAD_TOP) < 0 || P(PAD_LEFT) < 0 || P(PAD_TOP) > l->max_pad[0] || pb > l->max_pad[1] ||
      P(PAD_LEFT) > l->max_pad[2] || pr > l->max_pad[3])
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: padding top %lld bottom %lld left %lld right "
                    "%lld exceeds %u/%u/%u/%u",
                    (long long)P(PAD_TOP), (long long)pb, (long long)P(PAD_LEFT), (long long)pr,
                    (unsigned)l->max_pad[0], (unsigned)l->max_pad[1], (unsigned)l->max_pad[2],
                    (unsigned)l->max_pad[3]);
  return 0;
}

int sim_check_banks(npucc_sim *s, int idx, int kind, const int64_t *p) {
  int a = 0, b = 0;
  const npucc_mem_desc *m = npucc_bank_conflict(s->d, kind, p, &a, &b);
  if (m != NULL && m->bank_conflict == NPUCC_BANK_CONFLICT_ERROR)
    return sim_fail(
        s, idx, NPUCC_DEVERR_HAZARD,
        "bank conflict: operands %s and %s are both in bank %llu of scratchpad '%s', "
        "which must keep them in different banks",
        npucc_operand_name(a), npucc_operand_name(b),
        (unsigned long long)(((uint64_t)p[npucc_operand_param(kind, a)] - m->base) / m->bank_size),
        m->name);
  return 0;
}

npucc_alayout sim_act_layout(const npucc_sim *s, int kind) {
  npucc_alayout l;
  l.block = s->d->act_block[kind];
  l.kind = (uint8_t)(l.block > 1 ? NPUCC_AL_BLOCKED : NPUCC_AL_NHWC);
  return l;
}

/* Whether command `cd` carries parameter `param` (a binding or a fixed value). */
static int carries(const npucc_cmd_desc *cd, int param) {
  uint16_t i;
  for (i = 0; i < cd->num_bindings; ++i)
    if (cd->bindings[i].param == param)
      return 1;
  for (i = 0; i < cd->num_fixed; ++i)
    if (cd->fixed[i].param == param)
      return 1;
  return 0;
}

/* Max or average pooling. A pool command that carries the requantization
 * (in_zp, out_zp, requant_mult, requant_shift; the loader takes all four or
 * none) averages as clamp(rq_q31(sum(x - in_zp)) + out_zp); else the sum of
 * the raw values divided by the count (pool_avg_rounding). */
static int exec_pool(npucc_sim *s, int idx, const npucc_cmd_desc *cd, const int64_t *p) {
  const npucc_op_limits *l = &s->d->ops[NPUCC_KIND_POOL];
  int64_t ch = P(IN_CH), oy, ox, c, ky, kx;
  uint64_t in_sz, out_sz;
  sim_window wi, wo;
  int8_t *tmp;
  int kind = (int)P(POOL_KIND);
  int rq = kind == NPUCC_POOL_AVG && carries(cd, NPUCC_P_REQUANT_MULT);
  int32_t zp = rq ? (int32_t)P(IN_ZP) : 0;
  npucc_alayout al = sim_act_layout(s, NPUCC_KIND_POOL);
  if (sim_check_channels(s, idx, l, ch, -1) || sim_check_spatial(s, idx, NPUCC_KIND_POOL, p) ||
      sim_check_zp_clamp(s, idx, NPUCC_KIND_POOL, p))
    return -1;
  if (kind < 0 || kind > 31 || !((l->kinds_mask >> kind) & 1u))
    return sim_fail(s, idx, LIMIT, "field value out of range: pool kind %lld not supported",
                    (long long)P(POOL_KIND));
  if (rq && (P(REQUANT_SHIFT) < -31 || P(REQUANT_SHIFT) > 31))
    return sim_fail(s, idx, LIMIT, "field value out of range: requant_shift %lld",
                    (long long)P(REQUANT_SHIFT));
  in_sz = npucc_alayout_bytes(al, P(IN_H), P(IN_W), ch);
  out_sz = npucc_alayout_bytes(al, P(OUT_H), P(OUT_W), ch);
  if (sim_check_banks(s, idx, NPUCC_KIND_POOL, p) ||
      sim_operand(s, idx, P(IN_ADDR), in_sz, NPUCC_OPND_IN, "in_addr", &wi) ||
      sim_check_read(s, idx, &wi, in_sz, "input") ||
      sim_operand(s, idx, P(OUT_ADDR), out_sz, NPUCC_OPND_OUT, "out_addr", &wo))
    return -1;
  tmp = (int8_t *)calloc((size_t)out_sz, 1);
  if (tmp == NULL)
    return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL, "out of memory");
  for (oy = 0; oy < P(OUT_H); ++oy)
    for (ox = 0; ox < P(OUT_W); ++ox)
      for (c = 0; c < ch; ++c) {
        int32_t acc = kind == NPUCC_POOL_MAX ? -128 : 0, count = 0;
        for (ky = 0; ky < P(K_H); ++ky)
          for (kx = 0; kx < P(K_W); ++kx) {
            int64_t iy = oy * P(STRIDE_H) - P(PAD_TOP) + ky;
            int64_t ix = ox * P(STRIDE_W) - P(PAD_LEFT) + kx;
            int8_t v;
            if (iy < 0 || iy >= P(IN_H) || ix < 0 || ix >= P(IN_W))
              continue;
            v = ((const int8_t *)wi.ptr)[npucc_alayout_offset(al, P(IN_H), P(IN_W), ch, iy, ix, c)];
            if (kind == NPUCC_POOL_MAX)
              acc = v > acc ? v : acc;
            else
              acc += v - zp;
            ++count;
          }
        if (rq)
          acc = npucc_stage_rq_q31(acc, (int32_t)P(REQUANT_MULT), (int32_t)P(REQUANT_SHIFT),
                                   (int32_t)P(OUT_ZP));
        else if (kind == NPUCC_POOL_AVG)
          acc = npucc_div_round_mode(acc, count, s->d->pool_avg_rounding);
        tmp[npucc_alayout_offset(al, P(OUT_H), P(OUT_W), ch, oy, ox, c)] =
            (int8_t)npucc_clamp_i32(acc, (int32_t)P(ACT_MIN), (int32_t)P(ACT_MAX));
      }
  if (sim_check_write(s, idx, &wo, out_sz, "output")) {
    free(tmp);
    return -1;
  }
  memcpy(wo.ptr, tmp, (size_t)out_sz);
  free(tmp);
  return 0;
}

static int exec_eltwise(npucc_sim *s, int idx, const int64_t *p) {
  int64_t n = P(LENGTH), i;
  sim_window wa, wb, wo;
  int8_t *tmp;
  int op = (int)P(ELTWISE_OP);
  if (sim_check_zp_clamp(s, idx, NPUCC_KIND_ELTWISE, p))
    return -1;
  if (op < 0 || op > 31 || !((s->d->ops[NPUCC_KIND_ELTWISE].kinds_mask >> op) & 1u))
    return sim_fail(s, idx, LIMIT, "field value out of range: eltwise op %d not supported", op);
  if (n <= 0 || P(LEFT_SHIFT) < 0 || P(LEFT_SHIFT) > 31 || P(IN2_ZP) < -128 || P(IN2_ZP) > 127)
    return sim_fail(s, idx, LIMIT,
                    "field value out of range: length %lld left_shift %lld in2_zp %lld",
                    (long long)n, (long long)P(LEFT_SHIFT), (long long)P(IN2_ZP));
  if (sim_check_banks(s, idx, NPUCC_KIND_ELTWISE, p) ||
      sim_operand(s, idx, P(IN_ADDR), (uint64_t)n, NPUCC_OPND_IN, "in_addr", &wa) ||
      sim_check_read(s, idx, &wa, (uint64_t)n, "input") ||
      sim_operand(s, idx, P(IN2_ADDR), (uint64_t)n, NPUCC_OPND_IN2, "in2_addr", &wb) ||
      sim_check_read(s, idx, &wb, (uint64_t)n, "second input") ||
      sim_operand(s, idx, P(OUT_ADDR), (uint64_t)n, NPUCC_OPND_OUT, "out_addr", &wo))
    return -1;
  tmp = (int8_t *)malloc((size_t)n);
  if (tmp == NULL)
    return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL, "out of memory");
  for (i = 0; i < n; ++i)
    tmp[i] = npucc_add_i8(
        ((const int8_t *)wa.ptr)[i], ((const int8_t *)wb.ptr)[i], (int32_t)P(IN_ZP),
        (int32_t)P(IN2_ZP), (int32_t)P(LEFT_SHIFT), (int32_t)P(IN_MULT), (int32_t)P(IN_SHIFT),
        (int32_t)P(IN2_MULT), (int32_t)P(IN2_SHIFT), (int32_t)P(REQUANT_MULT),
        (int32_t)P(REQUANT_SHIFT), (int32_t)P(OUT_ZP), (int32_t)P(ACT_MIN), (int32_t)P(ACT_MAX));
  if (sim_check_write(s, idx, &wo, (uint64_t)n, "output")) {
    free(tmp);
    return -1;
  }
  memcpy(wo.ptr, tmp, (size_t)n);
  free(tmp);
  return 0;
}

/* Sizes beyond this are rejected before any size arithmetic (no scratchpad
 * is that large, and products of several of them must not overflow). */
#define NPUCC_SIM_MAX_DIM ((int64_t)1 << 24)

int sim_exec(npucc_sim *s, int idx, const npucc_cmd_desc *c, const int64_t *p) {
  int kind = c->kind;
  static const int dims[] = {NPUCC_P_LENGTH, NPUCC_P_ROWS,  NPUCC_P_PLANES,    NPUCC_P_IN_H,
                             NPUCC_P_IN_W,   NPUCC_P_IN_CH, NPUCC_P_OUT_H,     NPUCC_P_OUT_W,
                             NPUCC_P_OUT_CH, NPUCC_P_K_H,   NPUCC_P_K_W,       NPUCC_P_M,
                             NPUCC_P_K,      NPUCC_P_N,     NPUCC_P_DEPTH_MULT};
  size_t i;
  for (i = 0; i < sizeof(dims) / sizeof(dims[0]); ++i)
    if (p[dims[i]] < 0 || p[dims[i]] > NPUCC_SIM_MAX_DIM)
      return sim_fail(s, idx, LIMIT, "field value out of range: %s=%lld", npucc_param_name(dims[i]),
                      (long long)p[dims[i]]);
  if (kind != NPUCC_KIND_DMA &&
      (kind < 0 || kind >= NPUCC_KIND_COUNT || !s->d->ops[kind].supported))
    return sim_fail(s, idx, LIMIT, "operation not supported by this NPU");
  switch (kind) {
  case NPUCC_KIND_DMA:
    return exec_dma(s, idx, p);
  case NPUCC_KIND_CONV:
  case NPUCC_KIND_DEPTHWISE:
    return sim_exec_conv(s, idx, kind, p);
  case NPUCC_KIND_MATMUL:
    return sim_exec_matmul(s, idx, p);
  case NPUCC_KIND_POOL:
    return exec_pool(s, idx, c, p);
  case NPUCC_KIND_ELTWISE:
    return exec_eltwise(s, idx, p);
  default:
    return sim_fail(s, idx, LIMIT, "command kind not supported by the simulator");
  }
}
