#!/usr/bin/env bash
# run_quant_models.sh: the quantized end-to-end checks.
#
# usage: scripts/run_quant_models.sh [--log-dir DIR] NPUCC [SHARED_MODELS_DIR] [check flags...]
#   `npucc check` on the six quantized shared models (mlpt_*_qdq, torch_ptq_qdq,
#   mobilenetv2_12_int8): each output at 0 quantization steps from the golden output
#   (--tolerance-steps 0, a regression bound; npucc check's default is 1 step) AND
#   bit-exact with npucc's integer reference interpreter. Same as
#   `scripts/run_shared_models.sh --quant ...`; exits 77 (CTest: skipped) when the shared
#   model folder does not exist (1 when CI is set: test/e2e/ci_skip.sh).
# usage: scripts/run_quant_models.sh --node-tests [--node-dir DIR] [--log-dir DIR] NPUCC
#                                    [check flags...]
#   The ONNX backend node tests of test/e2e/node_tests_quant.txt (QuantizeLinear,
#   DequantizeLinear, QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger) through
#   scripts/run_node_tests.sh. ONNX feeds their scales, zero points and second operands as
#   graph inputs; npucc compiles quantization parameters ahead of time, so each test is
#   first copied with every graph input but the first turned into an initializer holding
#   its test_data_set_0 value (test_data_set_0 then keeps input_0 and the outputs). The
#   tests compare exactly: --tolerance-steps 0 --interp-check on unless overridden.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
[ "${1:-}" = "--node-tests" ] || exec bash "$here/run_shared_models.sh" --quant "$@"
shift
node_dir=/usr/share/libonnx-testdata/data/node
log_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --node-dir) node_dir="$2"; shift 2 ;;
    --log-dir) log_dir="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
npucc="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; shift
list="$root/test/e2e/node_tests_quant.txt"
[ -d "$node_dir" ] || { echo "run_quant_models: node test dir $node_dir missing" >&2; exit 2; }
[ -n "$log_dir" ] || log_dir="$(mktemp -d "${TMPDIR:-/tmp}/npucc-quant-node.XXXXXX")"
work="$(mktemp -d "${TMPDIR:-/tmp}/npucc-quant-node-models.XXXXXX")"
trap 'rm -rf "$work"' EXIT
grep -v -E '^[[:space:]]*(#|$)' "$list" | sed 's/[[:space:]]*$//' > "$work/list.txt"
/usr/bin/python3 - "$node_dir" "$work" "$work/list.txt" <<'PY' || exit 2
import os, shutil, sys, onnx
node_dir, work, lst = sys.argv[1:4]
for name in open(lst).read().split():
    src, dst = os.path.join(node_dir, name), os.path.join(work, name)
    m = onnx.load(os.path.join(src, "model.onnx"))
    g = m.graph
    for i in range(len(g.input) - 1, 0, -1):
        t = onnx.load_tensor(os.path.join(src, "test_data_set_0", "input_%d.pb" % i))
        t.name = g.input[i].name
        g.initializer.append(t)
        del g.input[i]
    os.makedirs(os.path.join(dst, "test_data_set_0"))
    onnx.save(m, os.path.join(dst, "model.onnx"))
    for f in os.listdir(os.path.join(src, "test_data_set_0")):
        if f == "input_0.pb" or f.startswith("output_"):
            shutil.copy(os.path.join(src, "test_data_set_0", f), os.path.join(dst, "test_data_set_0", f))
PY
defaults=(--tolerance-steps 0 --interp-check on)
bash "$here/run_node_tests.sh" --list "$work/list.txt" --node-dir "$work" --log-dir "$log_dir" \
  "$npucc" "${defaults[@]}" "$@"
