/* npucc_timing.h - The cycle model of an NPU command, from its description.
 *
 * Shared by the simulator (which advances its engines by it) and the
 * compiler (CTable::cycles, for scheduling and tiling decisions), so both
 * agree exactly. Static inline C99, no library calls.
 *
 *   dma       setup_cycles + planes * rows * ceil(length / bytes_per_cycle)
 *   conv      out_h * out_w * k_h * k_w * ceil(in_ch / mac_cols) * ceil(out_ch / mac_rows)
 *   depthwise out_h * out_w * ceil(ch / mac_rows) * ceil(k_h * k_w / mac_cols)
 *   matmul    m * ceil(k / mac_cols) * ceil(n / mac_rows)
 *   pool      out_h * out_w * ceil(ch * k_h * k_w / vector_elems_per_cycle)
 *   eltwise   ceil(length / vector_elems_per_cycle)
 * plus command_overhead_cycles for every command (a fence costs only that,
 * after everything before it has finished).
 */
#ifndef NPUCC_TIMING_H
#define NPUCC_TIMING_H

#include <stdint.h>

#include "npucc_desc.h"

static inline uint64_t npucc_ceil_div_u64(uint64_t a, uint64_t b) {
  return b ? (a + b - 1) / b : a;
}

/* Cycles of one command with decoded parameters p[NPUCC_P_COUNT] (all values
 * must already be validated as positive where they are sizes). *macs (if not
 * null) receives the multiply-accumulates the command performs. */
static inline uint64_t npucc_command_cycles(const npucc_target_desc *d, int kind, const int64_t *p,
                                            uint64_t *macs) {
  uint64_t c = 0, m = 0;
  uint64_t rows = d->mac_rows ? d->mac_rows : 1, cols = d->mac_cols ? d->mac_cols : 1;
  uint64_t oh = (uint64_t)p[NPUCC_P_OUT_H], ow = (uint64_t)p[NPUCC_P_OUT_W];
  uint64_t kh = (uint64_t)p[NPUCC_P_K_H], kw = (uint64_t)p[NPUCC_P_K_W];
  uint64_t ic = (uint64_t)p[NPUCC_P_IN_CH];
  switch (kind) {
  case NPUCC_KIND_DMA:
    c = d->dma_setup_cycles +
        (uint64_t)p[NPUCC_P_PLANES] * (uint64_t)p[NPUCC_P_ROWS] *
            npucc_ceil_div_u64((uint64_t)p[NPUCC_P_LENGTH], d->dma_bytes_per_cycle);
    break;
  case NPUCC_KIND_CONV: {
    uint64_t oc = (uint64_t)p[NPUCC_P_OUT_CH];
    c = oh * ow * kh * kw * npucc_ceil_div_u64(ic, cols) * npucc_ceil_div_u64(oc, rows);
    m = oh * ow * oc * kh * kw * ic;
    break;
  }
  case NPUCC_KIND_DEPTHWISE:
    c = oh * ow * npucc_ceil_div_u64(ic, rows) * npucc_ceil_div_u64(kh * kw, cols);
    m = oh * ow * ic * kh * kw;
    break;
  case NPUCC_KIND_MATMUL: {
    uint64_t mm = (uint64_t)p[NPUCC_P_M], k = (uint64_t)p[NPUCC_P_K], n = (uint64_t)p[NPUCC_P_N];
    c = mm * npucc_ceil_div_u64(k, cols) * npucc_ceil_div_u64(n, rows);
    m = mm * k * n;
    break;
  }
  case NPUCC_KIND_POOL:
    c = oh * ow * npucc_ceil_div_u64(ic * kh * kw, d->vector_elems_per_cycle);
    break;
  case NPUCC_KIND_ELTWISE:
    c = npucc_ceil_div_u64((uint64_t)p[NPUCC_P_LENGTH], d->vector_elems_per_cycle);
    break;
  default:
    break;
  }
  if (macs)
    *macs = m;
  return c + d->command_overhead_cycles;
}

#endif /* NPUCC_TIMING_H */
