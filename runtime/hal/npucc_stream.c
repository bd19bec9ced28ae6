/* npucc_stream.c - Runs NPU command streams (npucc_stream.h). */
#include "npucc_stream.h"

#include "npucc_npu.h"

#include <stddef.h>

static int64_t g_state[2][NPUCC_P_COUNT] NPUCC_RUNTIME_ATTR; /* DMA, compute */
static npucc_stream_fault g_fault NPUCC_RUNTIME_ATTR;
/* No fault (rc NPUCC_OK, every index -1). */
static const npucc_stream_fault g_no_fault = {NPUCC_OK, -1, -1, -1, 0, -1, 0};

void npucc_stream_reset(void) {
  npucc_npu_defaults(g_state[0]);
  npucc_npu_defaults(g_state[1]);
  g_fault = g_no_fault;
  /* Every run starts from registers the HAL has not written yet, as the
   * compiler's estimate does: a run's register writes do not depend on
   * the run before it. */
  if (npucc_hal_desc() != NULL)
    npucc_npu_forget(npucc_hal_desc(), npucc_hal_desc()->shadow);
}

const npucc_stream_fault *npucc_stream_last_fault(void) { return &g_fault; }

/* Records the fault of op i (a command when st is not null) and returns rc. */
static int fail(int rc, uint32_t i, const npucc_stream_op *op, int param, const int64_t *st) {
  g_fault = g_no_fault;
  g_fault.rc = rc;
  g_fault.op = (int32_t)i;
  g_fault.kind = op->kind;
  if (st != NULL && param >= 0) {
    g_fault.param = (int16_t)param;
    g_fault.value = st[param];
  }
  if (rc == NPUCC_ERR_DEVICE) {
    int engine = -1;
    g_fault.device_code = npucc_hal_last_error(&engine);
    g_fault.engine = (int16_t)engine;
  }
  return rc;
}

int npucc_stream_run(const npucc_target_desc *d, const npucc_stream_op *ops, uint32_t n,
                     const npucc_stream_param *params, const uint64_t *bases) {
  uint32_t i, k;
  for (i = 0; i < n; ++i) {
    const npucc_stream_op *op = &ops[i];
    int64_t *st;
    int rc, bad = -1;
    if (op->kind == NPUCC_STREAM_WAIT) {
      rc = npucc_hal_wait_engines(op->arg, NPUCC_STREAM_POLLS);
      if (rc != NPUCC_OK)
        return fail(rc, i, op, -1, NULL);
      continue;
    }
    st = g_state[op->kind == NPUCC_KIND_DMA ? 0 : 1];
    for (k = op->first; k < op->first + op->arg; ++k) {
      const npucc_stream_param *p = &params[k];
      /* An address: an unsigned 32-bit offset from its buffer's base. */
      st[p->param] = p->base ? (int64_t)(bases[p->base] + (uint32_t)p->value) : (int64_t)p->value;
    }
    rc = npucc_npu_issue(d, op->kind, st, &bad);
    if (rc != NPUCC_OK)
      return fail(rc, i, op, bad, st);
  }
  return NPUCC_OK;
}

void npucc_stream_fault_names(const npucc_target_desc *d, const npucc_stream_fault *f,
                              const char **command, const char **param, const char **reg,
                              const char **field) {
  int cmd = f->kind != NPUCC_STREAM_WAIT && f->kind >= 0;
  if (command != NULL)
    *command = f->kind == NPUCC_STREAM_WAIT ? "wait" : cmd ? npucc_kind_name(f->kind) : "";
  if (param != NULL)
    *param = cmd && f->param >= 0 ? npucc_param_name(f->param) : "";
  if (cmd)
    (void)npucc_npu_param_field(d, f->kind, f->param, reg, field);
  else {
    if (reg != NULL)
      *reg = "";
    if (field != NULL)
      *field = "";
  }
}
