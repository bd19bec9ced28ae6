/* npucc_sim.c - Simulator core: register file, doorbell and opcode decoding,
 * the two-engine timeline (optionally with job queues), the protocol checks
 * and the statistics. Status bits: npucc_sim_status.c; memories:
 * npucc_sim_mem.c; command semantics: npucc_sim_ops.c and (conv, depthwise,
 * matmul) npucc_sim_mac.c; frame words arriving through a FIFO register or
 * custom instructions: npucc_sim_delivery.c. */
#include "npucc_sim_internal.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_timing.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static npucc_sim *g_attached;

static const char *const g_engine_names[NPUCC_ENGINE_COUNT] = {"DMA", "compute", "fence"};

static void mark_written(npucc_sim *s, npucc_fieldref f) {
  if (f.reg >= 0 && s->is_status[f.reg])
    s->is_status[f.reg] = SIM_REG_SHARED;
}

/* Status registers that commands also write (a start bit beside opcode
 * fields): their written bits are kept, the status fields computed. */
static void mark_shared(npucc_sim *s) {
  uint16_t i, k;
  int p;
  for (i = 0; i < s->d->num_cmds; ++i) {
    const npucc_cmd_desc *c = &s->d->cmds[i];
    mark_written(s, c->doorbell.field);
    for (k = 0; k < c->num_select; ++k)
      mark_written(s, c->select[k].field);
    for (k = 0; k < c->num_bindings; ++k) {
      mark_written(s, c->bindings[k].field);
      for (p = 1; p < c->bindings[k].num_parts; ++p)
        mark_written(s, s->d->parts[c->bindings[k].more + p - 1]);
    }
  }
}

npucc_sim *npucc_sim_create(const npucc_target_desc *d) {
  npucc_sim *s = (npucc_sim *)calloc(1, sizeof(npucc_sim));
  int e;
  if (s == NULL)
    return NULL;
  s->d = d;
  s->err_cmd = -1;
  s->insn_dl = -1;
  s->regs = (uint64_t *)calloc(d->num_regs ? d->num_regs : 1, sizeof(uint64_t));
  s->is_status = (uint8_t *)calloc(d->num_regs ? d->num_regs : 1, 1);
  s->arrived = (uint8_t *)calloc(d->num_regs ? d->num_regs : 1, 1);
  s->staged = (uint64_t *)calloc(d->num_regs ? d->num_regs : 1, sizeof(uint64_t));
  s->auto_next = (uint64_t *)calloc(d->num_mems ? d->num_mems : 1, sizeof(uint64_t));
  s->fifo_fill = (uint16_t *)calloc(d->num_regs ? d->num_regs : 1, sizeof(uint16_t));
  s->written = (uint8_t *)calloc(d->num_regs ? d->num_regs : 1, 1);
  if (s->regs == NULL || s->is_status == NULL || s->arrived == NULL || s->staged == NULL ||
      s->auto_next == NULL || s->fifo_fill == NULL || s->written == NULL ||
      sim_alloc_memories(s) != 0) {
    npucc_sim_destroy(s);
    return NULL;
  }
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_engine_status *st = &d->engines[e];
    const npucc_status_bit *bits[4];
    int k;
    bits[0] = &st->busy;
    bits[1] = &st->done;
    bits[2] = &st->error;
    bits[3] = &st->free_slots;
    for (k = 0; k < 4; ++k)
      if (bits[k]->f.reg >= 0)
        s->is_status[bits[k]->f.reg] = SIM_REG_STATUS;
    s->eng[e].cmd = -1;
    s->eng[e].cleared = -1;
    s->eng[e].fifo_reg = -1;
  }
  mark_shared(s);
  return s;
}

void npucc_sim_destroy(npucc_sim *s) {
  if (s == NULL)
    return;
  if (g_attached == s)
    g_attached = NULL;
  sim_free_memories(s);
  free(s->regs);
  free(s->is_status);
  free(s->arrived);
  free(s->staged);
  free(s->auto_next);
  free(s->fifo_fill);
  free(s->written);
  free(s->cmds);
  free(s->observed);
  free(s);
}

const npucc_target_desc *npucc_sim_desc(const npucc_sim *s) { return s->d; }

int sim_fail(npucc_sim *s, int idx, uint32_t code, const char *fmt, ...) {
  va_list ap;
  int e;
  if (s->failed)
    return -1;
  s->failed = 1;
  s->err_cmd = idx;
  if (idx >= 0) {
    int n = snprintf(s->err, sizeof(s->err), "command #%d (%s): ", idx,
                     npucc_kind_name(s->cmds[idx].kind));
    if (n < 0)
      n = 0;
    va_start(ap, fmt);
    vsnprintf(s->err + n, sizeof(s->err) - (size_t)n, fmt, ap);
    va_end(ap);
    s->eng[s->cmds[idx].engine].error = code;
  } else {
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof(s->err), fmt, ap);
    va_end(ap);
    /* Not tied to a command: every engine reports it, so no wait succeeds. */
    for (e = 0; e < NPUCC_ENGINE_COUNT; ++e)
      s->eng[e].error = code;
  }
  return -1;
}

/* The widest bus access (a table without one: 32 bits). */
unsigned sim_bus_bits(const npucc_sim *s) {
  return s->d->bus_access_bits ? s->d->bus_access_bits : 32u;
}

/* The register holding byte `offset`, if `bits` is the width of its bus
 * accesses and `offset` starts one of them; *part gets the access's index
 * (0: the low bits). -1 if there is no such register. */
static int reg_at(const npucc_sim *s, uint32_t offset, unsigned bits, unsigned *part) {
  uint16_t i;
  for (i = 0; i < s->d->num_regs; ++i) {
    const npucc_reg_desc *r = &s->d->regs[i];
    unsigned a = r->width < sim_bus_bits(s) ? r->width : sim_bus_bits(s);
    if (r->flags & NPUCC_REG_WORD)
      break; /* frame words follow the registers and have no address */
    if (offset < r->offset || offset - r->offset >= r->width / 8u)
      continue;
    if (bits != a || (offset - r->offset) % (a / 8u))
      return -1;
    *part = (offset - r->offset) / (a / 8u);
    return (int)i;
  }
  return -1;
}

/* The bits of access `part` of register r (the whole register when it is
 * no wider than the bus). */
static npucc_fieldref access_bits(const npucc_sim *s, int r, unsigned part) {
  npucc_fieldref f;
  unsigned w = s->d->regs[r].width, a = w < sim_bus_bits(s) ? w : sim_bus_bits(s);
  f.reg = (int16_t)r;
  f.lsb = (uint8_t)(part * a);
  f.width = (uint8_t)a;
  return f;
}

int sim_engine_busy(const npucc_sim *s, int e) {
  return s->eng[e].cmd >= 0 && s->eng[e].end > s->cpu;
}

/* Job queue: commands of engine e not yet completed at the current time. */
unsigned sim_queue_pending(npucc_sim *s, int e) {
  sim_engine *g = &s->eng[e];
  while (g->qcount && g->qend[g->qhead] <= s->cpu) {
    g->qhead = (g->qhead + 1) % NPUCC_SIM_QUEUE_MAX;
    g->qcount--;
  }
  return g->qcount;
}

/* The CPU saw the engine's state at the current time: every command of that
 * engine that has completed by now counts as waited for. */
void sim_observe(npucc_sim *s, int e, size_t limit) {
  size_t i;
  for (i = s->eng[e].obs_cursor; i < limit; ++i) {
    if (s->cmds[i].engine != e)
      continue;
    if (s->cmds[i].end > s->cpu)
      break;
    s->observed[i] = 1;
  }
  s->eng[e].obs_cursor = i;
}

static int grow_commands(npucc_sim *s) {
  size_t cap;
  npucc_sim_cmd_stats *nc;
  uint8_t *no;
  if (s->num_cmds < s->cap_cmds)
    return 0;
  cap = s->cap_cmds ? s->cap_cmds * 2 : 64;
  nc = (npucc_sim_cmd_stats *)realloc(s->cmds, cap * sizeof(npucc_sim_cmd_stats));
  if (nc)
    s->cmds = nc;
  no = (uint8_t *)realloc(s->observed, cap);
  if (no)
    s->observed = no;
  if (!nc || !no)
    return sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL, "out of memory");
  s->cap_cmds = cap;
  return 0;
}

/* When a new command of engine e may start; fails on a busy engine (no job
 * queue) or a full queue. Returns 0 or -1. */
static int start_time(npucc_sim *s, int idx, int e, uint64_t *start) {
  int other = e == NPUCC_ENGINE_DMA ? NPUCC_ENGINE_COMPUTE : NPUCC_ENGINE_DMA;
  *start = s->cpu;
  if (s->d->queue_depth && e != NPUCC_ENGINE_FENCE) {
    if (sim_queue_pending(s, e) >= s->d->queue_depth)
      return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL,
                      "committed while the %s engine's job queue is full (%u commands)",
                      g_engine_names[e], (unsigned)s->d->queue_depth);
    if (s->eng[e].cmd >= 0 && s->eng[e].end > *start)
      *start = s->eng[e].end;
    if (!s->d->concurrent && s->eng[other].cmd >= 0 && s->eng[other].end > *start)
      *start = s->eng[other].end;
    return 0;
  }
  if (sim_engine_busy(s, e))
    return sim_fail(s, idx, NPUCC_DEVERR_HAZARD,
                    "started while the %s engine is busy with command #%d until cycle %llu",
                    g_engine_names[e], s->eng[e].cmd, (unsigned long long)s->eng[e].end);
  if (e != NPUCC_ENGINE_FENCE && !s->d->concurrent && sim_engine_busy(s, other))
    return sim_fail(s, idx, NPUCC_DEVERR_HAZARD,
                    "started while the %s engine is busy with command #%d until cycle %llu "
                    "(this NPU cannot overlap DMA and compute)",
                    g_engine_names[other], s->eng[other].cmd,
                    (unsigned long long)s->eng[other].end);
  return 0;
}

/* Sticky DONE bookkeeping when a command of engine e is committed. */
static int check_done_cleared(npucc_sim *s, int idx, int e) {
  sim_engine *g = &s->eng[e];
  npucc_status_bit done = s->d->engines[e].done;
  if (g->cmd >= 0 && g->cmd > g->cleared && g->end <= s->cpu)
    g->stale = 1; /* the engine went idle after g->cmd and nobody cleared DONE */
  if ((done.flags & NPUCC_SB_REQUIRE_CLEAR) && sim_done_latched(s, e))
    return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL,
                    "started while the sticky DONE bit of the %s engine (set by command #%d) "
                    "was not cleared; the description requires clearing it before the "
                    "engine's next command",
                    g_engine_names[e], g->cmd);
  return 0;
}

/* Every computed field ("fields") must hold what its expression or cases
 * table gives for the decoded parameters: a firmware that packs the words
 * itself and gets one wrong is caught here. */
static int check_fields(npucc_sim *s, int idx, const npucc_cmd_desc *c, const int64_t *p) {
  npucc_field_mismatch m;
  const npucc_field_binding *fb;
  const npucc_reg_desc *r;
  const char *fname = NULL;
  uint16_t k;
  int rc;
  if (s->d->num_field_bindings == 0)
    return 0;
  rc = npucc_npu_check_fields(s->d, c, s->regs, p, &m);
  if (rc == NPUCC_OK)
    return 0;
  fb = &s->d->field_bindings[m.binding];
  r = &s->d->regs[fb->field.reg];
  for (k = 0; k < r->num_fields; ++k)
    if (s->d->fields[r->first_field + k].lsb == fb->field.lsb &&
        s->d->fields[r->first_field + k].width == fb->field.width)
      fname = s->d->fields[r->first_field + k].name;
  if (rc == 1)
    return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL,
                    "field '%s%s%s' holds %llu, its %s gives %llu", r->name, fname ? "." : "",
                    fname ? fname : "", (unsigned long long)m.held,
                    fb->kind == NPUCC_FB_CASES ? "cases table" : "expression",
                    (unsigned long long)m.expected);
  return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL,
                  "field '%s%s%s' (holding %llu): its %s has no value for the decoded "
                  "parameters (no case matches, or the expression fails or does not fit)",
                  r->name, fname ? "." : "", fname ? fname : "", (unsigned long long)m.held,
                  fb->kind == NPUCC_FB_CASES ? "cases table" : "expression");
}

/* Register r holds nothing a command may rely on: it does not persist and
 * was not written since the previous command started. */
static int sim_stale(const npucc_sim *s, int r) {
  return r >= 0 && !(s->d->regs[r].flags & NPUCC_REG_PERSIST) && !s->written[r];
}

/* A command written to its registers reads only registers written since the
 * previous command started, or registers that persist: a HAL that leaves out
 * a write where the description does not say registers persist fails here
 * (the real NPU would run on whatever its registers hold). */
static int check_rewritten(npucc_sim *s, int idx, const npucc_cmd_desc *c) {
  int r = -1, j;
  uint16_t k;
  for (k = 0; k < c->num_bindings && r < 0; ++k)
    for (j = 0; j < c->bindings[k].num_parts && r < 0; ++j) {
      const npucc_binding *b = &c->bindings[k];
      int reg = j == 0 ? b->field.reg : s->d->parts[b->more + j - 1].reg;
      if (sim_stale(s, reg))
        r = reg;
    }
  for (k = 0; k < s->d->num_field_bindings && r < 0; ++k)
    if (&s->d->cmds[s->d->field_bindings[k].cmd] == c &&
        sim_stale(s, s->d->field_bindings[k].field.reg))
      r = s->d->field_bindings[k].field.reg;
  for (k = 0; k < c->num_select && r < 0; ++k)
    if (sim_stale(s, c->select[k].field.reg))
      r = c->select[k].field.reg;
  if (r < 0)
    return 0;
  return sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL,
                  "register %s, read by this '%s' command, was not written since the previous "
                  "command started (its value does not persist: the description does not set "
                  "\"registers_persist\")",
                  s->d->regs[r].name, npucc_kind_name(c->kind));
}

void sim_launch(npucc_sim *s, const npucc_cmd_desc *c) {
  int64_t p[NPUCC_P_COUNT];
  npucc_sim_cmd_stats *st;
  uint64_t start = 0;
  int idx, e = c->engine;
  if (grow_commands(s) != 0)
    return;
  idx = (int)s->num_cmds++;
  st = &s->cmds[idx];
  memset(st, 0, sizeof(*st));
  st->kind = c->kind;
  st->engine = e;
  st->start = st->end = s->cpu;
  s->observed[idx] = 0;
  if (!s->failed && s->init_next < s->d->num_init) {
    sim_fail(s, idx, NPUCC_DEVERR_PROTOCOL,
             "started before the description's init writes (%u of %u done; npucc_hal_init "
             "performs them)",
             (unsigned)s->init_next, (unsigned)s->d->num_init);
    return;
  }
  {
    int mmio = !(s->d->num_deliveries && npucc_desc_delivery(s->d, c) != NULL);
    uint16_t r;
    if (!s->failed && mmio && check_rewritten(s, idx, c) != 0)
      return;
    for (r = 0; r < s->d->num_regs; ++r)
      s->written[r] = 0;
  }
  if (s->failed || start_time(s, idx, e, &start) != 0 || check_done_cleared(s, idx, e) != 0)
    return;
  st->start = start;
  npucc_npu_decode(s->d, c, s->regs, p);
  if (check_fields(s, idx, c, p) != 0)
    return;
  if (e == NPUCC_ENGINE_FENCE) {
    /* A fence completes when everything issued before it has completed. */
    uint64_t end = start;
    int k;
    for (k = 0; k < NPUCC_ENGINE_FENCE; ++k)
      if (s->eng[k].cmd >= 0 && s->eng[k].end > end)
        end = s->eng[k].end;
    st->end = end + s->d->command_overhead_cycles;
  } else {
    uint64_t steps = 0, macs = 0;
    int which = 0;
    if (npucc_timing_exprs(s->d, c->kind, p, &steps, &macs, &which) != 0) {
      sim_fail(s, idx, NPUCC_DEVERR_LIMIT,
               "field value out of range: the description's timing.operations.%s.%s expression "
               "fails (or is negative) for these parameters",
               npucc_kind_name(c->kind), which ? "macs" : "steps");
      return;
    }
    if (sim_exec(s, idx, c, p) != 0)
      return;
    st->cycles = npucc_command_cycles(s->d, c->kind, p, &st->macs);
    st->end = st->start + st->cycles;
    if (st->macs && st->cycles)
      st->mac_utilisation =
          (double)st->macs / ((double)st->cycles * s->d->mac_rows * s->d->mac_cols);
    s->eng[e].busy_cycles += st->cycles;
  }
  st->cycles = st->end - st->start;
  s->eng[e].cmd = idx;
  s->eng[e].end = st->end;
  {
    const npucc_delivery_desc *dl = s->d->num_deliveries ? npucc_desc_delivery(s->d, c) : NULL;
    int fifo = dl != NULL && dl->mode == NPUCC_DELIVERY_FIFO;
    s->eng[e].fifo_reg = fifo ? dl->reg : -1;
    s->eng[e].fifo_words = fifo ? s->d->frames[dl->frame].num_words : 0;
  }
  if (s->d->queue_depth && e != NPUCC_ENGINE_FENCE) {
    sim_engine *g = &s->eng[e];
    g->qend[(g->qhead + g->qcount) % NPUCC_SIM_QUEUE_MAX] = st->end;
    g->qcount++;
  }
}

/* A write changes a guarded field only while its write-enable field is all
 * ones; otherwise the field keeps its value. */
static uint64_t keep_guarded(const npucc_sim *s, int r, uint64_t value) {
  const npucc_reg_desc *rd = &s->d->regs[r];
  uint16_t k;
  for (k = 0; k < rd->num_fields; ++k) {
    const npucc_field_desc *f = &s->d->fields[rd->first_field + k];
    npucc_fieldref fr, gr;
    if (f->we < 0)
      continue;
    fr.reg = gr.reg = (int16_t)r;
    fr.lsb = f->lsb;
    fr.width = f->width;
    gr.lsb = s->d->fields[f->we].lsb;
    gr.width = s->d->fields[f->we].width;
    if (npucc_field_get(value, gr) != npucc_width_mask(gr.width))
      value = npucc_field_put(value, fr, npucc_field_get(s->regs[r], fr));
  }
  return value;
}

/* Applies a whole register write: status bits, doorbells, opcodes, FIFO
 * words. */
static void reg_apply(npucc_sim *s, int r, uint64_t value) {
  uint16_t i;
  const npucc_cmd_desc *rung = NULL;
  const npucc_delivery_desc *dl;
  sim_write_status(s, r, value);
  if (s->is_status[r] == SIM_REG_STATUS)
    return;
  if (s->d->num_deliveries && (dl = sim_fifo_of(s, r)) != NULL) {
    sim_fifo_push(s, r, dl, value);
    return;
  }
  value = keep_guarded(s, r, value);
  s->regs[r] = value;
  s->written[r] = 1;
  while (s->init_next < s->d->num_init && s->d->init[s->init_next].field.reg == r &&
         npucc_field_get(value, s->d->init[s->init_next].field) == s->d->init[s->init_next].value)
    s->init_next++;
  if (s->d->cmdbuf != NULL && s->d->cmdbuf->kick.field.reg == r &&
      npucc_field_get(value, s->d->cmdbuf->kick.field) == s->d->cmdbuf->kick.value) {
    /* The kick is self-clearing, like a doorbell. */
    s->regs[r] = npucc_field_put(value, s->d->cmdbuf->kick.field, 0);
    sim_buffer_kick(s);
    return;
  }
  for (i = 0; i < s->d->num_cmds && rung == NULL; ++i) {
    const npucc_cmd_desc *c = &s->d->cmds[i];
    uint16_t k;
    int match = c->doorbell.field.reg == r &&
                npucc_field_get(value, c->doorbell.field) == c->doorbell.value;
    for (k = 0; match && k < c->num_select; ++k)
      match = npucc_field_get(s->regs[c->select[k].field.reg], c->select[k].field) ==
              c->select[k].value;
    if (match)
      rung = c;
  }
  if (rung != NULL) {
    /* Doorbells are self-clearing. */
    s->regs[r] = npucc_field_put(s->regs[r], rung->doorbell.field, rung->doorbell_nop);
    sim_launch(s, rung);
    return;
  }
  /* A doorbell or opcode field holding something other than its idle value
   * starts no command: the firmware would wait forever. */
  for (i = 0; i < s->d->num_cmds; ++i) {
    const npucc_cmd_desc *c = &s->d->cmds[i];
    uint64_t v;
    if (c->doorbell.field.reg != r)
      continue;
    v = npucc_field_get(value, c->doorbell.field);
    if (v != c->doorbell_nop) {
      sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
               "register %s written with 0x%llx: doorbell/opcode field value %llu starts no "
               "command (its idle value is %u)",
               s->d->regs[r].name, (unsigned long long)value, (unsigned long long)v,
               (unsigned)c->doorbell_nop);
      return;
    }
  }
}

void npucc_sim_reg_write(npucc_sim *s, uint32_t offset, uint64_t value, uint8_t width_bits) {
  unsigned part = 0, n, last;
  int r = reg_at(s, offset, width_bits, &part);
  s->cpu += s->d->reg_access_cycles;
  s->reg_writes++;
  if (r < 0) {
    sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
             "write of 0x%llx to offset 0x%x: no %u-bit register there", (unsigned long long)value,
             (unsigned)offset, (unsigned)width_bits);
    return;
  }
  n = s->d->regs[r].width / width_bits;
  if (n <= 1) {
    reg_apply(s, r, value);
    return;
  }
  /* A register wider than the bus: collect its accesses; the one that is
   * last in the bus order applies the whole value. */
  s->staged[r] = npucc_field_put(s->staged[r], access_bits(s, r, part), value);
  s->arrived[r] = (uint8_t)(s->arrived[r] | (1u << part));
  last = s->d->bus_order == NPUCC_BUS_HIGH_FIRST ? 0 : n - 1;
  if (part != last)
    return;
  if (s->arrived[r] != (1u << n) - 1u) {
    s->arrived[r] = 0;
    sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
             "register %s: its last %u-bit access (offset 0x%x, %s first) arrived before the "
             "others",
             s->d->regs[r].name, (unsigned)width_bits, (unsigned)offset,
             s->d->bus_order == NPUCC_BUS_HIGH_FIRST ? "high half" : "low half");
    return;
  }
  s->arrived[r] = 0;
  value = s->staged[r];
  s->staged[r] = 0;
  reg_apply(s, r, value);
}

uint64_t npucc_sim_reg_read(npucc_sim *s, uint32_t offset, uint8_t width_bits) {
  unsigned part = 0;
  int r = reg_at(s, offset, width_bits, &part);
  npucc_fieldref bits;
  uint64_t v;
  if (r < 0) {
    s->cpu += s->d->reg_access_cycles;
    sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL, "read of offset 0x%x: no %u-bit register there",
             (unsigned)offset, (unsigned)width_bits);
    return 0;
  }
  bits = access_bits(s, r, part);
  if (s->is_status[r]) {
    v = sim_read_status(s, r, bits, s->is_status[r] == SIM_REG_SHARED ? s->regs[r] : 0);
  } else {
    s->cpu += s->d->reg_access_cycles;
    v = s->regs[r];
  }
  return npucc_field_get(v, bits);
}

void npucc_sim_advance_cpu(npucc_sim *s, uint64_t cycles) { s->cpu += cycles; }

void npucc_sim_print_report(const npucc_sim *s, FILE *out) {
  npucc_sim_totals t;
  size_t i;
  double hz = s->d->clock_hz ? (double)s->d->clock_hz : 1.0;
  npucc_sim_get_totals(s, &t);
  fprintf(out, "npucc-sim: target %s at %u Hz\n", s->d->name, (unsigned)s->d->clock_hz);
  fprintf(out,
          "  commands %llu, end %llu cycles (%.3f us), cpu %llu cycles, %llu register writes\n",
          (unsigned long long)t.commands, (unsigned long long)t.end_cycles,
          (double)t.end_cycles * 1e6 / hz, (unsigned long long)t.cpu_cycles,
          (unsigned long long)t.reg_writes);
  fprintf(out, "  dma busy %llu cycles, compute busy %llu cycles, MACs %llu (utilisation %.1f%%)\n",
          (unsigned long long)t.dma_busy_cycles, (unsigned long long)t.compute_busy_cycles,
          (unsigned long long)t.macs, 100.0 * t.mac_utilisation);
  fprintf(out, "  system memory: read %llu bytes, written %llu bytes\n",
          (unsigned long long)t.sys_bytes_read, (unsigned long long)t.sys_bytes_written);
  for (i = 0; i < s->num_cmds; ++i) {
    const npucc_sim_cmd_stats *c = &s->cmds[i];
    fprintf(out, "  #%-4u %-9s start %-8llu end %-8llu cycles %-7llu", (unsigned)i,
            npucc_kind_name(c->kind), (unsigned long long)c->start, (unsigned long long)c->end,
            (unsigned long long)c->cycles);
    if (c->macs)
      fprintf(out, " macs %llu util %.1f%%", (unsigned long long)c->macs,
              100.0 * c->mac_utilisation);
    if (c->sys_bytes_read || c->sys_bytes_written)
      fprintf(out, " sys read %llu written %llu", (unsigned long long)c->sys_bytes_read,
              (unsigned long long)c->sys_bytes_written);
    fprintf(out, "\n");
  }
  if (s->failed)
    fprintf(out, "  error: %s\n", s->err);
}

void npucc_sim_attach(npucc_sim *s) {
  g_attached = s;
  if (s != NULL)
    npucc_hal_init(s->d);
}

npucc_sim *npucc_sim_attached(void) { return g_attached; }

int npucc_sim_wfi_hook(void *ctx) {
  npucc_sim *s = (npucc_sim *)ctx;
  uint64_t next = 0;
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e)
    if (sim_engine_busy(s, e) && (next == 0 || s->eng[e].end < next))
      next = s->eng[e].end;
  if (next > s->cpu)
    s->cpu = next;
  return 0;
}

int npucc_sim_failed(const npucc_sim *s) { return s->failed; }
const char *npucc_sim_error(const npucc_sim *s) { return s->err; }
int npucc_sim_error_command(const npucc_sim *s) { return s->err_cmd; }
size_t npucc_sim_num_commands(const npucc_sim *s) { return s->num_cmds; }
uint64_t npucc_sim_cpu_cycles(const npucc_sim *s) { return s->cpu; }

const npucc_sim_cmd_stats *npucc_sim_command(const npucc_sim *s, size_t i) {
  return i < s->num_cmds ? &s->cmds[i] : NULL;
}

void npucc_sim_get_totals(const npucc_sim *s, npucc_sim_totals *t) {
  size_t i;
  int e;
  memset(t, 0, sizeof(*t));
  t->commands = s->num_cmds;
  t->reg_writes = s->reg_writes;
  t->cpu_cycles = s->cpu;
  t->end_cycles = s->cpu;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e)
    if (s->eng[e].cmd >= 0 && s->eng[e].end > t->end_cycles)
      t->end_cycles = s->eng[e].end;
  t->dma_busy_cycles = s->eng[NPUCC_ENGINE_DMA].busy_cycles;
  t->compute_busy_cycles = s->eng[NPUCC_ENGINE_COMPUTE].busy_cycles;
  for (i = 0; i < s->num_cmds; ++i) {
    t->macs += s->cmds[i].macs;
    t->sys_bytes_read += s->cmds[i].sys_bytes_read;
    t->sys_bytes_written += s->cmds[i].sys_bytes_written;
  }
  if (t->compute_busy_cycles)
    t->mac_utilisation =
        (double)t->macs / ((double)t->compute_busy_cycles * s->d->mac_rows * s->d->mac_cols);
}
