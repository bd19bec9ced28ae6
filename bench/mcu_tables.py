#!/usr/bin/python3
"""mcu_tables.py - the Markdown tables of bench/mcu_bench.py (docs/benchmarks.md, section
"Microcontroller CPU kernels (Cortex-M4F, RV32)"): per model, per layer type, the least-squares
split of integer convolution / Gemm instructions into per-MAC, per-output and per-plane-loop
costs, and per layer type over all models. Ratios divide by the first variant (the baseline).
Standard library only."""


def lsq(xs, ys):
    """Least squares coefficients of ys ~ xs (rows of equal length), or None if singular."""
    k = len(xs[0])
    a = [[sum(x[i] * x[j] for x in xs) for j in range(k)] + [sum(x[i] * y for x, y in zip(xs, ys))]
         for i in range(k)]
    for col in range(k):
        piv = max(range(col, k), key=lambda r: abs(a[r][col]))
        if abs(a[piv][col]) <= 1e-9 * max(1.0, max(abs(v) for v in a[col][:k])):
            return None
        a[col], a[piv] = a[piv], a[col]
        for r in range(k):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [v - f * w for v, w in zip(a[r], a[col])]
    return [a[i][k] / a[i][i] for i in range(k)]


def fmt_ratio(a, b):
    return "%.2f" % (a / b) if a and b else "-"


def tables(rows, variants):
    base = variants[0]["name"]
    ok = [r for r in rows if "instructions" in r]
    by = {(r["model"], r["variant"], r["arch"], r["opt"]): r for r in ok}
    out = []
    out.append("| model | MACs | arch | -O | variant | instructions | instr/MAC | ÷ %s | ÷ %s -O2 "
               "| code B | weights B | other const B | arena B (live-set bound) | stack B |" % (base, base))
    out.append("|---|--:|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        if "error" in r or "skipped" in r:
            out.append("| %s | | %s | %s | %s | %s | | | | | | | | |" % (
                r["model"], r.get("arch", "-"), r.get("opt", "-"), r["variant"],
                r.get("error") or "skipped: " + r["skipped"]))
            continue
        b = by.get((r["model"], base, r["arch"], r["opt"]))
        b2 = by.get((r["model"], base, r["arch"], "-O2"))
        fl = r["flash"]
        ins = r["instructions"]
        # two counter readings per run, two runs: within 2 ticks
        tick = " (±%d)" % (2 * r["tick"]) if r["tick"] > 1 else ""
        out.append("| %s | %d | %s | %s | %s | %d%s | %s | %s | %s | %d | %d | %d | %d (%s) | %s%s |" % (
            r["model"], r["macs"], r["arch"], r["opt"], r["variant"], ins, tick,
            "%.2f" % (ins / r["macs"]) if r["macs"] else "-",
            fmt_ratio(ins, b["instructions"] if b else 0),
            fmt_ratio(ins, b2["instructions"] if b2 else 0),
            fl["code"], fl["weights"], fl["const"], r["arena"],
            r["arena_bound"] if r["arena_bound"] is not None else "-",
            r["stack"] if r["stack"] is not None else "-",
            " (overflow)" if r.get("stack_overflow") else ""))
    skipped = [r for r in ok if r.get("computed_macs") is not None and
               r["computed_macs"] < r["macs"]]
    if skipped:
        out.append("")
        out.append("MACs the kernels compute (the fast convolution leaves out output channels "
                   "whose weights are all zero: their planes are constants):")
        out.append("")
        out.append("| model | arch | -O | variant | MACs computed | share | instr per computed MAC |")
        out.append("|---|---|---|---|--:|--:|--:|")
        for r in skipped:
            out.append("| %s | %s | %s | %s | %d | %.0f%% | %.2f |" % (
                r["model"], r["arch"], r["opt"], r["variant"], r["computed_macs"],
                100.0 * r["computed_macs"] / r["macs"], r["instructions"] / r["computed_macs"]))
    out.append("")
    out.append("Per layer type (NPUCC_LAYER_HOOK build; the hook's own cost is subtracted; "
               "share = of the per-layer sum; on cortex-m4 each layer is read to ±40 "
               "instructions):")
    out.append("")
    out.append("| model | arch | -O | variant | layer type | calls | instructions | share "
               "| instr/MAC | instr/output elem | ÷ %s |" % base)
    out.append("|---|---|---|---|---|--:|--:|--:|--:|--:|--:|")
    for r in ok:
        tot = sum(t["instructions"] for t in r["types"].values()) or 1
        b = by.get((r["model"], base, r["arch"], r["opt"]))
        for name, t in sorted(r["types"].items(), key=lambda kv: -kv[1]["instructions"]):
            bt = b["types"].get(name) if b else None
            out.append("| %s | %s | %s | %s | %s | %d | %d | %.1f%% | %s | %s | %s |" % (
                r["model"], r["arch"], r["opt"], r["variant"], name, t["calls"],
                t["instructions"], 100.0 * t["instructions"] / tot,
                "%.2f" % (t["instructions"] / t["macs"]) if t["macs"] else "-",
                "%.1f" % (t["instructions"] / t["elements"]) if t["elements"] and not t["macs"] else "-",
                fmt_ratio(t["instructions"], bt["instructions"] if bt else 0)))
    out.append("")
    # Summary over all models, per layer type: instructions per MAC (MAC layers) or per element.
    agg = {}
    for r in ok:
        for name, t in r["types"].items():
            a = agg.setdefault((r["arch"], r["opt"], r["variant"], name),
                               {"instructions": 0, "macs": 0, "elements": 0, "calls": 0})
            for k in a:
                a[k] += t[k]
    out.append("Integer convolutions and Gemm, least squares over the calls of each type: "
               "instructions = a x MACs + b x outputs + c x plane loops (convolutions: one "
               "loop over the output plane per output channel, input channel and tap; MACs and "
               "plane loops of convolutions scaled by their share of non-zero weights, which "
               "the kernel skips; 'non-zero' = that share over the type's MACs):")
    out.append("")
    out.append("| arch | -O | variant | layer type | calls | non-zero | a (per MAC) "
               "| b (per output) | c (per plane loop) | MACs per output |")
    out.append("|---|---|---|---|--:|--:|--:|--:|--:|--:|")
    fits = {}
    for r in ok:
        for c in r.get("calls", []):
            if c["type"] in ("conv 1x1", "conv kxk", "gemm") and c["macs"] and c["elements"]:
                fits.setdefault((r["arch"], r["opt"], r["variant"], c["type"]), []).append(c)
    for key in sorted(fits):
        cs = fits[key]
        conv = key[3] != "gemm"
        nz = [c.get("nonzero") if c.get("nonzero") is not None else 1.0 for c in cs]
        xs = [[c["macs"] * f, c["elements"]] + ([c.get("passes", 0) * f] if conv else [])
              for c, f in zip(cs, nz)]
        coef = lsq(xs, [c["instructions"] for c in cs]) if len(cs) > len(xs[0]) else None
        if coef is None:
            continue
        k = sorted(c["macs"] // c["elements"] for c in cs)
        share = sum(c["macs"] * f for c, f in zip(cs, nz)) / max(sum(c["macs"] for c in cs), 1)
        known = any(c.get("nonzero") is not None for c in cs)
        out.append("| %s | %s | %s | %s | %d | %s | %.2f | %.1f | %s | %d to %d |" % (
            key[0], key[1], key[2], key[3], len(cs), "%.0f%%" % (100 * share) if known else "-",
            coef[0], coef[1],
            "%.1f" % coef[2] if conv else "-", k[0], k[-1]))
    out.append("")
    out.append("All models, per layer type:")
    out.append("")
    out.append("| arch | -O | variant | layer type | calls | instr/MAC | instr/output elem | ÷ %s |" % base)
    out.append("|---|---|---|---|--:|--:|--:|--:|")
    for key in sorted(agg, key=lambda k: (k[0], k[1], k[2], -agg[k]["instructions"])):
        a = agg[key]
        ba = agg.get((key[0], key[1], base, key[3]))
        out.append("| %s | %s | %s | %s | %d | %s | %s | %s |" % (
            key[0], key[1], key[2], key[3], a["calls"],
            "%.2f" % (a["instructions"] / a["macs"]) if a["macs"] else "-",
            "%.1f" % (a["instructions"] / a["elements"]) if a["elements"] and not a["macs"] else "-",
            fmt_ratio(a["instructions"], ba["instructions"] if ba else 0)))
    return "\n".join(out) + "\n"
