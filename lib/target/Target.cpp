//===- Target.cpp - Loading targets by name or path; parameter tables -----===//
//
// parseTargetJson runs TargetParser (TargetParse*.cpp) and turns its errors
// into diagnostics; the queries on a loaded TargetDesc (parameter ranges,
// operation limits) live here too.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Target.h"

#include "npucc/codegen/EmbeddedRuntime.h"

#include "TargetParser.h"

#include "../../runtime/hal/npucc_desc.h"

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

bool paramIsSigned(int id) {
  static const bool sgn[] = {
#define NPUCC_PARAM_SGN(id, name, def, req, allowed, sgn) sgn != 0,
      NPUCC_PARAM_LIST(NPUCC_PARAM_SGN)
#undef NPUCC_PARAM_SGN
  };
  return id >= 0 && id < NPUCC_P_COUNT && sgn[id];
}

int64_t paramDefault(int id) {
  static const int64_t def[] = {
#define NPUCC_PARAM_DEF(id, name, def, req, allowed, sgn) int64_t(def),
      NPUCC_PARAM_LIST(NPUCC_PARAM_DEF)
#undef NPUCC_PARAM_DEF
  };
  return id >= 0 && id < NPUCC_P_COUNT ? def[id] : 0;
}

static_assert(NumOperands == NPUCC_OPND_COUNT && int(Operand::Act) == NPUCC_OPND_ACT &&
                  int(Operand::Out) == NPUCC_OPND_OUT,
              "Operand (Target.h) follows NPUCC_OPERAND_LIST (npucc_desc.h)");

const std::vector<std::string> &operandNames() {
  static const std::vector<std::string> names = {
#define NPUCC_OPERAND_NAME(id, name, param) name,
      NPUCC_OPERAND_LIST(NPUCC_OPERAND_NAME)
#undef NPUCC_OPERAND_NAME
  };
  return names;
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
bool OpLimits::allowsKernel(int kh, int kw) const {
  return contains(kernelHeights, kh) && contains(kernelWidths, kw);
}
bool OpLimits::allowsStride(int s) const { return contains(strides, s); }
bool OpLimits::allowsDilation(int d) const { return contains(dilations, d); }
bool OpLimits::allowsDepthMultiplier(int m) const { return contains(depthMultipliers, m); }
bool OpLimits::allowsKind(const std::string &k) const {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

const ParamBinding *CommandDesc::binding(const std::string &param) const {
  for (const ParamBinding &b : params)
    if (b.param == param)
      return &b;
  return nullptr;
}

const FixedParam *CommandDesc::fixedParam(const std::string &param) const {
  for (const FixedParam &f : fixed)
    if (f.param == param)
      return &f;
  return nullptr;
}

const FieldBinding *CommandDesc::decodingCases(int id) const {
  for (const FieldBinding &b : fields)
    if (b.isCases && b.decodes)
      for (int p : b.params())
        if (p == id)
          return &b;
  return nullptr;
}

unsigned ParamBinding::totalWidth() const {
  unsigned w = 0;
  for (const FieldRef &f : fields)
    w += f.width;
  return w;
}

std::string ParamBinding::text() const {
  std::string s;
  for (const FieldRef &f : fields)
    s += (s.empty() ? "" : "+") + f.text;
  return s;
}

namespace {

/// What command `c` can carry for parameter `id` (the encoding of
/// npucc_npu_encode: (value - minus) >> shift in the binding's fields).
ParamRange computeParamRange(const CommandDesc *c, int id) {
  ParamRange r;
  const std::string &param =
      id >= 0 && size_t(id) < paramNames().size() ? paramNames()[size_t(id)] : std::string();
  if (const ParamBinding *b = c ? c->binding(param) : nullptr) {
    // The codes the fields hold, within the int64 values the runtime encodes
    // (npucc_npu_encode: an unsigned 64-bit field takes 0..INT64_MAX).
    unsigned w = b->totalWidth();
    bool sgn = paramIsSigned(id);
    int64_t hiCode = sgn ? (w >= 64 ? INT64_MAX : (int64_t(1) << (w - 1)) - 1)
                         : (w >= 63 ? INT64_MAX : (int64_t(1) << w) - 1);
    int64_t loCode = sgn ? (w >= 64 ? INT64_MIN : -(int64_t(1) << (w - 1))) : 0;
    int64_t step = int64_t(1) << b->shift;
    auto scale = [&](int64_t code) -> int64_t {
      // code * step + minus, saturated to the int64 range.
      if (code > (INT64_MAX >> b->shift) || code < (INT64_MIN >> b->shift))
        return code > 0 ? INT64_MAX : INT64_MIN;
      int64_t v = code * step;
      if (b->minus > 0 && v > INT64_MAX - b->minus)
        return INT64_MAX;
      if (b->minus < 0 && v < INT64_MIN - b->minus)
        return INT64_MIN;
      return v + b->minus;
    };
    r.lo = scale(loCode);
    r.hi = scale(hiCode);
    r.step = step;
    r.bound = true;
    r.field = b->text();
    return r;
  }
  if (c)
    for (const FieldBinding &b : c->fields) {
      if (!b.isCases || !b.decodes)
        continue;
      for (const FieldCase &fc : b.cases)
        for (const auto &w : fc.when)
          if (w.first == id &&
              std::find(r.values.begin(), r.values.end(), w.second) == r.values.end())
            r.values.push_back(w.second);
      if (r.values.empty())
        continue;
      std::sort(r.values.begin(), r.values.end());
      r.lo = r.values.front();
      r.hi = r.values.back();
      r.bound = true;
      r.field = b.field.text;
      return r;
    }
  const FixedParam *f = c ? c->fixedParam(param) : nullptr;
  r.fixed = f != nullptr;
  r.lo = r.hi = f ? f->value : paramDefault(id);
  return r;
}

/// Addresses in hexadecimal, everything else in decimal.
std::string valueText(int param, int64_t v) {
  const std::string &n = paramNames()[size_t(param)];
  if (n.size() < 5 || n.compare(n.size() - 5, 5, "_addr") != 0)
    return std::to_string(v);
  uint64_t u = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  static const char *digits = "0123456789abcdef";
  std::string r;
  do {
    r.insert(r.begin(), digits[u & 15]);
    u >>= 4;
  } while (u);
  return (v < 0 ? "-0x" : "0x") + r;
}

} // namespace

void TargetDesc::buildParamTable() {
  paramTable.assign(commandKindNames().size(), {});
  for (size_t k = 0; k < commandKindNames().size(); ++k) {
    const CommandDesc *c = command(commandKindNames()[k]);
    for (size_t id = 0; id < paramNames().size(); ++id)
      paramTable[k].push_back(computeParamRange(c, int(id)));
  }
}

const ParamRange &TargetDesc::paramBounds(int kind, int param) const {
  if (kind >= 0 && size_t(kind) < paramTable.size() && param >= 0 &&
      size_t(param) < paramTable[size_t(kind)].size())
    return paramTable[size_t(kind)][size_t(param)];
  static thread_local ParamRange computed;
  computed = computeParamRange(kind >= 0 && size_t(kind) < commandKindNames().size()
                                   ? command(commandKindNames()[size_t(kind)])
                                   : nullptr,
                               param);
  return computed;
}

ParamRange TargetDesc::paramRange(const std::string &kind, const std::string &param) const {
  return paramBounds(commandKindId(kind), paramId(param));
}

std::string TargetDesc::paramProblem(int kind, int param, int64_t v) const {
  const ParamRange &r = paramBounds(kind, param);
  if (r.holds(v))
    return "";
  std::string head = "command '" + commandKindNames()[size_t(kind)] + "' parameter '" +
                     paramNames()[size_t(param)] + "' = " + valueText(param, v);
  if (r.bound && !r.values.empty()) {
    std::string vals;
    for (int64_t x : r.values)
      vals += (vals.empty() ? "" : ", ") + valueText(param, x);
    return head + " has no case in the table of its field '" + r.field + "' (" + vals + ")";
  }
  if (!r.bound)
    return head +
           (r.fixed ? " but the command fixes it to "
                    : " but the command has no field for it "
                      "(only its default ") +
           valueText(param, r.lo) + (r.fixed ? "" : ")");
  return head + " does not fit its field '" + r.field + "' (" + valueText(param, r.lo) + ".." +
         valueText(param, r.hi) + (r.step > 1 ? " in units of " + std::to_string(r.step) : "") +
         ")";
}

bool TargetDesc::isStatusRegister(int reg) const {
  for (const EngineStatus &e : engines)
    for (const StatusBit *b : {&e.busy, &e.done, &e.error, &e.freeSlots})
      if (b->valid() && b->field.reg == reg)
        return true;
  return false;
}

bool TargetDesc::isCommandRegister(int reg) const {
  for (const CommandDesc &c : commands) {
    if (c.doorbell.field.reg == reg || c.delivery.reg == reg)
      return true;
    for (const FieldValue &s : c.select)
      if (s.field.reg == reg)
        return true;
    for (const ParamBinding &b : c.params)
      for (const FieldRef &f : b.fields)
        if (f.reg == reg)
          return true;
    for (const FieldBinding &b : c.fields)
      if (b.field.reg == reg)
        return true;
  }
  return false;
}

bool TargetDesc::registerPersists(int reg) const {
  if (!registersPersist || reg < 0 || size_t(reg) >= registers.size() || !isCommandRegister(reg))
    return false;
  const Register &r = registers[size_t(reg)];
  if (r.rmw || r.isWord() || isStatusRegister(reg))
    return false;
  for (const EngineStatus &e : engines)
    for (const StatusBit *b : {&e.busy, &e.done, &e.error, &e.freeSlots})
      if (b->clear.field.reg == reg)
        return false;
  for (const CommandDesc &c : commands)
    if (c.doorbell.field.reg == reg || c.delivery.reg == reg)
      return false;
  if (queue.commit.field.reg == reg || cmdbuf.address.reg == reg || cmdbuf.length.reg == reg ||
      cmdbuf.kick.field.reg == reg)
    return false;
  for (const FieldValue &f : init)
    if (f.field.reg == reg)
      return false;
  return true;
}

std::string FieldBinding::text() const {
  if (!isCases)
    return printExpr(expr);
  std::string s;
  for (int p : params())
    s += (s.empty() ? "" : ", ") + paramNames()[size_t(p)];
  return "cases over " + (s.empty() ? std::string("nothing") : s);
}

std::vector<int> FieldBinding::params() const {
  if (!isCases)
    return exprParams(expr);
  std::vector<int> out;
  for (const FieldCase &c : cases)
    for (const auto &w : c.when)
      if (std::find(out.begin(), out.end(), w.first) == out.end())
        out.push_back(w.first);
  return out;
}

std::string TargetDesc::fieldProblem(int kind, const std::vector<int64_t> &params) const {
  const CommandDesc *c = kind >= 0 && size_t(kind) < commandKindNames().size()
                             ? command(commandKindNames()[size_t(kind)])
                             : nullptr;
  if (!c)
    return "";
  for (const FieldBinding &b : c->fields) {
    std::string head = "command '" + c->kind + "' field '" + b.field.text + "'";
    uint64_t max = b.field.width >= 64 ? UINT64_MAX : (uint64_t(1) << b.field.width) - 1;
    std::string range =
        " (" + std::to_string(b.field.width) + " bits, 0.." + std::to_string(max) + ")";
    if (b.isCases) {
      bool found = false;
      for (const FieldCase &fc : b.cases) {
        bool all = true;
        for (const auto &w : fc.when)
          all &= size_t(w.first) < params.size() && params[size_t(w.first)] == w.second;
        found |= all;
      }
      if (!found) {
        std::string vals;
        for (int p : b.params())
          vals += (vals.empty() ? "" : ", ") + paramNames()[size_t(p)] + " = " +
                  std::to_string(size_t(p) < params.size() ? params[size_t(p)] : 0);
        return head + ": no case of its table matches " + vals;
      }
      continue;
    }
    std::optional<int64_t> v = evalExpr(b.expr, params);
    if (!v) {
      std::string vals;
      for (int p : b.params())
        vals += (vals.empty() ? "" : ", ") + paramNames()[size_t(p)] + " = " +
                std::to_string(size_t(p) < params.size() ? params[size_t(p)] : 0);
      return head + " = " + printExpr(b.expr) +
             " cannot be computed (overflow, division by "
             "zero, a negative operand or shift) for " +
             vals;
    }
    if (*v < 0 || uint64_t(*v) > max)
      return head + " = " + printExpr(b.expr) + " = " + std::to_string(*v) + " does not fit" +
             range;
  }
  return "";
}

const Scratchpad *TargetDesc::scratchpadAt(uint64_t addr, uint64_t size) const {
  for (const Scratchpad &s : scratchpads)
    if (addr >= s.base && size <= s.size && addr - s.base <= s.size - size)
      return &s;
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

Result<TargetDesc> parseTargetJson(const std::string &text, const std::string &name) {
  using nlohmann::json;
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (root.is_discarded()) {
    // Re-parse to get the position of the syntax error.
    std::string what = "invalid JSON";
    try {
      json again = json::parse(text, nullptr, true, true);
      (void)again;
    } catch (const json::exception &e) {
      what = e.what(); // "... last read: '<the text read>'" can be the whole file
    }
    return std::move(error("/: " + json_reader::clipForDiagnostic(what, 300)).inFile(name));
  }
  TargetParser p;
  try {
    p.parse(root);
  } catch (const json_reader::ParseError &e) {
    // Messages quote user values briefly; the cap guards against anything else.
    std::string msg = e.path + ": " + e.message;
    if (msg.size() > 360)
      msg = msg.substr(0, 360) + "...";
    return std::move(error(msg).inFile(name));
  } catch (const json::exception &e) {
    return std::move(
        error("/: " + json_reader::clipForDiagnostic(e.what(), 300)).inFile(name));
  }
  return std::move(p.T);
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
