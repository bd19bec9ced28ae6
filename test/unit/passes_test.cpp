//===- passes_test.cpp - Pass manager and graph passes --------------------===//
//
// Each pass test parses a small graph, runs the pass, checks the rewritten
// text, and - the important part - runs the reference interpreter on random
// inputs before and after to check that the results did not change.
//
//===----------------------------------------------------------------------===//
#include "npucc/interp/Interpreter.h"
#include "npucc/ir/Parser.h"
#include "npucc/ir/Printer.h"
#include "npucc/ir/Verifier.h"
#include "npucc/passes/Pass.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

using namespace npucc;
using namespace npucc::ir;

namespace {

std::unique_ptr<Graph> parse(const std::string &text) {
  auto r = parseGraph(text, "test.ir");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
  return r.ok() ? r.take() : nullptr;
}

std::map<std::string, Tensor> randomInputs(const Graph &g, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::map<std::string, Tensor> r;
  for (const Value *v : g.inputs) {
    Tensor t(v->dtype, v->shape);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.setDouble(i, dist(rng));
    r[v->name] = t;
  }
  return r;
}

struct PassRun {
  std::string text;          // printed IR after the pipeline
  passes::PassContext ctx;   // statistics
  std::unique_ptr<Graph> g;  // the rewritten graph
};

/// Runs `pipeline` on `text`, checks the result verifies and computes the
/// same outputs as the original on a few random inputs.
PassRun runAndCompare(const std::string &text, const std::string &pipeline) {
  PassRun r;
  auto before = parse(text);
  if (!before)
    return r;
  r.g = before->clone();
  Status s = passes::runPipeline(*r.g, pipeline, r.ctx);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().str());
  EXPECT_TRUE(verifyGraph(*r.g).ok());
  r.text = printGraph(*r.g);
  for (unsigned seed = 1; seed <= 3; ++seed) {
    auto in = randomInputs(*before, seed);
    auto a = interp::runGraph(*before, in);
    auto b = interp::runGraph(*r.g, in);
    EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().str());
    EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().str()) << "\n" << r.text;
    if (!a.ok() || !b.ok())
      return r;
    EXPECT_EQ(a->size(), b->size());
    for (auto &[name, ta] : *a) {
      auto it = b->find(name);
      EXPECT_NE(it, b->end()) << "output " << name << " missing";
      if (it == b->end())
        continue;
      const Tensor &tb = it->second;
      EXPECT_EQ(ta.shape(), tb.shape()) << name;
      EXPECT_EQ(ta.dtype(), tb.dtype()) << name;
      if (ta.shape() != tb.shape() || ta.dtype() != tb.dtype())
        continue;
      for (int64_t i = 0; i < ta.numElements(); ++i) {
        double x = ta.getDouble(i), y = tb.getDouble(i);
        EXPECT_NEAR(x, y, 1e-4 * (1 + std::fabs(x))) << name << "[" << i << "]\n" << r.text;
        if (std::fabs(x - y) > 1e-4 * (1 + std::fabs(x)))
          return r;
      }
    }
  }
  return r;
}

bool contains(const std::string &s, const std::string &sub) {
  return s.find(sub) != std::string::npos;
}

int64_t stat(const PassRun &r, const std::string &k) {
  auto it = r.ctx.stats.find(k);
  return it == r.ctx.stats.end() ? 0 : it->second;
}

// ---- Pass manager ------------------------------------------------------------

const char *kConvRelu = R"(graph @main(%x: f32[1,2,4,4]) -> (%y) {
  const @w: f32[3,2,1,1] = dense<[1.0, -1.0, 0.5, 2.0, -0.5, 0.25]>
  %c = Conv(%x, @w) {dilations=[1, 1], group=1, kernel_shape=[1, 1], pads=[0, 0, 0, 0], strides=[1, 1]} : f32[1,3,4,4] loc("conv")
  %i = Identity(%c) : f32[1,3,4,4] loc("id")
  %y = Relu(%i) : f32[1,3,4,4] loc("relu")
  return %y
}
)";

TEST(PassManager, TableMatchesPassesDef) {
  std::vector<std::string> names;
  for (const passes::PassInfo &p : passes::allPasses()) {
    names.push_back(p.name);
    EXPECT_NE(p.run, nullptr);
    EXPECT_GT(std::string(p.summary).size(), 10u);
    EXPECT_EQ(passes::findPass(p.name), &p);
  }
  // The float passes, in this order (other passes may sit between them).
  std::vector<std::string> expected = {"remove-identity", "constant-fold", "fold-pad",
                                       "fold-batchnorm",  "fuse-activation", "dce"};
  size_t at = 0;
  for (const std::string &n : names)
    if (at < expected.size() && n == expected[at])
      ++at;
  EXPECT_EQ(at, expected.size()) << ::testing::PrintToString(names);
  EXPECT_EQ(passes::findPass("nope"), nullptr);
  // The default pipeline only names real passes.
  auto g = parse(kConvRelu);
  passes::PassContext ctx;
  EXPECT_TRUE(passes::runPipeline(*g, passes::defaultPipeline(), ctx).ok());
}

TEST(PassManager, UnknownPassListsValidNames) {
  auto g = parse(kConvRelu);
  passes::PassContext ctx;
  Status s = passes::runPipeline(*g, "dce,frobnicate", ctx);
  ASSERT_FALSE(s.ok());
  std::string m = s.error().str();
  EXPECT_TRUE(contains(m, "unknown pass 'frobnicate'")) << m;
  EXPECT_TRUE(contains(m, "constant-fold, fold-pad")) << m;
  // Nothing ran: validation happens before the first pass.
  EXPECT_TRUE(ctx.stats.empty());
  ctx.printAfter = {"bogus"};
  EXPECT_FALSE(passes::runPipeline(*g, "dce", ctx).ok());
}

TEST(PassManager, PrintsAfterRequestedPassesWithElision) {
  auto g = parse(R"(graph @main(%x: f32[20]) -> (%y) {
  const @b: f32[20] = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]>
  %i = Identity(%x) : f32[20] loc("id")
  %y = Add(%i, @b) : f32[20] loc("add")
  return %y
}
)");
  std::ostringstream os;
  passes::PassContext ctx;
  ctx.printOut = &os;
  ctx.printAfter = {"remove-identity"};
  ASSERT_TRUE(passes::runPipeline(*g, " remove-identity , dce ", ctx).ok());
  std::string out = os.str();
  EXPECT_EQ(out.rfind("// -----// IR after remove-identity //----- //\ngraph @main(", 0), 0u)
      << out;
  EXPECT_FALSE(contains(out, "IR after dce"));
  EXPECT_TRUE(contains(out, "const @b: f32[20] = dense<elided>")) << out;
  EXPECT_TRUE(contains(out, "%y = Add(%x, @b)")) << out;
  EXPECT_EQ(ctx.stats["remove-identity.removed"], 1);

  std::ostringstream all;
  passes::PassContext ctx2;
  ctx2.printOut = &all;
  ctx2.printAfter = {"all"};
  ASSERT_TRUE(passes::runPipeline(*g, "dce,constant-fold", ctx2).ok());
  EXPECT_TRUE(contains(all.str(), "IR after dce //"));
  EXPECT_TRUE(contains(all.str(), "IR after constant-fold //"));
}

TEST(PassManager, VerifiesAfterEachPass) {
  auto g = parse(kConvRelu);
  g->values()[0]->shape = {1, -1, 4, 4}; // make the graph invalid
  passes::PassContext ctx;
  Status s = passes::runPipeline(*g, "dce", ctx);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.error().str(), "IR is invalid after pass 'dce'")) << s.error().str();
  ctx.verifyEach = false;
  EXPECT_TRUE(passes::runPipeline(*g, "dce", ctx).ok());
}

// ---- dce -------------------------------------------------------------------

TEST(Dce, RemovesDeadChainsKeepsOutputs) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[4]) -> (%y, %s1) {
  const @unused: f32[2] = dense<[1.0, 2.0]>
  const @k: f32[4] = dense<[1.0, 2.0, 3.0, 4.0]>
  %a = Add(%x, @k) : f32[4] loc("a")
  %b = Relu(%a) : f32[4] loc("b")
  %y = Sigmoid(%x) : f32[4] loc("y")
  %s0, %s1 = Split(%x) {axis=0} : f32[2], f32[2] loc("split")
  return %y, %s1
}
)",
                            "dce");
  EXPECT_FALSE(contains(r.text, "Add(")) << r.text;
  EXPECT_FALSE(contains(r.text, "Relu(")) << r.text;
  EXPECT_FALSE(contains(r.text, "@unused")) << r.text;
  EXPECT_FALSE(contains(r.text, "@k")) << r.text;
  EXPECT_TRUE(contains(r.text, "%s0, %s1 = Split(%x)")) << r.text;
  EXPECT_EQ(stat(r, "dce.nodes-removed"), 2);
  EXPECT_EQ(stat(r, "dce.values-removed"), 4); // @unused, @k, %a, %b
}

// ---- remove-identity ---------------------------------------------------------

TEST(RemoveIdentity, BypassesAndKeepsOutputNames) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[4]) -> (%out) {
  %a = Relu(%x) : f32[4] loc("r")
  %b = Identity(%a) : f32[4] loc("id1")
  %c, %mask = Dropout(%b) : f32[4], bool[4] loc("drop")
  %d = Sigmoid(%c) : f32[4] loc("s")
  %out = Identity(%d) : f32[4] loc("id2")
  return %out
}
)",
                            "remove-identity");
  EXPECT_FALSE(contains(r.text, "Identity")) << r.text;
  EXPECT_FALSE(contains(r.text, "Dropout")) << r.text;
  EXPECT_TRUE(contains(r.text, "%out = Sigmoid(%a)")) << r.text;
  EXPECT_EQ(stat(r, "remove-identity.removed"), 3);
}

TEST(RemoveIdentity, KeepsWhenOutputsWouldAlias) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[4]) -> (%y, %a, %z, %t) {
  const @k: f32[4] = dense<[1.0, 2.0, 3.0, 4.0]>
  %y = Identity(%x) : f32[4] loc("input-to-output")
  %a = Relu(%x) : f32[4] loc("r")
  %z = Identity(%a) : f32[4] loc("output-to-output")
  %m, %mask = Dropout(%a) : f32[4], bool[4] loc("mask-used")
  %mf = Cast(%mask) {to=1} : f32[4] loc("cast")
  %t = Add(%m, %mf) : f32[4] loc("use")
  return %y, %a, %z, %t
}
)",
                            "remove-identity");
  EXPECT_TRUE(contains(r.text, "%y = Identity(%x)")) << r.text;
  EXPECT_TRUE(contains(r.text, "%z = Identity(%a)")) << r.text;
  EXPECT_TRUE(contains(r.text, "Dropout(%a)")) << r.text;
  EXPECT_EQ(stat(r, "remove-identity.removed"), 0);
}

// ---- constant-fold -------------------------------------------------------------

TEST(ConstantFold, CollapsesShapeChainsAroundReshape) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[2,3,4]) -> (%y, %z) {
  const @i0: i64[] = dense<[0]>
  const @ax: i64[1] = dense<[0]>
  const @m1: i64[1] = dense<[-1]>
  const @twelve: i64[1] = dense<[12]>
  %s = Shape(%x) : i64[3] loc("shape")
  %d0 = Gather(%s, @i0) {axis=0} : i64[] loc("gather")
  %u = Unsqueeze(%d0, @ax) : i64[1] loc("unsq")
  %cat = Concat(%u, @m1) {axis=0} : i64[2] loc("concat")
  %y = Reshape(%x, %cat) {allowzero=0} : f32[2,12] loc("reshape")
  %cat2 = Concat(%u, @twelve) {axis=0} : i64[2] loc("concat2")
  %zs = ConstantOfShape(%cat2) {value=f32[1] dense<[0.5]>} : f32[2,12] loc("cos")
  %z = Add(%y, %zs) : f32[2,12] loc("add")
  return %y, %z
}
)",
                            "constant-fold");
  EXPECT_TRUE(contains(r.text, "%y = Reshape(%x, @cat)")) << r.text;
  EXPECT_TRUE(contains(r.text, "const @cat: i64[2] = dense<[2, -1]>")) << r.text;
  EXPECT_TRUE(contains(r.text, "%z = Add(%y, @zs)")) << r.text;
  EXPECT_FALSE(contains(r.text, "Shape(")) << r.text;
  EXPECT_FALSE(contains(r.text, "Gather(")) << r.text;
  EXPECT_FALSE(contains(r.text, "@i0")) << r.text; // no longer referenced
  EXPECT_EQ(stat(r, "constant-fold.folded"), 6);
  EXPECT_EQ(stat(r, "constant-fold.shape-folded"), 1);
  const Value *zs = r.g->findValue("zs");
  ASSERT_TRUE(zs && zs->isConstant());
  EXPECT_FLOAT_EQ(static_cast<float>(zs->constant->getDouble(23)), 0.5f);
}

TEST(ConstantFold, FoldsWeightTransposeButNotDynamicNodes) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[2,3]) -> (%y) {
  const @w: f32[2,3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  %wt = Transpose(@w) {perm=[1, 0]} : f32[3,2] loc("t")
  %h = MatMul(%x, %wt) : f32[2,2] loc("mm")
  %y = Relu(%h) : f32[2,2] loc("relu")
  return %y
}
)",
                            "constant-fold");
  EXPECT_TRUE(contains(r.text, "const @wt: f32[3,2] = dense<[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]>"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "%h = MatMul(%x, @wt)")) << r.text;
  EXPECT_TRUE(contains(r.text, "%y = Relu(%h)")) << r.text;
  EXPECT_EQ(stat(r, "constant-fold.folded"), 1);
}

// ---- fold-batchnorm ------------------------------------------------------------

const char *kBnParams = R"(
  const @scale: f32[4] = dense<[1.5, 0.5, -1.0, 2.0]>
  const @bias: f32[4] = dense<[0.1, -0.2, 0.3, 0.0]>
  const @mean: f32[4] = dense<[0.5, -0.5, 0.0, 1.0]>
  const @var: f32[4] = dense<[1.0, 0.25, 4.0, 0.5]>
)";

std::string withBn(const std::string &head, const std::string &body) {
  return head + kBnParams + body;
}

TEST(FoldBatchNorm, ConvWithAndWithoutBias) {
  const std::string head = "graph @main(%x: f32[1,4,5,5]) -> (%y, %y2) {\n"
                           "  const @w: f32[4,2,3,3] = dense<[" +
                           [] {
                             std::string s;
                             for (int i = 0; i < 72; ++i)
                               s += (i ? ", " : "") + std::to_string((i * 37 % 19) / 10.0 - 0.9);
                             return s;
                           }() +
                           "]>\n  const @cb: f32[4] = dense<[1.0, 2.0, 3.0, 4.0]>";
  PassRun r = runAndCompare(withBn(head, R"(
  %c = Conv(%x, @w, @cb) {dilations=[1, 1], group=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]} : f32[1,4,5,5] loc("conv")
  %y = BatchNormalization(%c, @scale, @bias, @mean, @var) {epsilon=0.001} : f32[1,4,5,5] loc("bn")
  %c2 = Conv(%x, @w) {dilations=[1, 1], group=2, kernel_shape=[3, 3], pads=[0, 0, 0, 0], strides=[2, 2]} : f32[1,4,2,2] loc("conv2")
  %y2 = BatchNormalization(%c2, @scale, @bias, @mean, @var) : f32[1,4,2,2] loc("bn2")
  return %y, %y2
}
)"),
                            "fold-batchnorm");
  EXPECT_FALSE(contains(r.text, "BatchNormalization")) << r.text;
  EXPECT_TRUE(contains(r.text, "%y = Conv(%x, @w_bn, @cb_bn)")) << r.text;
  EXPECT_TRUE(contains(r.text, "%y2 = Conv(%x, @w_bn_1, @w_bias_bn)")) << r.text;
  EXPECT_FALSE(contains(r.text, "@scale")) << r.text;
  EXPECT_EQ(stat(r, "fold-batchnorm.folded"), 2);
}

TEST(FoldBatchNorm, ConvTransposeGrouped) {
  std::string w;
  for (int i = 0; i < 4 * 2 * 2 * 2; ++i)
    w += (i ? ", " : "") + std::to_string((i % 7) * 0.25 - 0.5);
  PassRun r = runAndCompare(
      withBn("graph @main(%x: f32[1,4,3,3]) -> (%y) {\n  const @w: f32[4,2,2,2] = dense<[" + w +
                 "]>",
             R"(
  %c = ConvTranspose(%x, @w) {dilations=[1, 1], group=2, kernel_shape=[2, 2], pads=[0, 0, 0, 0], strides=[2, 2]} : f32[1,4,6,6] loc("deconv")
  %y = BatchNormalization(%c, @scale, @bias, @mean, @var) : f32[1,4,6,6] loc("bn")
  return %y
}
)"),
      "fold-batchnorm");
  EXPECT_TRUE(contains(r.text, "%y = ConvTranspose(%x, @w_bn, @w_bias_bn)")) << r.text;
  EXPECT_EQ(stat(r, "fold-batchnorm.folded"), 1);
}

TEST(FoldBatchNorm, GemmBothLayouts) {
  PassRun r = runAndCompare(withBn(R"(graph @main(%x: f32[2,3]) -> (%y, %y2) {
  const @b: f32[3,4] = dense<[1.0, -2.0, 0.5, 0.25, 3.0, 1.0, -1.0, 2.0, 0.0, 0.5, 1.5, -0.5]>
  const @bt: f32[4,3] = dense<[1.0, -2.0, 0.5, 0.25, 3.0, 1.0, -1.0, 2.0, 0.0, 0.5, 1.5, -0.5]>
  const @c: f32[1,4] = dense<[0.5, 1.0, -1.0, 2.0]>)",
                                   R"(
  %g = Gemm(%x, @b, @c) {alpha=0.5, beta=2.0} : f32[2,4] loc("gemm")
  %y = BatchNormalization(%g, @scale, @bias, @mean, @var) : f32[2,4] loc("bn")
  %g2 = Gemm(%x, @bt) {transB=1} : f32[2,4] loc("gemm2")
  %y2 = BatchNormalization(%g2, @scale, @bias, @mean, @var) : f32[2,4] loc("bn2")
  return %y, %y2
}
)"),
                            "fold-batchnorm");
  EXPECT_FALSE(contains(r.text, "BatchNormalization")) << r.text;
  EXPECT_TRUE(contains(r.text, "{alpha=0.5, beta=1.0}")) << r.text;
  EXPECT_EQ(stat(r, "fold-batchnorm.folded"), 2);
}

TEST(FoldBatchNorm, LeavesUnsafeCasesAlone) {
  PassRun r = runAndCompare(withBn(R"(graph @main(%x: f32[1,4,2,2], %v: f32[4]) -> (%y, %c, %y2, %y3, %y4) {
  const @w: f32[4,4,1,1] = dense<[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]>)",
                                   R"(
  %c = Conv(%x, @w) {kernel_shape=[1, 1]} : f32[1,4,2,2] loc("shared-output")
  %y = BatchNormalization(%c, @scale, @bias, @mean, @var) : f32[1,4,2,2] loc("bn")
  %y2 = BatchNormalization(%x, @scale, @bias, @mean, @var) : f32[1,4,2,2] loc("standalone")
  %c3 = Conv(%x, @w) {act_min=0.0, kernel_shape=[1, 1]} : f32[1,4,2,2] loc("fused-act")
  %y3 = BatchNormalization(%c3, @scale, @bias, @mean, @var) : f32[1,4,2,2] loc("bn3")
  %c4 = Conv(%x, @w) {kernel_shape=[1, 1]} : f32[1,4,2,2] loc("dynamic-params")
  %vv = Mul(%v, %v) : f32[4] loc("square")
  %y4 = BatchNormalization(%c4, @scale, @bias, @mean, %vv) : f32[1,4,2,2] loc("bn4")
  return %y, %c, %y2, %y3, %y4
}
)"),
                            "fold-batchnorm");
  EXPECT_EQ(stat(r, "fold-batchnorm.folded"), 0);
  EXPECT_FALSE(contains(r.text, "_bn")) << r.text;
}

// ---- fold-pad --------------------------------------------------------------------

TEST(FoldPad, IntoConvAndAveragePool) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[1,2,4,4]) -> (%y, %z) {
  const @pads: i64[8] = dense<[0, 0, 1, 2, 0, 0, 2, 0]>
  const @zero: f32[] = dense<[0.0]>
  const @w: f32[2,2,3,3] = dense<[1.0, 0.5, -1.0, 2.0, 0.0, 1.0, -0.5, 0.25, 1.0, 0.0, 1.0, 2.0, -1.0, 0.5, 0.5, 1.0, 0.0, -2.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, -1.0, 0.0, 1.0, 0.25, 0.75, 1.0, -0.25, 0.0, 2.0, 1.0, -1.0, 0.5]>
  %p = Pad(%x, @pads, @zero) {mode="constant"} : f32[1,2,7,6] loc("pad")
  %y = Conv(%p, @w) {dilations=[1, 1], group=1, kernel_shape=[3, 3], pads=[1, 0, 0, 1], strides=[1, 1]} : f32[1,2,6,5] loc("conv")
  %p2 = Pad(%x, @pads) : f32[1,2,7,6] loc("pad2")
  %z = AveragePool(%p2) {count_include_pad=1, kernel_shape=[2, 2], pads=[0, 0, 0, 0], strides=[2, 2]} : f32[1,2,3,3] loc("pool")
  return %y, %z
}
)",
                            "fold-pad");
  EXPECT_FALSE(contains(r.text, "Pad(")) << r.text;
  EXPECT_TRUE(contains(r.text, "%y = Conv(%x, @w) {dilations=[1, 1], group=1, kernel_shape=[3, 3], "
                               "pads=[2, 2, 2, 1]"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "%z = AveragePool(%x) {count_include_pad=1, kernel_shape=[2, 2], "
                               "pads=[1, 2, 2, 0]"))
      << r.text;
  EXPECT_EQ(stat(r, "fold-pad.folded"), 2);
}

TEST(FoldPad, LeavesUnsafeCasesAlone) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[1,2,4,4]) -> (%a, %b, %c, %d, %e, %p5) {
  const @pads: i64[8] = dense<[0, 0, 1, 1, 0, 0, 1, 1]>
  const @cpads: i64[8] = dense<[0, 1, 1, 1, 0, 0, 1, 1]>
  const @one: f32[] = dense<[1.0]>
  const @w: f32[2,2,1,1] = dense<[1.0, 0.5, -1.0, 2.0]>
  %p1 = Pad(%x, @pads, @one) : f32[1,2,6,6] loc("nonzero")
  %a = Conv(%p1, @w) {kernel_shape=[1, 1]} : f32[1,2,6,6] loc("c1")
  %p2 = Pad(%x, @pads) : f32[1,2,6,6] loc("maxpool")
  %b = MaxPool(%p2) {kernel_shape=[2, 2], strides=[2, 2]} : f32[1,2,3,3] loc("mp")
  %p3 = Pad(%x, @cpads) : f32[1,3,6,6] loc("channel")
  %c = AveragePool(%p3) {count_include_pad=1, kernel_shape=[2, 2], strides=[2, 2]} : f32[1,3,3,3] loc("ap")
  %p4 = Pad(%x, @pads) : f32[1,2,6,6] loc("exclude-pad")
  %d = AveragePool(%p4) {kernel_shape=[2, 2], strides=[2, 2]} : f32[1,2,3,3] loc("ap2")
  %p5 = Pad(%x, @pads) : f32[1,2,6,6] loc("two-uses")
  %e = Conv(%p5, @w) {kernel_shape=[1, 1]} : f32[1,2,6,6] loc("c5")
  return %a, %b, %c, %d, %e, %p5
}
)",
                            "fold-pad");
  EXPECT_EQ(stat(r, "fold-pad.folded"), 0);
  EXPECT_TRUE(contains(r.text, "%a = Conv(%p1")) << r.text;
}

// ---- fuse-activation ---------------------------------------------------------------

TEST(FuseActivation, FusesClampsIntoProducers) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[2,3], %x4: f32[1,2,3,3]) -> (%r, %r6, %m6, %cl, %cv) {
  const @w: f32[3,3] = dense<[1.0, -2.0, 0.5, 0.25, 3.0, 1.0, -1.0, 2.0, 0.0]>
  const @zero: f32[] = dense<[0.0]>
  const @six: f32[] = dense<[6.0]>
  const @lo: f32[] = dense<[-1.0]>
  const @hi: f32[] = dense<[1.5]>
  const @cw: f32[2,2,1,1] = dense<[1.0, 0.5, -1.0, 2.0]>
  %g = Gemm(%x, @w) : f32[2,3] loc("gemm")
  %r = Relu(%g) : f32[2,3] loc("relu")
  %mm = MatMul(%x, @w) : f32[2,3] loc("matmul")
  %r6 = Clip(%mm, @zero, @six) : f32[2,3] loc("relu6")
  %ad = Add(%x, %x) : f32[2,3] loc("add")
  %mx = Max(@zero, %ad) : f32[2,3] loc("max")
  %m6 = Min(%mx, @six) : f32[2,3] loc("min")
  %mm2 = MatMul(%x, @w) : f32[2,3] loc("matmul2")
  %cl = Clip(%mm2, _, @hi) : f32[2,3] loc("clip-hi")
  %c = Conv(%x4, @cw) {act_min=-1.0, kernel_shape=[1, 1]} : f32[1,2,3,3] loc("conv")
  %cv = Clip(%c, @lo, @hi) : f32[1,2,3,3] loc("clip")
  return %r, %r6, %m6, %cl, %cv
}
)",
                            "fuse-activation");
  EXPECT_TRUE(contains(r.text, "%r = Gemm(%x, @w) {act_min=0.0}")) << r.text;
  EXPECT_TRUE(contains(r.text, "%r6 = MatMul(%x, @w) {act_max=6.0, act_min=0.0}")) << r.text;
  EXPECT_TRUE(contains(r.text, "%m6 = Add(%x, %x) {act_max=6.0, act_min=0.0}")) << r.text;
  EXPECT_TRUE(contains(r.text, "%cl = MatMul(%x, @w) {act_max=1.5}")) << r.text;
  EXPECT_TRUE(contains(r.text, "%cv = Conv(%x4, @cw) {act_max=1.5, act_min=-1.0")) << r.text;
  EXPECT_FALSE(contains(r.text, "Relu(")) << r.text;
  EXPECT_FALSE(contains(r.text, "Clip(")) << r.text;
  EXPECT_EQ(stat(r, "fuse-activation.fused"), 6);
}

TEST(FuseActivation, LeavesUnsafeCasesAlone) {
  PassRun r = runAndCompare(R"(graph @main(%x: f32[2,3], %lo: f32[]) -> (%a, %g, %b, %c, %d) {
  const @w: f32[3,3] = dense<[1.0, -2.0, 0.5, 0.25, 3.0, 1.0, -1.0, 2.0, 0.0]>
  const @lo2: f32[] = dense<[2.0]>
  const @hi2: f32[] = dense<[1.0]>
  %g = Gemm(%x, @w) : f32[2,3] loc("shared")
  %a = Relu(%g) : f32[2,3] loc("relu")
  %m = MatMul(%x, @w) : f32[2,3] loc("mm")
  %b = Sigmoid(%m) : f32[2,3] loc("sigmoid")
  %m2 = MatMul(%x, @w) : f32[2,3] loc("mm2")
  %c = Clip(%m2, %lo) : f32[2,3] loc("dynamic-bound")
  %s = Sub(%x, %x) : f32[2,3] loc("sub")
  %d0 = Relu(%s) : f32[2,3] loc("not-a-producer")
  %m3 = MatMul(%d0, @w) : f32[2,3] loc("mm3")
  %d = Clip(%m3, @lo2, @hi2) : f32[2,3] loc("empty-range")
  return %a, %g, %b, %c, %d
}
)",
                            "fuse-activation");
  EXPECT_EQ(stat(r, "fuse-activation.fused"), 0);
  EXPECT_FALSE(contains(r.text, "act_m")) << r.text;
}

// ---- the default pipeline on a PyTorch-like export ---------------------------------

TEST(DefaultPipeline, PreservesResults) {
  PassRun r = runAndCompare(withBn(R"(graph @main(%x: f32[1,2,4,4]) -> (%out) {
  const @w: f32[4,2,1,1] = dense<[1.0, 0.5, -1.0, 2.0, 0.25, -0.5, 1.5, 1.0]>
  const @pads: i64[8] = dense<[0, 0, 1, 1, 0, 0, 1, 1]>
  const @fw: f32[4,2] = dense<[1.0, -1.0, 0.5, 0.25, 2.0, 0.0, -0.5, 1.0]>
  const @i1: i64[] = dense<[0]>
  const @ax: i64[1] = dense<[0]>
  const @m1: i64[1] = dense<[-1]>
  const @six: f32[] = dense<[6.0]>
  const @zero: f32[] = dense<[0.0]>)",
                                   R"(
  %in = Identity(%x) : f32[1,2,4,4] loc("id")
  %p = Pad(%in, @pads) : f32[1,2,6,6] loc("pad")
  %c = Conv(%p, @w) {kernel_shape=[1, 1], pads=[0, 0, 0, 0]} : f32[1,4,6,6] loc("conv")
  %bn = BatchNormalization(%c, @scale, @bias, @mean, @var) : f32[1,4,6,6] loc("bn")
  %act = Clip(%bn, @zero, @six) : f32[1,4,6,6] loc("relu6")
  %gp = GlobalAveragePool(%act) : f32[1,4,1,1] loc("gap")
  %s = Shape(%gp) : i64[4] loc("shape")
  %d = Gather(%s, @i1) {axis=0} : i64[] loc("gather")
  %u = Unsqueeze(%d, @ax) : i64[1] loc("unsq")
  %cat = Concat(%u, @m1) {axis=0} : i64[2] loc("cat")
  %flat = Reshape(%gp, %cat) : f32[1,4] loc("reshape")
  %drop = Dropout(%flat) : f32[1,4] loc("dropout")
  %out = Gemm(%drop, @fw) : f32[1,2] loc("fc")
  return %out
}
)"),
                            passes::defaultPipeline());
  EXPECT_TRUE(contains(r.text, "%act = Conv(%x, @w_bn, @w_bias_bn) {act_max=6.0, act_min=0.0, "
                               "kernel_shape=[1, 1], pads=[1, 1, 1, 1]}"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "%flat = Reshape(%gp, @cat)")) << r.text;
  EXPECT_TRUE(contains(r.text, "%out = Gemm(%flat, @fw)")) << r.text;
  EXPECT_EQ(r.g->nodes().size(), 4u) << r.text;
  EXPECT_EQ(stat(r, "remove-identity.removed"), 2);
}

} // namespace

// fold-qdq: Slice and Gather between DQ and Q with equal parameters become
// int8 data movement (bit-exact with the QDQ form).
TEST(FoldQdq, SliceAndGatherBecomeInt8) {
  const char *text = R"(graph @main(%x: f32[1,4,6]) -> (%y, %g) {
  const @s: f32[] = dense<[0.02]>
  const @z: i8[] = dense<[3]>
  const @st: i64[1] = dense<[1]>
  const @en: i64[1] = dense<[5]>
  const @ax: i64[1] = dense<[2]>
  const @ix: i64[2] = dense<[3, 0]>
  %xq = QuantizeLinear(%x, @s, @z) : i8[1,4,6] loc("qx")
  %xd = DequantizeLinear(%xq, @s, @z) : f32[1,4,6] loc("dqx")
  %sl = Slice(%xd, @st, @en, @ax) : f32[1,4,4] loc("slice")
  %slq = QuantizeLinear(%sl, @s, @z) : i8[1,4,4] loc("qsl")
  %y = DequantizeLinear(%slq, @s, @z) : f32[1,4,4] loc("dqy")
  %ga = Gather(%xd, @ix) {axis=1} : f32[1,2,6] loc("gather")
  %gaq = QuantizeLinear(%ga, @s, @z) : i8[1,2,6] loc("qga")
  %g = DequantizeLinear(%gaq, @s, @z) : f32[1,2,6] loc("dqg")
  return %y, %g
})";
  PassRun r = runAndCompare(text, "fold-qdq,dce");
  EXPECT_EQ(stat(r, "fold-qdq.folded"), 2) << r.text;
  EXPECT_TRUE(contains(r.text, "Slice(%xq")) << r.text;
  EXPECT_TRUE(contains(r.text, "Gather(%xq")) << r.text;
  // Different output parameters: not a pure data movement, stays float.
  std::string other = text;
  other.replace(other.find("QuantizeLinear(%sl, @s, @z)"), 27, "QuantizeLinear(%sl, @s2, @z)");
  other.replace(other.find("%y = DequantizeLinear(%slq, @s, @z)"), 35,
                "%y = DequantizeLinear(%slq, @s2, @z)");
  other.replace(other.find("  const @z"), 0, "  const @s2: f32[] = dense<[0.04]>\n");
  PassRun r2 = runAndCompare(other, "fold-qdq,dce");
  EXPECT_EQ(stat(r2, "fold-qdq.folded"), 1) << r2.text;
  EXPECT_TRUE(contains(r2.text, "Slice(%xd")) << r2.text;
}

// The integer Softmax works along the last axis: a QDQ Softmax over another
// axis stays float (it used to become a typed node nothing could run).
TEST(FoldQdq, SoftmaxOnlyOnTheLastAxis) {
  const char *text = R"(graph @main(%x: f32[1,3,4]) -> (%y) {
  const @s: f32[] = dense<[0.05]>
  const @z: i8[] = dense<[0]>
  const @so: f32[] = dense<[0.00390625]>
  const @zo: i8[] = dense<[-128]>
  %xq = QuantizeLinear(%x, @s, @z) : i8[1,3,4] loc("qx")
  %xd = DequantizeLinear(%xq, @s, @z) : f32[1,3,4] loc("dqx")
  %sm = Softmax(%xd) {axis=1} : f32[1,3,4] loc("softmax")
  %smq = QuantizeLinear(%sm, @so, @zo) : i8[1,3,4] loc("qsm")
  %y = DequantizeLinear(%smq, @so, @zo) : f32[1,3,4] loc("dqy")
  return %y
})";
  PassRun r = runAndCompare(text, "fold-qdq,dce");
  EXPECT_EQ(stat(r, "fold-qdq.folded"), 0) << r.text;
  EXPECT_TRUE(contains(r.text, "Softmax(%xd")) << r.text;
  std::string last = text;
  last.replace(last.find("{axis=1}"), 8, "{axis=-1}");
  PassRun r2 = runAndCompare(last, "fold-qdq,dce");
  EXPECT_EQ(stat(r2, "fold-qdq.folded"), 1) << r2.text;
}

// fold-qdq: a Split whose every output goes to a QuantizeLinear with the
// input's parameters becomes one int8 Split; one output with other
// parameters keeps the whole Split float.
TEST(FoldQdq, SplitBecomesInt8WhenEveryOutputKeepsTheParams) {
  const char *text = R"(graph @main(%x: f32[1,6,2]) -> (%a, %b) {
  const @s: f32[] = dense<[0.03]>
  const @z: i8[] = dense<[-5]>
  const @s2: f32[] = dense<[0.05]>
  const @sp: i64[2] = dense<[2, 4]>
  %xq = QuantizeLinear(%x, @s, @z) : i8[1,6,2] loc("qx")
  %xd = DequantizeLinear(%xq, @s, @z) : f32[1,6,2] loc("dqx")
  %p0, %p1 = Split(%xd, @sp) {axis=1} : f32[1,2,2], f32[1,4,2] loc("split")
  %p0q = QuantizeLinear(%p0, @s, @z) : i8[1,2,2] loc("q0")
  %a = DequantizeLinear(%p0q, @s, @z) : f32[1,2,2] loc("dq0")
  %p1q = QuantizeLinear(%p1, @s, @z) : i8[1,4,2] loc("q1")
  %b = DequantizeLinear(%p1q, @s, @z) : f32[1,4,2] loc("dq1")
  return %a, %b
})";
  PassRun r = runAndCompare(text, "fold-qdq,dce");
  EXPECT_EQ(stat(r, "fold-qdq.folded"), 1) << r.text;
  EXPECT_TRUE(contains(r.text, "Split(%xq")) << r.text;
  std::string other = text;
  other.replace(other.find("QuantizeLinear(%p1, @s, @z)"), 27, "QuantizeLinear(%p1, @s2, @z)");
  other.replace(other.find("DequantizeLinear(%p1q, @s, @z)"), 30, "DequantizeLinear(%p1q, @s2, @z)");
  PassRun r2 = runAndCompare(other, "fold-qdq,dce");
  EXPECT_EQ(stat(r2, "fold-qdq.folded"), 0) << r2.text;
  EXPECT_TRUE(contains(r2.text, "Split(%xd")) << r2.text;
}

// fold-qdq: a standalone Relu / Clip (constant bounds) becomes an int8 clamp.
TEST(FoldQdq, StandaloneReluAndClip) {
  const char *text = R"(graph @main(%x: f32[2,5]) -> (%a, %b) {
  const @s: f32[] = dense<[0.02]>
  const @z: i8[] = dense<[10]>
  const @so: f32[] = dense<[0.01]>
  const @zo: i8[] = dense<[-128]>
  const @lo: f32[] = dense<[-0.5]>
  const @hi: f32[] = dense<[0.7]>
  %xq = QuantizeLinear(%x, @s, @z) : i8[2,5] loc("qx")
  %xd = DequantizeLinear(%xq, @s, @z) : f32[2,5] loc("dqx")
  %r = Relu(%xd) : f32[2,5] loc("relu")
  %rq = QuantizeLinear(%r, @so, @zo) : i8[2,5] loc("qr")
  %a = DequantizeLinear(%rq, @so, @zo) : f32[2,5] loc("dqa")
  %c = Clip(%xd, @lo, @hi) : f32[2,5] loc("clip")
  %cq = QuantizeLinear(%c, @s, @z) : i8[2,5] loc("qc")
  %b = DequantizeLinear(%cq, @s, @z) : f32[2,5] loc("dqb")
  return %a, %b
})";
  PassRun r = runAndCompare(text, "fold-qdq,dce");
  EXPECT_EQ(stat(r, "fold-qdq.folded"), 2) << r.text;
  EXPECT_TRUE(contains(r.text, "Relu(%xq")) << r.text;
  EXPECT_TRUE(contains(r.text, "Clip(%xq")) << r.text;
}
