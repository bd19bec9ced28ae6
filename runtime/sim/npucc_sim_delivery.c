/* npucc_sim_delivery.c - Simulator: command words that arrive as data
 * (issue 19, phase 4): frame words pushed into a FIFO register, pairs of
 * words carried by custom instructions (npucc_sim_insn), and frames read
 * from the command buffer in memory at a kick. A complete frame is matched
 * to its command and started with sim_launch (npucc_sim.c). */
#include "npucc_sim_internal.h"

#include "npucc_npu.h"

#include <string.h>

/* The delivery row of the first command pushing its frame into register r
 * (all of them share the frame), or NULL: r is not a FIFO. */
const npucc_delivery_desc *sim_fifo_of(const npucc_sim *s, int r) {
  uint16_t i;
  for (i = 0; i < s->d->num_deliveries; ++i)
    if (s->d->deliveries[i].mode == NPUCC_DELIVERY_FIFO && s->d->deliveries[i].reg == r)
      return &s->d->deliveries[i];
  return NULL;
}

/* A word pushed into FIFO register r: collected into the frame's words;
 * after the last one the command is identified by its select fields and
 * started. Words of a running command stay in the FIFO until it completes:
 * a push beyond depth_words is an overrun. */
void sim_fifo_push(npucc_sim *s, int r, const npucc_delivery_desc *dl, uint64_t value) {
  const npucc_frame_desc *fr = &s->d->frames[dl->frame];
  unsigned held = s->fifo_fill[r];
  uint16_t i, k;
  int e, running = -1;
  for (e = 0; e < NPUCC_ENGINE_COUNT; ++e)
    if (s->eng[e].fifo_reg == r && sim_engine_busy(s, e)) {
      held += s->eng[e].fifo_words;
      running = s->eng[e].cmd;
    }
  if (held + 1u > dl->depth_words) {
    sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
             "FIFO register %s overrun: word %u of frame '%s' pushed while it holds %u of its "
             "%u words (command #%d still running)",
             s->d->regs[r].name, (unsigned)s->fifo_fill[r], fr->name, held,
             (unsigned)dl->depth_words, running);
    return;
  }
  s->regs[fr->first_reg + s->fifo_fill[r]] = value;
  if (++s->fifo_fill[r] < fr->num_words)
    return;
  s->fifo_fill[r] = 0;
  for (i = 0; i < s->d->num_deliveries; ++i) {
    const npucc_delivery_desc *x = &s->d->deliveries[i];
    const npucc_cmd_desc *c = &s->d->cmds[x->cmd];
    int match = x->mode == NPUCC_DELIVERY_FIFO && x->reg == r;
    for (k = 0; match && k < c->num_select; ++k)
      match = npucc_field_get(s->regs[c->select[k].field.reg], c->select[k].field) ==
              c->select[k].value;
    if (match) {
      sim_launch(s, c);
      return;
    }
  }
  sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
           "frame '%s' pushed into %s (first word 0x%llx) matches no command: no command's "
           "select fields hold these values",
           fr->name, s->d->regs[r].name, (unsigned long long)s->regs[fr->first_reg]);
}

void npucc_sim_insn(npucc_sim *s, unsigned funct3, unsigned funct7, uint64_t rs1, uint64_t rs2) {
  const npucc_delivery_desc *dl = NULL;
  const npucc_frame_desc *fr;
  unsigned k;
  uint16_t i;
  if (s->insn_dl >= 0) {
    dl = &s->d->deliveries[s->insn_dl];
  } else {
    for (i = 0; i < s->d->num_deliveries && dl == NULL; ++i)
      if (s->d->deliveries[i].mode == NPUCC_DELIVERY_INSN && s->d->deliveries[i].funct3 == funct3 &&
          s->d->deliveries[i].funct7 == funct7)
        dl = &s->d->deliveries[i];
    if (dl == NULL) {
      s->cpu += s->d->reg_access_cycles;
      sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
               "custom instruction funct3 %u funct7 %u starts no command", funct3, funct7);
      return;
    }
    s->insn_dl = (int)(dl - s->d->deliveries);
    s->insn_fill = 0;
  }
  fr = &s->d->frames[dl->frame];
  if (dl->funct3 != funct3 || dl->funct7 != funct7) {
    s->cpu += s->d->reg_access_cycles;
    s->insn_dl = -1;
    sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
             "custom instruction funct3 %u funct7 %u arrived after %u of the %u words of "
             "command '%s' (funct7 %u)",
             funct3, funct7, (unsigned)s->insn_fill, (unsigned)fr->num_words,
             npucc_kind_name(s->d->cmds[dl->cmd].kind), (unsigned)dl->funct7);
    return;
  }
  /* Each word costs as a register write of its width (the compiler's
   * estimate charges the encoded words so). */
  for (k = 0; k < 2 && s->insn_fill < fr->num_words; ++k) {
    unsigned w = fr->word_bits, a = sim_bus_bits(s);
    s->cpu += (uint64_t)(w > a ? w / a : 1u) * s->d->reg_access_cycles;
    s->reg_writes += w > a ? w / a : 1u;
    s->regs[fr->first_reg + s->insn_fill++] = k == 0 ? rs1 : rs2;
  }
  if (s->insn_fill < fr->num_words)
    return;
  s->insn_dl = -1;
  sim_launch(s, &s->d->cmds[dl->cmd]);
}

/* The delivery row of the buffer command whose select fields the frame in
 * the words of frame `fr` holds, or NULL. */
static const npucc_delivery_desc *buffer_match(const npucc_sim *s) {
  uint16_t i, k;
  for (i = 0; i < s->d->num_deliveries; ++i) {
    const npucc_delivery_desc *x = &s->d->deliveries[i];
    const npucc_cmd_desc *c = &s->d->cmds[x->cmd];
    int match = x->mode == NPUCC_DELIVERY_BUFFER;
    for (k = 0; match && k < c->num_select; ++k)
      match = npucc_field_get(s->regs[c->select[k].field.reg], c->select[k].field) ==
              c->select[k].value;
    if (match)
      return x;
  }
  return NULL;
}

/* A kick: the words at the address and length its registers hold are read
 * from mapped memory (or the scratchpad), whole frames only, and every
 * frame starts at once, in order, on its engine (a frame for an engine
 * still running a command is a hazard, as a doorbell rung while busy). */
void sim_buffer_kick(npucc_sim *s) {
  const npucc_cmdbuf_desc *b = s->d->cmdbuf;
  const npucc_frame_desc *fr = &s->d->frames[b->frame];
  unsigned wb = fr->word_bits / 8u, k;
  uint64_t addr = npucc_field_get(s->regs[b->address.reg], b->address);
  uint64_t len = npucc_field_get(s->regs[b->length.reg], b->length), words, f;
  sim_window w;
  if (b->length_bytes && len % wb != 0) {
    sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
             "command buffer kicked with a length of %llu bytes: not a whole number of %u-byte "
             "words",
             (unsigned long long)len, wb);
    return;
  }
  words = b->length_bytes ? len / wb : len;
  if (words == 0 || words % fr->num_words != 0) {
    sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
             "command buffer kicked with %llu words: not a whole number of frames '%s' (%u "
             "words each)",
             (unsigned long long)words, fr->name, (unsigned)fr->num_words);
    return;
  }
  if (sim_resolve(s, -1, (int64_t)addr, words * wb, 0, "command buffer", &w) != 0)
    return;
  for (f = 0; f < words / fr->num_words && !s->failed; ++f) {
    const npucc_delivery_desc *dl;
    for (k = 0; k < fr->num_words; ++k) {
      const uint8_t *p = w.ptr + (f * fr->num_words + k) * wb;
      if (wb == 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        s->regs[fr->first_reg + k] = v;
      } else {
        uint32_t v;
        memcpy(&v, p, 4);
        s->regs[fr->first_reg + k] = v;
      }
    }
    dl = buffer_match(s);
    if (dl == NULL) {
      sim_fail(s, -1, NPUCC_DEVERR_PROTOCOL,
               "frame %llu of the command buffer kicked at 0x%08llx (first word 0x%llx) matches "
               "no command: no command's select fields hold these values",
               (unsigned long long)f, (unsigned long long)addr,
               (unsigned long long)s->regs[fr->first_reg]);
      return;
    }
    sim_launch(s, &s->d->cmds[dl->cmd]);
  }
}
