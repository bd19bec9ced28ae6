#!/usr/bin/env bash
# run_shared_models.sh: run `npucc check --tolerance 1e-4` on the float real models in
# the shared model folder and on the project's own models/*.
#
# usage: scripts/run_shared_models.sh [--quant] [--log-dir DIR] NPUCC [SHARED_MODELS_DIR]
#                                     [extra check flags...]
#   SHARED_MODELS_DIR defaults to ../shared/models beside the repo, else /work/shared/models;
#   if it (or one of its models) does not exist, the missing models are skipped with a
#   SKIP line, or fail the run when CI is set (test/e2e/ci_skip.sh).
#   Extra flags (e.g. --cc "gcc -fsanitize=address,undefined") go to every `npucc check`;
#   a later --tolerance overrides the default 1e-4.
#   --quant: the six quantized shared models instead (no models/*), checked with
#   --tolerance-steps 0 --interp-check on (EXACTLY the golden output, 0 quantization
#   steps, AND bit-exact with npucc's integer interpreter); exits 77 (skipped) without the
#   folder (1 when CI is set). 0 steps is a regression bound: all six are at 0 steps today,
#   so a change in the shared integer arithmetic (npucc_requant.h, which the generated C and
#   the interpreter both use, so they cannot disagree) shows up against the golden outputs.
#   `npucc check`'s own default stays 1 step; a later --tolerance-steps overrides the 0 here.
# Models whose graph inputs have symbolic dims get --shape NAME=DIMS from test_data_set_0.
# Prints one line per model and a final summary line
#   shared models: N passed, M failed
# Exits 1 if any model failed (or none ran), 2 on bad usage.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
log_dir=""
shared_models=(mnist8 onnx2c_atmega_mnist ali_ad_f32 ali_ic_f32 ali_kws_f32 ali_vww_f32
               mlpt_vww_f32 blazeface_front128)
quant_models=(mlpt_kws_qdq mlpt_ic_qdq mlpt_vww_qdq mlpt_ad_qdq torch_ptq_qdq mobilenetv2_12_int8)
quant=0
PY=/usr/bin/python3
. "$root/test/e2e/ci_skip.sh"

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --log-dir) log_dir="$2"; shift 2 ;;
    --quant) quant=1; shift ;;
    -h|--help) usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
npucc="$1"; shift
if [ ! -x "$npucc" ]; then
  echo "run_shared_models: npucc binary '$npucc' not found or not executable" >&2
  exit 2
fi
shared=""
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then
  shared="$1"; shift
elif [ -d "$root/../shared/models" ]; then
  shared="$root/../shared/models"
else
  shared=/work/shared/models
fi
[ -n "$log_dir" ] || log_dir="$(mktemp -d "${TMPDIR:-/tmp}/npucc-shared-models.XXXXXX")"
mkdir -p "$log_dir"

check_flags=(--tolerance 1e-4)
label="shared models"
if [ "$quant" -eq 1 ]; then
  shared_models=("${quant_models[@]}")
  check_flags=(--tolerance 1e-4 --tolerance-steps 0 --interp-check on)
  label="quant models"
  [ -d "$shared" ] ||
    ci_skip_exit "shared models dir '$shared' does not exist: quantized models not run"
fi

dirs=()
failed=0
if [ -d "$shared" ]; then
  for m in "${shared_models[@]}"; do
    if [ -f "$shared/$m/model.onnx" ]; then
      dirs+=("$shared/$m")
    else
      ci_skip "$shared/$m missing: not run" || failed=$((failed + 1))
    fi
  done
else
  ci_skip "shared models dir '$shared' does not exist: shared models not run" ||
    failed=$((failed + 1))
fi
if [ "$quant" -eq 0 ]; then
  for d in "$root"/models/*/; do
    [ -f "$d/model.onnx" ] && dirs+=("${d%/}")
  done
fi

# --shape flags for inputs whose declared dims are symbolic (one flag pair per line).
shape_flags() { "$PY" "$here/shape_flags.py" "$1"; }

first_reason() {
  awk '{ l = tolower($0) }
       !found && l ~ /error|fail|mismatch/ { r = $0; found = 1; if (r !~ /:[ \t]*$/) exit; next }
       found && l ~ /error/ { r = r " " $0; exit }
       END { print substr(r, 1, 200) }' "$1"
}

# " [max steps vs golden S, vs interpreter bit-exact|DIFF]" from a check JSON report
# (--quant only).
summary() {
  [ "$quant" -eq 1 ] && [ -f "$1" ] || return 0
  "$PY" - "$1" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
outs = j.get("outputs", [])
st = [o["max_steps"] for o in outs if "max_steps" in o]
it = [o["interp"] for o in outs if "interp" in o]
steps = "inf" if any(s < 0 for s in st) else ("%g" % max(st) if st else "-")
ex = "-" if not it else ("bit-exact" if all(i["bit_exact"] for i in it)
                         else "int-exact" if all(i["pass"] for i in it) else "DIFF")
print(" [max steps vs golden %s, vs interpreter %s]" % (steps, ex), end="")
EOF
}

passed=0
# Per-model flags. mobilenetv2_12_int8 is a QLinearConv model: ONNX Runtime requantizes it
# in float32, which npucc emulates on the CPU kernels (--requant fp32, 0 steps from ORT).
# By default its convolutions would run on the NPU with exact rounding instead (docs/npu.md:
# bit-exact with the interpreter, but 9 steps from ORT's logits); scripts/run_npu_models.sh
# checks that configuration.
model_flags() {
  [ "$quant" -eq 1 ] && [ "$1" = mobilenetv2_12_int8 ] && echo "--requant fp32"
  return 0
}

for d in "${dirs[@]}"; do
  name="$(basename "$d")"
  mapfile -t sflags < <(shape_flags "$d")
  read -r -a mflags <<< "$(model_flags "$name")"
  "$npucc" check "$d" "${check_flags[@]}" "${sflags[@]}" "${mflags[@]}" "$@" --json "$log_dir/$name.json" \
    > "$log_dir/$name.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "PASS $name$(summary "$log_dir/$name.json")"
  else
    failed=$((failed + 1))
    echo "FAIL $name (exit $rc: $(first_reason "$log_dir/$name.log"))$(summary "$log_dir/$name.json")"
  fi
done
echo "logs: $log_dir"
echo "$label: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
