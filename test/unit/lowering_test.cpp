//===- lowering_test.cpp - CPU lowering driver and the loop-IR text form --===//
//
// The driver is tested with fake family lowerings injected through
// CpuLowerOptions::familyOverride: each emits one call
// `fake_<op>(inputs..., outputs...[, scratch])`, so the tests see exactly
// which buffers the driver assigned.
//
//===----------------------------------------------------------------------===//
#include "npucc/lir/Program.h"
#include "npucc/lower/CpuLowering.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace npucc;
using namespace npucc::ir;
using namespace npucc::lower;
using lir::BufferRef;
using lir::Region;

namespace {

Status fakeFamily(const Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  if (n.kind == OpKind::Sigmoid)
    return error("sigmoid is not supported by the fake");
  lir::Instr in;
  in.opcode = "call";
  in.callee = std::string("fake_") + n.opName();
  for (const Value *v : n.inputs)
    if (v)
      in.args.push_back(ctx.buffer(v));
  for (const Value *v : n.outputs)
    if (v)
      in.args.push_back(ctx.buffer(v));
  if (n.kind == OpKind::Conv)
    in.args.push_back(ctx.scratch(1000));
  in.args.push_back(int64_t(n.inputs.size()));
  in.args.push_back(0.5f);
  in.args.push_back(lir::IntArray{{1, -2, 3}});
  in.args.push_back(lir::FloatArray{{1.0f, -0.25f}});
  out.push_back(std::move(in));
  return success();
}

FamilyLowering fakeLookup(OpKind) { return fakeFamily; }

CpuLowerOptions fakeOpts() {
  CpuLowerOptions o;
  o.familyOverride = fakeLookup;
  return o;
}

const BufferRef &bufArg(const lir::Instr &in, size_t i) { return std::get<BufferRef>(in.args[i]); }

bool sameStorage(const BufferRef &a, const BufferRef &b) {
  return a.region == b.region && a.index == b.index && a.offset == b.offset;
}
bool bytesOverlap(const BufferRef &a, const BufferRef &b) {
  return a.region == b.region && a.index == b.index && a.offset < b.offset + b.size &&
         b.offset < a.offset + a.size;
}

// x -> Conv -> Relu -> Reshape -> Gemm -> y
std::unique_ptr<Graph> convReluReshapeGemm() {
  auto g = std::make_unique<Graph>();
  g->sourceFile = "net.onnx";
  Value *x = g->addValue("x", DType::F32, {1, 3, 8, 8});
  g->inputs.push_back(x);
  Value *w = g->addConstant("conv.weight", Tensor(DType::F32, {4, 3, 3, 3}));
  Value *c = g->addValue("c", DType::F32, {1, 4, 8, 8});
  g->addNode(OpKind::Conv, "conv0", {x, w}, {c});
  Value *r = g->addValue("r", DType::F32, {1, 4, 8, 8});
  g->addNode(OpKind::Relu, "relu0", {c}, {r});
  Value *shape = g->addConstant("shape", Tensor::fromInts(DType::I64, {2}, {1, 256}));
  Value *f = g->addValue("f", DType::F32, {1, 256});
  g->addNode(OpKind::Reshape, "flat", {r, shape}, {f});
  Value *gw = g->addConstant("fc.weight", Tensor(DType::F32, {10, 256}));
  Value *y = g->addValue("y", DType::F32, {1, 10});
  g->addNode(OpKind::Gemm, "fc", {f, gw}, {y});
  g->outputs.push_back(y);
  return g;
}

TEST(CpuLowering, ConvReluReshapeGemm) {
  auto g = convReluReshapeGemm();
  auto r = lowerGraphToCpu(*g, fakeOpts());
  ASSERT_TRUE(r) << r.error().str();
  const lir::Program &p = *r;
  ASSERT_EQ(p.body.size(), 3u);
  const lir::Instr &conv = p.body[0], &relu = p.body[1], &gemm = p.body[2];
  EXPECT_EQ(conv.callee, "fake_Conv");
  EXPECT_EQ(conv.comment, "conv0 (Conv)");
  // Conv reads the caller's input and a constant; writes the arena.
  EXPECT_EQ(bufArg(conv, 0).region, Region::Input);
  EXPECT_EQ(bufArg(conv, 1).region, Region::Const);
  EXPECT_EQ(bufArg(conv, 2).region, Region::Arena);
  // Scratch does not overlap the conv output.
  EXPECT_EQ(bufArg(conv, 3).size, 1000);
  EXPECT_FALSE(bytesOverlap(bufArg(conv, 2), bufArg(conv, 3)));
  // Relu is in place; Reshape is an alias (no instruction) feeding Gemm.
  EXPECT_TRUE(sameStorage(bufArg(relu, 0), bufArg(relu, 1)));
  EXPECT_TRUE(sameStorage(bufArg(gemm, 0), bufArg(relu, 1)));
  EXPECT_EQ(bufArg(gemm, 0).size, 1024);
  // Gemm writes the caller's output buffer.
  EXPECT_EQ(bufArg(gemm, 2).region, Region::Output);
  EXPECT_EQ(bufArg(gemm, 2).index, 0);
  // Only used constants, names sanitized.
  ASSERT_EQ(p.constants.size(), 2u);
  EXPECT_EQ(p.constants[0].name, "conv_weight");
  EXPECT_EQ(p.constants[1].name, "fc_weight");
  // Arena bounds.
  EXPECT_GE(p.arenaSize, p.peakLiveBytes);
  EXPECT_LE(p.arenaSize, p.activationBytes);
  EXPECT_EQ(p.peakLiveBytes, 1024 + 1008); // conv output + scratch
  EXPECT_EQ(p.inputs.size(), 1u);
  EXPECT_EQ(p.inputs[0].name, "x");
  EXPECT_EQ(p.outputs[0].shape, (Shape{1, 10}));
}

TEST(CpuLowering, DeterministicAndRoundTripsThroughText) {
  auto g = convReluReshapeGemm();
  auto a = lowerGraphToCpu(*g, fakeOpts());
  auto b = lowerGraphToCpu(*g, fakeOpts());
  ASSERT_TRUE(a && b);
  std::string text = lir::printProgram(*a);
  EXPECT_EQ(text, lir::printProgram(*b));
  EXPECT_NE(text.find("arena "), std::string::npos);
  EXPECT_NE(text.find("const @conv_weight: f32[4,3,3,3] 432 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("call fake_Conv(%in0[0:768], @conv_weight, %arena["), std::string::npos)
      << text;
  EXPECT_NE(text.find("i[1,-2,3], f[1.0,-0.25])  // conv0 (Conv)"), std::string::npos) << text;
  auto parsed = lir::parseProgram(text);
  ASSERT_TRUE(parsed) << parsed.error().str();
  EXPECT_EQ(lir::printProgram(*parsed), text);
  // Parsed operands keep their values.
  ASSERT_EQ(parsed->body.size(), 3u);
  EXPECT_EQ(std::get<float>(parsed->body[0].args[5]), 0.5f);
  EXPECT_EQ(std::get<int64_t>(parsed->body[0].args[4]), 2);
  EXPECT_EQ(std::get<lir::IntArray>(parsed->body[0].args[6]).values,
            (std::vector<int64_t>{1, -2, 3}));
}

TEST(LirText, RoundTripsOddOperands) {
  lir::Program p;
  p.modelName = "odd \"name\"";
  p.arenaSize = 64;
  p.constants.push_back({"k", Tensor(DType::I64, {2})});
  p.inputs.push_back({"in", DType::U8, {4}});
  p.outputs.push_back({"out", DType::F32, {}});
  p.kernelFiles.push_back("kernels/x.c");
  lir::Instr in;
  in.opcode = "call";
  in.callee = "f";
  BufferRef arenaI64{Region::Arena, 0, 16, 16, DType::I64};
  BufferRef constPart{Region::Const, 0, 8, 8, DType::I64};
  BufferRef constAsF32{Region::Const, 0, 0, 16, DType::F32};
  BufferRef out{Region::Output, 0, 0, 4, DType::F32};
  in.args = {arenaI64,
             constPart,
             constAsF32,
             out,
             int64_t(-7),
             1e-20f,
             -0.0f,
             std::numeric_limits<float>::infinity(),
             lir::IntArray{},
             lir::FloatArray{{3.0f}},
             BufferRef::null(DType::I64)};
  p.body.push_back(in);
  lir::Instr cp;
  cp.opcode = "memcpy";
  cp.args = {out, BufferRef{Region::Input, 0, 0, 4, DType::U8}};
  p.body.push_back(cp);
  std::string text = lir::printProgram(p);
  auto q = lir::parseProgram(text);
  ASSERT_TRUE(q) << q.error().str() << "\n" << text;
  EXPECT_EQ(lir::printProgram(*q), text);
  EXPECT_EQ(q->modelName, p.modelName);
  const BufferRef &b0 = std::get<BufferRef>(q->body[0].args[0]);
  EXPECT_EQ(b0.dtype, DType::I64);
  EXPECT_EQ(b0.offset, 16);
  EXPECT_EQ(std::get<BufferRef>(q->body[0].args[2]).dtype, DType::F32);
  EXPECT_TRUE(std::signbit(std::get<float>(q->body[0].args[6])));
  EXPECT_TRUE(std::isinf(std::get<float>(q->body[0].args[7])));
  EXPECT_EQ(std::get<float>(q->body[0].args[5]), 1e-20f);
  EXPECT_TRUE(std::get<BufferRef>(q->body[0].args[10]).isNull());
  EXPECT_EQ(std::get<BufferRef>(q->body[0].args[10]).dtype, DType::I64);
  EXPECT_NE(text.find(", null:i64)"), std::string::npos) << text;
}

TEST(LirText, ParseErrorsNameLineAndColumn) {
  auto r = lir::parseProgram("arena 16 align 16\ncall f(@nope)\n", "t.lir");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("t.lir:2:"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("unknown constant"), std::string::npos);
}

TEST(CpuLowering, FamilyErrorsCarryNodeAndFile) {
  auto g = std::make_unique<Graph>();
  g->sourceFile = "m.onnx";
  Value *x = g->addValue("x", DType::F32, {4});
  g->inputs.push_back(x);
  Value *y = g->addValue("y", DType::F32, {4});
  g->addNode(OpKind::Sigmoid, "sig7", {x}, {y});
  g->outputs.push_back(y);
  auto r = lowerGraphToCpu(*g, fakeOpts());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().node, "sig7");
  EXPECT_EQ(r.error().op, "Sigmoid");
  EXPECT_EQ(r.error().file, "m.onnx");
  EXPECT_NE(r.error().message.find("not supported"), std::string::npos);
}

TEST(CpuLowering, IdentityOfInputToOutputIsAMemcpy) {
  auto g = std::make_unique<Graph>();
  Value *x = g->addValue("x", DType::I32, {5});
  g->inputs.push_back(x);
  Value *y = g->addValue("y", DType::I32, {5});
  g->addNode(OpKind::Identity, "id", {x}, {y});
  g->outputs.push_back(y);
  g->outputs.push_back(x); // the input itself is also an output
  auto r = lowerGraphToCpu(*g, {});
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_EQ(r->body.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r->body[i].opcode, "memcpy");
    EXPECT_EQ(bufArg(r->body[i], 0).region, Region::Output);
    EXPECT_EQ(bufArg(r->body[i], 0).index, int(i));
    EXPECT_EQ(bufArg(r->body[i], 0).size, 20);
    EXPECT_EQ(bufArg(r->body[i], 1).region, Region::Input);
  }
  EXPECT_EQ(r->arenaSize, 0);
}

TEST(CpuLowering, ConstantOutputIsCopiedAndViewsOfConstantsAlias) {
  auto g = std::make_unique<Graph>();
  Value *c = g->addConstant("c", Tensor::fromFloats({2, 2}, {1, 2, 3, 4}));
  Value *v = g->addValue("v", DType::F32, {4});
  g->addNode(OpKind::Flatten, "fl", {c}, {v});
  Value *x = g->addValue("x", DType::F32, {4});
  g->inputs.push_back(x);
  Value *s = g->addValue("s", DType::F32, {4});
  g->addNode(OpKind::Add, "add", {x, v}, {s});
  g->outputs.push_back(s);
  g->outputs.push_back(c);
  auto r = lowerGraphToCpu(*g, fakeOpts());
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_EQ(r->body.size(), 2u);
  EXPECT_EQ(bufArg(r->body[0], 0).region, Region::Input);  // x is read-only: not in place
  EXPECT_EQ(bufArg(r->body[0], 1).region, Region::Const);  // the Flatten of c is c itself
  EXPECT_EQ(bufArg(r->body[0], 2).region, Region::Output); // written directly
  EXPECT_EQ(r->body[1].opcode, "memcpy");
  EXPECT_EQ(bufArg(r->body[1], 1).region, Region::Const);
  EXPECT_EQ(r->constants.size(), 1u);
}

TEST(CpuLowering, InPlaceOnlyWhenTheInputIsDead) {
  auto g = std::make_unique<Graph>();
  Value *x = g->addValue("x", DType::F32, {16});
  g->inputs.push_back(x);
  Value *a = g->addValue("a", DType::F32, {16});
  g->addNode(OpKind::Relu, "r0", {x}, {a}); // input is the caller's: not in place
  Value *b = g->addValue("b", DType::F32, {16});
  g->addNode(OpKind::Relu, "r1", {a}, {b}); // a is used again below: not in place
  Value *c = g->addValue("c", DType::F32, {16});
  g->addNode(OpKind::Add, "add", {b, a}, {c}); // b dead afterwards: in place
  Value *d = g->addValue("d", DType::F32, {16});
  g->addNode(OpKind::Tanh, "t", {c}, {d}); // output is the model output: c moves there
  g->outputs.push_back(d);
  auto r = lowerGraphToCpu(*g, fakeOpts());
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_EQ(r->body.size(), 4u);
  const auto &r0 = r->body[0], &r1 = r->body[1], &add = r->body[2], &t = r->body[3];
  EXPECT_EQ(bufArg(r0, 0).region, Region::Input);
  EXPECT_EQ(bufArg(r0, 1).region, Region::Arena);
  EXPECT_FALSE(bytesOverlap(bufArg(r1, 0), bufArg(r1, 1)));
  // add: b in place -> c, and c in place -> d which is the output, so the
  // whole chain b, c, d lives in the output buffer.
  EXPECT_EQ(bufArg(r1, 1).region, Region::Output);
  EXPECT_TRUE(sameStorage(bufArg(add, 0), bufArg(add, 2)));
  EXPECT_TRUE(sameStorage(bufArg(t, 0), bufArg(t, 1)));
  EXPECT_FALSE(bytesOverlap(bufArg(add, 1), bufArg(add, 2)));
  EXPECT_EQ(r->arenaSize, 64); // only `a` is in the arena
}

TEST(CpuLowering, ViewOutputNeededTwiceGetsACopy) {
  auto g = std::make_unique<Graph>();
  Value *x = g->addValue("x", DType::F32, {2, 3});
  g->inputs.push_back(x);
  Value *a = g->addValue("a", DType::F32, {2, 3});
  g->addNode(OpKind::Relu, "r", {x}, {a});
  Value *f1 = g->addValue("f1", DType::F32, {6});
  g->addNode(OpKind::Flatten, "fl1", {a}, {f1});
  Value *f2 = g->addValue("f2", DType::F32, {1, 6});
  g->addNode(OpKind::Unsqueeze, "un", {f1}, {f2});
  g->outputs.push_back(f1);
  g->outputs.push_back(f2);
  g->outputs.push_back(f1); // duplicated output
  auto r = lowerGraphToCpu(*g, fakeOpts());
  ASSERT_TRUE(r) << r.error().str();
  std::string text = lir::printProgram(*r);
  // Relu writes output 0 directly (its result is viewed as f1 = output 0);
  // f2 (output 1) and the duplicate (output 2) are copies of it.
  ASSERT_EQ(r->body.size(), 3u) << text;
  EXPECT_EQ(bufArg(r->body[0], 1).region, Region::Output);
  EXPECT_EQ(bufArg(r->body[0], 1).index, 0);
  EXPECT_EQ(r->body[1].opcode, "memcpy");
  EXPECT_EQ(bufArg(r->body[1], 0).index, 1);
  EXPECT_EQ(r->body[2].opcode, "memcpy");
  EXPECT_EQ(bufArg(r->body[2], 0).index, 2);
  EXPECT_EQ(r->arenaSize, 0);
}

TEST(CpuLowering, DropoutMaskIsFilledWithOnes) {
  auto g = std::make_unique<Graph>();
  Value *x = g->addValue("x", DType::F32, {3});
  g->inputs.push_back(x);
  Value *y = g->addValue("y", DType::F32, {3});
  Value *m = g->addValue("m", DType::Bool, {3});
  g->addNode(OpKind::Dropout, "drop", {x}, {y, m});
  g->outputs.push_back(m);
  auto r = lowerGraphToCpu(*g, {});
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_EQ(r->body.size(), 1u);
  EXPECT_EQ(r->body[0].opcode, "memset");
  EXPECT_EQ(bufArg(r->body[0], 0).region, Region::Output);
  EXPECT_EQ(std::get<int64_t>(r->body[0].args[1]), 1);
}

TEST(CpuLowering, ScratchIsDisjointFromLiveValues) {
  auto g = std::make_unique<Graph>();
  Value *x = g->addValue("x", DType::F32, {1, 1, 4, 4});
  g->inputs.push_back(x);
  Value *a = g->addValue("a", DType::F32, {1, 1, 4, 4});
  g->addNode(OpKind::Relu, "r", {x}, {a});
  Value *w = g->addConstant("w", Tensor(DType::F32, {1, 1, 1, 1}));
  Value *c = g->addValue("c", DType::F32, {1, 1, 4, 4});
  g->addNode(OpKind::Conv, "conv", {a, w}, {c});
  Value *s = g->addValue("s", DType::F32, {1, 1, 4, 4});
  g->addNode(OpKind::Add, "add", {c, a}, {s}); // keeps `a` live across the conv
  g->outputs.push_back(s);
  auto r = lowerGraphToCpu(*g, fakeOpts());
  ASSERT_TRUE(r) << r.error().str();
  const lir::Instr &conv = r->body[1];
  BufferRef in = bufArg(conv, 0), out = bufArg(conv, 2), scratch = bufArg(conv, 3);
  EXPECT_EQ(in.region, Region::Arena);
  EXPECT_FALSE(bytesOverlap(in, out));
  EXPECT_FALSE(bytesOverlap(in, scratch));
  EXPECT_FALSE(bytesOverlap(out, scratch));
  EXPECT_LE(scratch.offset + scratch.size, r->arenaSize);
}

TEST(CpuLowering, UnsupportedOpsAndPlaceholderFamiliesFail) {
  auto g = std::make_unique<Graph>();
  g->sourceFile = "k.onnx";
  Value *x = g->addValue("x", DType::F32, {3});
  g->inputs.push_back(x);
  Value *y = g->addValue("y", DType::F32, {3});
  g->addNode(OpKind::Constant, "k", {}, {y});
  g->outputs.push_back(y);
  auto r = lowerGraphToCpu(*g, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().node, "k");
  EXPECT_EQ(r.error().file, "k.onnx");
}

TEST(CpuLowering, FamilyTable) {
  EXPECT_EQ(familyFor(OpKind::Conv), &lowerConvFamily);
  EXPECT_EQ(familyFor(OpKind::MatMul), &lowerMatMulFamily);
  EXPECT_EQ(familyFor(OpKind::GlobalMaxPool), &lowerPoolFamily);
  EXPECT_EQ(familyFor(OpKind::PRelu), &lowerElementwiseFamily);
  EXPECT_EQ(familyFor(OpKind::HardSwish), &lowerActivationFamily);
  EXPECT_EQ(familyFor(OpKind::Gather), &lowerDataMovementFamily);
  EXPECT_EQ(familyFor(OpKind::ConstantOfShape), &lowerMiscFamily);
  EXPECT_EQ(familyFor(OpKind::Reshape), nullptr);
  EXPECT_EQ(familyFor(OpKind::Constant), nullptr);
}

} // namespace
