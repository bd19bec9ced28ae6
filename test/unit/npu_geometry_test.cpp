//===- npu_geometry_test.cpp - Kernel geometry limits of a description ----===//
//
// Issue 19, phase 6: "square_kernels", "implied_padding" (kernel size ->
// padding the NPU applies on every side) and "min_in_h"/"min_in_w" of a
// spatial operation. The loader accepts them and refuses bad values with
// their JSON path; placeNode gives the CPU-fallback reason; the tiler keeps
// every command within them (implied padding: one command covers the whole
// image, since the NPU would pad a row tile's edges too; min_in_h: no row
// tile reads fewer rows).
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/ir/Parser.h"
#include "npucc/lower/NpuLowering.h"
#include "npucc/target/Legality.h"
#include "npucc/target/Target.h"

#include "NpuTestOps.h"
#include "TargetJsonEdit.h"

#include <gtest/gtest.h>

#include <functional>

using namespace npucc;
using npucc::target::Placement;
using npucc::target::TargetDesc;
using Json = nlohmann::json;

namespace {

Json defaultJson() {
  return Json::parse(
      test::readText(std::string(NPUCC_SOURCE_DIR) + "/runtime/targets/npu-default.json"));
}

/// npu-default with `edit` applied: the description, or the loader's error.
Result<TargetDesc> edited(const std::function<void(Json &)> &edit) {
  Json j = defaultJson();
  edit(j);
  return target::parseTargetJson(j.dump(2), "npu.json");
}

std::string errOf(const std::function<void(Json &)> &edit) {
  auto r = edited(edit);
  return r.ok() ? std::string() : r.error().str();
}

TargetDesc described(const std::function<void(Json &)> &edit) {
  auto r = edited(edit);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : TargetDesc{};
}

Json &conv(Json &j) { return j["compute"]["operations"]["conv"]; }

/// K210-like conv geometry: 1x1 and 3x3 kernels, padded by 0 and 1.
void k210Geometry(Json &j) {
  conv(j)["kernel_sizes"] = {1, 3};
  conv(j).erase("max_padding");
  conv(j)["implied_padding"] = {{"1", 0}, {"3", 1}};
  conv(j)["square_kernels"] = true;
  conv(j)["min_in_h"] = 4;
  conv(j)["min_in_w"] = 4;
}

/// Places the conv `c` of a one-conv graph on `t`.
Placement placeConv(const std::string &x, const std::string &w, const std::string &attrs,
                    const std::string &y, const TargetDesc &t) {
  std::string oc = w.substr(0, w.find(','));
  std::string text = "graph @main(%x: i8[" + x +
                     "] q(0.5, 0)) -> (%y) {\n"
                     "  const @w: i8[" +
                     w +
                     "] q(0.05, 0) = dense<elided>\n"
                     "  const @b: i32[" +
                     oc +
                     "] = dense<elided>\n"
                     "  %y = Conv(%x, @w, @b) {" +
                     attrs + "} : i8[" + y +
                     "] q(0.25, 0) loc(\"c\")\n"
                     "  return %y\n}\n";
  auto g = ir::parseGraph(text, "geometry.ir");
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().str());
  if (!g.ok())
    return {};
  for (const auto &n : (*g)->nodes())
    if (n->name == "c")
      return target::placeNode(*n, t);
  ADD_FAILURE() << "no node c";
  return {};
}

} // namespace

// --- The loader ---------------------------------------------------------------------------

TEST(NpuGeometry, LoaderReadsTheKeys) {
  TargetDesc t = described(k210Geometry);
  const target::OpLimits &l = *t.operation("conv");
  EXPECT_TRUE(l.squareKernels);
  EXPECT_EQ(l.minInH, 4u);
  EXPECT_EQ(l.minInW, 4u);
  ASSERT_EQ(l.impliedPadding.size(), 2u);
  EXPECT_EQ(l.impliedPadding.at(1), 0u);
  EXPECT_EQ(l.impliedPadding.at(3), 1u);
  // Without max_padding, the operation takes the padding it implies.
  EXPECT_EQ(l.maxPad[0], 1u);
  EXPECT_EQ(l.maxPad[3], 1u);
  // The defaults: no geometry limits.
  TargetDesc plain = described([](Json &) {});
  const target::OpLimits &d = *plain.operation("conv");
  EXPECT_FALSE(d.squareKernels);
  EXPECT_EQ(d.minInH, 0u);
  EXPECT_TRUE(d.impliedPadding.empty());
}

TEST(NpuGeometry, LoaderRefusesWithThePath) {
  auto with = [](const std::function<void(Json &)> &more) {
    return errOf([&](Json &j) {
      k210Geometry(j);
      more(j);
    });
  };
  EXPECT_EQ(with([](Json &j) { conv(j)["implied_padding"]["5"] = 2; }),
            "npu.json: error: /compute/operations/conv/implied_padding/5: kernel size 5 is not "
            "one of operation 'conv''s kernel sizes");
  EXPECT_EQ(with([](Json &j) { conv(j)["implied_padding"]["x3"] = 1; }),
            "npu.json: error: /compute/operations/conv/implied_padding/x3: expected a kernel "
            "size (a positive integer), got 'x3'");
  EXPECT_EQ(with([](Json &j) { conv(j)["implied_padding"].erase("1"); }),
            "npu.json: error: /compute/operations/conv/implied_padding: kernel size 1 of "
            "operation 'conv' has no implied padding (the NPU pads every kernel it runs)");
  EXPECT_EQ(with([](Json &j) { conv(j)["max_padding"] = 0; }),
            "npu.json: error: /compute/operations/conv/max_padding: max_padding top 0 is below "
            "the implied padding 1");
  EXPECT_EQ(with([](Json &j) { conv(j)["square_kernels"] = 1; }),
            "npu.json: error: /compute/operations/conv/square_kernels: expected a boolean, got "
            "integer");
  EXPECT_EQ(with([](Json &j) {
              conv(j)["kernel_heights"] = {1};
              conv(j)["kernel_widths"] = {3};
              conv(j)["implied_padding"] = {{"1", 0}, {"3", 1}};
            }),
            "npu.json: error: /compute/operations/conv/square_kernels: operation 'conv' has "
            "square kernels, but no size is both in kernel_heights and kernel_widths");
  EXPECT_EQ(with([](Json &j) { conv(j)["max_in_h"] = 2; }),
            "npu.json: error: /compute/operations/conv/min_in_h: min_in_h 4 exceeds max_in_h 2");
  EXPECT_EQ(errOf([](Json &j) { j["compute"]["operations"]["matmul"]["min_in_h"] = 4; }),
            "npu.json: error: /compute/operations/matmul/min_in_h: 'min_in_h' does not apply to "
            "operation 'matmul'");
}

// --- Legality: the fallback reasons -------------------------------------------------------

TEST(NpuGeometry, SquareKernelsAndImpliedPadding) {
  TargetDesc t = described(k210Geometry);
  // 3x3 padded by 1 and 1x1 unpadded: the NPU's own padding.
  Placement p =
      placeConv("1,8,8,8", "8,8,3,3", "kernel_shape=[3, 3], pads=[1, 1, 1, 1]", "1,8,8,8", t);
  EXPECT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  p = placeConv("1,8,8,8", "8,8,1,1", "kernel_shape=[1, 1]", "1,8,8,8", t);
  EXPECT_TRUE(p.onNpu()) << (p.reasons.empty() ? "" : p.reasons[0]);
  // An unpadded 3x3 would need its output cropped.
  p = placeConv("1,8,8,8", "8,8,3,3", "kernel_shape=[3, 3]", "1,8,6,6", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, std::vector<std::string>{
                           "padding top 0 but conv.implied_padding of kernel size 3 is 1 (the "
                           "NPU pads every image edge by it; cropping the output is not "
                           "supported)"});
  // A 1x1 padded by 1 needs more than the NPU pads.
  p = placeConv("1,8,8,8", "8,8,1,1", "kernel_shape=[1, 1], pads=[0, 1, 0, 1]", "1,8,8,10", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, std::vector<std::string>{
                           "padding left 1 but conv.implied_padding of kernel size 1 is 0 (the "
                           "NPU pads every image edge by it; padding beyond it is not "
                           "supported)"});
  // A 1x3 kernel: not square (both sizes are in the list).
  p = placeConv("1,8,8,8", "8,8,1,3", "kernel_shape=[1, 3], pads=[0, 1, 0, 1]", "1,8,8,8", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, std::vector<std::string>{"kernel 1x3 is not square (conv.square_kernels)"});
  // Without the geometry keys, npu-default runs all of them.
  TargetDesc d = described([](Json &) {});
  EXPECT_TRUE(placeConv("1,8,8,8", "8,8,3,3", "kernel_shape=[3, 3]", "1,8,6,6", d).onNpu());
  EXPECT_TRUE(
      placeConv("1,8,8,8", "8,8,1,3", "kernel_shape=[1, 3], pads=[0, 1, 0, 1]", "1,8,8,8", d)
          .onNpu());
}

TEST(NpuGeometry, ImagesBelowTheMinimum) {
  TargetDesc t = described(k210Geometry);
  Placement p = placeConv("1,8,3,8", "8,8,1,1", "kernel_shape=[1, 1]", "1,8,3,8", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, std::vector<std::string>{"input height 3 is below conv.min_in_h 4"});
  p = placeConv("1,8,4,2", "8,8,1,1", "kernel_shape=[1, 1]", "1,8,4,2", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons, std::vector<std::string>{"input width 2 is below conv.min_in_w 4"});
  EXPECT_TRUE(placeConv("1,8,4,4", "8,8,1,1", "kernel_shape=[1, 1]", "1,8,4,4", t).onNpu());
}

TEST(NpuGeometry, ImpliedPaddingNeedsTheWholeImageInOneCommand) {
  // With implied padding the smallest command is the whole image: a 64-row
  // image is refused by a max_in_h of 32 (not tiled into wrongly padded rows).
  TargetDesc t = described([](Json &j) {
    k210Geometry(j);
    conv(j)["max_in_h"] = 32;
  });
  Placement p =
      placeConv("1,8,64,8", "8,8,3,3", "kernel_shape=[3, 3], pads=[1, 1, 1, 1]", "1,8,64,8", t);
  EXPECT_FALSE(p.onNpu());
  EXPECT_EQ(p.reasons,
            std::vector<std::string>{
                "input rows of the image (implied padding) 64 exceeds conv.max_in_h 32"});
}

// --- Tiling: every command within the geometry --------------------------------------------

TEST(NpuGeometry, TilerKeepsWholeImagesAndMinimumRows) {
  // A scratchpad too small for the whole image: npu-default tiles rows; with
  // implied padding no tiling is right, and the reason says why.
  target::NpuOp op = test::sameConv(32, 32, 32, 64, 3);
  auto small = [](Json &j) { j["memories"]["scratchpads"][0]["size"] = 24576; };
  TargetDesc rows = described(small);
  auto c = lower::npu::chooseTiling(lower::npu::makeLayer(op), rows);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_LT(c->tiling.rows, 32);
  TargetDesc whole = described([&](Json &j) {
    small(j);
    k210Geometry(j);
  });
  std::string why;
  EXPECT_FALSE(lower::npuTilingFits(op, whole, &why));
  // With room for the whole image, one command of all rows.
  TargetDesc roomy = described(k210Geometry);
  c = lower::npu::chooseTiling(lower::npu::makeLayer(op), roomy);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->tiling.rows, 32);
  // min_in_h without implied padding: row tiles still, each reading at
  // least 12 input rows.
  TargetDesc minRows = described([&](Json &j) {
    j["memories"]["scratchpads"][0]["size"] = 65536;
    conv(j)["min_in_h"] = 12;
  });
  c = lower::npu::chooseTiling(lower::npu::makeLayer(op), minRows);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_LT(c->tiling.rows, 32);
  lower::npu::Layer l = lower::npu::makeLayer(op);
  for (int64_t r0 = 0; r0 < l.OH; r0 += c->tiling.rows) {
    auto in = l.inRows(r0, std::min(l.OH, r0 + c->tiling.rows));
    EXPECT_GE(in.second - in.first, 12) << "tile at row " << r0;
  }
}
