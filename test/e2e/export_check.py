#!/usr/bin/python3
"""export_check.py - Independent check of an ONNX model written by npucc's exporter.

Usage: export_check.py MODEL.onnx TEST_DATA_SET_DIR [--tol REL] [--quant-steps N]

1. Python onnx (not npucc's C++ code): onnx.checker.check_model(full_check=True).
2. Runs the model in an independent runtime and compares with the golden
   output_K.pb of TEST_DATA_SET_DIR:
   - onnx.reference.ReferenceEvaluator when the installed onnx has it (>= 1.13);
   - else ONNX Runtime's Node.js binding (onnxruntime-node) when `node` can
     load it (NODE_PATH, or NPUCC_ORT_NODE_MODULES=/dir/node_modules).
   A float output passes when max|got-want| <= tol * max(1, max|want|)
   (--quant-steps N: or when at most 1% of elements differ, each by at most
   N times the smallest nonzero difference of the golden values, i.e. a
   quantization step).
Exit: 0 ok, 1 mismatch/invalid model, 77 no runtime (the checker still ran
and passed; 1 instead when the environment variable CI is set, the rule of
test/e2e/ci_skip.sh: docs/testing.md, "Skips and CI").
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

JS_RUNNER = r"""
const ort = require('onnxruntime-node');
const fs = require('fs');
const spec = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const ctors = {float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int32: Int32Array,
               int64: BigInt64Array, float64: Float64Array};
(async () => {
  const sess = await ort.InferenceSession.create(spec.model, {graphOptimizationLevel: 'disabled'});
  const feeds = {};
  for (const inp of spec.inputs) {
    const buf = fs.readFileSync(inp.file);
    const C = ctors[inp.dtype];
    const arr = new C(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    feeds[inp.name] = new ort.Tensor(inp.dtype, arr, inp.dims);
  }
  const res = await sess.run(feeds);
  const out = [];
  for (const name of sess.outputNames) {
    const t = res[name];
    const file = spec.outdir + '/' + out.length + '.bin';
    fs.writeFileSync(file, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    out.push({name: name, dtype: t.type, dims: t.dims, file: file});
  }
  fs.writeFileSync(spec.outdir + '/outputs.json', JSON.stringify(out));
})().catch(e => { console.error(String(e)); process.exit(1); });
"""


def read_set(d, kind):
    r = []
    for p in sorted(glob.glob(os.path.join(d, kind + "_*.pb")),
                    key=lambda s: int(s.rsplit("_", 1)[1].split(".")[0])):
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        r.append(numpy_helper.to_array(t))
    return r


def run_reference(model, feeds):
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        return None, "onnx %s has no onnx.reference" % onnx.__version__
    sess = ReferenceEvaluator(model)
    return sess.run(None, feeds), "onnx.reference"


def run_ort_node(path, feeds):
    env = dict(os.environ)
    extra = os.environ.get("NPUCC_ORT_NODE_MODULES")
    if extra:
        env["NODE_PATH"] = extra + (":" + env["NODE_PATH"] if env.get("NODE_PATH") else "")
    try:
        probe = subprocess.run(["node", "-e", "require('onnxruntime-node')"], env=env,
                               capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None, "no node"
    if probe.returncode != 0:
        return None, "node cannot load onnxruntime-node"
    with tempfile.TemporaryDirectory() as tmp:
        spec = {"model": os.path.abspath(path), "outdir": tmp, "inputs": []}
        for i, (name, arr) in enumerate(feeds.items()):
            f = os.path.join(tmp, "in%d.bin" % i)
            np.ascontiguousarray(arr).tofile(f)
            spec["inputs"].append({"name": name, "dtype": str(arr.dtype),
                                   "dims": list(arr.shape), "file": f})
        with open(os.path.join(tmp, "spec.json"), "w") as f:
            json.dump(spec, f)
        r = subprocess.run(["node", "-e", JS_RUNNER, os.path.join(tmp, "spec.json")], env=env,
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            print("FAIL: onnxruntime-node could not run the model: " + r.stderr.strip())
            sys.exit(1)
        with open(os.path.join(tmp, "outputs.json")) as f:
            outs = json.load(f)
        types = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int32": np.int32,
                 "int64": np.int64, "float64": np.float64}
        got = [np.fromfile(o["file"], dtype=types[o["type"] if "type" in o else o["dtype"]])
               .reshape(o["dims"]) for o in outs]
    return got, "onnxruntime-node"


def close(got, want, tol, quant_steps):
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    diff = np.abs(g - w)
    scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
    worst = float(diff.max()) if diff.size else 0.0
    if worst <= tol * scale:
        return True, "max diff %.3g" % worst
    if quant_steps:
        u = np.unique(w)
        step = float(np.min(np.diff(u))) if u.size > 1 else 0.0
        bad = diff > 1e-6 * scale
        if step > 0 and worst <= quant_steps * step * 1.001 and bad.mean() <= 0.01:
            return True, "max diff %.3g = %.2f steps at %d elements" % (
                worst, worst / step, int(bad.sum()))
    return False, "max diff %.3g (tolerance %.3g)" % (worst, tol * scale)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("data")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--quant-steps", type=float, default=0)
    a = ap.parse_args()

    model = onnx.load(a.model)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # onnx raises several checker/inference types
        print("FAIL: python onnx checker: %s" % str(e).splitlines()[0])
        return 1
    print("ok: python onnx %s checker (full_check) accepts %s" % (onnx.__version__, a.model))

    inits = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    inputs = read_set(a.data, "input")
    wants = read_set(a.data, "output")
    if len(inputs) != len(names) or not wants:
        print("FAIL: %d inputs in %s for %d graph inputs" % (len(inputs), a.data, len(names)))
        return 1
    feeds = dict(zip(names, inputs))
    got, why = run_reference(model, feeds)
    if got is None:
        got, why2 = run_ort_node(a.model, feeds)
        if got is None:
            reason = "no independent runtime (%s; %s)" % (why, why2)
            if os.environ.get("CI"):
                print("FAIL: %s (CI is set: a test that cannot run fails the run)" % reason)
                return 1
            print("SKIP: " + reason)
            return 77
        why = why2
    if len(got) != len(wants):
        print("FAIL: %s gave %d outputs, want %d" % (why, len(got), len(wants)))
        return 1
    ok = True
    for k, (g, w) in enumerate(zip(got, wants)):
        good, msg = close(np.asarray(g), w, a.tol, a.quant_steps)
        print("%s: %s output %d (%s): %s" % ("ok" if good else "FAIL", why, k,
                                             model.graph.output[k].name, msg))
        ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
