/* npucc_timing.h - The cycle model of an NPU command, from its description.
 *
 * Shared by the simulator (which advances its engines by it) and the
 * compiler (CTable::commandCycles, for tiling and scheduling decisions), so
 * both agree exactly. Static inline C99, no library calls.
 *
 * Compute commands take  steps * cycles_per_step + fill_cycles + overhead_cycles
 * (per operation, from the description's timing.operations), where
 *   conv      steps = out_h * out_w * k_h * k_w * ceil(in_ch / mac_cols)
 *                     * ceil(out_ch / mac_rows)
 *   depthwise steps = out_h * out_w * ceil(in_ch * depth_mult / mac_rows)
 *                     * ceil(k_h * k_w / mac_cols)
 *   matmul    steps = m * ceil(k / mac_cols) * ceil(n / mac_rows)
 *   pool      steps = out_h * out_w * ceil(in_ch * k_h * k_w / vector_elems_per_cycle)
 *   eltwise   steps = ceil(length / vector_elems_per_cycle)
 * and, when two operands that must sit in different banks share one and the
 * scratchpad's policy is "slowdown", the steps cost conflict_slowdown times
 * as much.
 *
 * A DMA takes  setup_cycles + latency of the system windows it touches
 *              + planes * rows * ceil(length / rate)
 * where rate is the smallest of the DMA's read rate, its write rate and the
 * read/write rates of the source and destination windows.
 *
 * Every command adds the target's command_overhead_cycles (a fence costs
 * only that, after everything before it has finished).
 *
 * A description may replace the steps or the MACs of an operation by an
 * expression over the command's parameters (timing.operations.<op>.steps /
 * .macs, npucc_op_timing): evaluated by npucc_expr_eval, the evaluator of
 * computed fields. The compiler proves every command's expressions evaluate
 * (lib/lower/npu/Proof.cpp) and the simulator refuses a command whose do not
 * (npucc_timing_exprs), so npucc_command_cycles never meets a failing one.
 */
#ifndef NPUCC_TIMING_H
#define NPUCC_TIMING_H

#include <stdint.h>

#include "npucc_desc.h"

static inline uint64_t npucc_ceil_div_u64(uint64_t a, uint64_t b) {
  return b ? (a + b - 1) / b : a;
}

/* The memory holding address a (NULL if none). */
static inline const npucc_mem_desc *npucc_mem_at(const npucc_target_desc *d, int64_t a) {
  uint16_t i;
  for (i = 0; i < d->num_mems; ++i)
    if (a >= 0 && (uint64_t)a >= d->mems[i].base && (uint64_t)a - d->mems[i].base < d->mems[i].size)
      return &d->mems[i];
  return (const npucc_mem_desc *)0;
}

/* Does command kind `kind` read an activation table (operand act: lut256, pwl)? */
static inline int npucc_uses_act_table(const npucc_target_desc *d, int kind) {
  int s = npucc_stage_of(d->arith, kind, NPUCC_SLOT_ACTIVATION);
  return s == NPUCC_STAGE_ACT_LUT256 || s == NPUCC_STAGE_ACT_PWL;
}

/* The scratchpad address parameter of each operand (-1: the command has none). */
static inline int npucc_operand_param(int kind, int operand) {
  if (operand == NPUCC_OPND_IN2 && kind != NPUCC_KIND_ELTWISE)
    return -1;
  if ((operand == NPUCC_OPND_W || operand == NPUCC_OPND_BIAS || operand == NPUCC_OPND_RQ ||
       operand == NPUCC_OPND_ACT) &&
      kind != NPUCC_KIND_CONV && kind != NPUCC_KIND_DEPTHWISE && kind != NPUCC_KIND_MATMUL)
    return -1;
  return npucc_operand_addr_param(operand);
}

/* Finds two operands of a compute command that the scratchpad's rules want in
 * different banks but that start in the same bank. Returns the scratchpad
 * (and the operands in *a, *b), or NULL when there is no conflict. Operands
 * not used by the command (rq without per-channel requantization) do not
 * count. */
static inline const npucc_mem_desc *npucc_bank_conflict(const npucc_target_desc *d, int kind,
                                                        const int64_t *p, int *a, int *b) {
  int x, y;
  for (x = 0; x < NPUCC_OPND_COUNT; ++x)
    for (y = x + 1; y < NPUCC_OPND_COUNT; ++y) {
      int px = npucc_operand_param(kind, x), py = npucc_operand_param(kind, y);
      const npucc_mem_desc *m;
      if (px < 0 || py < 0 || kind == NPUCC_KIND_DMA || kind == NPUCC_KIND_FENCE)
        continue;
      if ((x == NPUCC_OPND_RQ || y == NPUCC_OPND_RQ) && !p[NPUCC_P_PER_CHANNEL])
        continue;
      if ((x == NPUCC_OPND_ACT || y == NPUCC_OPND_ACT) && !npucc_uses_act_table(d, kind))
        continue;
      m = npucc_mem_at(d, p[px]);
      if (m == (const npucc_mem_desc *)0 || m->kind != NPUCC_MEM_SCRATCHPAD ||
          !((m->separate[x] >> y) & 1u) || npucc_mem_at(d, p[py]) != m || !m->bank_size)
        continue;
      if (((uint64_t)p[px] - m->base) / m->bank_size ==
          ((uint64_t)p[py] - m->base) / m->bank_size) {
        *a = x;
        *b = y;
        return m;
      }
    }
  return (const npucc_mem_desc *)0;
}

static inline uint64_t npucc_min_rate(uint64_t r, uint32_t window_rate) {
  return window_rate && window_rate < r ? window_rate : r;
}

/* Cycles of one DMA command with decoded parameters. */
static inline uint64_t npucc_dma_cycles(const npucc_target_desc *d, const int64_t *p) {
  const npucc_mem_desc *src =
      p[NPUCC_P_ZERO_FILL] ? (const npucc_mem_desc *)0 : npucc_mem_at(d, p[NPUCC_P_SRC_ADDR]);
  const npucc_mem_desc *dst = npucc_mem_at(d, p[NPUCC_P_DST_ADDR]);
  uint64_t rate = d->dma_read_bytes_per_cycle < d->dma_write_bytes_per_cycle
                      ? d->dma_read_bytes_per_cycle
                      : d->dma_write_bytes_per_cycle;
  uint64_t c = d->dma_setup_cycles;
  if (rate == 0)
    rate = d->dma_bytes_per_cycle ? d->dma_bytes_per_cycle : 1;
  if (src != (const npucc_mem_desc *)0 && src->kind == NPUCC_MEM_SYSTEM) {
    rate = npucc_min_rate(rate, src->read_bytes_per_cycle);
    c += src->latency_cycles;
  }
  if (dst != (const npucc_mem_desc *)0 && dst->kind == NPUCC_MEM_SYSTEM) {
    rate = npucc_min_rate(rate, dst->write_bytes_per_cycle);
    c += dst->latency_cycles;
  }
  return c + (uint64_t)p[NPUCC_P_PLANES] * (uint64_t)p[NPUCC_P_ROWS] *
                 npucc_ceil_div_u64((uint64_t)p[NPUCC_P_LENGTH], rate);
}

/* The description's timing expressions of a command kind (NULL: none). */
static inline const npucc_op_timing *npucc_op_timing_of(const npucc_target_desc *d, int kind) {
  uint16_t i;
  for (i = 0; i < d->num_op_timing; ++i)
    if (d->op_timing[i].kind == kind)
      return &d->op_timing[i];
  return (const npucc_op_timing *)0;
}

/* Evaluates the description's steps and MACs expressions of a command kind
 * into *steps / *macs (left alone where the kind has none). Returns 0, or -1
 * when an expression fails or is negative (*which: 0 steps, 1 MACs). */
static inline int npucc_timing_exprs(const npucc_target_desc *d, int kind, const int64_t *p,
                                     uint64_t *steps, uint64_t *macs, int *which) {
  const npucc_op_timing *t = npucc_op_timing_of(d, kind);
  int64_t v;
  if (t == (const npucc_op_timing *)0)
    return 0;
  if (t->steps_count) {
    if (npucc_expr_eval(d->expr_ops + t->steps_first, t->steps_count, p, &v) != 0 || v < 0) {
      *which = 0;
      return -1;
    }
    *steps = (uint64_t)v;
  }
  if (t->macs_count) {
    if (npucc_expr_eval(d->expr_ops + t->macs_first, t->macs_count, p, &v) != 0 || v < 0) {
      *which = 1;
      return -1;
    }
    *macs = (uint64_t)v;
  }
  return 0;
}

/* Cycles of one command with decoded parameters p[NPUCC_P_COUNT] (all values
 * must already be validated as positive where they are sizes). *macs (if not
 * null) receives the multiply-accumulates the command performs. */
static inline uint64_t npucc_command_cycles(const npucc_target_desc *d, int kind, const int64_t *p,
                                            uint64_t *macs) {
  uint64_t steps = 0, m = 0, c;
  uint64_t rows = d->mac_rows ? d->mac_rows : 1, cols = d->mac_cols ? d->mac_cols : 1;
  uint64_t vec = d->vector_elems_per_cycle ? d->vector_elems_per_cycle : 1;
  uint64_t oh = (uint64_t)p[NPUCC_P_OUT_H], ow = (uint64_t)p[NPUCC_P_OUT_W];
  uint64_t kh = (uint64_t)p[NPUCC_P_K_H], kw = (uint64_t)p[NPUCC_P_K_W];
  uint64_t ic = (uint64_t)p[NPUCC_P_IN_CH];
  const npucc_op_limits *op =
      kind >= 0 && kind < NPUCC_KIND_COUNT ? &d->ops[kind] : (const npucc_op_limits *)0;
  switch (kind) {
  case NPUCC_KIND_DMA:
    if (macs)
      *macs = 0;
    return npucc_dma_cycles(d, p) + d->command_overhead_cycles;
  case NPUCC_KIND_CONV: {
    uint64_t oc = (uint64_t)p[NPUCC_P_OUT_CH];
    steps = oh * ow * kh * kw * npucc_ceil_div_u64(ic, cols) * npucc_ceil_div_u64(oc, rows);
    m = oh * ow * oc * kh * kw * ic;
    break;
  }
  case NPUCC_KIND_DEPTHWISE: {
    uint64_t oc = ic * (uint64_t)p[NPUCC_P_DEPTH_MULT];
    steps = oh * ow * npucc_ceil_div_u64(oc, rows) * npucc_ceil_div_u64(kh * kw, cols);
    m = oh * ow * oc * kh * kw;
    break;
  }
  case NPUCC_KIND_MATMUL: {
    uint64_t mm = (uint64_t)p[NPUCC_P_M], k = (uint64_t)p[NPUCC_P_K], n = (uint64_t)p[NPUCC_P_N];
    steps = mm * npucc_ceil_div_u64(k, cols) * npucc_ceil_div_u64(n, rows);
    m = mm * k * n;
    break;
  }
  case NPUCC_KIND_POOL:
    steps = oh * ow * npucc_ceil_div_u64(ic * kh * kw, vec);
    break;
  case NPUCC_KIND_ELTWISE:
    steps = npucc_ceil_div_u64((uint64_t)p[NPUCC_P_LENGTH], vec);
    break;
  default:
    break;
  }
  {
    int which = 0;
    if (npucc_timing_exprs(d, kind, p, &steps, &m, &which) != 0)
      steps = m = 0; /* not reached: proven by the compiler, refused by the simulator */
  }
  if (macs)
    *macs = m;
  c = steps;
  if (op != (const npucc_op_limits *)0 && op->supported) {
    const npucc_mem_desc *bank;
    int a, b;
    c *= op->cycles_per_step ? op->cycles_per_step : 1;
    bank = npucc_bank_conflict(d, kind, p, &a, &b);
    if (bank != (const npucc_mem_desc *)0 && bank->bank_conflict == NPUCC_BANK_CONFLICT_SLOWDOWN)
      c *= bank->conflict_slowdown;
    c += op->fill_cycles + op->overhead_cycles;
  }
  return c + d->command_overhead_cycles;
}

#endif /* NPUCC_TIMING_H */
