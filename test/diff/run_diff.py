#!/usr/bin/python3
"""run_diff.py - The differential tier: random models, golden outputs, `npucc check` per target.

usage: run_diff.py --npucc BIN [--seed S] [--int8 N] [--float M] [--targets LIST]
                   [--float-targets LIST] [--jobs 2] [--out DIR] [--regressions]
                   [--cflags=FLAGS] [--timeout SEC]
       run_diff.py --npucc BIN --ci          (the fixed-seed slice of ctest diff_models)

Generates N int8 (QDQ) and M float models with diffgen.py (seeds S, S+1, ...), takes
their golden outputs from ONNX Runtime with graph optimizations disabled (golden.js),
runs `npucc check CASE --target T --interp-check on --json ...` for every model and
target (int8 models on --targets, default all: cpu, npu-default, npu-small and every
test/target/npu-*.json; float models on --float-targets, default cpu,npu-default), at
most --jobs at once, and with --regressions also every folder of
test/diff/regressions on every target. Classifies each check (diffrun.py: PASS, FAIL,
REFUSED, CRASH, TIMEOUT, XFAIL), prints a summary table, copies each failing case
with its log to OUT/failures/, writes OUT/summary.txt and OUT/results.json.
Exit 0 when no check failed unexplained (FAIL, CRASH, TIMEOUT), 1 otherwise, 2 on bad
usage, 77 when ONNX Runtime for node is unavailable (the random part cannot run; set
NPUCC_ORT_NODE_MODULES=/path/node_modules).
"""
import argparse
import collections
import glob
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diffgen  # noqa: E402
import diffrun  # noqa: E402

CI_SEED = 20261127
CI_INT8 = 24
CI_FLOAT = 8


def regression_cases():
    return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(
        diffrun.HERE, "regressions", "*", "model.onnx")))


def case_description(case):
    p = os.path.join(case, "spec.json")
    if os.path.exists(p):
        with open(p) as f:
            return diffgen.describe(json.load(f))
    return os.path.basename(case)


def parse_targets(text):
    if text == "all":
        return diffrun.all_targets()
    return [t for t in text.split(",") if t]


def summary_table(results, cases, regs, ort_refused):
    lines = []
    cols = ["PASS", "APPROX", "FAIL", "CRASH", "TIMEOUT", "REFUSED", "XFAIL", "XPASS"]
    by_t = collections.OrderedDict()
    for r in results:
        by_t.setdefault(diffrun.target_label(r["target"]), collections.Counter())[r["status"]] += 1
    hdr = "%-12s %7s" % ("target", "checks") + "".join(" %8s" % c for c in cols)
    lines += [hdr, "-" * len(hdr)]
    tot = collections.Counter()
    for t, c in by_t.items():
        tot.update(c)
        lines.append("%-12s %7d" % (t, sum(c.values())) + "".join(" %8d" % c[k] for k in cols))
    lines.append("%-12s %7d" % ("total", sum(tot.values())) +
                 "".join(" %8d" % tot[k] for k in cols))
    ops = collections.Counter()
    kinds = collections.Counter()
    for c in cases:
        p = os.path.join(c, "spec.json")
        if os.path.exists(p):
            with open(p) as f:
                s = json.load(f)
            kinds[s["kind"]] += 1
            ops.update(op["op"] for op in s["ops"])
    lines.append("random models: %s; ONNX Runtime refused %d; regression folders: %d" % (
        ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items())) or "none", len(ort_refused),
        len(regs)))
    lines.append("ops drawn: " + ", ".join("%s %d" % kv for kv in sorted(ops.items())))
    refusals = collections.Counter(r["detail"].split(": ", 1)[-1][:110] for r in results
                                   if r["status"] == "REFUSED")
    if refusals:
        lines.append("refusals (clean errors, by message):")
        lines += ["  %4d  %s" % (n, m) for m, n in refusals.most_common(12)]
    approx = [r for r in results if r["status"] == "APPROX"]
    if approx:
        lines.append("approximations (golden steps from an NPU whose arithmetic approximates the "
                     "model's; C bit-exact with its interpreter):")
        lines += ["  %s on %s: %s" % (os.path.basename(r["case"]), diffrun.target_label(r["target"]),
                                      r["detail"]) for r in approx[:12]]
    xf = collections.OrderedDict()
    for r in results:
        if r["status"] == "XFAIL":
            xf.setdefault((os.path.basename(r["case"]), r["xfail"]), []).append(
                diffrun.target_label(r["target"]))
    if xf:
        lines.append("expected failures (EXPECT_FAIL files, expected_failures.txt):")
        lines += ["  %s on %s: %s" % (c, ", ".join(ts), why) for (c, why), ts in xf.items()]
    bad = [r for r in results if r["status"] in diffrun.UNEXPLAINED]
    lines.append("unexplained failures: %d" % len(bad))
    lines += ["  %s %s on %s: %s [%s]" % (r["status"], os.path.basename(r["case"]),
                                          diffrun.target_label(r["target"]), r["detail"],
                                          case_description(r["case"])) for r in bad]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npucc", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--int8", type=int, default=0, help="number of int8 (QDQ) models")
    ap.add_argument("--float", type=int, default=0, help="number of float models")
    ap.add_argument("--targets", default="all")
    ap.add_argument("--float-targets", default="cpu,npu-default")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", help="work folder (default: a new temp folder)")
    ap.add_argument("--regressions", action="store_true",
                    help="also check every test/diff/regressions folder on every target")
    ap.add_argument("--cflags", default="-O2", help="C flags of the checks (npucc check --cflags)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per check")
    ap.add_argument("--ci", action="store_true",
                    help="the ctest slice: seed %d, %d int8 + %d float models, regressions, -O0"
                    % (CI_SEED, CI_INT8, CI_FLOAT))
    a = ap.parse_args()
    if a.ci:
        a.seed, a.int8, a.float, a.regressions, a.cflags = CI_SEED, CI_INT8, CI_FLOAT, True, "-O0"
    if not os.access(a.npucc, os.X_OK):
        print("run_diff: npucc binary '%s' not found" % a.npucc, file=sys.stderr)
        return 2
    npucc = os.path.abspath(a.npucc)
    out = a.out or tempfile.mkdtemp(prefix="npucc-diff-")
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    random_part = a.int8 + a.float > 0
    have_ort = not random_part or diffrun.ort_available()
    cases, ort_refused, jobs = [], {}, []
    if random_part and have_ort:
        cdir = os.path.join(out, "cases")
        shutil.rmtree(cdir, ignore_errors=True)
        names = diffgen.generate(cdir, a.seed, a.int8, "int8")
        names += diffgen.generate(cdir, a.seed + a.int8, a.float, "float")
        cases = [os.path.join(cdir, n) for n in names]
        ort_refused = diffrun.take_golden(cases)
        for c, e in sorted(ort_refused.items()):
            print("note: ONNX Runtime refused %s (%s): not checked" % (os.path.basename(c), e))
        for c in cases:
            if c in ort_refused:
                continue
            kind = "float" if os.path.basename(c).startswith("float") else "int8"
            for t in parse_targets(a.targets if kind == "int8" else a.float_targets):
                jobs.append((c, t))
    elif random_part:
        print("run_diff: onnxruntime-node cannot be loaded (set NPUCC_ORT_NODE_MODULES): the "
              "random models are skipped")
    regs = regression_cases() if a.regressions else []
    for c in regs:
        for t in diffrun.all_targets():
            jobs.append((c, t))
    print("run_diff: %d checks (%d models%s, %d regression folders) with %d jobs in %s" % (
        len(jobs), len(cases) - len(ort_refused), ", seed %d" % a.seed if cases else "",
        len(regs), a.jobs, out), flush=True)
    expected = diffrun.load_expected()
    os.chdir(diffrun.ROOT)  # target paths are relative to the source tree

    def one(job):
        c, t = job
        r = diffrun.run_check(npucc, c, t, a.timeout, ["--cflags=" + a.cflags])
        r = diffrun.explain(r, case_description(c), expected)
        if r["status"] != "PASS":
            print("  %-8s %s on %s: %s" % (r["status"], os.path.basename(c),
                                            diffrun.target_label(t), r["detail"]), flush=True)
        return r

    with ThreadPoolExecutor(max(1, a.jobs)) as ex:
        results = list(ex.map(one, jobs))
    fdir = os.path.join(out, "failures")
    for r in results:
        if r["status"] in diffrun.UNEXPLAINED + ("XFAIL",):
            d = os.path.join(fdir, "%s@%s" % (os.path.basename(r["case"]),
                                              diffrun.target_label(r["target"])))
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(r["case"], d)
            with open(os.path.join(d, "check.log"), "w") as f:
                f.write("$ %s\n%s\n%s\n" % (r["cmd"], r["status"], r.get("log", "")))
    lines = summary_table(results, cases, regs, ort_refused)
    kept = any(r["status"] in diffrun.UNEXPLAINED + ("XFAIL",) for r in results)
    lines.append("time: %.0f s%s" % (time.time() - t0,
                                      "; failing cases kept in " + fdir if kept else ""))
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump([{k: v for k, v in r.items() if k != "log"} for r in results], f, indent=1)
    if any(r["status"] in diffrun.UNEXPLAINED for r in results):
        return 1
    if not a.out:  # a temp folder: nothing to look at
        shutil.rmtree(out, ignore_errors=True)
    if have_ort:
        return 0
    # ONNX Runtime missing: a skip (77), or a failure under CI (docs/testing.md, "Skips and CI")
    if os.environ.get("CI"):
        print("FAIL: ONNX Runtime for node not found (CI is set: a test that cannot run fails)")
        return 1
    print("SKIP: ONNX Runtime for node not found (NPUCC_ORT_NODE_MODULES)")
    return 77


if __name__ == "__main__":
    sys.exit(main())
