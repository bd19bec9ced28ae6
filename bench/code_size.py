#!/usr/bin/env python3
"""code_size.py - Measure the runtime's functions for the compile-time memory fit.

Compiles every file of runtime/kernels and the NPU runtime (runtime/hal/npucc_hal.c,
npucc_npu.c, npucc_stream.c) for the reference microcontrollers of bench/mcu_bench.sh
(Cortex-M4F and RV32IMAC, each at -Os and -O2, -ffunction-sections -fdata-sections),
and writes lib/lower/cpu/CodeSize.def: per function its .text bytes and its own stack
frame (gcc's -fcallgraph-info=su) in each configuration, per file its read-only data,
and the direct call edges (an indirect call reaches the file's static functions that
have no direct caller: the kernels dispatch row functions through pointers). The
compiler adds up the closure of the functions a program calls (lower::estimateCode).

Usage: bench/code_size.py [--out lib/lower/cpu/CodeSize.def] [--rows RUN/rows.json] [--check]
  --rows: refit the generated model file's code and stack terms (NPUCC_CODE_GLUE) to a
          bench/mcu_bench.sh --opts O2,Os run;
  --check: exit 1 when the table on disk differs from a fresh measurement (stale).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
M4 = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
RV = ["riscv64-unknown-elf-gcc", "-march=rv32imac", "-mabi=ilp32", "--specs=picolibc.specs"]
CONFIGS = [("M4Os", M4, "-Os", "arm-none-eabi-nm"), ("M4O2", M4, "-O2", "arm-none-eabi-nm"),
           ("RvOs", RV, "-Os", "riscv64-unknown-elf-nm"), ("RvO2", RV, "-O2", "riscv64-unknown-elf-nm")]


def sources():
    k = sorted(os.path.join("runtime/kernels", f)
               for f in os.listdir(os.path.join(ROOT, "runtime/kernels")) if f.endswith(".c"))
    return k + ["runtime/hal/npucc_hal.c", "runtime/hal/npucc_npu.c", "runtime/hal/npucc_stream.c"]


def measure(src, cfg, work):
    """(functions {qualified: (size, stack)}, edges {(a, b)}, rodata and RAM bytes) of one
    file."""
    name, cc, opt, nm = cfg
    base = os.path.basename(src)[:-2]
    obj = os.path.join(work, "%s_%s.o" % (base, name))
    ci = obj[:-2] + ".ci"
    cmd = cc + [opt, "-std=c99", "-ffunction-sections", "-fdata-sections",
                "-fcallgraph-info=su", "-I", os.path.join(ROOT, "runtime/include"),
                "-I", os.path.join(ROOT, "runtime/kernels"), "-I", os.path.join(ROOT, "runtime/hal"),
                "-c", os.path.join(ROOT, src), "-o", obj]
    p = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.exit("code_size.py: %s failed:\n%s" % (" ".join(cmd), p.stdout))
    out = subprocess.run([nm, "-S", obj], stdout=subprocess.PIPE, universal_newlines=True,
                         check=True).stdout
    sizes, statics, rodata, ram = {}, set(), 0, 0
    for line in out.splitlines():
        f = line.split()
        if len(f) != 4:
            continue
        size, kind, sym = int(f[1], 16), f[2], f[3]
        if kind in "Tt":
            q = sym if kind == "T" else "%s:%s" % (base, sym)
            sizes[q] = sizes.get(q, 0) + size
            if kind == "t":
                statics.add(sym)
        elif kind in "Rr":
            rodata += size
        elif kind in "BbDdSs":
            ram += size
    stacks, edges, indirect = {}, set(), set()
    text = open(ci).read()
    path = os.path.join(ROOT, src)

    def qual(title):
        t = title.replace(path + ":", "")
        return "%s:%s" % (base, t) if t in statics else t

    for m in re.finditer(r'node: \{ title: "([^"]+)" label: "[^\\]*\\n[^\\]*\\n(\d+) bytes', text):
        stacks[qual(m.group(1))] = int(m.group(2))
    for m in re.finditer(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', text):
        a, b = qual(m.group(1)), qual(m.group(2))
        if b == "__indirect_call":
            indirect.add(a)
        elif not b.startswith("__builtin"):
            edges.add((a, b))
    called = {b for _, b in edges}
    for a in indirect:
        for s in statics:
            q = "%s:%s" % (base, s)
            if q != a and q not in called:
                edges.add((a, q))
    funcs = {q: (sizes.get(q, 0), stacks.get(q, 0)) for q in set(sizes) | set(stacks)
             if q in sizes}
    return funcs, edges, rodata, ram


def closure(entries, rows, calls):
    seen, todo = set(), list(entries)
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo += calls.get(f, [])
    return seen


def path_stack(f, ci, rows, calls, seen=()):
    if f not in rows or f in seen:
        return 0
    return rows[f]["stack"][ci] + max(
        [path_stack(g, ci, rows, calls, seen + (f,)) for g in calls.get(f, [])] + [0])


def glue_fit(rows_json, rows, calls):
    """Per configuration: the generated model file's code as base + per_call * calls, and
    the stack above the deepest kernel path (run function, caller), from mcu_bench rows:
    code = measured .text of the generated folder - the kernels' closure."""
    import json
    keys = {("cortex-m4", "-Os"): 0, ("cortex-m4", "-O2"): 1, ("rv32", "-Os"): 2,
            ("rv32", "-O2"): 3}
    pts = [[] for _ in CONFIGS]
    for r in json.load(open(rows_json)):
        ci = keys.get((r["arch"], r["opt"]))
        if ci is None or "flash" not in r:
            continue
        ents = {c["kernel"] for c in r["calls"]}
        code = sum(rows[f]["size"][ci] for f in closure(ents, rows, calls[ci]) if f in rows)
        st = max(path_stack(e, ci, rows, calls[ci]) for e in ents)
        pts[ci].append((len(r["calls"]), r["flash"]["code"] - code, r["stack"] - st))
    out = []
    for ci, p in enumerate(pts):
        if not p:
            sys.exit("code_size.py: no rows for %s in %s" % (CONFIGS[ci][0], rows_json))
        n = len(p)
        mx, my = sum(x for x, _, _ in p) / n, sum(y for _, y, _ in p) / n
        sxx = sum((x - mx) ** 2 for x, _, _ in p)
        b = sum((x - mx) * (y - my) for x, y, _ in p) / sxx if sxx else 0
        a = my - b * mx
        if a < 0 or b < 0:  # keep the model monotone: through the origin
            a, b = 0, sum(y for _, y, _ in p) / max(sum(x for x, _, _ in p), 1)
        out.append((CONFIGS[ci][0], int(round(a)), int(round(b)), max(max(s for *_, s in p), 0)))
    return out


def measure_all():
    rows, files, edges = {}, {}, {}
    jobs = [(src, ci, cfg) for src in sources() for ci, cfg in enumerate(CONFIGS)]
    with tempfile.TemporaryDirectory() as work:
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as ex:
            results = list(ex.map(lambda j: measure(j[0], j[2], work), jobs))
    for (src, ci, _), (funcs, e, ro, ram) in zip(jobs, results):
        base = os.path.basename(src)
        f = files.setdefault(base, ([0] * 4, [0] * 4))
        f[0][ci], f[1][ci] = ro, ram
        for ab in e:
            edges[ab] = edges.get(ab, 0) | (1 << ci)
        for q, (size, stack) in funcs.items():
            r = rows.setdefault(q, {"file": base, "size": [0] * 4, "stack": [0] * 4})
            r["size"][ci], r["stack"][ci] = size, stack
    calls = [{} for _ in CONFIGS]  # per configuration: caller -> callees
    for (a, b), mask in sorted(edges.items()):
        for ci in range(len(CONFIGS)):
            if mask >> ci & 1:
                calls[ci].setdefault(a, []).append(b)
    return rows, files, edges, calls


def table(rows, files, edges, glue):
    lines = [
        "//===- CodeSize.def - Code bytes and stack frames of the runtime -*- C++ -*-===//",
        "//",
        "// Generated by bench/code_size.py from gcc's symbol sizes and -fcallgraph-info=su of",
        "// every runtime/kernels file and the NPU runtime (npucc_hal.c, npucc_npu.c,",
        "// npucc_stream.c), compiled for Cortex-M4F (%s) and RV32IMAC (%s) at -Os and"
        % (" ".join(M4[1:]), " ".join(RV[1:3])),
        "// -O2 with -ffunction-sections -fdata-sections. Do not edit by hand: rerun the script",
        "// after a runtime change (test `code_size_table` fails while this table is stale;",
        "// docs/benchmarks.md, \"Memory fit\"). Static functions are named file:function.",
        "//",
        "// NPUCC_CODE_FN(name, file, M4Os, M4O2, RvOs, RvO2 .text bytes, the same four",
        "//               own stack frames)",
        "// NPUCC_CODE_FILE(file, M4Os, M4O2, RvOs, RvO2 read-only data bytes, the same four",
        "//                 .data + .bss bytes)",
        "// NPUCC_CODE_CALL(caller, callee, configurations: bit 0 M4Os .. bit 3 RvO2)",
        "// NPUCC_CODE_GLUE(config, base, per_call, stack): the generated model file's code",
        "//   (base + per_call * CPU calls) and the stack above the deepest kernel path, fitted",
        "//   by `--rows` to bench/mcu_bench.sh's measurements (kept as they are otherwise)",
        "//",
        "//===----------------------------------------------------------------------===//",
    ]
    for q in sorted(rows):
        r = rows[q]
        lines.append('NPUCC_CODE_FN("%s", "%s", %s, %s)' % (
            q, r["file"], ", ".join(map(str, r["size"])), ", ".join(map(str, r["stack"]))))
    for f in sorted(files):
        lines.append('NPUCC_CODE_FILE("%s", %s, %s)' % (f, ", ".join(map(str, files[f][0])),
                                                       ", ".join(map(str, files[f][1]))))
    for (a, b), mask in sorted(edges.items()):
        lines.append('NPUCC_CODE_CALL("%s", "%s", %d)' % (a, b, mask))
    lines += glue
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "lib/lower/cpu/CodeSize.def"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--rows", help="rows.json of a bench/mcu_bench.sh --opts O2,Os run: refit "
                    "the NPUCC_CODE_GLUE rows")
    a = ap.parse_args()
    missing = [c[1][0] for c in CONFIGS if not shutil.which(c[1][0])]
    if missing:
        # Like test/e2e/ci_skip.sh: a skip (77) on a developer machine, a failure under CI.
        print("%s: %s not installed" % ("FAIL" if os.environ.get("CI") else "SKIP",
                                        ", ".join(sorted(set(missing)))))
        sys.exit(1 if os.environ.get("CI") else 77)
    old = open(a.out).read() if os.path.exists(a.out) else ""
    rows, files, edges, calls = measure_all()
    if a.rows:
        glue = ['NPUCC_CODE_GLUE(%s, %d, %d, %d)' % g for g in glue_fit(a.rows, rows, calls)]
    else:
        glue = [l for l in old.splitlines() if l.startswith("NPUCC_CODE_GLUE(")]
        if len(glue) != len(CONFIGS):
            sys.exit("code_size.py: %s has no NPUCC_CODE_GLUE rows: pass --rows" % a.out)
    t = table(rows, files, edges, glue)
    if a.check:
        if old != t:
            sys.exit("code_size.py: %s is stale: rerun bench/code_size.py after the runtime "
                     "change" % a.out)
        print("code_size.py: %s matches the runtime sources" % a.out)
        return
    open(a.out, "w").write(t)
    print("wrote %s" % a.out)


if __name__ == "__main__":
    main()
