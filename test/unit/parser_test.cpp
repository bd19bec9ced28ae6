//===- parser_test.cpp - Textual IR parser: round trips and diagnostics ---===//
#include "npucc/ir/Graph.h"
#include "npucc/ir/Parser.h"
#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace npucc::ir;

namespace {

/// A graph that uses every feature of the textual format.
std::unique_ptr<Graph> makeKitchenSink() {
  auto g = std::make_unique<Graph>();
  g->name = "torch_jit";
  Value *x = g->addValue("input.1", DType::F32, {1, 3, 4, 4});
  Value *xq = g->addValue("xq", DType::I8, {1, 4});
  xq->quant = QuantParams{{0.5f}, {-3}, 0};
  Value *odd = g->addValue("a b,(c)", DType::F32, {2});
  g->inputs = {x, xq, odd};

  Value *w = g->addConstant("onnx::Conv_7", Tensor::fromFloats({2, 3, 1, 1},
                                                              {0.1f, -2.5f, 3e-8f, 1e20f, 0, 7}));
  Value *big = g->addConstant("big", Tensor::fromFloats({40}, std::vector<float>(40, 1.25f)));
  Value *shp = g->addConstant("shape", Tensor::fromInts(DType::I64, {2}, {1, -1}));
  Value *wq = g->addConstant("wq", Tensor::fromInts(DType::I8, {2, 2}, {-128, 127, 0, 5}));
  wq->quant = QuantParams{{0.1f, 0.25f}, {0, 1}, 0};
  g->addConstant("flag", Tensor::fromInts(DType::Bool, {}, {1}));
  g->addConstant("d", Tensor::scalar(DType::F64, 0.1));
  g->addConstant("u", Tensor::fromInts(DType::U64, {1}, {-1}));
  g->addConstant("empty", Tensor(DType::I32, {0}));
  Value *colon = g->addConstant("k:", Tensor::fromInts(DType::I64, {1}, {1}));

  Value *c = g->addValue("/conv/Conv_output_0", DType::F32, {1, 2, 4, 4});
  Node *conv = g->addNode(OpKind::Conv, "/conv/Conv", {x, w, nullptr}, {c});
  conv->attrs["dilations"] = std::vector<int64_t>{1, 1};
  conv->attrs["group"] = int64_t(1);
  conv->attrs["act_min"] = 0.0f;
  conv->attrs["act_max"] = std::numeric_limits<float>::infinity();
  conv->attrs["alpha"] = -std::numeric_limits<float>::infinity();
  conv->attrs["scales"] = std::vector<float>{1.0f, 0.5f, 1e-3f};
  conv->attrs["names"] = std::vector<std::string>{"a", "q\"uote", "back\\slash"};
  conv->attrs["mode"] = std::string("it's \"quoted\"");
  conv->attrs["none"] = std::vector<int64_t>{};
  conv->attrs["value"] = Tensor::fromFloats({2}, {1.5f, -0.0f});
  conv->attrs["ivalue"] = Tensor::fromInts(DType::I32, {}, {42});
  conv->attrs["bigvalue"] = Tensor::fromFloats({20}, std::vector<float>(20, 2.0f));

  Value *s0 = g->addValue("s0", DType::F32, {1, 1, 4, 4});
  Value *s1 = g->addValue("s1", DType::F32, {1, 1, 4, 4});
  Node *split = g->addNode(OpKind::Split, "split \"x\"", {c}, {s0, s1});
  split->attrs["axis"] = int64_t(1);
  Value *r = g->addValue("r", DType::F32, {1, 16});
  g->addNode(OpKind::Reshape, "", {s0, shp}, {r});
  Value *sum = g->addValue("sum", DType::F32, {1, 16});
  g->addNode(OpKind::Add, "add", {r, big}, {sum});
  Value *q = g->addValue("q", DType::I8, {2, 2});
  q->quant = QuantParams{{0.1f, 0.25f}, {0, 1}, 1};
  g->addNode(OpKind::Identity, "id", {wq}, {q});
  Value *k = g->addValue("k2", DType::I64, {1});
  g->addNode(OpKind::Identity, "idk", {colon}, {k});
  g->outputs = {sum, s1, q, odd, w, k};
  return g;
}

std::string roundTrip(const std::string &text) {
  auto r = parseGraph(text, "rt.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str()) << "\n" << text;
  if (!r.ok())
    return "";
  return printGraph(**r);
}

TEST(Parser, RoundTripsEveryFeature) {
  auto g = makeKitchenSink();
  ASSERT_TRUE(verifyGraph(*g).ok()) << verifyGraph(*g).error().str();
  std::string text = printGraph(*g);
  EXPECT_EQ(roundTrip(text), text);
  // The odd names must be quoted by the printer to survive the trip.
  EXPECT_NE(text.find("%\"a b,(c)\""), std::string::npos) << text;
  EXPECT_NE(text.find("@\"k:\""), std::string::npos) << text;
  EXPECT_NE(text.find("%/conv/Conv_output_0"), std::string::npos) << text;
}

TEST(Parser, RoundTripsElided) {
  auto g = makeKitchenSink();
  PrintOptions o;
  o.elideAbove = 16;
  std::string text = printGraph(*g, o);
  ASSERT_NE(text.find("dense<elided>"), std::string::npos);
  auto r = parseGraph(text);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(printGraph(**r, o), text);
  // Elided constants come back as zeros of the right type.
  Value *big = (*r)->findValue("big");
  ASSERT_NE(big, nullptr);
  ASSERT_TRUE(big->isConstant());
  EXPECT_EQ(big->constant->numElements(), 40);
  EXPECT_EQ(big->constant->getDouble(39), 0.0);
}

TEST(Parser, PreservesSemantics) {
  auto g = makeKitchenSink();
  auto r = parseGraph(printGraph(*g));
  ASSERT_TRUE(r.ok()) << r.error().str();
  Graph &p = **r;
  EXPECT_TRUE(verifyGraph(p).ok());
  EXPECT_EQ(p.name, "torch_jit");
  ASSERT_EQ(p.inputs.size(), 3u);
  EXPECT_EQ(p.inputs[2]->name, "a b,(c)");
  ASSERT_TRUE(p.inputs[1]->quant.has_value());
  EXPECT_EQ(*p.inputs[1]->quant, *g->inputs[1]->quant);
  ASSERT_EQ(p.outputs.size(), 6u);
  EXPECT_TRUE(p.outputs[4]->isConstant());
  EXPECT_EQ(p.outputs[3], p.inputs[2]);
  for (auto &v : g->values()) {
    Value *pv = p.findValue(v->name);
    ASSERT_NE(pv, nullptr) << v->name;
    EXPECT_EQ(pv->dtype, v->dtype);
    EXPECT_EQ(pv->shape, v->shape);
    EXPECT_EQ(pv->quant.has_value(), v->quant.has_value()) << v->name;
    if (v->quant && pv->quant) {
      EXPECT_EQ(*pv->quant, *v->quant) << v->name;
    }
    if (v->isConstant()) {
      ASSERT_TRUE(pv->isConstant());
      EXPECT_TRUE(*pv->constant == *v->constant) << v->name;
    }
  }
  ASSERT_EQ(p.nodes().size(), g->nodes().size());
  const Node &conv = *p.nodes()[0];
  EXPECT_EQ(conv.kind, OpKind::Conv);
  EXPECT_EQ(conv.name, "/conv/Conv");
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(conv.inputs[2], nullptr);
  EXPECT_EQ(conv.attrs, g->nodes()[0]->attrs);
  EXPECT_TRUE(std::holds_alternative<float>(conv.attrs.at("act_min")));
  EXPECT_TRUE(std::holds_alternative<int64_t>(conv.attrs.at("group")));
  EXPECT_EQ(conv.attrString("mode", ""), "it's \"quoted\"");
  EXPECT_TRUE(std::isinf(conv.attrFloat("act_max", 0)));
  EXPECT_EQ(p.nodes()[1]->name, "split \"x\"");
  EXPECT_EQ(p.nodes()[1]->outputs.size(), 2u);
  EXPECT_EQ(p.nodes()[2]->name, "");
}

TEST(Parser, AcceptsHandWrittenConveniences) {
  const char *text = R"(// a comment line
graph @g(%x: f32[2]) -> (%y) {   // trailing comment
  const @c: f32[2] = dense<[1, 2]>
  %t = Add(%x, @c) {} : f32[2]
  %y = Relu(%t) : f32[2] loc("relu")
  return %y
}
)";
  auto r = parseGraph(text);
  ASSERT_TRUE(r.ok()) << r.error().str();
  Graph &g = **r;
  EXPECT_EQ(g.findValue("c")->constant->getDouble(1), 2.0);
  EXPECT_EQ(g.nodes()[0]->name, "t"); // no loc: named after the first result
  EXPECT_EQ(g.nodes()[1]->name, "relu");
}

TEST(Parser, OddGraphNamesAreQuoted) {
  for (const char *name : {"my graph(1)", "", "a:", "x\"y"}) {
    auto g = std::make_unique<Graph>();
    g->name = name;
    Value *x = g->addValue("x", DType::F32, {1});
    g->inputs = {x};
    g->outputs = {x};
    std::string text = printGraph(*g);
    auto r = parseGraph(text);
    ASSERT_TRUE(r.ok()) << r.error().str() << "\n" << text;
    EXPECT_EQ((*r)->name, name);
    EXPECT_EQ(printGraph(**r), text);
  }
}

TEST(Parser, NaNAndNegativeZeroSurvive) {
  auto g = std::make_unique<Graph>();
  Value *c = g->addConstant("c", Tensor::fromFloats({3}, {std::nanf(""), -0.0f, 1e-45f}));
  g->outputs = {c};
  std::string text = printGraph(*g);
  EXPECT_EQ(roundTrip(text), text);
  auto r = parseGraph(text);
  ASSERT_TRUE(r.ok());
  const Tensor &t = *(*r)->findValue("c")->constant;
  EXPECT_TRUE(std::isnan(t.getDouble(0)));
  EXPECT_TRUE(std::signbit(t.getDouble(1)));
  EXPECT_EQ(t.data<float>()[2], 1e-45f);
}

struct BadCase {
  const char *text;
  const char *where;   // expected "line:col"
  const char *message; // substring of the message
};

TEST(Parser, ReportsErrorsWithLineAndColumn) {
  const BadCase cases[] = {
      {"", "1:1", "expected 'graph'"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  %y = Frob(%x) : f32[2]\n  return %y\n}\n", "2:8",
       "unknown op 'Frob'"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  %y = Relu(%z) : f32[2]\n  return %y\n}\n", "2:13",
       "use of undefined value '%z'"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  const @c: f32[3] = dense<[1.0, 2.0]>\n"
       "  return %x\n}\n",
       "2:28", "expected 3 elements, found 2"},
      {"graph @g(%x: f32[2]) -> (%x) {\n  const @c: f32[1] = dense<[1.0, 2.0]>\n}\n", "2:34",
       "too many elements"},
      {"graph @g(%x: f32[2]) -> (%x) {\n  const @c: i64[1] = dense<[1.5]>\n  return %x\n}\n",
       "2:29", "expected an integer"},
      {"graph @g(%x: f33[2]) -> (%x) {\n  return %x\n}\n", "1:14", "unknown element type 'f33'"},
      {"graph @g(%x: f32[2]) -> (%x) {\n  %x = Relu(%x) : f32[2]\n  return %x\n}\n", "2:3",
       "redefinition of value 'x'"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  %y = Relu(@x) : f32[2]\n  return %y\n}\n", "2:13",
       "is not a constant"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  %y = Relu(%x) : f32[2]\n  return %x\n}\n", "3:10",
       "does not match the graph signature"},
      {"graph @g(%x: f32[2]) -> (%x) {\n  return %x\n", "3:1", "expected '}'"},
      {"graph @g(%x: f32[2]) -> (%x) {\n  return %x\n}\nextra", "4:1", "unexpected text"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  %y = Relu(%x) {mode=\"abc} : f32[2]\n}\n", "2:23",
       "unterminated string"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  %y = Relu(%x) {a=1, a=2} : f32[2]\n  return %y\n}\n",
       "2:23", "duplicate attribute 'a'"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  %y = Relu(%x) : f32[2], f32[2]\n  return %y\n}\n", "2:19",
       "expected 1 result types, found 2"},
      {"graph @g(%x: f32[2]) -> (%y) {\n  %y, %z = Split(%x) : f32[1]\n  return %y\n}\n", "2:24",
       "expected 2 result types, found 1"},
      {"graph @g(%x: f32[2]) -> (%x) {\n  const @c: f32[100000,100000] = dense<elided>\n"
       "  return %x\n}\n",
       "2:13", "too large"},
      {"graph @g(%x: f32[2]) -> (%x) {\n  const @c: f32[99999999999999999999] = dense<elided>\n"
       "  return %x\n}\n",
       "2:17", "out of range"},
  };
  for (const BadCase &c : cases) {
    auto r = parseGraph(c.text, "bad.ir");
    ASSERT_FALSE(r.ok()) << c.text;
    std::string s = r.error().str();
    EXPECT_NE(s.find(std::string("bad.ir:") + c.where + ": error: "), std::string::npos)
        << s << "\n--- for ---\n"
        << c.text;
    EXPECT_NE(s.find(c.message), std::string::npos) << s;
  }
}

TEST(Parser, GarbageNeverCrashes) {
  std::string text = printGraph(*makeKitchenSink());
  // Every prefix is either a valid graph (only the full text) or an error.
  for (size_t n = 0; n + 1 < text.size(); n += 3) {
    auto r = parseGraph(text.substr(0, n));
    EXPECT_FALSE(r.ok()) << "prefix " << n << " parsed";
  }
  // Random byte mutations: must not crash; successes must print & verify.
  std::mt19937 rng(1234);
  const char alphabet[] = "%@_,()[]{}<>:=\"-.0123456789eqfi \n";
  int failures = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string m = text;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % m.size();
      switch (rng() % 3) {
      case 0:
        m[pos] = alphabet[rng() % (sizeof alphabet - 1)];
        break;
      case 1:
        m.erase(pos, 1 + rng() % 4);
        break;
      default:
        m.insert(pos, 1, alphabet[rng() % (sizeof alphabet - 1)]);
      }
    }
    auto r = parseGraph(m, "fuzz.ir");
    if (!r.ok()) {
      ++failures;
      EXPECT_EQ(r.error().file.rfind("fuzz.ir:", 0), 0u) << r.error().str();
    } else {
      (void)printGraph(**r);
    }
  }
  EXPECT_GT(failures, 1000);
}

} // namespace
