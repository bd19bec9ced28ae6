//===- Sweep.cpp - `npucc sweep`: a description's design space ------------===//
//
// Builds each point's description (driver/Sweep.h), loads it with the real
// loader (a refused point is a row with the loader's reason), then compiles
// every model for it with this very binary (`npucc MODEL -o DIR --target
// POINT.json`, whose report.json gives the figures) and, with --check, runs
// `npucc check` on the simulator. Up to -j N of those processes run at once;
// rows are stored by point and model, so the outputs do not depend on -j or
// on the order in which the processes finish.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "npucc/codegen/EmbeddedRuntime.h"
#include "npucc/driver/Sweep.h"
#include "npucc/support/FileRead.h"
#include "npucc/support/FileWrite.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace npucc::tool {

namespace {

struct Model {
  std::string path, name, checkDir; // checkDir: the folder npucc check takes
};

/// One row's processes: the compile, then (checked rows) the check.
struct Job {
  size_t row = 0;
  std::string outDir, checkJson;
  std::vector<std::vector<std::string>> steps;
  size_t step = 0;
};

pid_t spawn(const std::vector<std::string> &argv, const std::string &logPath) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
      _exit(127);
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

/// Every occurrence of `from` in `s` replaced by `to`.
std::string replaceAll(std::string s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); !from.empty() && at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// The first line of a failed run's log that says "error", else its first line.
std::string logReason(const std::string &logPath, const std::string &work) {
  auto text = readFileLimited(logPath, 1 << 20, "log");
  std::string log = text ? *text : std::string();
  std::string first, err;
  size_t start = 0;
  while (start < log.size()) {
    size_t nl = log.find('\n', start);
    std::string line = log.substr(start, nl == std::string::npos ? nl : nl - start);
    start = nl == std::string::npos ? log.size() : nl + 1;
    if (first.empty() && !line.empty())
      first = line;
    if (err.empty() && line.find("error") != std::string::npos)
      err = line;
  }
  std::string r = err.empty() ? first : err;
  if (r.rfind("npucc: ", 0) == 0)
    r = r.substr(7);
  return replaceAll(r.empty() ? "no output" : r, work + "/", "");
}

Result<nlohmann::json> readJson(const std::string &path) {
  auto text = readFileLimited(path, 64 << 20, "JSON report");
  if (!text)
    return std::move(text.error());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded())
    return error("'" + path + "' is not JSON");
  return j;
}

void fillFromReport(driver::SweepRow &row, const nlohmann::json &rep) {
  const nlohmann::json &t = rep["totals"];
  row.cycles = t.value("cycles", uint64_t(0));
  row.clockHz = double(t.value("clock_hz", uint64_t(0)));
  row.scratchpadPeak = t.value("scratchpad_peak_bytes", uint64_t(0));
  row.dramBytes = t.value("dram_bytes", uint64_t(0));
  row.arenaBytes = t.value("arena_bytes", uint64_t(0));
  if (t.contains("cpu_cycles"))
    row.cpuCycles = t["cpu_cycles"].value("cortex-m4", uint64_t(0));
  for (const nlohmann::json &l : rep["layers"]) {
    ++row.layers;
    row.npuLayers += l.value("placement", std::string()).rfind("npu:", 0) == 0;
  }
}

void fillFromCheck(driver::SweepRow &row, const nlohmann::json &c, const std::string &work) {
  row.check = c.value("status", std::string("error"));
  if (c.contains("error") && c["error"].is_string())
    row.checkError = replaceAll(c["error"].get<std::string>().substr(0, 300), work + "/", "");
  if (c.contains("data_sets") && c["data_sets"].is_array() && !c["data_sets"].empty() &&
      c["data_sets"][0].contains("sim"))
    row.simCycles = c["data_sets"][0]["sim"].value("cycles", uint64_t(0));
  else if (row.check != "error")
    row.checkError = "no simulator figures (the program does not use the NPU)";
}

Result<Model> resolveModel(const std::string &arg, bool check) {
  Model m;
  fs::path p = arg;
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    m.path = (p / "model.onnx").string();
    m.checkDir = arg;
    m.name = p.filename().empty() ? p.parent_path().filename().string() : p.filename().string();
  } else {
    m.path = arg;
    m.name = p.filename() == "model.onnx" ? p.parent_path().filename().string() : p.stem().string();
    if (p.filename() == "model.onnx")
      m.checkDir = p.parent_path().empty() ? "." : p.parent_path().string();
  }
  if (!fs::is_regular_file(m.path, ec))
    return error("model '" + arg + "': no such ONNX file ('" + m.path + "')");
  if (check && m.checkDir.empty())
    return error("model '" + arg +
                 "': --check needs a model folder (model.onnx and "
                 "test_data_set_N/, as npucc check takes)");
  return m;
}

std::string selfPath() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

} // namespace

int runSweep(const CommonCompileFlags &common, const SweepFlags &flags) {
  auto fail = [](const Diagnostic &d) {
    reportError(d);
    return 2;
  };
  if (flags.jobs < 1)
    return fail(error("-j " + std::to_string(flags.jobs) + ": at least 1"));
  if (flags.checkEvery < 1)
    return fail(error("--check-every " + std::to_string(flags.checkEvery) + ": at least 1"));
  std::vector<driver::SweepAxis> axes;
  std::map<std::string, int> seen;
  for (const std::string &a : flags.axes) {
    auto ax = driver::parseSweepAxis(a);
    if (!ax)
      return fail(ax.error());
    axes.push_back(ax.take());
  }
  for (const std::string &s : flags.sets) {
    auto ax = driver::parseSweepSet(s);
    if (!ax)
      return fail(ax.error());
    axes.push_back(ax.take());
  }
  for (const driver::SweepAxis &a : axes)
    if (seen[a.name]++)
      return fail(error("axis '" + a.name + "' given twice"));
  std::vector<Model> models;
  for (const std::string &m : flags.models) {
    auto r = resolveModel(m, flags.check);
    if (!r)
      return fail(r.error());
    models.push_back(r.take());
  }
  for (size_t i = 0; i < models.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (models[k].name == models[i].name)
        models[i].name = flags.models[i]; // two folders of one name: the paths tell them apart
  if (common.target == "cpu")
    return fail(error("--target cpu has no description to sweep; give an NPU description "
                      "(a built-in name or a JSON file)"));
  // The base description's text: a built-in or a file.
  std::string baseText;
  if (const std::string *b = codegen::findRuntimeFile("targets/" + common.target + ".json")) {
    baseText = *b;
  } else {
    auto t = readFileLimited(common.target, 1 << 24, "target description");
    if (!t)
      return fail(t.error());
    baseText = t.take();
  }
  auto baseCheck = driver::loadTarget(common.target); // the base must load
  if (!baseCheck)
    return fail(baseCheck.error().note("the base description of the sweep (--target)"));
  nlohmann::json base = nlohmann::json::parse(baseText, nullptr, false, true);
  if (base.is_discarded())
    return fail(error("the base description '" + common.target + "' is not plain JSON"));
  const std::string self = selfPath();
  if (self.empty())
    return fail(error("cannot find the npucc binary (/proc/self/exe) to run the points"));

  std::string work = flags.workDir;
  std::error_code ec;
  if (work.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "npucc-sweep-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      return fail(error("cannot create a temporary folder"));
    work = tmpl;
  } else {
    fs::create_directories(work, ec);
    work = fs::absolute(work).lexically_normal().string();
    if (!work.empty() && work.back() == '/')
      work.pop_back();
  }
  struct Cleanup {
    std::string dir;
    bool temp;
    ~Cleanup() {
      std::error_code e;
      if (temp)
        fs::remove_all(dir, e);
    }
  } cleanup{work, flags.workDir.empty()};

  const bool progress =
      flags.progress == "on" || (flags.progress == "auto" && isatty(fileno(stderr)));
  driver::SweepResult res;
  res.base = common.target;
  for (const driver::SweepAxis &a : axes)
    res.axisNames.push_back(a.name);
  for (const Model &m : models)
    res.models.push_back(m.name);
  std::vector<Job> jobs;
  const std::vector<std::vector<size_t>> points = driver::sweepPoints(axes);
  for (size_t pi = 0; pi < points.size(); ++pi) {
    std::vector<std::string> labels;
    for (size_t a = 0; a < axes.size(); ++a)
      labels.push_back(axes[a].labels[points[pi][a]]);
    nlohmann::json desc = base;
    Status applied = driver::applySweepPoint(desc, axes, points[pi]);
    if (!applied)
      return fail(applied.error());
    std::string text = desc.dump(2) + "\n";
    std::string pointName = "point " + std::to_string(pi);
    auto loaded = target::parseTargetJson(text, pointName); // the real loader
    std::string descPath = work + "/p" + std::to_string(pi) + ".json";
    if (loaded)
      if (Status w = writeFileBytes(descPath, text, "the point's description"); !w)
        return fail(w.error());
    uint64_t spm = 0;
    if (loaded)
      for (const target::Scratchpad &s : loaded->scratchpads)
        spm += s.size;
    const bool checkPoint = flags.check && pi % size_t(flags.checkEvery) == 0;
    for (size_t mi = 0; mi < models.size(); ++mi) {
      driver::SweepRow row;
      row.point = pi;
      row.model = models[mi].name;
      row.labels = labels;
      row.scratchpadBytes = spm;
      if (!loaded) {
        row.status = "refused";
        std::string why = loaded.error().str();
        for (char &c : why)
          c = c == '\n' ? ' ' : c;
        row.reason = why;
        if (progress && mi == 0)
          std::fprintf(stderr, "npucc sweep: point %zu refused by the loader: %s\n", pi,
                       why.c_str());
        res.rows.push_back(row);
        continue;
      }
      row.status = "ok";
      row.checked = checkPoint;
      Job j;
      j.row = res.rows.size();
      std::string stem = work + "/p" + std::to_string(pi) + "-m" + std::to_string(mi);
      j.outDir = stem + ".out";
      j.checkJson = stem + ".check.json";
      std::vector<std::string> compile = {self,     models[mi].path, "-o",
                                          j.outDir, "--target",      descPath};
      for (const std::string &s : common.shapes)
        compile.insert(compile.end(), {"--shape", s});
      j.steps.push_back(compile);
      if (checkPoint) {
        std::vector<std::string> check = {self,        "check",      models[mi].checkDir,
                                          "--target",  descPath,     "--json",
                                          j.checkJson, "--progress", "off"};
        for (const std::string &s : common.shapes)
          check.insert(check.end(), {"--shape", s});
        j.steps.push_back(check);
      }
      jobs.push_back(j);
      res.rows.push_back(row);
    }
  }

  size_t next = 0, done = 0;
  std::map<pid_t, size_t> running; // pid -> job
  auto launch = [&](size_t ji) {
    Job &j = jobs[ji];
    std::string log = j.outDir + (j.step == 0 ? ".compile.log" : ".check.log");
    pid_t pid = spawn(j.steps[j.step], log);
    if (pid < 0)
      return false;
    running[pid] = ji;
    return true;
  };
  while (next < jobs.size() || !running.empty()) {
    while (running.size() < size_t(flags.jobs) && next < jobs.size())
      if (!launch(next++))
        return fail(error("cannot start a process (fork failed)"));
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      return fail(error("waiting for the sweep's processes failed"));
    }
    auto it = running.find(pid);
    if (it == running.end())
      continue;
    size_t ji = it->second;
    running.erase(it);
    Job &j = jobs[ji];
    driver::SweepRow &row = res.rows[j.row];
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    bool finished = true;
    if (j.step == 0) {
      Result<nlohmann::json> rep = error("the compile failed");
      if (rc == 0)
        rep = readJson(j.outDir + "/report.json");
      if (!rep) {
        row.status = "failed";
        row.checked = false;
        row.reason = rc == 0 ? rep.error().message : logReason(j.outDir + ".compile.log", work);
      } else {
        fillFromReport(row, *rep);
        if (j.steps.size() > 1) {
          ++j.step;
          finished = !launch(ji);
          if (finished) {
            row.check = "error";
            row.checkError = "cannot start npucc check (fork failed)";
          }
        }
      }
    } else {
      auto c = readJson(j.checkJson);
      if (c)
        fillFromCheck(row, *c, work);
      else {
        row.check = "error";
        row.checkError = logReason(j.outDir + ".check.log", work);
      }
    }
    if (!finished)
      continue;
    ++done;
    if (progress) {
      std::string vals;
      for (size_t a = 0; a < axes.size(); ++a)
        vals += " " + res.axisNames[a] + "=" + row.labels[a];
      std::string what = row.status != "ok" ? row.status + ": " + row.reason
                                            : std::to_string(row.cycles) + " cycles";
      if (row.checked)
        what += ", simulated " + std::to_string(row.simCycles) + " (" + row.check + ")";
      std::fprintf(stderr, "npucc sweep: [%zu/%zu] point %zu%s %s: %s\n", done, jobs.size(),
                   row.point, vals.c_str(), row.model.c_str(), what.c_str());
    }
  }
  driver::markPareto(res);

  std::cout << driver::sweepTable(res);
  size_t refused = 0, failed = 0, checked = 0, bad = 0, differ = 0;
  for (const driver::SweepRow &r : res.rows) {
    refused += r.status == "refused";
    failed += r.status == "failed";
    checked += r.checked;
    bad += r.checked && r.check != "pass";
    differ += r.checked && r.check == "pass" && r.simCycles != r.cycles;
  }
  std::cout << points.size() << " points x " << models.size()
            << " models: " << res.rows.size() - refused - failed << " compiled, " << refused
            << " refused, " << failed << " failed; " << checked << " checked on the simulator";
  if (checked)
    std::cout << " (" << bad << " not passing, " << differ << " with simulated cycles != estimate)";
  std::cout << "; * = Pareto front per model (total cycles, scratchpad, traffic)\n";
  for (auto [path, text, what] :
       {std::tuple{&flags.csv, driver::sweepCsv(res), "the sweep CSV (--csv)"},
        std::tuple{&flags.json, driver::sweepJson(res).dump(2) + "\n", "the sweep JSON (--json)"},
        std::tuple{&flags.html, driver::sweepHtml(res), "the sweep chart (--html)"}})
    if (!path->empty())
      if (Status s = replaceFileBytes(*path, text, what); !s)
        return fail(s.error());
  return bad ? 1 : 0;
}

} // namespace npucc::tool
