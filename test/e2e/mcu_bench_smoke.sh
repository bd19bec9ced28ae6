#!/usr/bin/env bash
# Smoke test of bench/mcu_bench.sh (issue 12) on tinycnn_int8 only: the bench runs (npucc
# --emit-test firmware for Cortex-M4F and RV32IMAC at -O2 and -Os under QEMU, every build
# printing PASS) and writes a well-formed table: one row per kernel variant (reference,
# portable and dsp, the last on Cortex-M4 only; `current` alone for an npucc without
# --cpu-kernels), arch and -O with a positive instruction count, instructions per MAC, flash and RAM columns, and per-layer-type rows whose
# sum is the hooked total. No timing is asserted. Exit 77 (skipped) without the cross tools,
# 1 when CI is set (test/e2e/ci_skip.sh). Then the memory fit's code and stack estimates
# against the same linked images (bench/memory_fit_compare.py --max-error 15).
# Usage: mcu_bench_smoke.sh NPUCC SOURCE_DIR
set -uo pipefail
npucc="$1"
src="$(cd "$2" && pwd)"
. "$src/test/e2e/ci_skip.sh"
for t in arm-none-eabi-gcc riscv64-unknown-elf-gcc qemu-system-arm qemu-system-riscv32; do
  command -v "$t" > /dev/null || ci_skip_exit "$t not installed"
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if ! bash "$src/bench/mcu_bench.sh" --npucc "$npucc" --models tinycnn_int8 --out "$tmp/r" \
     > "$tmp/out.md" 2> "$tmp/err.log"; then
  echo "FAIL: mcu_bench.sh exited non-zero:"; tail -20 "$tmp/err.log" "$tmp/r"/rows.json 2>/dev/null
  exit 1
fi
kinds=current
"$npucc" --help > "$tmp/help.txt" 2>&1  # not piped into grep -q: SIGPIPE with pipefail
grep -q -- --cpu-kernels "$tmp/help.txt" && kinds=variants
/usr/bin/python3 - "$tmp/r/rows.json" "$tmp/r/results.md" "$kinds" <<'PY'
import json, re, sys
rows = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
bad = []
seen = set()
for r in rows:
    if "error" in r or "instructions" not in r:
        bad.append("row without figures: %r" % r)
        continue
    seen.add((r["variant"], r["arch"], r["opt"]))
    if not (r["instructions"] > 0 and r["macs"] > 0 and r["flash"]["code"] > 0
            and r["flash"]["weights"] > 0 and r["arena"] > 0 and (r["stack"] or 0) > 0):
        bad.append("non-positive figure in %s %s: %r" % (r["arch"], r["opt"], r))
    if "conv kxk" not in r["types"]:
        bad.append("no conv kxk layer type in %s %s" % (r["arch"], r["opt"]))
    s = sum(t["instructions"] for t in r["types"].values())
    if s != r["layer_sum"]:
        bad.append("layer types sum %d != hooked total %d" % (s, r["layer_sum"]))
both = ("cortex-m4", "rv32")
opts = ("-O2", "-Os")
if sys.argv[3] == "variants":
    want = {(v, a, o) for v in ("reference", "portable") for a in both for o in opts}
    want |= {("dsp", "cortex-m4", o) for o in opts}
else:
    want = {("current", a, o) for a in both for o in opts}
if seen != want:
    bad.append("rows for %s, expected %s" % (sorted(seen), sorted(want)))
line = re.compile(r"^\| tinycnn_int8 \| \d+ \| (cortex-m4|rv32) \| -O[2s] \| (\w+) \| \d+( \(±80\))? "
                  r"\| \d+\.\d\d \| (\d+\.\d\d) \| \d+\.\d\d \| \d+ \| \d+ \| \d+ \| \d+ \(\d+\) \| \d+ \|$",
                  re.M)
found = line.findall(md)
if len(found) != len(want):
    bad.append("results.md does not have %d well-formed model rows:\n%s" % (len(want), md[:3000]))
for arch, variant, _, ratio in found:
    # The first variant is the baseline: its ratio to itself is 1.
    if variant in ("reference", "current") and ratio != "1.00":
        bad.append("baseline row %s %s has ratio %s" % (variant, arch, ratio))
for b in bad:
    print("FAIL: " + b)
if not bad:
    print("PASS: mcu_bench.sh on tinycnn_int8: %d rows (variant x arch x -O), per layer type"
          % len(want))
sys.exit(1 if bad else 0)
PY
rc=$?
# The compile-time memory fit (docs/benchmarks.md, "Memory fit") against these linked images:
# the rows built with the default kernels and flags (dsp on Cortex-M4, portable = default on
# RV32), code within 15 %, stack never under the measured peak.
if [ "$kinds" = variants ]; then
  if /usr/bin/python3 "$src/bench/memory_fit_compare.py" --npucc "$npucc" --rows "$tmp/r/rows.json" \
       --variant dsp:cortex-m4 --variant portable:rv32 --max-error 15 > "$tmp/fit.md" 2>&1; then
    echo "PASS: memory fit estimates vs the linked images ($(tail -n1 "$tmp/fit.md"))"
  else
    echo "FAIL: memory fit estimates vs the linked images:"; sed 's/^/    /' "$tmp/fit.md"; rc=1
  fi
fi
exit $rc
