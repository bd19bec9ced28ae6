#!/usr/bin/python3
"""cpu_cost_fit.py: fits npucc's CPU cost model (lib/lower/cpu/CpuCost.def) to the per-call
QEMU instruction counts of a bench/mcu_bench.sh run, and states its error (docs/benchmarks.md,
"CPU cost model").

    bench/mcu_bench.sh --opts O2 --variant 'fast|||' --out RUN   # the counts (-O2, default kernels)
    bench/cpu_cost_fit.py RUN --npucc build/tools/npucc/npucc [--write lib/lower/cpu/CpuCost.def]

For every model of RUN/rows.json the script recompiles the model as mcu_bench did (`--target
cpu`; the run function, hence the NPUCC_LAYER_HOOK indices, is the same) and reads the work
npucc attributes to each call from report.json's `cpu_calls` (the node's MACs without all-zero
output channels, output and input elements: the features the compiler's estimate uses). Per
kernel and core it fits `instructions = base + mac * MACs + out * output elements + in * input
elements + w * weight elements` by least squares on relative error: the subset of features
with non-negative coefficients and the smallest error (an extra feature must gain 10%; a subset
needs 2 more distinct calls than features; with fewer than 3 distinct calls, or when nothing
else fits, the family's main feature alone (MACs for
convolution / Gemm / MatMul kernels, input elements for pools and reductions, output elements
otherwise, the rule of lib/lower/cpu/CpuCost.cpp); family fallback rows pool the kernels of a
family. The error is stated two ways: in-sample (the table as written) and
leave-one-model-out (each model estimated with rows fitted on the other models only; a kernel
seen in no other model uses its family's fallback), per call and per model total. Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CORES = [("cortex-m4", "M4"), ("rv32", "Rv")]


def family(kernel):
    """The fallback family and work kind of a kernel (lib/lower/cpu/CpuCost.cpp, familyOf)."""
    if kernel in ("memcpy", "memset"):
        return "copy", "Out"
    f32 = "_f32" in kernel
    if any(p in kernel for p in ("conv", "gemm", "matmul", "fc_")):
        return ("mac_f32" if f32 else "mac_s8"), "Macs"
    if "pool" in kernel or "reduce" in kernel:
        return ("pool_f32" if f32 else "pool_s8"), "In"
    if any(p in kernel for p in ("copy", "transpose", "concat", "gather", "slice", "pad", "fill")):
        return "copy", "Out"
    return ("elementwise_f32" if f32 else "elementwise_s8"), "Out"


FEATURES = ["base", "macs", "out_elements", "in_elements", "weight_elements"]


def feats(s):
    return [1.0, float(s["macs"]), float(s["out_elements"]), float(s["in_elements"]),
            float(s["weight_elements"])]


def solve(a, b):
    """Solves the small linear system a x = b (Gaussian elimination, partial pivoting); None if
    singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-9 * max(1.0, max(abs(v) for v in m[p][:n])):
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def lsq(points, active):
    """Least squares over the features in `active` (indices into FEATURES), relative error
    weighting (each call counts alike, whatever its size); None if singular."""
    ata = [[0.0] * len(active) for _ in active]
    atb = [0.0] * len(active)
    for x, y in points:
        w = 1.0 / max(y, 1.0) ** 2
        for i, fi in enumerate(active):
            atb[i] += w * x[fi] * y
            for j, fj in enumerate(active):
                ata[i][j] += w * x[fi] * x[fj]
    return solve(ata, atb)


def fit(points, primary):
    """Non-negative coefficients of FEATURES for (features, instructions) points: the subset of
    features, among those the points can determine (at least 2 more distinct points than
    features), whose least-squares fit has no negative coefficient and the smallest relative
    squared error, each extra feature having to lower it by 10%; `primary` (the family's main
    feature) alone when nothing else fits."""
    pts = [(x, float(y)) for x, y in points]
    coef = [0.0] * len(FEATURES)
    if not pts:
        return coef
    distinct = len(set(tuple(x) for x, _ in pts))
    best = None
    for mask in range(1, 1 << len(FEATURES)):
        active = [f for f in range(len(FEATURES)) if mask >> f & 1]
        if len(active) > 1 and distinct < len(active) + 2:
            continue
        if distinct < 3 and active != [primary]:
            continue  # one or two shapes: a cost per unit of the family's main feature
        if any(f and not any(x[f] for x, _ in pts) for f in active):
            continue
        x = lsq(pts, active)
        if x is None or any(v < 0 for v in x):
            continue
        err = sum(((sum(v * p[f] for f, v in zip(active, x)) - y) / max(y, 1.0)) ** 2
                  for p, y in pts)
        score = err * 1.1 ** len(active)
        if best is None or score < best[0] - 1e-12:
            best = (score, active, x)
    if best is None:
        su = sum(x[primary] for x, _ in pts)
        coef[primary if su else 0] = sum(y for _, y in pts) / (su or len(pts))
        return coef
    for f, v in zip(best[1], best[2]):
        coef[f] = v
    return coef


# Guesses for families no calibration model exercises (stated as such in the generated file):
# base, per MAC, per output element, per input element; Cortex-M4 then RV32.
GUESS = {"mac_s8": ([0, 2, 0, 0, 0], [0, 5, 0, 0, 0]), "mac_f32": ([0, 5, 0, 0, 0], [0, 60, 0, 0, 0]),
         "pool_s8": ([0, 0, 0, 5, 0], [0, 0, 0, 6, 0]), "pool_f32": ([0, 0, 0, 8, 0], [0, 0, 0, 40, 0]),
         "copy": ([0, 0, 2, 0, 0], [0, 0, 2, 0, 0]), "elementwise_s8": ([0, 0, 8, 0, 0], [0, 0, 10, 0, 0]),
         "elementwise_f32": ([0, 0, 20, 0, 0], [0, 0, 80, 0, 0])}
PRIMARY = {"Macs": 1, "Out": 2, "In": 3}
FAMILIES = ["mac_s8", "mac_f32", "pool_s8", "pool_f32", "copy", "elementwise_s8",
            "elementwise_f32"]


def fit_table(samples):
    """samples: dicts (kernel, features, instructions per core) -> (rows, fallbacks)."""
    rows, fallbacks = {}, {}
    for k in sorted(set(s["kernel"] for s in samples)):
        prim = PRIMARY[family(k)[1]]
        rows[k] = [fit([(feats(s), s[c]) for s in samples if s["kernel"] == k], prim)
                   for c, _ in CORES]
    for fam in FAMILIES:
        fs = [s for s in samples if family(s["kernel"])[0] == fam]
        prim = PRIMARY[{"mac_s8": "Macs", "mac_f32": "Macs", "pool_s8": "In",
                        "pool_f32": "In"}.get(fam, "Out")]
        if not fs:
            fallbacks[fam] = (list(GUESS[fam]), False)
            continue
        fallbacks[fam] = ([fit([(feats(s), s[c]) for s in fs], prim) for c, _ in CORES], True)
    return rows, fallbacks


def estimate(rows, fallbacks, s, core_i):
    k = s["kernel"]
    coef = rows[k][core_i] if k in rows else fallbacks[family(k)[0]][0][core_i]
    return max(0.0, sum(a * b for a, b in zip(coef, feats(s))))


def collect(run, npucc, shared, root):
    rows = json.load(open(os.path.join(run, "rows.json")))
    samples = []
    work = tempfile.mkdtemp(prefix="cpu_cost_fit.")
    models = sorted(set(r["model"] for r in rows if r.get("opt") in ("O2", "-O2") and r.get("calls")))
    for m in models:
        d = os.path.join(shared, m)
        if not os.path.isdir(d):
            d = os.path.join(root, "models", m)
        out = os.path.join(work, m)
        subprocess.run([npucc, os.path.join(d, "model.onnx"), "-o", out, "--target", "cpu"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        calls = {c["index"]: c for c in json.load(open(os.path.join(out, "report.json")))["cpu_calls"]}
        counts = {}
        for r in rows:
            if r["model"] != m or r.get("opt") not in ("O2", "-O2") or not r.get("calls"):
                continue
            for c in r["calls"]:
                counts.setdefault(c["index"], {})[r["arch"]] = c["instructions"]
        for idx, c in sorted(calls.items()):
            got = counts.get(idx, {})
            if not all(core in got for core, _ in CORES):
                continue
            s = {"model": m, "kernel": c["kernel"], "layer": c["layer"], "macs": c["macs"],
                 "out_elements": c["out_elements"], "in_elements": c["in_elements"],
                 "weight_elements": c["weight_elements"]}
            for core, _ in CORES:
                s[core] = got[core]
            samples.append(s)
    return samples


def def_text(rows, fallbacks, models):
    out = [
        "//===- CpuCost.def - Instruction model of the CPU kernels -------*- C++ -*-===//",
        "//",
        "// Generated by bench/cpu_cost_fit.py from bench/mcu_bench.sh's per-call",
        "// QEMU instruction counts (-O2, default kernels) of",
        "// " + ", ".join(models) + ".",
        "// Do not edit by hand (docs/benchmarks.md, \"CPU cost model\"). One row per",
        "// kernel: instructions = base + mac * MACs + out * output elements + in *",
        "// input elements + w * weight elements, for Cortex-M4F (M4) and RV32IMAC",
        "// (Rv). Fallback rows (a family's kernels pooled) serve kernels without a",
        "// row; a family no calibration model exercises is a guess, marked so.",
        "//",
        "// NPUCC_CPU_KERNEL(callee, M4 base, mac, out, in, w, Rv base, mac, out, in, w)",
        "// NPUCC_CPU_FALLBACK(family, M4 base, mac, out, in, w, Rv base, mac, out, in, w)",
        "//",
        "//===----------------------------------------------------------------------===//",
    ]
    g = lambda v: ("%.6g" % v) if v else "0"
    row = lambda c: ", ".join(g(v) for v in c[0] + c[1])
    for k in sorted(rows):
        out.append('NPUCC_CPU_KERNEL("%s", %s)' % (k, row(rows[k])))
    for fam in FAMILIES:
        c, measured = fallbacks[fam]
        out.append("NPUCC_CPU_FALLBACK(%s, %s)%s" % (
            fam, row(c), "" if measured else " // guess: no calibration data"))
    return "\n".join(out) + "\n"


def pct(a, b):
    return 100.0 * (a - b) / b if b else 0.0


def report(samples, rows, fallbacks):
    """Markdown: per model and core, measured vs estimated totals, in-sample and leave-one-out;
    per-call error percentiles for calls of at least 10,000 instructions."""
    models = sorted(set(s["model"] for s in samples))
    lines = ["| model | core | calls | measured | estimated | error | leave-one-model-out | "
             "error |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    errs = {"in": {c: [] for c, _ in CORES}, "loo": {c: [] for c, _ in CORES}}
    for m in models:
        rest = [s for s in samples if s["model"] != m]
        lrows, lfall = fit_table(rest)
        mine = [s for s in samples if s["model"] == m]
        for ci, (core, _) in enumerate(CORES):
            meas = sum(s[core] for s in mine)
            est = sum(estimate(rows, fallbacks, s, ci) for s in mine)
            loo = sum(estimate(lrows, lfall, s, ci) for s in mine)
            for s in mine:
                if s[core] >= 10000:
                    errs["in"][core].append(abs(pct(estimate(rows, fallbacks, s, ci), s[core])))
                    errs["loo"][core].append(abs(pct(estimate(lrows, lfall, s, ci), s[core])))
            lines.append("| %s | %s | %d | %d | %d | %+.1f%% | %d | %+.1f%% |" % (
                m, core, len(mine), meas, est, pct(est, meas), loo, pct(loo, meas)))
    lines.append("")
    lines.append("| per call (>= 10,000 instructions) | core | calls | median abs error | "
                 "90th percentile | max |")
    lines.append("|---|---|---:|---:|---:|---:|")
    for kind, name in (("in", "in-sample"), ("loo", "leave-one-model-out")):
        for core, _ in CORES:
            e = sorted(errs[kind][core])
            if not e:
                continue
            q = lambda f: e[min(len(e) - 1, int(f * (len(e) - 1) + 0.5))]
            lines.append("| %s | %s | %d | %.1f%% | %.1f%% | %.1f%% |" % (
                name, core, len(e), q(0.5), q(0.9), e[-1]))
    return "\n".join(lines) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a bench/mcu_bench.sh results folder (rows.json)")
    ap.add_argument("--npucc", default=os.path.join(root, "build", "tools", "npucc", "npucc"))
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(root), "shared", "models"))
    ap.add_argument("--write", help="write the table to this CpuCost.def")
    a = ap.parse_args()
    samples = collect(a.run, a.npucc, a.shared, root)
    if not samples:
        sys.exit("cpu_cost_fit: no -O2 per-call counts with both cores in %s" % a.run)
    rows, fallbacks = fit_table(samples)
    text = def_text(rows, fallbacks, sorted(set(s["model"] for s in samples)))
    if a.write:
        with open(a.write, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    sys.stdout.write("\n" + report(samples, rows, fallbacks))


if __name__ == "__main__":
    main()
