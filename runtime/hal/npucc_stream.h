/* npucc_stream.h - Runs the NPU command streams that npucc emits.
 *
 * A generated program drives the NPU through tables instead of code: one
 * entry per command or wait, and per command only the semantic parameters
 * that differ from the previous command of the same engine (DMA or compute),
 * each relative to a base address when it is an address:
 *
 *   static const npucc_stream_param model_np[] = {{NPUCC_P_SRC_ADDR, 2, 1024}, ...};
 *   static const npucc_stream_op model_ns[] = {{NPUCC_KIND_DMA, 3, 0}, ...,
 *                                             {NPUCC_STREAM_WAIT, NPUCC_WAIT_DMA, 0}};
 *   npucc_stream_reset();                     once per run, before the first stream
 *   rc = npucc_stream_run(NPUCC_TARGET, model_ns, 40, model_np, bases);
 *
 * bases[k] is the device address of the k-th buffer (arena, constants,
 * inputs, outputs, scratchpads), from npucc_hal_device_addr(). The parameter
 * state lives in RAM (2 x NPUCC_P_COUNT int64 values, NPUCC_RUNTIME_ATTR); no
 * malloc, no printf. A failing run leaves its fault to npucc_stream_last_fault().
 */
#ifndef NPUCC_STREAM_H
#define NPUCC_STREAM_H

#include <stdint.h>

#include "npucc_desc.h"
#include "npucc_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An op whose kind is this waits for the engines whose bits are set in `arg`
 * (NPUCC_WAIT_DMA | NPUCC_WAIT_COMPUTE): one npucc_hal_wait_engines call, so
 * one fence on an NPU with fence completion, whatever the engines. */
#define NPUCC_STREAM_WAIT 0xFFu

/* Status polls per wait before NPUCC_ERR_TIMEOUT. */
#ifndef NPUCC_STREAM_POLLS
#define NPUCC_STREAM_POLLS 100000000u
#endif

typedef struct npucc_stream_op {
  uint8_t kind;   /* NPUCC_KIND_*, or NPUCC_STREAM_WAIT */
  uint8_t arg;    /* command: number of parameter entries; wait: engine bits */
  uint32_t first; /* command: index of its first parameter entry */
} npucc_stream_op;

typedef struct npucc_stream_param {
  uint8_t param; /* NPUCC_P_* */
  uint8_t base;  /* 0: value as is; else bases[base] + (uint32_t)value */
  int32_t value; /* with a base: the bits of an unsigned offset (up to 4 GiB - 1) */
} npucc_stream_param;

/* Where the last failing npucc_stream_run call stopped. */
typedef struct npucc_stream_fault {
  int32_t rc;           /* its return code; NPUCC_OK: no call failed since npucc_stream_reset */
  int32_t op;           /* index in that call's ops[] of the failing command or wait, or -1 */
  int16_t kind;         /* that op's NPUCC_KIND_*, or NPUCC_STREAM_WAIT */
  int16_t param;        /* a command: the NPUCC_P_* parameter the command layer refused, or -1 */
  int64_t value;        /* that parameter's value */
  int16_t engine;       /* NPUCC_ERR_DEVICE: the engine whose error field reported it, or -1 */
  uint32_t device_code; /* NPUCC_ERR_DEVICE: the code in that field */
} npucc_stream_fault;

/* Every parameter back to its default and the fault cleared (start of a run). */
void npucc_stream_reset(void);

/* The fault of the last failing npucc_stream_run since npucc_stream_reset
 * (rc == NPUCC_OK if none). Generated code passes each NPU layer's own slice
 * of the stream, so `op` counts from the layer's first command. */
const npucc_stream_fault *npucc_stream_last_fault(void);

/* Names for f (any out-pointer may be null): the command ("conv", "dma", ...,
 * or "wait"), the parameter ("" if none) and the register and field the
 * command writes it into ("" if none): enough for a firmware log line such as
 * "conv: param dst_addr = 70000 does not fit CMD_DST.addr". */
void npucc_stream_fault_names(const npucc_target_desc *d, const npucc_stream_fault *f,
                              const char **command, const char **param, const char **reg,
                              const char **field);

/* Issues the commands and waits of ops[0..n-1]; stops at the first error
 * (the command layer's or the wait's return code). */
int npucc_stream_run(const npucc_target_desc *d, const npucc_stream_op *ops, uint32_t n,
                     const npucc_stream_param *params, const uint64_t *bases);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_STREAM_H */
