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

void npucc_hal_init(const npucc_target_desc *desc) { g_desc = desc; }

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

#else

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

static int any_error(uint32_t s) {
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e)
    if (g_desc->engines[e].error.reg >= 0 && npucc_field_get(s, g_desc->engines[e].error))
      return 1;
  return 0;
}

int npucc_hal_wait(int engine, uint32_t max_polls) {
  const npucc_engine_status *st;
  const npucc_reg_desc *reg;
  uint32_t i;
  if (g_desc == NULL || engine < 0 || engine >= NPUCC_ENGINE_COUNT || g_desc->status_reg < 0)
    return NPUCC_ERR_UNSUPPORTED;
  if (g_desc->completion == NPUCC_COMPLETION_FENCE) {
    /* Completion is observed through a fence: it finishes once everything
     * issued before it has finished. */
    int32_t p[NPUCC_P_COUNT];
    int rc;
    npucc_npu_defaults(p);
    rc = npucc_npu_issue(g_desc, NPUCC_KIND_FENCE, p, NULL);
    if (rc != NPUCC_OK)
      return rc;
    engine = NPUCC_ENGINE_FENCE;
  }
  st = &g_desc->engines[engine];
  if (st->busy.reg < 0)
    return NPUCC_ERR_UNSUPPORTED;
  reg = &g_desc->regs[g_desc->status_reg];
  for (i = 0; i < max_polls; ++i) {
    uint32_t s = npucc_hal_read(reg->offset, reg->width);
    if (any_error(s))
      return NPUCC_ERR_DEVICE;
    if (!npucc_field_get(s, st->busy))
      return NPUCC_OK;
    if (g_hook != NULL && g_hook(g_hook_ctx) != 0)
      return NPUCC_ERR_TIMEOUT;
  }
  return NPUCC_ERR_TIMEOUT;
}

int npucc_hal_wait_all(uint32_t max_polls) {
  int e;
  if (g_desc != NULL && g_desc->completion == NPUCC_COMPLETION_FENCE)
    return npucc_hal_wait(NPUCC_ENGINE_FENCE, max_polls);
  for (e = 0; e < NPUCC_ENGINE_FENCE; ++e) {
    int rc = npucc_hal_wait(e, max_polls);
    if (rc != NPUCC_OK)
      return rc;
  }
  return NPUCC_OK;
}
