#!/usr/bin/env bash
# report_html_test.sh - OUT/report.html opened in a real browser (headless Chromium).
#
# usage: test/e2e/report_html_test.sh NPUCC [OUT_DIR]
#
# Compiles models/tinycnn_int8 (for npu-default and for --target cpu), models/tinycnn
# quantized with --report-layers (the accuracy section), and every shared int8 model the
# npu_models tier runs on npu-default (when ../shared/models exists) for npu-default, and
# tinycnn_int8 through `npucc check --report` (the simulator's trace as the schedule), then
# test/e2e/report_html_test.js opens each
# report.html with playwright-core (bench/node_modules) on /usr/bin/chromium: no console
# error and no page error, the numbers the page shows (total and per-layer cycles, placement
# counts, schedule spans, accuracy rows) equal report.json's, the embedded data is report.json;
# a screenshot OUT_DIR/<model>.png is kept for review (default OUT_DIR: a temporary folder,
# build/report_html under ctest). A missing Chromium, playwright-core or model skips (exit 77),
# and fails under CI (test/e2e/ci_skip.sh). NPUCC_CHROMIUM names another Chromium binary.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$here/ci_skip.sh"
npucc="${1:?usage: report_html_test.sh NPUCC [OUT_DIR]}"
out="${2:-$(mktemp -d "${TMPDIR:-/tmp}/npucc-report-html.XXXXXX")}"
mods="$root/bench/node_modules" # else the node_modules folder the unit tests are given
[ -d "$mods/playwright-core" ] || mods="${NPUCC_ORT_NODE_MODULES:-$mods}"
chromium="${NPUCC_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || ci_skip_exit "no Chromium at $chromium (scripts/test.sh installs Debian's chromium)"
command -v node > /dev/null || ci_skip_exit "no node (scripts/test.sh installs nodejs)"
[ -d "$mods/playwright-core" ] || ci_skip_exit "no playwright-core in $mods (npm ci in bench/)"
shared="$root/../shared/models"
[ -d "$shared" ] || shared=/work/shared/models
mkdir -p "$out"
failed=0
dirs=()
compile() { # name model target flags...
  local name="$1" model="$2" target="$3"; shift 3
  rm -rf "${out:?}/$name"
  if "$npucc" "$model" --target "$target" -o "$out/$name" "$@" > "$out/$name.log" 2>&1; then
    dirs+=("$out/$name")
  else
    echo "FAIL: npucc $model ($out/$name.log)"; failed=$((failed + 1))
  fi
}
compile tinycnn_int8 "$root/models/tinycnn_int8/model.onnx" npu-default
compile tinycnn_int8_cpu "$root/models/tinycnn_int8/model.onnx" cpu
compile tinycnn_quant "$root/models/tinycnn/model.onnx" npu-default --quantize int8 \
  --calib "$root/models/tinycnn/test_data_set_0" --report-layers
for m in mlpt_ad_qdq mlpt_ic_qdq mlpt_kws_qdq mlpt_vww_qdq torch_ptq_qdq mobilenetv2_12_int8; do
  if [ -f "$shared/$m/model.onnx" ]; then
    compile "$m" "$shared/$m/model.onnx" npu-default
  else
    ci_skip "shared model $shared/$m not present: its report.html not tested" || failed=$((failed + 1))
  fi
done
# npucc check --report: the page with the simulator's trace of test_data_set_0 as its schedule;
# report.json says so, every command is attributed to a layer, the run ends at the simulated
# cycles the check reports, and the browser checks above hold for it too.
rm -rf "${out:?}/tinycnn_int8_check"
if "$npucc" check "$root/models/tinycnn_int8" --report "$out/tinycnn_int8_check" \
  --json "$out/tinycnn_int8_check.json" > "$out/tinycnn_int8_check.log" 2>&1; then
  dirs+=("$out/tinycnn_int8_check")
  /usr/bin/python3 - "$out" << 'EOF' || failed=$((failed + 1))
import json, sys
out = sys.argv[1]
rep = json.load(open(out + "/tinycnn_int8_check/report.json"))
chk = json.load(open(out + "/tinycnn_int8_check.json"))
s, sim = rep["schedule"], chk["data_sets"][0]["sim"]
problems = []
if s["source"] != "simulator" or "note" in s:
    problems.append("schedule source %s, note %s" % (s["source"], s.get("note")))
if s["cycles"] != sim["cycles"]:
    problems.append("schedule ends at %d, simulated %d" % (s["cycles"], sim["cycles"]))
if sum(x["commands"] for x in s["spans"]) != sim["commands"]:
    problems.append("%d commands in the spans, simulated %d" %
                    (sum(x["commands"] for x in s["spans"]), sim["commands"]))
if not s["spans"] or any(x["layer"] < 0 or x["lane"] == "cpu" for x in s["spans"]):
    problems.append("spans without a layer or on the CPU lane")
for p in problems:
    print("FAIL: check --report: " + p)
sys.exit(1 if problems else 0)
EOF
else
  echo "FAIL: npucc check --report ($out/tinycnn_int8_check.log)"; failed=$((failed + 1))
fi
NODE_PATH="$mods" node "$here/report_html_test.js" "$chromium" "${dirs[@]}"
rc=$?
[ $rc -eq 0 ] && [ $failed -eq 0 ] || { echo "report_html: $failed compile(s) failed, browser checks exit $rc"; exit 1; }
exit 0
