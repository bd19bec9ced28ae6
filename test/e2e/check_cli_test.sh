#!/usr/bin/env bash
# `npucc check` as a CI gate (issue 20): exit 0 for a pass, 1 for an output mismatch, 2 for
# an error (missing model, bad data, failed build, bad flags); --json is written in every
# case with "status" (pass | mismatch | error), the npucc version and, on error, the message.
# A changed golden value is reported at its own index (text and JSON), and the interpreter
# column of the text agrees with the JSON's "exactness". Every built-in target (`npucc
# --target list`) passes with the strict flags of issue 20 (check's own harness included).
# Usage: check_cli_test.sh NPUCC SOURCE_DIR
set -uo pipefail
npucc="$1"
src="$2"
. "$src/test/e2e/ci_skip.sh"
py=/usr/bin/python3
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
version="$("$npucc" --version | sed 's/^npucc //')"

# check_case NAME RC STATUS PY_ASSERT ARGS...: `npucc check ARGS... --json FILE` exits RC,
# FILE has "status": STATUS and the npucc version, and the Python expression PY_ASSERT holds
# for the report `j` and the text output `text` (stdout and stderr).
check_case() {
  local name="$1" want_rc="$2" want_status="$3" assert="$4"
  shift 4
  rm -f "$tmp/r.json"
  "$npucc" check "$@" --json "$tmp/r.json" > "$tmp/log" 2>&1
  local rc=$?
  if [ "$rc" != "$want_rc" ]; then
    bad "$name: exit $rc, expected $want_rc"
    sed 's/^/    /' "$tmp/log" | tail -8
    return
  fi
  if ! "$py" - "$tmp/r.json" "$tmp/log" "$want_status" "$version" "$assert" <<'PYEOF'; then
import json, sys
path, log, status, version, assert_expr = sys.argv[1:]
j = json.load(open(path))
text = open(log).read()
assert j["status"] == status, "status %r, expected %r" % (j["status"], status)
assert j["npucc_version"] == version, "npucc_version %r" % j["npucc_version"]
assert j["pass"] == (status == "pass"), "pass %r" % j["pass"]
assert ("error" in j) == (status == "error"), "error field: %r" % j.get("error")
assert eval(assert_expr), "does not hold: " + assert_expr
PYEOF
    bad "$name: the report does not match (above)"
    sed 's/^/    /' "$tmp/log" | tail -5
    return
  fi
  ok "$name (exit $rc, status $want_status)"
}

m="$src/models/tinycnn_int8"
# The text row of output 0 of data set 0: [.., steps, interp, first bad, result...].
row='[l.split() for l in text.splitlines() if l.startswith("test_data_set_0 ") and " vs " not in l and "simulator" not in l][0]'

# Piped (as here), check prints no progress lines unless asked; it prints the placement table
# ('#', op, placement, ..., the full layer name last) before the comparison.
check_case "pass: tinycnn_int8 on npu-default" 0 pass \
  "j['outputs'][0]['first_mismatch'] == -1 and j['outputs'][0]['interp']['exactness'] == 'exact' \
   and 'npucc check:' not in text and any(l.split()[:3] == ['#', 'op', 'placement'] for l in text.splitlines())" \
  "$m"
check_case "--progress on when piped: compile, build and each data set on stderr" 0 pass \
  "'npucc check: compiling ' in text and 'npucc check: building the program with cc (NPU simulator)' in text \
   and 'npucc check: test_data_set_0 (1 of 1)' in text" \
  "$m" --progress on

# Mismatch: one golden value changed (tinycnn_int8: a DequantizeLinear output).
cp -r "$m" "$tmp/changed"
"$py" - "$tmp/changed/test_data_set_0/output_0.pb" 7 <<'PYEOF'
import sys, onnx, onnx.numpy_helper as nh
p, k = sys.argv[1], int(sys.argv[2])
t = onnx.TensorProto()
t.ParseFromString(open(p, "rb").read())
a = nh.to_array(t).copy()
a.flat[k] += 10 if a.dtype.kind == "f" else 3
open(p, "wb").write(nh.from_array(a, t.name).SerializeToString())
PYEOF
check_case "mismatch: one changed golden value (dq output)" 1 mismatch \
  "j['outputs'][0]['first_mismatch'] == 7 and $row[-2] == '7' and $row[-1] == 'FAIL' \
   and j['outputs'][0]['mismatches'] >= 1" \
  "$tmp/changed"

# A softmax(dq) output (mlpt_kws_qdq): the changed element is named (it was "first bad 0"),
# and the interpreter column ("int-exact": identical logits, float softmax bytes differ)
# is the JSON's exactness.
shared="$src/../shared/models"
[ -d "$shared" ] || shared=/work/shared/models # a worktree beside the lead's (npu_targets_test.sh)
kws="$shared/mlpt_kws_qdq"
if [ -f "$kws/model.onnx" ]; then
  cp -r "$kws" "$tmp/kws"
  "$py" - "$tmp/kws/test_data_set_0/output_0.pb" <<'PYEOF'
import sys, onnx, onnx.numpy_helper as nh
p = sys.argv[1]
t = onnx.TensorProto()
t.ParseFromString(open(p, "rb").read())
a = nh.to_array(t).copy()
a.flat[5] = a.flat[5] * 0.5 + 0.01
open(p, "wb").write(nh.from_array(a, t.name).SerializeToString())
PYEOF
  # The placement table names every layer in full, a CPU layer with its reasons.
  check_case "mismatch: softmax(dq) output, changed element 5" 1 mismatch \
    "'StatefulPartitionedCall/functional_1/conv2d/BiasAdd  [cpu: kernel 10x4 not in conv.kernel_sizes' in text \
     and 'StatefulPartitionedCall/functional_1/average_pooling2d/AvgPool  [cpu: kernel 25x5 not in pool.kernel_sizes' in text \
     and j['outputs'][0]['first_mismatch'] == 5 and $row[-2] == '5' \
     and $row[-3] == j['outputs'][0]['interp']['exactness'] \
     and all(s['exactness'] + ',' in text for s in j['outputs'][0]['stages'])" \
    "$tmp/kws"
else
  ci_skip "softmax(dq) first bad index (no $kws)" || failed=$((failed + 1))
fi

# Errors: exit 2 and a report with the message.
check_case "error: missing model" 2 error "'not found' in j['error']" "$tmp/nowhere"
check_case "error: failing build (bad --cflags)" 2 error \
  "'building the generated C failed' in j['error']" "$m" --cflags "-O2 -fno-such-flag-npucc"
mkdir -p "$tmp/baddata/test_data_set_0"
cp "$m/model.onnx" "$tmp/baddata/" && cp "$m/test_data_set_0/output_0.pb" "$tmp/baddata/test_data_set_0/input_0.pb"
cp "$m/test_data_set_0/output_0.pb" "$tmp/baddata/test_data_set_0/"
check_case "error: data set input of another shape" 2 error "'does not match' in j['error']" \
  "$tmp/baddata"
check_case "error: bad flag value" 2 error "'tolerance' in j['error']" "$m" --tolerance abc
check_case "error: --tolerance nan" 2 error "'must be a finite number' in j['error']" \
  "$m" --tolerance nan

# Issue 20's strict flags on every built-in target (the list as npucc prints it).
strict="-O2 -std=c99 -Wall -Wextra -Werror"
targets=$("$npucc" --target list | awk 'NF && $1 != "or" {print $1}')
[ -n "$targets" ] || bad "npucc --target list printed no target"
for t in $targets; do
  check_case "strict flags on $t: '$strict'" 0 pass "'tinycnn_int8: PASS' in text" \
    "$m" --target "$t" --cflags "$strict"
done

# --io int8 (docs/quantization.md, "int8 inputs and outputs"): check quantizes the float data
# set for the int8 input and compares the int8 output as its dequantized value, in steps; the
# C output stays bit-exact with the interpreter. A model with a float Softmax output is refused.
for t in npu-default cpu; do
  check_case "--io int8 on $t" 0 pass \
    "'tinycnn_int8: PASS' in text and j['outputs'][0]['kind'].startswith('dq(') and j['outputs'][0]['interp']['bit_exact']" \
    "$m" --io int8 --target "$t" --cflags "$strict"
done
vww="$shared/mlpt_vww_qdq"
if [ -d "$vww" ]; then
  check_case "--io int8 refused on a float Softmax output" 2 error \
    "\"--io int8: output 'Identity' is produced by Softmax\" in j['error']" "$vww" --io int8
else
  ci_skip "--io int8 refusal: $vww not present" || failed=$((failed + 1))
fi
rm -rf "$tmp/io8"
if "$npucc" "$m/model.onnx" --io int8 --target cpu -o "$tmp/io8" --emit-test --data "$m/test_data_set_0" > "$tmp/io8.log" 2>&1 \
  && grep -q 'input 0 "input": i8\[1,3,32,32\]' "$tmp/io8/model.h" \
  && (cd "$tmp/io8" && cc -std=c99 $strict -pedantic *.c -lm -o t > ../io8.cc 2>&1 && ./t > ../io8.run 2>&1); then
  ok "--io int8 --emit-test: int8 input in the header, the test program passes on the quantized data set"
else bad "--io int8 --emit-test:"; cat "$tmp/io8.log" "$tmp/io8.cc" "$tmp/io8.run" 2>/dev/null | sed 's/^/    /' | head; fi

# Issue 19, phase 7f: the per-layer distance of the NPU's arithmetic to the model's. A
# QLinearMatMul (ONNX Runtime's float32 requantization, scale 0.75 * 1 / 0.3) over every int8
# value runs on npu-default with exact rounding: odd accumulators are float32 ties (2.5 * acc)
# and just below the tie exactly, one step apart on 84 of 1024 elements; the golden data (the
# exact rounding) passes, the C output stays bit-exact with the interpreter.
mkdir -p "$tmp/qmm/test_data_set_0"
"$py" - "$tmp/qmm" <<'PYEOF'
import sys, os, numpy as np, onnx
from fractions import Fraction
from onnx import helper as h, numpy_helper as nh, TensorProto as T
d = sys.argv[1]
x = np.arange(-128, 128, dtype=np.int8).reshape(256, 1)
w = np.array([[1, -1, 3, 1]], dtype=np.int8)
c = lambda v, t, n: nh.from_array(np.array(v, t), n)
inits = [nh.from_array(w, "w"), c(0.75, np.float32, "xs"), c(0, np.int8, "xz"),
         c(1.0, np.float32, "ws"), c(0, np.int8, "wz"), c(0.3, np.float32, "ys"), c(3, np.int8, "yz")]
n = h.make_node("QLinearMatMul", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], name="qmm")
g = h.make_graph([n], "qmm", [h.make_tensor_value_info("x", T.INT8, [256, 1])],
                 [h.make_tensor_value_info("y", T.INT8, [256, 4])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(d, "model.onnx"))
r = Fraction(float(np.float32(0.75))) / Fraction(float(np.float32(0.3)))
acc = x.astype(np.int64) @ w.astype(np.int64)
y = np.array([[round(Fraction(int(a)) * r) + 3 for a in row] for row in acc]).clip(-128, 127)
open(os.path.join(d, "test_data_set_0/input_0.pb"), "wb").write(nh.from_array(x, "x").SerializeToString())
open(os.path.join(d, "test_data_set_0/output_0.pb"), "wb").write(
    nh.from_array(y.astype(np.int8), "y").SerializeToString())
PYEOF
check_case "per-layer distance: QLinearMatMul on npu-default, one step on 84 elements" 0 pass \
  "j['layer_distance']['rounding_changed'] and j['layer_distance']['layers'] == [{'node': 'qmm', \
   'npu_op': 'matmul', 'requant_changed': True, 'own_max_steps': 1, 'max_steps': 1, \
   'mismatches': 84, 'elements': 1024}] and '1 of 1 NPU layers requantize differently; own \
distance at most 1 step(s), accumulated at most 1 step(s)' in text and j['outputs'][0]['interp']['bit_exact']" \
  "$tmp/qmm"
check_case "per-layer distance: --requant fp32 keeps it on the CPU, nothing measured" 0 pass \
  "'layer_distance' not in j and 'per-layer distance' not in text" "$tmp/qmm" --requant fp32
check_case "per-layer distance: tinycnn_int8 on npu-fp32lut (4 MAC layers take float32 rounding)" 0 pass \
  "j['layer_distance']['rounding_changed'] and len(j['layer_distance']['layers']) == 5 \
   and sum(l['requant_changed'] for l in j['layer_distance']['layers']) == 4" \
  "$m" --target "$src/test/target/npu-fp32lut.json"
# Issue 19, phase 7d: the fused Sigmoid, Tanh, LeakyRelu and HardSigmoid of the regression
# model run as fitted pwl segments on npu-pwl: the C program and the simulator equal the
# interpreter bit for bit, and the per-layer distance reports each fit (one step here) on the
# activation's row.
check_case "per-layer distance: fused activations fitted by npu-pwl's pwl segments" 0 pass \
  "j['outputs'][0]['interp']['bit_exact'] and j['layer_distance']['rounding_changed'] \
   and {l['node']: (l['npu_op'], l['own_max_steps']) for l in j['layer_distance']['layers'] \
        if l['requant_changed']} == {'sigmoid_22_n': ('conv', 1), 'tanh_44_n': ('conv', 1), \
        'leakyrelu_66_n': ('depthwise', 1), 'hardsigmoid_88_n': ('conv', 0)}" \
  "$src/test/diff/regressions/npu_lut_activation_fusion" --target "$src/test/target/npu-pwl.json"
check_case "per-layer distance: tinycnn_int8 on npu-default (no change)" 0 pass \
  "not j['layer_distance']['rounding_changed'] and j['layer_distance']['layers'] == [] \
   and \"every NPU layer computes the model's own requantization (0 steps)\" in text" "$m"

# Issue 21: an int8 AveragePool (2x2, stride 2: windows of 4 pixels, zero point 6) runs on an
# NPU whose average rounds half to even (test/target/npu-avgpool.json) and matches the golden
# data (the exact mean rounded half to even: many ties) and the interpreter bit for bit; on
# npu-default (ties away from zero) it stays on the CPU with the reason.
mkdir -p "$tmp/avg/test_data_set_0"
"$py" - "$tmp/avg" <<'PYEOF'
import sys, os, numpy as np, onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
d = sys.argv[1]
s, z = np.float32(0.25), np.int8(6)
inits = [nh.from_array(np.array(s), "s"), nh.from_array(np.array(z), "z")]
nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
         h.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
         h.make_node("AveragePool", ["xd"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="avg"),
         h.make_node("QuantizeLinear", ["p", "s", "z"], ["pq"]),
         h.make_node("DequantizeLinear", ["pq", "s", "z"], ["y"])]
g = h.make_graph(nodes, "avg", [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 8, 8])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 4, 4])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(d, "model.onnx"))
q = ((np.arange(256) * 37 + 11) % 256 - 128).astype(np.int8).reshape(1, 4, 8, 8)
x = (q.astype(np.float32) - 6) * s
m4 = (q.astype(np.int64) - 6).reshape(1, 4, 4, 2, 4, 2).sum(axis=(3, 5))  # 4 x the mean
r = np.floor(m4 / 4)
frac = m4 - 4 * r
r = np.where(frac > 2, r + 1, np.where(frac == 2, r + (r % 2), r))  # half to even
y = ((np.clip(r + 6, -128, 127) - 6) * s).astype(np.float32)
open(os.path.join(d, "test_data_set_0/input_0.pb"), "wb").write(nh.from_array(x, "x").SerializeToString())
open(os.path.join(d, "test_data_set_0/output_0.pb"), "wb").write(nh.from_array(y, "y").SerializeToString())
PYEOF
check_case "AveragePool on npu-avgpool (ties to even): on the NPU, bit-exact" 0 pass \
  "any(l.split()[1:3] == ['AveragePool', 'npu:pool'] for l in text.splitlines()) \
   and j['outputs'][0]['max_steps'] == 0 and j['outputs'][0]['interp']['bit_exact'] \
   and j['data_sets'][0]['sim']['hazards'] == 0" \
  "$tmp/avg" --target "$src/test/target/npu-avgpool.json"
# npu-default's pool command requantizes (binds in_zp, out_zp, requant_mult, requant_shift):
# the same layer runs there with the Q31 multiplier of 1/4, bit-exact too.
check_case "AveragePool on npu-default (requantizing average): on the NPU, bit-exact" 0 pass \
  "any(l.split()[1:3] == ['AveragePool', 'npu:pool'] for l in text.splitlines()) \
   and j['outputs'][0]['max_steps'] == 0 and j['outputs'][0]['interp']['bit_exact'] \
   and j['data_sets'][0]['sim']['hazards'] == 0" "$tmp/avg"

# Issue 21: the MLPerf Tiny models end with an AveragePool whose input and output
# quantization differ (kws 25x5, ic 8x8, vww 3x3 stride 3). On a pool command that
# requantizes and takes their kernels (test/target/npu-poolrq.json; npu-default's pool takes
# kernels 2 and 3, strides 1 and 2 only) it runs on the NPU, bit-exact with the interpreter
# (the int8 logits identical: "int-exact" for their float softmax output), without hazards.
for name in mlpt_kws_qdq mlpt_ic_qdq mlpt_vww_qdq; do
  d="$shared/$name"
  if [ -f "$d/model.onnx" ]; then
    check_case "$name on npu-poolrq: AveragePool on the NPU, bit-exact, 0 hazards" 0 pass \
      "any(l.split()[1:3] == ['AveragePool', 'npu:pool'] for l in text.splitlines()) \
       and all(o['interp']['rule'] == 'bit-exact' and o['interp']['pass'] \
               and o['interp']['mismatches'] == 0 and o['max_steps'] == 0 for o in j['outputs']) \
       and all(d['sim']['hazards'] == 0 for d in j['data_sets'])" \
      "$d" --target "$src/test/target/npu-poolrq.json" $("$py" "$src/scripts/shape_flags.py" "$d")
  else
    ci_skip "$name on npu-poolrq (no $d)" || failed=$((failed + 1))
  fi
done

echo "check_cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
