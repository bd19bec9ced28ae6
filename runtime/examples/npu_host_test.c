/* npu_host_test.c - A firmware engineer's host test against the NPU simulator.
 *
 * It uses only what `npucc --target T --emit-runtime DIR --with-sim` writes into
 * DIR (HAL, command layer, description table, simulator) and works unchanged for
 * any target description, because it asks the table for everything it needs:
 *
 *   1. weights and bias are placed in the first read-only system window (flash),
 *      the input in the first writable one (RAM), as host buffers mapped into
 *      the simulator (at 64-bit NPU addresses where the description has them);
 *   2. DMA commands move them into the scratchpad, each operand in the next bank
 *      (so operands that must not share a bank never do), at addresses that meet
 *      every alignment the description states (DMA, scratchpad, each operand: the
 *      per-channel table gets its own aligned offset after the bias), in
 *      transfers no longer than the DMA's max_length; the CPU waits for each.
 *      Where the conv reads weights and tables from system memory itself
 *      (npucc_op_limits.operand_mem), they stay in flash and only the input
 *      is moved;
 *   3. one 3x3 convolution (pad 1) runs on the compute engine, requantized per
 *      channel or per tensor, whichever the NPU's conv has (with binary32
 *      scales per channel where its requantization stage is fp32_scale, one
 *      right shift per channel where it is shift), its
 *      weights in the layout the NPU's conv reads (on an NPU with uint8
 *      input and output and the correction_terms stage, the data is stored
 *      + 128, the weights + 128 with their zero point in corr_x / corr_add:
 *      the int8 reference holds bit for bit)
 *      (npucc_target_desc.weight_layout, npucc_layout.h), its input and output
 *      in the layout it reads and writes in the scratchpad (act_block: NHWC or
 *      channel-blocked, the pad channels zero);
 *   4. a DMA moves the result back to RAM, and it is compared bit for bit with a
 *      plain C reference that uses the same requantization (npucc_requant.h,
 *      npucc_stages.h);
 *   5. the simulator's report (cycles per command, MAC utilisation, bytes
 *      moved) is printed.
 * Any command that cannot be issued, any wait that does not return NPUCC_OK and
 * any simulator error fails the run (exit 1).
 *
 * Variants that must fail (the firmware test tier checks that they do):
 *   race      no wait between the input DMA and the convolution: the simulator
 *             reports the race (or, on an NPU whose DMA and compute never
 *             overlap, the busy engine);
 *   waw       no wait for the convolution before a DMA into its output buffer
 *             (write after write): the simulator reports the race (or the busy
 *             engine);
 *   badparam  a convolution whose input height no field can hold: the command
 *             layer refuses to issue it;
 *   timeout   the wait for the convolution gets a single status poll;
 *   fault     a DMA into read-only memory (or outside every window): the wait
 *             must report the device error and its code.
 *
 * Build (C99, no other dependencies):
 *   npucc --target npu-default --emit-runtime rt --with-sim
 *   cc -std=c99 -DNPUCC_HAL_SIM -Irt rt/[all .c files] npu_host_test.c -o npu_host_test
 * rt/npucc_target.h names the emitted NPU's table (NPUCC_TARGET).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npucc_hal.h"
#include "npucc_layout.h"
#include "npucc_npu.h"
#include "npucc_requant.h"
#include "npucc_sim.h"
#include "npucc_stages.h"
#include "npucc_target.h"

enum { H = 6, W = 6, CIN = 8, COUT = 16, K = 3 };
#define POLLS 10000000u

static int8_t input[H * W * CIN];          /* HWC */
static int8_t weights[COUT * K * K * CIN]; /* OHWI */
static int32_t bias[COUT];
static int8_t output[H * W * COUT], expect[H * W * COUT];
/* The bias and the per-channel table (int32 mult[COUT], shift[COUT]) as one
 * block moved by one DMA: the table starts at rq_off, the first offset after
 * the bias that meets every alignment the description states. */
static int32_t *table;
static uint32_t rq_off, table_size;
/* The weights as the NPU's conv reads them (its weight layout). */
static int8_t *w_npu;
static uint32_t w_size;
/* The input and output as the NPU's conv reads and writes them (its
 * activation layout). */
static int8_t *in_npu, *out_npu;
static uint32_t in_size, out_size;

static const npucc_target_desc *target(void) { return NPUCC_TARGET; }

/* First memory of a kind (and, for system memory, writability). */
static const npucc_mem_desc *find_mem(int kind, int writable) {
  uint16_t i;
  for (i = 0; i < target()->num_mems; i++) {
    const npucc_mem_desc *m = &target()->mems[i];
    if (m->kind == kind && (kind == NPUCC_MEM_SCRATCHPAD || m->writable == writable))
      return m;
  }
  return NULL;
}

static uint64_t align_up(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

/* Scratchpad placement: each buffer at the next free byte of the next bank. */
static uint64_t bank_next[16];
static unsigned next_bank;
static uint64_t spm_place(const npucc_mem_desc *spm, uint32_t size, uint32_t align) {
  unsigned banks = spm->banks > 16 ? 16 : (spm->banks ? spm->banks : 1);
  unsigned b = next_bank++ % banks;
  uint64_t a;
  if (bank_next[b] == 0)
    bank_next[b] = spm->base + (uint64_t)b * spm->bank_size;
  a = align_up(bank_next[b], align);
  bank_next[b] = a + size;
  return a;
}

/* A failed step: the whole run fails. */
static int failed_step;
static int fail(const char *what, int rc) {
  int engine = -1;
  uint32_t code = rc == NPUCC_ERR_DEVICE ? npucc_hal_last_error(&engine) : 0;
  if (code)
    printf("%s: error %d (device error code %u on engine %d)\n", what, rc, (unsigned)code,
           engine);
  else
    printf("%s: error %d\n", what, rc);
  failed_step = 1;
  return rc;
}

/* Issues one command; prints the parameter the NPU cannot take on failure. */
static int issue(int kind, const int64_t *p) {
  int bad = -1, rc = npucc_npu_issue(target(), kind, p, &bad);
  if (rc != NPUCC_OK) {
    printf("issue %s: error %d on parameter %s\n", npucc_kind_name(kind), rc,
           bad >= 0 ? npucc_param_name(bad) : "-");
    failed_step = 1;
  }
  return rc;
}

static int wait_for(int engine, uint32_t polls, const char *what) {
  int rc = npucc_hal_wait(engine, polls);
  return rc == NPUCC_OK ? rc : fail(what, rc);
}

/* Copies len bytes in transfers of at most dma_max_length bytes (a multiple
 * of the DMA alignment when split); waits after each one if `wait`. */
static int dma(uint64_t src, uint64_t dst, uint32_t len, int wait) {
  const npucc_target_desc *d = target();
  uint64_t chunk = d->dma_max_length, a = d->dma_alignment ? d->dma_alignment : 1;
  int64_t p[NPUCC_P_COUNT];
  if (chunk < len)
    chunk = chunk / a * a;
  if (chunk == 0)
    return fail("dma (max_length below the DMA alignment)", NPUCC_ERR_RANGE);
  while (len > 0) {
    uint32_t n = len < chunk ? len : (uint32_t)chunk;
    npucc_npu_defaults(p);
    p[NPUCC_P_SRC_ADDR] = (int64_t)src;
    p[NPUCC_P_DST_ADDR] = (int64_t)dst;
    p[NPUCC_P_LENGTH] = (int64_t)n;
    if (issue(NPUCC_KIND_DMA, p) != NPUCC_OK)
      return -1;
    if (wait && wait_for(NPUCC_ENGINE_DMA, POLLS, "wait dma") != NPUCC_OK)
      return -1;
    src += n, dst += n, len -= n;
  }
  return NPUCC_OK;
}

/* Deterministic test data and the C reference of the convolution. */
/* scale_bits: the binary32 scales of an NPU whose requantization stage is
 * fp32_scale (NULL: mult and shift, the q31 stage). */
/* msa_mul: the muls of an NPU whose stage is mul_shift_add (shift
 * MSA_SHIFT, add out_zp; NULL: another stage). */
#define MSA_SHIFT 32
static void make_data(int32_t in_zp, int32_t out_zp, const int32_t *mult, const int32_t *shift,
                      const uint32_t *scale_bits, const int32_t *msa_mul) {
  uint32_t s = 12345u;
  int i, oy, ox, o, ky, kx, c;
  for (i = 0; i < (int)sizeof input; i++)
    input[i] = (int8_t)((s = s * 1103515245u + 12345u) >> 24);
  for (i = 0; i < (int)sizeof weights; i++)
    weights[i] = (int8_t)((s = s * 1103515245u + 12345u) >> 24);
  for (o = 0; o < COUT; o++)
    bias[o] = (int32_t)((s = s * 1103515245u + 12345u) >> 20) - 2048;
  for (oy = 0; oy < H; oy++)
    for (ox = 0; ox < W; ox++)
      for (o = 0; o < COUT; o++) {
        int32_t acc = bias[o];
        for (ky = 0; ky < K; ky++)
          for (kx = 0; kx < K; kx++) {
            int iy = oy + ky - 1, ix = ox + kx - 1;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
              continue;
            for (c = 0; c < CIN; c++)
              acc += ((int32_t)input[(iy * W + ix) * CIN + c] - in_zp) *
                     (int32_t)weights[((o * K + ky) * K + kx) * CIN + c];
          }
        expect[(oy * W + ox) * COUT + o] =
            msa_mul ? (int8_t)npucc_stage_act_clamp(
                          npucc_stage_rq_msa(acc, msa_mul[o], MSA_SHIFT, out_zp), -128, 127)
            : scale_bits ? (int8_t)npucc_stage_act_clamp(
                             npucc_stage_rq_fp32(acc, scale_bits[o], out_zp), -128, 127)
                       : npucc_requant_i8(acc, mult[o], shift[o], out_zp, -128, 127);
      }
}

int main(int argc, char **argv) {
  const npucc_target_desc *d = target();
  const npucc_mem_desc *spm = find_mem(NPUCC_MEM_SCRATCHPAD, 0);
  const npucc_mem_desc *ram = find_mem(NPUCC_MEM_SYSTEM, 1);
  const npucc_mem_desc *rom = find_mem(NPUCC_MEM_SYSTEM, 0);
  const char *mode = argc > 1 ? argv[1] : "";
  int race = strcmp(mode, "race") == 0, badparam = strcmp(mode, "badparam") == 0;
  int timeout = strcmp(mode, "timeout") == 0, fault = strcmp(mode, "fault") == 0;
  int waw = strcmp(mode, "waw") == 0;
  int per_channel = (d->ops[NPUCC_KIND_CONV].requant & NPUCC_RQ_PER_CHANNEL) != 0;
  /* fp32_scale: the rq table holds one binary32 scale per channel. */
  int fp32 = npucc_stage_of(d->arith, NPUCC_KIND_CONV, NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_FP32;
  /* shift: the rq table holds one right shift per channel (multiplier 2^-s). */
  int rshift =
      npucc_stage_of(d->arith, NPUCC_KIND_CONV, NPUCC_SLOT_REQUANT) == NPUCC_STAGE_RQ_SHIFT;
  /* mul_shift_add: mul[], shift[], add[] per channel. */
  int msa = npucc_stage_of(d->arith, NPUCC_KIND_CONV, NPUCC_SLOT_REQUANT) ==
            NPUCC_STAGE_RQ_MUL_SHIFT_ADD;
  int32_t msa_mul[COUT], msa_shift[COUT], msa_add[COUT];
  /* lut256: a 256-byte table at act_addr after the requant table replaces the clamp. */
  int lut =
      npucc_stage_of(d->arith, NPUCC_KIND_CONV, NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_LUT256;
  /* pwl: a 144-byte segment table there instead (npucc_stage_act_pwl). */
  int pwl = npucc_stage_of(d->arith, NPUCC_KIND_CONV, NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_PWL;
  /* uint8 input / output and correction_terms: each int8 value q stored as the
   * byte q + 128 (zero point + 128), int8 weights as w + 128 (zero point 128);
   * the correction terms subtract both zero points (npucc_stage_corr_terms). */
  int u8in = npucc_stage_of(d->arith, NPUCC_KIND_CONV, NPUCC_SLOT_INPUT) == NPUCC_STAGE_IN_UINT8;
  int u8out = npucc_stage_of(d->arith, NPUCC_KIND_CONV, NPUCC_SLOT_OUTPUT) == NPUCC_STAGE_OUT_UINT8;
  int corr =
      npucc_stage_of(d->arith, NPUCC_KIND_CONV, NPUCC_SLOT_CORRECTION) == NPUCC_STAGE_CORR_TERMS;
  int32_t in_zp = u8in ? -3 + 128 : -3;
  uint32_t act_off = 0;
  int32_t rs[COUT];
  uint32_t scale_bits[COUT];
  /* Operands the conv reads from system memory itself: not moved. */
  unsigned sys_opnd = d->ops[NPUCC_KIND_CONV].operand_mem;
  int in_place = (sys_opnd >> NPUCC_OPND_W) & 1u;
  int o, rc, mismatches = 0;
  int32_t mult[COUT], shift[COUT];
  int64_t p[NPUCC_P_COUNT];
  uint64_t in_s, w_s, b_s, out_s, in_d, w_d, b_d, out_d;
  uint32_t a;
  npucc_sim *sim;
  if (!spm || !ram) {
    printf("%s: needs a scratchpad and a writable system memory\n", d->name);
    return 2;
  }
  /* Every alignment the description states: the DMA's (system and scratchpad
   * addresses), the scratchpad's and each operand's (bias, rq table, ...). */
  a = spm->alignment > d->dma_alignment ? spm->alignment : d->dma_alignment;
  a = a > 16 ? a : 16;
  for (o = 0; o < NPUCC_OPND_COUNT; o++) {
    a = spm->operand_alignment[o] > a ? spm->operand_alignment[o] : a;
    if ((sys_opnd >> o) & 1u)
      a = (1u << d->ops[NPUCC_KIND_CONV].operand_align_log2[o]) > a
              ? 1u << d->ops[NPUCC_KIND_CONV].operand_align_log2[o]
              : a;
  }
  rq_off = (uint32_t)align_up(sizeof bias, a);
  table_size = rq_off + (msa ? 3 : 2) * COUT * (uint32_t)sizeof(int32_t);
  if (lut || pwl) {
    act_off = (uint32_t)align_up(table_size, a);
    table_size = act_off + (lut ? 256 : NPUCC_PWL_TABLE_BYTES);
  }
  table = (int32_t *)calloc(table_size / sizeof(int32_t), sizeof(int32_t));
  if (!table)
    return 2;
  /* Requantization: one multiplier per channel if the NPU has it, else one for all. */
  for (o = 0; o < COUT; o++) {
    mult[o] = (int32_t)(1u << 30) + (per_channel ? o * 3000000 : 0); /* ~0.5 .. 0.52 */
    shift[o] = 9;                                                     /* x 2^-9 */
    if (rshift) { /* 2^-rs: the q31 multiplier 2^30 with shift rs - 1 */
      rs[o] = 9 + (per_channel ? o % 3 : 0);
      mult[o] = (int32_t)(1u << 30);
      shift[o] = rs[o] - 1;
    }
  }
  for (o = 0; o < COUT; o++) { /* the same multipliers as float32 scales */
    float f = (float)((double)mult[o] / 1099511627776.0); /* mult * 2^-31 * 2^-9 */
    memcpy(&scale_bits[o], &f, sizeof f);
  }
  for (o = 0; o < COUT; o++) { /* the same multipliers as mul / 2^32 */
    msa_mul[o] = mult[o] >> 8;
    msa_shift[o] = MSA_SHIFT;
    msa_add[o] = 5;
  }
  make_data(-3, 5, mult, shift, fp32 ? scale_bits : NULL, msa ? msa_mul : NULL);
  memcpy(table, bias, sizeof bias);
  if (fp32) {
    memcpy(table + rq_off / sizeof(int32_t), scale_bits, sizeof scale_bits);
  } else if (rshift) {
    memcpy(table + rq_off / sizeof(int32_t), rs, sizeof rs);
  } else if (msa) {
    memcpy(table + rq_off / sizeof(int32_t), msa_mul, sizeof msa_mul);
    memcpy(table + rq_off / sizeof(int32_t) + COUT, msa_shift, sizeof msa_shift);
    memcpy(table + rq_off / sizeof(int32_t) + 2 * COUT, msa_add, sizeof msa_add);
  } else {
    memcpy(table + rq_off / sizeof(int32_t), mult, sizeof mult);
    memcpy(table + rq_off / sizeof(int32_t) + COUT, shift, sizeof shift);
  }
  if (lut) { /* a table no clamp could mimic: entry i = 37 i + 11 (mod 256) */
    uint8_t *t = (uint8_t *)table + act_off;
    for (o = 0; o < 256; o++)
      t[o] = (uint8_t)(o * 37 + 11);
    for (o = 0; o < (int)sizeof expect; o++)
      expect[o] = (int8_t)npucc_stage_act_lut256(expect[o], t);
  }
  if (pwl) { /* four segments, constant below -127 and from 127 on (so the NPU's wide
              * value and the saturated one in expect give the same output) */
    static const int64_t st[4] = {-128, -127, 0, 127};
    static const int32_t mu[4] = {0, -3, 5, 0}, ad[4] = {-100, 50, -7, 33};
    static const uint32_t sh[4] = {0, 1, 2, 0};
    uint8_t *t = (uint8_t *)table + act_off;
    for (o = 0; o < NPUCC_PWL_SEGMENTS; o++) {
      int k = o < 4 ? o : 3, b;
      uint64_t r = (uint64_t)sh[k] | ((uint64_t)(uint16_t)(int16_t)mu[k] << 8) |
                   (((uint64_t)st[k] & ((((uint64_t)1) << 36) - 1)) << 24);
      for (b = 0; b < 8; b++)
        t[o * 8 + b] = (uint8_t)(r >> (8 * b));
      t[NPUCC_PWL_SEGMENTS * 8 + o] = (uint8_t)(int8_t)ad[k];
    }
    for (o = 0; o < (int)sizeof expect; o++)
      expect[o] = (int8_t)npucc_stage_act_pwl(expect[o], t);
  }
  {
    npucc_wlayout wl;
    int ky, kx, c;
    wl.kind = d->weight_layout[NPUCC_KIND_CONV];
    wl.bo = d->weight_block_o[NPUCC_KIND_CONV];
    wl.bi = d->weight_block_i[NPUCC_KIND_CONV];
    w_size = (uint32_t)npucc_wlayout_bytes(wl, COUT, K, K, CIN);
    w_npu = (int8_t *)calloc(w_size, 1);
    if (!w_npu)
      return 2;
    for (o = 0; o < COUT; o++)
      for (ky = 0; ky < K; ky++)
        for (kx = 0; kx < K; kx++)
          for (c = 0; c < CIN; c++)
            w_npu[npucc_wlayout_offset(wl, COUT, K, K, CIN, o, ky, kx, c)] =
                (int8_t)((uint8_t)weights[((o * K + ky) * K + kx) * CIN + c] ^ (corr ? 0x80u : 0u));
  }
  {
    npucc_alayout al;
    int y, x, c;
    al.block = d->act_block[NPUCC_KIND_CONV];
    al.kind = (uint8_t)(al.block > 1 ? NPUCC_AL_BLOCKED : NPUCC_AL_NHWC);
    in_size = (uint32_t)npucc_alayout_bytes(al, H, W, CIN);
    out_size = (uint32_t)npucc_alayout_bytes(al, H, W, COUT);
    in_npu = (int8_t *)calloc(in_size, 1);
    out_npu = (int8_t *)calloc(out_size, 1);
    if (!in_npu || !out_npu)
      return 2;
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++)
        for (c = 0; c < CIN; c++)
          in_npu[npucc_alayout_offset(al, H, W, CIN, y, x, c)] =
              (int8_t)((uint8_t)input[(y * W + x) * CIN + c] ^ (u8in ? 0x80u : 0u));
  }

  sim = npucc_sim_create(d);
  if (!sim)
    return 2;
  npucc_sim_attach(sim);
  /* System memory: the input, then the output in RAM; weights and the bias/requant
   * table in flash when the NPU has a read-only window, else in RAM too. */
  in_s = align_up(ram->base, a);
  out_s = align_up(in_s + in_size, a);
  w_s = align_up(rom ? rom->base : out_s + out_size, a);
  b_s = align_up(w_s + w_size, a);
  if (npucc_sim_map(sim, in_s, in_npu, in_size) != 0 ||
      npucc_sim_map(sim, out_s, out_npu, out_size) != 0 ||
      npucc_sim_map(sim, w_s, w_npu, w_size) != 0 ||
      npucc_sim_map(sim, b_s, table, table_size) != 0) {
    printf("%s: cannot map the buffers into the system memory windows\n", d->name);
    return 2;
  }
  /* Scratchpad layout: input, weights, bias/requant table, output, one bank each in turn. */
  in_d = spm_place(spm, in_size, a);
  w_d = spm_place(spm, w_size, a);
  b_d = spm_place(spm, table_size, a);
  out_d = spm_place(spm, out_size, a);

  if (fault) {
    /* Into read-only memory when there is some, else outside every window. */
    uint64_t bad = rom ? w_s : ram->base + ram->size;
    if (dma(in_d, bad, 64, 0) == NPUCC_OK)
      wait_for(NPUCC_ENGINE_DMA, POLLS, "wait dma (into read-only or unmapped memory)");
    goto done;
  }
  if (in_place) {
    w_d = w_s;
    b_d = b_s;
  } else if (dma(w_s, w_d, w_size, 1) || dma(b_s, b_d, table_size, 1)) {
    goto done;
  }
  if (dma(in_s, in_d, in_size, !race))
    goto done;
  npucc_npu_defaults(p);
  p[NPUCC_P_IN_ADDR] = (int64_t)in_d;
  p[NPUCC_P_W_ADDR] = (int64_t)w_d;
  p[NPUCC_P_BIAS_ADDR] = (int64_t)b_d;
  p[NPUCC_P_OUT_ADDR] = (int64_t)out_d;
  p[NPUCC_P_IN_H] = badparam ? (int64_t)1 << 40 : H;
  p[NPUCC_P_IN_W] = W;
  p[NPUCC_P_IN_CH] = CIN;
  p[NPUCC_P_OUT_H] = H;
  p[NPUCC_P_OUT_W] = W;
  p[NPUCC_P_OUT_CH] = COUT;
  p[NPUCC_P_K_H] = K;
  p[NPUCC_P_K_W] = K;
  p[NPUCC_P_PAD_TOP] = 1;
  p[NPUCC_P_PAD_LEFT] = 1;
  p[NPUCC_P_IN_ZP] = in_zp;
  p[NPUCC_P_OUT_ZP] = 5;
  if (corr) {
    p[NPUCC_P_CORR_X] = -128;
    p[NPUCC_P_CORR_W] = -in_zp;
    p[NPUCC_P_CORR_ADD] = (int64_t)K * K * 128 * in_zp;
  }
  if (per_channel) {
    p[NPUCC_P_PER_CHANNEL] = 1;
    p[NPUCC_P_RQ_ADDR] = (int64_t)(b_d + rq_off);
  } else {
    p[NPUCC_P_REQUANT_MULT] = mult[0];
    p[NPUCC_P_REQUANT_SHIFT] = shift[0];
  }
  if (lut || pwl)
    p[NPUCC_P_ACT_ADDR] = (int64_t)(b_d + act_off);
  if (issue(NPUCC_KIND_CONV, p) != NPUCC_OK)
    goto done;
  if (waw) {
    /* The convolution has not been waited for: this DMA overwrites its output. */
    (void)dma(in_s, out_d, in_size, 1);
    goto done;
  }
  if (wait_for(NPUCC_ENGINE_COMPUTE, timeout ? 1u : POLLS, "wait conv") != NPUCC_OK)
    goto done;
  if (dma(out_d, out_s, out_size, 1) != NPUCC_OK)
    goto done;
  {
    npucc_alayout al;
    int y, x, c;
    al.block = d->act_block[NPUCC_KIND_CONV];
    al.kind = (uint8_t)(al.block > 1 ? NPUCC_AL_BLOCKED : NPUCC_AL_NHWC);
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++)
        for (c = 0; c < COUT; c++)
          output[(y * W + x) * COUT + c] =
              (int8_t)((uint8_t)out_npu[npucc_alayout_offset(al, H, W, COUT, y, x, c)] ^
                       (u8out ? 0x80u : 0u));
  }
  for (o = 0; o < (int)sizeof output; o++)
    mismatches += output[o] != expect[o];

done:
  npucc_sim_print_report(sim, stdout);
  rc = 0;
  if (npucc_sim_failed(sim)) {
    printf("%s: simulator error at command %d: %s\n", d->name, npucc_sim_error_command(sim),
           npucc_sim_error(sim));
    rc = 1;
  } else if (race || waw) {
    printf("%s: the missing wait was NOT caught\n", d->name);
    rc = 3;
  }
  if (rc == 0 && (failed_step || mismatches)) {
    if (mismatches)
      printf("%s: FAIL, %d of %d outputs differ from the C reference\n", d->name, mismatches,
             (int)sizeof output);
    else
      printf("%s: FAIL, a command could not be issued or waited for\n", d->name);
    rc = 1;
  } else if (rc == 0) {
    printf("%s: PASS, %d outputs bit-exact with the C reference (%s requantization)\n",
           d->name, (int)sizeof output, per_channel ? "per-channel" : "per-tensor");
  }
  npucc_sim_destroy(sim);
  free(table);
  free(w_npu);
  free(in_npu);
  free(out_npu);
  return rc;
}
