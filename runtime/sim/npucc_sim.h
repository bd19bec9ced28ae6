/* npucc_sim.h - Host simulator of an NPU described by an npucc_target_desc.
 *
 * The simulator is the HAL's host back end: register writes land here. When a
 * write rings a doorbell of the table it decodes the command from the register
 * fields (same table as the command layer) and performs it on a model of the
 * scratchpad(s) and of system memory (host buffers mapped into the system
 * ranges of the description). It keeps a cycle-approximate timeline: the DMA
 * and compute engines advance in parallel under the timing model, the CPU
 * advances by register accesses and waits.
 *
 * It checks every command and fails the run (first error kept, with the
 * command index) on: reading scratchpad bytes never written, or written by a
 * command the CPU has not yet seen complete (race); overwriting bytes an
 * unfinished command still reads or writes; DMA outside the allowed ranges or
 * into read-only memory; misaligned addresses; field values outside the
 * NPU's limits; operands that must be in different banks sharing one (when
 * the description makes that an error); starting a busy engine (or
 * committing to a full job queue); a doorbell or opcode value that starts no
 * command; a sticky DONE not cleared before the engine's next command when
 * the description requires it. The failing engine's error field shows an
 * NPUCC_DEVERR_* code, so the HAL's wait reports it as a device error.
 *
 * Status registers behave as described: busy/done polarity, level or sticky
 * DONE bits cleared by writing 1 or by reading, error bits or code fields
 * (one field may serve several engines: it shows the first non-zero code),
 * and job-queue free-slot counts.
 *
 * Host only (uses malloc and snprintf); not part of firmware builds.
 */
#ifndef NPUCC_SIM_H
#define NPUCC_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "npucc_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct npucc_sim npucc_sim;

typedef struct npucc_sim_cmd_stats {
  int kind;               /* NPUCC_KIND_* */
  int engine;             /* NPUCC_ENGINE_* */
  uint64_t start, end;    /* cycles on the NPU clock */
  uint64_t cycles;        /* end - start */
  uint64_t macs;          /* multiply-accumulates performed */
  double mac_utilisation; /* macs / (cycles * rows * cols) */
  uint64_t sys_bytes_read;
  uint64_t sys_bytes_written;
} npucc_sim_cmd_stats;

typedef struct npucc_sim_totals {
  uint64_t commands;
  uint64_t reg_writes; /* the CPU's bus writes to NPU registers (custom instructions: per word) */
  uint64_t cpu_cycles; /* current CPU time */
  uint64_t end_cycles; /* max(CPU time, last engine completion) */
  uint64_t dma_busy_cycles;
  uint64_t compute_busy_cycles;
  uint64_t macs;
  uint64_t sys_bytes_read;
  uint64_t sys_bytes_written;
  double mac_utilisation; /* macs / (compute_busy_cycles * rows * cols) */
} npucc_sim_totals;

/* The table must outlive the simulator. Returns NULL on allocation failure. */
npucc_sim *npucc_sim_create(const npucc_target_desc *desc);
void npucc_sim_destroy(npucc_sim *sim);
const npucc_target_desc *npucc_sim_desc(const npucc_sim *sim);

/* Maps a host buffer as system memory at NPU address `addr`. The whole
 * [addr, addr+size) must lie inside one system range of the description;
 * the range's access (ro/rw) applies. Returns 0, or -1 if not allowed. */
int npucc_sim_map(npucc_sim *sim, uint64_t addr, void *host, uint64_t size);

/* The NPU address of a host buffer: where an existing mapping puts it, else
 * a new mapping placed after the previous automatic ones in the first window
 * that fits: a read-only window for constant data (writable = 0) if one has
 * room, else the first writable window (64-byte aligned). 0 (and a failed
 * run) when nothing fits. */
uint64_t npucc_sim_device_addr(npucc_sim *sim, const void *host, uint64_t size, int writable);

/* Register interface (what the HAL sim back end calls): one bus access of
 * `width_bits` bits at `offset`. A register no wider than the bus takes one
 * access of its width; a wider one takes width / bus_access_bits accesses,
 * the one at the register's offset holding the low bits: the simulator
 * applies such a write (and decodes a doorbell in it) when the access that
 * is last in bus_order arrives, after all the others (else a protocol
 * error); a read returns that access's bits of the register. */
void npucc_sim_reg_write(npucc_sim *sim, uint32_t offset, uint64_t value, uint8_t width_bits);
uint64_t npucc_sim_reg_read(npucc_sim *sim, uint32_t offset, uint8_t width_bits);

/* Advances the CPU clock, e.g. by the cost of CPU work (kernels run on the
 * host) between NPU commands. */
/* A custom CPU instruction carrying two command words (delivery "insn",
 * npucc_hal.h NPUCC_HAL_INSN): the first instruction of a command names it
 * by funct3/funct7; its words are collected in frame order and the command
 * starts after the last one. An instruction naming no command, or another
 * command before the frame is complete, is a protocol error. */
void npucc_sim_insn(npucc_sim *s, unsigned funct3, unsigned funct7, uint64_t rs1, uint64_t rs2);
void npucc_sim_advance_cpu(npucc_sim *sim, uint64_t cycles);

/* Makes `sim` the target of the HAL sim back end (and npucc_hal_init()s it). */
void npucc_sim_attach(npucc_sim *sim);
npucc_sim *npucc_sim_attached(void);
/* A HAL wait hook modelling WFI: advances the CPU to the next engine
 * completion. Pass the simulator as ctx. */
int npucc_sim_wfi_hook(void *ctx);

/* Debug back door: host access to the scratchpad with no timing. Writes
 * mark the bytes initialized. Return 0, or -1 if outside a scratchpad. */
int npucc_sim_spm_write(npucc_sim *sim, uint64_t addr, const void *src, uint32_t size);
int npucc_sim_spm_read(npucc_sim *sim, uint64_t addr, void *dst, uint32_t size);

/* Results. */
int npucc_sim_failed(const npucc_sim *sim);
const char *npucc_sim_error(const npucc_sim *sim); /* "" when none */
int npucc_sim_error_command(const npucc_sim *sim); /* -1 when none / not a command */
size_t npucc_sim_num_commands(const npucc_sim *sim);
const npucc_sim_cmd_stats *npucc_sim_command(const npucc_sim *sim, size_t index);
void npucc_sim_get_totals(const npucc_sim *sim, npucc_sim_totals *out);
uint64_t npucc_sim_cpu_cycles(const npucc_sim *sim);
/* Human-readable summary: totals, then one line per command, then the error. */
void npucc_sim_print_report(const npucc_sim *sim, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_SIM_H */
