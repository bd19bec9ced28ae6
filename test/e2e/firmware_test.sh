#!/usr/bin/env bash
# Firmware-side checks with the bare-metal cross compilers (installed by scripts/setup-deps.sh):
#  - `npucc --target T --emit-runtime DIR` for every built-in target (and test/target/npu-wide,
#    npu-wide64: 64-bit registers as two 32-bit or one 64-bit access; npu-expr: fields computed
#    by expressions and a cases table; npu-fifo: commands pushed as frame words into a FIFO
#    register; npu-cmdbuf: frames appended to a command buffer and kicked (npu-insn, whose words are RV64 custom instructions, runs the host test only:
#    its runtime needs NPUCC_HAL_INSN from the port on these CPUs); npu-tiny: 8-bit
#    read-modify-write control register, clear register, init write; npu-sysmem: conv, depthwise
#    and matmul read weights and tables from system memory themselves; npu-fp32lut: binary32
#    requantization scales, the fp32_scale stage, and the lut256 activation tables; npu-pwl: the
#    pwl segment tables; npu-fpool: the max pool stage's pool_k; npu-select: the select pool
#    stage's pool_k and pool_off_x) builds for Cortex-M4 and
#    RV32 at -Os with -std=c99 -Wall -Wextra -Werror -pedantic, and references nothing from
#    libc but memcpy/memset (no malloc, no printf) plus the compiler's own helper routines;
#  - its .text/.data/.bss on Cortex-M4 is printed (the figures quoted in README.md);
#  - the C generated for models/tinycnn, float and int8 (--requant fp32), compiles with both
#    cross compilers under the same flags;
#  - the --emit-test program of tinycnn runs bare-metal under QEMU (Cortex-M4F, RV32) and passes;
#  - one image with two models (cpu float; cpu int8 with --io int8; both --arena external and
#    --memory-map: sections placed by the emitted linker fragments)
#    built only through their Make fragments runs under QEMU (Cortex-M4F, RV32), and through
#    their CMake fragments (Cortex-M4F): 2 x PASS, the section macros checked in the map file;
#  - runtime/examples/npu_host_test.c builds against `--emit-runtime --with-sim` output (gcc,
#    clang, strict C99) and passes on every NPU (built-in and test/target/npu-*.json, npu-align
#    with its 64-byte DMA and 256-byte table alignment among them), and its
#    racy, bad-parameter, timeout and device-fault variants each fail for their reason.
# Usage: firmware_test.sh NPUCC SOURCE_DIR
set -uo pipefail
npucc="$1"
src="$(cd "$2" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }

strict=(-std=c99 -Wall -Wextra -Werror -pedantic -Os -ffunction-sections -fdata-sections)
declare -A cross=(
  [cortex-m4]="arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
  [rv32]="riscv64-unknown-elf-gcc -march=rv32imafc -mabi=ilp32f --specs=picolibc.specs"
)
for arch in cortex-m4 rv32; do
  read -r -a cc <<< "${cross[$arch]}"
  if ! command -v "${cc[0]}" > /dev/null; then
    bad "${cc[0]} not installed (run scripts/setup-deps.sh)"
    continue
  fi
  # The built-ins, and the 64-bit registers of npu-wide (two 32-bit accesses each) and
  # npu-wide64 (one volatile 64-bit access each, also on these 32-bit CPUs).
  for t in $("$npucc" --target list | awk '$3 ~ /^MACs/ {print $1}') \
           "$src/test/target/npu-wide.json" "$src/test/target/npu-wide64.json" \
           "$src/test/target/npu-tiny.json" "$src/test/target/npu-expr.json" \
           "$src/test/target/npu-fifo.json" "$src/test/target/npu-cmdbuf.json" \
           "$src/test/target/npu-sysmem.json" "$src/test/target/npu-weights.json" \
           "$src/test/target/npu-fp32lut.json" "$src/test/target/npu-blocked.json" \
           "$src/test/target/npu-pwl.json" "$src/test/target/npu-fpool.json" \
           "$src/test/target/npu-select.json" "$src/test/target/npu-u8.json"; do
    n="$(basename "$t" .json)"
    d="$tmp/rt-$n-$arch"
    if ! "$npucc" --target "$t" --emit-runtime "$d" > "$tmp/log" 2>&1 \
       || ! (cd "$d" && "${cc[@]}" "${strict[@]}" -c ./*.c) >> "$tmp/log" 2>&1; then
      bad "$n runtime does not build for $arch:"; sed 's/^/    /' "$tmp/log" | head -20
      continue
    fi
    # Undefined symbols must be the runtime's own, memcpy/memset, or libgcc helpers.
    undef="$(cd "$d" && "${cc[0]/gcc/nm}" -u ./*.o | awk 'NF == 2 {print $2}' | sort -u \
             | grep -Ev '^(npucc_.*|memcpy|memset|__aeabi_.*|__(u)?(div|mod|mul|ashl|ashr|lshr)[dst]i3)$')"
    if [ -n "$undef" ]; then
      bad "$n runtime for $arch references: $(echo $undef)"
      continue
    fi
    if [ "$arch" = cortex-m4 ]; then
      sizes="$(cd "$d" && arm-none-eabi-size -t ./*.o | awk '$NF == "(TOTALS)" {print $1, $2, $3}')"
      read -r text data bss <<< "$sizes"
      ok "$n runtime for $arch -Os: .text $text, .data $data, .bss $bss bytes; libc: memcpy/memset only"
    else
      ok "$n runtime builds for $arch; libc: memcpy/memset only"
    fi
  done
  # The generated model C under the same strict flags.
  rm -rf "$tmp/m"
  if "$npucc" "$src/models/tinycnn/model.onnx" -o "$tmp/m" > "$tmp/log" 2>&1 \
     && (cd "$tmp/m" && "${cc[@]}" "${strict[@]}" -c ./*.c) >> "$tmp/log" 2>&1; then
    ok "generated C for tinycnn compiles for $arch with ${strict[*]}"
  else
    bad "generated C for tinycnn on $arch:"; sed 's/^/    /' "$tmp/log" | head -20
  fi
  # The int8 program (integer kernels, fp32-emulating requantization) under the same flags.
  rm -rf "$tmp/q"
  if "$npucc" "$src/models/tinycnn/model.onnx" -o "$tmp/q" --quantize int8 --requant fp32 \
       --calib "$src/models/tinycnn/test_data_set_0" > "$tmp/log" 2>&1 \
     && grep -q "requant=fp32" "$tmp/log" \
     && (cd "$tmp/q" && "${cc[@]}" "${strict[@]}" -c ./*.c) >> "$tmp/log" 2>&1; then
    ok "generated int8 C for tinycnn (--requant fp32) compiles for $arch"
  else
    bad "generated int8 C for tinycnn on $arch:"; sed 's/^/    /' "$tmp/log" | head -20
  fi
done

# The --emit-test program of tinycnn (inputs and golden outputs embedded) runs bare-metal under
# QEMU: Cortex-M4F on mps2-an386 (test/firmware/m4_*: vector table, linker script, newlib
# semihosting console) and RV32IMAFC on virt (picolibc's semihosting crt0). It must print PASS
# and exit 0.
fw="$src/test/firmware"
if "$npucc" "$src/models/tinycnn/model.onnx" -o "$tmp/et" --emit-test \
     --data "$src/models/tinycnn/test_data_set_0" > "$tmp/log" 2>&1; then
  qemu_run() { # ARCH ELF QEMU-ARGS...
    local arch="$1" elf="$2"; shift 2
    if ! command -v "$1" > /dev/null; then bad "$1 not installed (scripts/test.sh installs it)"; return; fi
    if timeout 300 "$@" -nographic -monitor none -semihosting-config enable=on,target=native \
         -icount shift=0 -kernel "$elf" > "$tmp/run.log" 2>&1 && grep -q "^PASS" "$tmp/run.log"; then
      ok "tinycnn --emit-test runs bare-metal on $arch under QEMU: $(grep 'max abs err' "$tmp/run.log")"
    else
      bad "tinycnn on $arch under QEMU:"; sed 's/^/    /' "$tmp/run.log" | tail -5
    fi
  }
  m4=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
  # The flags model.h asks firmware builds for: -ffunction-sections -fdata-sections and
  # -Wl,--gc-sections.
  gc=(-ffunction-sections -fdata-sections)
  if (cd "$tmp/et" && arm-none-eabi-gcc "${m4[@]}" -O2 "${gc[@]}" -std=c99 ./*.c "$fw/m4_startup.c" \
        -T "$fw/m4_mps2_an386.ld" -nostartfiles --specs=nano.specs --specs=rdimon.specs \
        -u _printf_float -Wl,--gc-sections -lm -o m4.elf) > "$tmp/log" 2>&1; then
    qemu_run cortex-m4 "$tmp/et/m4.elf" qemu-system-arm -M mps2-an386
  else
    bad "tinycnn test program does not link for cortex-m4:"; sed 's/^/    /' "$tmp/log" | head
  fi
  if (cd "$tmp/et" && riscv64-unknown-elf-gcc -march=rv32imafc -mabi=ilp32f -O2 "${gc[@]}" \
        -std=c99 --specs=picolibc.specs --crt0=semihost --oslib=semihost -Wl,--gc-sections \
        -Wl,--defsym=__flash=0x80000000,--defsym=__flash_size=0x400000 \
        -Wl,--defsym=__ram=0x80400000,--defsym=__ram_size=0x800000 ./*.c -lm -o rv32.elf) \
      > "$tmp/log" 2>&1; then
    qemu_run rv32 "$tmp/et/rv32.elf" qemu-system-riscv32 -M virt -bios none
  else
    bad "tinycnn test program does not link for rv32:"; sed 's/^/    /' "$tmp/log" | head
  fi
else
  bad "--emit-test for tinycnn:"; sed 's/^/    /' "$tmp/log" | head
fi

# Two models in one bare-metal image, built only through their Make fragments (issue 20):
# tinycnn (float, --target cpu) as f32 and tinycnn_int8 (--target cpu, --io int8: int8 input
# and output) as kws, both with --arena external (the caller's arena) and --memory-map (their
# section macros default to the sections of OUT/<prefix>_sections.ld); NPUCC_RUNTIME_SRCS
# builds each shared runtime file once. Cortex-M4F: the firmware's linker script INCLUDEs
# both fragments and the map file shows each model's weights (and kws's tables) in its
# fragment's output sections, which the ELF has inside the CODE region. RV32: the same two
# models compiled with the board's memory map (picolibc's region names flash and ram), the
# fragments INCLUDEd into a copy of the installed picolibc.ld made at test time (its PHDRS
# dropped so that ld lays out the segments, the INCLUDEs before .bss), checked the same way.
# Both under QEMU; both test programs print PASS. The Cortex-M4F image again through the
# CMake fragments.
mi="$tmp/two"
mkdir -p "$mi"
cat > "$mi/mm.json" << 'EOF'
{"regions": [{"name": "CODE", "origin": "0x00000000", "length": "4M"},
             {"name": "RAM", "origin": "0x20000000", "length": "4M"}],
 "place": {"code": "CODE", "const": "CODE", "arena": "RAM", "data": "RAM", "stack": "RAM"}}
EOF
# test/firmware/m4_mps2_an386.ld with the fragments INCLUDEd after .bss (before the heap's `end`).
sed 's|^  end = \.;|  INCLUDE f32_sections.ld\n  INCLUDE kws_sections.ld\n  end = .;|' \
  "$fw/m4_mps2_an386.ld" > "$mi/m4_with_kws.ld"
if "$npucc" "$src/models/tinycnn/model.onnx" -o "$mi/f32" --prefix f32 --target cpu --emit-test \
     --arena external --memory-map "$mi/mm.json" \
     --data "$src/models/tinycnn/test_data_set_0" > "$tmp/log" 2>&1 \
   && "$npucc" "$src/models/tinycnn_int8/model.onnx" -o "$mi/kws" --prefix kws --target cpu \
     --arena external --io int8 --memory-map "$mi/mm.json" --emit-test \
     --data "$src/models/tinycnn_int8/test_data_set_0" >> "$tmp/log" 2>&1 \
   && grep -q "define KWS_INPUT0_SCALE" "$mi/kws/kws.h" && [ -f "$mi/kws/kws_sections.ld" ]; then
  cat > "$mi/main.c" << 'EOF'
#include <stdio.h>
int f32_main(void);
int kws_main(void);
int main(void) {
  int a = f32_main(), b = kws_main();
  printf("models: %d %d\n", a, b);
  return a || b;
}
EOF
  # make -f fw.mk CC=... ARCH="..." LINK="..." two.elf
  cat > "$mi/fw.mk" << EOF
D ?= $mi
include \$(D)/f32/f32.mk
include \$(D)/kws/kws.mk
CFLAGS := \$(ARCH) -std=c99 -Wall -Wextra -Werror -pedantic -O2 -ffunction-sections \\
          -fdata-sections \$(F32_CFLAGS) \$(KWS_CFLAGS)
OBJS := \$(patsubst %.c,%.o,\$(F32_SRCS) \$(KWS_SRCS) \$(NPUCC_RUNTIME_SRCS))
f32_test.o: \$(F32_TEST_SRC)
	\$(CC) \$(CFLAGS) -Dmain=f32_main -c -o \$@ \$<
kws_test.o: \$(KWS_TEST_SRC)
	\$(CC) \$(CFLAGS) -Dmain=kws_main -c -o \$@ \$<
two.elf: $mi/main.c f32_test.o kws_test.o \$(OBJS)
	\$(CC) \$(CFLAGS) \$^ \$(LINK) -Wl,--gc-sections -Wl,-Map=two.map -o \$@ \$(F32_LDLIBS) \$(KWS_LDLIBS)
EOF
  # placed_by_fragment MAP ELF ORIGIN: the map file shows each model's weights (and kws's
  # tables) as input sections of its fragment's output section, which the ELF has at a
  # non-empty range in the code region (ORIGIN .. ORIGIN + 4 MiB).
  in_code() { # ELF OUTPUT-SECTION ORIGIN
    local an
    an="$(readelf -SW "$1" \
      | awk -v s="$2" '{ for (i = 1; i < NF; i++) if ($i == s) print $(i + 2), $(i + 4) }')"
    [ -n "$an" ] && (( 16#${an% *} >= $3 && 16#${an% *} + 16#${an#* } <= $3 + 4194304 && 16#${an#* } > 0 ))
  }
  placed_by_fragment() {
    grep -A2 '^ \.npucc\.kws\.const' "$1" | grep -q 'kws_weights\.' \
      && grep -A2 '^ \.npucc\.kws\.table' "$1" | grep -q 'kws\.' \
      && grep -A2 '^ \.npucc\.f32\.const' "$1" | grep -q 'f32_weights\.' \
      && in_code "$2" .npucc_kws_const "$3" && in_code "$2" .npucc_f32_const "$3"
  }
  two_image() { # ARCH-NAME CC ARCH-FLAGS LINK-FLAGS MODEL-DIR CODE-ORIGIN QEMU-ARGS...
    local name="$1" cc="$2" arch="$3" link="$4" d="$5" origin="$6"; shift 6
    find "$mi" -name '*.o' -delete
    rm -f "$mi/two.elf" "$mi/two.map"
    if ! (cd "$mi" && make -f fw.mk CC="$cc" ARCH="$arch" LINK="$link" D="$d" two.elf) > "$tmp/log" 2>&1; then
      bad "two-model image for $name does not build through the fragments:"
      tail -8 "$tmp/log" | sed 's/^/    /'
      return
    fi
    if placed_by_fragment "$mi/two.map" "$mi/two.elf" "$origin"; then
      ok "two models' $name image through f32.mk and kws.mk: their weights and tables placed by f32_sections.ld and kws_sections.ld in the code region (map file, ELF)"
    else
      bad "two-model $name image: the map file does not show kws_sections.ld placing kws's constants"
      grep -n -A2 'npucc.kws' "$mi/two.map" | head -12 | sed 's/^/    /'
    fi
    if timeout 300 "$@" -nographic -monitor none -semihosting-config enable=on,target=native \
         -icount shift=0 -kernel "$mi/two.elf" > "$mi/run.log" 2>&1 \
       && [ "$(grep -cx PASS "$mi/run.log")" = 2 ] && grep -qx "models: 0 0" "$mi/run.log"; then
      ok "two models (cpu float, cpu int8 --io int8; caller's arenas) in one $name image under QEMU: 2 x PASS"
    else
      bad "two-model $name image under QEMU:"; tail -5 "$mi/run.log" | sed 's/^/    /'
    fi
  }
  two_image cortex-m4 arm-none-eabi-gcc "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" \
    "$fw/m4_startup.c -T $mi/m4_with_kws.ld -L $mi/f32 -L $mi/kws -nostartfiles --specs=nano.specs --specs=rdimon.specs -u _printf_float" \
    "$mi" 0 qemu-system-arm -M mps2-an386
  # RV32 (QEMU virt): the board's memory map in picolibc.ld's region names.
  rv="$mi/rv"
  mkdir -p "$rv"
  printf '%s\n' '{"regions": [{"name": "flash", "origin": "0x80000000", "length": "4M"},' \
    '             {"name": "ram", "origin": "0x80400000", "length": "8M"}],' \
    ' "place": {"code": "flash", "const": "flash", "arena": "ram", "data": "ram", "stack": "ram"}}' \
    > "$rv/mm.json"
  pl=/usr/lib/picolibc/riscv64-unknown-elf/lib/picolibc.ld
  if [ ! -f "$pl" ]; then
    bad "picolibc's linker script $pl is missing (picolibc-riscv64-unknown-elf)"
  elif ! "$npucc" "$src/models/tinycnn/model.onnx" -o "$rv/f32" --prefix f32 --target cpu --emit-test \
         --arena external --memory-map "$rv/mm.json" --data "$src/models/tinycnn/test_data_set_0" \
         > "$tmp/log" 2>&1 \
       || ! "$npucc" "$src/models/tinycnn_int8/model.onnx" -o "$rv/kws" --prefix kws --target cpu \
         --arena external --io int8 --memory-map "$rv/mm.json" --emit-test \
         --data "$src/models/tinycnn_int8/test_data_set_0" >> "$tmp/log" 2>&1; then
    bad "two-model compiles for the RV32 memory map:"; tail -5 "$tmp/log" | sed 's/^/    /'
  else
    # picolibc.ld without its PHDRS (the fragments' sections name none), the fragments
    # INCLUDEd before .bss: inside [__bss_start, __bss_end), below the heap.
    awk '/^PHDRS/ { skip = 1 } skip && /^}/ { skip = 0; next } !skip' "$pl" \
      | sed -E '/^[[:space:]]*}/s/[[:space:]]+:(text|ram_init|ram|tls)\b//g' \
      | sed 's|^\t\.bss (NOLOAD) : {|\tINCLUDE f32_sections.ld\n\tINCLUDE kws_sections.ld\n&|' > "$rv/rv.ld"
    if [ "$(grep -c 'INCLUDE [a-z0-9]*_sections.ld' "$rv/rv.ld")" != 2 ] || grep -q '^PHDRS' "$rv/rv.ld"; then
      bad "the RV32 script: picolibc.ld's layout changed (no '.bss (NOLOAD) : {' line, or PHDRS left)"
    else
      two_image rv32 riscv64-unknown-elf-gcc "-march=rv32imafc -mabi=ilp32f --specs=picolibc.specs" \
        "--crt0=semihost --oslib=semihost -T $rv/rv.ld -L $rv/f32 -L $rv/kws -Wl,--defsym=__flash=0x80000000,--defsym=__flash_size=0x400000 -Wl,--defsym=__ram=0x80400000,--defsym=__ram_size=0x800000" \
        "$rv" $((0x80000000)) qemu-system-riscv32 -M virt -bios none
    fi
  fi
  # The same image for Cortex-M4F through the CMake fragments (a Generic cross build).
  if command -v cmake > /dev/null; then
    mkdir -p "$mi/cm"
    cat > "$mi/cm/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.13)
project(two C)
include("$mi/f32/f32.cmake")
include("$mi/kws/kws.cmake")
add_executable(two.elf "$mi/main.c" \${F32_TEST_SRC} \${KWS_TEST_SRC} "$fw/m4_startup.c")
set_target_properties(two.elf PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
set_source_files_properties(\${F32_TEST_SRC} PROPERTIES COMPILE_DEFINITIONS main=f32_main)
set_source_files_properties(\${KWS_TEST_SRC} PROPERTIES COMPILE_DEFINITIONS main=kws_main)
target_link_libraries(two.elf PRIVATE f32 kws)
target_link_options(two.elf PRIVATE -T "$mi/m4_with_kws.ld" "-L$mi/f32" "-L$mi/kws" -nostartfiles --specs=nano.specs
                    --specs=rdimon.specs -u _printf_float -Wl,--gc-sections -Wl,-Map=two.map)
EOF
    if cmake -S "$mi/cm" -B "$mi/cm/build" -DCMAKE_SYSTEM_NAME=Generic \
         -DCMAKE_C_COMPILER=arm-none-eabi-gcc -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY \
         "-DCMAKE_C_FLAGS=-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -O2 -ffunction-sections -fdata-sections -Wall -Wextra -Werror -pedantic" \
         > "$tmp/log" 2>&1 && cmake --build "$mi/cm/build" >> "$tmp/log" 2>&1 \
       && placed_by_fragment "$mi/cm/build/two.map" "$mi/cm/build/two.elf" 0 \
       && timeout 300 qemu-system-arm -M mps2-an386 -nographic -monitor none \
         -semihosting-config enable=on,target=native -icount shift=0 -kernel "$mi/cm/build/two.elf" \
         > "$mi/run.log" 2>&1 \
       && [ "$(grep -cx PASS "$mi/run.log")" = 2 ] && grep -qx "models: 0 0" "$mi/run.log"; then
      ok "the two-model cortex-m4 image through f32.cmake and kws.cmake (f32_sections.ld and kws_sections.ld placing their sections, map file): 2 x PASS under QEMU"
    else
      bad "two-model cortex-m4 image through the CMake fragments:"
      cat "$tmp/log" "$mi/run.log" 2>/dev/null | tail -8 | sed 's/^/    /'
    fi
  else
    bad "cmake not installed (the two-model image through the CMake fragments)"
  fi
else
  bad "two-model compiles:"; tail -5 "$tmp/log" | sed 's/^/    /'
fi

# The fast int8 kernels against the reference ones on the targets themselves
# (test/firmware/fast_kernels_check.c: random conv/depthwise/gemm shapes, both roundings;
# Add, Mul and float QuantizeLinear next to rounding ties):
# Cortex-M4F with the DSP (SXTB16/SMLAD) path and with -DNPUCC_PORTABLE_ONLY, and RV32,
# strict C99 at -O2. Each must print PASS.
k="$src/runtime/kernels"
fk=("$k/npucc_conv_s8.c" "$k/npucc_conv_s8_fast.c" "$k/npucc_dwconv_s8_fast.c" "$k/npucc_gemm_s8.c" "$k/npucc_gemm_s8_fast.c" "$k/npucc_fc_s8_fast.c" "$k/npucc_rq32.c"
    "$k/npucc_eltwise_s8.c" "$k/npucc_eltwise_s8_fast.c" "$k/npucc_quantize.c"
    "$fw/fast_kernels_check.c")
fkflags=(-std=c99 -Wall -Wextra -Werror -pedantic -O2 -I"$k" -I"$src/runtime/include")
fk_run() { # NAME ELF QEMU-ARGS...
  local name="$1" elf="$2"; shift 2
  if timeout 300 "$@" -nographic -monitor none -semihosting-config enable=on,target=native \
       -icount shift=0 -kernel "$elf" > "$tmp/fk.log" 2>&1 && grep -q "^PASS" "$tmp/fk.log"; then
    ok "fast int8 kernels match the reference ones on $name: $(grep 'mismatching' "$tmp/fk.log")"
  else
    bad "fast int8 kernels on $name:"; sed 's/^/    /' "$tmp/fk.log" | tail -6
  fi
}
for variant in dsp portable; do
  def=(); [ "$variant" = portable ] && def=(-DNPUCC_PORTABLE_ONLY)
  if arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 "${def[@]}" \
       "${fkflags[@]}" "${fk[@]}" "$fw/m4_startup.c" -T "$fw/m4_mps2_an386.ld" -nostartfiles \
       --specs=nano.specs --specs=rdimon.specs -Wl,--gc-sections -lm -o "$tmp/fk_$variant.elf" \
       > "$tmp/log" 2>&1; then
    fk_run "cortex-m4 ($variant)" "$tmp/fk_$variant.elf" qemu-system-arm -M mps2-an386
  else
    bad "fast_kernels_check.c does not build for cortex-m4 ($variant):"; sed 's/^/    /' "$tmp/log" | head
  fi
done
if riscv64-unknown-elf-gcc -march=rv32imafc -mabi=ilp32f "${fkflags[@]}" --specs=picolibc.specs \
     --crt0=semihost --oslib=semihost -Wl,--defsym=__flash=0x80000000,--defsym=__flash_size=0x400000 \
     -Wl,--defsym=__ram=0x80400000,--defsym=__ram_size=0x800000 "${fk[@]}" -lm -o "$tmp/fk_rv32.elf" \
     > "$tmp/log" 2>&1; then
  fk_run rv32 "$tmp/fk_rv32.elf" qemu-system-riscv32 -M virt -bios none
else
  bad "fast_kernels_check.c does not build for rv32:"; sed 's/^/    /' "$tmp/log" | head
fi

# --with-sim adds the host simulator. runtime/examples/npu_host_test.c, a host test as a
# firmware engineer writes it (DMA in, 3x3 conv, DMA out, vs a C reference), builds against
# the emitted folder alone with gcc and clang in strict C99 and passes on every NPU, the
# test-only JSON ones too. Its variants must fail, each for its own reason: without the wait
# after the input DMA the simulator reports the race (read after write), and so it does for a DMA
# into the output of a convolution not waited for (write after write); a parameter no field can hold is refused
# by the command layer; a wait with one poll times out; a DMA into read-only memory makes the
# wait report the device error and its code. A host test that printed PASS after any of these
# would be a defect.
# npu-align.json states alignments the others do not (DMA 64 bytes, the bias at 64, the
# per-channel table at 256): the example honours every alignment a description states.
for t in npu-default npu-small "$src/test/target/npu-third.json" "$src/test/target/npu-fourth.json" \
         "$src/test/target/npu-queue.json" "$src/test/target/npu-align.json" \
         "$src/test/target/npu-wide.json" "$src/test/target/npu-wide64.json" \
         "$src/test/target/npu-tiny.json" "$src/test/target/npu-expr.json" \
         "$src/test/target/npu-fifo.json" "$src/test/target/npu-insn.json" \
         "$src/test/target/npu-cmdbuf.json" "$src/test/target/npu-sysmem.json" \
         "$src/test/target/npu-weights.json" "$src/test/target/npu-fp32lut.json" \
         "$src/test/target/npu-shift.json" "$src/test/target/npu-msa.json" "$src/test/target/npu-blocked.json" \
         "$src/test/target/npu-pwl.json" "$src/test/target/npu-fpool.json" \
         "$src/test/target/npu-select.json" "$src/test/target/npu-u8.json"; do
  name="$(basename "$t" .json)"
  rm -rf "$tmp/sim"
  if ! "$npucc" --target "$t" --emit-runtime "$tmp/sim" --with-sim > "$tmp/log" 2>&1; then
    bad "--emit-runtime --with-sim for $name:"; sed 's/^/    /' "$tmp/log" | head; continue
  fi
  for cc in gcc clang; do
    if ! (cd "$tmp/sim" && "$cc" -std=c99 -Wall -Wextra -Werror -pedantic -O2 -DNPUCC_HAL_SIM \
            -I. ./*.c "$src/runtime/examples/npu_host_test.c" -o host_test) > "$tmp/log" 2>&1; then
      bad "npu_host_test.c does not build with $cc for $name:"; sed 's/^/    /' "$tmp/log" | head
      continue
    fi
    if "$tmp/sim/host_test" > "$tmp/run.log" 2>&1 && grep -q "^$name: PASS" "$tmp/run.log"; then
      ok "npu_host_test ($cc) on $name: $(grep "^$name: PASS" "$tmp/run.log" | cut -d' ' -f2-)"
    else
      bad "npu_host_test ($cc) on $name:"; sed 's/^/    /' "$tmp/run.log" | tail -5
    fi
    # variant | the line that must explain the failure
    while IFS='|' read -r variant why; do
      "$tmp/sim/host_test" "$variant" > "$tmp/run.log" 2>&1
      rc=$?
      if [ $rc -eq 1 ] && grep -Eq "$why" "$tmp/run.log" && ! grep -q "PASS" "$tmp/run.log"; then
        ok "npu_host_test $variant ($cc) on $name fails: $(grep -Em1 "$why" "$tmp/run.log" | cut -c1-110)"
      else
        bad "npu_host_test $variant ($cc) on $name (exit $rc):"; sed 's/^/    /' "$tmp/run.log" | tail -5
      fi
    done <<'EOF_VARIANTS'
race|simulator error at command [0-9]+: .*(race|busy)
waw|simulator error at command [0-9]+: .*(overwrites scratchpad byte 0x[0-9a-f]+ still in use by command #[0-9]+ \(conv\)|busy)
badparam|^issue conv: error -2 on parameter in_h$
timeout|^wait conv: error -5$
fault|^wait dma \(into read-only or unmapped memory\): error -6 \(device error code [1-9][0-9]* on engine -?[0-9]\)$
EOF_VARIANTS
  done
done

echo "firmware: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
