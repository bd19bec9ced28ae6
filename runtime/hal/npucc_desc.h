/* npucc_desc.h - The C form of an NPU target description.
 *
 * The compiler turns a target JSON into a constant `npucc_target_desc` table
 * (generated C text, or an in-memory table built by lib/target for host
 * tests). The command layer (npucc_npu.c) packs semantic parameters into
 * register fields using it, and the simulator (runtime/sim) decodes register
 * writes back into commands with the same table. Nothing in the runtime knows
 * a particular NPU: everything comes from this table.
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

/* One named bit field of a register. */
typedef struct npucc_field_desc {
  const char *name;
  uint8_t lsb;
  uint8_t width;
} npucc_field_desc;

/* One memory-mapped register at base_address + offset. */
typedef struct npucc_reg_desc {
  const char *name;
  uint32_t offset; /* bytes from the command interface base address */
  uint8_t width;   /* 8, 16 or 32 bits */
  uint16_t first_field;
  uint16_t num_fields;
} npucc_reg_desc;

/* A run of bits inside one register (a named field or the whole register).
 * reg < 0 means "absent". */
typedef struct npucc_fieldref {
  int16_t reg;
  uint8_t lsb;
  uint8_t width;
} npucc_fieldref;

/* A command writes parameter `param` into `field` as
 * (value - minus) >> shift; the simulator decodes (field << shift) + minus. */
typedef struct npucc_binding {
  uint16_t param;
  npucc_fieldref field;
  uint8_t shift;
  int64_t minus;
} npucc_binding;

/* A parameter the hardware does not take from a register: it always behaves as
 * if the parameter had this value. */
typedef struct npucc_fixed {
  uint16_t param;
  int32_t value;
} npucc_fixed;

/* A constant written into a field (opcode selectors, doorbells). */
typedef struct npucc_fieldval {
  npucc_fieldref field;
  uint32_t value;
} npucc_fieldval;

typedef struct npucc_cmd_desc {
  uint8_t kind;   /* NPUCC_KIND_* */
  uint8_t engine; /* NPUCC_ENGINE_* */
  const npucc_binding *bindings;
  uint16_t num_bindings;
  const npucc_fixed *fixed;
  uint16_t num_fixed;
  const npucc_fieldval *select; /* must hold these values when the doorbell rings */
  uint16_t num_select;
  npucc_fieldval doorbell; /* writing this value into this field starts the command */
} npucc_cmd_desc;

typedef struct npucc_engine_status {
  npucc_fieldref busy;
  npucc_fieldref done;
  npucc_fieldref error;
} npucc_engine_status;

typedef struct npucc_mem_desc {
  const char *name;
  uint32_t base;
  uint32_t size;
  uint8_t kind;     /* NPUCC_MEM_* */
  uint8_t writable; /* system memory: may the DMA write it? */
  uint16_t banks;
  uint16_t alignment;
} npucc_mem_desc;

/* Limits of one compute operation. Bit i of a mask allows value i (1..31). */
typedef struct npucc_op_limits {
  uint8_t supported;
  uint32_t kernel_mask;
  uint32_t stride_mask;
  uint32_t dilation_mask;
  uint16_t max_pad;
  uint16_t channel_multiple;
  uint32_t max_channels; /* 0 = no limit */
  uint32_t kinds_mask;   /* pool: bit NPUCC_POOL_*; eltwise: bit NPUCC_ELTWISE_* */
} npucc_op_limits;

typedef struct npucc_target_desc {
  const char *name;
  uint32_t base_address;
  const npucc_reg_desc *regs;
  uint16_t num_regs;
  const npucc_field_desc *fields;
  uint16_t num_fields;
  const npucc_cmd_desc *cmds;
  uint16_t num_cmds;
  int16_t status_reg;
  npucc_engine_status engines[NPUCC_ENGINE_COUNT];
  uint8_t concurrent; /* DMA and compute may run at the same time */
  uint8_t completion; /* NPUCC_COMPLETION_* */
  const npucc_mem_desc *mems;
  uint16_t num_mems;
  /* DMA */
  uint8_t dma_channels;
  uint8_t dma_dims;
  uint16_t dma_bytes_per_cycle;
  uint32_t dma_setup_cycles;
  uint16_t dma_alignment;
  uint32_t dma_max_burst;
  uint8_t dma_zero_fill;
  /* Compute */
  uint16_t mac_rows;
  uint16_t mac_cols;
  uint8_t acc_bits;
  uint8_t per_channel_requant;
  uint8_t per_tensor_requant;
  uint8_t fused_clamp;
  npucc_op_limits ops[NPUCC_KIND_COUNT];
  /* Timing */
  uint32_t clock_hz;
  uint32_t command_overhead_cycles;
  uint32_t vector_elems_per_cycle;
  uint32_t reg_access_cycles;
  uint32_t poll_cycles;
} npucc_target_desc;

/* Helpers shared by the command layer and the simulator (defined in npucc_npu.c). */
const npucc_cmd_desc *npucc_desc_find_cmd(const npucc_target_desc *d, int kind);
uint32_t npucc_field_get(uint32_t regval, npucc_fieldref f);
uint32_t npucc_field_put(uint32_t regval, npucc_fieldref f, uint32_t v);
const char *npucc_param_name(int param);
const char *npucc_kind_name(int kind);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_DESC_H */
