// sweep_html_test.js - opens an `npucc sweep --html` page in headless Chromium (playwright-core).
//
// usage: NODE_PATH=bench/node_modules node sweep_html_test.js CHROMIUM SWEEP.html SWEEP.json
//
// Fails on any console error, page error or request for anything but the page itself; then
// checks the page against the sweep's --json file read independently: the embedded data is
// that JSON, each model has two charts with one circle per compiled row, red (class pareto)
// exactly for its Pareto rows, and the table has one row per point and model. Saves
// SWEEP.png (the full page) for review.
"use strict";
const fs = require("fs");
const path = require("path");
const util = require("util");
const { chromium } = require("playwright-core");

const [exe, html, jsonFile] = process.argv.slice(2);

(async () => {
  const problems = [];
  const want = JSON.parse(fs.readFileSync(jsonFile, "utf8"));
  const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on("console", (m) => {
      if (m.type() === "error") problems.push("console error: " + m.text());
    });
    page.on("pageerror", (e) => problems.push("page error: " + e.message));
    const file = "file://" + path.resolve(html);
    page.on("request", (r) => {
      if (r.url() !== file) problems.push("request outside the page: " + r.url());
    });
    await page.goto(file, { waitUntil: "load" });
    const got = await page.evaluate(() => ({
      data: JSON.parse(document.getElementById("npucc-sweep-data").textContent),
      charts: [...document.querySelectorAll("svg")].map((s) => ({
        id: s.id,
        pareto: [...s.querySelectorAll("circle.pareto")].map((c) => Number(c.dataset.point)).sort((a, b) => a - b),
        all: s.querySelectorAll("circle").length,
      })),
      tableRows: document.querySelectorAll("#points tr[data-point]").length,
    }));
    if (!util.isDeepStrictEqual(got.data, want)) problems.push("embedded data is not the --json file");
    want.models.forEach((m, i) => {
      const rows = want.points.filter((p) => p.model === m && p.status === "ok");
      const pareto = rows.filter((p) => p.pareto).map((p) => p.point).sort((a, b) => a - b);
      for (const kind of ["spm", "traffic"]) {
        const c = got.charts.find((x) => x.id === "m" + i + "-" + kind);
        if (!c) { problems.push("no chart m" + i + "-" + kind); continue; }
        if (c.all !== rows.length) problems.push(c.id + ": " + c.all + " circles, " + rows.length + " rows");
        if (!util.isDeepStrictEqual(c.pareto, pareto))
          problems.push(c.id + ": red points " + JSON.stringify(c.pareto) + ", Pareto rows " + JSON.stringify(pareto));
      }
    });
    if (got.tableRows !== want.points.length)
      problems.push("table rows " + got.tableRows + ", points " + want.points.length);
    await page.screenshot({ path: html.replace(/\.html$/, "") + ".png", fullPage: true });
  } catch (e) {
    problems.push("exception: " + (e && e.stack ? e.stack : e));
  } finally {
    await browser.close();
  }
  const size = fs.statSync(html).size;
  for (const p of problems.slice(0, 20)) console.log("FAIL: " + p);
  console.log((problems.length ? "FAIL: " : "PASS: ") + html + " (" + size + " bytes)");
  process.exit(problems.length ? 1 : 0);
})();
