/* npucc_sim_status.c - The simulator's status bits: what a status register
 * reads (busy, level or sticky DONE, error codes, free job slots, start bits
 * that read as the doorbell value until the command completes, over the bits
 * commands wrote), and what clears them (writing 1, reading, or writing a
 * clear value into a field of a clear register). */
#include "npucc_sim_internal.h"

#include "npucc_npu.h"

static int within(npucc_fieldref f, npucc_fieldref part) {
  return f.lsb >= part.lsb && f.lsb + f.width <= part.lsb + part.width;
}

/* Sticky DONE of engine e: an idle edge after a command later than the last
 * clear. */
int sim_done_latched(const npucc_sim *s, int e) {
  const sim_engine *g = &s->eng[e];
  return g->stale || (g->cmd > g->cleared && !sim_engine_busy(s, e));
}

static void clear_done(npucc_sim *s, int e) {
  sim_engine *g = &s->eng[e];
  g->stale = 0;
  if (g->cmd >= 0 && !sim_engine_busy(s, e))
    g->cleared = g->cmd;
}

/* Clears the error code of every engine whose error field is `f`. */
static void clear_error(npucc_sim *s, npucc_fieldref f) {
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    npucc_fieldref g = s->d->engines[e].error.f;
    if (g.reg == f.reg && g.lsb == f.lsb && g.width == f.width)
      s->eng[e].error = 0;
  }
}

/* A write of `value` to register r puts b's clear value into its clear field. */
static int cleared_through(npucc_status_bit b, int r, uint64_t value) {
  return (b.flags & NPUCC_SB_CLEAR_FIELD) && b.clear.field.reg == r &&
         npucc_field_get(value, b.clear.field) == b.clear.value;
}

/* Clears what a write of `value` to register r clears: write-1-to-clear
 * bits of a status register, and bits whose clear field is in r when the
 * write puts the clear value there. Everything else in a status register is
 * read-only. */
void sim_write_status(npucc_sim *s, int r, uint64_t value) {
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_engine_status *st = &s->d->engines[e];
    if (st->done.f.reg == r && (st->done.flags & NPUCC_SB_CLEAR_W1C) &&
        npucc_field_get(value, st->done.f))
      clear_done(s, e);
    if (st->error.f.reg == r && (st->error.flags & NPUCC_SB_CLEAR_W1C) &&
        npucc_field_get(value, st->error.f))
      clear_error(s, st->error.f);
    if (cleared_through(st->done, r, value))
      clear_done(s, e);
    if (cleared_through(st->error, r, value))
      clear_error(s, st->error.f);
  }
}

/* Writes `v` into status field b (polarity for 1-bit conditions). */
static uint64_t put_bit(uint64_t reg, npucc_status_bit b, int active) {
  int v = (b.flags & NPUCC_SB_ACTIVE_LOW) ? !active : active;
  return npucc_field_put(reg, b.f, (uint64_t)v);
}

static uint64_t saturate(uint64_t v, npucc_fieldref f) {
  uint64_t max = npucc_width_mask(f.width);
  return v > max ? max : v;
}

/* The code an error field shows: the first non-zero code of the engines
 * sharing it. */
static uint32_t error_code(const npucc_sim *s, npucc_fieldref f) {
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    npucc_fieldref g = s->d->engines[e].error.f;
    if (g.reg == f.reg && g.lsb == f.lsb && g.width == f.width && s->eng[e].error)
      return s->eng[e].error;
  }
  return 0;
}

/* The start bits of register r: the doorbell value of the command running
 * on an engine started through the field, else 0. */
static uint64_t start_bits(const npucc_sim *s, int r, uint64_t v) {
  int e;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    npucc_status_bit b = s->d->engines[e].busy;
    if (b.f.reg == r && (b.flags & NPUCC_SB_START_BIT))
      v = npucc_field_put(v, b.f, 0);
  }
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    npucc_status_bit b = s->d->engines[e].busy;
    const npucc_cmd_desc *c;
    if (b.f.reg != r || !(b.flags & NPUCC_SB_START_BIT) || !sim_engine_busy(s, e))
      continue;
    c = npucc_desc_find_cmd(s->d, s->cmds[s->eng[e].cmd].kind);
    if (c != NULL)
      v = npucc_field_put(v, b.f, c->doorbell.value);
  }
  return v;
}

/* The value of status register r as access `part` reads it, over the bits
 * last written to it (`stored`; 0 for a register no command writes): status
 * fields show the engines' state; clear-on-read fields clear, and the CPU
 * observes an idle engine, only when the access holds them. */
uint64_t sim_read_status(npucc_sim *s, int r, npucc_fieldref part, uint64_t stored) {
  uint64_t v = stored;
  int e;
  s->cpu += s->d->poll_cycles;
  v = start_bits(s, r, v);
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_engine_status *st = &s->d->engines[e];
    int busy = sim_engine_busy(s, e), shows = 0;
    if (st->busy.f.reg == r && (st->busy.flags & NPUCC_SB_START_BIT)) {
      /* Shared by the engines started through it: idle when it reads 0. */
      shows = !npucc_status_active(v, st->busy) && within(st->busy.f, part);
    } else if (st->busy.f.reg == r) {
      v = put_bit(v, st->busy, busy);
      shows = !busy && within(st->busy.f, part);
    }
    if (st->done.f.reg == r) {
      int done =
          (st->done.flags & NPUCC_SB_STICKY) ? sim_done_latched(s, e) : !busy && s->eng[e].cmd >= 0;
      v = put_bit(v, st->done, done);
      if (st->busy.f.reg < 0)
        shows = done && within(st->done.f, part);
    }
    if (st->error.f.reg == r) {
      uint64_t code = error_code(s, st->error.f);
      v = st->error.f.width == 1 ? put_bit(v, st->error, code != 0)
                                 : npucc_field_put(v, st->error.f, saturate(code, st->error.f));
    }
    if (st->free_slots.f.reg == r)
      v = npucc_field_put(v, st->free_slots.f,
                          saturate(s->d->queue_depth - sim_queue_pending(s, e), st->free_slots.f));
    /* The CPU can see the engine is idle (a finished fence shows that every
     * engine finished what was issued before it). */
    if (shows && e == NPUCC_ENGINE_FENCE) {
      int k;
      for (k = 0; k < NPUCC_ENGINE_COUNT; ++k)
        sim_observe(s, k, (size_t)s->eng[e].cmd + 1);
    } else if (shows) {
      sim_observe(s, e, s->num_cmds);
    }
  }
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e) {
    const npucc_engine_status *st = &s->d->engines[e];
    if (st->done.f.reg == r && (st->done.flags & NPUCC_SB_CLEAR_READ) && within(st->done.f, part))
      clear_done(s, e);
    if (st->error.f.reg == r && (st->error.flags & NPUCC_SB_CLEAR_READ) &&
        within(st->error.f, part))
      clear_error(s, st->error.f);
  }
  return v;
}
