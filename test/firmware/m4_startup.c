/* m4_startup.c - Minimal Cortex-M4F start-up for running npucc test programs under QEMU
 * (board mps2-an386). Vector table, FPU enable, .bss zeroing, semihosting console (newlib's
 * librdimon), main(), then a semihosting exit carrying main's return code. Test-only. */
#include <stdint.h>

extern int main(void);
extern void initialise_monitor_handles(void);
extern uint32_t __bss_start__, __bss_end__, __stack_top;

void npucc_reset(void);
void npucc_fault(void);

/* Semihosting SYS_EXIT_EXTENDED (0x20): {reason, code}; reason 0x20026 = application exit. */
static void semihost_exit(int code) {
  volatile uint32_t block[2];
  block[0] = 0x20026u;
  block[1] = (uint32_t)code;
  __asm__ volatile("mov r0, %0\n mov r1, %1\n bkpt 0xab" : : "r"(0x20u), "r"(block) : "r0", "r1",
                   "memory");
  for (;;) {
  }
}

__attribute__((section(".vectors"), used)) static const uintptr_t vectors[16] = {
    (uintptr_t)&__stack_top, (uintptr_t)npucc_reset, (uintptr_t)npucc_fault,
    (uintptr_t)npucc_fault,  (uintptr_t)npucc_fault, (uintptr_t)npucc_fault,
    (uintptr_t)npucc_fault};

void npucc_fault(void) { semihost_exit(99); }

void npucc_reset(void) {
  uint32_t *p;
  /* CPACR: full access to CP10/CP11 (the FPU). */
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n isb" ::: "memory");
  for (p = &__bss_start__; p < &__bss_end__; ++p)
    *p = 0;
  initialise_monitor_handles();
  semihost_exit(main());
}
