//===- npu_zero_points_test.cpp - NPU legality of every zero point's sign -===//
//
// The NPU's MAC-array commands have no weight zero point: target::placeNode
// must refuse any nonzero one - negative as well as positive, per tensor or
// in any channel of a per-channel tensor - on conv, depthwise, MatMul and
// Gemm, and accept zero. (Issue 24: a sign slip that refused only positive
// weight zero points put a QDQ MatMul with weight zero point -5 on the NPU,
// 9 steps off.) Activation zero points (in_zp, in2_zp, out_zp) of either
// sign are accepted as far as the command's fields hold them: on
// npu-default (8-bit signed fields) every int8 value; on a description whose
// QPARAM fields are 4 bits wide, -8..7 and nothing past either end.
//
//===----------------------------------------------------------------------===//
#include "npucc/ir/Parser.h"
#include "npucc/passes/Pass.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include "TargetJsonEdit.h"

#include <gtest/gtest.h>

#include <memory>

using namespace npucc;
using npucc::target::Placement;
using npucc::target::TargetDesc;

namespace {

std::unique_ptr<ir::Graph> parse(const std::string &text) {
  auto r = ir::parseGraph(text, "zero_points.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str()) << "\n" << text;
  return r.ok() ? r.take() : nullptr;
}

TargetDesc load(const std::string &name) {
  auto r = target::loadTarget(name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}

/// Places the only node named "n" of `text`.
Placement place(const std::string &text, const TargetDesc &t) {
  auto g = parse(text);
  if (!g)
    return {};
  for (const auto &n : g->nodes())
    if (n->name == "n")
      return target::placeNode(*n, t);
  ADD_FAILURE() << "no node n in\n" << text;
  return {};
}

std::string z(int v) { return std::to_string(v); }

/// The MAC-array ops, each with its weights' quantization text `wq`, input zero
/// point `xz` and output zero point `yz`.
struct MacOp {
  const char *name;
  std::string (*graph)(const std::string &wq, int xz, int yz);
  const char *perChannelAxis; // the weights' output-channel axis
  int channels;
};

// clang-format off
std::string convGraph(const std::string &wq, int xz, int yz) {
  return "graph @main(%x: i8[1,4,8,8] q(0.5, " + z(xz) + ")) -> (%y) {\n"
         "  const @w: i8[2,4,3,3] " + wq + " = dense<elided>\n"
         "  const @b: i32[2] = dense<elided>\n"
         "  %y = Conv(%x, @w, @b) {kernel_shape=[3, 3], pads=[1, 1, 1, 1]} : i8[1,2,8,8] "
         "q(0.25, " + z(yz) + ") loc(\"n\")\n"
         "  return %y\n}\n";
}
std::string depthwiseGraph(const std::string &wq, int xz, int yz) {
  return "graph @main(%x: i8[1,2,8,8] q(0.5, " + z(xz) + ")) -> (%y) {\n"
         "  const @w: i8[2,1,3,3] " + wq + " = dense<elided>\n"
         "  const @b: i32[2] = dense<elided>\n"
         "  %y = Conv(%x, @w, @b) {group=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1]} : "
         "i8[1,2,8,8] q(0.25, " + z(yz) + ") loc(\"n\")\n"
         "  return %y\n}\n";
}
std::string matmulGraph(const std::string &wq, int xz, int yz) {
  // W is [K, N]: the output channels are axis 1.
  return "graph @main(%a: i8[1,16] q(0.5, " + z(xz) + ")) -> (%y) {\n"
         "  const @w: i8[16,2] " + wq + " = dense<elided>\n"
         "  %y = MatMul(%a, @w) : i8[1,2] q(0.25, " + z(yz) + ") loc(\"n\")\n"
         "  return %y\n}\n";
}
std::string gemmGraph(const std::string &wq, int xz, int yz) {
  return "graph @main(%a: i8[1,16] q(0.5, " + z(xz) + ")) -> (%y) {\n"
         "  const @w: i8[2,16] " + wq + " = dense<elided>\n"
         "  const @b: i32[2] = dense<elided>\n"
         "  %y = Gemm(%a, @w, @b) {transB=1} : i8[1,2] q(0.25, " + z(yz) + ") loc(\"n\")\n"
         "  return %y\n}\n";
}

const MacOp MacOps[] = {{"conv", convGraph, "0", 2},
                        {"depthwise", depthwiseGraph, "0", 2},
                        {"matmul", matmulGraph, "1", 2},
                        {"gemm transB", gemmGraph, "0", 2}};
// clang-format on

std::string zpReason(int v) {
  return "weights have zero point " + z(v) + " (the NPU has no weight zero point)";
}

// --- Weight zero points ----------------------------------------------------------------

TEST(NpuZeroPoints, PerTensorWeightZeroPointOfEitherSignIsRefused) {
  TargetDesc t = load("npu-default");
  for (const MacOp &op : MacOps)
    for (int wz : {-128, -5, -1, 0, 1, 5, 127}) {
      Placement p = place(op.graph("q(0.05, " + z(wz) + ")", 0, 0), t);
      if (wz == 0) {
        EXPECT_TRUE(p.onNpu()) << op.name << ": " << (p.reasons.empty() ? "" : p.reasons[0]);
      } else {
        EXPECT_FALSE(p.onNpu()) << op.name << " with weight zero point " << wz << " on the NPU";
        EXPECT_EQ(p.reasons, std::vector<std::string>{zpReason(wz)}) << op.name;
      }
    }
}

TEST(NpuZeroPoints, PerChannelWeightZeroPointInAnyChannelIsRefused) {
  TargetDesc t = load("npu-default");
  for (const MacOp &op : MacOps) {
    std::string axis = op.perChannelAxis;
    auto wq = [&](int z0, int z1) {
      return "q<" + axis + ">([0.05, 0.025], [" + z(z0) + ", " + z(z1) + "])";
    };
    Placement ok = place(op.graph(wq(0, 0), 0, 0), t);
    EXPECT_TRUE(ok.onNpu()) << op.name << ": " << (ok.reasons.empty() ? "" : ok.reasons[0]);
    EXPECT_TRUE(ok.op && ok.op->perChannel) << op.name;
    // The first nonzero one is named, whichever channel and sign.
    struct Case {
      int z0, z1, named;
    };
    for (Case c : {Case{0, -3, -3}, Case{0, 3, 3}, Case{-1, 0, -1}, Case{2, -2, 2}}) {
      Placement p = place(op.graph(wq(c.z0, c.z1), 0, 0), t);
      EXPECT_FALSE(p.onNpu()) << op.name << " [" << c.z0 << ", " << c.z1 << "] on the NPU";
      EXPECT_EQ(p.reasons, std::vector<std::string>{zpReason(c.named)}) << op.name;
    }
  }
}

/// The case end to end: npu-partition leaves a MatMul whose weights have
/// zero point -5 on the CPU (no npu= attribute) and takes the same MatMul with
/// zero point 0.
TEST(NpuZeroPoints, PartitionKeepsANegativeWeightZeroPointMatMulOnTheCpu) {
  TargetDesc t = load("npu-default");
  for (int wz : {-5, 0}) {
    auto g = parse(matmulGraph("q(0.05, " + z(wz) + ")", 3, -2));
    ASSERT_TRUE(g);
    passes::PassContext ctx;
    ctx.target = &t;
    Status s = passes::runPipeline(*g, "npu-partition", ctx);
    ASSERT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
    int onNpu = 0, matmuls = 0;
    for (const auto &n : g->nodes())
      if (n->kind == ir::OpKind::MatMul) {
        ++matmuls;
        onNpu += !n->attrString("npu", "").empty();
      }
    EXPECT_EQ(matmuls, 1);
    EXPECT_EQ(onNpu, wz == 0 ? 1 : 0) << "weight zero point " << wz;
  }
}

// --- Activation zero points ------------------------------------------------------------

// clang-format off
std::string addGraph(int az, int bz, int yz) {
  return "graph @main(%a: i8[1,4,5,6] q(0.5, " + z(az) + "), %b: i8[1,4,5,6] q(0.25, " + z(bz) +
         ")) -> (%y) {\n"
         "  %y = Add(%a, %b) : i8[1,4,5,6] q(0.75, " + z(yz) + ") loc(\"n\")\n"
         "  return %y\n}\n";
}
std::string maxPoolGraph(int zp) {
  return "graph @main(%x: i8[1,8,8,8] q(0.5, " + z(zp) + ")) -> (%y) {\n"
         "  %y = MaxPool(%x) {kernel_shape=[2, 2], strides=[2, 2]} : i8[1,8,4,4] q(0.5, " +
         z(zp) + ") loc(\"n\")\n"
         "  return %y\n}\n";
}

// clang-format on
TEST(NpuZeroPoints, ActivationZeroPointsOfEitherSignAreAccepted) {
  TargetDesc t = load("npu-default");
  const int zps[] = {-128, -7, -1, 0, 1, 7, 127};
  for (const MacOp &op : MacOps)
    for (int xz : zps)
      for (int yz : zps) {
        Placement p = place(op.graph("q(0.05, 0)", xz, yz), t);
        EXPECT_TRUE(p.onNpu()) << op.name << " in_zp " << xz << " out_zp " << yz << ": "
                               << (p.reasons.empty() ? "" : p.reasons[0]);
      }
  for (int az : zps)
    for (int bz : {-128, -1, 0, 127})
      for (int yz : {-128, 0, 5, 127}) {
        Placement p = place(addGraph(az, bz, yz), t);
        EXPECT_TRUE(p.onNpu()) << "Add " << az << " " << bz << " " << yz << ": "
                               << (p.reasons.empty() ? "" : p.reasons[0]);
      }
  for (int zp : zps) {
    Placement p = place(maxPoolGraph(zp), t);
    EXPECT_TRUE(p.onNpu()) << "MaxPool zp " << zp << ": "
                           << (p.reasons.empty() ? "" : p.reasons[0]);
  }
}

/// npu-default with the zero-point fields (QPARAM.in_zp, QPARAM.out_zp,
/// ELT_CFG.in2_zp) 4 bits wide: signed -8..7.
TargetDesc narrowZeroPoints() {
  test::json j = test::json::parse(
      test::readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
  int narrowed = 0;
  for (test::json &reg : j["registers"])
    if (reg.contains("fields"))
      for (test::json &f : reg["fields"])
        if (f["name"] == "in_zp" || f["name"] == "out_zp" || f["name"] == "in2_zp") {
          f["width"] = 4;
          ++narrowed;
        }
  EXPECT_EQ(narrowed, 3);
  auto r = target::parseTargetJson(j.dump(2), "narrow_zp.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}

TEST(NpuZeroPoints, ActivationZeroPointsOutsideTheFieldAreRefusedAtBothEnds) {
  TargetDesc t = narrowZeroPoints();
  target::ParamRange r = t.paramRange("conv", "in_zp");
  ASSERT_TRUE(r.bound);
  ASSERT_EQ(r.lo, -8);
  ASSERT_EQ(r.hi, 7);
  // The reason names the field (QPARAM.in_zp / .out_zp, the eltwise's ELT_CFG.in2_zp).
  auto field = [](const std::string &param, int v, const std::string &kind) {
    std::string f = param == "in2_zp" ? "ELT_CFG.in2_zp" : "QPARAM." + param;
    return param + " " + z(v) + " outside what " + kind + "'s field '" + f + "' holds (-8..7)";
  };
  for (int v : {-8, -1, 0, 7}) {
    Placement p = place(convGraph("q(0.05, 0)", v, v), t);
    EXPECT_TRUE(p.onNpu()) << "zp " << v << ": " << (p.reasons.empty() ? "" : p.reasons[0]);
    Placement a = place(addGraph(v, v, v), t);
    EXPECT_TRUE(a.onNpu()) << "Add zp " << v << ": " << (a.reasons.empty() ? "" : a.reasons[0]);
  }
  for (int v : {-9, 8, -128, 127}) {
    EXPECT_EQ(place(convGraph("q(0.05, 0)", v, 0), t).reasons,
              std::vector<std::string>{field("in_zp", v, "conv")});
    EXPECT_EQ(place(matmulGraph("q(0.05, 0)", 0, v), t).reasons,
              std::vector<std::string>{field("out_zp", v, "matmul")});
    EXPECT_EQ(place(depthwiseGraph("q(0.05, 0)", v, 0), t).reasons,
              std::vector<std::string>{field("in_zp", v, "depthwise")});
    EXPECT_EQ(place(addGraph(0, v, 0), t).reasons,
              std::vector<std::string>{field("in2_zp", v, "eltwise")});
    EXPECT_EQ(place(addGraph(v, 0, 0), t).reasons,
              std::vector<std::string>{field("in_zp", v, "eltwise")});
  }
}

} // namespace
