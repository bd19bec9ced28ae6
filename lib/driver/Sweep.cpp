//===- Sweep.cpp - Sweep axes, points, Pareto front and text outputs ------===//
//
// The parts of `npucc sweep` that run nothing (driver/Sweep.h): named and
// generic axes, the points, the JSON patch of a point, the Pareto front and
// the table, CSV and JSON of the results.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Sweep.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <sstream>

namespace npucc::driver {

namespace {

enum class ValueKind { Count, Bytes, Hz, Bool, Shape };

struct NamedAxis {
  const char *name;
  ValueKind kind;
  std::vector<const char *> paths;
  const char *doc;
};

const std::vector<NamedAxis> &namedAxes() {
  static const std::vector<NamedAxis> axes = {
      {"mac",
       ValueKind::Shape,
       {"/compute/mac_array/rows", "/compute/mac_array/cols"},
       "MAC array ROWSxCOLS (or N for NxN)"},
      {"spm",
       ValueKind::Bytes,
       {"/memories/scratchpads/*/size"},
       "size of every scratchpad, bytes (K = 1024, M = 1048576)"},
      {"banks", ValueKind::Count, {"/memories/scratchpads/*/banks"}, "banks of every scratchpad"},
      {"dma_bw", ValueKind::Count, {"/dma/bytes_per_cycle"}, "DMA bytes per cycle"},
      {"dma_dims", ValueKind::Count, {"/dma/dims"}, "DMA dimensions (1 or 2)"},
      {"dma_setup", ValueKind::Count, {"/dma/setup_cycles"}, "DMA setup cycles per command"},
      {"concurrent",
       ValueKind::Bool,
       {"/concurrent_dma_compute"},
       "DMA and compute overlap: on|off (true|false)"},
      {"clock", ValueKind::Hz, {"/timing/clock_hz"}, "clock in Hz (k, M, G = 1e3, 1e6, 1e9)"},
      {"overhead",
       ValueKind::Count,
       {"/timing/command_overhead_cycles"},
       "cycles of overhead per command"},
  };
  return axes;
}

/// The values of `V1,V2,...`: commas inside brackets, braces or a quoted string (a JSON
/// array or object value of --set) do not separate values.
std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> r;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quoted && c == '\\' && i + 1 < s.size()) {
      cur += c;
      cur += s[++i];
      continue;
    }
    if (c == '"')
      quoted = !quoted;
    else if (!quoted && (c == '[' || c == '{'))
      ++depth;
    else if (!quoted && (c == ']' || c == '}'))
      --depth;
    if (c == ',' && depth == 0 && !quoted) {
      r.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  r.push_back(cur);
  return r;
}

/// A whole number with an optional unit suffix; false on junk or overflow.
bool parseScaled(const std::string &text, ValueKind kind, uint64_t &out) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    uint64_t d = uint64_t(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
    ++i;
  }
  if (i == 0)
    return false;
  std::string suffix = text.substr(i);
  uint64_t mul = 1;
  if (kind == ValueKind::Bytes && (suffix == "K" || suffix == "k" || suffix == "KiB"))
    mul = 1024;
  else if (kind == ValueKind::Bytes && (suffix == "M" || suffix == "MiB"))
    mul = 1024 * 1024;
  else if (kind == ValueKind::Hz && (suffix == "k" || suffix == "K"))
    mul = 1000;
  else if (kind == ValueKind::Hz && suffix == "M")
    mul = 1000000;
  else if (kind == ValueKind::Hz && suffix == "G")
    mul = 1000000000;
  else if (!suffix.empty())
    return false;
  if (v > UINT64_MAX / mul)
    return false;
  out = v * mul;
  return true;
}

Result<std::vector<nlohmann::json>> parseNamedValue(const NamedAxis &a, const std::string &v) {
  auto bad = [&](const char *expected) {
    return error(std::string("--axis ") + a.name + ": value '" + v + "': expected " + expected);
  };
  uint64_t n = 0;
  switch (a.kind) {
  case ValueKind::Shape: {
    size_t x = v.find('x');
    uint64_t rows = 0, cols = 0;
    if (x == std::string::npos) {
      if (!parseScaled(v, ValueKind::Count, rows))
        return bad("ROWSxCOLS or N, e.g. 16x16");
      cols = rows;
    } else if (!parseScaled(v.substr(0, x), ValueKind::Count, rows) ||
               !parseScaled(v.substr(x + 1), ValueKind::Count, cols)) {
      return bad("ROWSxCOLS or N, e.g. 16x16");
    }
    return std::vector<nlohmann::json>{rows, cols};
  }
  case ValueKind::Bool:
    if (v == "on" || v == "true" || v == "1")
      return std::vector<nlohmann::json>{true};
    if (v == "off" || v == "false" || v == "0")
      return std::vector<nlohmann::json>{false};
    return bad("on, off, true or false");
  case ValueKind::Bytes:
    if (!parseScaled(v, a.kind, n))
      return bad("a size in bytes, e.g. 65536, 64K or 1M");
    break;
  case ValueKind::Hz:
    if (!parseScaled(v, a.kind, n))
      return bad("a frequency in Hz, e.g. 500000000, 500M or 1G");
    break;
  case ValueKind::Count:
    if (!parseScaled(v, a.kind, n))
      return bad("a whole number");
    break;
  }
  return std::vector<nlohmann::json>(a.paths.size(), n);
}

Status checkValues(const std::string &flag, const std::string &spec, size_t eq,
                   const std::vector<std::string> &values) {
  if (eq == std::string::npos || eq == 0)
    return error(flag + " '" + spec + "': expected NAME=V1,V2,...");
  for (const std::string &v : values)
    if (v.empty())
      return error(flag + " '" + spec +
                   "': an empty value (values are separated by single "
                   "commas)");
  std::vector<std::string> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end())
    return error(flag + " '" + spec + "': value '" + *d + "' given twice");
  return success();
}

/// The JSON pointer steps of `path` ("/a/b/0" -> a, b, 0), with ~0 and ~1 unescaped.
std::vector<std::string> pointerSteps(const std::string &path) {
  std::vector<std::string> steps;
  std::string cur;
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string s;
      for (size_t k = 0; k < cur.size(); ++k) {
        if (cur[k] == '~' && k + 1 < cur.size() && (cur[k + 1] == '0' || cur[k + 1] == '1')) {
          s += cur[k + 1] == '0' ? '~' : '/';
          ++k;
        } else {
          s += cur[k];
        }
      }
      steps.push_back(s);
      cur.clear();
    } else {
      cur += path[i];
    }
  }
  return steps;
}

/// Sets `steps` under `node` to `v`; the path walked so far is `at`.
Status setPath(nlohmann::json &node, const std::vector<std::string> &steps, size_t k,
               const nlohmann::json &v, const std::string &at, const std::string &axis) {
  if (k == steps.size()) {
    node = v;
    return success();
  }
  const std::string &s = steps[k];
  auto missing = [&](const std::string &what) {
    return error("axis '" + axis + "': the base description has no " + at + "/" + s + " (" + what +
                 ")");
  };
  if (node.is_array()) {
    if (s == "*") {
      if (node.empty())
        return missing("an empty array");
      for (size_t i = 0; i < node.size(); ++i)
        NPUCC_TRY(setPath(node[i], steps, k + 1, v, at + "/" + std::to_string(i), axis));
      return success();
    }
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9 ||
        std::stoul(s) >= node.size())
      return missing("the array has " + std::to_string(node.size()) + " elements");
    return setPath(node[std::stoul(s)], steps, k + 1, v, at + "/" + s, axis);
  }
  if (!node.is_object())
    return missing(at.empty() ? "not an object" : at + " is not an object");
  if (!node.contains(s) && k + 1 < steps.size())
    return missing("no such key");
  return setPath(node[s], steps, k + 1, v, at + "/" + s, axis);
}

std::string csvField(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  std::string r = "\"";
  for (char c : s)
    r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

} // namespace

std::string sweepAxisHelp() {
  std::string r;
  for (const NamedAxis &a : namedAxes()) {
    std::string paths;
    for (const char *p : a.paths)
      paths += (paths.empty() ? "" : ", ") + std::string(p);
    char line[200];
    std::snprintf(line, sizeof line, "  %-11s %s -> %s\n", a.name, a.doc, paths.c_str());
    r += line;
  }
  return r;
}

Result<SweepAxis> parseSweepAxis(const std::string &spec) {
  size_t eq = spec.find('=');
  std::vector<std::string> values =
      eq == std::string::npos ? std::vector<std::string>{} : splitList(spec.substr(eq + 1));
  NPUCC_TRY(checkValues("--axis", spec, eq, values));
  std::string name = spec.substr(0, eq);
  for (const NamedAxis &a : namedAxes()) {
    if (name != a.name)
      continue;
    SweepAxis ax;
    ax.name = name;
    for (const char *p : a.paths)
      ax.paths.push_back(p);
    for (const std::string &v : values) {
      auto parsed = parseNamedValue(a, v);
      if (!parsed)
        return std::move(parsed.error());
      ax.labels.push_back(v);
      ax.values.push_back(parsed.take());
    }
    return ax;
  }
  std::string known;
  for (const NamedAxis &a : namedAxes())
    known += (known.empty() ? "" : ", ") + std::string(a.name);
  return error("--axis '" + spec + "': unknown axis '" + name + "' (known: " + known +
               "; --set /json/path=V1,V2 sets any path)");
}

Result<SweepAxis> parseSweepSet(const std::string &spec) {
  size_t eq = spec.find('=');
  std::vector<std::string> values =
      eq == std::string::npos ? std::vector<std::string>{} : splitList(spec.substr(eq + 1));
  NPUCC_TRY(checkValues("--set", spec, eq, values));
  SweepAxis ax;
  ax.name = spec.substr(0, eq);
  if (ax.name[0] != '/')
    return error("--set '" + spec + "': the path must be a JSON pointer such as /dma/dims");
  ax.paths.push_back(ax.name);
  for (const std::string &v : values) {
    nlohmann::json j = nlohmann::json::parse(v, nullptr, false);
    ax.labels.push_back(v);
    ax.values.push_back({j.is_discarded() ? nlohmann::json(v) : j});
  }
  return ax;
}

std::vector<std::vector<size_t>> sweepPoints(const std::vector<SweepAxis> &axes) {
  std::vector<std::vector<size_t>> points(1);
  for (const SweepAxis &a : axes) {
    std::vector<std::vector<size_t>> next;
    for (const std::vector<size_t> &p : points)
      for (size_t k = 0; k < a.values.size(); ++k) {
        next.push_back(p);
        next.back().push_back(k);
      }
    points = std::move(next);
  }
  return points;
}

Status applySweepPoint(nlohmann::json &desc, const std::vector<SweepAxis> &axes,
                       const std::vector<size_t> &point) {
  for (size_t a = 0; a < axes.size(); ++a)
    for (size_t p = 0; p < axes[a].paths.size(); ++p)
      NPUCC_TRY(setPath(desc, pointerSteps(axes[a].paths[p]), 0, axes[a].values[point[a]][p], "",
                        axes[a].name));
  return success();
}

std::vector<bool> paretoFront(const std::vector<std::vector<double>> &objectives) {
  std::vector<bool> front(objectives.size(), true);
  for (size_t i = 0; i < objectives.size(); ++i)
    for (size_t j = 0; j < objectives.size() && front[i]; ++j) {
      if (i == j)
        continue;
      bool noWorse = true, better = false;
      for (size_t k = 0; k < objectives[i].size(); ++k) {
        noWorse = noWorse && objectives[j][k] <= objectives[i][k];
        better = better || objectives[j][k] < objectives[i][k];
      }
      if (noWorse && better)
        front[i] = false;
    }
  return front;
}

void markPareto(SweepResult &r) {
  std::map<std::string, std::vector<size_t>> byModel;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    r.rows[i].pareto = false;
    if (r.rows[i].status == "ok")
      byModel[r.rows[i].model].push_back(i);
  }
  for (auto &[model, idx] : byModel) {
    std::vector<std::vector<double>> obj;
    for (size_t i : idx)
      obj.push_back({double(r.rows[i].programCycles()), double(r.rows[i].scratchpadBytes),
                     double(r.rows[i].dramBytes)});
    std::vector<bool> f = paretoFront(obj);
    for (size_t k = 0; k < idx.size(); ++k)
      r.rows[idx[k]].pareto = f[k];
  }
}

std::string sweepTable(const SweepResult &r) {
  std::vector<size_t> w(r.axisNames.size());
  for (size_t a = 0; a < w.size(); ++a) {
    w[a] = r.axisNames[a].size();
    for (const SweepRow &row : r.rows)
      w[a] = std::max(w[a], row.labels[a].size());
  }
  size_t mw = 5;
  for (const std::string &m : r.models)
    mw = std::max(mw, m.size());
  std::ostringstream o;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%5s  %-*s", "point", int(mw), "model");
  o << buf;
  for (size_t a = 0; a < w.size(); ++a) {
    std::snprintf(buf, sizeof buf, "  %-*s", int(w[a]), r.axisNames[a].c_str());
    o << buf;
  }
  std::snprintf(buf, sizeof buf, "  %10s %10s %10s %9s %8s %8s %11s %6s %10s %s\n", "npu cycles",
                "cpu cycles", "total", "time us", "spm KiB", "peak KiB", "traffic KiB", "npu",
                "sim cycles", "pareto / result");
  o << buf;
  for (const SweepRow &row : r.rows) {
    std::snprintf(buf, sizeof buf, "%5zu  %-*s", row.point, int(mw), row.model.c_str());
    o << buf;
    for (size_t a = 0; a < w.size(); ++a) {
      std::snprintf(buf, sizeof buf, "  %-*s", int(w[a]), row.labels[a].c_str());
      o << buf;
    }
    if (row.status != "ok") {
      o << "  " << row.status << ": " << row.reason << "\n";
      continue;
    }
    std::string sim = "-";
    if (row.checked)
      sim = row.check == "error" ? "error" : std::to_string(row.simCycles);
    std::string npu = std::to_string(row.npuLayers) + "/" + std::to_string(row.layers);
    std::string tail = row.pareto ? "*" : "";
    if (row.checked && row.check != "pass")
      tail += (tail.empty() ? "" : " ") + std::string("check ") + row.check +
              (row.checkError.empty() ? "" : ": " + row.checkError);
    else if (row.checked && row.simCycles != row.cycles)
      tail += (tail.empty() ? "" : " ") + std::string("sim != estimate");
    std::snprintf(buf, sizeof buf, "  %10llu %10llu %10llu %9.1f %8.1f %8.1f %11.1f %6s %10s %s\n",
                  (unsigned long long)row.cycles, (unsigned long long)row.cpuCycles,
                  (unsigned long long)row.programCycles(),
                  row.clockHz > 0 ? row.programCycles() / row.clockHz * 1e6 : 0.0,
                  row.scratchpadBytes / 1024.0, row.scratchpadPeak / 1024.0, row.dramBytes / 1024.0,
                  npu.c_str(), sim.c_str(), tail.c_str());
    o << buf;
  }
  return o.str();
}

std::string sweepCsv(const SweepResult &r) {
  std::ostringstream o;
  o << "point,model";
  for (const std::string &a : r.axisNames)
    o << "," << csvField(a);
  o << ",status,reason,cycles,clock_hz,scratchpad_bytes,scratchpad_peak_bytes,dram_bytes,"
       "arena_bytes,npu_layers,layers,cpu_cycles_cortex_m4,program_cycles,checked,check,sim_cycles,"
       "pareto\n";
  for (const SweepRow &row : r.rows) {
    o << row.point << "," << csvField(row.model);
    for (const std::string &l : row.labels)
      o << "," << csvField(l);
    o << "," << row.status << "," << csvField(row.reason) << "," << row.cycles << ","
      << uint64_t(row.clockHz) << "," << row.scratchpadBytes << "," << row.scratchpadPeak << ","
      << row.dramBytes << "," << row.arenaBytes << "," << row.npuLayers << "," << row.layers << ","
      << row.cpuCycles << "," << (row.checked ? 1 : 0) << "," << row.check << "," << row.simCycles
      << "," << (row.pareto ? 1 : 0) << "\n";
  }
  return o.str();
}

nlohmann::json sweepJson(const SweepResult &r) {
  nlohmann::json j;
  j["base"] = r.base;
  j["axes"] = r.axisNames;
  j["models"] = r.models;
  j["pareto_objectives"] = {"program_cycles", "scratchpad_bytes", "dram_bytes"};
  j["points"] = nlohmann::json::array();
  for (const SweepRow &row : r.rows) {
    nlohmann::json p = {{"point", row.point}, {"model", row.model}, {"status", row.status}};
    for (size_t a = 0; a < r.axisNames.size(); ++a)
      p["values"][r.axisNames[a]] = row.labels[a];
    if (row.status != "ok") {
      p["reason"] = row.reason;
    } else {
      p["cycles"] = row.cycles;
      p["clock_hz"] = uint64_t(row.clockHz);
      p["scratchpad_bytes"] = row.scratchpadBytes;
      p["scratchpad_peak_bytes"] = row.scratchpadPeak;
      p["dram_bytes"] = row.dramBytes;
      p["arena_bytes"] = row.arenaBytes;
      p["npu_layers"] = row.npuLayers;
      p["layers"] = row.layers;
      p["cpu_cycles_cortex_m4"] = row.cpuCycles;
      p["program_cycles"] = row.programCycles();
      p["pareto"] = row.pareto;
      if (row.checked) {
        p["check"] = row.check;
        p["sim_cycles"] = row.simCycles;
        if (!row.checkError.empty())
          p["check_error"] = row.checkError;
      }
    }
    j["points"].push_back(p);
  }
  return j;
}

} // namespace npucc::driver
