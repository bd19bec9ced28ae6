/* npucc_desc.h - The C form of an NPU target description.
 *
 * The compiler turns a target JSON into a constant `npucc_target_desc` table
 * (generated C text, or an in-memory table built by lib/target for host
 * tests). The command layer (npucc_npu.c) packs semantic parameters into
 * register fields using it, the HAL (npucc_hal.c) waits for completion as its
 * status bits say, and the simulator (runtime/sim) decodes register writes
 * back into commands with the same table. Nothing in the runtime knows a
 * particular NPU: everything comes from this table.
 *
 * Every number of the JSON description that the runtime needs is carried in
 * a field wide enough for every value the loader accepts (lib/target checks
 * each value against the type that carries it).
 */
#ifndef NPUCC_DESC_H
#define NPUCC_DESC_H

#include <stdint.h>

#include "npucc_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Engines that execute commands; each has busy/done/error status bits.
 * The fence "engine" runs fence commands: a fence completes once every
 * command issued before it has completed (completion mode "fence"). */
#define NPUCC_ENGINE_DMA 0
#define NPUCC_ENGINE_COMPUTE 1
#define NPUCC_ENGINE_FENCE 2
#define NPUCC_ENGINE_COUNT 3

#define NPUCC_COMPLETION_POLL 0
#define NPUCC_COMPLETION_FENCE 1

#define NPUCC_MEM_SCRATCHPAD 0
#define NPUCC_MEM_SYSTEM 1

/* Scratchpad operands of the compute commands (bank and alignment rules). */
#define NPUCC_OPND_IN 0
#define NPUCC_OPND_IN2 1
#define NPUCC_OPND_W 2
#define NPUCC_OPND_BIAS 3
#define NPUCC_OPND_RQ 4
#define NPUCC_OPND_OUT 5
#define NPUCC_OPND_ACT 6 /* the activation table (lut256: 256 bytes, pwl: 144) */
#define NPUCC_OPND_COUNT 7

/* The one table of the operands: NPUCC_OPND_ id, JSON name (a description's
 * "operands", "operand_alignment", "separate_banks"), address parameter. The
 * compiler, the simulator and the HAL read it through the functions below. */
#define NPUCC_OPERAND_LIST(X)                                                                      \
  X(IN, "in", IN_ADDR)                                                                             \
  X(IN2, "in2", IN2_ADDR)                                                                          \
  X(W, "w", W_ADDR)                                                                                \
  X(BIAS, "bias", BIAS_ADDR)                                                                       \
  X(RQ, "rq", RQ_ADDR)                                                                             \
  X(OUT, "out", OUT_ADDR)                                                                          \
  X(ACT, "act", ACT_ADDR)

/* The address parameter (NPUCC_P_*) of an operand, -1 for none. */
static inline int npucc_operand_addr_param(int operand) {
  switch (operand) {
#define NPUCC_OPERAND_PARAM_CASE(id, name, param)                                                  \
  case NPUCC_OPND_##id:                                                                            \
    return NPUCC_P_##param;
    NPUCC_OPERAND_LIST(NPUCC_OPERAND_PARAM_CASE)
#undef NPUCC_OPERAND_PARAM_CASE
  default:
    return -1;
  }
}

/* The operand an address parameter points at, -1 for none (DMA addresses). */
static inline int npucc_operand_of_param(int param) {
  int o;
  for (o = 0; o < NPUCC_OPND_COUNT; ++o)
    if (npucc_operand_addr_param(o) == param)
      return o;
  return -1;
}

/* The JSON name of an operand ("" for none). */
static inline const char *npucc_operand_name(int operand) {
  switch (operand) {
#define NPUCC_OPERAND_NAME_CASE(id, name, param)                                                   \
  case NPUCC_OPND_##id:                                                                            \
    return name;
    NPUCC_OPERAND_LIST(NPUCC_OPERAND_NAME_CASE)
#undef NPUCC_OPERAND_NAME_CASE
  default:
    return "";
  }
}

/* What a bank conflict between operands that must be separate does. */
#define NPUCC_BANK_CONFLICT_ERROR 0    /* the command fails (a programming error) */
#define NPUCC_BANK_CONFLICT_SLOWDOWN 1 /* compute cycles are multiplied by conflict_slowdown */

/* Requantization modes (npucc_op_limits.requant bits). */
#define NPUCC_RQ_PER_CHANNEL 1u
#define NPUCC_RQ_PER_TENSOR 2u

/* Error codes the simulator shows in an engine's error field (a 1-bit field
 * shows 1; a narrower code field saturates). Real NPUs define their own
 * codes; the HAL only distinguishes zero from non-zero and reports the value. */
#define NPUCC_DEVERR_LIMIT 1    /* a parameter outside the NPU's limits */
#define NPUCC_DEVERR_MEMORY 2   /* outside the memory windows, write to read-only memory,
                                   no room for an automatic mapping */
#define NPUCC_DEVERR_ALIGN 3    /* misaligned address */
#define NPUCC_DEVERR_HAZARD 4   /* race, reading never-written scratchpad bytes, busy engine,
                                   bank conflict */
#define NPUCC_DEVERR_PROTOCOL 5 /* unknown opcode, full job queue, DONE not cleared, a register
                                   access where there is no register, out of host memory */

/* One named bit field of a register. */
typedef struct npucc_field_desc {
  const char *name;
  uint8_t lsb;
  uint8_t width;
  int16_t we; /* index in fields[] of its write-enable field (same register), -1: none */
} npucc_field_desc;

/* How the CPU reaches registers wider than the bus (bus_order). */
#define NPUCC_BUS_LOW_FIRST 0  /* the access holding bits 0.. first */
#define NPUCC_BUS_HIGH_FIRST 1 /* the access holding the top bits first */

/* One memory-mapped register at base_address + offset. A register wider
 * than the bus (bus_access_bits) is written and read as width /
 * bus_access_bits accesses at offset, offset + bus_access_bits / 8, ...,
 * in bus_order. */
#define NPUCC_REG_RMW 1u /* commands read it, replace the bits they own, write it back */
/* Not a register: a word of a frame (frames[]); offset is its index in the
 * frame, width the frame's word_bits. Words follow every register in regs[]. */
#define NPUCC_REG_WORD 2u
/* The NPU keeps the register's value between commands ("registers_persist"),
 * and nothing but a command's write changes it: a command need not rewrite
 * the value it holds (npucc_npu_skip). Never set on a register holding a
 * doorbell, status, clear or command-buffer field, a read-modify-write
 * register or a frame word. */
#define NPUCC_REG_PERSIST 4u

typedef struct npucc_reg_desc {
  const char *name;
  uint32_t offset; /* bytes from the command interface base address */
  uint8_t width;   /* 8, 16, 32 or 64 bits */
  uint16_t first_field;
  uint16_t num_fields;
  uint8_t flags; /* NPUCC_REG_* */
} npucc_reg_desc;

/* A run of bits inside one register (a named field or the whole register).
 * reg < 0 means "absent". */
typedef struct npucc_fieldref {
  int16_t reg;
  uint8_t lsb;   /* 0..63 */
  uint8_t width; /* 1..64 */
} npucc_fieldref;

/* A command writes parameter `param` as (value - minus) >> shift. The encoded
 * value may be split over several fields, least significant part first: the
 * first part is `field`, the others are parts[more .. more+num_parts-2] of the
 * table. The simulator decodes (concatenated fields << shift) + minus. */
typedef struct npucc_binding {
  uint16_t param;
  uint8_t shift;
  uint8_t num_parts; /* 1 = one field */
  npucc_fieldref field;
  uint16_t more;
  int64_t minus;
} npucc_binding;

/* A parameter the hardware does not take from a register: it always behaves as
 * if the parameter had this value. */
typedef struct npucc_fixed {
  uint16_t param;
  int64_t value;
} npucc_fixed;

/* A constant written into a field (opcode selectors, doorbells). */
typedef struct npucc_fieldval {
  npucc_fieldref field;
  uint64_t value;
} npucc_fieldval;

/* Field expressions (target description "fields"): a field computed from the
 * semantic parameters by a small integer expression, kept in postfix form
 * and evaluated by npucc_expr_eval (a stack machine over int64). / % cdiv
 * << >> & | take non-negative operands; overflow, division by zero, a shift
 * outside 0..62 or a negative operand fail with NPUCC_ERR_RANGE. */
#define NPUCC_EXPR_CONST 0 /* push arg */
#define NPUCC_EXPR_PARAM 1 /* push params[arg] */
#define NPUCC_EXPR_ADD 2
#define NPUCC_EXPR_SUB 3
#define NPUCC_EXPR_MUL 4
#define NPUCC_EXPR_DIV 5
#define NPUCC_EXPR_MOD 6
#define NPUCC_EXPR_CDIV 7 /* ceiling division */
#define NPUCC_EXPR_MIN 8
#define NPUCC_EXPR_MAX 9
#define NPUCC_EXPR_SHL 10
#define NPUCC_EXPR_SHR 11
#define NPUCC_EXPR_AND 12
#define NPUCC_EXPR_OR 13
/* Stack slots an expression may use (the loader refuses deeper ones). */
#define NPUCC_EXPR_STACK 16

typedef struct npucc_expr_op {
  uint8_t op; /* NPUCC_EXPR_* */
  int64_t arg;
} npucc_expr_op;

/* One row of a "cases" table: the field holds `value` when every condition
 * (parameter == value, conds[first_cond .. first_cond+num_conds-1]) holds. */
typedef struct npucc_expr_case {
  uint64_t value;
  uint16_t first_cond; /* into npucc_target_desc.case_conds */
  uint16_t num_conds;
} npucc_expr_case;

#define NPUCC_FB_EXPR 0  /* field = expression ops[first .. first+count-1] */
#define NPUCC_FB_CASES 1 /* field = the first matching case of cases[first .. first+count-1] */

/* A field a command computes from its parameters, after its parameter
 * bindings. The value must fit the field unsigned (0 .. 2^width - 1). */
typedef struct npucc_field_binding {
  uint16_t cmd; /* index into cmds[] */
  npucc_fieldref field;
  uint8_t kind;    /* NPUCC_FB_* */
  uint8_t decodes; /* cases: the simulator recovers the parameters of its conditions from it */
  int16_t param;   /* the first parameter it reads (bad_param of NPUCC_ERR_RANGE), -1: none */
  uint16_t first;
  uint16_t count;
} npucc_field_binding;

typedef struct npucc_cmd_desc {
  uint8_t kind;   /* NPUCC_KIND_* */
  uint8_t engine; /* NPUCC_ENGINE_* */
  const npucc_binding *bindings;
  uint16_t num_bindings;
  const npucc_fixed *fixed;
  uint16_t num_fixed;
  const npucc_fieldval *select; /* must hold these values when the doorbell rings */
  uint16_t num_select;
  /* Writing this value into this field starts the command (with a job queue:
   * the queue's commit, which is the same for every command). */
  npucc_fieldval doorbell;
  uint32_t doorbell_nop; /* the doorbell field's idle value: writing it starts nothing */
} npucc_cmd_desc;

/* Frames: a command as an ordered list of words laid out like registers
 * (fields with lsb/width) but without an address. npucc_npu_encode returns
 * one write per word, in frame order (npucc_reg_write.reg is the word's
 * index in regs[]). */
typedef struct npucc_frame_desc {
  const char *name;
  uint8_t word_bits;  /* 32 or 64 */
  uint16_t first_reg; /* its words: regs[first_reg .. first_reg + num_words - 1] */
  uint16_t num_words;
} npucc_frame_desc;

/* How a command's words reach the NPU: one row per mode, (id, JSON name).
 *   mmio: its registers, the doorbell register last (a command without a
 *         delivery row);
 *   fifo: every word of its frame, in order, written into register `reg`;
 *         the last word starts the command. The FIFO holds depth_words
 *         words; those of a command stay in it until the command completes.
 *   insn: each pair of words (an odd last word with 0) is one R-type custom
 *         instruction NPUCC_HAL_INSN(opcode, funct3, funct7, rs1, rs2)
 *         (npucc_hal.h); the last one starts the command.
 *   buffer: the frame's words are appended to the command buffer
 *         (npucc_cmdbuf_desc); a kick starts every frame appended since the
 *         previous one (depth_words: the buffer's capacity). */
#define NPUCC_DELIVERY_LIST(X)                                                                     \
  X(MMIO, "mmio")                                                                                  \
  X(FIFO, "fifo")                                                                                  \
  X(INSN, "insn")                                                                                  \
  X(BUFFER, "buffer")
#define NPUCC_DELIVERY_MMIO 0
#define NPUCC_DELIVERY_FIFO 1
#define NPUCC_DELIVERY_INSN 2
#define NPUCC_DELIVERY_BUFFER 3

typedef struct npucc_delivery_desc {
  uint16_t cmd;   /* index into cmds[] */
  uint8_t mode;   /* NPUCC_DELIVERY_* */
  uint16_t frame; /* index into frames[] */
  int16_t reg;    /* fifo: the register the words are written into */
  uint32_t depth_words;
  uint8_t opcode; /* insn: major opcode (custom0..3), funct3, funct7 */
  uint8_t funct3;
  uint8_t funct7;
} npucc_delivery_desc;

/* Delivery "buffer": the command buffer in memory (emitted in <id>_target.c,
 * placed by the port with NPUCC_CMDBUF_ATTR) and the kick. The HAL appends
 * each frame's words (word_bits wide, native byte order) and kicks by
 * writing the device address of the first word not yet kicked into
 * `address`, their number (words, or bytes if length_bytes) into `length`
 * (the address register first; both one write if they share a register),
 * then kick.value into kick.field. */
typedef struct npucc_cmdbuf_desc {
  void *words; /* capacity_words words: uint32_t or uint64_t as word_bits */
  uint32_t capacity_words;
  uint8_t word_bits;
  uint16_t frame; /* the frame every buffer command appends */
  npucc_fieldref address;
  npucc_fieldref length;
  uint8_t length_bytes; /* 1: length counts bytes, 0: words */
  npucc_fieldval kick;
} npucc_cmdbuf_desc;

/* Status bit flags. */
#define NPUCC_SB_ACTIVE_LOW 1u    /* the condition holds when the field reads 0 */
#define NPUCC_SB_STICKY 2u        /* set on completion, stays set until cleared */
#define NPUCC_SB_CLEAR_W1C 4u     /* cleared by writing 1 to it */
#define NPUCC_SB_CLEAR_READ 8u    /* cleared by reading its register */
#define NPUCC_SB_REQUIRE_CLEAR 16u /* must be cleared before the engine's next command */
#define NPUCC_SB_CLEAR_FIELD 32u   /* cleared by writing clear.value into clear.field */
#define NPUCC_SB_START_BIT                                                                         \
  64u /* busy: the engine's doorbell field, reading as the doorbell                                \
         value until the command completes (idle: 0) */

typedef struct npucc_status_bit {
  npucc_fieldref f;     /* f.reg < 0: absent */
  uint8_t flags;        /* NPUCC_SB_* */
  npucc_fieldval clear; /* NPUCC_SB_CLEAR_FIELD: the field of a clear register and its value */
} npucc_status_bit;

typedef struct npucc_engine_status {
  npucc_status_bit busy;
  npucc_status_bit done;
  npucc_status_bit error;      /* 1 bit, or a code field (non-zero = error) */
  npucc_status_bit free_slots; /* job queue: free slots of this engine's queue */
} npucc_engine_status;

typedef struct npucc_mem_desc {
  const char *name;
  uint64_t base;
  uint64_t size;
  uint8_t kind;     /* NPUCC_MEM_* */
  uint8_t writable; /* system memory: may the DMA write it? */
  /* Scratchpads. */
  uint32_t banks;
  uint32_t bank_size; /* banks * bank_size == size */
  uint32_t alignment; /* every compute operand */
  uint32_t operand_alignment[NPUCC_OPND_COUNT]; /* per operand (overrides alignment) */
  uint8_t separate[NPUCC_OPND_COUNT]; /* bit b of separate[a]: a and b in different banks */
  uint8_t bank_conflict;              /* NPUCC_BANK_CONFLICT_* */
  uint32_t conflict_slowdown;
  /* System memory windows: 0 = as fast as the DMA. */
  uint32_t read_bytes_per_cycle;
  uint32_t write_bytes_per_cycle;
  uint32_t latency_cycles; /* first-access latency, once per DMA command */
} npucc_mem_desc;

/* Limits and timing of one compute operation. Bit i of a mask allows value i
 * (1..31). A maximum of 0 means "no limit". */
typedef struct npucc_op_limits {
  uint8_t supported;
  uint32_t kh_mask;
  uint32_t kw_mask;
  uint32_t stride_mask;
  uint32_t dilation_mask;
  uint32_t depth_mult_mask; /* depthwise channel multipliers */
  uint32_t max_pad[4];      /* top, bottom, left, right */
  uint32_t in_ch_multiple, out_ch_multiple;
  uint32_t max_in_ch, max_out_ch;
  uint32_t max_in_h, max_in_w, max_out_h, max_out_w;
  uint32_t max_m, max_k, max_n;
  uint32_t kinds_mask; /* pool: bit NPUCC_POOL_*; eltwise: bit NPUCC_ELTWISE_* */
  uint8_t requant;     /* NPUCC_RQ_* bits */
  uint8_t fused_clamp;
  /* Timing: cycles = steps * cycles_per_step + fill_cycles + overhead_cycles
   * (+ the target's command_overhead_cycles); see npucc_timing.h. */
  uint32_t cycles_per_step;
  uint32_t fill_cycles;
  uint32_t overhead_cycles;
  /* Operands the NPU reads from system memory itself (bit NPUCC_OPND_*; the
   * compiler does not DMA them), and log2 of each one's alignment there. */
  uint8_t operand_mem;
  uint8_t operand_align_log2[NPUCC_OPND_COUNT];
} npucc_op_limits;

/* The cycle model as data (timing.operations.<op>.steps / .macs): postfix
 * expressions (expr_ops[first .. first+count-1]) over a command's parameters
 * that replace npucc_timing.h's formula for the steps or the MACs of one
 * compute operation; a count of 0 keeps the formula. */
typedef struct npucc_op_timing {
  uint8_t kind; /* NPUCC_KIND_* */
  uint16_t steps_first, steps_count;
  uint16_t macs_first, macs_count;
} npucc_op_timing;

/* What the firmware last wrote into each register (num_regs entries each):
 * value[r] is what register r holds where known[r] is 1. Generated as
 * mutable arrays beside a description with NPUCC_REG_PERSIST registers. */
typedef struct npucc_reg_shadow {
  uint64_t *value;
  uint8_t *known;
} npucc_reg_shadow;

/* The columns of npucc_target_desc.stage_params: mul_shift_add's mul
 * (signed), shift and add (signed) widths in bits; pwl's segment count;
 * correction_terms' corr_x and corr_w (signed), shift (both shifts) and
 * corr_add (signed) widths in bits. */
#define NPUCC_SP_MSA_MUL_BITS 0
#define NPUCC_SP_MSA_SHIFT_BITS 1
#define NPUCC_SP_MSA_ADD_BITS 2
#define NPUCC_SP_PWL_SEGMENTS 3
#define NPUCC_SP_CORR_X_BITS 4
#define NPUCC_SP_CORR_W_BITS 5
#define NPUCC_SP_CORR_SHIFT_BITS 6
#define NPUCC_SP_CORR_ADD_BITS 7
#define NPUCC_SP_COUNT 8
/* Where an operation has the max or select pool stage, stage_params goes on
 * after those rows (at NPUCC_SPP_BASE) with NPUCC_KIND_COUNT rows of
 * NPUCC_SPP_COUNT bytes: the window sizes pool_k the stage offers (bit k of
 * the little-endian 32-bit mask at NPUCC_SPP_KERNELS, k = 2..31) and the
 * select stage's kept pixels (bit 8 * pool_off_y + pool_off_x of the
 * little-endian 64-bit mask at NPUCC_SPP_OFFSETS, both 0..7). */
#define NPUCC_SPP_KERNELS 0
#define NPUCC_SPP_OFFSETS 4
#define NPUCC_SPP_COUNT 12
#define NPUCC_SPP_BASE (NPUCC_KIND_COUNT * NPUCC_SP_COUNT)

typedef struct npucc_target_desc {
  const char *name;
  uint8_t address_bits; /* width of NPU addresses (32..64) */
  uint64_t base_address;
  uint8_t bus_access_bits; /* 8, 16, 32 or 64: the widest register access of the CPU (0: 32) */
  uint8_t bus_order;       /* NPUCC_BUS_*: the order of the accesses of a wider register */
  const npucc_reg_desc *regs;
  uint16_t num_regs;
  const npucc_field_desc *fields;
  uint16_t num_fields;
  const npucc_cmd_desc *cmds;
  uint16_t num_cmds;
  const npucc_fieldref *parts; /* extra parts of split bindings */
  uint16_t num_parts;
  npucc_engine_status engines[NPUCC_ENGINE_COUNT];
  uint8_t concurrent; /* DMA and compute may run at the same time */
  uint8_t completion; /* NPUCC_COMPLETION_* */
  uint16_t queue_depth; /* 0: no job queue; else commands each engine holds */
  const npucc_mem_desc *mems;
  uint16_t num_mems;
  /* DMA */
  uint8_t dma_channels;
  uint8_t dma_dims;
  uint8_t dma_zero_fill;
  uint32_t dma_bytes_per_cycle;
  uint32_t dma_read_bytes_per_cycle;
  uint32_t dma_write_bytes_per_cycle;
  uint32_t dma_setup_cycles;
  uint32_t dma_alignment;
  uint32_t dma_max_burst;
  /* Effective DMA limits (explicit in the description, else what the fields hold). */
  uint64_t dma_max_length;
  uint64_t dma_max_rows;
  uint64_t dma_max_planes;
  uint64_t dma_max_stride;
  uint64_t dma_max_plane_stride;
  /* Compute */
  uint32_t mac_rows;
  uint32_t mac_cols;
  uint8_t acc_bits;
  npucc_op_limits ops[NPUCC_KIND_COUNT];
  /* How conv and matmul read their weights (NPUCC_WL_* of npucc_layout.h;
   * 0 = OHWI) and the blocks of NPUCC_WL_BLOCKED (0 = 1). */
  uint8_t weight_layout[NPUCC_KIND_COUNT];
  uint16_t weight_block_o[NPUCC_KIND_COUNT];
  uint16_t weight_block_i[NPUCC_KIND_COUNT];
  /* The channel block of conv, depthwise and pool activations in the
   * scratchpad (NPUCC_AL_BLOCKED of npucc_layout.h; 0 or 1 = NHWC). */
  uint16_t act_block[NPUCC_KIND_COUNT];
  /* How pool's average divides (NPUCC_AVG_*; 0 = ties away from zero). */
  uint8_t pool_avg_rounding;
  /* Timing */
  uint32_t clock_hz;
  uint32_t command_overhead_cycles;
  uint32_t vector_elems_per_cycle;
  uint32_t reg_access_cycles;
  uint32_t poll_cycles;
  /* Written in order by npucc_hal_init (read-modify-write where the
   * register is NPUCC_REG_RMW); a command before them is a protocol error
   * in the simulator. */
  const npucc_fieldval *init;
  uint16_t num_init;
  /* Fields computed by expressions or cases tables ("fields"); their
   * expression ops and cases. */
  const npucc_field_binding *field_bindings;
  uint16_t num_field_bindings;
  const npucc_expr_op *expr_ops;
  uint16_t num_expr_ops;
  const npucc_expr_case *cases;
  uint16_t num_cases;
  const npucc_fixed *case_conds;
  uint16_t num_case_conds;
  /* Frames and the commands delivered as frame words (a command without a
   * delivery row is written to its registers, the doorbell last). */
  const npucc_frame_desc *frames;
  uint16_t num_frames;
  const npucc_delivery_desc *deliveries;
  uint16_t num_deliveries;
  /* insn delivery on the CPU (not NPUCC_HAL_SIM): issues the instruction of
   * deliveries[delivery] with these operands. Generated in <id>_target.c as
   * a switch expanding NPUCC_HAL_INSN with constant opcode and functs. */
  void (*insn)(uint16_t delivery, uint64_t rs1, uint64_t rs2);
  /* The command buffer of buffer delivery; NULL: none. */
  const npucc_cmdbuf_desc *cmdbuf;
  /* Per-operation steps / MACs expressions; none: the formulas. */
  const npucc_op_timing *op_timing;
  uint16_t num_op_timing;
  /* The arithmetic pipeline of each operation: NPUCC_KIND_COUNT rows of
   * NPUCC_SLOT_COUNT stage ids (npucc_stage, npucc_params.h); NULL: every
   * operation runs the default stages. */
  const uint8_t *arith;
  /* The stages' widths: NPUCC_KIND_COUNT rows of NPUCC_SP_COUNT values
   * (NPUCC_SP_*), then the pool rows (NPUCC_SPP_*) where an operation has a
   * max or select pool stage; NULL where no operation uses mul_shift_add,
   * pwl, correction_terms or a pool stage. The simulator refuses tables
   * whose values do not fit them and pool windows or kept pixels they do
   * not list. */
  const uint8_t *stage_params;
  /* The HAL's record of the registers that persist (NPUCC_REG_PERSIST);
   * NULL: every command writes every register it binds. */
  const npucc_reg_shadow *shadow;
} npucc_target_desc;

/* One register write (or frame word) of an encoded command. */
typedef struct npucc_reg_write {
  uint16_t reg; /* index into regs[] (a frame command: its words, in frame order) */
  uint64_t value;
  uint64_t mask; /* the bits the command writes (its fields and their write enables) */
} npucc_reg_write;

/* Helpers shared by the command layer and the simulator (defined in npucc_npu.c). */
const npucc_cmd_desc *npucc_desc_find_cmd(const npucc_target_desc *d, int kind);
/* How command `c` is delivered: its row, or NULL (mmio). */
const npucc_delivery_desc *npucc_desc_delivery(const npucc_target_desc *d, const npucc_cmd_desc *c);
/* All ones in the low `width` bits (width 1..64). */
uint64_t npucc_width_mask(unsigned width);
uint64_t npucc_field_get(uint64_t regval, npucc_fieldref f);
uint64_t npucc_field_put(uint64_t regval, npucc_fieldref f, uint64_t v);
/* The condition of a status bit in a register value (active-low applied). */
int npucc_status_active(uint64_t regval, npucc_status_bit b);
/* Evaluates a postfix expression (NPUCC_EXPR_*) on the parameters: NPUCC_OK
 * and *out, or NPUCC_ERR_RANGE (overflow, division by zero, a negative
 * operand where none is allowed, a shift outside 0..62, a malformed or too
 * deep expression). */
int npucc_expr_eval(const npucc_expr_op *ops, unsigned num_ops, const int64_t *params,
                    int64_t *out);
const char *npucc_param_name(int param);
const char *npucc_kind_name(int kind);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_DESC_H */
