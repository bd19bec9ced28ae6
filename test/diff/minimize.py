#!/usr/bin/python3
"""minimize.py - Shrink a failing case of the differential tier to a regression folder.

usage: minimize.py CASE_DIR --target T --npucc BIN --name NAME --note "what it caught"
                   [--out test/diff/regressions] [--cflags=-O2] [--budget 300]
                   [--min-spatial 1]

CASE_DIR is a case of run_diff.py (its spec.json, e.g. OUT/failures/<case>@<target>).
The failure of `npucc check CASE_DIR --target T` is reproduced first; then, greedily,
ops are dropped and shapes and parameters shrunk (diffgen.py rebuilds the model, golden.js
takes the golden output anew) as long as the check still fails the same way (the same
status and at least one of the same failing comparisons). The smallest case is written
to OUT/NAME in the ONNX backend-test layout (model.onnx, test_data_set_0/, spec.json) with
NOTE, the one-line note (plus the target and the ops). --budget bounds the checks run.
"""
import argparse
import copy
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diffgen  # noqa: E402
import diffrun  # noqa: E402


def signature(rec):
    """The failing comparisons of a check result: {'golden', 'interp(compiled)', ...}."""
    if rec["status"] != "FAIL":
        return {rec["status"]}
    found = set(re.findall(r"(golden|interp\([a-z-]+\)|simulator)", rec["detail"]))
    return found or {rec["detail"][:60]}


def remove_op(spec, i):
    """spec without op i: its users read its input instead."""
    s = copy.deepcopy(spec)
    gone = s["ops"].pop(i)
    t_out, t_in = i + 1, gone["x"]

    def remap(k):
        return t_in if k == t_out else (k - 1 if k > t_out else k)
    for op in s["ops"]:
        for key in ("x", "y"):
            if key in op:
                op[key] = remap(op[key])
    if "extra_output" in s:
        s["extra_output"] = remap(s["extra_output"])
        if s["extra_output"] < 1 or s["extra_output"] >= len(s["ops"]):
            del s["extra_output"]
    return s


def candidates(spec, min_spatial=1):
    """Smaller variants of spec, the most promising first (input H and W, when the
    input is 4-D, not below min_spatial)."""
    for i in reversed(range(len(spec["ops"]))):
        if len(spec["ops"]) > 1:
            yield "drop op %d (%s)" % (i, spec["ops"][i]["op"]), remove_op(spec, i)
    for key in ("extra_output", "input_q", "output_q"):
        if spec.get(key):
            s = copy.deepcopy(spec)
            s.pop(key)
            yield "no " + key, s
    for d in range(1, len(spec["input"])):
        n = spec["input"][d]
        lo = min_spatial if d >= 2 and len(spec["input"]) == 4 else 1
        for v in sorted({n // 2, n - 1}):
            if lo <= v < n:
                s = copy.deepcopy(spec)
                s["input"][d] = v
                yield "input dim %d = %d" % (d, v), s
    for i, op in enumerate(spec["ops"]):
        simpler = []
        if op.get("act", "none") != "none":
            simpler.append(("act", "none"))
        for key in ("bias", "perch", "ceil", "cip", "swap", "same_q"):
            if op.get(key):
                simpler.append((key, 0))
        for key in ("s", "d"):
            if key in op and op[key] != [1, 1]:
                simpler.append((key, [1, 1]))
        if "pads" in op and any(op["pads"]):
            simpler.append(("pads", [0, 0, 0, 0]))
        if "k" in op and op["k"] != [1, 1]:
            simpler += [("k", [1, 1]), ("k", [max(1, op["k"][0] - 1), max(1, op["k"][1] - 1)])]
        if op.get("cout", 1) > 1:
            g = op["group"]
            smaller = max(g, (op["cout"] // 2) // g * g)
            if smaller < op["cout"]:
                simpler.append(("cout", smaller))
            if g > 1 and g == op["cout"]:
                simpler.append(("group", 1))
        for key in ("n", "cc"):
            if op.get(key, 1) > 1:
                simpler.append((key, op[key] // 2))
        for key, v in simpler:
            s = copy.deepcopy(spec)
            s["ops"][i][key] = v
            yield "op %d %s=%s" % (i, key, v), s


def valid(spec):
    shapes = {0: spec["input"]}
    try:
        for i, op in enumerate(spec["ops"]):
            shapes[i + 1] = diffgen.infer(op, shapes)
            if min(shapes[i + 1]) < 1:
                return False
        diffgen.build(spec)
    except diffgen.Invalid:
        return False
    return True


class Runner:
    def __init__(self, a):
        self.a = a
        self.tmp = tempfile.mkdtemp(prefix="npucc-minimize-")
        self.n = 0

    def run(self, spec):
        self.n += 1
        case = os.path.join(self.tmp, "c%d" % self.n)
        diffgen.write_case(spec, case)
        err = diffrun.take_golden([case])
        if err:
            shutil.rmtree(case, ignore_errors=True)
            return None, None
        rec = diffrun.run_check(self.a.npucc, case, self.a.target, self.a.timeout,
                                ["--cflags=" + self.a.cflags])
        return rec, case


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case")
    ap.add_argument("--target", required=True)
    ap.add_argument("--npucc", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--note", required=True)
    ap.add_argument("--out", default=os.path.join(diffrun.HERE, "regressions"))
    ap.add_argument("--cflags", default="-O2")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--min-spatial", type=int, default=1,
                    help="keep the input's H and W at least this (a layout bug needs 2)")
    a = ap.parse_args()
    a.npucc = os.path.abspath(a.npucc)
    a.out = os.path.abspath(a.out)
    with open(os.path.join(a.case, "spec.json")) as f:
        spec = json.load(f)
    os.chdir(diffrun.ROOT)
    r = Runner(a)
    rec, case = r.run(spec)
    if rec is None or rec["status"] not in diffrun.UNEXPLAINED:
        print("minimize: the case does not fail on %s (%s)" % (
            a.target, rec["status"] if rec else "ONNX Runtime refused it"))
        return 1
    sig = signature(rec)
    print("minimize: %s: %s [%s]" % (rec["status"], rec["detail"], diffgen.describe(spec)))
    best, best_case = spec, case
    improved = True
    while improved and r.n < a.budget:
        improved = False
        for what, cand in candidates(best, a.min_spatial):
            if r.n >= a.budget:
                break
            if not valid(cand):
                continue
            c_rec, c_case = r.run(cand)
            if c_rec and c_rec["status"] == rec["status"] and signature(c_rec) & sig:
                print("  kept: %s -> %s" % (what, diffgen.describe(cand)), flush=True)
                best, best_case, improved = cand, c_case, True
                break
    dest = os.path.join(a.out, a.name)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    shutil.copy(os.path.join(best_case, "model.onnx"), dest)
    shutil.copytree(os.path.join(best_case, "test_data_set_0"),
                    os.path.join(dest, "test_data_set_0"))
    with open(os.path.join(dest, "spec.json"), "w") as f:
        json.dump(best, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(dest, "NOTE"), "w") as f:
        f.write("%s (target %s; %s)\n" % (a.note, diffrun.target_label(a.target),
                                          diffgen.describe(best)))
    print("minimize: %d checks; wrote %s: %s" % (r.n, dest, diffgen.describe(best)))
    shutil.rmtree(r.tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
