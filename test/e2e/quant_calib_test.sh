#!/usr/bin/env bash
# quant_calib_test.sh - end-to-end test of post-training int8 quantization
# (`npucc MODEL --quantize int8 --calib DIR`, docs/quantization.md "Calibration").
#
#   quant_calib_test.sh NPUCC SOURCE_DIR
#
# For models/tinycnn: writes 32 seeded N(0,1) calibration samples (.npy) and 8
# other evaluation samples, compiles the float and the quantized model to C,
# builds both with a small harness and runs them on the evaluation samples.
# Checks: the C builds, the quantized graph has no float Conv left
# (--print-ir), output SNR of int8 vs float >= 20 dB, models/tinyunet (its
# channel-axis Softmax stays float, its Slice, Pad and Resize are int8, SNR >= 30 dB), each
# --calib-method (mse too), the error without calibration data and the
# --calib-random warning, and --emit-qdq writes a model ONNX's checker accepts
# that compiles back to the same C.
# QUANT_CALIB_MODELS="path/model.onnx ..." evaluates other models instead
# (prints their SNR on the generated C, no bound), top-1 agreement (from
# the accuracy report) and the ops left in float; QUANT_CALIB_METHOD picks the method (default: auto).
# QUANT_CALIB_EVAL=N evaluates on N samples instead of 8 (seeds 5000..); QUANT_CALIB_FLAGS
# adds npucc flags to the quantized compile (e.g. --no-equalize).
# QUANT_CALIB_SHAPES="NAME:INPUT=DIMS ..." binds a dynamic input of the model
# in folder NAME (e.g. ali_ic_f32:actual_input_1=1x3x32x32): the samples get
# that shape and npucc gets --shape INPUT=DIMS.
set -u
NPUCC=$(realpath "$1")
SRC=$(realpath "$2")
PY=/usr/bin/python3
CC=${CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# Harness: runs the model on samples DIR/sK_inI.bin, writes DIR/sK_outI.TAG.bin.
cat > "$T/harness.c" <<'CEOF'
#include "model.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 3 ? atoi(argv[2]) : 0, s, i;
  char path[4096];
  for (s = 0; s < n; ++s) {
    const void *ins[MODEL_NUM_INPUTS];
    void *outs[MODEL_NUM_OUTPUTS];
    for (i = 0; i < MODEL_NUM_INPUTS; ++i) {
      void *b = malloc(model_inputs[i].bytes);
      FILE *f;
      snprintf(path, sizeof path, "%s/s%d_in%d.bin", argv[1], s, i);
      f = fopen(path, "rb");
      if (!f || fread(b, 1, model_inputs[i].bytes, f) != model_inputs[i].bytes) {
        fprintf(stderr, "cannot read %s\n", path);
        return 2;
      }
      fclose(f);
      ins[i] = b;
    }
    for (i = 0; i < MODEL_NUM_OUTPUTS; ++i)
      outs[i] = malloc(model_outputs[i].bytes);
    if (model_run(ins, outs) != 0)
      return 3;
    for (i = 0; i < MODEL_NUM_OUTPUTS; ++i) {
      FILE *f;
      snprintf(path, sizeof path, "%s/s%d_out%d.%s.bin", argv[1], s, i, argv[3]);
      f = fopen(path, "wb");
      fwrite(outs[i], 1, model_outputs[i].bytes, f);
      fclose(f);
      free(outs[i]);
    }
    for (i = 0; i < MODEL_NUM_INPUTS; ++i)
      free((void *)ins[i]);
  }
  return 0;
}
CEOF

# Samples: CALIB/NNN.npy (seed 1000+k) and EVAL/sK_inI.bin (seed 5000+k), N(0,1).
make_samples() { # model.onnx dir [INPUT=DIMS ...]
  "$PY" - "$@" <<'PYEOF'
import sys, os, numpy as np, onnx
m = onnx.load(sys.argv[1], load_external_data=False)
init = {i.name for i in m.graph.initializer}
ins = [i for i in m.graph.input if i.name not in init]
d = sys.argv[2]
os.makedirs(d + "/calib", exist_ok=True); os.makedirs(d + "/eval", exist_ok=True)
bound = dict(a.split("=", 1) for a in sys.argv[3:])
def shape(i):
    if i.name in bound:
        return [int(x) for x in bound[i.name].split("x")]
    return [x.dim_value if x.dim_value > 0 else 1 for x in i.type.tensor_type.shape.dim]
for k in range(32):
    rng = np.random.default_rng(1000 + k)
    if len(ins) == 1:
        np.save("%s/calib/%03d.npy" % (d, k), rng.standard_normal(shape(ins[0])).astype(np.float32))
    else:
        os.makedirs("%s/calib/sample_%03d" % (d, k), exist_ok=True)
        for j, i in enumerate(ins):
            np.save("%s/calib/sample_%03d/input_%d.npy" % (d, k, j),
                    rng.standard_normal(shape(i)).astype(np.float32))
for k in range(int(os.environ.get("QUANT_CALIB_EVAL", "8"))):
    rng = np.random.default_rng(5000 + k)
    for j, i in enumerate(ins):
        x = rng.standard_normal(shape(i)).astype(np.float32)
        x.tofile("%s/eval/s%d_in%d.bin" % (d, k, j))
        # The same samples for npucc's accuracy report (--eval), one sub-folder per sample.
        os.makedirs("%s/evalnpy/sample_%03d" % (d, k), exist_ok=True)
        np.save("%s/evalnpy/sample_%03d/input_%d.npy" % (d, k, j), x)
PYEOF
}

snr_of() { # dir -> prints SNR dB over all outputs and samples
  "$PY" - "$1" <<'PYEOF'
import sys, glob, numpy as np
d = sys.argv[1]
ref2 = err2 = 0.0
for f in sorted(glob.glob(d + "/s*_out*.float.bin")):
    a = np.fromfile(f, dtype=np.float32).astype(np.float64)
    b = np.fromfile(f.replace(".float.bin", ".int8.bin"), dtype=np.float32).astype(np.float64)
    ref2 += (a * a).sum(); err2 += ((a - b) ** 2).sum()
print("%.2f" % (10 * np.log10(ref2 / err2)) if err2 > 0 else "inf")
PYEOF
}

build_run() { # outdir tag evaldir
  $CC -std=c99 -O2 -Wall -Wextra -Werror -I"$1" "$1"/*.c "$T/harness.c" -o "$1/run" -lm \
    >"$1/cc.log" 2>&1 || { cat "$1/cc.log" | head -20; return 1; }
  "$1/run" "$3" "${QUANT_CALIB_EVAL:-8}" "$2"
}

# Returns 0 and prints "SNR" when everything built and ran.
eval_model() { # model.onnx name
  local m=$1 w=$T/$2 binds=() shapes=() e
  for e in ${QUANT_CALIB_SHAPES:-}; do
    [ "${e%%:*}" = "$2" ] && binds+=("${e#*:}") && shapes+=(--shape "${e#*:}")
  done
  mkdir -p "$w"
  make_samples "$m" "$w" "${binds[@]}" || return 1
  "$NPUCC" "$m" -o "$w/float" "${shapes[@]}" >/dev/null 2>"$w/float.log" ||
    { cat "$w/float.log"; return 1; }
  # --target cpu: this harness runs the C on the host without the NPU simulator (the
  # NPU path of calibrated models is scripts/run_npu_models.sh).
  "$NPUCC" "$m" -o "$w/int8" "${shapes[@]}" --target cpu --quantize int8 --calib "$w/calib" \
    --calib-method "${QUANT_CALIB_METHOD:-auto}" ${QUANT_CALIB_FLAGS:-} --eval "$w/evalnpy" --report-layers \
    --print-ir >"$w/int8.out" 2>"$w/int8.log" ||
    { tail -5 "$w/int8.log"; return 1; }
  build_run "$w/float" float "$w/eval" || return 1
  build_run "$w/int8" int8 "$w/eval" || return 1
  snr_of "$w/eval"
}

if [ -n "${QUANT_CALIB_MODELS:-}" ]; then
  for m in $QUANT_CALIB_MODELS; do
    n=$(basename "$(dirname "$m")")
    # top-1: from the accuracy report (integer interpreter, bit-exact with the C).
    s=$(eval_model "$m" "$n") && echo "$n: SNR $s dB, top-1 $("$PY" -c "
import json; r = json.load(open('$T/$n/int8/accuracy_report.json'))
t = [o for o in r['outputs'] if o.get('top1_rows')]
print(', '.join('%d/%d' % (o['top1_agreeing'], o['top1_rows']) for o in t) or '-')") ($(grep -o 'method [a-z]*, .*ops left in float.*' "$T/$n/int8.out"))" ||
      echo "$n: FAILED: $s"
  done
  exit 0
fi

MODEL=$SRC/models/tinycnn/model.onnx
snr=$(eval_model "$MODEL" tinycnn)
if [ $? -ne 0 ]; then
  fail "tinycnn: quantized compile/build/run: $snr"
else
  pass "tinycnn: float and int8 C build and run"
  if grep -q "calibrating: 32/32 samples" "$T/tinycnn/int8.log"; then
    pass "progress lines on a non-terminal stderr"
  else
    fail "no progress lines: $(head -3 "$T/tinycnn/int8.log")"
  fi
  if grep -E "= Conv\(" "$T/tinycnn/int8.log" | grep -q ": f32\["; then
    fail "a float Conv is left in the quantized graph"
  elif ! grep -E "= Conv\(" "$T/tinycnn/int8.log" | grep -q ": i8\["; then
    fail "no int8 Conv in the quantized graph (--print-ir)"
  else
    pass "every Conv is int8"
  fi
  if "$PY" -c "import sys; sys.exit(0 if float('$snr') >= 20 else 1)"; then
    pass "tinycnn int8 vs float SNR $snr dB >= 20"
  else
    fail "tinycnn int8 vs float SNR $snr dB < 20"
  fi
fi

# models/tinyunet: a Softmax over the channel axis (no integer form: it stays
# float; it used to become a typed node the lowering rejects), a Slice, a Pad
# and a nearest Resize (int8 data movement).
usnr=$(eval_model "$SRC/models/tinyunet/model.onnx" tinyunet)
if [ $? -ne 0 ]; then
  fail "tinyunet: quantized compile/build/run: $usnr"
else
  left=$(grep -o 'ops left in float: .*' "$T/tinyunet/int8.out")
  if echo "$left" | grep -q "(Softmax)" && ! echo "$left" | grep -Eq "\((Slice|Pad|Resize)\)" &&
    "$PY" -c "import sys; sys.exit(0 if float('$usnr') >= 30 else 1)"; then
    pass "tinyunet int8: SNR $usnr dB >= 30, Slice/Pad/Resize int8, channel Softmax float"
  else
    fail "tinyunet int8: SNR $usnr dB, $left"
  fi
fi

# Each method works on its own.
for meth in minmax percentile entropy mse; do
  if "$NPUCC" "$MODEL" -o "$T/m_$meth" --quantize int8 --calib "$T/tinycnn/calib" \
      --calib-method $meth 2>/dev/null | grep -q "calibration method $meth"; then
    pass "--calib-method $meth"
  else
    fail "--calib-method $meth"
  fi
done

# Channel equalization: on by default (tinycnn has one Conv -> Conv pair it applies to),
# off with --no-equalize.
eq_on=$("$NPUCC" "$MODEL" -o "$T/eq1" --quantize int8 --calib "$T/tinycnn/calib" 2>/dev/null |
  grep -o '[0-9]* activations channel-equalized')
eq_off=$("$NPUCC" "$MODEL" -o "$T/eq0" --quantize int8 --calib "$T/tinycnn/calib" --no-equalize \
  2>/dev/null | grep -o '[0-9]* activations channel-equalized')
if [ "${eq_on%% *}" -ge 1 ] 2>/dev/null && [ "$eq_off" = "0 activations channel-equalized" ]; then
  pass "channel equalization: $eq_on by default, none with --no-equalize"
else
  fail "channel equalization: '$eq_on' by default, '$eq_off' with --no-equalize"
fi

# No calibration data: a clear error naming --calib.
out=$("$NPUCC" "$MODEL" -o "$T/nocal" --quantize int8 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q -- "needs calibration data: pass --calib DIR"; then
  pass "error without --calib"
else
  fail "no clear error without --calib: $out"
fi
# --calib-random: works, with a warning.
out=$("$NPUCC" "$MODEL" -o "$T/rnd" --quantize int8 --calib-random 4 2>&1)
if [ $? -eq 0 ] && echo "$out" | grep -q "warning: --calib-random: .*accuracy is meaningless"; then
  pass "--calib-random warning"
else
  fail "--calib-random: $out"
fi
# A malformed sample is reported with its file name.
mkdir -p "$T/bad" && printf 'garbage' >"$T/bad/x.npy"
out=$("$NPUCC" "$MODEL" -o "$T/badout" --quantize int8 --calib "$T/bad" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "x.npy.*not a .npy file"; then
  pass "malformed sample named in the error"
else
  fail "malformed sample: $out"
fi
# The accuracy report (--eval, --report-layers): printed, written to OUT/, and its output SNR
# (reference interpreters) agrees with the SNR measured above on the generated C for the same
# eight samples (the int8 C is bit-exact with the integer interpreter).
rep_snr=$("$PY" -c "
import json; r = json.load(open('$T/tinycnn/int8/accuracy_report.json'))
o = r['outputs'][0]; assert len(r['layers']) >= 4, r['layers']
assert '--eval' in r['samples_origin'], r['samples_origin']
print('%.2f' % o['snr_db'])" 2>&1)
if [ $? -eq 0 ] && grep -q "^Accuracy: float vs int8 over 8 sample" "$T/tinycnn/int8.out" &&
  [ -f "$T/tinycnn/int8/accuracy_report.txt" ] &&
  "$PY" -c "import sys; sys.exit(0 if abs($rep_snr - $snr) < 0.5 else 1)"; then
  pass "accuracy report: output SNR $rep_snr dB (interpreters) vs $snr dB (generated C), per-layer rows, files in OUT/"
else
  fail "accuracy report: '$rep_snr' vs C SNR '$snr'"; head -20 "$T/tinycnn/int8.out"
fi
out=$("$NPUCC" "$MODEL" -o "$T/noq" --eval "$T/tinycnn/evalnpy" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q -- "--eval and --report-layers need --quantize int8"; then
  pass "--eval without --quantize is an error"
else
  fail "--eval without --quantize: $out"
fi

# --emit-qdq: a standard QDQ model that ONNX's checker accepts.
if "$NPUCC" "$MODEL" -o "$T/qdq" --quantize int8 --calib "$T/tinycnn/calib" \
    --emit-qdq "$T/q.onnx" >/dev/null 2>&1 &&
  "$PY" -c "
import onnx, sys
m = onnx.load('$T/q.onnx'); onnx.checker.check_model(m, full_check=True)
ops = [n.op_type for n in m.graph.node]
sys.exit(0 if ops.count('QuantizeLinear') > 0 and ops.count('DequantizeLinear') > 0 else 1)"; then
  pass "--emit-qdq writes a valid QDQ model"
else
  fail "--emit-qdq"
fi
# ... which npucc imports as a pre-quantized model into the very same C program.
if "$NPUCC" "$T/q.onnx" -o "$T/qdq2" >/dev/null 2>&1 &&
  cmp -s "$T/qdq/model.c" "$T/qdq2/model.c" &&
  cmp -s "$T/qdq/model_weights.c" "$T/qdq2/model_weights.c"; then
  pass "the --emit-qdq model compiles to the same C as --quantize"
else
  fail "the --emit-qdq model does not compile to the same C"
fi

# Quantizing for the target (issue 23): on an NPU whose conv/depthwise/matmul requantize per
# tensor only (npu-third) the calibrated convs used to fall back to the CPU (per-channel
# weights); now their weights are quantized per tensor and they run on the NPU, bit-exact with
# the interpreter, and the accuracy report states the cost against per-channel weights. On a
# shift-only requantizer (test/target/quant-shift.json: requant_mult fixed at 2^30) every
# scale is a power of two. A layer the NPU rejects for another reason keeps per-channel weights.
for tgt in npu-third quant-shift; do
  tj="$SRC/test/target/$tgt.json"
  out=$("$NPUCC" check "$SRC/models/tinycnn" --target "$tj" --quantize int8 \
          --calib "$T/tinycnn/calib" --interp-check on --tolerance-steps 255 \
          --json "$T/$tgt.json" 2>&1)
  frac=$("$PY" -c "
import json; j = json.load(open('$T/$tgt.json')); print('%.1f' % (100.0 * j['npu_macs'] / j['macs']))" 2>/dev/null)
  if echo "$out" | grep -q "tinycnn: PASS" && echo "$out" | grep -q "exact" &&
     "$PY" -c "import sys; sys.exit(0 if float('${frac:-0}') >= 99.9 else 1)"; then
    pass "$tgt: calibrated tinycnn runs $frac% of its MACs on the NPU, bit-exact with the interpreter"
  else
    fail "$tgt: calibrated tinycnn: ${frac:-?}% of MACs on the NPU"; echo "$out" | grep -v calibrating | tail -5
  fi
  "$NPUCC" "$MODEL" -o "$T/tq_$tgt" --target "$tj" --quantize int8 --calib "$T/tinycnn/calib" \
    --emit-qdq "$T/tq_$tgt.onnx" > "$T/tq_$tgt.out" 2>&1
  if grep -q "^Quantized for the target '$tgt'" "$T/tq_$tgt.out" &&
     grep -q "^  /features/features.0/Conv (Conv): per-tensor" "$T/tq_$tgt.out" &&
     grep -Eq "^  cost of the constraints on output: SNR [0-9.]+ -> [0-9.]+ dB" "$T/tq_$tgt.out" &&
     "$PY" - "$T/tq_$tgt.onnx" "$tgt" <<'PYEOF'
import sys, math, onnx
from onnx import numpy_helper as nh
m = onnx.load(sys.argv[1]); init = {i.name: nh.to_array(i) for i in m.graph.initializer}
for n in m.graph.node:
    if n.op_type != "DequantizeLinear" or not n.input[0] in init:
        continue
    s = init[n.input[1]]
    if init[n.input[0]].ndim >= 2 and s.size != 1:  # weights: one scale
        sys.exit("per-channel weights in " + n.name)
    if sys.argv[2] == "quant-shift":  # every scale a power of two
        for v in s.flatten():
            if math.frexp(float(v))[0] != 0.5:
                sys.exit("scale %r of %s is not a power of two" % (float(v), n.name))
PYEOF
  then
    pass "$tgt: per-tensor weights$([ $tgt = quant-shift ] && echo ', power-of-two scales'), the cost printed"
  else
    fail "$tgt: the quantized graph or its report"; grep -A8 "^Quantized for" "$T/tq_$tgt.out"
  fi
done
mn="$SRC/../shared/models/mnist8"
if [ -f "$mn/model.onnx" ]; then
  # mnist8's 5x5 convs are not in npu-third's kernel_sizes: they stay per-channel on the CPU;
  # only its MatMul gets per-tensor weights.
  "$NPUCC" "$mn/model.onnx" -o "$T/mn3" --target "$SRC/test/target/npu-third.json" \
    --quantize int8 --calib "$mn/test_data_set_0" > "$T/mn3.out" 2>&1
  if [ "$(grep -c ': per-tensor weights' "$T/mn3.out")" = 1 ] && grep -q "(MatMul): per-tensor" "$T/mn3.out"; then
    pass "mnist8 on npu-third: the 5x5 convs keep per-channel weights, the MatMul gets per-tensor"
  else
    fail "mnist8 on npu-third: $(grep -A6 '^Quantized for' "$T/mn3.out")"
  fi
fi

if [ $fails -ne 0 ]; then
  echo "quant_calib_test: $fails failure(s)"
  exit 1
fi
echo "quant_calib_test: all passed"
