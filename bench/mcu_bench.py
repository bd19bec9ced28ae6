#!/usr/bin/python3
"""mcu_bench.py - the microcontroller benchmark behind bench/mcu_bench.sh (docs/benchmarks.md,
section "Microcontroller CPU kernels (Cortex-M4F, RV32)").

For each model and kernel variant: `npucc MODEL -o OUT --target cpu --emit-test --data DIR`;
for each architecture (Cortex-M4F on mps2-an386, RV32IMAC on virt) and optimisation level, the
OUT/ files are compiled once with -ffunction-sections -fdata-sections and linked
(-Wl,--gc-sections) three times with bench/mcu_harness.c: the test program built with
-DNPUCC_TEST_REPEAT=1 and =2 (the difference of their instruction counts is one inference,
without start-up and I/O), and a build whose model.c calls the harness at each
NPUCC_LAYER_HOOK (per-layer counts; the stack is painted there). Each runs under QEMU with
-icount shift=0 and must print PASS. Flash comes from the linker map of the 1-run build, the
arena from report.json.

Only the standard library is needed. Usage: see bench/mcu_bench.sh --help;
`mcu_bench.py tables ROWS.json` prints the tables of a saved run again (bench/mcu_tables.py).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

from mcu_tables import tables

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FW = os.path.join(ROOT, "test", "firmware")

# name -> (where, folder, extra npucc flags)
MODELS = {
    "mlpt_kws_qdq": ("shared", "mlpt_kws_qdq", []),
    "mlpt_ic_qdq": ("shared", "mlpt_ic_qdq", []),
    "mlpt_vww_qdq": ("shared", "mlpt_vww_qdq", []),
    "mlpt_ad_qdq": ("shared", "mlpt_ad_qdq", []),
    "tinycnn_int8": ("project", "tinycnn_int8", []),
    "mnist8": ("shared", "mnist8", []),
}
DEFAULT_MODELS = list(MODELS)

M4 = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
RV = ["riscv64-unknown-elf-gcc", "-march=rv32imac", "-mabi=ilp32", "--specs=picolibc.specs"]
ARCHS = {
    "cortex-m4": {
        "cc": M4,
        "link": ["-T", os.path.join(FW, "m4_mps2_an386.ld"), "-nostartfiles", "--specs=nano.specs",
                 "--specs=rdimon.specs", "-u", "_printf_float"],
        "startup": [os.path.join(FW, "m4_startup.c")],
        "qemu": ["qemu-system-arm", "-M", "mps2-an386"],
    },
    "rv32": {
        "cc": RV,
        "link": ["--crt0=semihost", "--oslib=semihost",
                 "-Wl,--defsym=__flash=0x80000000,--defsym=__flash_size=0x400000",
                 "-Wl,--defsym=__ram=0x80400000,--defsym=__ram_size=0x800000",
                 "-Wl,--defsym=__stack_size=0x20000"],
        "startup": [],
        "qemu": ["qemu-system-riscv32", "-M", "virt", "-bios", "none"],
    },
}
GC = ["-ffunction-sections", "-fdata-sections"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd, cwd=None, timeout=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, universal_newlines=True)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or "") if isinstance(e.stdout, str) else ""


# ---------------------------------------------------------------- the generated C


def split_args(text):
    """Top-level comma split of a C argument list."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def ival(s):
    s = s.strip()
    m = re.fullmatch(r"\(?\s*(-?\d+)\s*\)?[LlUu]*", s)
    return int(m.group(1)) if m else None


def hooked_calls(model_c):
    """[(index, callee, comment, args)] for every NPUCC_LAYER_HOOK of the run function."""
    calls, comment, pending = [], "", None
    for line in open(model_c):
        t = line.strip()
        m = re.match(r"/\*\s*(.*?)\s*\*/$", t)
        if m and line.startswith("  /*"):
            comment = m.group(1)
            continue
        m = re.match(r'NPUCC_LAYER_HOOK\((\d+), "([^"]*)"\);', t)
        if m:
            pending = [int(m.group(1)), m.group(2), comment, []]
            calls.append(pending)
            continue
        if pending is not None and not pending[3]:
            m = re.match(r"[A-Za-z_]\w*\((.*)\);$", t)
            if m:
                pending[3] = split_args(m.group(1))
                pending = None
    return calls


PASSES = [0]


def int8_constants(weights_c):
    """{name: bytes} of the int8/uint8 constants written as hex bytes in <prefix>_weights.c."""
    out, name, vals = {}, None, []
    for line in open(weights_c):
        m = re.match(r"const (\w+)_t \1 = \{\{", line)
        if m:
            name, vals = m.group(1), []
            continue
        if name is None:
            continue
        if line.startswith("}};"):
            if all(len(v) == 4 for v in vals):  # 0xNN: one byte per element
                out[name] = bytes(int(v, 16) for v in vals)
            name = None
            continue
        vals.extend(re.findall(r"0x[0-9a-f]+", line))
    return out


def int32_arrays(model_c):
    """{name: [values]} of the int32 constant arrays of the generated model.c."""
    text = open(model_c).read()
    return {m.group(1): [int(v) for v in m.group(2).split(",") if v.strip()]
            for m in re.finditer(r"static const int32_t (\w+)\[\d+\] = \{([^}]*)\}", text)}


def computed_fraction(callee, args, arrays):
    """Share of a group-1 fast convolution's output channels it computes: the others have
    all-zero weights and a constant output (its channel map, runtime/kernels/
    npucc_conv_s8_fast.h); 1.0 without a map, None for other kernels."""
    if callee != "npucc_conv2d_s8_fast" or len(args) < 27 or ival(args[9]) is None:
        return None
    chmap = arrays.get(args[26].strip())
    return chmap[0] / ival(args[9]) if chmap else 1.0


def nonzero_fraction(callee, args, consts):
    """Share of a int8 convolution's weights that are not 0 (the kernel skips zero weights:
    runtime/kernels/npucc_conv_s8.c), when its weight zero points are all 0; else None."""
    if not callee.startswith("npucc_conv2d_s8") or len(args) < 26:
        return None
    if args[25].replace(" ", "") != "(constint32_t*)0":
        return None
    w = consts.get(args[1].split(".")[0].strip())
    if not w:
        return None
    return sum(1 for b in w if b) / len(w)


def classify(callee, args, comment):
    """(layer type, MACs) of one kernel call; float kernels' types end in " f32". PASSES[0]:
    for convolutions, the number of (output channel, input channel, tap) plane loops."""
    PASSES[0] = 0
    t, macs = classify_kernel(callee, args)
    if "_f32" in callee and t not in ("quantize", "dequantize", "copy") and not t.endswith("f32"):
        t += " f32"
    return t, macs


def classify_kernel(callee, args):
    a = [ival(x) for x in args]
    name = callee[6:] if callee.startswith("npucc_") else callee
    if name == "conv2d_s8_fast" and len(a) > 13 and None not in a[5:14]:
        # npucc_conv_s8_fast.h: (X, W, bias, Y, panel, N, C, H, W, M, OH, OW, KH, KW, ...),
        # group 1 only.
        n, c, m, oh, ow, kh, kw = a[5], a[6], a[9], a[10], a[11], a[12], a[13]
        PASSES[0] = n * m * c * kh * kw
        return ("conv 1x1" if kh * kw == 1 else "conv kxk"), n * m * oh * ow * c * kh * kw
    if name == "dwconv2d_s8_fast" and len(a) > 12 and None not in a[5:13]:
        # (X, W, bias, Y, rows, N, C, H, W, OH, OW, KH, KW, ...)
        n, c, oh, ow, kh, kw = a[5], a[6], a[9], a[10], a[11], a[12]
        return "depthwise conv", n * c * oh * ow * kh * kw
    if name == "fc_s8_fast" and len(a) > 6 and None not in a[4:7]:
        # npucc_fc_s8_fast.h: (A, Wp, bias, Y, rows, N, K, ...)
        return "gemm", a[4] * a[5] * a[6]
    if name == "gemm_s8_fast" and len(a) > 6 and None not in a[4:7]:
        # npucc_gemm_s8_fast.h: (A, B, bias, Y, rows, N, K, ...)
        return "gemm", a[4] * a[5] * a[6]
    if name.startswith("conv2d") and len(a) > 20 and None not in a[5:21]:
        n, c, m, oh, ow, kh, kw, g = a[5], a[6], a[9], a[10], a[11], a[12], a[13], a[20]
        macs = n * m * oh * ow * (c // max(g, 1)) * kh * kw
        PASSES[0] = n * m * (c // max(g, 1)) * kh * kw  # loops over the output plane
        if g > 1 and g == c:
            return "depthwise conv", macs
        return ("conv 1x1" if kh * kw == 1 else "conv kxk"), macs
    if name.startswith("depthwise_conv2d") and len(a) > 13 and None not in a[5:14]:
        n, m, oh, ow, kh, kw = a[5], a[9], a[10], a[11], a[12], a[13]
        return "depthwise conv", n * m * oh * ow * kh * kw
    if name.startswith("gemm_s8") and len(a) > 8 and None not in a[5:9]:
        return "gemm", a[5] * a[6] * a[7] * a[8]
    if name == "gemm_f32" and len(a) > 7 and None not in a[5:8]:
        return "gemm", a[5] * a[6] * a[7]
    if name == "matmul_f32" and len(a) > 7 and None not in a[4:8]:
        return "gemm", a[4] * a[5] * a[6] * a[7]
    if name.startswith(("gemm", "matmul", "sgemm")):
        return "gemm", 0
    if name.startswith(("quantize_",)):
        return "quantize", 0
    if name.startswith("dequantize_"):
        return "dequantize", 0
    if name.startswith(("add_", "addc_", "mul_", "mulc_", "sub_", "div_")):
        return name.split("_")[0].rstrip("c"), 0
    if "pool" in name or name.startswith("reduce_mean"):
        return "pool", 0
    if name.startswith("softmax"):
        return "softmax", 0
    if name in ("memcpy", "memset", "copy", "copy_rows", "strided_copy", "transpose2d", "fill",
                "remap", "gather_idx32", "gather_idx64"):
        return "copy", 0
    if name.startswith(("relu", "clip", "clamp", "sigmoid", "tanh", "hardsigmoid", "hardswish",
                        "leakyrelu")):
        return "activation", 0
    if name.startswith("requant"):
        return "requantize", 0
    return name, 0


def layer_elements(report, comment):
    """Output elements of the report layer a call's comment names (0 when unknown)."""
    best = None
    for l in report.get("layers", []):
        nm = l.get("name", "")
        if nm and nm in comment and (best is None or len(nm) > len(best.get("name", ""))):
            best = l
    if best is None:
        return 0
    shape = best.get("output_shape", [])
    if isinstance(shape, str):
        shape = [int(d) if d.isdigit() else -1 for d in shape.split("x")]
    n = 1
    for d in shape:
        if not isinstance(d, int) or d < 0:
            return 0
        n *= d
    return n


# ---------------------------------------------------------------- flash from the linker map


def map_sizes(map_path, out_dir):
    """Bytes kept by the link, by role: code (.text of the generated folder), weights
    (.rodata of <prefix>_weights.o), other constants (.rodata of the other generated objects),
    ram (.data/.bss of the generated objects: the arena and small tables); the test program's
    embedded inputs and expected outputs and the harness/libc are left out."""
    text = open(map_path).read()
    start = text.find("Linker script and memory map")
    text = text[start:] if start >= 0 else text
    sizes = {"code": 0, "weights": 0, "const": 0, "ram": 0}
    rx = re.compile(r"^ (\.[\w.$]+)?\s*\n?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+\.o)\s*$", re.M)
    for m in rx.finditer(text):
        sec, size, obj = m.group(1) or "", int(m.group(3), 16), os.path.basename(m.group(4))
        if not obj.startswith("gen_") or obj.endswith("_test.o"):
            continue
        if sec.startswith(".text"):
            sizes["code"] += size
        elif sec.startswith((".rodata", ".srodata")):
            sizes["weights" if obj.endswith("_weights.o") else "const"] += size
        elif sec.startswith((".data", ".bss", ".sdata", ".sbss")):
            sizes["ram"] += size
    return sizes


# ---------------------------------------------------------------- one model


def compile_model(args, name, variant, work):
    where, folder, flags = MODELS[name]
    d = os.path.join(args.shared if where == "shared" else os.path.join(ROOT, "models"), folder)
    if not os.path.isfile(os.path.join(d, "model.onnx")):
        return None, "no %s/model.onnx" % d
    out = os.path.join(work, "c")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [args.npucc, os.path.join(d, "model.onnx"), "-o", out, "--target", "cpu", "--emit-test",
           "--data", os.path.join(d, "test_data_set_0")] + flags + variant["npucc"]
    rc, text = run(cmd)
    open(os.path.join(work, "compile.log"), "w").write(" ".join(cmd) + "\n" + text)
    if rc != 0:
        return None, "npucc failed (%s)" % text.strip().splitlines()[-1:]
    return out, None


def parse_run(text):
    r = {"pass": bool(re.search(r"^PASS", text, re.M)), "layers": {}}
    tick = 1
    for line in text.splitlines():
        f = line.split()
        if not f or not f[0].startswith("MCU_"):
            continue
        if f[0] == "MCU_TICK":
            tick = int(f[1])
        elif f[0] == "MCU_TOTAL":
            r["ticks"] = int(f[1]) * 1000000 + int(f[2])
        elif f[0] == "MCU_HOOK_COST":
            r["hook_cost"] = int(f[1])
        elif f[0] == "MCU_STACK":
            r["stack"] = int(f[1])
            r["stack_overflow"] = len(f) > 2
        elif f[0] == "MCU_LAYER":
            r["layers"][int(f[1])] = ((int(f[2]) * 1000000 + int(f[3])) * tick, int(f[4]))
    r["tick"] = tick
    if "ticks" in r:
        r["total"] = r["ticks"] * tick
    return r


def build_and_run(args, cdir, arch, opt, variant, work):
    """Instructions of one inference, per-layer instructions, flash, stack for one build."""
    a = ARCHS[arch]
    bdir = os.path.join(work, "%s%s" % (arch, opt))
    shutil.rmtree(bdir, ignore_errors=True)
    os.makedirs(bdir)
    cc = a["cc"] + [opt, "-std=c99", "-I", cdir, "-I", HERE] + GC + variant["cflags"]
    srcs = sorted(f for f in os.listdir(cdir) if f.endswith(".c"))
    prefix = [f[:-7] for f in srcs if f.endswith("_test.c")]
    if not prefix:
        return {"error": "no *_test.c"}
    prefix = prefix[0]
    logf = open(os.path.join(bdir, "build.log"), "w")

    def cc_obj(src, obj, extra=()):
        rc, text = run(cc + list(extra) + ["-c", os.path.join(cdir, src), "-o", obj])
        logf.write(text)
        return rc == 0

    objs = []
    for s in srcs:
        if s in (prefix + "_test.c",):
            continue
        o = os.path.join(bdir, "gen_" + s[:-2] + ".o")
        if not cc_obj(s, o):
            return {"error": "compile %s failed (see %s)" % (s, logf.name)}
        if s != prefix + ".c":
            objs.append(o)
    model_o = os.path.join(bdir, "gen_" + prefix + ".o")
    hooked_o = os.path.join(bdir, "gen_hooked_" + prefix + ".o")
    if not cc_obj(prefix + ".c", hooked_o, ["-include", "mcu_hooks.h"]):
        return {"error": "compile hooked model failed"}
    tests = {}
    for n in (1, 2):
        tests[n] = os.path.join(bdir, "gen_r%d_%s_test.o" % (n, prefix))
        if not cc_obj(prefix + "_test.c", tests[n], ["-DNPUCC_TEST_REPEAT=%d" % n]):
            return {"error": "compile test program failed"}
    harness = os.path.join(bdir, "mcu_harness.o")
    rc, text = run(cc + ["-c", os.path.join(HERE, "mcu_harness.c"), "-o", harness])
    if rc != 0:
        logf.write(text)
        return {"error": "harness does not compile"}
    startup = []
    for s in a["startup"]:
        o = os.path.join(bdir, os.path.basename(s)[:-2] + ".o")
        rc, text = run(cc + ["-c", s, "-o", o])
        startup.append(o)
    res = {}
    runs = {}
    for tag, mobj, tobj in (("r1", model_o, tests[1]), ("r2", model_o, tests[2]),
                            ("layers", hooked_o, tests[1])):
        elf = os.path.join(bdir, tag + ".elf")
        mp = os.path.join(bdir, tag + ".map")
        rc, text = run(cc + ["-Wl,--gc-sections", "-Wl,--wrap=main", "-Wl,-Map=" + mp] + startup
                       + [mobj, tobj, harness] + objs + a["link"] + ["-lm", "-o", elf])
        logf.write(text)
        if rc != 0:
            return {"error": "link %s failed (see %s)" % (tag, logf.name)}
        t0 = time.time()
        rc, text = run(a["qemu"] + ["-nographic", "-monitor", "none", "-semihosting-config",
                                    "enable=on,target=native", "-icount", "shift=0", "-kernel",
                                    elf], timeout=args.timeout)
        open(os.path.join(bdir, tag + ".log"), "w").write(text)
        r = parse_run(text)
        r["seconds"] = time.time() - t0
        if rc == 124:
            return {"error": "QEMU timed out after %d s (%s)" % (args.timeout, tag)}
        if not r["pass"] or "total" not in r:
            return {"error": "%s did not PASS under QEMU (see %s)" % (tag, bdir)}
        runs[tag] = r
    res["instructions"] = runs["r2"]["total"] - runs["r1"]["total"]
    res["tick"] = runs["r1"]["tick"]
    res["flash"] = map_sizes(os.path.join(bdir, "r1.map"), cdir)
    lr = runs["layers"]
    res["stack"] = lr.get("stack")
    res["stack_overflow"] = lr.get("stack_overflow", False)
    cost = lr.get("hook_cost", 0)
    res["hook_cost"] = cost
    res["layers"] = {i: max(v[0] - cost * v[1], 0) for i, v in lr["layers"].items()}
    res["layer_sum"] = sum(res["layers"].values())
    if not args.keep:
        for f in os.listdir(bdir):
            if f.endswith((".o", ".elf")):
                os.remove(os.path.join(bdir, f))
    return res


def arena_of(cdir, report):
    """(arena bytes, live-set lower bound) from the generated model.c, else report.json."""
    for f in os.listdir(cdir):
        if f.endswith(".c") and not f.endswith(("_test.c", "_weights.c")):
            m = re.search(r"Activations: (\d+) bytes \(lower bound (\d+)", open(os.path.join(cdir, f)).read())
            if m:
                return int(m.group(1)), int(m.group(2))
    return report.get("totals", {}).get("arena_bytes", 0), None


def bench_model(args, name, variants, rows):
    for v in variants:
        work = os.path.join(args.out, name, v["name"])
        os.makedirs(work, exist_ok=True)
        log("== %s, variant %s" % (name, v["name"]))
        cdir, err = compile_model(args, name, v, work)
        if err:
            log("   " + err)
            key = "skipped" if err.startswith("no ") else "error"
            rows.append({"model": name, "variant": v["name"], key: err})
            continue
        report = json.load(open(os.path.join(cdir, "report.json")))
        macs = report.get("totals", {}).get("macs", 0)
        arena, bound = arena_of(cdir, report)
        model_c = [f for f in os.listdir(cdir) if f.endswith("_test.c")][0][:-7] + ".c"
        calls = hooked_calls(os.path.join(cdir, model_c))
        consts = int8_constants(os.path.join(cdir, model_c[:-2] + "_weights.c"))
        arrays = int32_arrays(os.path.join(cdir, model_c))
        for arch in args.archs:
            if v["archs"] and arch not in v["archs"]:
                continue
            for opt in args.opts:
                row = {"model": name, "variant": v["name"], "arch": arch, "opt": opt,
                       "macs": macs, "arena": arena, "arena_bound": bound}
                r = build_and_run(args, cdir, arch, opt, v, work)
                if "error" in r:
                    row["error"] = r["error"]
                    log("   %s %s: %s" % (arch, opt, r["error"]))
                    rows.append(row)
                    continue
                row.update({k: r[k] for k in ("instructions", "flash", "stack", "stack_overflow",
                                              "hook_cost", "layer_sum", "tick")})
                types = {}
                row["calls"] = []
                row["computed_macs"] = macs
                for idx, callee, comment, cargs in calls:
                    n = r["layers"].get(idx)
                    if n is None:
                        continue
                    t, m = classify(callee, cargs, comment)
                    e = layer_elements(report, comment)
                    row["calls"].append({"index": idx, "kernel": callee, "layer": comment,
                                         "type": t, "macs": m, "elements": e,
                                         "passes": PASSES[0], "instructions": n,
                                         "nonzero": nonzero_fraction(callee, cargs, consts)})
                    f = computed_fraction(callee, cargs, arrays)
                    if f is not None and m:
                        row["computed_macs"] -= m - int(round(m * f))
                    e = e if not m else 0
                    agg = types.setdefault(t, {"calls": 0, "instructions": 0, "macs": 0,
                                               "elements": 0})
                    agg["calls"] += 1
                    agg["instructions"] += n
                    agg["macs"] += m
                    agg["elements"] += e
                row["types"] = types
                log("   %-9s %s: %d instructions, %.2f per MAC, stack %s B; the layer hooks "
                    "cover %.1f%% of it" % (
                        arch, opt, r["instructions"], r["instructions"] / macs if macs else 0,
                        r["stack"], 100.0 * r["layer_sum"] / max(r["instructions"], 1)))
                rows.append(row)
        if not args.keep:
            shutil.rmtree(cdir, ignore_errors=True)


def parse_variant(spec):
    f = (spec.split("|") + ["", "", ""])[:4]
    return {"name": f[0], "npucc": f[1].split(), "cflags": f[2].split(),
            "archs": [a for a in f[3].split(",") if a]}


def default_variants(npucc):
    rc, text = run([npucc, "--help"])
    if "--cpu-kernels" in text:
        return [parse_variant("reference|--cpu-kernels=reference||"),
                parse_variant("portable||-DNPUCC_PORTABLE_ONLY|"),
                parse_variant("dsp|||cortex-m4")]
    return [parse_variant("current|||")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    if len(sys.argv) == 3 and sys.argv[1] == "tables":  # re-render a saved run's rows.json
        rows = json.load(open(sys.argv[2]))
        names = []
        for r in rows:
            if r["variant"] not in names:
                names.append(r["variant"])
        print(tables(rows, [{"name": n} for n in names]))
        return 0
    ap.add_argument("--npucc", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--archs", default="cortex-m4,rv32")
    ap.add_argument("--opts", default="-O2,-Os")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME|NPUCC FLAGS|CFLAGS|ARCHS (repeatable; the first is the baseline)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    args.archs = [a for a in args.archs.split(",") if a]
    args.opts = [o if o.startswith("-") else "-" + o for o in args.opts.split(",") if o]
    for a in args.archs:
        if a not in ARCHS:
            sys.exit("mcu_bench: unknown arch %s (known: %s)" % (a, ", ".join(ARCHS)))
    variants = [parse_variant(s) for s in args.variant] or default_variants(args.npucc)
    rows = []
    for m in [x for x in args.models.split(",") if x]:
        if m not in MODELS:
            sys.exit("mcu_bench: unknown model %s (known: %s)" % (m, ", ".join(MODELS)))
        bench_model(args, m, variants, rows)
    json.dump(rows, open(os.path.join(args.out, "rows.json"), "w"), indent=1)
    text = tables(rows, variants)
    open(os.path.join(args.out, "results.md"), "w").write(text)
    print(text)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
