//===- Target.cpp - Loading targets by name or path; parameter tables -----===//
#include "npucc/target/Target.h"

#include "npucc/codegen/EmbeddedRuntime.h"

#include "../../runtime/hal/npucc_params.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace npucc::target {

const std::vector<std::string> &paramNames() {
  static const std::vector<std::string> names = {
#define NPUCC_PARAM_NAME(id, name, def, req, allowed, sgn) name,
      NPUCC_PARAM_LIST(NPUCC_PARAM_NAME)
#undef NPUCC_PARAM_NAME
  };
  return names;
}

int paramId(const std::string &name) {
  const auto &n = paramNames();
  auto it = std::find(n.begin(), n.end(), name);
  return it == n.end() ? -1 : int(it - n.begin());
}

const std::vector<std::string> &commandKindNames() {
  // Order matches NPUCC_KIND_* in npucc_params.h.
  static const std::vector<std::string> names = {"dma",  "conv",    "depthwise", "matmul",
                                                 "pool", "eltwise", "fence"};
  return names;
}

int commandKindId(const std::string &kind) {
  const auto &n = commandKindNames();
  auto it = std::find(n.begin(), n.end(), kind);
  return it == n.end() ? -1 : int(it - n.begin());
}

static bool contains(const std::vector<int> &v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
bool OpLimits::allowsKernel(int k) const { return contains(kernelSizes, k); }
bool OpLimits::allowsStride(int s) const { return contains(strides, s); }
bool OpLimits::allowsDilation(int d) const { return contains(dilations, d); }
bool OpLimits::allowsChannels(int c) const {
  return c > 0 && c % channelMultiple == 0 && (maxChannels == 0 || c <= maxChannels);
}
bool OpLimits::allowsKind(const std::string &k) const {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

const ParamBinding *CommandDesc::binding(const std::string &param) const {
  for (const ParamBinding &b : params)
    if (b.param == param)
      return &b;
  return nullptr;
}

const CommandDesc *TargetDesc::command(const std::string &kind) const {
  for (const CommandDesc &c : commands)
    if (c.kind == kind)
      return &c;
  return nullptr;
}

const OpLimits *TargetDesc::operation(const std::string &op) const {
  auto it = compute.operations.find(op);
  return it == compute.operations.end() ? nullptr : &it->second;
}

static const std::string BuiltinPrefix = "targets/";
static const std::string JsonSuffix = ".json";

std::vector<std::string> builtinTargets() {
  std::vector<std::string> names;
  for (const codegen::EmbeddedFile &f : codegen::embeddedRuntimeFiles()) {
    std::string p = f.path;
    if (p.size() > BuiltinPrefix.size() + JsonSuffix.size() &&
        p.compare(0, BuiltinPrefix.size(), BuiltinPrefix) == 0 &&
        p.compare(p.size() - JsonSuffix.size(), JsonSuffix.size(), JsonSuffix) == 0 &&
        p.find('/', BuiltinPrefix.size()) == std::string::npos)
      names.push_back(
          p.substr(BuiltinPrefix.size(), p.size() - BuiltinPrefix.size() - JsonSuffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<TargetDesc> loadTarget(const std::string &pathOrBuiltinName) {
  // A name without a path separator or .json suffix is a built-in target.
  bool looksLikePath = pathOrBuiltinName.find('/') != std::string::npos ||
                       (pathOrBuiltinName.size() > JsonSuffix.size() &&
                        pathOrBuiltinName.compare(pathOrBuiltinName.size() - JsonSuffix.size(),
                                                  JsonSuffix.size(), JsonSuffix) == 0);
  if (!looksLikePath) {
    std::string key = BuiltinPrefix + pathOrBuiltinName + JsonSuffix;
    for (const codegen::EmbeddedFile &f : codegen::embeddedRuntimeFiles())
      if (key == f.path)
        return parseTargetJson(f.contents, pathOrBuiltinName + JsonSuffix);
  }
  std::ifstream in(pathOrBuiltinName, std::ios::binary);
  if (!in) {
    std::string known;
    for (const std::string &n : builtinTargets())
      known += (known.empty() ? "" : ", ") + n;
    return std::move(error("cannot open target description '" + pathOrBuiltinName +
                           "': not a readable file nor a built-in target")
                         .note("built-in targets: " + (known.empty() ? "(none)" : known)));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Result<TargetDesc> r = parseTargetJson(ss.str(), pathOrBuiltinName);
  if (r)
    r->file = pathOrBuiltinName;
  return r;
}

} // namespace npucc::target
