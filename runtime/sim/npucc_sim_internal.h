/* npucc_sim_internal.h - Simulator state shared by npucc_sim.c (registers,
 * timeline, checks), npucc_sim_status.c (status bits), npucc_sim_mem.c
 * (memories, hazards), npucc_sim_ops.c (command dispatch, DMA, pool,
 * eltwise and the shared checks), npucc_sim_mac.c (conv, depthwise, matmul),
 * npucc_sim_tables.c (stage parameters against the description) and
 * npucc_sim_delivery.c (frame words from a FIFO or custom instructions). */
#ifndef NPUCC_SIM_INTERNAL_H
#define NPUCC_SIM_INTERNAL_H

#include "npucc_layout.h"
#include "npucc_sim.h"

#define NPUCC_SIM_MAX_MAPS 32
#define SIM_REG_STATUS 1
#define SIM_REG_SHARED 2
#define NPUCC_SIM_QUEUE_MAX 256

typedef struct sim_spm {
  uint64_t base;
  uint32_t size;
  const npucc_mem_desc *desc;
  uint8_t *data;
  uint8_t *valid;  /* byte written at least once */
  int32_t *writer; /* command index of the last writer, -1 = back door */
  int32_t *reader; /* command index of the last reader, -1 = none */
} sim_spm;

typedef struct sim_map {
  uint64_t base, size;
  uint8_t *host;
  uint8_t writable;
  const npucc_mem_desc *window; /* the system window it lies in */
} sim_map;

typedef struct sim_engine {
  int cmd;        /* index of the last command started, -1 = none */
  uint64_t end;   /* completion time of that command */
  uint32_t error; /* sticky error code (0 = none) */
  size_t obs_cursor;
  uint64_t busy_cycles;
  /* Sticky DONE: set when the engine becomes idle after a command later than
   * `cleared`; `stale` keeps an earlier idle edge that was never cleared. */
  int cleared;
  uint8_t stale;
  /* Job queue: completion times of the commands it holds (ring). */
  uint64_t qend[NPUCC_SIM_QUEUE_MAX];
  unsigned qhead, qcount;
  /* The FIFO register (regs[] index) the last command came through, -1:
   * none; its words stay in the FIFO until it completes. */
  int fifo_reg;
  unsigned fifo_words;
} sim_engine;

struct npucc_sim {
  const npucc_target_desc *d;
  uint64_t *regs;
  /* Per register: SIM_REG_STATUS (holds status bits, computed on read),
   * SIM_REG_SHARED (also written by commands: status fields are computed on
   * read over the bits written), or 0. */
  uint8_t *is_status;
  /* Registers wider than the bus: the accesses of a write so far (bit k =
   * access k, the one holding bits k * bus_access_bits ..) and their bits. */
  uint8_t *arrived;
  uint64_t *staged;
  /* Per register: written since the last command started. A command may
   * rely only on these and on NPUCC_REG_PERSIST registers. */
  uint8_t *written;
  uint64_t reg_writes; /* bus write accesses to registers (and insn words) */
  uint64_t *auto_next; /* per memory: next free address of automatic mappings */
  /* FIFO registers (delivery "fifo"): words of the frame pushed so far. */
  uint16_t *fifo_fill;
  /* insn delivery: the delivery row whose frame is being collected (-1:
   * none) and its words so far. */
  int insn_dl;
  uint16_t insn_fill;
  sim_spm *spm;
  int num_spm;
  sim_map maps[NPUCC_SIM_MAX_MAPS];
  int num_maps;
  uint64_t cpu;
  uint16_t init_next; /* the description's init writes seen so far, in order */
  sim_engine eng[NPUCC_ENGINE_COUNT];
  npucc_sim_cmd_stats *cmds;
  uint8_t *observed;
  size_t num_cmds, cap_cmds;
  int failed;
  int err_cmd;
  char err[600];
};

/* A resolved memory window. */
typedef struct sim_window {
  uint8_t *ptr;
  int spm; /* scratchpad index, or -1 for system memory */
  uint32_t spm_off;
  const npucc_mem_desc *mem; /* the description's memory */
} sim_window;

/* Records the first error (printf-style) for command idx (-1: none) and
 * shows `code` (NPUCC_DEVERR_*) in the engine's error field. Returns -1. */
int sim_fail(npucc_sim *s, int idx, uint32_t code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Resolves [addr, addr+len) inside one memory; checks writability. */
int sim_resolve(npucc_sim *s, int idx, int64_t addr, uint64_t len, int write, const char *what,
                sim_window *w);
/* Scratchpad-only operand: in range, aligned to the operand's alignment
 * (NPUCC_OPND_*, or -1 for the scratchpad's). */
int sim_operand(npucc_sim *s, int idx, int64_t addr, uint64_t len, int operand, const char *what,
                sim_window *w);
/* A constant operand (w, bias, rq) of a command of `kind`: in the scratchpad
 * as sim_operand, or, where the operation reads it from system memory
 * (npucc_op_limits.operand_mem), in a mapped system window, aligned to its
 * operand_align_log2: else a MEMORY or ALIGN error. */
int sim_const_operand(npucc_sim *s, int idx, int kind, int64_t addr, uint64_t len, int operand,
                      const char *what, sim_window *w);
/* Hazard checks and bookkeeping for scratchpad bytes read / written by idx. */
int sim_check_read(npucc_sim *s, int idx, const sim_window *w, uint64_t len, const char *what);
int sim_check_write(npucc_sim *s, int idx, const sim_window *w, uint64_t len, const char *what);
/* Frees the scratchpad models (npucc_sim_mem.c). */
void sim_free_memories(npucc_sim *s);
int sim_alloc_memories(npucc_sim *s);

/* The engine runs a command at the current CPU time. */
int sim_engine_busy(const npucc_sim *s, int e);
/* Job queue: commands of engine e not yet completed at the current time. */
unsigned sim_queue_pending(npucc_sim *s, int e);
/* The CPU saw engine e idle: its commands before `limit` count as waited for. */
void sim_observe(npucc_sim *s, int e, size_t limit);
/* Status bits (npucc_sim_status.c): engine e's sticky DONE is set; what a
 * write to register r clears; what status register r reads through access
 * `part` over the value `stored` last written to it. */
int sim_done_latched(const npucc_sim *s, int e);
void sim_write_status(npucc_sim *s, int r, uint64_t value);
uint64_t sim_read_status(npucc_sim *s, int r, npucc_fieldref part, uint64_t stored);

/* The widest bus access of the CPU (a table without one: 32 bits). */
unsigned sim_bus_bits(const npucc_sim *s);
/* Starts command c from the words or registers written so far, at the
 * current CPU time (npucc_sim.c); failures are recorded with sim_fail. */
void sim_launch(npucc_sim *s, const npucc_cmd_desc *c);
/* The stages' tables against the description's widths (npucc_sim_tables.c,
 * npucc_target_desc.stage_params; nothing to check without them): every
 * channel's mul_shift_add mul, shift and add in the rq table `rq` (int32
 * mul[], shift[], add[]), and the pwl table `t`'s segments in use. 0, or -1
 * after sim_fail. */
int sim_check_msa_widths(npucc_sim *s, int idx, int kind, int64_t channels, const uint8_t *rq);
int sim_check_pwl_segments(npucc_sim *s, int idx, int kind, const uint8_t *t);
/* The correction_terms stage's command parameters (corr_x, corr_w signed,
 * the shifts, corr_add signed) against the operation's widths. */
int sim_check_corr_widths(npucc_sim *s, int idx, int kind, const int64_t *p);
/* The max or select pool stage's window k (above 1) among the sizes the
 * description lists for the operation, and select's kept pixel (oy, ox)
 * among the offered ones (NPUCC_SPP_*). */
int sim_check_pool_lists(npucc_sim *s, int idx, int kind, int64_t k, int64_t oy, int64_t ox);

/* Delivery "fifo" (npucc_sim_delivery.c): the delivery row of the first
 * command pushing its frame into register r, or NULL; a word pushed into r. */
const npucc_delivery_desc *sim_fifo_of(const npucc_sim *s, int r);
void sim_fifo_push(npucc_sim *s, int r, const npucc_delivery_desc *dl, uint64_t value);
/* Delivery "buffer": the kick was written; reads the words at the address
 * and length the kick's registers hold and starts their frames in order. */
void sim_buffer_kick(npucc_sim *s);

/* v (1..31) is in the bit mask; v exceeds a limit (0: none). */
static inline int sim_in_mask(uint32_t mask, int64_t v) {
  return v >= 1 && v <= 31 && ((mask >> v) & 1u);
}
static inline int sim_over(uint64_t max, int64_t v) { return max && v > (int64_t)max; }

/* Checks every operation shares (npucc_sim_ops.c), 0 or -1 after sim_fail:
 * zero points, act_min/act_max and the fused clamp; input (and, unless
 * out < 0, output) channel counts, multiples and limits; kernel, stride,
 * dilation, spatial limits and padding per side; the scratchpad's bank
 * rules. The activation layout of operation `kind`. */
int sim_check_zp_clamp(npucc_sim *s, int idx, int kind, const int64_t *p);
int sim_check_channels(npucc_sim *s, int idx, const npucc_op_limits *l, int64_t in, int64_t out);
int sim_check_spatial(npucc_sim *s, int idx, int kind, const int64_t *p);
int sim_check_banks(npucc_sim *s, int idx, int kind, const int64_t *p);
npucc_alayout sim_act_layout(const npucc_sim *s, int kind);
/* The MAC-array commands (npucc_sim_mac.c): conv or depthwise (`kind`) and
 * matmul, as sim_exec. */
int sim_exec_conv(npucc_sim *s, int idx, int kind, const int64_t *p);
int sim_exec_matmul(npucc_sim *s, int idx, const int64_t *p);

/* Executes a decoded command of description `c`: validates, performs it,
 * fills cycles/macs/bytes in s->cmds[idx]. Returns 0 or -1 (after sim_fail). */
int sim_exec(npucc_sim *s, int idx, const npucc_cmd_desc *c, const int64_t *p);

#endif /* NPUCC_SIM_INTERNAL_H */
