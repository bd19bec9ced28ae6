#!/usr/bin/python3
"""Make models/tinycnn_int8: the bundled int8 (QDQ) model of the quick start.

1. npucc quantizes models/tinycnn (float, exported from PyTorch) with its own test
   input as calibration data and writes the quantized graph as a standard QDQ ONNX
   model (--emit-qdq);
2. the golden output is ONNX Runtime's (onnxruntime-node from bench/node_modules, CPU,
   one thread) on that QDQ model for tinycnn's test input: a reference npucc did not
   compute.

usage: /usr/bin/python3 scripts/make_int8_model.py NPUCC [--out models/tinycnn_int8]
Needs Debian's python3-onnx and python3-numpy, node and bench/node_modules (scripts/test.sh
installs them).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RUN_ORT = r"""
const ort = require('onnxruntime-node');
const fs = require('fs');
(async () => {
  const [model, name, shapeText, input, output] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model, {executionProviders: ['cpu'],
                                                      intraOpNumThreads: 1, interOpNumThreads: 1});
  const b = fs.readFileSync(input);
  const x = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const feeds = {};
  feeds[name] = new ort.Tensor('float32', x, shapeText.split('x').map(Number));
  const r = await s.run(feeds);
  const y = r[s.outputNames[0]];
  if (y.type !== 'float32') throw new Error('expected a float32 output, got ' + y.type);
  fs.writeFileSync(output, Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
  console.log(s.outputNames[0] + ' ' + y.dims.join('x'));
})().catch(e => { console.error(e.message); process.exit(1); });
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("npucc")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "tinycnn_int8"))
    a = ap.parse_args()
    src = os.path.join(ROOT, "models", "tinycnn")
    data = os.path.join(src, "test_data_set_0")
    os.makedirs(os.path.join(a.out, "test_data_set_0"), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        qdq = os.path.join(a.out, "model.onnx")
        subprocess.run([a.npucc, os.path.join(src, "model.onnx"), "-o", os.path.join(tmp, "c"),
                        "--target", "cpu", "--quantize", "int8", "--calib", data,
                        "--emit-qdq", qdq], check=True, stdout=subprocess.DEVNULL)
        t = onnx.load_tensor(os.path.join(data, "input_0.pb"))
        x = numpy_helper.to_array(t).astype(np.float32)
        m = onnx.load(qdq)
        name = m.graph.input[0].name
        raw_in, raw_out = os.path.join(tmp, "in.bin"), os.path.join(tmp, "out.bin")
        x.tofile(raw_in)
        js = os.path.join(tmp, "run.js")
        open(js, "w").write(RUN_ORT)
        env = dict(os.environ, NODE_PATH=os.path.join(ROOT, "bench", "node_modules"))
        r = subprocess.run(["node", js, qdq, name, "x".join(str(d) for d in x.shape), raw_in,
                            raw_out], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("ONNX Runtime failed: " + r.stderr.strip())
        out_name, dims = r.stdout.split()
        y = np.fromfile(raw_out, dtype=np.float32).reshape([int(d) for d in dims.split("x")])
        ds = os.path.join(a.out, "test_data_set_0")
        shutil.copy(os.path.join(data, "input_0.pb"), os.path.join(ds, "input_0.pb"))
        with open(os.path.join(ds, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, out_name).SerializeToString())
    print("wrote", a.out, "(golden output from ONNX Runtime)")


if __name__ == "__main__":
    main()
