/* npucc_params.h - The semantic command parameters shared by the compiler, the
 * command layer and the simulator.
 *
 * A target description (JSON) maps register fields to these names; nothing in
 * C or C++ knows which register holds which parameter on a given NPU. The list
 * is an X-macro so that the C++ side (lib/target) and the C side share one
 * source of truth:
 *
 *   NPUCC_PARAM(ID, "name", default, required_kinds, allowed_kinds, is_signed)
 *
 * required_kinds: command kinds for which the parameter must be bound to a
 * field (or fixed) in every description; allowed_kinds: kinds that may use it.
 * A parameter that a command does not bind takes its "fixed" value from the
 * description, else the default below.
 */
#ifndef NPUCC_PARAMS_H
#define NPUCC_PARAMS_H

#include <stdint.h>

/* Command kinds (bit positions used in the kind masks). */
#define NPUCC_KIND_DMA 0
#define NPUCC_KIND_CONV 1
#define NPUCC_KIND_DEPTHWISE 2
#define NPUCC_KIND_MATMUL 3
#define NPUCC_KIND_POOL 4
#define NPUCC_KIND_ELTWISE 5
#define NPUCC_KIND_FENCE 6
#define NPUCC_KIND_COUNT 7

#define NPUCC_KB_DMA (1u << NPUCC_KIND_DMA)
#define NPUCC_KB_CONV (1u << NPUCC_KIND_CONV)
#define NPUCC_KB_DW (1u << NPUCC_KIND_DEPTHWISE)
#define NPUCC_KB_MM (1u << NPUCC_KIND_MATMUL)
#define NPUCC_KB_POOL (1u << NPUCC_KIND_POOL)
#define NPUCC_KB_ELT (1u << NPUCC_KIND_ELTWISE)
#define NPUCC_KB_CONVLIKE (NPUCC_KB_CONV | NPUCC_KB_DW)
#define NPUCC_KB_RQ (NPUCC_KB_CONV | NPUCC_KB_DW | NPUCC_KB_MM)

/* clang-format off */
#define NPUCC_PARAM_LIST(X)                                                                   \
  /* DMA */                                                                                   \
  X(SRC_ADDR, "src_addr", 0, NPUCC_KB_DMA, NPUCC_KB_DMA, 0)                                  \
  X(DST_ADDR, "dst_addr", 0, NPUCC_KB_DMA, NPUCC_KB_DMA, 0)                                  \
  X(LENGTH, "length", 0, NPUCC_KB_DMA | NPUCC_KB_ELT, NPUCC_KB_DMA | NPUCC_KB_ELT, 0)        \
  X(ROWS, "rows", 1, 0, NPUCC_KB_DMA, 0)                                                      \
  X(SRC_STRIDE, "src_stride", 0, 0, NPUCC_KB_DMA, 0)                                          \
  X(DST_STRIDE, "dst_stride", 0, 0, NPUCC_KB_DMA, 0)                                          \
  X(PLANES, "planes", 1, 0, NPUCC_KB_DMA, 0)                                                  \
  X(SRC_PLANE_STRIDE, "src_plane_stride", 0, 0, NPUCC_KB_DMA, 0)                              \
  X(DST_PLANE_STRIDE, "dst_plane_stride", 0, 0, NPUCC_KB_DMA, 0)                              \
  X(ZERO_FILL, "zero_fill", 0, 0, NPUCC_KB_DMA, 0)                                            \
  /* Operand addresses (scratchpad) */                                                        \
  X(IN_ADDR, "in_addr", 0, NPUCC_KB_RQ | NPUCC_KB_POOL | NPUCC_KB_ELT,                        \
    NPUCC_KB_RQ | NPUCC_KB_POOL | NPUCC_KB_ELT, 0)                                            \
  X(IN2_ADDR, "in2_addr", 0, NPUCC_KB_ELT, NPUCC_KB_ELT, 0)                                   \
  X(W_ADDR, "w_addr", 0, NPUCC_KB_RQ, NPUCC_KB_RQ, 0)                                         \
  X(BIAS_ADDR, "bias_addr", 0, NPUCC_KB_RQ, NPUCC_KB_RQ, 0)                                   \
  X(OUT_ADDR, "out_addr", 0, NPUCC_KB_RQ | NPUCC_KB_POOL | NPUCC_KB_ELT,                      \
    NPUCC_KB_RQ | NPUCC_KB_POOL | NPUCC_KB_ELT, 0)                                            \
  X(RQ_ADDR, "rq_addr", 0, 0, NPUCC_KB_RQ, 0)                                                 \
  /* Geometry */                                                                              \
  X(IN_H, "in_h", 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, 0) \
  X(IN_W, "in_w", 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, 0) \
  X(IN_CH, "in_ch", 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL,  \
    0)                                                                                        \
  X(OUT_H, "out_h", 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL,  \
    0)                                                                                        \
  X(OUT_W, "out_w", 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL,  \
    0)                                                                                        \
  X(OUT_CH, "out_ch", 0, NPUCC_KB_CONV, NPUCC_KB_CONV, 0)                                     \
  X(K_H, "k_h", 1, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, 0)   \
  X(K_W, "k_w", 1, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, 0)   \
  X(STRIDE_H, "stride_h", 1, 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, 0)                         \
  X(STRIDE_W, "stride_w", 1, 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, 0)                         \
  X(DIL_H, "dil_h", 1, 0, NPUCC_KB_CONVLIKE, 0)                                               \
  X(DIL_W, "dil_w", 1, 0, NPUCC_KB_CONVLIKE, 0)                                               \
  X(PAD_TOP, "pad_top", 0, 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, 0)                           \
  X(PAD_LEFT, "pad_left", 0, 0, NPUCC_KB_CONVLIKE | NPUCC_KB_POOL, 0)                         \
  X(DEPTH_MULT, "depth_mult", 1, 0, NPUCC_KB_DW, 0)                                           \
  X(M, "m", 0, NPUCC_KB_MM, NPUCC_KB_MM, 0)                                                   \
  X(K, "k", 0, NPUCC_KB_MM, NPUCC_KB_MM, 0)                                                   \
  X(N, "n", 0, NPUCC_KB_MM, NPUCC_KB_MM, 0)                                                   \
  /* Quantization */                                                                          \
  X(IN_ZP, "in_zp", 0, 0, NPUCC_KB_RQ | NPUCC_KB_ELT, 1)                                      \
  X(IN2_ZP, "in2_zp", 0, 0, NPUCC_KB_ELT, 1)                                                  \
  X(OUT_ZP, "out_zp", 0, 0, NPUCC_KB_RQ | NPUCC_KB_ELT, 1)                                    \
  X(PER_CHANNEL, "per_channel", 0, 0, NPUCC_KB_RQ, 0)                                         \
  X(REQUANT_MULT, "requant_mult", 1073741824, 0, NPUCC_KB_RQ | NPUCC_KB_ELT, 1)               \
  X(REQUANT_SHIFT, "requant_shift", 0, 0, NPUCC_KB_RQ | NPUCC_KB_ELT, 1)                      \
  X(IN_MULT, "in_mult", 1073741824, 0, NPUCC_KB_ELT, 1)                                       \
  X(IN_SHIFT, "in_shift", 0, 0, NPUCC_KB_ELT, 1)                                              \
  X(IN2_MULT, "in2_mult", 1073741824, 0, NPUCC_KB_ELT, 1)                                     \
  X(IN2_SHIFT, "in2_shift", 0, 0, NPUCC_KB_ELT, 1)                                            \
  X(LEFT_SHIFT, "left_shift", 0, 0, NPUCC_KB_ELT, 0)                                          \
  X(ACT_MIN, "act_min", -128, 0, NPUCC_KB_RQ | NPUCC_KB_POOL | NPUCC_KB_ELT, 1)               \
  X(ACT_MAX, "act_max", 127, 0, NPUCC_KB_RQ | NPUCC_KB_POOL | NPUCC_KB_ELT, 1)                \
  /* Operation selectors */                                                                   \
  X(POOL_KIND, "pool_kind", 0, 0, NPUCC_KB_POOL, 0)                                           \
  X(ELTWISE_OP, "eltwise_op", 0, 0, NPUCC_KB_ELT, 0)                                          \
  /* The lut256 activation stage's 256-byte table (appended: ids above keep their values) */ \
  X(ACT_ADDR, "act_addr", 0, 0, NPUCC_KB_RQ, 0)                                              \
  /* The max pool stage's window (k x k, stride k; 1: no pooling; appended likewise) */      \
  X(POOL_K, "pool_k", 1, 0, NPUCC_KB_CONVLIKE, 0)                                           \
  /* The select pool stage's kept pixel of each pool_k x pool_k window (row, column) */      \
  X(POOL_OFF_Y, "pool_off_y", 0, 0, NPUCC_KB_CONVLIKE, 0)                                     \
  X(POOL_OFF_X, "pool_off_x", 0, 0, NPUCC_KB_CONVLIKE, 0)                                     \
  /* The correction_terms stage (appended likewise): the accumulator of the raw products    \
   * plus (corr_x * sum_x >> corr_x_shift) + (corr_w * sum_w >> corr_w_shift)                 \
   * + corr_add * the input channels of a group (npucc_stage_corr_terms) */                   \
  X(CORR_X, "corr_x", 0, 0, NPUCC_KB_RQ, 1)                                                   \
  X(CORR_X_SHIFT, "corr_x_shift", 0, 0, NPUCC_KB_RQ, 0)                                       \
  X(CORR_W, "corr_w", 0, 0, NPUCC_KB_RQ, 1)                                                   \
  X(CORR_W_SHIFT, "corr_w_shift", 0, 0, NPUCC_KB_RQ, 0)                                       \
  X(CORR_ADD, "corr_add", 0, 0, NPUCC_KB_RQ, 1)
/* clang-format on */

typedef enum npucc_param {
#define NPUCC_PARAM_ENUM(id, name, def, req, allowed, sgn) NPUCC_P_##id,
  NPUCC_PARAM_LIST(NPUCC_PARAM_ENUM)
#undef NPUCC_PARAM_ENUM
      NPUCC_P_COUNT
} npucc_param;

/* pool_kind values */
#define NPUCC_POOL_MAX 0
#define NPUCC_POOL_AVG 1
/* How the NPU's average pooling divides the window's sum by its count
 * (pool "avg_rounding"; npucc_div_round_mode of npucc_requant.h). */
#define NPUCC_AVG_HALF_AWAY 0 /* to nearest, ties away from zero (default) */
#define NPUCC_AVG_HALF_EVEN 1 /* to nearest, ties to even */
#define NPUCC_AVG_TRUNCATE 2  /* toward zero */
#define NPUCC_AVG_FLOOR 3     /* toward minus infinity */
/* eltwise_op values */
#define NPUCC_ELTWISE_ADD 0

/* The NPU's arithmetic as a pipeline of stages (docs/target.md, "Arithmetic
 * stages"): one stage per slot, the slots in this order. A description picks
 * a stage per slot with compute.operations.<op>.arithmetic; a slot it does not
 * name takes the slot's default stage (today's pipeline: int8 input,
 * subtract_zp, mac, q31 requantization, clamp activation, no pool, int8
 * output). The arithmetic of each stage is one C function in
 * runtime/include/npucc_stages.h, shared by the simulator and the compiler's
 * interpreter.
 *
 *   NPUCC_STAGE(ID, "name", slot, is_default)
 */
#define NPUCC_SLOT_INPUT 0
#define NPUCC_SLOT_CORRECTION 1
#define NPUCC_SLOT_MAC 2
#define NPUCC_SLOT_REQUANT 3
#define NPUCC_SLOT_ACTIVATION 4
#define NPUCC_SLOT_POOL 5
#define NPUCC_SLOT_OUTPUT 6
#define NPUCC_SLOT_COUNT 7

/* clang-format off */
#define NPUCC_SLOT_LIST(X)                                                                    \
  X(INPUT, "input") X(CORRECTION, "correction") X(MAC, "mac") X(REQUANT, "requant")          \
  X(ACTIVATION, "activation") X(POOL, "pool") X(OUTPUT, "output")

#define NPUCC_STAGE_LIST(X)                                                                   \
  X(IN_INT8, "int8", NPUCC_SLOT_INPUT, 1)                                                     \
  X(SUBTRACT_ZP, "subtract_zp", NPUCC_SLOT_CORRECTION, 1)                                     \
  X(MAC, "mac", NPUCC_SLOT_MAC, 1)                                                            \
  X(RQ_Q31, "q31", NPUCC_SLOT_REQUANT, 1)                                                     \
  X(RQ_FP32, "fp32_scale", NPUCC_SLOT_REQUANT, 0)                                             \
  X(ACT_CLAMP, "clamp", NPUCC_SLOT_ACTIVATION, 1)                                             \
  X(POOL_NONE, "none", NPUCC_SLOT_POOL, 1)                                                    \
  X(OUT_INT8, "int8", NPUCC_SLOT_OUTPUT, 1)                                                   \
  X(RQ_SHIFT, "shift", NPUCC_SLOT_REQUANT, 0)                                                \
  X(ACT_LUT256, "lut256", NPUCC_SLOT_ACTIVATION, 0)                                          \
  X(RQ_MUL_SHIFT_ADD, "mul_shift_add", NPUCC_SLOT_REQUANT, 0)                                 \
  X(ACT_PWL, "pwl", NPUCC_SLOT_ACTIVATION, 0)                                                 \
  X(POOL_MAX, "max", NPUCC_SLOT_POOL, 0)                                                      \
  X(POOL_SELECT, "select", NPUCC_SLOT_POOL, 0)                                                \
  X(IN_UINT8, "uint8", NPUCC_SLOT_INPUT, 0)                                                   \
  X(CORR_TERMS, "correction_terms", NPUCC_SLOT_CORRECTION, 0)                                 \
  X(OUT_UINT8, "uint8", NPUCC_SLOT_OUTPUT, 0)
/* clang-format on */

typedef enum npucc_stage {
#define NPUCC_STAGE_ENUM(id, name, slot, def) NPUCC_STAGE_##id,
  NPUCC_STAGE_LIST(NPUCC_STAGE_ENUM)
#undef NPUCC_STAGE_ENUM
      NPUCC_STAGE_COUNT
} npucc_stage;

/* The slot a stage fills (-1: no such stage). */
static inline int npucc_stage_slot(int stage) {
  switch (stage) {
#define NPUCC_STAGE_SLOT_CASE(id, name, slot, def)                                                 \
  case NPUCC_STAGE_##id:                                                                           \
    return slot;
    NPUCC_STAGE_LIST(NPUCC_STAGE_SLOT_CASE)
#undef NPUCC_STAGE_SLOT_CASE
  default:
    return -1;
  }
}

/* The default stage of a slot (-1: no such slot). */
static inline int npucc_stage_default(int slot) {
#define NPUCC_STAGE_DEFAULT_IF(id, name, s, def)                                                   \
  if ((s) == slot && (def))                                                                        \
    return NPUCC_STAGE_##id;
  NPUCC_STAGE_LIST(NPUCC_STAGE_DEFAULT_IF)
#undef NPUCC_STAGE_DEFAULT_IF
  return -1;
}

/* The stage of `slot` for command kind `kind` in a description's pipeline
 * table (npucc_target_desc.arith; NULL: the defaults). */
static inline int npucc_stage_of(const uint8_t *arith, int kind, int slot) {
  if (arith == 0 || kind < 0 || kind >= NPUCC_KIND_COUNT || slot < 0 || slot >= NPUCC_SLOT_COUNT)
    return npucc_stage_default(slot);
  return arith[kind * NPUCC_SLOT_COUNT + slot];
}

#endif /* NPUCC_PARAMS_H */
