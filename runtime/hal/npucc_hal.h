/* npucc_hal.h - Hardware abstraction for the NPU command interface.
 *
 * Register access and completion waiting. Two back ends, chosen at compile
 * time:
 *   - default (firmware): volatile MMIO at the description's base address;
 *     no OS, no printf, no malloc.
 *   - NPUCC_HAL_SIM defined (host): forwards to the simulator attached with
 *     npucc_sim_attach() (runtime/sim/npucc_sim.h).
 */
#ifndef NPUCC_HAL_H
#define NPUCC_HAL_H

#include <stdint.h>

#include "npucc_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes of the HAL and the command layer. */
#define NPUCC_OK 0
#define NPUCC_ERR_UNSUPPORTED (-1) /* the NPU has no such command / parameter */
#define NPUCC_ERR_RANGE (-2)       /* a value does not fit its register field */
#define NPUCC_ERR_ALIGN (-3)       /* a value is not a multiple of its field's unit */
#define NPUCC_ERR_PARAM (-4)       /* a parameter the NPU fixes was given another value */
#define NPUCC_ERR_TIMEOUT (-5)     /* the engine did not finish within the poll budget */
#define NPUCC_ERR_DEVICE (-6)      /* the engine reported an error in its status bits */

/* Attributes of the runtime's own state: the command stream's parameter state
 * and last fault (npucc_stream.c) and the HAL's pending status bits
 * (npucc_hal.c), well under 1 KiB of RAM shared by every model of the image and
 * all zero-initialised (it must be in .bss-like memory). Empty by default, so
 * it goes to .bss; e.g.
 * -DNPUCC_RUNTIME_ATTR='__attribute__((section(".bss.npu_state")))' places it. */
#ifndef NPUCC_RUNTIME_ATTR
#define NPUCC_RUNTIME_ATTR
#endif

/* Called once per poll iteration while waiting (e.g. to execute WFI or to
 * sleep until an interrupt). Return non-zero to abort the wait. */
typedef int (*npucc_hal_wait_hook)(void *ctx);

/* Selects the description (base address, register widths, status bits). */
void npucc_hal_init(const npucc_target_desc *desc);
const npucc_target_desc *npucc_hal_desc(void);

/* Register access; `offset` is relative to the command interface base and
 * `width_bits` is the register's width (8, 16, 32 or 64). A register wider
 * than the description's bus (bus_access_bits) is accessed as width /
 * bus_access_bits volatile accesses in its bus_order, the access at
 * `offset` holding the low bits; otherwise as one access of its width. */
void npucc_hal_write(uint32_t offset, uint64_t value, uint8_t width_bits);
uint64_t npucc_hal_read(uint32_t offset, uint8_t width_bits);

void npucc_hal_set_wait_hook(npucc_hal_wait_hook hook, void *ctx);

/* A custom CPU instruction carrying two command words (delivery "insn"):
 * R-type, major opcode `opcode` (custom0..3), funct3, funct7, rs1 = a,
 * rs2 = b, no result. opcode, funct3 and funct7 are integer constants
 * (<id>_target.c expands the macro once per command). A port may define it
 * before including this header; by default it is the simulator's
 * npucc_sim_insn with NPUCC_HAL_SIM, an inline `.insn r` on RISC-V, and
 * otherwise undefined (<id>_target.c of a description with insn delivery
 * then stops with "define NPUCC_HAL_INSN for your CPU"). */
#ifndef NPUCC_HAL_INSN
#if defined(NPUCC_HAL_SIM)
struct npucc_sim;
struct npucc_sim *npucc_sim_attached(void);
void npucc_sim_insn(struct npucc_sim *s, unsigned funct3, unsigned funct7, uint64_t rs1,
                    uint64_t rs2);
#define NPUCC_HAL_INSN(opcode, funct3, funct7, a, b)                                               \
  npucc_sim_insn(npucc_sim_attached(), (funct3), (funct7), (a), (b))
#elif defined(__riscv)
#define NPUCC_HAL_INSN_STR2(x) #x
#define NPUCC_HAL_INSN_STR(x) NPUCC_HAL_INSN_STR2(x)
#define NPUCC_HAL_INSN(opcode, funct3, funct7, a, b)                                               \
  __asm__ volatile(".insn r " NPUCC_HAL_INSN_STR(opcode) ", " NPUCC_HAL_INSN_STR(                  \
                       funct3) ", " NPUCC_HAL_INSN_STR(funct7) ", x0, %0, %1"                      \
                   :                                                                               \
                   : "r"(a), "r"(b)                                                                \
                   : "memory")
#endif
#endif

/* Delivery "buffer" (npucc_cmdbuf_desc): npucc_npu_issue appends a
 * command's frame to the command buffer; npucc_hal_kick starts the frames
 * appended since the previous kick (writes the address and length of their
 * words, then the kick field). Every wait kicks first; a command stream
 * that ends without a wait leaves its frames in the buffer until the next
 * wait or kick (the streams npucc emits end with a wait for every engine).
 * A frame that does not fit kicks, waits for every engine
 * (at most NPUCC_CMDBUF_POLLS polls each) and restarts the buffer from its
 * first word. Returns NPUCC_OK (also with nothing to kick) or
 * NPUCC_ERR_RANGE (the address or length does not fit its field).
 * NPUCC_HAL_CMDBUF_SYNC(p, bytes), which a port may define, runs before the
 * kick's register writes: make the words at p visible to the NPU (clean the
 * data cache, a memory barrier); by default a compiler barrier. */
int npucc_hal_kick(void);
#ifndef NPUCC_CMDBUF_POLLS
#define NPUCC_CMDBUF_POLLS 100000000u
#endif
#ifndef NPUCC_HAL_CMDBUF_SYNC
#if defined(__GNUC__)
#define NPUCC_HAL_CMDBUF_SYNC(p, bytes) __asm__ volatile("" : : "r"(p), "r"(bytes) : "memory")
#else
#define NPUCC_HAL_CMDBUF_SYNC(p, bytes) ((void)(p), (void)(bytes))
#endif
#endif

/* The NPU (device) address of a host buffer. On silicon the NPU sees the
 * CPU's addresses: the pointer itself (define NPUCC_DEVICE_ADDR(p) to
 * translate otherwise). With the simulator, the buffer is mapped into the
 * description's system windows on first use: constant data (writable = 0)
 * in the first read-only window with room, everything else in the first
 * writable one. */
uint64_t npucc_hal_device_addr(const void *p, uint64_t size, int writable);

/* Reads a register that holds status bits (index into regs[]). Bits that the
 * read clears (clear-on-read DONE bits, error codes) are remembered for the
 * engine they belong to, so reading one engine's status never loses
 * another's. */
uint64_t npucc_hal_read_status(int reg);

/* Waits until `engine` (NPUCC_ENGINE_*) has completed everything issued to
 * it, as the description says: its busy bit inactive, else its done bit
 * active (polarity applied); a sticky done bit is then cleared (write 1, or
 * the clearing read). With completion mode "fence", issues a fence command
 * first and waits for the fence instead (which covers every engine).
 * Returns NPUCC_OK, NPUCC_ERR_DEVICE if any engine reports an error (its
 * code: npucc_hal_last_error; an error field that can be cleared is cleared
 * once reported), or NPUCC_ERR_TIMEOUT after max_polls status reads. */
int npucc_hal_wait(int engine, uint32_t max_polls);
/* Engine bits for npucc_hal_wait_engines (and the command stream's waits). */
#define NPUCC_WAIT_DMA (1u << NPUCC_ENGINE_DMA)
#define NPUCC_WAIT_COMPUTE (1u << NPUCC_ENGINE_COMPUTE)
/* Waits for every engine whose bit is set in `mask` (bit e: NPUCC_ENGINE_e):
 * with completion mode "fence", one fence wait (a fence covers every engine;
 * none if the mask is empty); else npucc_hal_wait on each engine of the
 * mask, DMA first, stopping at the first error. */
int npucc_hal_wait_engines(unsigned mask, uint32_t max_polls);
/* Waits for every engine: npucc_hal_wait_engines(NPUCC_WAIT_DMA | NPUCC_WAIT_COMPUTE). */
int npucc_hal_wait_all(uint32_t max_polls);
/* The last error a wait reported: its code (0 = none) and, if engine is not
 * null, the engine whose error field showed it (-1 when that field is shared
 * by several engines). */
uint32_t npucc_hal_last_error(int *engine);

#ifdef __cplusplus
}
#endif

#endif /* NPUCC_HAL_H */
