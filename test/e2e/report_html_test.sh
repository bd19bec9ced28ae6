#!/usr/bin/env bash
# report_html_test.sh - OUT/report.html opened in a real browser (headless Chromium).
#
# usage: test/e2e/report_html_test.sh NPUCC [OUT_DIR]
#
# Compiles models/tinycnn_int8 (for npu-default and for --target cpu), models/tinycnn
# quantized with --report-layers (the accuracy section), and every shared int8 model the
# npu_models tier runs on npu-default (when ../shared/models exists) for npu-default, then test/e2e/report_html_test.js opens each
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
NODE_PATH="$mods" node "$here/report_html_test.js" "$chromium" "${dirs[@]}"
rc=$?
[ $rc -eq 0 ] && [ $failed -eq 0 ] || { echo "report_html: $failed compile(s) failed, browser checks exit $rc"; exit 1; }
exit 0
