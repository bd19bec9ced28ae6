#!/usr/bin/env bash
# sweep_test.sh - `npucc sweep` on the MLPerf Tiny int8 models (docs/sweep.md).
#
# usage: test/e2e/sweep_test.sh NPUCC [OUT_DIR]
#
# A sweep of 3 axes x 3 values (mac, spm, dma_bw: 27 points; a 16 KiB scratchpad sends some
# layers of mlpt_ic_qdq to the CPU) over ../shared/models mlpt_ic_qdq and mlpt_kws_qdq with
# -j2, every 4th point (0, 4, ..., 24) also run on the
# simulator (--check): every point compiles, every checked point passes its check and its
# simulated cycles equal the estimate, the Pareto flags equal a front recomputed here from
# the rows; the same sweep with -j1 gives byte-identical CSV and JSON. A second sweep has a
# point the loader refuses (a scratchpad overlapping the flash window): it is a row with the
# loader's reason, the others compile. The HTML chart opens in headless Chromium without a
# console error and shows one red point per Pareto row (test/e2e/sweep_html_test.js; skipped
# without Chromium or playwright-core). Missing models or tools skip (exit 77) and fail under
# CI (test/e2e/ci_skip.sh). About 2-4 minutes on two cores.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/ci_skip.sh"
npucc="${1:?usage: sweep_test.sh NPUCC [OUT_DIR]}"
out="${2:-$(mktemp -d "${TMPDIR:-/tmp}/npucc-sweep.XXXXXX")}"
shared="$root/../shared/models"
[ -d "$shared" ] || shared=/work/shared/models
for m in mlpt_ic_qdq mlpt_kws_qdq; do
  [ -f "$shared/$m/model.onnx" ] || ci_skip_exit "shared model $shared/$m not present"
done
command -v cc > /dev/null || ci_skip_exit "no C compiler (cc) for --check"
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.csv "$out"/*.html
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

axes=(--axis mac=8x8,16x16,32x32 --axis spm=16K,64K,256K --axis dma_bw=4,8,16)
models=("$shared/mlpt_ic_qdq" "$shared/mlpt_kws_qdq")
"$npucc" sweep "${models[@]}" "${axes[@]}" -j2 --check --check-every 4 --progress on \
  --json "$out/j2.json" --csv "$out/j2.csv" --html "$out/sweep.html" > "$out/j2.txt" 2> "$out/j2.err"
rc=$?
[ $rc -eq 0 ] || fail "sweep -j2 exit $rc (see $out/j2.txt, $out/j2.err)"
[ "$(grep -c '^npucc sweep: \[' "$out/j2.err")" -eq 54 ] || fail "sweep -j2: not 54 progress lines"
"$npucc" sweep "${models[@]}" "${axes[@]}" -j1 --check --check-every 4 \
  --json "$out/j1.json" --csv "$out/j1.csv" > "$out/j1.txt" 2> "$out/j1.err"
rc=$?
[ $rc -eq 0 ] || fail "sweep -j1 exit $rc (see $out/j1.txt)"
[ -s "$out/j1.err" ] && fail "sweep -j1 printed on stderr when piped: $(head -3 "$out/j1.err")"
cmp -s "$out/j1.json" "$out/j2.json" || fail "sweep JSON differs between -j1 and -j2"
cmp -s "$out/j1.csv" "$out/j2.csv" || fail "sweep CSV differs between -j1 and -j2"
cmp -s "$out/j1.txt" "$out/j2.txt" || fail "sweep table differs between -j1 and -j2"

# A point the loader refuses: 256 MiB of scratchpad at 0 reaches the flash window (0x08000000).
"$npucc" sweep "${models[1]}" --axis spm=64K,256M --json "$out/refused.json" \
  > "$out/refused.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "sweep with a refused point exit $rc (see $out/refused.txt)"

/usr/bin/python3 - "$out" << 'EOF' || failed=$((failed + 1))
import json, sys
out = sys.argv[1]
problems = []
j = json.load(open(out + "/j2.json"))
rows = j["points"]
if j["axes"] != ["mac", "spm", "dma_bw"] or len(rows) != 54:
    problems.append("expected 3 axes and 54 rows, got %s and %d" % (j["axes"], len(rows)))
checked = {}
for r in rows:
    if r["status"] != "ok":
        problems.append("point %d %s: %s %s" % (r["point"], r["model"], r["status"], r.get("reason")))
        continue
    if "check" in r:
        checked[r["model"]] = checked.get(r["model"], 0) + 1
        if r["check"] != "pass":
            problems.append("point %d %s: check %s" % (r["point"], r["model"], r["check"]))
        if r["sim_cycles"] != r["cycles"]:
            problems.append("point %d %s: simulated %d cycles, estimated %d" %
                            (r["point"], r["model"], r["sim_cycles"], r["cycles"]))
if sorted(checked.values()) != [7, 7]:
    problems.append("expected 7 checked points per model, got %s" % checked)
# The Pareto front, recomputed: a row is on it unless another row of its model is no worse in
# program cycles (NPU timeline + CPU layers), scratchpad and traffic and better in one.
key = lambda r: (r["cycles"] + r["cpu_cycles_cortex_m4"], r["scratchpad_bytes"], r["dram_bytes"])
ok = [r for r in rows if r["status"] == "ok"]
for r in ok:
    dominated = any(key(o) != key(r) and all(a <= b for a, b in zip(key(o), key(r)))
                    for o in ok if o["model"] == r["model"])
    if r["pareto"] == dominated:
        problems.append("point %d %s: pareto %s, recomputed %s" %
                        (r["point"], r["model"], r["pareto"], not dominated))
if not any(r["pareto"] for r in ok) or all(r["pareto"] for r in ok):
    problems.append("a degenerate Pareto front")
if len({r["cycles"] for r in ok}) < 6:
    problems.append("the axes hardly change the estimate: %s" % sorted({r["cycles"] for r in ok}))
f = json.load(open(out + "/refused.json"))["points"]
if [r["status"] for r in f] != ["ok", "refused"]:
    problems.append("refused sweep: statuses %s" % [r["status"] for r in f])
elif "overlaps" not in f[1].get("reason", ""):
    problems.append("refused point without the loader's reason: %s" % f[1].get("reason"))
for p in problems:
    print("FAIL: " + p)
print("sweep rows: %d, checked %s, Pareto %d, refused reason: %s" %
      (len(rows), checked, sum(r.get("pareto", False) for r in ok), f[-1].get("reason")))
sys.exit(1 if problems else 0)
EOF

# The chart in a real browser.
mods="$root/bench/node_modules"
[ -d "$mods/playwright-core" ] || mods="${NPUCC_ORT_NODE_MODULES:-$mods}"
chromium="${NPUCC_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  ci_skip "no Chromium at $chromium: sweep.html not opened" || failed=$((failed + 1))
elif ! command -v node > /dev/null || [ ! -d "$mods/playwright-core" ]; then
  ci_skip "no node or playwright-core: sweep.html not opened" || failed=$((failed + 1))
else
  NODE_PATH="$mods" node "$here/sweep_html_test.js" "$chromium" "$out/sweep.html" "$out/j2.json" ||
    failed=$((failed + 1))
fi
[ $failed -eq 0 ] || { echo "sweep: $failed failure(s); outputs in $out"; exit 1; }
echo "sweep: PASS (outputs in $out)"
exit 0
