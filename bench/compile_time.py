#!/usr/bin/python3
"""Compile time of npucc against model size (docs/benchmarks.md, "Compile time").

Builds chains of N nodes (Relu, Identity, or Conv+Relu pairs) with python3-onnx, compiles each
with `npucc MODEL.onnx -o OUT` and prints the wall time per size and the ratio to the
smallest size. A linear compiler gives ratios close to the size ratios (10x nodes,
about 10x time); a quadratic one gives their squares. Wall time also grows with cache and
allocator behaviour on large inputs; `--instructions` adds the executed instructions counted
by valgrind's callgrind, which do not depend on load or caches. Reports only: no pass/fail.

    /usr/bin/python3 bench/compile_time.py --npucc build/tools/npucc/npucc
    /usr/bin/python3 bench/compile_time.py --npucc ... --sizes 2000,20000 --kind relu
    /usr/bin/python3 bench/compile_time.py --npucc ... --sizes 5000,20000 --kind conv --instructions
    /usr/bin/python3 bench/compile_time.py --npucc ... --model models/mobilenetv2/model.onnx
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto as T
from onnx import helper as h


def op_chain(n, op="Relu"):
    """x[1,16] -> op -> op -> ... (n nodes) -> y."""
    nodes = [h.make_node(op, ["x" if i == 0 else "v%d" % (i - 1)],
                         ["y" if i == n - 1 else "v%d" % i], name="%s%d" % (op.lower(), i))
             for i in range(n)]
    g = h.make_graph(nodes, "chain", [h.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 16])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def conv_chain(n):
    """n/2 Conv(3x3, 4 channels)+Relu pairs on a 1x4x8x8 input (weights per conv)."""
    rng = np.random.RandomState(0)
    nodes, inits, cur = [], [], "x"
    for i in range(n // 2):
        w = "w%d" % i
        inits.append(onnx.numpy_helper.from_array(
            (rng.randn(4, 4, 3, 3) * 0.1).astype(np.float32), w))
        nodes.append(h.make_node("Conv", [cur, w], ["c%d" % i], name="conv%d" % i,
                                 pads=[1, 1, 1, 1]))
        out = "y" if i == n // 2 - 1 else "r%d" % i
        nodes.append(h.make_node("Relu", ["c%d" % i], [out], name="relu%d" % i))
        cur = out
    g = h.make_graph(nodes, "convs", [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 8, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 8, 8])], initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def time_compile(npucc, model, out, repeat, flags):
    best = None
    for _ in range(repeat):
        t0 = time.monotonic()
        r = subprocess.run([npucc, model, "-o", out] + flags, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        dt = time.monotonic() - t0
        if r.returncode != 0:
            sys.exit("npucc failed on %s:\n%s" % (model, r.stderr))
        best = dt if best is None else min(best, dt)
    return best


def count_instructions(npucc, model, out, flags):
    """Instructions executed by one compile, counted by valgrind's callgrind (deterministic:
    it does not depend on the machine's load or its caches)."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        npucc, model, "-o", out] + flags, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("npucc failed under valgrind on %s:\n%s" % (model, r.stderr))
    m = re.search(r"Collected : (\d+)", r.stderr)
    if not m:
        sys.exit("no instruction count in valgrind's output:\n%s" % r.stderr)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npucc", default="build/tools/npucc/npucc")
    ap.add_argument("--sizes", default="2000,20000", help="chain lengths (nodes)")
    ap.add_argument("--kind", default="relu", choices=["relu", "identity", "conv"])
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs per size")
    ap.add_argument("--model", action="append", default=[],
                    help="also time these ONNX models (no ratio)")
    ap.add_argument("--instructions", action="store_true",
                    help="also count executed instructions (valgrind callgrind; slow)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    make = {"relu": op_chain, "identity": lambda n: op_chain(n, "Identity"),
            "conv": conv_chain}[args.kind]
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for n in sizes:
            path = os.path.join(tmp, "%s%d.onnx" % (args.kind, n))
            onnx.save(make(n), path)
            out = os.path.join(tmp, "out")
            t = time_compile(args.npucc, path, out, args.repeat, [])
            ins = count_instructions(args.npucc, path, out, []) if args.instructions else None
            rows.append((n, t, ins))
        head = "| %s chain nodes | compile s | time ratio | size ratio |" % args.kind
        rule = "|---|---|---|---|"
        if args.instructions:
            head += " instructions | instruction ratio |"
            rule += "---|---|"
        print(head)
        print(rule)
        n0, t0, i0 = rows[0]
        for n, t, ins in rows:
            line = "| %d | %.3f | %.1f | %.1f |" % (n, t, t / t0 if t0 > 0 else 0, n / n0)
            if ins is not None:
                line += " %d | %.2f |" % (ins, ins / i0)
            print(line)
        for m in args.model:
            t = time_compile(args.npucc, m, os.path.join(tmp, "out"), args.repeat, [])
            print("| %s | %.3f | | |" % (m, t))


if __name__ == "__main__":
    main()
