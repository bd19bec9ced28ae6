/* npucc_hal.c - HAL back ends: volatile MMIO (firmware) or the simulator
 * (host, NPUCC_HAL_SIM). The completion wait is shared and data-driven from
 * the status bits in the description table. */
#include "npucc_hal.h"

#include "npucc_npu.h"

#include <stddef.h>

#ifdef NPUCC_HAL_SIM
#include "npucc_sim.h"
#endif

static const npucc_target_desc *g_desc;
static npucc_hal_wait_hook g_hook;
static void *g_hook_ctx;
/* Sticky DONE bits and error codes that a clearing read returned for an
 * engine nobody was waiting for yet; the last error a wait reported. */
static uint8_t g_pending_done[NPUCC_ENGINE_COUNT];
static uint32_t g_pending_err[NPUCC_ENGINE_COUNT];
static uint32_t g_last_err;
static int g_last_err_engine = -1;

void npucc_hal_init(const npucc_target_desc *desc) {
  int e;
  g_desc = desc;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    g_pending_done[e] = 0;
    g_pending_err[e] = 0;
  }
  g_last_err = 0;
  g_last_err_engine = -1;
}

const npucc_target_desc *npucc_hal_desc(void) { return g_desc; }

void npucc_hal_set_wait_hook(npucc_hal_wait_hook hook, void *ctx) {
  g_hook = hook;
  g_hook_ctx = ctx;
}

#ifdef NPUCC_HAL_SIM

void npucc_hal_write(uint32_t offset, uint32_t value, uint8_t width_bits) {
  npucc_sim_reg_write(npucc_sim_attached(), offset, value, width_bits);
}

uint32_t npucc_hal_read(uint32_t offset, uint8_t width_bits) {
  return npucc_sim_reg_read(npucc_sim_attached(), offset, width_bits);
}

uint64_t npucc_hal_device_addr(const void *p, uint64_t size, int writable) {
  return npucc_sim_device_addr(npucc_sim_attached(), p, size, writable);
}

#else

uint64_t npucc_hal_device_addr(const void *p, uint64_t size, int writable) {
  (void)size;
  (void)writable;
#ifdef NPUCC_DEVICE_ADDR
  return NPUCC_DEVICE_ADDR(p);
#else
  return (uint64_t)(uintptr_t)p;
#endif
}

void npucc_hal_write(uint32_t offset, uint32_t value, uint8_t width_bits) {
  uintptr_t a = (uintptr_t)g_desc->base_address + offset;
  if (width_bits == 8)
    *(volatile uint8_t *)a = (uint8_t)value;
  else if (width_bits == 16)
    *(volatile uint16_t *)a = (uint16_t)value;
  else
    *(volatile uint32_t *)a = value;
}

uint32_t npucc_hal_read(uint32_t offset, uint8_t width_bits) {
  uintptr_t a = (uintptr_t)g_desc->base_address + offset;
  if (width_bits == 8)
    return *(volatile uint8_t *)a;
  if (width_bits == 16)
    return *(volatile uint16_t *)a;
  return *(volatile uint32_t *)a;
}

#endif

uint32_t npucc_hal_read_status(int reg) {
  const npucc_reg_desc *r = &g_desc->regs[reg];
  uint32_t v = npucc_hal_read(r->offset, r->width);
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_engine_status *st = &g_desc->engines[e];
    if (st->done.f.reg == reg && (st->done.flags & NPUCC_SB_CLEAR_READ) &&
        npucc_status_active(v, st->done))
      g_pending_done[e] = 1;
    if (st->error.f.reg == reg && (st->error.flags & NPUCC_SB_CLEAR_READ) &&
        npucc_status_active(v, st->error))
      g_pending_err[e] = npucc_field_get(v, st->error.f);
  }
  return v;
}

/* Clears a write-1-to-clear status field. */
static void clear_w1c(npucc_status_bit b) {
  const npucc_reg_desc *r = &g_desc->regs[b.f.reg];
  npucc_hal_write(r->offset, npucc_field_put(0, b.f, 0xFFFFFFFFu), r->width);
}

/* Reads the registers holding error fields (each once per poll, plus the
 * completion register `also`); returns the first error found, recording it. */
static int check_errors(int also, uint32_t *also_value) {
  int16_t seen[NPUCC_ENGINE_COUNT + 1];
  uint32_t vals[NPUCC_ENGINE_COUNT + 1];
  int n = 0, e, k;
  if (also >= 0) {
    seen[n] = (int16_t)also;
    vals[n++] = npucc_hal_read_status(also);
    *also_value = vals[0];
  }
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_status_bit *b = &g_desc->engines[e].error;
    uint32_t v = 0, code;
    if (b->f.reg < 0)
      continue;
    for (k = 0; k < n && seen[k] != b->f.reg; ++k)
      ;
    if (k == n) {
      seen[n] = b->f.reg;
      vals[n++] = npucc_hal_read_status(b->f.reg);
    }
    v = vals[k];
    if (npucc_status_active(v, *b))
      code = (b->flags & NPUCC_SB_ACTIVE_LOW) ? 1u : npucc_field_get(v, b->f);
    else
      code = g_pending_err[e]; /* seen by an earlier clearing read */
    if (code != 0) {
      int other;
      g_last_err = code;
      g_last_err_engine = e;
      /* A field shared by several engines cannot tell which one failed. */
      for (other = 0; other < NPUCC_ENGINE_COUNT; ++other) {
        npucc_fieldref f = g_desc->engines[other].error.f;
        if (other != e && f.reg == b->f.reg && f.lsb == b->f.lsb && f.width == b->f.width)
          g_last_err_engine = -1;
      }
      g_pending_err[e] = 0;
      if (b->flags & NPUCC_SB_CLEAR_W1C)
        clear_w1c(*b);
      return NPUCC_ERR_DEVICE;
    }
  }
  return NPUCC_OK;
}

uint32_t npucc_hal_last_error(int *engine) {
  if (engine != NULL)
    *engine = g_last_err_engine;
  return g_last_err;
}

int npucc_hal_wait(int engine, uint32_t max_polls) {
  const npucc_engine_status *st;
  npucc_status_bit use;
  uint32_t i;
  int by_busy;
  if (g_desc == NULL || engine < 0 || engine >= NPUCC_ENGINE_COUNT)
    return NPUCC_ERR_UNSUPPORTED;
  if (g_desc->completion == NPUCC_COMPLETION_FENCE) {
    /* Completion is observed through a fence: it finishes once everything
     * issued before it has finished. */
    int64_t p[NPUCC_P_COUNT];
    int rc;
    npucc_npu_defaults(p);
    rc = npucc_npu_issue(g_desc, NPUCC_KIND_FENCE, p, NULL);
    if (rc != NPUCC_OK)
      return rc;
    engine = NPUCC_ENGINE_FENCE;
  }
  st = &g_desc->engines[engine];
  by_busy = st->busy.f.reg >= 0;
  use = by_busy ? st->busy : st->done;
  if (use.f.reg < 0)
    return NPUCC_ERR_UNSUPPORTED;
  for (i = 0; i < max_polls; ++i) {
    uint32_t v = 0;
    int done;
    if (check_errors(use.f.reg, &v) != NPUCC_OK)
      return NPUCC_ERR_DEVICE;
    done = by_busy ? !npucc_status_active(v, use)
                   : npucc_status_active(v, use) || g_pending_done[engine];
    if (done) {
      /* Acknowledge a sticky DONE so that the next command's completion is
       * not mistaken for this one. */
      if (st->done.flags & NPUCC_SB_CLEAR_W1C)
        clear_w1c(st->done);
      else if ((st->done.flags & NPUCC_SB_CLEAR_READ) && use.f.reg != st->done.f.reg)
        (void)npucc_hal_read_status(st->done.f.reg);
      g_pending_done[engine] = 0;
      return NPUCC_OK;
    }
    if (g_hook != NULL && g_hook(g_hook_ctx) != 0)
      return NPUCC_ERR_TIMEOUT;
  }
  return NPUCC_ERR_TIMEOUT;
}

int npucc_hal_wait_engines(unsigned mask, uint32_t max_polls) {
  int e;
  mask &= (1u << NPUCC_ENGINE_COUNT) - 1u;
  if (mask == 0)
    return NPUCC_OK;
  /* One fence observes every engine: a second one would only cost time. */
  if (g_desc != NULL && g_desc->completion == NPUCC_COMPLETION_FENCE)
    return npucc_hal_wait(NPUCC_ENGINE_FENCE, max_polls);
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    int rc;
    if (!(mask & (1u << e)))
      continue;
    rc = npucc_hal_wait(e, max_polls);
    if (rc != NPUCC_OK)
      return rc;
  }
  return NPUCC_OK;
}

int npucc_hal_wait_all(uint32_t max_polls) {
  return npucc_hal_wait_engines(NPUCC_WAIT_DMA | NPUCC_WAIT_COMPUTE, max_polls);
}

/* Job-queue NPUs: wait until the engine's queue has a free slot. */
static int acquire_slot(const npucc_target_desc *d, int engine) {
  npucc_status_bit f = d->engines[engine].free_slots;
  uint32_t i;
  if (d->queue_depth == 0 || f.f.reg < 0)
    return NPUCC_OK;
  for (i = 0; i < NPUCC_QUEUE_POLLS; ++i) {
    if (npucc_field_get(npucc_hal_read_status(f.f.reg), f.f) > 0)
      return NPUCC_OK;
    if (g_hook != NULL && g_hook(g_hook_ctx) != 0)
      break;
  }
  return NPUCC_ERR_TIMEOUT;
}

int npucc_npu_issue(const npucc_target_desc *d, int kind, const int64_t params[NPUCC_P_COUNT],
                    int *bad_param) {
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  npucc_status_bit done;
  int n = 0, i, engine;
  int rc = npucc_npu_encode(d, kind, params, w, &n, bad_param);
  if (rc != NPUCC_OK)
    return rc;
  engine = npucc_desc_find_cmd(d, kind)->engine;
  rc = acquire_slot(d, engine);
  if (rc != NPUCC_OK)
    return rc;
  /* A sticky DONE still set, or remembered, from an earlier command of this
   * engine must not make the wait for this one return early: acknowledge it
   * before the command starts. */
  done = d->engines[engine].done;
  if ((done.flags & NPUCC_SB_STICKY) && d == g_desc) {
    if (done.flags & NPUCC_SB_CLEAR_W1C)
      clear_w1c(done);
    else if (done.flags & NPUCC_SB_CLEAR_READ)
      (void)npucc_hal_read_status(done.f.reg);
  }
  if (d == g_desc)
    g_pending_done[engine] = 0;
  for (i = 0; i < n; ++i)
    npucc_hal_write(d->regs[w[i].reg].offset, w[i].value, d->regs[w[i].reg].width);
  return NPUCC_OK;
}
