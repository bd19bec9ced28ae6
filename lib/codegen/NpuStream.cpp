//===- NpuStream.cpp - NPU commands and waits as C tables -----------------===//
#include "NpuStream.h"

#include "CText.h"

#include "../../runtime/hal/npucc_params.h"

#include <algorithm>

namespace npucc::codegen {

namespace {

struct ParamRow {
  const char *name, *enumName;
  int64_t dflt;
};
const ParamRow ParamTable[] = {
#define NPUCC_PARAM_ROW(id, name, def, req, allowed, sgn) {name, "NPUCC_P_" #id, int64_t(def)},
    NPUCC_PARAM_LIST(NPUCC_PARAM_ROW)
#undef NPUCC_PARAM_ROW
};

int paramIndex(const std::string &name) {
  for (int i = 0; i < NPUCC_P_COUNT; ++i)
    if (name == ParamTable[i].name)
      return i;
  return -1;
}

std::string kindEnum(const std::string &kind) {
  std::string s = "NPUCC_KIND_";
  for (char c : kind)
    s += char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<int64_t> defaults() {
  std::vector<int64_t> v;
  for (const ParamRow &r : ParamTable)
    v.push_back(r.dflt);
  return v;
}

/// What the runtime holds for a parameter: its value and the base it is relative to.
int64_t stateKey(int64_t value, int base) { return value * 64 + base; }

std::string hexU64(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llxull", static_cast<unsigned long long>(v));
  return buf;
}

Diagnostic instrErr(size_t i, const lir::Instr &in, const std::string &msg) {
  std::string where = "instruction " + std::to_string(i) + " (npu " + in.callee + ")";
  if (!in.comment.empty())
    where += " [" + in.comment + "]";
  return error(where + ": " + msg);
}

} // namespace

NpuStream::NpuStream(const lir::Program &p, const std::string &prefix) : P(p), Prefix(prefix) {
  for (int64_t d : defaults()) {
    State[0].push_back(stateKey(d, 0));
    State[1].push_back(stateKey(d, 0));
  }
  // Bases: 0 none, 1 arena, 2 the NPU constant blob, then inputs, outputs, scratchpads.
  NumBases = 3 + int(p.inputs.size() + p.outputs.size() + p.scratchpads.size());
  for (size_t i = 0; i < p.constants.size(); ++i)
    if (p.constants[i].npu)
      BlobIndex = int(i);
}

int NpuStream::baseOf(const lir::BufferRef &b) {
  switch (b.region) {
  case lir::Region::Arena:
    UsesArena = true;
    return 1;
  case lir::Region::Const:
    return b.index == BlobIndex ? 2 : -1;
  case lir::Region::Input:
    return 3 + b.index;
  case lir::Region::Output:
    return 3 + int(P.inputs.size()) + b.index;
  case lir::Region::Spm:
    return 3 + int(P.inputs.size() + P.outputs.size()) + b.index;
  }
  return -1;
}

Result<std::pair<int, int64_t>> NpuStream::value(const lir::Arg &a, const lir::Instr &in,
                                                 size_t index) {
  if (const int64_t *v = std::get_if<int64_t>(&a))
    return std::make_pair(0, *v);
  const lir::BufferRef *b = std::get_if<lir::BufferRef>(&a);
  if (!b)
    return instrErr(index, in, "a parameter is neither an integer nor a buffer");
  int base = baseOf(*b);
  if (base < 0)
    return instrErr(index, in,
                    "an NPU address must be in the arena, the NPU constants, an "
                    "input, an output or a scratchpad");
  if (b->region == lir::Region::Spm && size_t(b->index) >= P.scratchpads.size())
    return instrErr(index, in, "scratchpad index out of range");
  return std::make_pair(base, b->offset);
}

Status NpuStream::add(const lir::Instr &in, size_t index) {
  if (in.opcode == "wait") {
    std::vector<int> engines;
    for (int t : in.tokens) {
      auto it = EngineOf.find(t);
      if (it == EngineOf.end())
        return instrErr(index, in, "wait on unknown token #" + std::to_string(t));
      if (std::find(engines.begin(), engines.end(), it->second) == engines.end())
        engines.push_back(it->second);
    }
    // One op per wait instruction: the runtime waits for all its engines at
    // once (npucc_hal_wait_engines), which is a single fence on a fence NPU.
    std::sort(engines.begin(), engines.end());
    std::string mask;
    for (int e : engines)
      mask +=
          std::string(mask.empty() ? "" : " | ") + (e ? "NPUCC_WAIT_COMPUTE" : "NPUCC_WAIT_DMA");
    if (!mask.empty())
      Ops.push_back({"NPUCC_STREAM_WAIT", mask, 0});
    return success();
  }
  int engine = in.callee == "dma" ? 0 : 1;
  std::vector<int64_t> want = defaults();
  std::vector<int> base(NPUCC_P_COUNT, 0);
  for (const auto &kv : in.params) {
    int id = paramIndex(kv.first);
    if (id < 0)
      return instrErr(index, in, "unknown parameter '" + kv.first + "'");
    auto v = value(kv.second, in, index);
    if (!v)
      return v.error();
    // An address is a 32-bit unsigned offset from its base (npucc_stream.h),
    // stored as the int32 with the same bits; other values are int32.
    bool fits = v->first ? v->second >= 0 && v->second <= int64_t(UINT32_MAX)
                         : v->second >= INT32_MIN && v->second <= INT32_MAX;
    if (!fits)
      return instrErr(index, in,
                      "parameter '" + kv.first + "' = " + std::to_string(v->second) +
                          " does not fit the stream's 32-bit " + (v->first ? "offsets" : "values"));
    base[size_t(id)] = v->first;
    want[size_t(id)] = v->first ? int64_t(int32_t(uint32_t(v->second))) : v->second;
  }
  Op op{kindEnum(in.callee), "", uint32_t(Params.size())};
  int count = 0;
  for (int id = 0; id < NPUCC_P_COUNT; ++id) {
    int64_t key = stateKey(want[size_t(id)], base[size_t(id)]);
    if (State[engine][size_t(id)] == key)
      continue;
    State[engine][size_t(id)] = key;
    Params.push_back({ParamTable[id].enumName, base[size_t(id)], want[size_t(id)]});
    ++count;
  }
  op.arg = std::to_string(count);
  Ops.push_back(op);
  EngineOf[in.token] = engine;
  ++Commands;
  return success();
}

std::string NpuStream::flush(const std::string &onError) {
  size_t n = Ops.size() - SegmentStart;
  if (n == 0)
    return "";
  std::string r = "  rc = npucc_stream_run(NPUCC_TARGET, " + Prefix + "_ns + " +
                  std::to_string(SegmentStart) + ", " + std::to_string(n) + ", " + Prefix +
                  "_np, bases);\n  if (rc != NPUCC_OK)\n    " + onError + "\n";
  SegmentStart = Ops.size();
  return r;
}

std::string NpuStream::tables(const std::string &attr) const {
  std::string s = "/* NPU command stream: " + std::to_string(Commands) + " commands, " +
                  std::to_string(flashBytes()) + " bytes of tables (npucc_stream.h). */\n";
  s += attr + "static const npucc_stream_param " + Prefix + "_np[" +
       std::to_string(std::max<size_t>(1, Params.size())) + "] = {\n";
  for (const Param &p : Params)
    s += "  {" + p.param + ", " + std::to_string(p.base) + ", " + std::to_string(p.value) + "},\n";
  if (Params.empty())
    s += "  {0, 0, 0}\n";
  s += "};\n" + attr + "static const npucc_stream_op " + Prefix + "_ns[" +
       std::to_string(Ops.size()) + "] = {\n";
  for (const Op &o : Ops)
    s += "  {" + o.kind + ", " + o.arg + ", " + std::to_string(o.first) + "},\n";
  return s + "};\n\n";
}

std::string NpuStream::prologue(const std::string &arenaExpr, bool halInit) const {
  std::string s = "  uint64_t bases[" + std::to_string(NumBases) + "];\n  int rc;\n";
  if (halInit)
    s += "  npucc_hal_init(NPUCC_TARGET);\n";
  s += "  npucc_stream_reset();\n  bases[0] = 0;\n";
  s += "  bases[1] = " +
       (UsesArena
            ? "npucc_hal_device_addr(" + arenaExpr + ", " + std::to_string(P.arenaSize) + ", 1)"
            : std::string("0")) +
       ";\n";
  if (BlobIndex >= 0)
    s += "  bases[2] = npucc_hal_device_addr(&" + Prefix + "_w_" +
         P.constants[size_t(BlobIndex)].name + ", " +
         std::to_string(P.constants[size_t(BlobIndex)].data.byteSize()) + ", 0);\n";
  else
    s += "  bases[2] = 0;\n";
  int b = 3;
  for (size_t i = 0; i < P.inputs.size(); ++i, ++b)
    s += "  bases[" + std::to_string(b) + "] = npucc_hal_device_addr(inputs[" + std::to_string(i) +
         "], " + std::to_string(ir::Tensor::byteSizeOf(P.inputs[i].dtype, P.inputs[i].shape)) +
         ", 1);\n";
  for (size_t i = 0; i < P.outputs.size(); ++i, ++b)
    s += "  bases[" + std::to_string(b) + "] = npucc_hal_device_addr(outputs[" + std::to_string(i) +
         "], " + std::to_string(ir::Tensor::byteSizeOf(P.outputs[i].dtype, P.outputs[i].shape)) +
         ", 1);\n";
  for (size_t i = 0; i < P.scratchpads.size(); ++i, ++b)
    s += "  bases[" + std::to_string(b) + "] = " + hexU64(P.scratchpads[i].base) + "; /* " +
         ctext::commentText(P.scratchpads[i].name) + " */\n";
  return s;
}

} // namespace npucc::codegen
