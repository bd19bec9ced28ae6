/* mcu_hooks.h - Bench-only: makes the generated model.c call mcu_layer_hook (bench/mcu_harness.c)
 * at each NPUCC_LAYER_HOOK (compile model.c with -include mcu_hooks.h). */
#ifndef MCU_HOOKS_H
#define MCU_HOOKS_H
void mcu_layer_hook(int index);
#define NPUCC_LAYER_HOOK(index, kernel) mcu_layer_hook(index)
#endif
