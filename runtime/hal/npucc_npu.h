/* npucc_npu.h - Data-driven NPU command layer.
 *
 * Given the description table, a command kind and its semantic parameters,
 * packs the parameters into register fields and rings the doorbell through
 * the HAL. No NPU is known by name: the table says which field holds what.
 *
 *   int64_t p[NPUCC_P_COUNT];
 *   npucc_npu_defaults(p);
 *   p[NPUCC_P_SRC_ADDR] = ...; p[NPUCC_P_DST_ADDR] = ...; p[NPUCC_P_LENGTH] = 64;
 *   rc = npucc_npu_issue(desc, NPUCC_KIND_DMA, p, &bad);
 *   rc = npucc_hal_wait(NPUCC_ENGINE_DMA, 1000000);
 */
#ifndef NPUCC_NPU_H
#define NPUCC_NPU_H

#include <stdint.h>

#include "npucc_desc.h"
#include "npucc_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers one command writes at most (checked by the loader). */
#define NPUCC_MAX_CMD_REGS 64
/* Status polls while waiting for a free job-queue slot (job-queue NPUs). */
#ifndef NPUCC_QUEUE_POLLS
#define NPUCC_QUEUE_POLLS 10000000u
#endif

/* Fills every parameter with its default (npucc_params.h). */
void npucc_npu_defaults(int64_t params[NPUCC_P_COUNT]);
int64_t npucc_param_default(int param);
int npucc_param_is_signed(int param);
/* Does parameter `param` apply to command kind `kind`? */
int npucc_param_allowed(int param, int kind);

/* Computes the register writes of one command without performing them:
 * writes[0 .. *num_writes-1], each register once, the register holding the
 * doorbell (or the job queue's commit) last; for a command delivered as a
 * frame (npucc_desc_delivery), every word of the frame in frame order. Returns NPUCC_OK or an
 * error; on error *bad_param (if non-null) names the offending parameter (or -1). */
int npucc_npu_encode(const npucc_target_desc *d, int kind, const int64_t params[NPUCC_P_COUNT],
                     npucc_reg_write writes[NPUCC_MAX_CMD_REGS], int *num_writes,
                     int *bad_param);

/* Changed-register-only writes (NPUCC_REG_PERSIST). Whether write `w` of
 * command `c` may be left out: the register persists, `s` knows it holds
 * exactly w->value, and it is not the register holding c's doorbell (always
 * written, last). The HAL and the compiler's estimate both ask this, each
 * with its own record; s == NULL: never. */
int npucc_npu_skip(const npucc_target_desc *d, const npucc_cmd_desc *c, const npucc_reg_write *w,
                   const npucc_reg_shadow *s);
/* Records that register `reg` now holds `value` (registers that persist only). */
void npucc_npu_note(const npucc_target_desc *d, const npucc_reg_shadow *s, int reg,
                    uint64_t value);
/* Forgets every register's value (after an init, an error or a timeout: the
 * NPU may have been reset). */
void npucc_npu_forget(const npucc_target_desc *d, const npucc_reg_shadow *s);

/* (npucc_hal.c) Encodes and writes the command's registers through the HAL, the doorbell
 * register last; a frame command's words, in order, into its FIFO register. On a job-queue NPU it
 * first waits for a free slot in the engine's queue (NPUCC_ERR_TIMEOUT if none frees up). */
int npucc_npu_issue(const npucc_target_desc *d, int kind, const int64_t params[NPUCC_P_COUNT],
                    int *bad_param);

/* The register field command `kind` writes parameter `param` into: its
 * binding's (first) field, else the first computed field reading it; reg < 0
 * when the command writes it nowhere. *reg_name and *field_name (either may be
 * null) receive the names ("" when absent, and the field's for bits that
 * are no named field, e.g. a whole register). */
npucc_fieldref npucc_npu_param_field(const npucc_target_desc *d, int kind, int param,
                                     const char **reg_name, const char **field_name);

/* Inverse of the encoding: reads every parameter of command `c` from the
 * register values `regs` (one per register of the table). Unbound parameters
 * get their fixed value or default. */
void npucc_npu_decode(const npucc_target_desc *d, const npucc_cmd_desc *c, const uint64_t *regs,
                      int64_t out[NPUCC_P_COUNT]);

/* The first field binding of command `c` whose register bits differ from
 * what its expression or cases table gives for the decoded parameters. */
typedef struct npucc_field_mismatch {
  int binding; /* index into field_bindings[], -1: none */
  uint64_t held;
  uint64_t expected;
} npucc_field_mismatch;

/* Recomputes every field binding of command `c` from the decoded
 * parameters and compares it with the registers: NPUCC_OK when all agree,
 * 1 on a mismatch, NPUCC_ERR_RANGE when a value cannot be computed (no case
 * matches, the expression fails or does not fit); *m names the binding. */
int npucc_npu_check_fields(const npucc_target_desc *d, const npucc_cmd_desc *c,
                           const uint64_t *regs, const int64_t params[NPUCC_P_COUNT],
                           npucc_field_mismatch *m);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_NPU_H */
