#!/usr/bin/env bash
# mcu_bench.sh: microcontroller benchmark of npucc's CPU kernels (docs/benchmarks.md, section
# "Microcontroller CPU kernels (Cortex-M4F, RV32)"; issue 12).
#
# For each model: `npucc MODEL -o OUT --target cpu --emit-test --data DIR`, then the firmware for
# Cortex-M4F (mps2-an386) and RV32IMAC (virt) at -O2 and -Os with -ffunction-sections
# -fdata-sections -Wl,--gc-sections, run under QEMU with -icount shift=0. Reported per model:
# executed instructions of one inference (a 2-run build minus a 1-run build of the test
# program: -DNPUCC_TEST_REPEAT), per MAC (report.json), flash (code / weights / other constants,
# from the linker map), RAM (arena and its live-set bound; stack painted during the inference);
# per layer type from a build whose model.c reads the counter at each NPUCC_LAYER_HOOK.
# Kernel variants are measured in the same run and divided by the first (the baseline).
#
#   bench/mcu_bench.sh                         default models, both archs, -O2 and -Os
#   bench/mcu_bench.sh --models tinycnn_int8 --archs rv32 --opts O2
#   bench/mcu_bench.sh --variant 'reference|--cpu-kernels=reference||' \
#                      --variant 'portable||-DNPUCC_PORTABLE_ONLY|' --variant 'dsp|||cortex-m4'
#
# Variants: NAME|NPUCC FLAGS|C FLAGS|ARCHS (ARCHS empty = all). Default: reference, portable and
# dsp when `npucc --help` lists --cpu-kernels, else one variant `current` (today's kernels).
# Needs arm-none-eabi-gcc (newlib nano), riscv64-unknown-elf-gcc with picolibc, QEMU; uses
# /usr/bin/python3 (bench/mcu_bench.py, standard library only) and reuses test/firmware/.
# Results: the markdown tables on stdout; bench/results/mcu-<UTC time>/ (git-ignored) holds
# env.txt, rows.json, results.md and each build's logs.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
args="$*"

npucc=""
shared="$(cd "$root/.." && pwd)/shared/models"
out=""
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --npucc) npucc="$2"; shift 2 ;;
    --shared) shared="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --models|--archs|--opts|--variant|--timeout) pass+=("$1" "$2"); shift 2 ;;
    --keep) pass+=("$1"); shift ;;
    -h|--help)
      sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      echo "options: --npucc PATH --shared DIR --out DIR --models a,b --archs cortex-m4,rv32"
      echo "         --opts O2,Os --variant SPEC (repeatable) --timeout SEC --keep (keep builds)"
      echo "models: mlpt_kws_qdq mlpt_ic_qdq mlpt_vww_qdq mlpt_ad_qdq tinycnn_int8 mnist8"
      exit 0 ;;
    *) echo "mcu_bench.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
if [ -z "$npucc" ]; then
  npucc="$root/build/tools/npucc/npucc"
  if [ ! -x "$npucc" ]; then
    for c in "$root"/build-*/tools/npucc/npucc; do
      [ -x "$c" ] && { npucc="$c"; break; }
    done
  fi
fi
if [ ! -x "$npucc" ]; then
  echo "mcu_bench.sh: no compiler at $npucc (build it, or pass --npucc)" >&2
  exit 2
fi
for t in arm-none-eabi-gcc riscv64-unknown-elf-gcc qemu-system-arm qemu-system-riscv32; do
  command -v "$t" > /dev/null || { echo "mcu_bench.sh: $t is not installed (scripts/setup-deps.sh)" >&2; exit 2; }
done
[ -n "$out" ] || out="$here/results/mcu-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out" || exit 2
out="$(cd "$out" && pwd)"
cp "$npucc" "$out/npucc" || exit 2  # a rebuild during the run cannot mix two compilers

rev="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  rev="$rev (+ uncommitted changes)"
fi
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "npucc: $npucc (revision $rev)"
  echo "tools: $(arm-none-eabi-gcc -dumpfullversion 2>/dev/null) arm-none-eabi-gcc," \
       "$(riscv64-unknown-elf-gcc -dumpfullversion 2>/dev/null) riscv64-unknown-elf-gcc," \
       "$(qemu-system-arm --version | head -n1)"
  echo "command: bench/mcu_bench.sh $args"
} > "$out/env.txt"
cat "$out/env.txt" >&2

"$py" "$here/mcu_bench.py" --npucc "$out/npucc" --shared "$shared" --out "$out" "${pass[@]}"
rc=$?
{ echo; sed 's/^/    /' "$out/env.txt"; } | tee -a "$out/results.md"
rm -f "$out/npucc"
echo "(results in $out)" >&2
exit $rc
