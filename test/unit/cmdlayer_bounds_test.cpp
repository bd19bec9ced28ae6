//===- cmdlayer_bounds_test.cpp - Field range checks at the exact boundary -===//
//
// Issue 13: the command layer's range check (runtime/hal/npucc_npu.c) was only
// tested with a value far above a field's limit, so accepting 2^w in a w-bit
// field (which then encodes as 0) survived. For every NPU description, every
// command and every parameter binding (split fields, shifted and offset
// encodings included), this encodes the binding's largest and smallest
// representable values, checks that they decode back unchanged, and checks
// that one step past either end is refused with NPUCC_ERR_RANGE naming the
// parameter: 2^w - 1 accepted and 2^w refused for unsigned fields, -2^(w-1)
// and 2^(w-1) - 1 accepted and one past each refused for signed ones.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_npu.h"

#include <gtest/gtest.h>

#include "TestTargets.h"

#include <memory>
#include <vector>

using namespace npucc::target;

namespace {

class CmdLayerBounds : public ::testing::TestWithParam<std::string> {};

unsigned bindingWidth(const npucc_target_desc *d, const npucc_binding &b) {
  unsigned w = b.field.width;
  for (int k = 1; k < b.num_parts; ++k)
    w += d->parts[b.more + k - 1].width;
  return w;
}

struct Encoded {
  int rc = 0, bad = -1;
  std::vector<int64_t> decoded;
};

/// Defaults (and the fixed values); a bound parameter whose default its field
/// cannot hold (e.g. a value the encoding offsets away) gets the field's code 0.
std::vector<int64_t> baseParams(const npucc_target_desc *d, const npucc_cmd_desc &c) {
  std::vector<int64_t> p(NPUCC_P_COUNT);
  npucc_npu_defaults(p.data());
  for (uint16_t i = 0; i < c.num_fixed; ++i)
    p[c.fixed[i].param] = c.fixed[i].value;
  for (uint16_t i = 0; i < c.num_bindings; ++i) {
    const npucc_binding &b = c.bindings[i];
    unsigned w = bindingWidth(d, b);
    int64_t v = p[b.param] - b.minus, unit = int64_t(1) << b.shift;
    bool sgn = npucc_param_is_signed(b.param) != 0;
    bool fits = v % unit == 0 && (w >= 62 || (sgn ? (v / unit >= -(int64_t(1) << (w - 1)) &&
                                                     v / unit < (int64_t(1) << (w - 1)))
                                                  : (v >= 0 && v / unit < (int64_t(1) << w))));
    if (!fits)
      p[b.param] = b.minus;
  }
  return p;
}

Encoded encode(const npucc_target_desc *d, const npucc_cmd_desc &c, int param, int64_t value) {
  std::vector<int64_t> p = baseParams(d, c);
  if (param >= 0)
    p[static_cast<size_t>(param)] = value;
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int n = 0;
  Encoded e;
  e.rc = npucc_npu_encode(d, c.kind, p.data(), w, &n, &e.bad);
  if (e.rc != NPUCC_OK)
    return e;
  std::vector<uint64_t> regs(d->num_regs, 0);
  for (int i = 0; i < n; ++i)
    regs[w[i].reg] = w[i].value;
  e.decoded.resize(NPUCC_P_COUNT);
  npucc_npu_decode(d, &c, regs.data(), e.decoded.data());
  return e;
}

TEST_P(CmdLayerBounds, EveryFieldAtAndPastItsBoundaries) {
  auto r = loadTarget(GetParam());
  ASSERT_TRUE(r.ok()) << (r ? "" : r.error().str());
  TargetDesc T = r.take();
  CTable table(T);
  // The bindings' own ranges: without the computed fields ("fields"), which
  // may refuse a binding's extreme value (cdiv(out_ch, 16) - 1 with out_ch
  // 0); those are tested in cmdlayer_expr_test.cpp.
  npucc_target_desc bare = *table.get();
  bare.num_field_bindings = 0;
  const npucc_target_desc *d = &bare;
  int checkedSigned = 0, checkedUnsigned = 0, checkedSplit = 0;
  for (uint16_t ci = 0; ci < d->num_cmds; ++ci) {
    const npucc_cmd_desc &c = d->cmds[ci];
    const char *kind = npucc_kind_name(c.kind);
    Encoded base = encode(d, c, -1, 0);
    ASSERT_EQ(base.rc, NPUCC_OK) << kind << ": defaults do not encode (param " << base.bad << ")";
    for (uint16_t bi = 0; bi < c.num_bindings; ++bi) {
      const npucc_binding &b = c.bindings[bi];
      unsigned w = bindingWidth(d, b);
      if (w + b.shift >= 62)
        continue; // the int64 parameter itself is the limit
      bool sgn = npucc_param_is_signed(b.param) != 0;
      const char *name = npucc_param_name(b.param);
      int64_t unit = int64_t(1) << b.shift;
      int64_t loCode = sgn ? -(int64_t(1) << (w - 1)) : 0;
      int64_t hiCode = sgn ? (int64_t(1) << (w - 1)) - 1 : (int64_t(1) << w) - 1;
      int64_t lo = loCode * unit + b.minus, hi = hiCode * unit + b.minus;
      for (int64_t v : {lo, hi}) {
        Encoded e = encode(d, c, b.param, v);
        ASSERT_EQ(e.rc, NPUCC_OK) << kind << "." << name << " (" << w << " bits"
                                  << (sgn ? ", signed" : "") << ") = " << v << " refused";
        EXPECT_EQ(e.decoded[b.param], v) << kind << "." << name << " does not round-trip";
      }
      for (int64_t v : {lo - unit, hi + unit}) {
        Encoded e = encode(d, c, b.param, v);
        EXPECT_EQ(e.rc, NPUCC_ERR_RANGE) << kind << "." << name << " (" << w << " bits"
                                         << (sgn ? ", signed" : "") << ") = " << v
                                         << " accepted, one past the field's range";
        EXPECT_EQ(e.bad, int(b.param)) << kind << "." << name;
      }
      (sgn ? checkedSigned : checkedUnsigned)++;
      checkedSplit += b.num_parts > 1;
    }
  }
  EXPECT_GT(checkedUnsigned, 10);
  EXPECT_GT(checkedSigned, 0) << "no signed field checked";
  (void)checkedSplit;
}

INSTANTIATE_TEST_SUITE_P(AllTargets, CmdLayerBounds,
                         ::testing::ValuesIn(npucc::test::allTargets()),
                         npucc::test::targetTestName);

} // namespace
