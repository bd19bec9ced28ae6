//===- ir_graph_test.cpp - Graph construction, verifier and printer -------===//
#include "npucc/ir/Graph.h"
#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace npucc::ir;
using npucc::Status;

namespace {

std::unique_ptr<Graph> makeConvRelu() {
  auto g = std::make_unique<Graph>();
  Value *x = g->addValue("x", DType::F32, {1, 1, 2, 2});
  g->inputs.push_back(x);
  Value *w = g->addConstant("w", Tensor::fromFloats({1, 1, 1, 1}, {2.0f}));
  Value *c = g->addValue("c", DType::F32, {1, 1, 2, 2});
  Node *conv = g->addNode(OpKind::Conv, "conv0", {x, w}, {c});
  conv->attrs["strides"] = std::vector<int64_t>{1, 1};
  Value *y = g->addValue("y", DType::F32, {1, 1, 2, 2});
  g->addNode(OpKind::Relu, "relu0", {c}, {y});
  g->outputs.push_back(y);
  return g;
}

TEST(Graph, PrintsDeterministically) {
  auto g = makeConvRelu();
  std::string text = printGraph(*g);
  EXPECT_EQ(text, "graph @main(%x: f32[1,1,2,2]) -> (%y) {\n"
                  "  const @w: f32[1,1,1,1] = dense<[2.0]>\n"
                  "  %c = Conv(%x, @w) {strides=[1, 1]} : f32[1,1,2,2] loc(\"conv0\")\n"
                  "  %y = Relu(%c) : f32[1,1,2,2] loc(\"relu0\")\n"
                  "  return %y\n"
                  "}\n");
  EXPECT_EQ(text, printGraph(*g->clone()));
}

TEST(Graph, VerifierAcceptsWellFormed) {
  auto g = makeConvRelu();
  EXPECT_TRUE(verifyGraph(*g).ok());
}

TEST(Graph, VerifierRejectsUseBeforeDef) {
  auto g = makeConvRelu();
  // Move relu before conv: its input is then used before it is defined.
  Node *relu = g->nodes()[1].get();
  Node *conv = g->nodes()[0].get();
  g->insertNodeBefore(conv, relu->kind, "relu_early", {relu->inputs[0]},
                      {g->addValue("z", DType::F32, {1, 1, 2, 2})});
  Status s = verifyGraph(*g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().str().find("node 'relu_early' (Relu)"), std::string::npos);
  EXPECT_NE(s.error().str().find("before it is defined"), std::string::npos);
}

TEST(Graph, VerifierRejectsBadArity) {
  auto g = makeConvRelu();
  g->nodes()[1]->inputs.push_back(g->inputs[0]);
  Status s = verifyGraph(*g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("has 2 inputs, expected 1..1"), std::string::npos);
}

TEST(Graph, TopoSortRepairsOrder) {
  auto g = makeConvRelu();
  Graph &gr = *g;
  // Append a consumer of x first, then sort: order must stay valid.
  std::string err;
  EXPECT_TRUE(gr.topoSort(&err));
  EXPECT_EQ(gr.nodes()[0]->name, "conv0");
}

TEST(Graph, RemoveUnusedValuesKeepsLiveOnes) {
  auto g = makeConvRelu();
  g->addValue("dead", DType::F32, {3});
  EXPECT_EQ(g->removeUnusedValues(), 1u);
  EXPECT_EQ(g->findValue("dead"), nullptr);
  EXPECT_NE(g->findValue("c"), nullptr);
}

TEST(Graph, UniqueNames) {
  Graph g;
  Value *a = g.addValue("t", DType::F32, {1});
  Value *b = g.addValue("t", DType::F32, {1});
  EXPECT_EQ(a->name, "t");
  EXPECT_EQ(b->name, "t_1");
}

TEST(Tensor, ElementAccessAcrossTypes) {
  Tensor t = Tensor::fromInts(DType::I8, {3}, {-128, 0, 127});
  EXPECT_EQ(t.getInt(0), -128);
  EXPECT_DOUBLE_EQ(t.getDouble(2), 127.0);
  Tensor b = Tensor::fromInts(DType::Bool, {2}, {0, 5});
  EXPECT_EQ(b.getInt(1), 1);
  EXPECT_EQ(Tensor::scalar(DType::F32, 0.5).getDouble(0), 0.5);
}

// A float beyond int64's range has no int64 value: getInt saturates (the
// plain conversion is undefined; fuzz_onnx_import found a float Clip bound of
// -1.7e38, test/fuzz/regressions/onnx_import/clip_float_bound_huge.onnx).
TEST(Tensor, GetIntOfAFloatSaturates) {
  EXPECT_EQ(Tensor::scalar(DType::F32, -1.7e38).getInt(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Tensor::scalar(DType::F32, 1.7e38).getInt(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Tensor::scalar(DType::F64, std::nan("")).getInt(0), 0);
  EXPECT_EQ(Tensor::scalar(DType::F32, -3.75).getInt(0), -3);
  EXPECT_EQ(Tensor::scalar(DType::F64, 9.0e15).getInt(0), int64_t(9000000000000000));
}

TEST(Printer, QuantizedTypes) {
  Graph g;
  Value *v = g.addValue("q", DType::I8, {2});
  v->quant = QuantParams{{0.5f}, {-3}, 0};
  EXPECT_EQ(typeStr(*v), "i8[2] q(0.5, -3)");
  v->quant = QuantParams{{0.25f, 1.0f}, {0, 0}, 0};
  EXPECT_EQ(typeStr(*v), "i8[2] q<0>([0.25, 1.0], [0, 0])");
}

} // namespace

// eraseNode is O(1) (issue 11: compile time linear in graph length): the node
// disappears from nodes(), users() and numUses() at once.
TEST(Graph, ErasedNodesAreInvisibleToQueries) {
  auto g = makeConvRelu();
  Value *c = g->findValue("c");
  Node *relu = g->nodes()[1].get();
  ASSERT_EQ(g->users(c).size(), 1u);
  g->eraseNode(relu);
  EXPECT_EQ(g->users(c).size(), 0u);
  EXPECT_EQ(g->numUses(c), 0u);
  EXPECT_EQ(g->findValue("y")->producer, nullptr);
  ASSERT_EQ(g->nodes().size(), 1u);
  EXPECT_EQ(g->nodes()[0]->name, "conv0");
  EXPECT_EQ(g->clone()->nodes().size(), 1u);
}
