//===- SweepHtml.cpp - The sweep's self-contained HTML chart --------------===//
//
// sweep.html (driver/Sweep.h): inline CSS and SVG drawn here, no script to run
// and nothing fetched. Per model, two scatter plots of the points that
// compiled (estimated program cycles, NPU and CPU layers, against the
// scratchpad size and against system
// traffic) with the Pareto front over all three in red, then the table of
// every row; sweepJson is embedded in a JSON block (every '<' as \u003c).
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Sweep.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace npucc::driver {

namespace {

std::string esc(const std::string &s) {
  std::string r;
  for (char c : s) {
    switch (c) {
    case '<':
      r += "&lt;";
      break;
    case '>':
      r += "&gt;";
      break;
    case '&':
      r += "&amp;";
      break;
    case '"':
      r += "&quot;";
      break;
    default:
      r += c;
    }
  }
  return r;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string pointTitle(const SweepResult &r, const SweepRow &row) {
  std::string t = "point " + std::to_string(row.point);
  for (size_t a = 0; a < r.axisNames.size(); ++a)
    t += " " + r.axisNames[a] + "=" + row.labels[a];
  t += ": " + std::to_string(row.programCycles()) + " cycles (NPU " + std::to_string(row.cycles) +
       ", CPU " + std::to_string(row.cpuCycles) + "), scratchpad " +
       std::to_string(row.scratchpadBytes) + " B, traffic " + std::to_string(row.dramBytes) + " B" +
       (row.pareto ? " (Pareto)" : "");
  return t;
}

/// One scatter plot of `rows` (all "ok"): x = cycles, y = yOf(row) in KiB.
template <typename Y>
std::string scatter(const SweepResult &r, const std::vector<const SweepRow *> &rows,
                    const std::string &id, const std::string &yName, Y yOf) {
  const double W = 470, H = 300, L = 70, R = 30, T = 15, B = 45;
  double xMax = 1, yMax = 1;
  for (const SweepRow *row : rows) {
    xMax = std::max(xMax, double(row->programCycles()));
    yMax = std::max(yMax, yOf(*row));
  }
  xMax *= 1.05;
  yMax *= 1.05;
  auto X = [&](double v) { return L + v / xMax * (W - L - R); };
  auto Yp = [&](double v) { return H - B - v / yMax * (H - T - B); };
  std::ostringstream o;
  o << "<svg id=\"" << esc(id) << "\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 "
    << W << " " << H << "\" role=\"img\">\n";
  o << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R << "\" y2=\"" << H - B
    << "\" class=\"axis\"/><line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\""
    << H - B << "\" class=\"axis\"/>\n";
  for (int k = 0; k <= 4; ++k) {
    double xv = xMax * k / 4, yv = yMax * k / 4;
    o << "<text x=\"" << num(X(xv)) << "\" y=\"" << H - B + 16 << "\" class=\"tick\">"
      << (long long)xv << "</text>";
    o << "<text x=\"" << L - 6 << "\" y=\"" << num(Yp(yv) + 4) << "\" class=\"tick ty\">" << num(yv)
      << "</text>\n";
  }
  o << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 6
    << "\" class=\"label\">estimated cycles (NPU + CPU layers)</text>";
  o << "<text x=\"14\" y=\"" << (T + H - B) / 2 << "\" class=\"label\" transform=\"rotate(-90 14 "
    << (T + H - B) / 2 << ")\">" << esc(yName) << "</text>\n";
  // Dominated points first, so that the front is drawn on top.
  for (int pass = 0; pass < 2; ++pass)
    for (const SweepRow *row : rows) {
      if (row->pareto != (pass == 1))
        continue;
      o << "<circle cx=\"" << num(X(double(row->programCycles()))) << "\" cy=\""
        << num(Yp(yOf(*row))) << "\" r=\"" << (row->pareto ? 5 : 4) << "\" class=\""
        << (row->pareto ? "pareto" : "dominated") << "\" data-point=\"" << row->point
        << "\"><title>" << esc(pointTitle(r, *row)) << "</title></circle>\n";
    }
  o << "</svg>\n";
  return o.str();
}

const char *kStyle =
    "body{font:14px system-ui,sans-serif;margin:20px;color:#222}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
    "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;"
    "text-align:right}td.l,th.l{text-align:left}tr.pareto td{background:#fde8e8}"
    "tr.bad td{color:#888}.axis{stroke:#444}.tick{font-size:10px;text-anchor:middle;fill:#444}"
    ".ty{text-anchor:end}.label{font-size:12px;text-anchor:middle;fill:#222}"
    ".pareto{fill:#d62728;stroke:#700}.dominated{fill:#9aa;stroke:#566;opacity:.8}"
    ".charts{display:flex;flex-wrap:wrap;gap:16px}";

} // namespace

std::string sweepHtml(const SweepResult &r) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<title>npucc sweep: " << esc(r.base) << "</title><style>" << kStyle
    << "</style></head><body>\n<h1>npucc sweep of " << esc(r.base) << "</h1>\n";
  size_t ok = 0, refused = 0, failed = 0;
  for (const SweepRow &row : r.rows)
    (row.status == "ok" ? ok : row.status == "refused" ? refused : failed)++;
  o << "<p id=\"summary\" data-ok=\"" << ok << "\" data-refused=\"" << refused
    << "\" data-failed=\"" << failed << "\">" << r.rows.size() << " rows: " << ok << " compiled, "
    << refused << " refused by the description loader, " << failed
    << " failed to compile. Red: the Pareto front of each model over (estimated program "
       "cycles: the NPU timeline plus the CPU layers on a Cortex-M4, "
       "scratchpad bytes, system traffic), all three minimised; hover a point for its "
       "values.</p>\n";
  for (size_t m = 0; m < r.models.size(); ++m) {
    std::vector<const SweepRow *> rows;
    for (const SweepRow &row : r.rows)
      if (row.model == r.models[m] && row.status == "ok")
        rows.push_back(&row);
    o << "<h2>" << esc(r.models[m]) << "</h2>\n<div class=\"charts\">\n";
    std::string id = "m" + std::to_string(m);
    o << scatter(r, rows, id + "-spm", "scratchpad KiB",
                 [](const SweepRow &x) { return x.scratchpadBytes / 1024.0; });
    o << scatter(r, rows, id + "-traffic", "system traffic KiB",
                 [](const SweepRow &x) { return x.dramBytes / 1024.0; });
    o << "</div>\n";
  }
  o << "<h2>Points</h2>\n<table id=\"points\"><tr><th>point</th><th class=\"l\">model</th>";
  for (const std::string &a : r.axisNames)
    o << "<th class=\"l\">" << esc(a) << "</th>";
  o << "<th>NPU cycles</th><th>CPU cycles</th><th>spm bytes</th><th>peak bytes</th><th>traffic "
       "bytes</th><th>NPU "
       "layers</th><th>sim cycles</th><th class=\"l\">result</th></tr>\n";
  for (const SweepRow &row : r.rows) {
    o << "<tr data-point=\"" << row.point << "\" class=\""
      << (row.status != "ok" ? "bad"
          : row.pareto       ? "pareto"
                             : "")
      << "\"><td>" << row.point << "</td><td class=\"l\">" << esc(row.model) << "</td>";
    for (const std::string &l : row.labels)
      o << "<td class=\"l\">" << esc(l) << "</td>";
    if (row.status != "ok") {
      o << "<td colspan=\"7\"></td><td class=\"l\">" << esc(row.status + ": " + row.reason)
        << "</td></tr>\n";
      continue;
    }
    o << "<td>" << row.cycles << "</td><td>" << row.cpuCycles << "</td><td>" << row.scratchpadBytes
      << "</td><td>" << row.scratchpadPeak << "</td><td>" << row.dramBytes << "</td><td>"
      << row.npuLayers << "/" << row.layers << "</td><td>"
      << (row.checked ? std::to_string(row.simCycles) : "") << "</td><td class=\"l\">"
      << esc((row.pareto ? "Pareto" : "") +
             (row.checked ? std::string(row.pareto ? ", " : "") + "check " + row.check : ""))
      << "</td></tr>\n";
  }
  o << "</table>\n";
  std::string json = sweepJson(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  for (char c : json)
    safe += c == '<' ? std::string("\\u003c") : std::string(1, c);
  o << "<script type=\"application/json\" id=\"npucc-sweep-data\">" << safe
    << "</script>\n</body></html>\n";
  return o.str();
}

} // namespace npucc::driver
