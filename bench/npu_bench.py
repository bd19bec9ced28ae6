#!/usr/bin/python3
"""Helper of bench/npu_bench.sh (see docs/benchmarks.md, section "NPU").

  npu_bench.py onnx-macs MODEL.onnx [NAME=DIMS ...]   MACs of Conv/ConvTranspose/Gemm/MatMul
                                                     (and their QLinear forms) counted on the
                                                     ONNX model itself; prints an integer, or
                                                     nothing when python3-onnx is missing
  npu_bench.py row KEY=VALUE ...                     the facts the shell collected (paths of
                                                     report.json, check JSON and logs, times);
                                                     adds the derived figures, prints one JSON line
  npu_bench.py mpc TARGET.json                       MACs per cycle (mac_array rows x cols)
  npu_bench.py table ROWS.jsonl                      Markdown table of all rows
  npu_bench.py rederive ROWS.jsonl                   recompute the derived figures of saved rows
  npu_bench.py layers REPORT.json [CHECK.json|-] [MACS_PER_CYCLE]
                                                     per-layer breakdown of one compile

Only the standard library is needed (json); python3-onnx is optional (onnx-macs).
"""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- onnx-macs

def onnx_macs(path, shapes):
    try:
        import onnx
        from onnx import shape_inference
    except ImportError:
        return None
    m = onnx.load(path)
    for spec in shapes:
        name, dims = spec.split("=", 1)
        for i in m.graph.input:
            if i.name == name:
                t = i.type.tensor_type
                del t.shape.dim[:]
                for d in dims.split("x"):
                    t.shape.dim.add().dim_value = int(d)
    del m.graph.value_info[:]  # stale symbolic shapes (e.g. batch_size) would stay otherwise

    def shapes_of(model):
        d = {}
        for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
            tt = vi.type.tensor_type
            if not tt.HasField("shape"):
                continue
            d[vi.name] = [x.dim_value if x.HasField("dim_value") else 0 for x in tt.shape.dim]
        for t in model.graph.initializer:
            d[t.name] = list(t.dims)
        return d

    # onnx's shape inference stops at com.microsoft ops (QLinearAdd, QLinearGlobalAveragePool
    # of the ONNX zoo's int8 models): give their outputs a shape and infer again.
    for _ in range(64):
        m = shape_inference.infer_shapes(m)
        shp = shapes_of(m)
        added = False
        for n in m.graph.node:
            if not n.output or shp.get(n.output[0]) or not n.input or not shp.get(n.input[0]):
                continue
            x = shp[n.input[0]]
            if n.op_type in ("QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu"):
                out = list(x)
            elif n.op_type == "QLinearGlobalAveragePool" and len(x) >= 3:
                last = next((a.i for a in n.attribute if a.name == "channels_last"), 0)
                out = [x[0]] + [1] * (len(x) - 2) + [x[-1]] if last else x[:2] + [1] * (len(x) - 2)
            else:
                continue
            vi = onnx.helper.make_tensor_value_info(n.output[0], onnx.TensorProto.UINT8, out)
            m.graph.value_info.append(vi)
            added = True
        if not added:
            break

    def prod(v):
        p = 1
        for x in v:
            p *= x
        return p

    # element counts, carried through shape-only ops whose output shape is unknown
    elems = {k: prod(v) for k, v in shp.items() if v and 0 not in v}
    for n in m.graph.node:
        if (n.output and n.input and n.output[0] not in elems and n.input[0] in elems and
                n.op_type in ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "QuantizeLinear",
                              "DequantizeLinear", "Identity", "Cast")):
            elems[n.output[0]] = elems[n.input[0]]

    total = 0
    for n in m.graph.node:
        op = n.op_type
        ins = list(n.input)
        out = shp.get(n.output[0]) if n.output else None
        if op in ("Conv", "QLinearConv", "ConvInteger"):
            w = shp.get(ins[3] if op == "QLinearConv" else ins[1])
            if not w or not out or 0 in w or 0 in out:
                continue
            # out elements x (Cin/group * kh * kw) = out elements x prod(w[1:])
            total += prod(out) * prod(w[1:])
        elif op == "ConvTranspose":
            x = shp.get(ins[0])
            w = shp.get(ins[1])
            if x and w and 0 not in x and 0 not in w:
                total += prod(x) * prod(w[1:])
        elif op in ("Gemm", "MatMul", "QLinearMatMul", "MatMulInteger"):
            b = shp.get(ins[3] if op == "QLinearMatMul" else ins[1])
            a_elems = elems.get(ins[0])
            if not b or 0 in b or not a_elems:
                continue
            # M x K x N = (elements of A) x N, also when A's shape is unknown (a Reshape
            # to a computed shape) but its element count is
            trans_b = next((at.i for at in n.attribute if at.name == "transB"), 0)
            n_out = b[0] if (op == "Gemm" and trans_b) else b[-1]
            total += a_elems * n_out
    return total


# ---------------------------------------------------------------- row

def macs_per_cycle(path):
    """rows x cols of mac_array in a description file (JSON with // comments)."""
    import re
    try:
        text = open(path).read()
    except OSError:
        return 0
    m = re.search(r'"mac_array"\s*:\s*\{([^}]*)\}', text)
    if not m:
        return 0
    rows = re.search(r'"rows"\s*:\s*(\d+)', m.group(1))
    cols = re.search(r'"cols"\s*:\s*(\d+)', m.group(1))
    return int(rows.group(1)) * int(cols.group(1)) if rows and cols else 0


def compile_warnings(r):
    try:
        lines = [l.strip() for l in open(r.get("compile_log"), errors="replace")]
    except (OSError, TypeError):
        return ""
    seen = []
    for l in lines:
        if "warning:" in l and l not in seen:
            seen.append(l)
    return " / ".join(seen[:4])


def failure_message(r):
    """The lines of the compile or check log that say what failed."""
    st = r.get("status")
    if st == "COMPILE-ERROR":
        log = r.get("compile_log")
    elif st in ("FAIL", "CHECK-ERROR", "TIMEOUT"):
        log = r.get("check_log")
    else:
        return ""
    try:
        lines = [l.rstrip() for l in open(log, errors="replace") if l.strip()]
    except (OSError, TypeError):
        return ""
    bad = []
    for i, l in enumerate(lines):
        if "error" in l.lower():
            bad += lines[i:i + 2]  # "error: ... failed on X:" is followed by the reason
        elif ("FAIL" in l or l.startswith("note:") or
              ("hazard" in l.lower() and "hazards 0" not in l)):
            bad.append(l)
    seen = []
    for l in bad:
        if l not in seen:
            seen.append(l)
    return " / ".join((seen or lines[-3:])[:6])


def derive(r):
    """r: dict from the shell; adds the ratios."""
    rep = load(r.get("report", "")) or {}
    chk = load(r.get("check_json", "")) or {}
    tot = rep.get("totals", {})
    r["macs_report"] = tot.get("macs")
    r["npu_macs"] = tot.get("npu_macs")
    for k in ("cycles", "ideal_cycles", "roofline_cycles", "dram_bytes", "min_dram_bytes",
              "arena_bytes", "scratchpad_peak_bytes", "weight_bytes", "code_bytes_estimate",
              "stream_bytes", "npu_commands", "transposes", "register_writes"):
        r[k] = tot.get(k)
    r["estimate"] = tot.get("cycles")
    layers = rep.get("layers", [])
    r["npu_layers"] = sum(1 for l in layers if l.get("placement", "cpu") != "cpu")
    r["layers"] = len(layers)
    sims = [d.get("sim") for d in chk.get("data_sets", []) if d.get("sim")]
    sim = sims[0] if sims else None
    if sim:
        r["sim_cycles"] = sim.get("cycles")
        r["sim_dram"] = (sim.get("dram_read_bytes") or 0) + (sim.get("dram_write_bytes") or 0)
        r["sim_hazards"] = sim.get("hazards")
        r["sim_mac_util"] = sim.get("mac_utilization")
        r["sim_commands"] = sim.get("commands")
        r["sim_macs"] = sim.get("macs")
        r["sim_register_writes"] = sim.get("register_writes")
    om = r.get("onnx_macs")
    npu = r.get("npu_macs")
    if npu is not None and r.get("macs_report"):
        r["npu_mac_frac_report"] = npu / r["macs_report"]
    if npu is not None and om:
        r["npu_mac_frac_onnx"] = npu / om
    sc = r.get("sim_cycles")
    if sc:
        if r.get("estimate") is not None:
            r["est_err_pct"] = 100.0 * (r["estimate"] - sc) / sc
        if r.get("ideal_cycles"):
            r["ideal_ratio"] = r["ideal_cycles"] / sc
        if r.get("roofline_cycles"):
            r["roofline_ratio"] = r["roofline_cycles"] / sc
    elif r.get("estimate"):
        # no simulator run (--no-check): ratios against the estimate, marked as such
        if r.get("ideal_cycles"):
            r["ideal_ratio_est"] = r["ideal_cycles"] / r["estimate"]
        if r.get("roofline_cycles"):
            r["roofline_ratio_est"] = r["roofline_cycles"] / r["estimate"]
    dram = r.get("sim_dram", r.get("dram_bytes"))
    if dram is not None and r.get("min_dram_bytes"):
        r["dram_ratio"] = dram / r["min_dram_bytes"]
    return r


def fmt_int(v):
    return "-" if v is None else str(v)


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def table(rows):
    head = ["model", "target", "check", "NPU MACs % (report / ONNX)", "sim cycles", "estimate",
            "est err %", "ideal/sim", "roofline/sim", "DRAM bytes / min", "register writes",
            "arena", "spm peak",
            "stream / code bytes", "compile s", "check s"]
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---"] * 3 + ["---:"] * (len(head) - 3)) + "|"]
    for r in rows:
        frac = "-"
        if r.get("npu_mac_frac_report") is not None:
            frac = "%.1f" % (100 * r["npu_mac_frac_report"])
            frac += " / " + ("%.1f" % (100 * r["npu_mac_frac_onnx"])
                             if r.get("npu_mac_frac_onnx") is not None else "-")
        ideal = fmt(r.get("ideal_ratio"), ".3f")
        roof = fmt(r.get("roofline_ratio"), ".3f")
        if r.get("ideal_ratio") is None and r.get("ideal_ratio_est") is not None:
            ideal = "(est %.3f)" % r["ideal_ratio_est"]
        if r.get("roofline_ratio") is None and r.get("roofline_ratio_est") is not None:
            roof = "(est %.3f)" % r["roofline_ratio_est"]
        dram = "-"
        d = r.get("sim_dram", r.get("dram_bytes"))
        if d is not None and r.get("min_dram_bytes"):
            dram = "%d / %d = %.2f" % (d, r["min_dram_bytes"], r["dram_ratio"])
        sc = "-"
        if r.get("stream_bytes") is not None:
            sc = "%s / %s" % (fmt_int(r.get("stream_bytes")), fmt_int(r.get("code_bytes_estimate")))
        status = r.get("status", "?")
        if r.get("report") and r.get("npu_layers") == 0 and status in ("PASS", "FAIL", "COMPILED"):
            status += " (no NPU layer)"
        out.append("| " + " | ".join([
            r.get("model", "?"), r.get("target", "?"), status, frac,
            fmt_int(r.get("sim_cycles")), fmt_int(r.get("estimate")),
            fmt(r.get("est_err_pct"), "+.2f"), ideal, roof, dram,
            fmt_int(r.get("sim_register_writes", r.get("register_writes"))),
            fmt_int(r.get("arena_bytes")), fmt_int(r.get("scratchpad_peak_bytes")), sc,
            fmt(r.get("compile_s"), ".2f"), fmt(r.get("check_s"), ".1f")]) + " |")
    out.append("")
    out.append(summary(rows))
    return "\n".join(out)


def summary(rows):
    """Per target: the issue's aims (0.9 of the per-layer ideal, estimate within 5%)."""
    out = []
    targets = []
    for r in rows:
        if r.get("target") not in targets and r.get("target") not in (None, "-"):
            targets.append(r["target"])
    for t in targets:
        rs = [r for r in rows if r.get("target") == t]
        sim = [r for r in rs if r.get("sim_cycles")]
        line = "- %s:" % t
        if sim:
            ideal = sum(r.get("ideal_cycles") or 0 for r in sim)
            cyc = sum(r["sim_cycles"] for r in sim)
            worst = max(sim, key=lambda r: abs(r.get("est_err_pct") or 0))
            line += " sum of ideal / sum of simulated cycles over the %d simulated rows %.3f;" % (
                len(sim), ideal / cyc if cyc else 0)
            below = ["%s %.3f" % (r["model"], r["ideal_ratio"]) for r in sim
                     if r.get("ideal_ratio") is not None and r["ideal_ratio"] < 0.9]
            line += " below 0.9 of the per-layer ideal: %s;" % (", ".join(below) or "none")
            line += " largest estimate error %+.2f%% (%s)%s;" % (
                worst.get("est_err_pct") or 0, worst["model"],
                "" if abs(worst.get("est_err_pct") or 0) <= 5 else " OVER 5%")
        bad = ["%s %s" % (r["model"], r.get("status")) for r in rs
               if r.get("status") not in ("PASS", "COMPILED")]
        line += " not passing: %s" % (", ".join(bad) or "none")
        out.append(line)
    notes = []
    for r in rows:
        for key, what in (("message", "failure"), ("warnings", "compiler warning")):
            if r.get(key):
                notes.append("- %s on %s, %s: %s" % (r.get("model"), r.get("target"), what, r[key]))
    if notes:
        out.append("")
        out.append("Failures and warnings (from the logs):")
        out.extend(notes)
    return "\n".join(out)


# ---------------------------------------------------------------- layers

def layers(rep, chk, mpc=None):
    """Per-layer table. For each NPU layer the gap to its ideal is split in two:
    'extra busy' = max(compute, dma) - ideal: the busier engine did more than the ideal
    (DMA: halo rows and re-fetched inputs/weights, per-transfer setup; compute: edge tiles
    that fill the MAC array partly, per-command overhead), and 'not hidden' =
    cycles - max(compute, dma): time where the other engine or the CPU ran alone (the
    first tile's loads before the first command, the last tile's store, waits, register
    programming)."""
    tot = rep.get("totals", {})
    tgt = rep.get("target", "?")
    lines = []
    sim = None
    if chk:
        sims = [d.get("sim") for d in chk.get("data_sets", []) if d.get("sim")]
        sim = sims[0] if sims else None
    ls = rep.get("layers", [])
    npu = [l for l in ls if l.get("placement", "cpu") != "cpu"]
    gap_total = sum(max(0, l.get("cycles", 0) - l.get("ideal_cycles", 0)) for l in npu)
    extra_total = sum(max(l.get("compute_cycles", 0), l.get("dma_cycles", 0)) - l.get("ideal_cycles", 0)
                      for l in npu)
    hidden_total = sum(l.get("cycles", 0) - max(l.get("compute_cycles", 0), l.get("dma_cycles", 0))
                       for l in npu)
    layer_sum = sum(l.get("cycles", 0) for l in npu)
    lines.append("target %s: estimate %s cycles (sum of the NPU layers' cycles %d), per-layer ideal %s, "
                 "roofline %s%s" % (tgt, tot.get("cycles"), layer_sum, tot.get("ideal_cycles"),
                                    tot.get("roofline_cycles"),
                                    ", simulator %s cycles" % sim.get("cycles") if sim else ""))
    lines.append("NPU layers: %d; sum of (cycles - ideal) = %d = extra busy %d + not hidden %d; "
                 "'gap %%' is a layer's share of the sum" % (len(npu), gap_total, extra_total,
                                                            hidden_total))
    lines.append("")
    head = ["#", "layer", "kind", "MACs", "cycles", "ideal", "ideal/cyc", "compute", "dma",
            "exp.dma", "bound", "extra busy", "not hidden", "gap %", "util %", "DRAM r+w", "spm",
            "tiles", "tiling / CPU reason"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---:|---|---|" + "|".join(["---:"] * 7) + "|---|" + "|".join(["---:"] * 7) + "|---|")
    for i, l in enumerate(ls):
        name = l.get("name", "?")
        if len(name) > 48:
            name = "..." + name[-45:]
        if l.get("placement", "cpu") == "cpu":
            reasons = "; ".join(l.get("reasons", [])) or "cpu"
            lines.append("| %d | %s | %s | %s |" % (i, name, l.get("op", "?"), l.get("macs", 0) or "")
                         + " |" * 14 + " CPU: %s |" % reasons)
            continue
        cyc = l.get("cycles", 0)
        ideal = l.get("ideal_cycles", 0)
        comp = l.get("compute_cycles", 0)
        dma = l.get("dma_cycles", 0)
        busy = max(comp, dma)
        util = "-"
        if mpc and comp and l.get("macs"):
            util = "%.0f" % (100.0 * l["macs"] / (comp * mpc))
        gap = max(0, cyc - ideal)
        lines.append("| %d | %s | %s | %d | %d | %d | %.2f | %d | %d | %d | %s | %d | %d | %.1f | %s | %d | %d | %d | %s |" % (
            i, name, l.get("placement", "npu")[4:], l.get("macs", 0), cyc, ideal,
            ideal / cyc if cyc else 0.0, comp, dma, l.get("exposed_dma_cycles", 0),
            "dma" if dma > comp else "mac", busy - ideal, cyc - busy,
            100.0 * gap / gap_total if gap_total else 0.0, util,
            l.get("dram_read_bytes", 0) + l.get("dram_write_bytes", 0),
            l.get("scratchpad_bytes", 0), l.get("tiles", 0), l.get("tiling", "")))
    return "\n".join(lines)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd = argv[1]
    if cmd == "onnx-macs":
        try:
            v = onnx_macs(argv[2], argv[3:])
        except Exception as e:  # an unreadable model: no independent count
            print("npu_bench.py: onnx-macs: %s" % e, file=sys.stderr)
            v = None
        if v is not None:
            print(v)
        return 0
    if cmd == "row":
        r = {}
        for kv in argv[2:]:
            k, v = kv.split("=", 1)
            try:
                r[k] = int(v)
            except ValueError:
                try:
                    r[k] = float(v)
                except ValueError:
                    r[k] = v
        r["message"] = failure_message(r)
        r["warnings"] = compile_warnings(r)
        print(json.dumps(derive(r), sort_keys=True))
        return 0
    if cmd == "rederive":
        # recompute the derived figures of saved rows (after a change of this helper)
        keep = ("model", "target", "status", "compile_s", "check_s", "onnx_macs", "report",
                "check_json", "compile_log", "check_log")
        out = []
        with open(argv[2]) as f:
            for line in f:
                if line.strip():
                    old = json.loads(line)
                    r = {k: old[k] for k in keep if k in old}
                    r["message"] = failure_message(r)
                    r["warnings"] = compile_warnings(r)
                    out.append(json.dumps(derive(r), sort_keys=True))
        with open(argv[2], "w") as f:
            f.write("\n".join(out) + "\n")
        return 0
    if cmd == "mpc":
        print(macs_per_cycle(argv[2]))
        return 0
    if cmd == "table":
        rows = []
        with open(argv[2]) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
        print(table(rows))
        return 0
    if cmd == "layers":
        rep = load(argv[2])
        if rep is None:
            print("npu_bench.py: cannot read %s" % argv[2], file=sys.stderr)
            return 1
        chk = load(argv[3]) if len(argv) > 3 and argv[3] != "-" else None
        mpc = int(argv[4]) if len(argv) > 4 and argv[4].isdigit() and int(argv[4]) > 0 else None
        print(layers(rep, chk, mpc))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
