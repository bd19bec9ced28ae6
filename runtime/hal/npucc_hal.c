/* npucc_hal.c - HAL back ends: volatile MMIO (firmware) or the simulator
 * (host, NPUCC_HAL_SIM). The completion wait is shared and data-driven from
 * the status bits in the description table. */
#include "npucc_hal.h"

#include "npucc_npu.h"

#include <stddef.h>

#ifdef NPUCC_HAL_SIM
#include "npucc_sim.h"
#endif

/* All zero-initialised (NPUCC_RUNTIME_ATTR may place them in any .bss-like
 * section). */
static const npucc_target_desc *g_desc NPUCC_RUNTIME_ATTR;
static npucc_hal_wait_hook g_hook NPUCC_RUNTIME_ATTR;
static void *g_hook_ctx NPUCC_RUNTIME_ATTR;
/* Sticky DONE bits and error codes that a clearing read returned for an
 * engine nobody was waiting for yet; the last error a wait reported and its
 * engine + 1 (0: none, or a field shared by several engines). */
static uint8_t g_pending_done[NPUCC_ENGINE_COUNT] NPUCC_RUNTIME_ATTR;
static uint32_t g_pending_err[NPUCC_ENGINE_COUNT] NPUCC_RUNTIME_ATTR;
static uint32_t g_last_err NPUCC_RUNTIME_ATTR;
static int g_last_err_engine1 NPUCC_RUNTIME_ATTR;
/* Delivery "buffer": words appended to the command buffer since it was last
 * (re)started from its first word, and how many of them were kicked. */
static uint32_t g_buf_used NPUCC_RUNTIME_ATTR;
static uint32_t g_buf_kicked NPUCC_RUNTIME_ATTR;

static void reg_write(const npucc_target_desc *d, uint32_t offset, uint64_t value, unsigned width);
static uint64_t reg_read(const npucc_target_desc *d, uint32_t offset, unsigned width);
static uint64_t w1c_bits(const npucc_target_desc *d, int r);

void npucc_hal_init(const npucc_target_desc *desc) {
  int e;
  g_desc = desc;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    g_pending_done[e] = 0;
    g_pending_err[e] = 0;
  }
  g_last_err = 0;
  g_last_err_engine1 = 0;
  g_buf_used = 0;
  g_buf_kicked = 0;
  /* The description's init writes, in order. */
  for (e = 0; desc != NULL && e < (int)desc->num_init; ++e) {
    npucc_fieldref f = desc->init[e].field;
    const npucc_reg_desc *r = &desc->regs[f.reg];
    uint64_t v = npucc_field_put(0, f, desc->init[e].value);
    if (r->flags & NPUCC_REG_RMW)
      v |= reg_read(desc, r->offset, r->width) & ~(npucc_width_mask(f.width) << f.lsb) &
           ~w1c_bits(desc, f.reg);
    reg_write(desc, r->offset, v, r->width);
  }
  if (desc != NULL)
    npucc_npu_forget(desc, desc->shadow);
}

const npucc_target_desc *npucc_hal_desc(void) { return g_desc; }

void npucc_hal_set_wait_hook(npucc_hal_wait_hook hook, void *ctx) {
  g_hook = hook;
  g_hook_ctx = ctx;
}

#ifdef NPUCC_HAL_SIM

/* One bus access of `bits` bits. */
static void bus_write(const npucc_target_desc *d, uint32_t offset, uint64_t value, unsigned bits) {
  (void)d;
  npucc_sim_reg_write(npucc_sim_attached(), offset, value, (uint8_t)bits);
}

static uint64_t bus_read(const npucc_target_desc *d, uint32_t offset, unsigned bits) {
  (void)d;
  return npucc_sim_reg_read(npucc_sim_attached(), offset, (uint8_t)bits);
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

/* One volatile bus access of `bits` bits. */
static void bus_write(const npucc_target_desc *d, uint32_t offset, uint64_t value, unsigned bits) {
  uintptr_t a = (uintptr_t)d->base_address + offset;
  if (bits == 8)
    *(volatile uint8_t *)a = (uint8_t)value;
  else if (bits == 16)
    *(volatile uint16_t *)a = (uint16_t)value;
  else if (bits == 32)
    *(volatile uint32_t *)a = (uint32_t)value;
  else
    *(volatile uint64_t *)a = value;
}

static uint64_t bus_read(const npucc_target_desc *d, uint32_t offset, unsigned bits) {
  uintptr_t a = (uintptr_t)d->base_address + offset;
  if (bits == 8)
    return *(volatile uint8_t *)a;
  if (bits == 16)
    return *(volatile uint16_t *)a;
  if (bits == 32)
    return *(volatile uint32_t *)a;
  return *(volatile uint64_t *)a;
}

#endif

/* A register access: one bus access when the register is not wider than the
 * bus, else width / bus_access_bits accesses in the description's order
 * (the access at `offset` holds the low bits). */
static void reg_write(const npucc_target_desc *d, uint32_t offset, uint64_t value, unsigned width) {
  unsigned a = d->bus_access_bits ? d->bus_access_bits : 32u, n, k;
  if (width <= a) {
    bus_write(d, offset, value, width);
    return;
  }
  n = width / a;
  for (k = 0; k < n; ++k) {
    unsigned part = d->bus_order == NPUCC_BUS_HIGH_FIRST ? n - 1 - k : k;
    bus_write(d, offset + part * (a / 8u), (value >> (part * a)) & npucc_width_mask(a), a);
  }
}

static uint64_t reg_read(const npucc_target_desc *d, uint32_t offset, unsigned width) {
  unsigned a = d->bus_access_bits ? d->bus_access_bits : 32u, n, k;
  uint64_t v = 0;
  if (width <= a)
    return bus_read(d, offset, width);
  n = width / a;
  for (k = 0; k < n; ++k) {
    unsigned part = d->bus_order == NPUCC_BUS_HIGH_FIRST ? n - 1 - k : k;
    v |= (bus_read(d, offset + part * (a / 8u), a) & npucc_width_mask(a)) << (part * a);
  }
  return v;
}

void npucc_hal_write(uint32_t offset, uint64_t value, uint8_t width_bits) {
  uint16_t r;
  reg_write(g_desc, offset, value, width_bits);
  /* A write behind the command layer's back: its record of the register no
   * longer holds. */
  for (r = 0; g_desc->shadow != NULL && r < g_desc->num_regs; ++r)
    if (g_desc->regs[r].offset == offset)
      g_desc->shadow->known[r] = 0;
}

uint64_t npucc_hal_read(uint32_t offset, uint8_t width_bits) {
  return reg_read(g_desc, offset, width_bits);
}

/* An error code as the 32-bit value the HAL reports (saturated). */
static uint32_t code32(uint64_t v) { return v > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)v; }

uint64_t npucc_hal_read_status(int reg) {
  const npucc_reg_desc *r = &g_desc->regs[reg];
  uint64_t v = npucc_hal_read(r->offset, r->width);
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_engine_status *st = &g_desc->engines[e];
    if (st->done.f.reg == reg && (st->done.flags & NPUCC_SB_CLEAR_READ) &&
        npucc_status_active(v, st->done))
      g_pending_done[e] = 1;
    if (st->error.f.reg == reg && (st->error.flags & NPUCC_SB_CLEAR_READ) &&
        npucc_status_active(v, st->error))
      g_pending_err[e] = code32(npucc_field_get(v, st->error.f));
  }
  return v;
}

/* Clears a status field cleared by a write: all ones into a
 * write-1-to-clear field, or the clear value into its clear field. */
static void clear_by_write(npucc_status_bit b) {
  npucc_fieldref f = (b.flags & NPUCC_SB_CLEAR_FIELD) ? b.clear.field : b.f;
  uint64_t v = (b.flags & NPUCC_SB_CLEAR_FIELD) ? b.clear.value : ~(uint64_t)0;
  const npucc_reg_desc *r = &g_desc->regs[f.reg];
  uint64_t w = npucc_field_put(0, f, v);
  /* A read-modify-write register keeps its other bits (other write-1-to-
   * clear bits written back as 0). */
  if (r->flags & NPUCC_REG_RMW)
    w |= reg_read(g_desc, r->offset, r->width) & ~(npucc_width_mask(f.width) << f.lsb) &
         ~w1c_bits(g_desc, f.reg);
  npucc_hal_write(r->offset, w, r->width);
}

#define CLEARED_BY_WRITE (NPUCC_SB_CLEAR_W1C | NPUCC_SB_CLEAR_FIELD)

/* Reads the registers holding error fields (each once per poll, plus the
 * completion register `also`); returns the first error found, recording it. */
static int check_errors(int also, uint64_t *also_value) {
  int16_t seen[NPUCC_ENGINE_COUNT + 1];
  uint64_t vals[NPUCC_ENGINE_COUNT + 1];
  int n = 0, e, k;
  if (also >= 0) {
    seen[n] = (int16_t)also;
    vals[n++] = npucc_hal_read_status(also);
    *also_value = vals[0];
  }
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_status_bit *b = &g_desc->engines[e].error;
    uint64_t v = 0;
    uint32_t code;
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
      code = (b->flags & NPUCC_SB_ACTIVE_LOW) ? 1u : code32(npucc_field_get(v, b->f));
    else
      code = g_pending_err[e]; /* seen by an earlier clearing read */
    if (code != 0) {
      int other;
      g_last_err = code;
      g_last_err_engine1 = e + 1;
      /* A field shared by several engines cannot tell which one failed. */
      for (other = 0; other < NPUCC_ENGINE_COUNT; ++other) {
        npucc_fieldref f = g_desc->engines[other].error.f;
        if (other != e && f.reg == b->f.reg && f.lsb == b->f.lsb && f.width == b->f.width)
          g_last_err_engine1 = 0;
      }
      g_pending_err[e] = 0;
      if (b->flags & CLEARED_BY_WRITE)
        clear_by_write(*b);
      return NPUCC_ERR_DEVICE;
    }
  }
  return NPUCC_OK;
}

uint32_t npucc_hal_last_error(int *engine) {
  if (engine != NULL)
    *engine = g_last_err_engine1 - 1;
  return g_last_err;
}

/* Writes the kick's fields that lie in register `reg` (read-modify-write
 * where the register is). */
static void write_kick_reg(const npucc_target_desc *d, int reg, const npucc_fieldref *f,
                           const uint64_t *v) {
  const npucc_reg_desc *r = &d->regs[reg];
  uint64_t w = 0, m = 0;
  int k;
  for (k = 0; k < 3; ++k)
    if (f[k].reg == reg) {
      w = npucc_field_put(w, f[k], v[k]);
      m |= npucc_width_mask(f[k].width) << f[k].lsb;
    }
  if (r->flags & NPUCC_REG_RMW)
    w |= reg_read(d, r->offset, r->width) & ~m & ~w1c_bits(d, reg);
  reg_write(d, r->offset, w, r->width);
}

int npucc_hal_kick(void) {
  const npucc_cmdbuf_desc *b = g_desc != NULL ? g_desc->cmdbuf : NULL;
  npucc_fieldref f[3];
  uint64_t v[3], wb;
  uint32_t n;
  if (b == NULL || g_buf_used == g_buf_kicked)
    return NPUCC_OK;
  wb = b->word_bits / 8u;
  n = g_buf_used - g_buf_kicked;
  f[0] = b->address;
  f[1] = b->length;
  f[2] = b->kick.field;
  v[0] = npucc_hal_device_addr(b->words, (uint64_t)b->capacity_words * wb, 1) +
         (uint64_t)g_buf_kicked * wb;
  v[1] = b->length_bytes ? (uint64_t)n * wb : (uint64_t)n;
  v[2] = b->kick.value;
  if (v[0] > npucc_width_mask(f[0].width) || v[1] > npucc_width_mask(f[1].width))
    return NPUCC_ERR_RANGE;
  /* The words reach memory before the kick (caches, write buffers: the port's macro). */
  NPUCC_HAL_CMDBUF_SYNC((uint8_t *)b->words + (size_t)g_buf_kicked * (size_t)wb,
                        (size_t)n * (size_t)wb);
  g_buf_kicked = g_buf_used;
  write_kick_reg(g_desc, f[0].reg, f, v);
  if (f[1].reg != f[0].reg)
    write_kick_reg(g_desc, f[1].reg, f, v);
  write_kick_reg(g_desc, f[2].reg, f, v);
  return NPUCC_OK;
}

static int wait_engine(int engine, uint32_t max_polls);

int npucc_hal_wait(int engine, uint32_t max_polls) {
  int rc = wait_engine(engine, max_polls);
  /* After an error or a timeout the NPU may have been reset: registers that
   * persist are written again. */
  if (rc != NPUCC_OK && g_desc != NULL)
    npucc_npu_forget(g_desc, g_desc->shadow);
  return rc;
}

static int wait_engine(int engine, uint32_t max_polls) {
  const npucc_engine_status *st;
  npucc_status_bit use;
  uint32_t i;
  int by_busy;
  if (g_desc == NULL || engine < 0 || engine >= NPUCC_ENGINE_COUNT)
    return NPUCC_ERR_UNSUPPORTED;
  {
    /* Frames still in the command buffer start now. */
    int rc = npucc_hal_kick();
    if (rc != NPUCC_OK)
      return rc;
  }
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
    uint64_t v = 0;
    int done;
    if (check_errors(use.f.reg, &v) != NPUCC_OK)
      return NPUCC_ERR_DEVICE;
    done = by_busy ? !npucc_status_active(v, use)
                   : npucc_status_active(v, use) || g_pending_done[engine];
    if (done) {
      /* Acknowledge a sticky DONE so that the next command's completion is
       * not mistaken for this one. */
      if (st->done.flags & CLEARED_BY_WRITE)
        clear_by_write(st->done);
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

/* The write-1-to-clear status fields of register r: a read-modify-write
 * writes them back as 0, which clears nothing. */
static uint64_t w1c_bits(const npucc_target_desc *d, int r) {
  uint64_t m = 0;
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    npucc_status_bit b[2];
    int k;
    b[0] = d->engines[e].done;
    b[1] = d->engines[e].error;
    for (k = 0; k < 2; ++k)
      if (b[k].f.reg == r && (b[k].flags & NPUCC_SB_CLEAR_W1C))
        m |= npucc_width_mask(b[k].f.width) << b[k].f.lsb;
  }
  return m;
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
  const npucc_delivery_desc *dl;
  const npucc_cmd_desc *c;
  npucc_status_bit done;
  int n = 0, i, engine;
  int rc = npucc_npu_encode(d, kind, params, w, &n, bad_param);
  if (rc != NPUCC_OK)
    return rc;
  c = npucc_desc_find_cmd(d, kind); /* found: the encoding succeeded */
  engine = c->engine;
  rc = acquire_slot(d, engine);
  if (rc != NPUCC_OK)
    return rc;
  /* A sticky DONE still set, or remembered, from an earlier command of this
   * engine must not make the wait for this one return early: acknowledge it
   * before the command starts. */
  done = d->engines[engine].done;
  if ((done.flags & NPUCC_SB_STICKY) && d == g_desc) {
    if (done.flags & CLEARED_BY_WRITE)
      clear_by_write(done);
    else if (done.flags & NPUCC_SB_CLEAR_READ)
      (void)npucc_hal_read_status(done.f.reg);
  }
  if (d == g_desc)
    g_pending_done[engine] = 0;
  dl = d->num_deliveries ? npucc_desc_delivery(d, c) : NULL;
  if (dl != NULL && dl->mode == NPUCC_DELIVERY_INSN) {
    /* Two words per instruction, an odd last word with 0. */
    for (i = 0; i < n; i += 2) {
      uint64_t b = i + 1 < n ? w[i + 1].value : 0;
#ifdef NPUCC_HAL_SIM
      NPUCC_HAL_INSN(dl->opcode, dl->funct3, dl->funct7, w[i].value, b);
#else
      if (d->insn == NULL)
        return NPUCC_ERR_UNSUPPORTED;
      d->insn((uint16_t)(dl - d->deliveries), w[i].value, b);
#endif
    }
    return NPUCC_OK;
  }
  if (dl != NULL && dl->mode == NPUCC_DELIVERY_BUFFER) {
    /* Appended to the command buffer; a kick starts it. A frame that does
     * not fit restarts the buffer from its first word once everything
     * kicked has completed (the NPU may still be reading those words). */
    const npucc_cmdbuf_desc *b = d->cmdbuf;
    if (b == NULL || d != g_desc)
      return NPUCC_ERR_UNSUPPORTED;
    if (g_buf_used + (uint32_t)n > b->capacity_words) {
      rc = npucc_hal_kick();
      if (rc == NPUCC_OK)
        rc = npucc_hal_wait_all(NPUCC_CMDBUF_POLLS);
      if (rc != NPUCC_OK)
        return rc;
      g_buf_used = 0;
      g_buf_kicked = 0;
    }
    for (i = 0; i < n; ++i, ++g_buf_used)
      if (b->word_bits == 64)
        ((volatile uint64_t *)b->words)[g_buf_used] = w[i].value;
      else
        ((volatile uint32_t *)b->words)[g_buf_used] = (uint32_t)w[i].value;
    return NPUCC_OK;
  }
  if (dl != NULL && dl->mode == NPUCC_DELIVERY_FIFO) {
    /* Every word of the frame, in order, into the FIFO register. */
    const npucc_reg_desc *r = &d->regs[dl->reg];
    for (i = 0; i < n; ++i)
      reg_write(d, r->offset, w[i].value, r->width);
    return NPUCC_OK;
  }
  for (i = 0; i < n; ++i) {
    const npucc_reg_desc *r = &d->regs[w[i].reg];
    uint64_t v = w[i].value;
    if (npucc_npu_skip(d, c, &w[i], d->shadow))
      continue; /* the register holds the value already */
    if (r->flags & NPUCC_REG_RMW)
      v |= reg_read(d, r->offset, r->width) & ~w[i].mask & ~w1c_bits(d, w[i].reg);
    reg_write(d, r->offset, v, r->width);
    npucc_npu_note(d, d->shadow, w[i].reg, v);
  }
  return NPUCC_OK;
}
