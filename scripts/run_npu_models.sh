#!/usr/bin/env bash
# run_npu_models.sh: real models compiled onto the NPUs and run on their simulators.
#
# usage: scripts/run_npu_models.sh [--log-dir DIR] NPUCC [SHARED_MODELS_DIR]
#
# Every run is `npucc check MODEL_DIR --target T --interp-check on`: the generated C (NPU
# command streams + CPU kernels) is built with the host simulator of T and run on every
# test data set; it PASSes only if its outputs are bit-exact with npucc's integer reference
# interpreter, within the golden tolerance, and the simulator saw no hazard.
#  - pre-quantized shared models (mlpt_*_qdq, torch_ptq_qdq) on all five descriptions and on
#    npu-wide (64-bit registers on a 32-bit bus), golden (ONNX Runtime) within one quantization
#    step;
#  - mobilenetv2_12_int8 (QLinearConv: runs on the NPU with exact rounding instead of ONNX
#    Runtime's float32 one) on npu-default, npu-small, npu-third and npu-fourth, golden within
#    9 steps: the measured distance of exact rounding from ONNX Runtime on this model, the same with
#    the CPU kernels (--target cpu --requant exact); quant_models checks the fp32 path at
#    one step;
#  - float models quantized by calibration on their own test data (--quantize int8 --calib
#    DIR/test_data_set_0 --calib-method minmax): the project's tinycnn, mobilenetv2 and
#    tinyunet and the float shared models, on npu-default, npu-small and npu-third. Their
#    golden output is the float model's, so only the interpreter and the simulator are
#    asserted there (--tolerance-steps 255); the golden distance is still reported.
# Prints one line per run with the share of MACs on the NPU and the simulated cycles, then
#   npu models: N passed, M failed
# Exits 1 if any run failed, 77 (CTest: skipped) without the shared model folder. A missing
# folder or model is reported as SKIP, or as a failure when CI is set (test/e2e/ci_skip.sh).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
PY=/usr/bin/python3
. "$root/test/e2e/ci_skip.sh"
log_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --log-dir) log_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
npucc="$1"; shift
shared="${1:-}"
[ -n "$shared" ] || { [ -d "$root/../shared/models" ] && shared="$root/../shared/models"; }
[ -n "$shared" ] || shared=/work/shared/models
[ -d "$shared" ] || ci_skip_exit "shared models dir '$shared' does not exist: NPU models not run"
[ -n "$log_dir" ] || log_dir="$(mktemp -d "${TMPDIR:-/tmp}/npucc-npu-models.XXXXXX")"
mkdir -p "$log_dir"

all5=(npu-default npu-small "$root/test/target/npu-third.json" "$root/test/target/npu-fourth.json"
      "$root/test/target/npu-queue.json")
wide=("$root/test/target/npu-wide.json")
three=(npu-default npu-small "$root/test/target/npu-third.json")
# mobilenetv2_12_int8 also on npu-fourth: its 224x224 layers are the ones that split an input
# tile over several transfers (test/lit/lir/npu-prefetch-split-load.lir).
mbv2_targets=("${three[@]}" "$root/test/target/npu-fourth.json")

passed=0
failed=0
run() { # label dir target flags...
  local label="$1" dir="$2" t="$3"; shift 3
  local name tname log json
  name="$(basename "$dir")"
  tname="$(basename "$t" .json)"
  log="$log_dir/$name.$tname.log"
  json="$log_dir/$name.$tname.json"
  local sflags
  mapfile -t sflags < <("$PY" "$here/shape_flags.py" "$dir")
  "$npucc" check "$dir" --target "$t" --interp-check on "${sflags[@]}" "$@" --json "$json" \
    > "$log" 2>&1
  local rc=$?
  local info
  info="$("$PY" - "$json" <<'EOF' 2>/dev/null
import json, sys
j = json.load(open(sys.argv[1]))
frac = 100.0 * j["npu_macs"] / j["macs"] if j.get("macs") else 0.0
sims = [d["sim"] for d in j.get("data_sets", []) if "sim" in d]
cyc = sims[0]["cycles"] if sims else 0
st = [o.get("max_steps", 0) for o in j.get("outputs", [])]
steps = "inf" if any(s < 0 for s in st) else ("%g" % max(st) if st else "-")
print("%5.1f%% of MACs on the NPU, %d simulated cycles (estimate %d), golden %s steps" %
      (frac, cyc, j.get("estimated_cycles", 0), steps))
EOF
)"
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "PASS $label $name on $tname: $info"
  else
    failed=$((failed + 1))
    echo "FAIL $label $name on $tname (exit $rc): $info"
    grep -E "error|FAIL|simulator:" "$log" | head -3 | sed 's/^/    /'
  fi
}

for m in mlpt_ad_qdq mlpt_ic_qdq mlpt_kws_qdq mlpt_vww_qdq torch_ptq_qdq; do
  if [ ! -f "$shared/$m/model.onnx" ]; then
    ci_skip "$shared/$m missing: not run" || failed=$((failed + 1))
    continue
  fi
  for t in "${all5[@]}" "${wide[@]}"; do
    run pre-quantized "$shared/$m" "$t" --tolerance-steps 1
  done
done
if [ -f "$shared/mobilenetv2_12_int8/model.onnx" ]; then
  for t in "${mbv2_targets[@]}"; do
    run pre-quantized "$shared/mobilenetv2_12_int8" "$t" --tolerance-steps 9
  done
else
  ci_skip "$shared/mobilenetv2_12_int8 missing: not run" || failed=$((failed + 1))
fi
calibrated=("$root/models/tinycnn" "$root/models/mobilenetv2" "$root/models/tinyunet")
for m in ali_ad_f32 ali_ic_f32 ali_kws_f32 ali_vww_f32 mlpt_vww_f32 mnist8 onnx2c_atmega_mnist \
         blazeface_front128; do
  if [ -f "$shared/$m/model.onnx" ]; then
    calibrated+=("$shared/$m")
  else
    ci_skip "$shared/$m missing: not calibrated and run" || failed=$((failed + 1))
  fi
done
for d in "${calibrated[@]}"; do
  for t in "${three[@]}"; do
    run calibrated "$d" "$t" --quantize int8 --calib "$d/test_data_set_0" --calib-method minmax \
      --tolerance-steps 255
  done
done
echo "npu models: $passed passed, $failed failed (logs: $log_dir)"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
