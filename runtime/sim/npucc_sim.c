/* npucc_sim.c - Simulator core: register file, doorbell decoding, memories,
 * the two-engine timeline, hazard checks and statistics. */
#include "npucc_sim_internal.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_timing.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static npucc_sim *g_attached;

npucc_sim *npucc_sim_create(const npucc_target_desc *d) {
  npucc_sim *s = (npucc_sim *)calloc(1, sizeof(npucc_sim));
  uint16_t i;
  int e;
  if (s == NULL)
    return NULL;
  s->d = d;
  s->err_cmd = -1;
  s->regs = (uint32_t *)calloc(d->num_regs ? d->num_regs : 1, sizeof(uint32_t));
  s->spm = (sim_spm *)calloc(d->num_mems ? d->num_mems : 1, sizeof(sim_spm));
  if (s->regs == NULL || s->spm == NULL) {
    npucc_sim_destroy(s);
    return NULL;
  }
  for (i = 0; i < d->num_mems; ++i) {
    const npucc_mem_desc *m = &d->mems[i];
    sim_spm *p;
    uint32_t k;
    if (m->kind != NPUCC_MEM_SCRATCHPAD)
      continue;
    p = &s->spm[s->num_spm++];
    p->base = m->base;
    p->size = m->size;
    p->alignment = m->alignment ? m->alignment : 1;
    p->data = (uint8_t *)calloc(m->size, 1);
    p->valid = (uint8_t *)calloc(m->size, 1);
    p->writer = (int32_t *)malloc((size_t)m->size * sizeof(int32_t));
    p->reader = (int32_t *)malloc((size_t)m->size * sizeof(int32_t));
    if (!p->data || !p->valid || !p->writer || !p->reader) {
      npucc_sim_destroy(s);
      return NULL;
    }
    for (k = 0; k < m->size; ++k)
      p->writer[k] = p->reader[k] = -1;
  }
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e)
    s->eng[e].cmd = -1;
  return s;
}

void npucc_sim_destroy(npucc_sim *s) {
  int i;
  if (s == NULL)
    return;
  if (g_attached == s)
    g_attached = NULL;
  for (i = 0; i < s->num_spm; ++i) {
    free(s->spm[i].data);
    free(s->spm[i].valid);
    free(s->spm[i].writer);
    free(s->spm[i].reader);
  }
  free(s->spm);
  free(s->regs);
  free(s->cmds);
  free(s->observed);
  free(s);
}

const npucc_target_desc *npucc_sim_desc(const npucc_sim *s) { return s->d; }

int sim_fail(npucc_sim *s, int idx, const char *fmt, ...) {
  va_list ap;
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
    s->eng[s->cmds[idx].engine].error = 1;
  } else {
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof(s->err), fmt, ap);
    va_end(ap);
  }
  return -1;
}

int npucc_sim_map(npucc_sim *s, uint32_t addr, void *host, uint32_t size) {
  uint16_t i;
  int k;
  if (s->num_maps >= NPUCC_SIM_MAX_MAPS || size == 0)
    return -1;
  for (k = 0; k < s->num_maps; ++k)
    if ((uint64_t)addr < (uint64_t)s->maps[k].base + s->maps[k].size &&
        (uint64_t)s->maps[k].base < (uint64_t)addr + size)
      return -1;
  for (i = 0; i < s->d->num_mems; ++i) {
    const npucc_mem_desc *m = &s->d->mems[i];
    if (m->kind == NPUCC_MEM_SYSTEM && addr >= m->base &&
        (uint64_t)addr + size <= (uint64_t)m->base + m->size) {
      sim_map *mp = &s->maps[s->num_maps++];
      mp->base = addr;
      mp->size = size;
      mp->host = (uint8_t *)host;
      mp->writable = m->writable;
      return 0;
    }
  }
  return -1;
}

int sim_resolve(npucc_sim *s, int idx, uint32_t addr, uint32_t len, int write, const char *what,
                sim_window *w) {
  int i;
  uint64_t end = (uint64_t)addr + len;
  for (i = 0; i < s->num_spm; ++i) {
    sim_spm *p = &s->spm[i];
    if (addr >= p->base && end <= (uint64_t)p->base + p->size) {
      w->ptr = p->data + (addr - p->base);
      w->spm = i;
      w->spm_off = addr - p->base;
      return 0;
    }
  }
  for (i = 0; i < s->num_maps; ++i) {
    sim_map *m = &s->maps[i];
    if (addr >= m->base && end <= (uint64_t)m->base + m->size) {
      if (write && !m->writable)
        return sim_fail(s, idx, "%s 0x%08x..0x%08llx writes read-only system memory", what,
                        (unsigned)addr, (unsigned long long)end);
      w->ptr = m->host + (addr - m->base);
      w->spm = -1;
      w->spm_off = 0;
      return 0;
    }
  }
  return sim_fail(s, idx,
                  "%s 0x%08x..0x%08llx is outside the scratchpad and the mapped system "
                  "memory ranges",
                  what, (unsigned)addr, (unsigned long long)end);
}

int sim_operand(npucc_sim *s, int idx, int64_t addr, uint64_t len, const char *what,
                sim_window *w) {
  int i;
  for (i = 0; i < s->num_spm; ++i) {
    sim_spm *p = &s->spm[i];
    if (addr >= (int64_t)p->base && addr < (int64_t)p->base + (int64_t)p->size) {
      if ((uint64_t)(addr - (int64_t)p->base) + len > p->size)
        return sim_fail(s, idx, "%s 0x%08llx + %llu bytes runs past the end of the scratchpad",
                        what, (unsigned long long)addr, (unsigned long long)len);
      if ((uint64_t)addr % p->alignment)
        return sim_fail(s, idx, "%s 0x%08llx is not aligned to %u bytes", what,
                        (unsigned long long)addr, (unsigned)p->alignment);
      w->ptr = p->data + (addr - (int64_t)p->base);
      w->spm = i;
      w->spm_off = (uint32_t)(addr - (int64_t)p->base);
      return 0;
    }
  }
  return sim_fail(s, idx, "%s 0x%08llx is not in a scratchpad", what, (unsigned long long)addr);
}

static int unfinished(const npucc_sim *s, int32_t cmd, int self) {
  return cmd >= 0 && cmd != self && !s->observed[cmd];
}

int sim_check_read(npucc_sim *s, int idx, const sim_window *w, uint32_t len, const char *what) {
  sim_spm *p;
  uint32_t k;
  if (w->spm < 0)
    return 0;
  p = &s->spm[w->spm];
  for (k = 0; k < len; ++k) {
    uint32_t o = w->spm_off + k;
    if (!p->valid[o])
      return sim_fail(s, idx, "%s reads scratchpad byte 0x%08x that was never written", what,
                      (unsigned)(p->base + o));
    if (unfinished(s, p->writer[o], idx))
      return sim_fail(s, idx,
                      "race: %s reads scratchpad byte 0x%08x written by command #%d (%s), which "
                      "was not waited for",
                      what, (unsigned)(p->base + o), (int)p->writer[o],
                      npucc_kind_name(s->cmds[p->writer[o]].kind));
  }
  for (k = 0; k < len; ++k)
    p->reader[w->spm_off + k] = idx;
  return 0;
}

int sim_check_write(npucc_sim *s, int idx, const sim_window *w, uint32_t len, const char *what) {
  sim_spm *p;
  uint32_t k;
  if (w->spm < 0)
    return 0;
  p = &s->spm[w->spm];
  for (k = 0; k < len; ++k) {
    uint32_t o = w->spm_off + k;
    int32_t other = unfinished(s, p->reader[o], idx)   ? p->reader[o]
                    : unfinished(s, p->writer[o], idx) ? p->writer[o]
                                                       : -1;
    if (other >= 0)
      return sim_fail(s, idx,
                      "race: %s overwrites scratchpad byte 0x%08x still in use by command #%d "
                      "(%s), which was not waited for",
                      what, (unsigned)(p->base + o), (int)other,
                      npucc_kind_name(s->cmds[other].kind));
  }
  for (k = 0; k < len; ++k) {
    p->writer[w->spm_off + k] = idx;
    p->valid[w->spm_off + k] = 1;
  }
  return 0;
}

static int reg_at(const npucc_sim *s, uint32_t offset) {
  uint16_t i;
  for (i = 0; i < s->d->num_regs; ++i)
    if (s->d->regs[i].offset == offset)
      return (int)i;
  return -1;
}

static int engine_busy(const npucc_sim *s, int e) {
  return s->eng[e].cmd >= 0 && s->eng[e].end > s->cpu;
}

/* The CPU saw the engine's state at the current time: every command of that
 * engine that has completed by now counts as waited for. */
static void observe(npucc_sim *s, int e, size_t limit) {
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

static void launch(npucc_sim *s, const npucc_cmd_desc *c) {
  int64_t p[NPUCC_P_COUNT];
  npucc_sim_cmd_stats *st;
  int idx, e = c->engine,
           other = c->engine == NPUCC_ENGINE_DMA ? NPUCC_ENGINE_COMPUTE : NPUCC_ENGINE_DMA;
  if (s->num_cmds == s->cap_cmds) {
    size_t cap = s->cap_cmds ? s->cap_cmds * 2 : 64;
    npucc_sim_cmd_stats *nc =
        (npucc_sim_cmd_stats *)realloc(s->cmds, cap * sizeof(npucc_sim_cmd_stats));
    uint8_t *no = (uint8_t *)realloc(s->observed, cap);
    if (nc)
      s->cmds = nc;
    if (no)
      s->observed = no;
    if (!nc || !no) {
      sim_fail(s, -1, "out of memory");
      return;
    }
    s->cap_cmds = cap;
  }
  idx = (int)s->num_cmds++;
  st = &s->cmds[idx];
  memset(st, 0, sizeof(*st));
  st->kind = c->kind;
  st->engine = e;
  st->start = st->end = s->cpu;
  s->observed[idx] = 0;
  if (s->failed)
    return;
  if (engine_busy(s, e)) {
    sim_fail(s, idx, "started while the %s engine is busy with command #%d until cycle %llu",
             e == NPUCC_ENGINE_DMA ? "DMA" : "compute", s->eng[e].cmd,
             (unsigned long long)s->eng[e].end);
    return;
  }
  if (e == NPUCC_ENGINE_FENCE) {
    /* A fence completes when everything issued before it has completed. */
    uint64_t end = s->cpu;
    int k;
    for (k = 0; k < NPUCC_ENGINE_FENCE; ++k)
      if (s->eng[k].cmd >= 0 && s->eng[k].end > end)
        end = s->eng[k].end;
    st->end = end + s->d->command_overhead_cycles;
    st->cycles = st->end - st->start;
    s->eng[e].cmd = idx;
    s->eng[e].end = st->end;
    return;
  }
  if (!s->d->concurrent && engine_busy(s, other)) {
    sim_fail(s, idx,
             "started while the %s engine is busy with command #%d until cycle %llu (this NPU "
             "cannot overlap DMA and compute)",
             other == NPUCC_ENGINE_DMA ? "DMA" : "compute", s->eng[other].cmd,
             (unsigned long long)s->eng[other].end);
    return;
  }
  npucc_npu_decode(s->d, c, s->regs, p);
  if (sim_exec(s, idx, c->kind, p) != 0)
    return;
  st->cycles = npucc_command_cycles(s->d, c->kind, p, &st->macs);
  st->end = st->start + st->cycles;
  if (st->macs && st->cycles)
    st->mac_utilisation = (double)st->macs / ((double)st->cycles * s->d->mac_rows * s->d->mac_cols);
  s->eng[e].cmd = idx;
  s->eng[e].end = st->end;
  s->eng[e].busy_cycles += st->cycles;
}

void npucc_sim_reg_write(npucc_sim *s, uint32_t offset, uint32_t value, uint8_t width_bits) {
  int r = reg_at(s, offset);
  uint16_t i;
  s->cpu += s->d->reg_access_cycles;
  if (r < 0 || s->d->regs[r].width != width_bits) {
    sim_fail(s, -1, "write of 0x%x to offset 0x%x: no %u-bit register there", (unsigned)value,
             (unsigned)offset, (unsigned)width_bits);
    return;
  }
  if (r == s->d->status_reg)
    return; /* read only */
  s->regs[r] = value;
  for (i = 0; i < s->d->num_cmds; ++i) {
    const npucc_cmd_desc *c = &s->d->cmds[i];
    uint16_t k;
    int match;
    if (c->doorbell.field.reg != r ||
        npucc_field_get(value, c->doorbell.field) != c->doorbell.value)
      continue;
    match = 1;
    for (k = 0; k < c->num_select; ++k)
      match &= npucc_field_get(s->regs[c->select[k].field.reg], c->select[k].field) ==
               c->select[k].value;
    if (!match)
      continue;
    /* Doorbells are self-clearing. */
    s->regs[r] = npucc_field_put(s->regs[r], c->doorbell.field, 0);
    launch(s, c);
    return;
  }
}

uint32_t npucc_sim_reg_read(npucc_sim *s, uint32_t offset, uint8_t width_bits) {
  int r = reg_at(s, offset);
  int e;
  uint32_t v;
  if (r < 0 || s->d->regs[r].width != width_bits) {
    s->cpu += s->d->reg_access_cycles;
    sim_fail(s, -1, "read of offset 0x%x: no %u-bit register there", (unsigned)offset,
             (unsigned)width_bits);
    return 0;
  }
  if (r != s->d->status_reg) {
    s->cpu += s->d->reg_access_cycles;
    return s->regs[r];
  }
  s->cpu += s->d->poll_cycles;
  v = 0;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_engine_status *st = &s->d->engines[e];
    int busy = engine_busy(s, e);
    if (!busy && st->busy.reg >= 0) {
      /* The CPU can see the engine is idle (a finished fence shows that
       * every engine finished what was issued before it). */
      if (e == NPUCC_ENGINE_FENCE) {
        int k;
        for (k = 0; k < NPUCC_ENGINE_COUNT; ++k)
          observe(s, k, (size_t)s->eng[e].cmd + 1);
      } else {
        observe(s, e, s->num_cmds);
      }
    }
    if (st->busy.reg >= 0)
      v = npucc_field_put(v, st->busy, (uint32_t)busy);
    if (st->done.reg >= 0)
      v = npucc_field_put(v, st->done, (uint32_t)(!busy && s->eng[e].cmd >= 0));
    if (st->error.reg >= 0)
      v = npucc_field_put(v, st->error, (uint32_t)s->eng[e].error);
  }
  return v;
}

void npucc_sim_advance_cpu(npucc_sim *s, uint64_t cycles) { s->cpu += cycles; }

void npucc_sim_print_report(const npucc_sim *s, FILE *out) {
  npucc_sim_totals t;
  size_t i;
  double hz = s->d->clock_hz ? (double)s->d->clock_hz : 1.0;
  npucc_sim_get_totals(s, &t);
  fprintf(out, "npucc-sim: target %s at %u Hz\n", s->d->name, (unsigned)s->d->clock_hz);
  fprintf(out, "  commands %llu, end %llu cycles (%.3f us), cpu %llu cycles\n",
          (unsigned long long)t.commands, (unsigned long long)t.end_cycles,
          (double)t.end_cycles * 1e6 / hz, (unsigned long long)t.cpu_cycles);
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
    if (engine_busy(s, e) && (next == 0 || s->eng[e].end < next))
      next = s->eng[e].end;
  if (next > s->cpu)
    s->cpu = next;
  return 0;
}

static sim_spm *spm_for(npucc_sim *s, uint32_t addr, uint32_t size) {
  int i;
  for (i = 0; i < s->num_spm; ++i)
    if (addr >= s->spm[i].base &&
        (uint64_t)addr + size <= (uint64_t)s->spm[i].base + s->spm[i].size)
      return &s->spm[i];
  return NULL;
}

int npucc_sim_spm_write(npucc_sim *s, uint32_t addr, const void *src, uint32_t size) {
  sim_spm *p = spm_for(s, addr, size);
  uint32_t k;
  if (p == NULL)
    return -1;
  memcpy(p->data + (addr - p->base), src, size);
  for (k = 0; k < size; ++k) {
    p->valid[addr - p->base + k] = 1;
    p->writer[addr - p->base + k] = -1;
  }
  return 0;
}

int npucc_sim_spm_read(npucc_sim *s, uint32_t addr, void *dst, uint32_t size) {
  sim_spm *p = spm_for(s, addr, size);
  if (p == NULL)
    return -1;
  memcpy(dst, p->data + (addr - p->base), size);
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
