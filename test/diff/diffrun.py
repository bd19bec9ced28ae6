#!/usr/bin/python3
"""diffrun.py - Golden outputs, `npucc check` runs and their classification (differential tier).

Used by run_diff.py (the tier's driver) and minimize.py. A check of one case on one
target ends in one of:
  PASS     exit 0: the C outputs match the golden outputs (steps for quantized outputs)
           and every interpreter comparison of `npucc check` (compiled graph bit-exact,
           graph before the target's rewrites, graph as imported).
  FAIL     exit 1 with a report: some comparison failed (which ones: `detail`), or the
           generated C did not build.
  REFUSED  exit 1-2 with an error message before anything ran (an unsupported
           feature): a clean refusal, not a failure; counted and listed by reason.
  CRASH    a signal or another exit code, or the generated program failed to run.
  TIMEOUT  the check took longer than the limit.
  XFAIL    FAIL/CRASH/TIMEOUT of a case listed in expected_failures.txt or of a
           regression folder with an EXPECT_FAIL file (open findings).
  XPASS    such a regression folder passes (the finding was fixed: remove EXPECT_FAIL).
  APPROX   a FAIL on a description whose arithmetic approximates the model's (its
           mul_shift_add, pwl or rounding stage: `npucc check`'s per-layer distance is
           nonzero) where only the golden and as-imported comparisons fail: the C program
           is bit-exact with the interpreter of the NPU's arithmetic, there are no hazards,
           and every NPU layer's own distance is within APPROX_STEPS (the stages' stated
           bounds), so the difference is the stated approximation, accumulated.
FAIL, CRASH, TIMEOUT and XPASS are unexplained failures.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
UNEXPLAINED = ("FAIL", "CRASH", "TIMEOUT", "XPASS")
# The largest own per-layer distance an approximating stage may show (mul_shift_add: 1,
# pwl with 8 segments: 2; docs/target.md) for a golden failure to count as APPROX.
APPROX_STEPS = 2
NP = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int32": np.int32,
      "int64": np.int64}


def ort_env():
    env = dict(os.environ)
    mods = os.environ.get("NPUCC_ORT_NODE_MODULES") or os.path.join(ROOT, "bench", "node_modules")
    env["NODE_PATH"] = mods + (":" + env["NODE_PATH"] if env.get("NODE_PATH") else "")
    return env


def ort_available():
    try:
        r = subprocess.run(["node", "-e", "require('onnxruntime-node')"], env=ort_env(),
                           capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def all_targets():
    """cpu, the built-in descriptions and every test/target/npu-*.json."""
    return ["cpu", "npu-default", "npu-small"] + sorted(
        os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "test", "target",
                                                                  "npu-*.json")))


def target_label(t):
    return os.path.splitext(os.path.basename(t))[0]


def take_golden(cases, optimized=False):
    """ONNX Runtime (optimizations disabled) outputs as test_data_set_0/output_K.pb of
    every case folder; returns {case: error text} for models ORT refused."""
    tmp = tempfile.mkdtemp(prefix="npucc-golden-")
    tasks = []
    try:
        for c in cases:
            ins = []
            for k, p in enumerate(sorted(glob.glob(os.path.join(c, "test_data_set_0",
                                                               "input_*.pb")))):
                t = TensorProto()
                with open(p, "rb") as f:
                    t.ParseFromString(f.read())
                a = numpy_helper.to_array(t)
                raw = os.path.join(tmp, "%d_%d.bin" % (len(tasks), k))
                a.tofile(raw)
                ins.append({"name": t.name, "type": str(a.dtype), "shape": list(a.shape),
                            "file": raw})
            tasks.append({"model": os.path.abspath(os.path.join(c, "model.onnx")),
                          "inputs": ins, "outdir": os.path.join(tmp, "o%d" % len(tasks))})
        with open(os.path.join(tmp, "tasks.json"), "w") as f:
            json.dump(tasks, f)
        cmd = ["node", os.path.join(HERE, "golden.js"), os.path.join(tmp, "tasks.json")]
        if optimized:
            cmd.append("--optimized")
        subprocess.run(cmd, env=ort_env(), check=True, timeout=600)
        errors = {}
        for c, t in zip(cases, tasks):
            od = t["outdir"]
            if os.path.exists(os.path.join(od, "error.txt")):
                with open(os.path.join(od, "error.txt")) as f:
                    errors[c] = f.read().strip()
                continue
            with open(os.path.join(od, "meta.json")) as f:
                meta = json.load(f)
            ds = os.path.join(c, "test_data_set_0")
            for p in glob.glob(os.path.join(ds, "output_*.pb")):
                os.remove(p)
            for k, o in enumerate(meta):
                a = np.fromfile(os.path.join(od, "out_%d.bin" % k),
                                dtype=NP[o["type"]]).reshape(o["dims"])
                with open(os.path.join(ds, "output_%d.pb" % k), "wb") as f:
                    f.write(numpy_helper.from_array(a, o["name"]).SerializeToString())
        return errors
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _is_quantized(case):
    try:
        with open(os.path.join(case, "spec.json")) as f:
            return json.load(f)["kind"] == "int8"
    except (OSError, ValueError, KeyError):
        return True  # a regression folder without a spec: let check decide (auto)


def run_check(npucc, case, target, timeout=300, extra=()):
    """One `npucc check` of case on target (plus the flags `extra`), classified (see the
    module comment)."""
    with tempfile.TemporaryDirectory(prefix="npucc-diff-") as tmp:
        js = os.path.join(tmp, "check.json")
        cmd = [npucc, "check", case, "--target", target, "--json", js, "--interp-check",
               "on"] + list(extra)
        rec = {"case": case, "target": target, "cmd": " ".join(cmd)}
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            rec.update(status="TIMEOUT", detail="over %d s" % timeout,
                       log=(e.stdout or b"").decode(errors="replace") if isinstance(
                           e.stdout, bytes) else (e.stdout or ""))
            return rec
        rec["log"] = p.stdout + p.stderr
        rc = p.returncode
        report = None
        if os.path.exists(js):
            with open(js) as f:
                report = json.load(f)
        if rc == 0 and report is not None and report.get("pass"):
            rec.update(status="PASS", detail=_figures(report))
        elif rc == 1 and report is not None:
            approx = _approximation(report)
            rec.update(status="APPROX" if approx else "FAIL",
                       detail=_failure(report) + ("; " + approx if approx else ""))
        elif rc in (1, 2):
            msg = _error_line(p.stderr or p.stdout)
            if "running the generated program failed" in rec["log"]:
                rec.update(status="CRASH", detail=msg)
            elif "building the generated C failed" in rec["log"] or \
                    "reference interpreter" in rec["log"]:
                rec.update(status="FAIL", detail=msg)
            else:
                rec.update(status="REFUSED", detail=msg)
        else:
            rec.update(status="CRASH", detail="exit %d: %s" % (rc, _error_line(p.stderr)))
        return rec


def _error_line(text):
    for line in (text or "").splitlines():
        if "error" in line:
            return line.strip()[:200]
    return (text or "").strip().splitlines()[0][:200] if (text or "").strip() else "no output"


def _figures(rep):
    steps = [o.get("max_steps", 0) for o in rep.get("outputs", []) if "max_steps" in o]
    return "max steps %g" % max(steps) if steps else "float"


def _approximation(rep):
    """Why a failed check is the NPU's stated approximation (see APPROX), or None."""
    layers = (rep.get("layer_distance") or {}).get("layers", [])
    if not layers or max(l.get("max_steps", 0) for l in layers) == 0:
        return None
    if any(l.get("own_max_steps", 0) > APPROX_STEPS for l in layers):
        return None
    if any(d.get("sim", {}).get("hazards") for d in rep.get("data_sets", [])):
        return None
    for o in rep.get("outputs", []):
        if "interp" in o and not o["interp"].get("pass", True):
            return None
        for st in o.get("stages", []):
            if st.get("stage") != "imported" and not st.get("pass", True):
                return None
    worst = max(layers, key=lambda l: l.get("max_steps", 0))
    return "the NPU's arithmetic: %d step(s) from the model's at %s (own distance <= %d)" % (
        worst["max_steps"], worst.get("node", "?"),
        max(l.get("own_max_steps", 0) for l in layers))


def _failure(rep):
    parts = []
    for o in rep.get("outputs", []):
        if o.get("pass"):
            continue
        if not o.get("golden_pass", True):
            parts.append("%s: golden %s" % (o["output"], "%g steps" % o["max_steps"]
                                            if "max_steps" in o else
                                            "rel err %.3g" % o.get("rel_error", 0)))
        if "interp" in o and not o["interp"].get("pass", True):
            parts.append("%s: interp(compiled) %d mismatches" % (o["output"],
                                                                 o["interp"]["mismatches"]))
        for st in o.get("stages", []):
            if not st.get("pass", True):
                parts.append("%s: interp(%s) %s" % (o["output"], st["stage"],
                                                    "%g steps" % st["max_steps"]
                                                    if st.get("max_steps", -1) >= 0 else
                                                    "%d mismatches" % st.get("mismatches", 0)))
    for si, d in enumerate(rep.get("data_sets", [])):
        if d.get("sim", {}).get("hazards"):
            parts.append("simulator hazards in set %d" % si)
    return "; ".join(parts) or "FAIL"


def load_expected(path=os.path.join(HERE, "expected_failures.txt")):
    """[(description regex, target regex, reason)] of expected_failures.txt."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 3:
                raise ValueError("%s: expected 3 TAB-separated fields: %r" % (path, line))
            out.append((re.compile(fields[0]), re.compile(fields[1]), fields[2]))
    return out


def explain(rec, description, expected):
    """Marks an unexplained failure XFAIL when an expected_failures.txt entry matches or
    the case folder has an EXPECT_FAIL file (a regression of an open finding, its reason
    in the file); such a folder that passes is an unexplained failure (XPASS: the
    finding is fixed, remove EXPECT_FAIL)."""
    xf = os.path.join(rec["case"], "EXPECT_FAIL")
    if os.path.exists(xf):
        with open(xf) as f:
            reason = f.read().strip()
        if rec["status"] == "PASS":
            rec.update(status="XPASS", detail="passes now: remove its EXPECT_FAIL (%s)" % reason)
        elif rec["status"] in UNEXPLAINED:
            rec.update(xfail=reason, raw_status=rec["status"], status="XFAIL")
        return rec
    if rec["status"] not in UNEXPLAINED:
        return rec
    for dre, tre, reason in expected:
        if dre.search(description) and tre.search(target_label(rec["target"])):
            rec["xfail"] = reason
            rec["raw_status"] = rec["status"]
            rec["status"] = "XFAIL"
            break
    return rec
