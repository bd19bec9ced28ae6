//===- CodeSize.cpp - Code bytes and stack of the runtime a program links -===//
//
// Closure over the call edges of CodeSize.def (bench/code_size.py) from the
// functions a program calls; see include/npucc/lower/CodeSize.h.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CodeSize.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>

namespace npucc::lower {

namespace {

enum { Cfg_M4Os, Cfg_M4O2, Cfg_RvOs, Cfg_RvO2 };

struct FnRow {
  const char *name, *file;
  uint32_t size[4], stack[4];
};
struct FileRow {
  const char *file;
  uint32_t ro[4], ram[4];
};
struct CallRow {
  const char *caller, *callee;
  unsigned configs; // bit c: the call exists in configuration c
};
struct GlueRow {
  int config;
  uint32_t base, perCall, stack;
};

#define NPUCC_CODE_FN(N, F, S0, S1, S2, S3, K0, K1, K2, K3)                                        \
  {N, F, {S0, S1, S2, S3}, {K0, K1, K2, K3}},
#define NPUCC_CODE_FILE(F, R0, R1, R2, R3, M0, M1, M2, M3)
#define NPUCC_CODE_CALL(A, B, M)
#define NPUCC_CODE_GLUE(C, B, P, S)
const FnRow Fns[] = {
#include "CodeSize.def"
};
#undef NPUCC_CODE_FN
#undef NPUCC_CODE_FILE
#undef NPUCC_CODE_CALL
#undef NPUCC_CODE_GLUE

#define NPUCC_CODE_FN(N, F, S0, S1, S2, S3, K0, K1, K2, K3)
#define NPUCC_CODE_FILE(F, R0, R1, R2, R3, M0, M1, M2, M3) {F, {R0, R1, R2, R3}, {M0, M1, M2, M3}},
#define NPUCC_CODE_CALL(A, B, M)
#define NPUCC_CODE_GLUE(C, B, P, S)
const FileRow Files[] = {
#include "CodeSize.def"
};
#undef NPUCC_CODE_FN
#undef NPUCC_CODE_FILE
#undef NPUCC_CODE_CALL
#undef NPUCC_CODE_GLUE

#define NPUCC_CODE_FN(N, F, S0, S1, S2, S3, K0, K1, K2, K3)
#define NPUCC_CODE_FILE(F, R0, R1, R2, R3, M0, M1, M2, M3)
#define NPUCC_CODE_CALL(A, B, M) {A, B, M},
#define NPUCC_CODE_GLUE(C, B, P, S)
const CallRow Calls[] = {
#include "CodeSize.def"
};
#undef NPUCC_CODE_FN
#undef NPUCC_CODE_FILE
#undef NPUCC_CODE_CALL
#undef NPUCC_CODE_GLUE

#define NPUCC_CODE_FN(N, F, S0, S1, S2, S3, K0, K1, K2, K3)
#define NPUCC_CODE_FILE(F, R0, R1, R2, R3, M0, M1, M2, M3)
#define NPUCC_CODE_CALL(A, B, M)
#define NPUCC_CODE_GLUE(C, B, P, S) {Cfg_##C, B, P, S},
const GlueRow Glue[] = {
#include "CodeSize.def"
};
#undef NPUCC_CODE_FN
#undef NPUCC_CODE_FILE
#undef NPUCC_CODE_CALL
#undef NPUCC_CODE_GLUE

struct Index {
  std::map<std::string, size_t> fn;                 // name -> Fns index
  std::map<std::string, std::vector<size_t>> calls; // caller -> Calls indices
  std::map<std::string, std::vector<size_t>> byFile;
  std::map<std::string, size_t> file;
  Index() {
    for (size_t i = 0; i < sizeof Fns / sizeof Fns[0]; ++i) {
      fn.emplace(Fns[i].name, i);
      byFile[Fns[i].file].push_back(i);
    }
    for (size_t i = 0; i < sizeof Calls / sizeof Calls[0]; ++i)
      calls[Calls[i].caller].push_back(i);
    for (size_t i = 0; i < sizeof Files / sizeof Files[0]; ++i)
      file.emplace(Files[i].file, i);
  }
};

const Index &index() {
  static const Index I;
  return I;
}

/// Own frame plus the deepest callee path (the table has no recursion; a
/// cycle would be cut where it closes).
uint64_t pathStack(const Index &I, const std::string &f, int c, std::set<std::string> &onPath,
                   std::map<std::string, uint64_t> &memo) {
  auto fi = I.fn.find(f);
  if (fi == I.fn.end() || onPath.count(f))
    return 0;
  auto m = memo.find(f);
  if (m != memo.end())
    return m->second;
  onPath.insert(f);
  uint64_t deepest = 0;
  auto ci = I.calls.find(f);
  if (ci != I.calls.end())
    for (size_t k : ci->second)
      if (Calls[k].configs >> c & 1)
        deepest = std::max(deepest, pathStack(I, Calls[k].callee, c, onPath, memo));
  onPath.erase(f);
  uint64_t s = Fns[fi->second].stack[c] + deepest;
  memo.emplace(f, s);
  return s;
}

} // namespace

bool parseMcuConfig(const std::string &name, McuConfig &out) {
  for (int c = 0; c < int(McuConfig::Count); ++c)
    if (name == mcuConfigName(McuConfig(c))) {
      out = McuConfig(c);
      return true;
    }
  return false;
}

const char *mcuConfigName(McuConfig c) {
  switch (c) {
  case McuConfig::CortexM4Os:
    return "cortex-m4";
  case McuConfig::CortexM4O2:
    return "cortex-m4-O2";
  case McuConfig::Rv32Os:
    return "rv32";
  case McuConfig::Rv32O2:
  case McuConfig::Count:
    break;
  }
  return "rv32-O2";
}

bool codeSizeKnowsFile(const std::string &file) { return index().file.count(file) != 0; }

CodeEstimate estimateCode(const std::vector<std::string> &entries, size_t calls,
                          const std::vector<std::string> &wholeFiles, McuConfig cfg) {
  const Index &I = index();
  int c = int(cfg);
  CodeEstimate e;
  std::vector<std::string> roots = entries;
  for (const std::string &f : wholeFiles) {
    auto it = I.byFile.find(f);
    if (it != I.byFile.end())
      for (size_t k : it->second)
        roots.push_back(Fns[k].name);
  }
  std::set<std::string> seen, external, files;
  std::vector<std::string> todo = roots;
  while (!todo.empty()) {
    std::string f = todo.back();
    todo.pop_back();
    if (!seen.insert(f).second)
      continue;
    auto fi = I.fn.find(f);
    if (fi == I.fn.end()) {
      external.insert(f);
      continue;
    }
    e.runtimeText += Fns[fi->second].size[c];
    files.insert(Fns[fi->second].file);
    ++e.functions;
    auto ci = I.calls.find(f);
    if (ci != I.calls.end())
      for (size_t k : ci->second)
        if (Calls[k].configs >> c & 1)
          todo.push_back(Calls[k].callee);
  }
  for (const std::string &f : files) {
    auto it = I.file.find(f);
    if (it != I.file.end()) {
      e.runtimeRodata += Files[it->second].ro[c];
      e.runtimeRam += Files[it->second].ram[c];
    }
  }
  e.external.assign(external.begin(), external.end());
  std::set<std::string> onPath;
  std::map<std::string, uint64_t> memo;
  uint64_t deepest = 0;
  for (const std::string &r : roots)
    deepest = std::max(deepest, pathStack(I, r, c, onPath, memo));
  for (const GlueRow &g : Glue)
    if (g.config == c) {
      e.modelText = g.base + uint64_t(g.perCall) * calls;
      e.stack = deepest + g.stack;
    }
  return e;
}

} // namespace npucc::lower
