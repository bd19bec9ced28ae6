//===- TargetParseArith.cpp - The arithmetic pipeline of an operation -----===//
//
// compute.operations.<op>.arithmetic: one stage per slot of the MAC
// operations' pipeline, named by slot ("requant": "fp32_scale", or an object
// {"stage": "mul_shift_add", "mul_bits": 24, ...} or {"stage": "pwl",
// "segments": 8}, {"stage": "correction_terms", "x_bits": 24, ...} for a
// stage with parameters); a slot not named runs its
// default stage. The vocabulary is NPUCC_STAGE_LIST
// (runtime/hal/npucc_params.h), the arithmetic of each stage is in
// runtime/include/npucc_stages.h. docs/target.md, "Arithmetic stages".
//
//===----------------------------------------------------------------------===//
#include "TargetParser.h"

#include "../../runtime/include/npucc_stages.h"

#include <optional>
#include <set>

namespace npucc::target {

static_assert(NumStageSlots == NPUCC_SLOT_COUNT, "Target.h's NumStageSlots");

namespace {

struct StageRow {
  int id;
  const char *name;
  int slot;
};

constexpr StageRow Stages[] = {
#define NPUCC_STAGE_ROW(id, name, slot, def) {NPUCC_STAGE_##id, name, slot},
    NPUCC_STAGE_LIST(NPUCC_STAGE_ROW)
#undef NPUCC_STAGE_ROW
};

constexpr const char *SlotNames[] = {
#define NPUCC_SLOT_NAME(id, name) name,
    NPUCC_SLOT_LIST(NPUCC_SLOT_NAME)
#undef NPUCC_SLOT_NAME
};

} // namespace

int OpLimits::stage(size_t slot) const {
  if (slot >= NumStageSlots)
    return -1;
  return stages[slot] >= 0 ? stages[slot] : npucc_stage_default(int(slot));
}

bool OpLimits::defaultArithmetic() const {
  for (size_t s = 0; s < NumStageSlots; ++s)
    if (stage(s) != npucc_stage_default(int(s)))
      return false;
  return true;
}

/// {"stage": "max" or "select", "kernels": [2, 4]}: ascending, distinct, 2..31.
static void parsePoolKernels(const json_reader::Obj &so, OpLimits &l) {
  std::vector<int> ks = json_reader::intList(so, "kernels", {});
  std::string stage = so.raw().value("stage", "");
  for (size_t i = 0; i < ks.size(); ++i) {
    std::string p = so.at("kernels") + "/" + std::to_string(i);
    if (ks[i] < 2 || ks[i] > 31)
      json_reader::fail(p, "a " + stage + " pool window of " + std::to_string(ks[i]) +
                               (ks[i] < 2 ? " pools nothing" : " is too large") +
                               " (window sizes are 2..31)");
    if (i && ks[i] <= ks[i - 1])
      json_reader::fail(p, "window sizes must be ascending and distinct");
    l.poolKernels.push_back(unsigned(ks[i]));
  }
}

/// {"stage": "select", "offsets": [[0, 0], [0, 1]]}: the kept pixels (row,
/// column) the NPU offers, each inside every window of "kernels" and 0..7 (the C table's
/// NPUCC_SPP_OFFSETS mask), distinct.
static void parsePoolOffsets(const json_reader::Obj &so, OpLimits &l) {
  const nlohmann::json &v = so.array("offsets");
  if (v.empty())
    json_reader::fail(so.at("offsets"), "the select stage offers no kept pixel: write "
                                        "\"offsets\": [[0, 0]] (row, column in the window)");
  unsigned kmin = l.poolKernels.empty() ? 2 : l.poolKernels.front();
  for (size_t i = 0; i < v.size(); ++i) {
    std::string p = so.at("offsets") + "/" + std::to_string(i);
    if (!v[i].is_array() || v[i].size() != 2)
      json_reader::fail(p, "expected a [row, column] pair of the kept pixel in the window");
    unsigned yx[2];
    for (size_t j = 0; j < 2; ++j) {
      uint64_t o = json_reader::toU64(v[i][j], p + "/" + std::to_string(j));
      if (o >= kmin)
        json_reader::fail(p + "/" + std::to_string(j),
                          "offset " + std::to_string(o) + " is outside the " +
                              std::to_string(kmin) + "x" + std::to_string(kmin) +
                              " window (offsets are 0..k-1 for every k of \"kernels\")");
      if (o > 7)
        json_reader::fail(p + "/" + std::to_string(j),
                          "offset " + std::to_string(o) +
                              " is beyond the simulator's table (offsets are 0..7: the C "
                              "table's stage_params carries them as an 8x8 bit mask)");
      yx[j] = unsigned(o);
    }
    for (const auto &q : l.poolOffsets)
      if (q.first == yx[0] && q.second == yx[1])
        json_reader::fail(p, "offset [" + std::to_string(yx[0]) + ", " + std::to_string(yx[1]) +
                                 "] is listed twice");
    l.poolOffsets.push_back({yx[0], yx[1]});
  }
}

void TargetParser::parseArithmetic(const std::string &name, const Obj &ao, OpLimits &l) {
  if (name != "conv" && name != "depthwise" && name != "matmul")
    json_reader::fail(ao.path(), "operation '" + name +
                                     "' has no arithmetic pipeline (only conv, depthwise and "
                                     "matmul have one)");
  std::set<std::string> slots(std::begin(SlotNames), std::end(SlotNames));
  for (auto it = ao.raw().begin(); it != ao.raw().end(); ++it) {
    std::string p = ao.at(it.key());
    ao.opt(it.key());
    int slot = -1;
    for (int s = 0; s < NPUCC_SLOT_COUNT; ++s)
      if (it.key() == SlotNames[s])
        slot = s;
    if (slot < 0) {
      std::string near = json_reader::closest(it.key(), slots);
      json_reader::fail(p, "unknown pipeline slot " + json_reader::shortQuote(it.key()) +
                               (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                               " (slots: input, correction, mac, requant, activation, pool, "
                               "output)");
    }
    // A stage is its name, or an object {"stage": name, ...} for a stage
    // with parameters of its own (mul_shift_add's field widths, pwl's
    // segment count); another stage's object takes no other key.
    std::string stage;
    std::optional<Obj> so;
    if (it.value().is_object()) {
      so.emplace(it.value(), p);
      stage = so->str("stage");
    } else {
      stage = Obj::asString(it.value(), p);
    }
    std::string known;
    std::set<std::string> names;
    for (const StageRow &r : Stages)
      if (r.slot == slot) {
        if (stage == r.name)
          l.stages[size_t(slot)] = r.id;
        known += std::string(known.empty() ? "" : ", ") + r.name;
        names.insert(r.name);
      }
    if (l.stages[size_t(slot)] < 0) {
      std::string near = json_reader::closest(stage, names);
      json_reader::fail(p, "unknown " + it.key() + " stage " + json_reader::shortQuote(stage) +
                               (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                               " (expected " + known + ")");
    }
    if (so) {
      if (l.stages[size_t(slot)] == NPUCC_STAGE_RQ_MUL_SHIFT_ADD) {
        // The K210's batch-norm form is 24/4/32; the bounds keep every
        // product and sum in the stage's 64-bit arithmetic.
        l.msaBits[0] = unsigned(so->range("mul_bits", 32, 2, 32));
        l.msaBits[1] = unsigned(so->range("shift_bits", 6, 1, 6));
        l.msaBits[2] = unsigned(so->range("add_bits", 32, 8, 32));
      }
      // pwl: how many of the table's 16 segments the compiler fits with.
      if (l.stages[size_t(slot)] == NPUCC_STAGE_ACT_PWL)
        l.pwlSegments = unsigned(so->range("segments", NPUCC_PWL_SEGMENTS, 2, NPUCC_PWL_SEGMENTS));
      // correction_terms: the widths of corr_x, corr_w, the shifts and corr_add (the K210's
      // 24/24/4/40); the bounds keep the stage's sums in 64 bits.
      if (l.stages[size_t(slot)] == NPUCC_STAGE_CORR_TERMS) {
        l.corrBits[0] = unsigned(so->range("x_bits", 24, 2, 32));
        l.corrBits[1] = unsigned(so->range("w_bits", 24, 2, 32));
        l.corrBits[2] = unsigned(so->range("shift_bits", 4, 1, 6));
        l.corrBits[3] = unsigned(so->range("add_bits", 40, 8, 40));
      }
      // max: the window sizes k (k x k, stride k) the NPU pools with.
      if (l.stages[size_t(slot)] == NPUCC_STAGE_POOL_MAX ||
          l.stages[size_t(slot)] == NPUCC_STAGE_POOL_SELECT)
        parsePoolKernels(*so, l);
      // select: the kept pixels it offers inside a window.
      if (l.stages[size_t(slot)] == NPUCC_STAGE_POOL_SELECT)
        parsePoolOffsets(*so, l);
      so->done();
    }
  }
  if (l.stages[NPUCC_SLOT_POOL] == NPUCC_STAGE_POOL_MAX) {
    if (name == "matmul")
      json_reader::fail(ao.at("pool"), "pool stage max pools a spatial output: operation 'matmul' "
                                       "has none (only conv and depthwise fuse a pool)");
    if (l.poolKernels.empty())
      json_reader::fail(ao.at("pool"), "pool stage max needs its window sizes: write {\"stage\": "
                                       "\"max\", \"kernels\": [2]}");
  }
  if (l.stages[NPUCC_SLOT_POOL] == NPUCC_STAGE_POOL_SELECT) {
    if (name == "matmul")
      json_reader::fail(ao.at("pool"), "pool stage select keeps pixels of a spatial output: "
                                       "operation 'matmul' has none (only conv and depthwise "
                                       "fuse a pool)");
    if (l.poolKernels.empty())
      json_reader::fail(ao.at("pool"), "pool stage select needs its window sizes and offsets: "
                                       "write {\"stage\": \"select\", \"kernels\": [2], "
                                       "\"offsets\": [[0, 0]]}");
  }
  if (l.stages[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_MUL_SHIFT_ADD && !l.perChannelRequant)
    json_reader::fail(ao.at("requant"), "requant stage mul_shift_add reads mul, shift and add per "
                                        "channel from the rq table: operation '" +
                                            name + "' needs the per_channel requant mode");
  if (l.stages[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_FP32 && !l.perChannelRequant)
    json_reader::fail(ao.at("requant"), "requant stage fp32_scale reads a binary32 scale per "
                                        "channel from the rq table: operation '" +
                                            name + "' needs the per_channel requant mode");
  if (l.stages[NPUCC_SLOT_REQUANT] == NPUCC_STAGE_RQ_SHIFT && !l.perChannelRequant)
    json_reader::fail(ao.at("requant"), "requant stage shift reads a right shift per channel "
                                        "from the rq table: operation '" +
                                            name + "' needs the per_channel requant mode");
  ao.done();
}

} // namespace npucc::target
