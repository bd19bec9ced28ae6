/* npucc_sim_tables.c - The simulator's checks of a layer's tables and stage
 * parameters against the description's stage widths and pool lists
 * (npucc_target_desc.stage_params): what the
 * hardware's fields can hold, so a compiler that fits parameters wider than
 * the NPU's fails in the simulator, not on silicon. */
#include "npucc_sim_internal.h"

#include "npucc_stages.h"

#include <stdio.h>
#include <string.h>

static int64_t rd_le_i32(const uint8_t *b, size_t i) {
  const uint8_t *x = b + 4 * i;
  return (int64_t)(int32_t)((uint32_t)x[0] | ((uint32_t)x[1] << 8) | ((uint32_t)x[2] << 16) |
                            ((uint32_t)x[3] << 24));
}

/* Does v fit `bits` bits (two's complement when is_signed)? */
static int fits_bits(int64_t v, unsigned bits, int is_signed) {
  if (bits >= 63)
    return 1;
  if (bits == 0)
    return v == 0;
  if (is_signed)
    return v >= -((int64_t)1 << (bits - 1)) && v < ((int64_t)1 << (bits - 1));
  return v >= 0 && v < ((int64_t)1 << bits);
}

int sim_check_msa_widths(npucc_sim *s, int idx, int kind, int64_t channels, const uint8_t *rq) {
  static const char *const names[3] = {"mul", "shift", "add"};
  const uint8_t *sp;
  int64_t i;
  int k;
  if (s->d->stage_params == NULL)
    return 0;
  sp = &s->d->stage_params[kind * NPUCC_SP_COUNT];
  for (i = 0; i < channels; ++i)
    for (k = 0; k < 3; ++k) {
      int64_t v = rd_le_i32(rq, (size_t)(k * channels + i));
      int is_signed = k != NPUCC_SP_MSA_SHIFT_BITS;
      if (!fits_bits(v, sp[k], is_signed))
        return sim_fail(s, idx, NPUCC_DEVERR_LIMIT,
                        "requant table: %s %lld of channel %lld does not fit the operation's %u "
                        "%sbits",
                        names[k], (long long)v, (long long)i, (unsigned)sp[k],
                        is_signed ? "signed " : "");
    }
  return 0;
}

int sim_check_pwl_segments(npucc_sim *s, int idx, int kind, const uint8_t *t) {
  unsigned n, used = 1, i;
  if (s->d->stage_params == NULL)
    return 0;
  n = s->d->stage_params[kind * NPUCC_SP_COUNT + NPUCC_SP_PWL_SEGMENTS];
  /* The records after the last segment in use repeat it. */
  for (i = 1; i < NPUCC_PWL_SEGMENTS; ++i)
    if (memcmp(t + 8 * i, t + 8 * (i - 1), 8) != 0 ||
        t[NPUCC_PWL_SEGMENTS * 8 + i] != t[NPUCC_PWL_SEGMENTS * 8 + i - 1])
      used = i + 1;
  if (n != 0 && used > n)
    return sim_fail(s, idx, NPUCC_DEVERR_LIMIT,
                    "pwl segment table: %u segments in use (record %u differs from the one "
                    "before it), the operation has %u",
                    used, used - 1, n);
  return 0;
}

int sim_check_corr_widths(npucc_sim *s, int idx, int kind, const int64_t *p) {
  static const int params[5] = {NPUCC_P_CORR_X, NPUCC_P_CORR_X_SHIFT, NPUCC_P_CORR_W,
                                NPUCC_P_CORR_W_SHIFT, NPUCC_P_CORR_ADD};
  static const char *const names[5] = {"corr_x", "corr_x_shift", "corr_w", "corr_w_shift",
                                       "corr_add"};
  static const int col[5] = {NPUCC_SP_CORR_X_BITS, NPUCC_SP_CORR_SHIFT_BITS, NPUCC_SP_CORR_W_BITS,
                             NPUCC_SP_CORR_SHIFT_BITS, NPUCC_SP_CORR_ADD_BITS};
  int k;
  for (k = 0; k < 5; ++k) {
    int64_t v = p[params[k]];
    int is_signed = k != 1 && k != 3;
    /* Without the table the stage's own bounds: 32-bit factors, shifts
     * 0..63, a 40-bit corr_add (npucc_stage_corr_terms). */
    unsigned bits = s->d->stage_params ? s->d->stage_params[kind * NPUCC_SP_COUNT + col[k]]
                    : k == 4           ? 40u
                    : is_signed        ? 32u
                                       : 6u;
    if (!fits_bits(v, bits, is_signed))
      return sim_fail(s, idx, NPUCC_DEVERR_LIMIT,
                      "field value out of range: %s %lld does not fit the correction stage's %u "
                      "%sbits",
                      names[k], (long long)v, bits, is_signed ? "signed " : "");
  }
  return 0;
}

/* Bits 0..n-1 of the little-endian mask at b (n / 8 bytes). */
static uint64_t rd_mask(const uint8_t *b, unsigned bytes) {
  uint64_t m = 0;
  unsigned i;
  for (i = 0; i < bytes; ++i)
    m |= (uint64_t)b[i] << (8 * i);
  return m;
}

int sim_check_pool_lists(npucc_sim *s, int idx, int kind, int64_t k, int64_t oy, int64_t ox) {
  const uint8_t *row;
  uint32_t kernels;
  uint64_t offsets;
  char list[520]; /* at most 64 offsets of 8 characters */
  size_t n = 0;
  unsigned i;
  int st = npucc_stage_of(s->d->arith, kind, NPUCC_SLOT_POOL);
  if (s->d->stage_params == NULL || k <= 1 ||
      (st != NPUCC_STAGE_POOL_MAX && st != NPUCC_STAGE_POOL_SELECT))
    return 0;
  row = &s->d->stage_params[NPUCC_SPP_BASE + kind * NPUCC_SPP_COUNT];
  kernels = (uint32_t)rd_mask(row + NPUCC_SPP_KERNELS, 4);
  offsets = rd_mask(row + NPUCC_SPP_OFFSETS, 8);
  list[0] = '\0';
  if (k > 31 || !((kernels >> k) & 1u)) {
    for (i = 2; i < 32; ++i)
      if (((kernels >> i) & 1u) && n + 8 < sizeof(list))
        n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%u", n ? ", " : "", i);
    return sim_fail(s, idx, NPUCC_DEVERR_LIMIT,
                    "field value out of range: pool_k %lld is not one of the %s pool stage's "
                    "windows (%s)",
                    (long long)k, st == NPUCC_STAGE_POOL_MAX ? "max" : "select", list);
  }
  if (st != NPUCC_STAGE_POOL_SELECT || (oy < 8 && ox < 8 && ((offsets >> (8 * oy + ox)) & 1u)))
    return 0;
  for (i = 0; i < 64; ++i)
    if (((offsets >> i) & 1u) && n + 10 < sizeof(list))
      n += (size_t)snprintf(list + n, sizeof(list) - n, "%s[%u, %u]", n ? ", " : "", i / 8, i % 8);
  return sim_fail(s, idx, NPUCC_DEVERR_LIMIT,
                  "field value out of range: pool offset (%lld, %lld) is not one the select "
                  "stage offers (%s)",
                  (long long)oy, (long long)ox, list);
}
