/* npucc_stream.c - Runs NPU command streams (npucc_stream.h). */
#include "npucc_stream.h"

#include "npucc_npu.h"

static int64_t g_state[2][NPUCC_P_COUNT]; /* DMA, compute */

void npucc_stream_reset(void) {
  npucc_npu_defaults(g_state[0]);
  npucc_npu_defaults(g_state[1]);
}

int npucc_stream_run(const npucc_target_desc *d, const npucc_stream_op *ops, uint32_t n,
                     const npucc_stream_param *params, const uint64_t *bases) {
  uint32_t i, k;
  for (i = 0; i < n; ++i) {
    const npucc_stream_op *op = &ops[i];
    int64_t *st;
    int rc;
    if (op->kind == NPUCC_STREAM_WAIT) {
      rc = npucc_hal_wait_engines(op->arg, NPUCC_STREAM_POLLS);
      if (rc != NPUCC_OK)
        return rc;
      continue;
    }
    st = g_state[op->kind == NPUCC_KIND_DMA ? 0 : 1];
    for (k = op->first; k < op->first + op->arg; ++k) {
      const npucc_stream_param *p = &params[k];
      /* An address: an unsigned 32-bit offset from its buffer's base. */
      st[p->param] = p->base ? (int64_t)(bases[p->base] + (uint32_t)p->value) : (int64_t)p->value;
    }
    rc = npucc_npu_issue(d, op->kind, st, (int *)0);
    if (rc != NPUCC_OK)
      return rc;
  }
  return NPUCC_OK;
}
