#!/usr/bin/python3
"""Benchmark npucc-generated C against ONNX Runtime (CPU, one thread) on the same inputs.

For every model (the float models in ../shared/models plus the project's models/*):
  1. compile it with npucc (wall-clock compile time),
  2. build the generated C with bench/bench_main.c at -O2 and time <prefix>_run in a loop,
     checking the last run's outputs against the model's golden test_data_set_0,
  3. time the same inputs in ONNX Runtime (npm onnxruntime-node, bench/ort_bench.js),
and print a markdown table.  Results go to bench/results/<UTC timestamp>/ (git-ignored).

usage: /usr/bin/python3 bench/run.py [--npucc PATH] [--shared DIR] [--models a,b,...]
                                     [--min-ms MS] [--cc CC] [--cflags FLAGS] [--skip-ort]
Needs Debian's python3-onnx and python3-numpy; node + `npm install --ignore-scripts` in bench/.
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED_FLOAT = ["mnist8", "onnx2c_atmega_mnist", "ali_ad_f32", "ali_ic_f32", "ali_kws_f32",
                "ali_vww_f32", "mlpt_vww_f32", "blazeface_front128"]
ORT_TYPES = {np.float32: "float32", np.float64: "float64", np.int8: "int8", np.uint8: "uint8",
             np.int16: "int16", np.uint16: "uint16", np.int32: "int32", np.uint32: "uint32",
             np.int64: "int64", np.uint64: "uint64", np.bool_: "bool"}
PREFIX = "net"


def findNpucc(explicit):
    if explicit:
        return explicit
    cands = [os.path.join(ROOT, "build", "tools", "npucc", "npucc")]
    cands += sorted(glob.glob(os.path.join(ROOT, "build-*", "tools", "npucc", "npucc")))
    for c in cands:
        if os.access(c, os.X_OK):
            return c
    return shutil.which("npucc")


def modelList(args):
    found = []
    if os.path.isdir(args.shared):
        for n in SHARED_FLOAT:
            if os.path.exists(os.path.join(args.shared, n, "model.onnx")):
                found.append((n, os.path.join(args.shared, n)))
    else:
        print(f"note: shared models dir {args.shared} not found, skipping it", file=sys.stderr)
    for d in sorted(glob.glob(os.path.join(ROOT, "models", "*", "model.onnx"))):
        d = os.path.dirname(d)
        found.append((os.path.basename(d), d))
    if args.models:
        want = args.models.split(",")
        found = [m for m in found if m[0] in want]
    return found


def loadCase(modelDir):
    """Graph inputs (minus initializers), test inputs and golden outputs of test_data_set_0."""
    m = onnx.load(os.path.join(modelDir, "model.onnx"), load_external_data=False)
    init = {i.name for i in m.graph.initializer}
    graphInputs = [i for i in m.graph.input if i.name not in init]
    ds = os.path.join(modelDir, "test_data_set_0")
    ins = [numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, f"input_{k}.pb")))
           for k in range(len(graphInputs))]
    outs = []
    k = 0
    while os.path.exists(os.path.join(ds, f"output_{k}.pb")):
        outs.append(numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, f"output_{k}.pb"))))
        k += 1
    shapeFlags = []
    for vi, arr in zip(graphInputs, ins):
        dims = vi.type.tensor_type.shape.dim
        if any(not d.dim_value for d in dims) or len(dims) != arr.ndim:
            shapeFlags += ["--shape", f"{vi.name}=" + "x".join(str(s) for s in arr.shape)]
    return graphInputs, ins, outs, shapeFlags


def run(cmd, cwd=None, timeout=1800):
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - t0


def firstLine(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[0][:160] if lines else ""


def headerInt(genDir, pattern):
    for h in glob.glob(os.path.join(genDir, "*.h")):
        mm = re.search(r"#define\s+\w*" + pattern + r"\s+\(?\s*(\d+)", open(h).read())
        if mm:
            return int(mm.group(1))
    return None


def objectDataBytes(obj):
    """Bytes of data sections (.rodata*, .data*) in an object file, via binutils `size -A`."""
    p = subprocess.run(["size", "-A", obj], capture_output=True, text=True)
    total = 0
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and re.match(r"^\.(rodata|data|ldata|lrodata)", parts[0]):
            total += int(parts[1])
    return total


def relErr(got, ref):
    ref = ref.astype(np.float64)
    got = got.astype(np.float64)
    scale = max(float(np.max(np.abs(ref))) if ref.size else 0.0, 1e-30)
    return float(np.max(np.abs(got - ref))) / scale if ref.size else 0.0


def benchNpucc(name, modelDir, work, case, args, row):
    graphInputs, ins, outs, shapeFlags = case
    gen = os.path.join(work, "gen")
    shutil.rmtree(gen, ignore_errors=True)
    cmd = [args.npucc, os.path.join(modelDir, "model.onnx"), "-o", gen, "--prefix", PREFIX]
    cmd += shapeFlags + shlex.split(args.npucc_flags)
    p, secs = run(cmd)
    open(os.path.join(work, "npucc.log"), "w").write(p.stdout + p.stderr)
    if p.returncode != 0:
        row["note"] = "npucc failed: " + firstLine(p.stderr or p.stdout)
        return
    row["compile_s"] = secs
    arena = headerInt(gen, "ARENA_BYTES")
    if arena is None:
        mm = re.search(r"arena\D{0,20}(\d+)", p.stdout + p.stderr, re.I)
        arena = int(mm.group(1)) if mm else None
    row["arena_bytes"] = arena
    weights = headerInt(gen, "WEIGHTS?_BYTES")
    if weights is None:
        mm = re.search(r"weights?\D{0,20}(\d+)\s*bytes", p.stdout + p.stderr, re.I)
        weights = int(mm.group(1)) if mm else None
    wsrc = os.path.join(gen, f"{PREFIX}_weights.c")
    if weights is None and os.path.exists(wsrc):
        obj = os.path.join(work, "weights.o")
        q, _ = run(shlex.split(args.cc) + ["-c", "-O2", "-I", gen, wsrc, "-o", obj])
        weights = objectDataBytes(obj) if q.returncode == 0 else None
    row["weight_bytes"] = weights

    exe = os.path.join(work, "bench")
    srcs = sorted(glob.glob(os.path.join(gen, "*.c")))
    cmd = shlex.split(args.cc) + shlex.split(args.cflags) + [
        f'-DNPUCC_BENCH_HEADER="{PREFIX}.h"', f"-DNPUCC_BENCH_RUN={PREFIX}_run", "-I", gen,
        os.path.join(HERE, "bench_main.c")] + srcs + ["-lm", "-o", exe]
    p, _ = run(cmd)
    open(os.path.join(work, "build.log"), "w").write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    if p.returncode != 0:
        row["note"] = "C build failed: " + firstLine(p.stderr)
        return
    cmd = [exe, "-t", str(args.min_ms), "-n", str(args.iters)]
    for k in range(len(ins)):
        cmd += ["-i", os.path.join(work, f"in_{k}.bin")]
    for k, o in enumerate(outs):
        cmd += ["-o", f"{o.nbytes}:" + os.path.join(work, f"npucc_out_{k}.bin")]
    p, _ = run(cmd)
    mm = re.search(r"ns_per_iter=([\d.]+)", p.stdout)
    if p.returncode != 0 or not mm:
        row["note"] = f"bench run failed (exit {p.returncode}): " + firstLine(p.stderr + p.stdout)
        return
    row["npucc_ms"] = float(mm.group(1)) / 1e6
    errs = []
    for k, o in enumerate(outs):
        got = np.fromfile(os.path.join(work, f"npucc_out_{k}.bin"), dtype=o.dtype).reshape(o.shape)
        errs.append(relErr(got, o))
    row["max_rel_err"] = max(errs) if errs else None
    if row["max_rel_err"] is not None and row["max_rel_err"] > args.tolerance:
        row["note"] = f"npucc output differs from golden (rel err {row['max_rel_err']:.1e})"


def benchOrt(name, modelDir, work, case, args, row):
    graphInputs, ins, outs, _ = case
    spec = {"model": os.path.join(modelDir, "model.onnx"), "warmup": 5, "iters": args.iters,
            "minMs": args.min_ms, "outdir": os.path.join(work, "ort_out"), "inputs": []}
    for k, (vi, arr) in enumerate(zip(graphInputs, ins)):
        spec["inputs"].append({"name": vi.name, "type": ORT_TYPES[arr.dtype.type],
                               "shape": list(arr.shape), "file": os.path.join(work, f"in_{k}.bin")})
    sp = os.path.join(work, "ort_spec.json")
    json.dump(spec, open(sp, "w"))
    p, _ = run(["node", os.path.join(HERE, "ort_bench.js"), sp])
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res = {"ok": False, "error": firstLine(p.stderr)}
    if not res.get("ok"):
        row["note"] = (row.get("note", "") + " ORT failed: " + res.get("error", "")).strip()
        return
    row["ort_ms"] = res["msPerRun"]
    meta = json.load(open(os.path.join(spec["outdir"], "meta.json")))
    errs = []
    for k, (o, mt) in enumerate(zip(outs, meta)):
        got = np.fromfile(os.path.join(spec["outdir"], f"out_{k}.bin"), dtype=o.dtype)
        errs.append(relErr(got.reshape(o.shape), o))
    row["ort_rel_err"] = max(errs) if errs else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def table(rows):
    lines = ["| model | npucc ms | ORT ms | ratio (npucc/ORT) | compile s | weight bytes "
             "| arena bytes | npucc max rel err | ORT max rel err | note |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        ratio = (r["npucc_ms"] / r["ort_ms"] if r.get("npucc_ms") is not None
                 and r.get("ort_ms") else None)
        lines.append("| " + " | ".join([
            r["model"], fmt(r.get("npucc_ms"), ".4f"), fmt(r.get("ort_ms"), ".4f"),
            fmt(ratio, ".2f"), fmt(r.get("compile_s"), ".2f"), fmt(r.get("weight_bytes"), "d"),
            fmt(r.get("arena_bytes"), "d"), fmt(r.get("max_rel_err"), ".1e"),
            fmt(r.get("ort_rel_err"), ".1e"), r.get("note", "")]) + " |")
    return "\n".join(lines)


def environment(args):
    info = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        cpu = [l for l in open("/proc/cpuinfo") if l.startswith("model name")]
        info["cpu"] = cpu[0].split(":", 1)[1].strip() if cpu else "?"
    except OSError:
        info["cpu"] = "?"
    p = subprocess.run(shlex.split(args.cc) + ["--version"], capture_output=True, text=True)
    info["cc"] = firstLine(p.stdout)
    info["cflags"] = args.cflags
    try:
        pkg = json.load(open(os.path.join(HERE, "node_modules", "onnxruntime-node", "package.json")))
        info["onnxruntime_node"] = pkg.get("version")
    except OSError:
        info["onnxruntime_node"] = None
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                       text=True)
    info["npucc_rev"] = p.stdout.strip() or "?"
    info["npucc"] = args.npucc
    return info


def main():
    ap = argparse.ArgumentParser(description="npucc vs ONNX Runtime benchmark")
    ap.add_argument("--npucc", help="npucc binary (default: build*/tools/npucc/npucc)")
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--models", help="comma-separated subset of model names")
    ap.add_argument("--min-ms", type=float, default=500.0, help="minimum timed ms per model")
    ap.add_argument("--iters", type=int, default=20, help="minimum timed iterations")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="-O2 -std=c99")
    ap.add_argument("--npucc-flags", default="", help="extra flags for npucc compile")
    ap.add_argument("--tolerance", type=float, default=1e-3,
                    help="flag npucc outputs whose max error relative to max|ref| exceeds this")
    ap.add_argument("--skip-ort", action="store_true")
    ap.add_argument("--skip-npucc", action="store_true")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    args.shared = os.path.abspath(args.shared)
    args.npucc = findNpucc(args.npucc)
    if args.npucc:
        args.npucc = os.path.abspath(args.npucc)
    if not args.skip_npucc and not args.npucc:
        sys.exit("npucc binary not found: build it or pass --npucc (or use --skip-npucc)")
    if not args.skip_ort and not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        sys.exit("onnxruntime-node missing: run (cd bench && npm ci --ignore-scripts)")

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    outRoot = os.path.join(args.results, stamp)
    os.makedirs(outRoot, exist_ok=True)
    env = environment(args)
    rows = []
    for name, d in modelList(args):
        work = os.path.join(outRoot, name)
        os.makedirs(work, exist_ok=True)
        row = {"model": name, "dir": d}
        try:
            case = loadCase(d)
            for k, arr in enumerate(case[1]):
                arr.tofile(os.path.join(work, f"in_{k}.bin"))
            if not args.skip_npucc:
                benchNpucc(name, d, work, case, args, row)
            if not args.skip_ort:
                benchOrt(name, d, work, case, args, row)
        except (subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
            row["note"] = (row.get("note", "") + f" error: {e}").strip()
        rows.append(row)
        print(f"{name}: npucc {fmt(row.get('npucc_ms'), '.4f')} ms, ORT "
              f"{fmt(row.get('ort_ms'), '.4f')} ms {row.get('note', '')}", file=sys.stderr)
    md = table(rows)
    header = ("npucc vs ONNX Runtime, one thread. " + ", ".join(f"{k}: {v}" for k, v in env.items()))
    json.dump({"environment": env, "rows": rows}, open(os.path.join(outRoot, "results.json"), "w"),
              indent=1)
    open(os.path.join(outRoot, "results.md"), "w").write(header + "\n\n" + md + "\n")
    print(header + "\n")
    print(md)
    print(f"\nresults written to {outRoot}", file=sys.stderr)
    failed = [r for r in rows if r.get("note")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
