#!/usr/bin/env bash
# Firmware-side checks with the bare-metal cross compilers (installed by scripts/setup-deps.sh):
#  - `npucc --target T --emit-runtime DIR` for every built-in target builds for Cortex-M4 and
#    RV32 at -Os with -std=c99 -Wall -Wextra -Werror -pedantic, and references nothing from
#    libc but memcpy/memset (no malloc, no printf) plus the compiler's own helper routines;
#  - its .text/.data/.bss on Cortex-M4 is printed (the figures quoted in README.md);
#  - the C generated for models/tinycnn compiles with both cross compilers under the same flags;
#  - `--emit-runtime --with-sim` output builds on the host with the simulator back end.
# Usage: firmware_test.sh NPUCC SOURCE_DIR
set -uo pipefail
npucc="$1"
src="$2"
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
  for t in $("$npucc" --target list | awk '$3 ~ /^MACs/ {print $1}'); do
    d="$tmp/rt-$t-$arch"
    if ! "$npucc" --target "$t" --emit-runtime "$d" > "$tmp/log" 2>&1 \
       || ! (cd "$d" && "${cc[@]}" "${strict[@]}" -c ./*.c) >> "$tmp/log" 2>&1; then
      bad "$t runtime does not build for $arch:"; sed 's/^/    /' "$tmp/log" | head -20
      continue
    fi
    # Undefined symbols must be the runtime's own, memcpy/memset, or libgcc helpers.
    undef="$(cd "$d" && "${cc[0]/gcc/nm}" -u ./*.o | awk 'NF == 2 {print $2}' | sort -u \
             | grep -Ev '^(npucc_.*|memcpy|memset|__aeabi_.*|__(u)?(div|mod|mul|ashl|ashr|lshr)[dst]i3)$')"
    if [ -n "$undef" ]; then
      bad "$t runtime for $arch references: $(echo $undef)"
      continue
    fi
    if [ "$arch" = cortex-m4 ]; then
      sizes="$(cd "$d" && arm-none-eabi-size -t ./*.o | awk '$NF == "(TOTALS)" {print $1, $2, $3}')"
      read -r text data bss <<< "$sizes"
      ok "$t runtime for $arch -Os: .text $text, .data $data, .bss $bss bytes; libc: memcpy/memset only"
    else
      ok "$t runtime builds for $arch; libc: memcpy/memset only"
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
done

# --with-sim adds the host simulator: the same folder builds on the host with NPUCC_HAL_SIM.
if "$npucc" --target npu-small --emit-runtime "$tmp/sim" --with-sim > "$tmp/log" 2>&1 \
   && [ -f "$tmp/sim/npucc_sim.c" ] \
   && (cd "$tmp/sim" && gcc -std=c99 -Wall -Wextra -Werror -pedantic -DNPUCC_HAL_SIM -c ./*.c) \
      >> "$tmp/log" 2>&1; then
  ok "--emit-runtime --with-sim builds on the host with NPUCC_HAL_SIM"
else
  bad "--emit-runtime --with-sim:"; sed 's/^/    /' "$tmp/log" | head -20
fi

echo "firmware: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
