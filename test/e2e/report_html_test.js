// report_html_test.js - opens OUT/report.html pages in headless Chromium (playwright-core).
//
// usage: NODE_PATH=bench/node_modules node report_html_test.js CHROMIUM OUT_DIR...
//
// Per OUT_DIR: loads report.html from the file system; fails on any console
// error, page error or request for anything but the page itself, then checks the page against
// OUT_DIR/report.json read independently: the embedded data is report.json; the total, CPU
// and whole-program cycles, the NPU / CPU layer counts, each layer's row (placement, cycles)
// and bar, one timeline rectangle per schedule span, and (with accuracy_report.json) one
// accuracy row per layer. Saves OUT_DIR.png (the full page). Prints
// "report_html: N passed, M failed" and exits 1 on any failure.
"use strict";
const fs = require("fs");
const path = require("path");
const util = require("util");
const { chromium } = require("playwright-core");

const [exe, ...dirs] = process.argv.slice(2);

async function checkOne(browser, dir) {
  const problems = [];
  const want = JSON.parse(fs.readFileSync(path.join(dir, "report.json"), "utf8"));
  const accFile = path.join(dir, "accuracy_report.json");
  const acc = fs.existsSync(accFile) ? JSON.parse(fs.readFileSync(accFile, "utf8")) : null;
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push("console error: " + m.text());
  });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  const file = "file://" + path.resolve(dir, "report.html");
  page.on("request", (r) => {
    if (r.url() !== file) problems.push("request outside the page: " + r.url());
  });
  await page.goto(file, { waitUntil: "load" });
  const got = await page.evaluate(() => {
    const text = (id) => (document.getElementById(id) || {}).textContent;
    const rows = [...document.querySelectorAll("#layers tr[data-layer]")].map((tr) => ({
      layer: Number(tr.dataset.layer),
      placement: tr.dataset.placement,
      cycles: tr.querySelector("td.cycles").textContent,
      name: tr.children[1].textContent,
    }));
    const bars = [...document.querySelectorAll("#bars-svg g[data-layer]")].map((g) =>
      Number(g.dataset.cycles));
    return {
      data: JSON.parse(document.getElementById("npucc-data").textContent),
      total: text("total-cycles"), cpu: text("cpu-cycles"), program: text("program-cycles"),
      npu: text("npu-layers"), cpuLayers: text("cpu-layers"), roofline: text("roofline-cycles"),
      rows, bars,
      spans: document.querySelectorAll("#timeline-svg rect").length,
      scheduleCycles: document.getElementById("timeline-note").dataset.scheduleCycles,
      accRows: document.querySelectorAll("#accuracy-table tr").length - 1,
      accNote: !!document.getElementById("accuracy-note"),
    };
  });
  const eq = (what, a, b) => {
    if (!util.isDeepStrictEqual(a, b)) problems.push(what + ": page " + JSON.stringify(a) +
      ", report.json " + JSON.stringify(b));
  };
  const T = want.totals, L = want.layers;
  const isNpu = (l) => l.placement.startsWith("npu:");
  const m4 = (l) => (l.cpu_cycles ? l.cpu_cycles["cortex-m4"] : 0);
  if (!util.isDeepStrictEqual(got.data.report, want)) problems.push("embedded data is not report.json");
  eq("accuracy data", got.data.accuracy, acc);
  eq("total cycles", got.total, String(T.cycles));
  eq("roofline table cycles", got.roofline, String(T.cycles));
  eq("CPU cycles", got.cpu, String(T.cpu_cycles["cortex-m4"]));
  eq("program cycles", got.program, String(T.program_cycles_cortex_m4));
  eq("NPU layers", got.npu, String(L.filter(isNpu).length));
  eq("CPU layers", got.cpuLayers, String(L.filter((l) => !isNpu(l)).length));
  eq("layer rows", got.rows.length, L.length);
  eq("layer bars", got.bars.length, L.length);
  L.forEach((l, i) => {
    const r = got.rows[i] || {};
    const cyc = isNpu(l) ? String(l.cycles) : (l.cpu_cycles.calibrated ? "" : "~") + m4(l);
    eq("layer " + i + " row", [r.layer, r.name, r.placement, r.cycles], [i, l.name, l.placement, cyc]);
    eq("layer " + i + " bar", got.bars[i], isNpu(l) ? l.cycles : m4(l));
  });
  eq("timeline spans", got.spans, want.schedule.spans.length);
  eq("schedule cycles", got.scheduleCycles, String(want.schedule.cycles));
  if (acc && acc.layers) eq("accuracy rows", got.accRows, acc.layers.length);
  else if (!got.accNote) problems.push("no accuracy note");
  await page.screenshot({ path: dir.replace(/\/$/, "") + ".png", fullPage: true });
  await page.close();
  return problems;
}

(async () => {
  let passed = 0, failed = 0;
  const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox"] });
  try {
    for (const dir of dirs) {
      let problems;
      try {
        problems = await checkOne(browser, dir);
      } catch (e) {
        problems = ["exception: " + (e && e.stack ? e.stack : e)];
      }
      const size = fs.statSync(path.join(dir, "report.html")).size;
      if (problems.length) {
        failed++;
        console.log("FAIL: " + dir + "/report.html (" + size + " bytes)");
        for (const p of problems.slice(0, 20)) console.log("  " + p);
      } else {
        passed++;
        console.log("PASS: " + dir + "/report.html (" + size + " bytes)");
      }
    }
  } finally {
    await browser.close();
  }
  console.log("report_html: " + passed + " passed, " + failed + " failed");
  process.exit(failed || !dirs.length ? 1 : 0);
})();
