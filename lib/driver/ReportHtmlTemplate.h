//===- ReportHtmlTemplate.h - The page OUT/report.html is made from -------===//
//
// One self-contained page: inline CSS, and an inline script that renders the
// JSON block "npucc-data" ({"report": report.json, "accuracy": the
// accuracy_report.json or null}) into tables and SVG charts. No network, no
// external script or font. reportHtml (ReportHtml.cpp) replaces the
// placeholder NPUCC_DATA_JSON with the data. Elements the browser test reads
// (test/e2e/report_html_test.js) carry ids and data- attributes.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace npucc::driver {

inline const char *const ReportHtmlPage = R"NPUCC(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>npucc report</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 6px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f4f4f4;position:sticky;top:0}td.l,th.l{text-align:left}td.why{text-align:left;white-space:normal;color:#a33;max-width:520px}
.note{color:#555;margin:4px 0}.kv td{text-align:left}.kv td:first-child{color:#555}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
svg text{font:11px system-ui,sans-serif;fill:#333}.scroll{overflow-x:auto;max-width:100%}
</style>
</head>
<body>
<h1 id="title">npucc report</h1>
<div class="note" id="subtitle"></div>
<h2>Summary</h2><table class="kv" id="summary"></table>
<h2>Cycles per layer</h2>
<div class="legend" id="bars-legend"></div><div class="scroll" id="bars"></div>
<h2>Schedule</h2><div class="note" id="timeline-note"></div>
<div class="legend" id="timeline-legend"></div><div class="scroll" id="timeline"></div>
<h2>Memory over the schedule</h2><div class="note" id="memory-note"></div>
<div class="legend" id="memory-legend"></div><div class="scroll" id="memory"></div>
<h2>Utilisation against the roofline</h2><div id="roofline"></div>
<h2>Layers and placement</h2><div class="note" id="placement-note"></div>
<div class="scroll"><table id="layers"></table></div>
<h2>Per-layer accuracy</h2><div id="accuracy"></div>
<script type="application/json" id="npucc-data">NPUCC_DATA_JSON</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("npucc-data").textContent);
const R = D.report, T = R.totals, L = R.layers;
const C = {compute: "#3b7dd8", exposed: "#e8a33a", overhead: "#9aa5b1", cpu: "#c9463d",
           dma: "#e8a33a", live: "#6a9f4b", spm: "#8e5cc2"};
const NS = "http://www.w3.org/2000/svg";
const $ = id => document.getElementById(id);
const num = v => String(v);
function el(tag, attrs, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4))
                                   : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function row(table, cells, head) {
  const tr = el("tr");
  for (const c of cells) {
    const td = el(head ? "th" : "td", c.cls ? {class: c.cls} : {}, c.t === undefined ? c : c.t);
    if (c.id) td.id = c.id;
    tr.appendChild(td);
  }
  table.appendChild(tr);
  return tr;
}
function legend(id, items) {
  for (const [name, color] of items) {
    const s = el("span"); s.appendChild(el("i", {style: "background:" + color}));
    s.appendChild(document.createTextNode(name)); $(id).appendChild(s);
  }
}
const isNpu = l => l.placement.startsWith("npu:");
const cpuCycles = l => (l.cpu_cycles ? l.cpu_cycles["cortex-m4"] : 0);
const layerCycles = l => (isNpu(l) ? l.cycles : cpuCycles(l));
const npuCount = L.filter(isNpu).length;
const kib = b => (b / 1024).toFixed(1) + " KiB";

// --- Summary -------------------------------------------------------------------------------
$("title").textContent = "npucc report: " + L.length + " layers on '" + R.target + "'";
$("subtitle").textContent = "Every number on this page comes from report.json (embedded in " +
  "this file); cycles are the compiler's estimate unless a row says otherwise.";
const S = $("summary");
const ms = T.clock_hz ? (1e3 * T.cycles / T.clock_hz).toFixed(3) + " ms at " +
  (T.clock_hz / 1e6).toFixed(0) + " MHz" : "-";
row(S, ["estimated NPU cycles", {t: num(T.cycles), id: "total-cycles"}]);
row(S, ["NPU cycles in time", ms]);
row(S, ["CPU cycles (Cortex-M4 estimate)", {t: num(T.cpu_cycles["cortex-m4"]), id: "cpu-cycles"}]);
row(S, ["whole program NPU + CPU at one clock", {t: num(T.program_cycles_cortex_m4), id: "program-cycles"}]);
row(S, ["layers on the NPU", {t: num(npuCount), id: "npu-layers"}]);
row(S, ["layers on the CPU", {t: num(L.length - npuCount), id: "cpu-layers"}]);
row(S, ["MACs (on the NPU)", T.macs + " (" + T.npu_macs + ", " +
  (T.macs ? (100 * T.npu_macs / T.macs).toFixed(1) : "0.0") + "%)"]);
row(S, ["arena / scratchpad peak / weights", T.arena_bytes + " / " + T.scratchpad_peak_bytes +
  " / " + T.weight_bytes + " bytes"]);
row(S, ["system memory moved (minimum)", T.dram_bytes + " (" + T.min_dram_bytes + ") bytes"]);
row(S, ["NPU commands / stream tables", T.npu_commands + " / " + T.stream_bytes + " bytes"]);

// --- Stacked bars per layer ----------------------------------------------------------------
function parts(l) {
  if (!isNpu(l)) return [["cpu", cpuCycles(l)]];
  const over = Math.max(0, l.cycles - l.compute_cycles - l.exposed_dma_cycles);
  return [["compute", l.compute_cycles], ["exposed", l.exposed_dma_cycles], ["overhead", over]];
}
legend("bars-legend", [["compute", C.compute], ["exposed DMA", C.exposed],
  ["overhead (the rest of the layer's estimate: issue, polls, waits)", C.overhead],
  ["CPU kernel (Cortex-M4 estimate)", C.cpu]]);
{
  const W = 640, name = 260, H = 14, svg = el("svg:svg", {width: W + name + 110,
    height: L.length * H + 4, id: "bars-svg"});
  const max = Math.max(1, ...L.map(layerCycles));
  L.forEach((l, i) => {
    const g = el("svg:g", {"data-layer": i, "data-cycles": layerCycles(l)});
    g.appendChild(el("svg:text", {x: name - 4, y: i * H + 11, "text-anchor": "end"},
      l.name.length > 40 ? l.name.slice(0, 39) + "\u2026" : l.name));
    let x = name;
    for (const [k, v] of parts(l)) {
      const w = W * v / max;
      const r = el("svg:rect", {x: x.toFixed(2), y: i * H + 2, width: w.toFixed(2), height: H - 3,
        fill: C[k]});
      r.appendChild(el("svg:title", {}, l.name + ": " + k + " " + v + " cycles"));
      g.appendChild(r); x += w;
    }
    g.appendChild(el("svg:text", {x: x + 4, y: i * H + 11}, num(layerCycles(l))));
    svg.appendChild(g);
  });
  $("bars").appendChild(svg);
}

// --- Timeline ------------------------------------------------------------------------------
const SCH = R.schedule || {spans: [], cycles: 0};
$("timeline-note").textContent = SCH.source === "simulator" ?
  "Source: the simulator's trace (npucc check --report, test_data_set_0): each NPU command at " +
  "the cycles the simulator ran it, on its engine, under the layer of the estimate's command at " +
  "the same place in issue order; the run ends at " + SCH.cycles + " cycles (estimated: " +
  T.cycles + "). The simulator times no CPU work: the CPU lane is empty." +
  (SCH.note ? " " + SCH.note + "." : "") :
  "Source: the compiler's estimate (" + SCH.source + "), the " +
  "cycle model the simulator runs; NPU commands as the estimate times them (" + T.cycles +
  " cycles), CPU kernel calls at their Cortex-M4 estimate in program order: the schedule ends at " +
  SCH.cycles + " cycles. No simulator trace: `npucc compile` does not run the simulator " +
  "(`npucc check --report DIR` writes this page with the simulator's trace).";
$("timeline-note").dataset.scheduleCycles = SCH.cycles;
legend("timeline-legend", [["DMA", C.dma], ["compute", C.compute], ["CPU", C.cpu],
  ["(lighter: the layer's engine idle part of its span)", "#ddd"]]);
{
  const lanes = ["dma", "compute", "cpu"], W = 1100, left = 70, LH = 26;
  const svg = el("svg:svg", {width: left + W + 20, height: lanes.length * LH + 24, id: "timeline-svg"});
  const end = Math.max(1, SCH.cycles);
  lanes.forEach((n, k) => svg.appendChild(el("svg:text", {x: 4, y: k * LH + 17}, n)));
  for (const s of SCH.spans) {
    const k = lanes.indexOf(s.lane), x = left + W * s.start / end;
    const w = Math.max(0.5, W * (s.end - s.start) / end);
    const r = el("svg:rect", {x: x.toFixed(2), y: k * LH + 3, width: w.toFixed(2), height: LH - 6,
      fill: C[s.lane], "fill-opacity": (0.35 + 0.65 * s.busy / Math.max(1, s.end - s.start)).toFixed(2)});
    const who = s.layer >= 0 ? L[s.layer].name : "(no listed layer)";
    r.appendChild(el("svg:title", {}, who + " " + s.lane + ": " + s.start + "-" + s.end + ", busy " +
      s.busy + " in " + s.commands + " command(s)"));
    svg.appendChild(r);
  }
  for (let t = 0; t <= 4; ++t) {
    const x = left + W * t / 4;
    svg.appendChild(el("svg:line", {x1: x, x2: x, y1: 0, y2: lanes.length * LH, stroke: "#ccc"}));
    svg.appendChild(el("svg:text", {x: x, y: lanes.length * LH + 16, "text-anchor": t ? "end" : "start"},
      num(Math.round(end * t / 4))));
  }
  $("timeline").appendChild(svg);
}

// --- Memory --------------------------------------------------------------------------------
$("memory-note").textContent = "Per layer in schedule order: the activation bytes live while it " +
  "runs (against the arena, " + T.arena_bytes + " bytes) and the scratchpad bytes an NPU layer " +
  "uses (against the scratchpad peak, " + T.scratchpad_peak_bytes + " bytes).";
legend("memory-legend", [["live activations", C.live], ["scratchpad (NPU layers)", C.spm]]);
{
  const W = Math.max(300, Math.min(1100, L.length * 12)), H = 90, left = 80;
  const svg = el("svg:svg", {width: left + W + 20, height: 2 * H + 40, id: "memory-svg"});
  const bw = W / Math.max(1, L.length);
  const plot = (y0, cap, get, color, label) => {
    const max = Math.max(1, cap, ...L.map(get));
    svg.appendChild(el("svg:text", {x: 2, y: y0 + 12}, label));
    svg.appendChild(el("svg:text", {x: 2, y: y0 + 26}, kib(cap)));
    L.forEach((l, i) => {
      const h = H * get(l) / max;
      const r = el("svg:rect", {x: (left + i * bw).toFixed(2), y: (y0 + H - h).toFixed(2),
        width: Math.max(0.5, bw - 1).toFixed(2), height: h.toFixed(2), fill: color});
      r.appendChild(el("svg:title", {}, l.name + ": " + get(l) + " bytes"));
      svg.appendChild(r);
    });
    const y = y0 + H - H * cap / max;
    svg.appendChild(el("svg:line", {x1: left, x2: left + W, y1: y, y2: y, stroke: "#333",
      "stroke-dasharray": "4 3"}));
  };
  plot(4, T.arena_bytes, l => l.live_bytes || 0, C.live, "arena");
  plot(H + 24, T.scratchpad_peak_bytes, l => l.scratchpad_bytes || 0, C.spm, "scratchpad");
  $("memory").appendChild(svg);
}

// --- Roofline ------------------------------------------------------------------------------
{
  const t = el("table", {class: "kv", id: "roofline-table"});
  const ratio = (a, b) => (b ? (a / b).toFixed(2) + "x" : "-");
  row(t, ["estimated", {t: num(T.cycles), id: "roofline-cycles"}, ""]);
  row(t, ["per-layer ideal (one command per layer, unlimited scratchpad)", num(T.ideal_cycles),
    ratio(T.cycles, T.ideal_cycles) + " of it"]);
  row(t, ["roofline (NPU MACs at the array's rate, or the least DMA)", num(T.roofline_cycles),
    ratio(T.cycles, T.roofline_cycles) + " of it"]);
  row(t, ["utilisation against the roofline", T.cycles ?
    (100 * T.roofline_cycles / T.cycles).toFixed(1) + "%" : "-", ""]);
  row(t, ["MAC array utilisation", T.cycles && T.macs_per_cycle ?
    (100 * T.npu_macs / (T.cycles * T.macs_per_cycle)).toFixed(1) + "% (" + T.macs_per_cycle +
    " MACs per cycle)" : "-", ""]);
  $("roofline").appendChild(t);
}

// --- Layers and placement ------------------------------------------------------------------
$("placement-note").textContent = npuCount + " of " + L.length + " layers on the NPU; a CPU " +
  "layer lists why no NPU command runs it (the reasons `npucc compile --explain` prints).";
{
  const t = $("layers");
  row(t, ["#", {t: "layer", cls: "l"}, {t: "op", cls: "l"}, {t: "placement", cls: "l"}, "output",
    "MACs", "cycles", "compute", "exp. DMA", "util", "spm bytes", "live bytes", "tiles",
    {t: "why on the CPU", cls: "l"}], true);
  L.forEach((l, i) => {
    const npu = isNpu(l);
    const util = npu && l.compute_cycles && T.macs_per_cycle ?
      (100 * l.macs / (l.compute_cycles * T.macs_per_cycle)).toFixed(0) + "%" : "";
    const cyc = npu ? num(l.cycles) :
      (l.cpu_cycles && !l.cpu_cycles.calibrated ? "~" : "") + cpuCycles(l);
    const tr = row(t, [num(i), {t: l.name, cls: "l"}, {t: l.op, cls: "l"},
      {t: l.placement, cls: "l"}, l.output_shape.join("x") || "scalar", num(l.macs),
      {t: cyc, cls: "cycles"}, npu ? num(l.compute_cycles) : "-",
      npu ? num(l.exposed_dma_cycles) : "-", util, npu ? num(l.scratchpad_bytes) : "-",
      num(l.live_bytes || 0), npu ? num(l.tiles) : "-",
      {t: (l.reasons || []).join("; "), cls: "why"}]);
    tr.dataset.layer = i;
    tr.dataset.placement = l.placement;
  });
}

// --- Accuracy ------------------------------------------------------------------------------
{
  const A = D.accuracy, box = $("accuracy");
  if (!A || !A.layers) {
    box.appendChild(el("div", {class: "note", id: "accuracy-note"}, "No per-layer accuracy in " +
      "this compile: `npucc compile --quantize int8 --report-layers` adds it (float vs int8 per " +
      "layer); `npucc check --json` has the NPU's per-layer distance (layer_distance)."));
  } else {
    box.appendChild(el("div", {class: "note", id: "accuracy-note"}, "Float model vs the int8 " +
      "program per layer on " + A.samples_origin + " (accuracy_report.json)."));
    const t = el("table", {id: "accuracy-table"});
    row(t, [{t: "value", cls: "l"}, {t: "op", cls: "l"}, "SNR dB", "cosine", "max abs err"], true);
    for (const a of A.layers)
      row(t, [{t: a.name, cls: "l"}, {t: a.op + " " + a.quantized_type, cls: "l"},
        typeof a.snr_db === "number" ? a.snr_db.toFixed(2) : a.snr_db, a.cosine.toFixed(6),
        a.max_abs_error.toExponential(3)]);
    box.appendChild(t);
  }
}
</script>
</body>
</html>
)NPUCC";

} // namespace npucc::driver
