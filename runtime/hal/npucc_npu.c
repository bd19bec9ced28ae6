/* npucc_npu.c - Packs semantic command parameters into register fields (and
 * back) using the description table. Pure computation: no register access
 * (npucc_npu_issue, which writes the registers, is in npucc_hal.c), so the
 * compiler links this file too and encodes exactly as the firmware does. */
#include "npucc_npu.h"

#include <stddef.h>

static const int64_t g_defaults[NPUCC_P_COUNT] = {
#define NPUCC_PARAM_DEF(id, name, def, req, allowed, sgn) (int64_t)(def),
    NPUCC_PARAM_LIST(NPUCC_PARAM_DEF)
#undef NPUCC_PARAM_DEF
};
static const uint8_t g_signed[NPUCC_P_COUNT] = {
#define NPUCC_PARAM_SGN(id, name, def, req, allowed, sgn) (uint8_t)(sgn),
    NPUCC_PARAM_LIST(NPUCC_PARAM_SGN)
#undef NPUCC_PARAM_SGN
};
static const uint32_t g_allowed[NPUCC_P_COUNT] = {
#define NPUCC_PARAM_ALW(id, name, def, req, allowed, sgn) (uint32_t)(allowed),
    NPUCC_PARAM_LIST(NPUCC_PARAM_ALW)
#undef NPUCC_PARAM_ALW
};
static const char *const g_names[NPUCC_P_COUNT] = {
#define NPUCC_PARAM_NM(id, name, def, req, allowed, sgn) name,
    NPUCC_PARAM_LIST(NPUCC_PARAM_NM)
#undef NPUCC_PARAM_NM
};
static const char *const g_kinds[NPUCC_KIND_COUNT] = {"dma",  "conv",    "depthwise", "matmul",
                                                      "pool", "eltwise", "fence"};

const char *npucc_param_name(int param) {
  return param >= 0 && param < NPUCC_P_COUNT ? g_names[param] : "?";
}
const char *npucc_kind_name(int kind) {
  return kind >= 0 && kind < NPUCC_KIND_COUNT ? g_kinds[kind] : "?";
}
int64_t npucc_param_default(int param) { return g_defaults[param]; }
int npucc_param_is_signed(int param) { return g_signed[param]; }
int npucc_param_allowed(int param, int kind) { return (g_allowed[param] >> kind) & 1u; }

void npucc_npu_defaults(int64_t params[NPUCC_P_COUNT]) {
  int i;
  for (i = 0; i < NPUCC_P_COUNT; ++i)
    params[i] = g_defaults[i];
}

const npucc_cmd_desc *npucc_desc_find_cmd(const npucc_target_desc *d, int kind) {
  uint16_t i;
  for (i = 0; i < d->num_cmds; ++i)
    if (d->cmds[i].kind == kind)
      return &d->cmds[i];
  return NULL;
}

const npucc_delivery_desc *npucc_desc_delivery(const npucc_target_desc *d,
                                               const npucc_cmd_desc *c) {
  uint16_t i;
  for (i = 0; i < d->num_deliveries; ++i)
    if (&d->cmds[d->deliveries[i].cmd] == c)
      return &d->deliveries[i];
  return NULL;
}

uint64_t npucc_width_mask(unsigned width) {
  return width >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1u);
}

uint64_t npucc_field_get(uint64_t regval, npucc_fieldref f) {
  return (regval >> f.lsb) & npucc_width_mask(f.width);
}

uint64_t npucc_field_put(uint64_t regval, npucc_fieldref f, uint64_t v) {
  uint64_t m = npucc_width_mask(f.width) << f.lsb;
  return (regval & ~m) | ((v << f.lsb) & m);
}

int npucc_status_active(uint64_t regval, npucc_status_bit b) {
  uint64_t v;
  if (b.f.reg < 0)
    return 0;
  v = npucc_field_get(regval, b.f);
  return (b.flags & NPUCC_SB_ACTIVE_LOW) ? v == 0 : v != 0;
}

/* Checked int64 arithmetic for npucc_expr_eval: 0, or -1 when the result
 * is not representable or the operands are outside the operation's domain. */
static int expr_apply(uint8_t op, int64_t a, int64_t b, int64_t *r) {
  switch (op) {
  case NPUCC_EXPR_ADD:
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
      return -1;
    *r = a + b;
    return 0;
  case NPUCC_EXPR_SUB:
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
      return -1;
    *r = a - b;
    return 0;
  case NPUCC_EXPR_MUL:
    if (a != 0 && b != 0) {
      if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN))
        return -1;
      if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
                : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return -1;
    }
    *r = a * b;
    return 0;
  case NPUCC_EXPR_MIN:
    *r = a < b ? a : b;
    return 0;
  case NPUCC_EXPR_MAX:
    *r = a > b ? a : b;
    return 0;
  default:
    break;
  }
  /* The rest take non-negative operands. */
  if (a < 0 || b < 0)
    return -1;
  switch (op) {
  case NPUCC_EXPR_DIV:
  case NPUCC_EXPR_MOD:
  case NPUCC_EXPR_CDIV:
    if (b == 0)
      return -1;
    *r = op == NPUCC_EXPR_DIV ? a / b : op == NPUCC_EXPR_MOD ? a % b : a / b + (a % b != 0);
    return 0;
  case NPUCC_EXPR_SHL:
    if (b > 62 || a > (INT64_MAX >> b))
      return -1;
    *r = a << b;
    return 0;
  case NPUCC_EXPR_SHR:
    if (b > 62)
      return -1;
    *r = a >> b;
    return 0;
  case NPUCC_EXPR_AND:
    *r = a & b;
    return 0;
  case NPUCC_EXPR_OR:
    *r = a | b;
    return 0;
  default:
    return -1;
  }
}

int npucc_expr_eval(const npucc_expr_op *ops, unsigned num_ops, const int64_t *params,
                    int64_t *out) {
  int64_t st[NPUCC_EXPR_STACK];
  unsigned n = 0, i;
  for (i = 0; i < num_ops; ++i) {
    const npucc_expr_op *o = &ops[i];
    if (o->op == NPUCC_EXPR_CONST || o->op == NPUCC_EXPR_PARAM) {
      if (n == NPUCC_EXPR_STACK ||
          (o->op == NPUCC_EXPR_PARAM && (o->arg < 0 || o->arg >= NPUCC_P_COUNT)))
        return NPUCC_ERR_RANGE;
      st[n++] = o->op == NPUCC_EXPR_CONST ? o->arg : params[o->arg];
      continue;
    }
    if (n < 2 || expr_apply(o->op, st[n - 2], st[n - 1], &st[n - 2]) != 0)
      return NPUCC_ERR_RANGE;
    --n;
  }
  if (n != 1)
    return NPUCC_ERR_RANGE;
  *out = st[0];
  return NPUCC_OK;
}

/* The value of field binding fb for these parameters: NPUCC_OK and *v, or
 * NPUCC_ERR_RANGE (the expression fails, no case matches, or the value does
 * not fit the field). */
static int field_binding_value(const npucc_target_desc *d, const npucc_field_binding *fb,
                               const int64_t *params, uint64_t *v) {
  if (fb->kind == NPUCC_FB_CASES) {
    uint16_t i, k;
    for (i = 0; i < fb->count; ++i) {
      const npucc_expr_case *c = &d->cases[fb->first + i];
      int all = 1;
      for (k = 0; k < c->num_conds; ++k)
        all &= params[d->case_conds[c->first_cond + k].param] ==
               d->case_conds[c->first_cond + k].value;
      if (all) {
        *v = c->value;
        return NPUCC_OK;
      }
    }
    return NPUCC_ERR_RANGE;
  } else {
    int64_t x;
    if (npucc_expr_eval(d->expr_ops + fb->first, fb->count, params, &x) != NPUCC_OK || x < 0 ||
        (fb->field.width < 64 && (uint64_t)x > npucc_width_mask(fb->field.width)))
      return NPUCC_ERR_RANGE;
    *v = (uint64_t)x;
    return NPUCC_OK;
  }
}

/* Is parameter p recovered from a cases table of command `cmd`? */
static int decoded_by_cases(const npucc_target_desc *d, uint16_t cmd, int p) {
  uint16_t i, k;
  for (i = 0; i < d->num_field_bindings; ++i) {
    const npucc_field_binding *fb = &d->field_bindings[i];
    if (fb->cmd != cmd || fb->kind != NPUCC_FB_CASES || !fb->decodes || fb->count == 0)
      continue;
    for (k = 0; k < d->cases[fb->first].num_conds; ++k)
      if (d->case_conds[d->cases[fb->first].first_cond + k].param == p)
        return 1;
  }
  return 0;
}

/* The write list: each register once, in first-touch order. */
typedef struct reg_list {
  npucc_reg_write *w;
  int n;
} reg_list;

/* The write-enable field guarding field f (a named field of its register),
 * or an absent reference. */
static npucc_fieldref guard_of(const npucc_target_desc *d, npucc_fieldref f) {
  npucc_fieldref g;
  uint16_t k;
  g.reg = -1;
  g.lsb = g.width = 0;
  if (f.reg < 0 || d->fields == NULL)
    return g;
  for (k = 0; k < d->regs[f.reg].num_fields; ++k) {
    const npucc_field_desc *x = &d->fields[d->regs[f.reg].first_field + k];
    if (x->lsb == f.lsb && x->width == f.width && x->we >= 0) {
      g.reg = f.reg;
      g.lsb = d->fields[x->we].lsb;
      g.width = d->fields[x->we].width;
    }
  }
  return g;
}

static int set_field(const npucc_target_desc *d, reg_list *l, npucc_fieldref f, uint64_t v) {
  int i;
  npucc_fieldref g = guard_of(d, f);
  if (f.reg < 0)
    return NPUCC_ERR_UNSUPPORTED;
  for (i = 0; i < l->n; ++i)
    if (l->w[i].reg == (uint16_t)f.reg)
      break;
  if (i == l->n) {
    if (l->n == NPUCC_MAX_CMD_REGS)
      return NPUCC_ERR_UNSUPPORTED;
    l->w[i].reg = (uint16_t)f.reg;
    l->w[i].value = 0;
    l->w[i].mask = 0;
    l->n++;
  }
  l->w[i].value = npucc_field_put(l->w[i].value, f, v);
  l->w[i].mask |= npucc_width_mask(f.width) << f.lsb;
  if (g.reg >= 0) {
    /* A guarded field changes only while its write enable is all ones. */
    l->w[i].value = npucc_field_put(l->w[i].value, g, ~(uint64_t)0);
    l->w[i].mask |= npucc_width_mask(g.width) << g.lsb;
  }
  return NPUCC_OK;
}

static npucc_fieldref part_of(const npucc_target_desc *d, const npucc_binding *b, int k) {
  return k == 0 ? b->field : d->parts[b->more + k - 1];
}

static unsigned binding_width(const npucc_target_desc *d, const npucc_binding *b) {
  unsigned w = 0;
  int k;
  for (k = 0; k < b->num_parts; ++k)
    w += part_of(d, b, k).width;
  return w;
}

/* (value - minus) >> shift, checked to fit the binding's fields; *code gets
 * the field bits (two's complement for signed parameters). */
static int encode_value(const npucc_target_desc *d, const npucc_binding *b, int64_t value,
                        uint64_t *code) {
  unsigned w = binding_width(d, b);
  int64_t v;
  if ((b->minus > 0 && value < INT64_MIN + b->minus) ||
      (b->minus < 0 && value > INT64_MAX + b->minus))
    return NPUCC_ERR_RANGE;
  v = value - b->minus;
  if (b->shift) {
    if (v & (((int64_t)1 << b->shift) - 1))
      return NPUCC_ERR_ALIGN;
    v /= ((int64_t)1 << b->shift);
  }
  if (w < 64) {
    int64_t lo = g_signed[b->param] ? -((int64_t)1 << (w - 1)) : 0;
    int64_t hi = g_signed[b->param] ? ((int64_t)1 << (w - 1)) - 1 : ((int64_t)1 << w) - 1;
    if (v < lo || v > hi)
      return NPUCC_ERR_RANGE;
  } else if (!g_signed[b->param] && v < 0) {
    return NPUCC_ERR_RANGE;
  }
  *code = (uint64_t)v;
  return NPUCC_OK;
}

static int put_binding(const npucc_target_desc *d, reg_list *l, const npucc_binding *b,
                       uint64_t code) {
  int k, rc;
  for (k = 0; k < b->num_parts; ++k) {
    npucc_fieldref f = part_of(d, b, k);
    rc = set_field(d, l, f, code & npucc_width_mask(f.width));
    if (rc != NPUCC_OK)
      return rc;
    /* A 64-bit part consumes the whole code (a shift by 64 is undefined). */
    code = f.width >= 64 ? 0 : code >> f.width;
  }
  return NPUCC_OK;
}

/* A frame command: every word of its frame, in frame order, each written
 * whole (the words no field of the command touches hold 0). */
static int frame_words(const npucc_target_desc *d, const npucc_delivery_desc *dl, reg_list *l,
                       int *num_writes) {
  npucc_reg_write held[NPUCC_MAX_CMD_REGS];
  const npucc_frame_desc *fr = &d->frames[dl->frame];
  int i, k;
  if (fr->num_words > NPUCC_MAX_CMD_REGS)
    return NPUCC_ERR_UNSUPPORTED;
  for (i = 0; i < l->n; ++i)
    held[i] = l->w[i];
  for (k = 0; k < (int)fr->num_words; ++k) {
    uint16_t reg = (uint16_t)(fr->first_reg + k);
    l->w[k].reg = reg;
    l->w[k].value = 0;
    l->w[k].mask = npucc_width_mask(fr->word_bits);
    for (i = 0; i < l->n; ++i)
      if (held[i].reg == reg)
        l->w[k].value = held[i].value;
  }
  *num_writes = (int)fr->num_words;
  return NPUCC_OK;
}

int npucc_npu_encode(const npucc_target_desc *d, int kind, const int64_t params[NPUCC_P_COUNT],
                     npucc_reg_write writes[NPUCC_MAX_CMD_REGS], int *num_writes,
                     int *bad_param) {
  const npucc_cmd_desc *c = npucc_desc_find_cmd(d, kind);
  uint8_t bound[NPUCC_P_COUNT];
  reg_list l;
  int p, rc, bell;
  uint16_t k;
  l.w = writes;
  l.n = 0;
  *num_writes = 0;
  if (bad_param != NULL)
    *bad_param = -1;
  if (c == NULL)
    return NPUCC_ERR_UNSUPPORTED;
  for (p = 0; p < NPUCC_P_COUNT; ++p)
    bound[p] = 0;
  for (k = 0; k < c->num_bindings; ++k) {
    const npucc_binding *b = &c->bindings[k];
    uint64_t code = 0;
    bound[b->param] = 1;
    rc = encode_value(d, b, params[b->param], &code);
    if (rc == NPUCC_OK)
      rc = put_binding(d, &l, b, code);
    if (rc != NPUCC_OK) {
      if (bad_param != NULL)
        *bad_param = b->param;
      return rc;
    }
  }
  /* Parameters the hardware fixes must have the fixed value; parameters it
   * does not know must keep their default. */
  for (p = 0; p < NPUCC_P_COUNT; ++p) {
    int64_t want = g_defaults[p];
    int fixed = 0;
    if (bound[p] || !npucc_param_allowed(p, kind) ||
        (d->num_field_bindings && decoded_by_cases(d, (uint16_t)(c - d->cmds), p)))
      continue;
    for (k = 0; k < c->num_fixed; ++k)
      if (c->fixed[k].param == p) {
        want = c->fixed[k].value;
        fixed = 1;
      }
    if (params[p] != want) {
      if (bad_param != NULL)
        *bad_param = p;
      return fixed ? NPUCC_ERR_PARAM : NPUCC_ERR_UNSUPPORTED;
    }
  }
  /* Fields computed from the parameters, after the parameter bindings. */
  for (k = 0; k < d->num_field_bindings; ++k) {
    const npucc_field_binding *fb = &d->field_bindings[k];
    uint64_t v = 0;
    if (&d->cmds[fb->cmd] != c)
      continue;
    rc = field_binding_value(d, fb, params, &v);
    if (rc == NPUCC_OK)
      rc = set_field(d, &l, fb->field, v);
    if (rc != NPUCC_OK) {
      if (bad_param != NULL)
        *bad_param = fb->param;
      return rc;
    }
  }
  for (k = 0; k < c->num_select; ++k) {
    rc = set_field(d, &l, c->select[k].field, c->select[k].value);
    if (rc != NPUCC_OK)
      return rc;
  }
  if (d->num_deliveries && npucc_desc_delivery(d, c) != NULL)
    return frame_words(d, npucc_desc_delivery(d, c), &l, num_writes);
  rc = set_field(d, &l, c->doorbell.field, c->doorbell.value);
  if (rc != NPUCC_OK)
    return rc;
  /* The register holding the doorbell goes last (swapped with the last one,
   * which keeps the order deterministic without a library memmove). */
  for (bell = 0; bell < l.n; ++bell)
    if (l.w[bell].reg == (uint16_t)c->doorbell.field.reg)
      break;
  {
    npucc_reg_write last = l.w[bell];
    l.w[bell] = l.w[l.n - 1];
    l.w[l.n - 1] = last;
  }
  *num_writes = l.n;
  return NPUCC_OK;
}

int npucc_npu_skip(const npucc_target_desc *d, const npucc_cmd_desc *c, const npucc_reg_write *w,
                   const npucc_reg_shadow *s) {
  return s != NULL && w->reg < d->num_regs && (d->regs[w->reg].flags & NPUCC_REG_PERSIST) &&
         (int)w->reg != c->doorbell.field.reg && s->known[w->reg] && s->value[w->reg] == w->value;
}

void npucc_npu_note(const npucc_target_desc *d, const npucc_reg_shadow *s, int reg,
                    uint64_t value) {
  if (s == NULL || reg < 0 || reg >= (int)d->num_regs || !(d->regs[reg].flags & NPUCC_REG_PERSIST))
    return;
  s->value[reg] = value;
  s->known[reg] = 1;
}

void npucc_npu_forget(const npucc_target_desc *d, const npucc_reg_shadow *s) {
  uint16_t r;
  for (r = 0; s != NULL && r < d->num_regs; ++r)
    s->known[r] = 0;
}

void npucc_npu_decode(const npucc_target_desc *d, const npucc_cmd_desc *c, const uint64_t *regs,
                      int64_t out[NPUCC_P_COUNT]) {
  int p, k;
  uint16_t i;
  for (p = 0; p < NPUCC_P_COUNT; ++p)
    out[p] = g_defaults[p];
  /* Parameters recovered from cases tables: the conditions of the case
   * whose value the field holds (none: they keep their defaults, and
   * npucc_npu_check_fields reports the field). Parameter bindings, read
   * after them, win; the check then reports a table that disagrees. */
  for (i = 0; i < d->num_field_bindings; ++i) {
    const npucc_field_binding *fb = &d->field_bindings[i];
    uint16_t j, m;
    if (&d->cmds[fb->cmd] != c || fb->kind != NPUCC_FB_CASES || !fb->decodes)
      continue;
    for (j = 0; j < fb->count; ++j) {
      const npucc_expr_case *e = &d->cases[fb->first + j];
      if (e->value != npucc_field_get(regs[fb->field.reg], fb->field))
        continue;
      for (m = 0; m < e->num_conds; ++m)
        out[d->case_conds[e->first_cond + m].param] = d->case_conds[e->first_cond + m].value;
      break;
    }
  }
  for (i = 0; i < c->num_fixed; ++i)
    out[c->fixed[i].param] = c->fixed[i].value;
  for (i = 0; i < c->num_bindings; ++i) {
    const npucc_binding *b = &c->bindings[i];
    uint64_t code = 0;
    unsigned pos = 0, w = binding_width(d, b);
    int64_t v;
    for (k = 0; k < b->num_parts; ++k) {
      npucc_fieldref f = part_of(d, b, k);
      if (pos < 64)
        code |= npucc_field_get(regs[f.reg], f) << pos;
      pos += f.width;
    }
    if (g_signed[b->param] && w < 64 && ((code >> (w - 1)) & 1u))
      code |= ~(uint64_t)0 << w;
    v = (int64_t)code;
    out[b->param] = (int64_t)((uint64_t)v * ((uint64_t)1 << b->shift) + (uint64_t)b->minus);
  }
}

int npucc_npu_check_fields(const npucc_target_desc *d, const npucc_cmd_desc *c,
                           const uint64_t *regs, const int64_t params[NPUCC_P_COUNT],
                           npucc_field_mismatch *m) {
  uint16_t i;
  for (i = 0; i < d->num_field_bindings; ++i) {
    const npucc_field_binding *fb = &d->field_bindings[i];
    uint64_t want = 0;
    int rc;
    if (&d->cmds[fb->cmd] != c)
      continue;
    m->binding = (int)i;
    m->held = npucc_field_get(regs[fb->field.reg], fb->field);
    m->expected = 0;
    rc = field_binding_value(d, fb, params, &want);
    if (rc != NPUCC_OK)
      return rc;
    m->expected = want;
    if (want != m->held)
      return 1;
  }
  m->binding = -1;
  return NPUCC_OK;
}

npucc_fieldref npucc_npu_param_field(const npucc_target_desc *d, int kind, int param,
                                     const char **reg_name, const char **field_name) {
  const npucc_cmd_desc *c = npucc_desc_find_cmd(d, kind);
  npucc_fieldref f;
  uint16_t k;
  f.reg = -1;
  f.lsb = f.width = 0;
  if (reg_name != NULL)
    *reg_name = "";
  if (field_name != NULL)
    *field_name = "";
  if (c == NULL || param < 0)
    return f;
  for (k = 0; k < c->num_bindings && f.reg < 0; ++k)
    if (c->bindings[k].param == param)
      f = c->bindings[k].field;
  for (k = 0; k < d->num_field_bindings && f.reg < 0; ++k)
    if (&d->cmds[d->field_bindings[k].cmd] == c && d->field_bindings[k].param == param)
      f = d->field_bindings[k].field;
  if (f.reg < 0)
    return f;
  if (reg_name != NULL)
    *reg_name = d->regs[f.reg].name;
  if (field_name != NULL) {
    for (k = 0; d->fields != NULL && k < d->regs[f.reg].num_fields; ++k) {
      const npucc_field_desc *x = &d->fields[d->regs[f.reg].first_field + k];
      if (x->lsb == f.lsb && x->width == f.width)
        *field_name = x->name;
    }
  }
  return f;
}
