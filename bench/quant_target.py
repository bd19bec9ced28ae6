#!/usr/bin/python3
"""quant_target.py - what quantizing for a target costs and buys (docs/quantization.md,
"Quantizing for a target").

For each model: the float model (torchvision architectures exported by PyTorch with seeded
random weights, or any ONNX model folder given with --model), seeded N(0,1) calibration
samples and one test data set (float outputs from the exporter / the folder's own), then for
each target:
  1. `npucc check DIR --target T --quantize int8 --calib CALIB --interp-check on
     --tolerance-steps 255 --json J`: the generated C on the NPU simulator, bit-exact with the
     integer interpreter (PASS/FAIL), and the share of MACs on the NPU;
  2. `npucc DIR/model.onnx -o OUT --target T --quantize int8 --calib CALIB --eval EVAL`: the
     accuracy report's output SNR of the target-constrained int8 model and of the same
     calibration without the constraints (per-channel weights), on separate evaluation
     samples.
Prints a markdown table. Needs Debian's python3-torch and python3-torchvision for the
torchvision models (export only; nothing is downloaded: random weights).

usage: bench/quant_target.py [--npucc PATH] [--targets a,b] [--models m1,m2] [--size N]
                             [--calib N] [--eval N] [--model DIR ...] [--keep DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TORCHVISION = ["squeezenet1_1", "mnasnet0_5", "mobilenet_v3_small", "shufflenet_v2_x0_5"]


def export_torchvision(name, size, out):
    import torch
    import torchvision
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)(weights=None)
    # Random weights with batch-norm statistics of their own activations (a forward pass
    # in train mode over seeded inputs, cumulative averages): without it the untrained
    # statistics (mean 0, var 1) leave mnasnet's and mobilenet's outputs near 1e-7, all
    # quantized to one value, and the accuracy comparison means nothing.
    bns = [b for b in m.modules() if isinstance(b, torch.nn.modules.batchnorm._BatchNorm)]
    if bns:
        for b in bns:
            b.reset_running_stats()
            b.momentum = None
        m.train()
        with torch.no_grad():
            m(torch.randn(16, 3, size, size, generator=torch.Generator().manual_seed(2)))
    m.eval()
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))
    os.makedirs(out + "/test_data_set_0", exist_ok=True)
    torch.onnx.export(m, x, out + "/model.onnx", opset_version=13, input_names=["input"],
                      output_names=["output"])
    with torch.no_grad():
        y = m(x)
    write_pb(x.numpy(), "input", out + "/test_data_set_0/input_0.pb")
    write_pb(y.numpy(), "output", out + "/test_data_set_0/output_0.pb")


def write_pb(a, name, path):
    from onnx import numpy_helper
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(a), name).SerializeToString())


def input_shape(model):
    import onnx
    m = onnx.load(model, load_external_data=False)
    init = {i.name for i in m.graph.initializer}
    i = [i for i in m.graph.input if i.name not in init][0]
    return [d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]


def samples(model, d, n, seed):
    shape = input_shape(model)
    os.makedirs(d, exist_ok=True)
    for k in range(n):
        x = np.random.default_rng(seed + k).standard_normal(shape).astype(np.float32)
        os.makedirs("%s/sample_%03d" % (d, k), exist_ok=True)
        np.save("%s/sample_%03d/input_0.npy" % (d, k), x)


def snr_of(report, key):
    rows = report.get(key) if key == "outputs" else report.get("target_constraints", {}).get(key)
    if not rows:
        return None
    v = rows[0]["snr_db"]
    return float("inf") if v == "inf" else float(v)


def run(npucc, mdir, target, work, calib, evals):
    tname = os.path.basename(target).replace(".json", "")
    jpath = "%s/%s.check.json" % (work, tname)
    chk = subprocess.run([npucc, "check", mdir, "--target", target, "--quantize", "int8",
                          "--calib", calib, "--interp-check", "on", "--tolerance-steps", "255",
                          "--json", jpath], capture_output=True, text=True)
    frac = None
    if os.path.exists(jpath):
        j = json.load(open(jpath))
        frac = 100.0 * j["npu_macs"] / j["macs"] if j.get("macs") else 0.0
    out = "%s/%s.out" % (work, tname)
    cmp_ = subprocess.run([npucc, mdir + "/model.onnx", "-o", out, "--target", target,
                           "--quantize", "int8", "--calib", calib, "--eval", evals],
                          capture_output=True, text=True)
    rep = {}
    if cmp_.returncode == 0:
        rep = json.load(open(out + "/accuracy_report.json"))
    constrained = len(rep.get("target_constraints", {}).get("constraints", []))
    return {"pass": chk.returncode == 0, "frac": frac, "snr": snr_of(rep, "outputs"),
            "snr_free": snr_of(rep, "unconstrained_outputs"), "constrained": constrained,
            "err": (chk.stdout + chk.stderr)[-400:] if chk.returncode else ""}


def fmt(v, f="%.2f"):
    return "-" if v is None else (f % v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--npucc", default=ROOT + "/build/tools/npucc/npucc")
    ap.add_argument("--targets", default="npu-default,%s/test/target/npu-third.json,"
                    "%s/test/target/quant-shift.json" % (ROOT, ROOT))
    ap.add_argument("--models", default=",".join(TORCHVISION))
    ap.add_argument("--model", action="append", default=[], help="an ONNX model folder")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--calib", type=int, default=16)
    ap.add_argument("--eval", type=int, default=8)
    ap.add_argument("--keep", default="")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="npucc-quant-target-")
    dirs = []
    for name in [m for m in a.models.split(",") if m]:
        d = "%s/%s" % (work, name)
        if not os.path.exists(d + "/model.onnx"):
            export_torchvision(name, a.size, d)
        dirs.append(d)
    dirs += a.model
    print("| model | target | MACs on the NPU | check (bit-exact, 0 hazards) | layers constrained "
          "| output SNR dB, constrained | without the constraints | cost dB |")
    print("|---|---|---|---|---|---|---|---|")
    for d in dirs:
        name = os.path.basename(d.rstrip("/"))
        w = "%s/%s.runs" % (work, name)
        os.makedirs(w, exist_ok=True)
        samples(d + "/model.onnx", w + "/calib", a.calib, 1000)
        samples(d + "/model.onnx", w + "/eval", a.eval, 5000)
        for t in a.targets.split(","):
            r = run(a.npucc, d, t, w, w + "/calib", w + "/eval")
            cost = (r["snr"] - r["snr_free"]) if r["snr"] is not None and r["snr_free"] is not None \
                else None
            print("| %s | %s | %s%% | %s | %d | %s | %s | %s |" % (
                name, os.path.basename(t).replace(".json", ""), fmt(r["frac"], "%.1f"),
                "PASS" if r["pass"] else "FAIL", r["constrained"], fmt(r["snr"]),
                fmt(r["snr_free"]), fmt(cost, "%+.2f")), flush=True)
            if r["err"]:
                print("    " + r["err"].replace("\n", "\n    "), file=sys.stderr)
    print("(work folder: %s)" % work, file=sys.stderr)


if __name__ == "__main__":
    main()
