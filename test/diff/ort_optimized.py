#!/usr/bin/python3
"""ort_optimized.py - how often ONNX Runtime's optimized run differs from its unoptimized one
(the ONNX semantics) on the differential tier's random models (docs/testing.md,
"Differential testing"). npucc's golden data is taken with optimizations disabled; this
script measures what taking it the usual way (optimizations on) would change.

usage: test/diff/ort_optimized.py [--seed S] [--int8 N] [--float M] [--out DIR]
Prints the number of models whose outputs differ, and for each differing model its ops and
the largest |difference| over its outputs (in the output's own unit: float or integer).
Needs ONNX Runtime for node (NPUCC_ORT_NODE_MODULES, default bench/node_modules).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import diffgen  # noqa: E402
import diffrun  # noqa: E402


def outputs(case):
    r = []
    for p in sorted(glob.glob(os.path.join(case, "test_data_set_0", "output_*.pb"))):
        t = TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        r.append(numpy_helper.to_array(t))
    return r


def largest_difference(a, b):
    """The largest |a - b| over the outputs (inf when the shapes differ)."""
    worst = 0.0
    for x, y in zip(a, b):
        if x.shape != y.shape:
            return float("inf")
        d = np.abs(x.astype(np.float64) - y.astype(np.float64))
        worst = max(worst, float(d.max()) if d.size else 0.0)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--int8", type=int, default=200)
    ap.add_argument("--float", type=int, default=0)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    if not diffrun.ort_available():
        print("ort_optimized: ONNX Runtime for node not found", file=sys.stderr)
        return 2
    out = a.out or tempfile.mkdtemp(prefix="npucc-ort-opt-")
    plain, opt = os.path.join(out, "disabled"), os.path.join(out, "optimized")
    shutil.rmtree(out, ignore_errors=True)
    names = diffgen.generate(plain, a.seed, a.int8, "int8")
    names += diffgen.generate(plain, a.seed + a.int8, a.float, "float")
    shutil.copytree(plain, opt)
    refused = diffrun.take_golden([os.path.join(plain, n) for n in names])
    crashed = []
    for n in names:  # one process a model: the optimized run crashes on some models
        try:
            refused.update(diffrun.take_golden([os.path.join(opt, n)], optimized=True))
        except subprocess.CalledProcessError as e:
            crashed.append((n, e.returncode))
            refused[os.path.join(opt, n)] = "crashed"
    differ = []
    for n in names:
        if os.path.join(plain, n) in refused or os.path.join(opt, n) in refused:
            continue
        d = largest_difference(outputs(os.path.join(plain, n)), outputs(os.path.join(opt, n)))
        if d > 0:
            differ.append((n, d))
    print("models: %d (%d int8, %d float); ONNX Runtime refused %d; the optimized run crashed "
          "on %d; optimized differs from unoptimized on %d"
          % (len(names), a.int8, a.float, len(refused) - len(crashed), len(crashed), len(differ)))
    for n, rc in crashed:
        with open(os.path.join(plain, n, "spec.json")) as f:
            spec = json.load(f)
        print("  %s: optimized run died (exit %d): %s" % (n, rc, diffgen.describe(spec)))
    for n, d in differ:
        with open(os.path.join(plain, n, "spec.json")) as f:
            spec = json.load(f)
        print("  %s: largest difference %g: %s" % (n, d, diffgen.describe(spec)))
    if not a.out:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
