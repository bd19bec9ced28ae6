/* mcu_harness.c - Bench-only counters for bench/mcu_bench.sh: linked with -Wl,--wrap=main into
 * an `npucc --emit-test` program (with test/firmware/m4_startup.c on Cortex-M4F, picolibc's
 * semihosting crt0 on RV32). It counts executed instructions around the test program's main
 * (QEMU -icount shift=0: RISC-V minstret exactly; on mps2-an386 the CMSDK timer 0 at 25 MHz,
 * that is one tick per 40 instructions) and, when model.c is compiled with -include
 * mcu_hooks.h, per layer through NPUCC_LAYER_HOOK. It also paints the stack below the stack
 * pointer of the first layer hook (called from the model's run function) and reports how deep
 * below it the kernels went (the run function's own frame is not counted). Output lines start
 * with "MCU_" and follow the test program's own output. */
#include <stdint.h>
#include <stdio.h>

#include "mcu_hooks.h"

#define MCU_MAX_LAYERS 1024
#define MCU_PAINT_BYTES 65536u
#define MCU_PAINT 0x5AA5C33Cu

#if defined(__arm__)
#define T0_CTRL (*(volatile uint32_t *)0x40000000u)
#define T0_VALUE (*(volatile uint32_t *)0x40000004u)
#define T0_RELOAD (*(volatile uint32_t *)0x40000008u)
#define MCU_INSTR_PER_TICK 40u
static void counter_start(void) {
  T0_RELOAD = 0xFFFFFFFFu;
  T0_VALUE = 0xFFFFFFFFu;
  T0_CTRL = 1u;
}
/* Ticks since counter_start (the timer counts down). */
static inline uint32_t counter_read(void) { return 0xFFFFFFFFu - T0_VALUE; }
typedef uint32_t mcu_count;
#elif defined(__riscv)
#define MCU_INSTR_PER_TICK 1u
static void counter_start(void) {}
static inline uint64_t counter_read(void) {
  uint32_t hi, lo, hi2;
  do { /* minstreth (0xB82), minstret (0xB02); .insn needs no Zicsr in -march */
    __asm__ volatile(".insn i 0x73, 2, %0, x0, -1150" : "=r"(hi));
    __asm__ volatile(".insn i 0x73, 2, %0, x0, -1278" : "=r"(lo));
    __asm__ volatile(".insn i 0x73, 2, %0, x0, -1150" : "=r"(hi2));
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
}
typedef uint64_t mcu_count;
#else
#error "mcu_harness.c: Cortex-M or RISC-V only"
#endif

static uint64_t layer_ticks[MCU_MAX_LAYERS];
static uint32_t layer_calls[MCU_MAX_LAYERS];
static int layer_cur = -1, layer_max = -1;
static mcu_count layer_last;
static volatile uint32_t *paint_lo, *paint_hi;
static unsigned stack_used = 0;

static uint32_t *stack_pointer(void) {
  uint32_t *sp;
#if defined(__arm__)
  __asm__ volatile("mov %0, sp" : "=r"(sp));
#else
  __asm__ volatile("mv %0, sp" : "=r"(sp));
#endif
  return sp;
}

void mcu_layer_hook(int index) {
  mcu_count now = counter_read();
  if (layer_cur >= 0 && layer_cur < MCU_MAX_LAYERS) {
    layer_ticks[layer_cur] += (uint64_t)(mcu_count)(now - layer_last);
    layer_calls[layer_cur] += 1u;
  }
  if (index == 0 && paint_hi == 0) { /* first layer of the first run: paint the free stack */
    volatile uint32_t *p;
    paint_hi = (volatile uint32_t *)stack_pointer(); /* the loop below calls nothing */
    paint_lo = paint_hi - MCU_PAINT_BYTES / 4u;
    for (p = paint_lo; p < paint_hi; ++p)
      *p = MCU_PAINT;
  }
  if (index > layer_max)
    layer_max = index;
  layer_cur = index;
  layer_last = counter_read();
}

extern int __real_main(void);

int __wrap_main(void) {
  mcu_count t0, t1, cal;
  int rc, i;
  volatile uint32_t *p;
  counter_start();
  /* The hook's own cost: two hooks back to back (calibration slot MCU_MAX_LAYERS - 1). */
  for (i = 0; i < 8; ++i) {
    mcu_layer_hook(MCU_MAX_LAYERS - 1);
    mcu_layer_hook(MCU_MAX_LAYERS - 2);
  }
  cal = (mcu_count)(layer_ticks[MCU_MAX_LAYERS - 1] * MCU_INSTR_PER_TICK / 8u);
  layer_ticks[MCU_MAX_LAYERS - 1] = layer_ticks[MCU_MAX_LAYERS - 2] = 0;
  layer_calls[MCU_MAX_LAYERS - 1] = layer_calls[MCU_MAX_LAYERS - 2] = 0;
  layer_cur = layer_max = -1;
  t0 = counter_read();
  rc = __real_main();
  t1 = counter_read();
  if (paint_hi != 0) {
    for (p = paint_lo; p < paint_hi && *p == MCU_PAINT; ++p) {
    }
    stack_used = (unsigned)((paint_hi - p) * 4);
  }
  printf("MCU_TOTAL %lu %lu\n", (unsigned long)((mcu_count)(t1 - t0) / 1000000u),
         (unsigned long)((mcu_count)(t1 - t0) % 1000000u));
  printf("MCU_TICK %u\n", (unsigned)MCU_INSTR_PER_TICK);
  if (layer_max >= 0) {
    printf("MCU_HOOK_COST %lu\n", (unsigned long)cal);
    printf("MCU_STACK %u%s\n", stack_used, stack_used >= MCU_PAINT_BYTES - 4 ? " overflow" : "");
    for (i = 0; i <= layer_max && i < MCU_MAX_LAYERS; ++i)
      if (layer_calls[i] > 0)
        printf("MCU_LAYER %d %lu %lu %lu\n", i, (unsigned long)(layer_ticks[i] / 1000000u),
               (unsigned long)(layer_ticks[i] % 1000000u), (unsigned long)layer_calls[i]);
  }
  printf("MCU_RC %d\n", rc);
  return rc;
}
