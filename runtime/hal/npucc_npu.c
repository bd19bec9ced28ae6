/* npucc_npu.c - Packs semantic command parameters into register fields (and
 * back) using the description table; rings the doorbell through the HAL. */
#include "npucc_npu.h"

#include <stddef.h>

#define NPUCC_MAX_REGS 64

static const int32_t g_defaults[NPUCC_P_COUNT] = {
#define NPUCC_PARAM_DEF(id, name, def, req, allowed, sgn) (int32_t)(def),
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
int32_t npucc_param_default(int param) { return g_defaults[param]; }
int npucc_param_is_signed(int param) { return g_signed[param]; }
int npucc_param_allowed(int param, int kind) { return (g_allowed[param] >> kind) & 1u; }

void npucc_npu_defaults(int32_t params[NPUCC_P_COUNT]) {
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

static uint32_t field_mask(npucc_fieldref f) {
  return f.width >= 32 ? 0xFFFFFFFFu : ((1u << f.width) - 1u);
}

uint32_t npucc_field_get(uint32_t regval, npucc_fieldref f) {
  return (regval >> f.lsb) & field_mask(f);
}

uint32_t npucc_field_put(uint32_t regval, npucc_fieldref f, uint32_t v) {
  uint32_t m = field_mask(f) << f.lsb;
  return (regval & ~m) | ((v << f.lsb) & m);
}

static int set_field(uint32_t *regs, uint64_t *touched, npucc_fieldref f, uint32_t v) {
  if (f.reg < 0 || f.reg >= NPUCC_MAX_REGS)
    return NPUCC_ERR_UNSUPPORTED;
  regs[f.reg] = npucc_field_put(regs[f.reg], f, v);
  *touched |= (uint64_t)1 << f.reg;
  return NPUCC_OK;
}

/* (value - minus) >> shift, checked to fit the field. */
static int encode_value(const npucc_binding *b, int64_t value, uint32_t *out) {
  int64_t v = value - (int64_t)b->minus;
  int64_t lo, hi;
  if (b->shift) {
    if (v & (((int64_t)1 << b->shift) - 1))
      return NPUCC_ERR_ALIGN;
    v /= ((int64_t)1 << b->shift);
  }
  if (g_signed[b->param]) {
    lo = -((int64_t)1 << (b->field.width - 1));
    hi = ((int64_t)1 << (b->field.width - 1)) - 1;
  } else {
    lo = 0;
    hi = ((int64_t)1 << b->field.width) - 1;
  }
  if (v < lo || v > hi)
    return NPUCC_ERR_RANGE;
  *out = (uint32_t)(v & (int64_t)0xFFFFFFFF);
  return NPUCC_OK;
}

int npucc_npu_encode(const npucc_target_desc *d, int kind, const int32_t params[NPUCC_P_COUNT],
                     uint32_t *regs, uint64_t *touched, int *bad_param) {
  const npucc_cmd_desc *c = npucc_desc_find_cmd(d, kind);
  uint8_t bound[NPUCC_P_COUNT];
  int p, rc;
  uint16_t i;
  if (bad_param != NULL)
    *bad_param = -1;
  if (c == NULL || d->num_regs > NPUCC_MAX_REGS)
    return NPUCC_ERR_UNSUPPORTED;
  for (p = 0; p < NPUCC_P_COUNT; ++p)
    bound[p] = 0;
  for (i = 0; i < d->num_regs; ++i)
    regs[i] = 0;
  *touched = 0;
  for (i = 0; i < c->num_bindings; ++i) {
    const npucc_binding *b = &c->bindings[i];
    uint32_t v = 0;
    bound[b->param] = 1;
    rc = encode_value(
        b, g_signed[b->param] ? (int64_t)params[b->param] : (int64_t)(uint32_t)params[b->param],
        &v);
    if (rc == NPUCC_OK)
      rc = set_field(regs, touched, b->field, v);
    if (rc != NPUCC_OK) {
      if (bad_param != NULL)
        *bad_param = b->param;
      return rc;
    }
  }
  /* Parameters the hardware fixes must have the fixed value; parameters it
   * does not know must keep their default. */
  for (p = 0; p < NPUCC_P_COUNT; ++p) {
    int32_t want = g_defaults[p];
    int fixed = 0;
    if (bound[p] || !npucc_param_allowed(p, kind))
      continue;
    for (i = 0; i < c->num_fixed; ++i)
      if (c->fixed[i].param == p) {
        want = c->fixed[i].value;
        fixed = 1;
      }
    if (params[p] != want) {
      if (bad_param != NULL)
        *bad_param = p;
      return fixed ? NPUCC_ERR_PARAM : NPUCC_ERR_UNSUPPORTED;
    }
  }
  for (i = 0; i < c->num_select; ++i) {
    rc = set_field(regs, touched, c->select[i].field, c->select[i].value);
    if (rc != NPUCC_OK)
      return rc;
  }
  return set_field(regs, touched, c->doorbell.field, c->doorbell.value);
}

int npucc_npu_issue(const npucc_target_desc *d, int kind, const int32_t params[NPUCC_P_COUNT],
                    int *bad_param) {
  uint32_t regs[NPUCC_MAX_REGS];
  uint64_t touched = 0;
  const npucc_cmd_desc *c;
  int rc = npucc_npu_encode(d, kind, params, regs, &touched, bad_param);
  uint16_t i;
  int16_t bell;
  if (rc != NPUCC_OK)
    return rc;
  c = npucc_desc_find_cmd(d, kind);
  bell = c->doorbell.field.reg;
  for (i = 0; i < d->num_regs; ++i)
    if (((touched >> i) & 1u) && (int16_t)i != bell)
      npucc_hal_write(d->regs[i].offset, regs[i], d->regs[i].width);
  npucc_hal_write(d->regs[bell].offset, regs[bell], d->regs[bell].width);
  return NPUCC_OK;
}

void npucc_npu_decode(const npucc_target_desc *d, const npucc_cmd_desc *c, const uint32_t *regs,
                      int64_t out[NPUCC_P_COUNT]) {
  int p;
  uint16_t i;
  (void)d;
  for (p = 0; p < NPUCC_P_COUNT; ++p)
    out[p] = g_defaults[p];
  for (i = 0; i < c->num_fixed; ++i)
    out[c->fixed[i].param] = c->fixed[i].value;
  for (i = 0; i < c->num_bindings; ++i) {
    const npucc_binding *b = &c->bindings[i];
    uint32_t raw = npucc_field_get(regs[b->field.reg], b->field);
    int64_t v = raw;
    if (g_signed[b->param] && b->field.width < 64 && ((raw >> (b->field.width - 1)) & 1u))
      v = (int64_t)raw - ((int64_t)1 << b->field.width);
    out[b->param] = v * ((int64_t)1 << b->shift) + b->minus;
  }
}
