#!/usr/bin/env bash
# Firmware-side checks with the bare-metal cross compilers (installed by scripts/setup-deps.sh):
#  - `npucc --target T --emit-runtime DIR` for every built-in target (and test/target/npu-wide,
#    npu-wide64: 64-bit registers as two 32-bit or one 64-bit access; npu-expr: fields computed
#    by expressions and a cases table; npu-fifo: commands pushed as frame words into a FIFO
#    register (npu-insn, whose words are RV64 custom instructions, runs the host test only:
#    its runtime needs NPUCC_HAL_INSN from the port on these CPUs); npu-tiny: 8-bit
#    read-modify-write control register, clear register, init write) builds for Cortex-M4 and
#    RV32 at -Os with -std=c99 -Wall -Wextra -Werror -pedantic, and references nothing from
#    libc but memcpy/memset (no malloc, no printf) plus the compiler's own helper routines;
#  - its .text/.data/.bss on Cortex-M4 is printed (the figures quoted in README.md);
#  - the C generated for models/tinycnn, float and int8 (--requant fp32), compiles with both
#    cross compilers under the same flags;
#  - the --emit-test program of tinycnn runs bare-metal under QEMU (Cortex-M4F, RV32) and passes;
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
           "$src/test/target/npu-fifo.json"; do
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
         "$src/test/target/npu-fifo.json" "$src/test/target/npu-insn.json"; do
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
