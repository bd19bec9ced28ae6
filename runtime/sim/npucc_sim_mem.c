/* npucc_sim_mem.c - The simulator's memories: scratchpad models with
 * per-byte writer/reader tracking (races), host buffers mapped into the
 * description's system windows, address resolution with range, access and
 * alignment checks, and the debug back door. Addresses are 64-bit. */
#include "npucc_sim_internal.h"

#include "npucc_npu.h"

#include <stdlib.h>
#include <string.h>

int sim_alloc_memories(npucc_sim *s) {
  const npucc_target_desc *d = s->d;
  uint16_t i;
  s->spm = (sim_spm *)calloc(d->num_mems ? d->num_mems : 1, sizeof(sim_spm));
  if (s->spm == NULL)
    return -1;
  for (i = 0; i < d->num_mems; ++i) {
    const npucc_mem_desc *m = &d->mems[i];
    sim_spm *p;
    uint32_t k;
    if (m->kind != NPUCC_MEM_SCRATCHPAD)
      continue;
    p = &s->spm[s->num_spm++];
    p->base = m->base;
    p->size = (uint32_t)m->size;
    p->desc = m;
    p->data = (uint8_t *)calloc(p->size, 1);
    p->valid = (uint8_t *)calloc(p->size, 1);
    p->writer = (int32_t *)malloc((size_t)p->size * sizeof(int32_t));
    p->reader = (int32_t *)malloc((size_t)p->size * sizeof(int32_t));
    if (!p->data || !p->valid || !p->writer || !p->reader)
      return -1;
    for (k = 0; k < p->size; ++k)
      p->writer[k] = p->reader[k] = -1;
  }
  return 0;
}

void sim_free_memories(npucc_sim *s) {
  int i;
  if (s->spm == NULL)
    return;
  for (i = 0; i < s->num_spm; ++i) {
    free(s->spm[i].data);
    free(s->spm[i].valid);
    free(s->spm[i].writer);
    free(s->spm[i].reader);
  }
  free(s->spm);
}

static int inside(uint64_t addr, uint64_t len, uint64_t base, uint64_t size) {
  return addr >= base && len <= size && addr - base <= size - len;
}

int npucc_sim_map(npucc_sim *s, uint64_t addr, void *host, uint64_t size) {
  uint16_t i;
  int k;
  if (s->num_maps >= NPUCC_SIM_MAX_MAPS || size == 0 || addr + size < addr)
    return -1;
  for (k = 0; k < s->num_maps; ++k)
    if (addr < s->maps[k].base + s->maps[k].size && s->maps[k].base < addr + size)
      return -1;
  for (i = 0; i < s->d->num_mems; ++i) {
    const npucc_mem_desc *m = &s->d->mems[i];
    if (m->kind == NPUCC_MEM_SYSTEM && inside(addr, size, m->base, m->size)) {
      sim_map *mp = &s->maps[s->num_maps++];
      mp->base = addr;
      mp->size = size;
      mp->host = (uint8_t *)host;
      mp->writable = m->writable;
      mp->window = m;
      return 0;
    }
  }
  return -1;
}

int sim_resolve(npucc_sim *s, int idx, int64_t saddr, uint64_t len, int write, const char *what,
                sim_window *w) {
  int i;
  uint64_t addr = (uint64_t)saddr;
  if (saddr < 0)
    return sim_fail(s, idx, NPUCC_DEVERR_MEMORY, "%s address %lld is negative", what,
                    (long long)saddr);
  for (i = 0; i < s->num_spm; ++i) {
    sim_spm *p = &s->spm[i];
    if (inside(addr, len, p->base, p->size)) {
      w->ptr = p->data + (addr - p->base);
      w->spm = i;
      w->spm_off = (uint32_t)(addr - p->base);
      w->mem = p->desc;
      return 0;
    }
  }
  for (i = 0; i < s->num_maps; ++i) {
    sim_map *m = &s->maps[i];
    if (inside(addr, len, m->base, m->size)) {
      if (write && !m->writable)
        return sim_fail(s, idx, NPUCC_DEVERR_MEMORY,
                        "%s 0x%08llx..0x%08llx writes read-only system memory", what,
                        (unsigned long long)addr, (unsigned long long)(addr + len));
      w->ptr = m->host + (addr - m->base);
      w->spm = -1;
      w->spm_off = 0;
      w->mem = m->window;
      return 0;
    }
  }
  return sim_fail(s, idx, NPUCC_DEVERR_MEMORY,
                  "%s 0x%08llx..0x%08llx is outside the scratchpad and the mapped system "
                  "memory ranges",
                  what, (unsigned long long)addr, (unsigned long long)(addr + len));
}

int sim_operand(npucc_sim *s, int idx, int64_t addr, uint64_t len, int operand,
                const char *what, sim_window *w) {
  int i;
  for (i = 0; i < s->num_spm; ++i) {
    sim_spm *p = &s->spm[i];
    uint32_t align = operand >= 0 ? p->desc->operand_alignment[operand] : p->desc->alignment;
    if (align == 0)
      align = 1;
    if (addr >= (int64_t)p->base && (uint64_t)addr - p->base < p->size) {
      if ((uint64_t)addr - p->base + len > p->size)
        return sim_fail(s, idx, NPUCC_DEVERR_MEMORY,
                        "%s 0x%08llx + %llu bytes runs past the end of the scratchpad", what,
                        (unsigned long long)addr, (unsigned long long)len);
      if ((uint64_t)addr % align)
        return sim_fail(s, idx, NPUCC_DEVERR_ALIGN, "%s 0x%08llx is not aligned to %u bytes",
                        what, (unsigned long long)addr, (unsigned)align);
      w->ptr = p->data + ((uint64_t)addr - p->base);
      w->spm = i;
      w->spm_off = (uint32_t)((uint64_t)addr - p->base);
      w->mem = p->desc;
      return 0;
    }
  }
  return sim_fail(s, idx, NPUCC_DEVERR_MEMORY, "%s 0x%08llx is not in a scratchpad", what,
                  (unsigned long long)addr);
}

int sim_const_operand(npucc_sim *s, int idx, int kind, int64_t addr, uint64_t len, int operand,
                      const char *what, sim_window *w) {
  const npucc_op_limits *l = &s->d->ops[kind];
  uint64_t align;
  if (!((l->operand_mem >> operand) & 1u))
    return sim_operand(s, idx, addr, len, operand, what, w);
  align = (uint64_t)1 << l->operand_align_log2[operand];
  if (addr >= 0 && (uint64_t)addr % align)
    return sim_fail(s, idx, NPUCC_DEVERR_ALIGN,
                    "%s 0x%08llx (system memory) is not aligned to %llu bytes", what,
                    (unsigned long long)addr, (unsigned long long)align);
  if (sim_resolve(s, idx, addr, len, 0, what, w))
    return -1;
  if (w->spm >= 0)
    return sim_fail(s, idx, NPUCC_DEVERR_MEMORY,
                    "%s 0x%08llx is in a scratchpad, but %s reads it from system memory", what,
                    (unsigned long long)addr, npucc_kind_name(kind));
  s->cmds[idx].sys_bytes_read += len; /* the NPU's own read, as a DMA's is counted */
  return 0;
}

/* Was command `cmd` (a writer or reader of some bytes) still unfinished, as
 * far as the CPU knows, when command `self` touched them? A job queue runs
 * one engine's commands in order, so those never race with each other. */
static int unfinished(const npucc_sim *s, int32_t cmd, int self) {
  if (cmd < 0 || cmd == self || s->observed[cmd])
    return 0;
  return !(s->d->queue_depth && s->cmds[cmd].engine == s->cmds[self].engine);
}

int sim_check_read(npucc_sim *s, int idx, const sim_window *w, uint64_t len, const char *what) {
  sim_spm *p;
  uint64_t k;
  if (w->spm < 0)
    return 0;
  p = &s->spm[w->spm];
  for (k = 0; k < len; ++k) {
    uint64_t o = w->spm_off + k;
    if (!p->valid[o])
      return sim_fail(s, idx, NPUCC_DEVERR_HAZARD,
                      "%s reads scratchpad byte 0x%08llx that was never written", what,
                      (unsigned long long)(p->base + o));
    if (unfinished(s, p->writer[o], idx))
      return sim_fail(s, idx, NPUCC_DEVERR_HAZARD,
                      "race: %s reads scratchpad byte 0x%08llx written by command #%d (%s), "
                      "which was not waited for",
                      what, (unsigned long long)(p->base + o), (int)p->writer[o],
                      npucc_kind_name(s->cmds[p->writer[o]].kind));
  }
  for (k = 0; k < len; ++k)
    p->reader[w->spm_off + k] = idx;
  return 0;
}

int sim_check_write(npucc_sim *s, int idx, const sim_window *w, uint64_t len, const char *what) {
  sim_spm *p;
  uint64_t k;
  if (w->spm < 0)
    return 0;
  p = &s->spm[w->spm];
  for (k = 0; k < len; ++k) {
    uint64_t o = w->spm_off + k;
    int32_t other = unfinished(s, p->reader[o], idx)   ? p->reader[o]
                    : unfinished(s, p->writer[o], idx) ? p->writer[o]
                                                       : -1;
    if (other >= 0)
      return sim_fail(s, idx, NPUCC_DEVERR_HAZARD,
                      "race: %s overwrites scratchpad byte 0x%08llx still in use by command #%d "
                      "(%s), which was not waited for",
                      what, (unsigned long long)(p->base + o), (int)other,
                      npucc_kind_name(s->cmds[other].kind));
  }
  for (k = 0; k < len; ++k) {
    p->writer[w->spm_off + k] = idx;
    p->valid[w->spm_off + k] = 1;
  }
  return 0;
}

static sim_spm *spm_for(npucc_sim *s, uint64_t addr, uint64_t size) {
  int i;
  for (i = 0; i < s->num_spm; ++i)
    if (inside(addr, size, s->spm[i].base, s->spm[i].size))
      return &s->spm[i];
  return NULL;
}

int npucc_sim_spm_write(npucc_sim *s, uint64_t addr, const void *src, uint32_t size) {
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

int npucc_sim_spm_read(npucc_sim *s, uint64_t addr, void *dst, uint32_t size) {
  sim_spm *p = spm_for(s, addr, size);
  if (p == NULL)
    return -1;
  memcpy(dst, p->data + (addr - p->base), size);
  return 0;
}

uint64_t npucc_sim_device_addr(npucc_sim *s, const void *host, uint64_t size, int writable) {
  const uint8_t *h = (const uint8_t *)host;
  uint16_t pass, i;
  uint64_t align;
  int k;
  if (s == NULL)
    return 0;
  if (size == 0)
    size = 1;
  for (k = 0; k < s->num_maps; ++k)
    if (h >= s->maps[k].host && (uint64_t)(h - s->maps[k].host) + size <= s->maps[k].size)
      return s->maps[k].base + (uint64_t)(h - s->maps[k].host);
  /* Constant data prefers a read-only window; then any writable one. Each
   * buffer starts at a multiple of 64 bytes and of the DMA alignment, as the
   * compiler assumes of the buffers firmware places ... */
  align = s->d->dma_alignment > 64 ? s->d->dma_alignment : 64;
  /* ... and of every alignment an operand read from system memory asks. */
  for (k = 0; k < NPUCC_KIND_COUNT; ++k) {
    int o;
    for (o = 0; o < NPUCC_OPND_COUNT; ++o)
      if (((s->d->ops[k].operand_mem >> o) & 1u) &&
          ((uint64_t)1 << s->d->ops[k].operand_align_log2[o]) > align)
        align = (uint64_t)1 << s->d->ops[k].operand_align_log2[o];
  }
  for (pass = writable ? 1 : 0; pass < 2; ++pass)
    for (i = 0; i < s->d->num_mems; ++i) {
      const npucc_mem_desc *m = &s->d->mems[i];
      uint64_t at = s->auto_next[i] ? s->auto_next[i] : m->base;
      int moved = 1;
      if (m->kind != NPUCC_MEM_SYSTEM || (pass == 0 && m->writable) || (pass == 1 && !m->writable))
        continue;
      /* Past the ranges mapped by hand (npucc_sim_map) that it would overlap. */
      while (moved) {
        moved = 0;
        at = (at + align - 1) / align * align;
        for (k = 0; k < s->num_maps; ++k)
          if (at < s->maps[k].base + s->maps[k].size && s->maps[k].base < at + size) {
            at = s->maps[k].base + s->maps[k].size;
            moved = 1;
          }
      }
      if (!inside(at, size, m->base, m->size) || npucc_sim_map(s, at, (void *)h, size) != 0)
        continue;
      s->auto_next[i] = at + size;
      return at;
    }
  sim_fail(s, -1, NPUCC_DEVERR_MEMORY,
           "no system memory window has room for a %llu-byte %s buffer",
           (unsigned long long)size, writable ? "writable" : "constant");
  return 0;
}
