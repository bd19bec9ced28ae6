#!/usr/bin/env python3
"""memory_fit_compare.py - The memory fit's estimates against linked images.

For every row of a bench/mcu_bench.sh run (RUN/rows.json: per model, core and -O level the
linked .text of the generated folder and the measured stack peak), compiles the model with
`npucc --target cpu --mcu CONFIG` and compares report.json's "memory" (runtime code + model
code; stack) with the measurement. Prints a Markdown table and the error range
(docs/benchmarks.md, "Memory fit").

Usage: bench/memory_fit_compare.py --npucc NPUCC --rows RUN/rows.json [--shared ../shared/models]
           [--variant NAME[:ARCH] ...] [--max-error PCT]
  --variant: only rows of these kernel variants (and cores); rows measured with the default
             kernels and flags are the ones the table describes.
  --max-error: exit 1 when a code estimate is off by more than PCT percent or a stack
               estimate is below the measured peak (test/e2e/mcu_bench_smoke.sh).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mcu_bench import MODELS, ROOT  # noqa: E402

CONFIG = {("cortex-m4", "-Os"): "cortex-m4", ("cortex-m4", "-O2"): "cortex-m4-O2",
          ("rv32", "-Os"): "rv32", ("rv32", "-O2"): "rv32-O2"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npucc", required=True)
    ap.add_argument("--rows", required=True)
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--max-error", type=float)
    a = ap.parse_args()
    wanted = [v.split(":") for v in a.variant]
    print("| model | mcu | code measured | code estimated | error | stack measured | stack estimated |")
    print("|---|---|---:|---:|---:|---:|---:|")
    errs, bad = [], []
    with tempfile.TemporaryDirectory() as work:
        for r in json.load(open(a.rows)):
            cfg = CONFIG.get((r["arch"], r["opt"]))
            if cfg is None or "flash" not in r or r["model"] not in MODELS:
                continue
            if wanted and not any(w[0] == r.get("variant") and (len(w) == 1 or w[1] == r["arch"])
                                  for w in wanted):
                continue
            where, folder, flags = MODELS[r["model"]]
            model = os.path.join(a.shared if where == "shared" else os.path.join(ROOT, "models"),
                                 folder, "model.onnx")
            out = os.path.join(work, "%s-%s" % (r["model"], cfg))
            p = subprocess.run([a.npucc, model, "-o", out, "--target", "cpu", "--mcu", cfg] + flags,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True)
            if p.returncode != 0:
                sys.exit("npucc failed on %s:\n%s" % (model, p.stdout))
            m = json.load(open(os.path.join(out, "report.json")))["memory"]
            est = sum(i["bytes"] for i in m["flash"]
                      if i["what"].startswith(("runtime code", "model code")))
            stack = next(i["bytes"] for i in m["ram"] if i["what"].startswith("stack"))
            meas = r["flash"]["code"]
            err = 100.0 * (est - meas) / meas
            errs.append(err)
            print("| %s | %s | %d | %d | %+.1f%% | %d | %d |" % (
                r["model"], cfg, meas, est, err, r["stack"], stack))
            if a.max_error is not None and (abs(err) > a.max_error or stack < r["stack"]):
                bad.append("%s on %s: code %d estimated %d (%+.1f%%), stack %d estimated %d" % (
                    r["model"], cfg, meas, est, err, r["stack"], stack))
    if not errs:
        sys.exit("memory_fit_compare.py: no rows to compare in %s" % a.rows)
    print("\ncode: error %+.1f%% .. %+.1f%% over %d builds" % (min(errs), max(errs), len(errs)))
    if bad:
        sys.exit("memory_fit_compare.py: beyond --max-error %g%% or stack under the peak:\n  %s"
                 % (a.max_error, "\n  ".join(bad)))


if __name__ == "__main__":
    main()
