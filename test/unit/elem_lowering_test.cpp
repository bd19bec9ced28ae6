//===- elem_lowering_test.cpp - CPU lowering of the element-wise, activation,
//    softmax, reduce, data-movement, resize and cast ops ------------------===//
//
// The lowerings are checked by executing their loop-IR calls on a test arena
// (ElemLoweringExec.h; kernels linked from npucc_kernels_host), against naive
// references and against the ONNX backend node test data (shape operands such
// as Slice starts or Resize scales are made constant). The kernels themselves
// are tested directly in kernels_elem_test.cpp.
//
//===----------------------------------------------------------------------===//
#include "CiSkip.h"
#include "ElemLoweringExec.h"
#include "OrtResizeValues.h"

#include "npucc/interp/Interpreter.h"

namespace {

// ---- lowering ------------------------------------------------------------

TEST(ElemLowering, BroadcastPatternsAllOps) {
  struct Pat {
    Shape a, b, y;
    const char *suffix;
  } pats[] = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}, ""},
      {{2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5}, "_rb"},
      {{2, 3, 4, 5}, {5}, {2, 3, 4, 5}, "_rb"},
      {{2, 3, 4, 5}, {1}, {2, 3, 4, 5}, "_rb"},
      {{3, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}, "_lb"},
      {{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}, "_nd"},
      {{4, 1}, {1, 5}, {4, 5}, "_nd"},
      {{}, {2, 3}, {2, 3}, "_lb"},
  };
  struct Op {
    OpKind k;
    std::function<float(float, float)> ref;
  } ops[] = {{OpKind::Add, [](float a, float b) { return a + b; }},
             {OpKind::Sub, [](float a, float b) { return a - b; }},
             {OpKind::Mul, [](float a, float b) { return a * b; }},
             {OpKind::Div, [](float a, float b) { return a / b; }},
             {OpKind::Max, [](float a, float b) { return std::max(a, b); }},
             {OpKind::Min, [](float a, float b) { return std::min(a, b); }},
             {OpKind::PRelu, [](float a, float b) { return a < 0 ? a * b : a; }}};
  unsigned seed = 100;
  for (const Pat &p : pats)
    for (const Op &op : ops)
      for (bool inPlace : {false, true}) {
        if (op.k == OpKind::PRelu && p.a != p.y)
          continue; // PRelu broadcasts the slope only
        if (inPlace && p.a != p.y)
          continue;
        Graph g;
        Value *a = g.addValue("a", DType::F32, p.a), *b = g.addValue("b", DType::F32, p.b);
        Value *y = g.addValue("y", DType::F32, p.y);
        Node *n = g.addNode(op.k, "n0", {a, b}, {y});
        Tensor ta = randTensor(p.a, seed++), tb = randTensor(p.b, seed++);
        std::vector<Tensor> outs;
        std::vector<lir::Instr> body;
        Status s = runNode(*n, {ta, tb}, outs, inPlace, &body);
        ASSERT_TRUE(s) << s.error().str();
        ASSERT_EQ(body.size(), 1u);
        EXPECT_TRUE(body[0].callee.size() >= 3 &&
                    body[0].callee.compare(body[0].callee.size() - std::strlen(p.suffix),
                                           std::string::npos, p.suffix) == 0)
            << body[0].callee;
        EXPECT_TRUE(sameTensor(outs[0], refBroadcast(ta, tb, p.y, op.ref)))
            << opName(op.k) << " " << ir::shapeStr(p.a) << " , " << ir::shapeStr(p.b)
            << (inPlace ? " in place" : "");
      }
}

TEST(ElemLowering, VariadicMaxAndFusedClamp) {
  for (Shape s2 : {Shape{1, 4}, Shape{4}}) {
    Graph g;
    Value *a = g.addValue("a", DType::F32, {1}), *b = g.addValue("b", DType::F32, s2);
    Value *c = g.addValue("c", DType::F32, {3, 4}), *y = g.addValue("y", DType::F32, {3, 4});
    Node *n = g.addNode(OpKind::Max, "max3", {a, b, c}, {y});
    Tensor ta = randTensor({1}, 1), tb = randTensor(s2, 2), tc = randTensor({3, 4}, 3);
    std::vector<Tensor> outs;
    ASSERT_TRUE(runNode(*n, {ta, tb, tc}, outs));
    auto mx = [](float p, float q) { return std::max(p, q); };
    Tensor ab = refBroadcast(ta, tb, s2, mx);
    EXPECT_TRUE(sameTensor(outs[0], refBroadcast(ab, tc, {3, 4}, mx)));
  }
  Graph g;
  Value *a = g.addValue("a", DType::F32, {2, 8}), *b = g.addValue("b", DType::F32, {8});
  Value *y = g.addValue("y", DType::F32, {2, 8});
  Node *n = g.addNode(OpKind::Add, "add_relu6", {a, b}, {y});
  n->attrs["act_min"] = 0.0f;
  n->attrs["act_max"] = 6.0f;
  Tensor ta = Tensor::fromFloats({2, 8}, randf(16, 4, -8, 8)), tb = randTensor({8}, 5);
  std::vector<Tensor> outs;
  ASSERT_TRUE(runNode(*n, {ta, tb}, outs, true));
  EXPECT_TRUE(sameTensor(outs[0], refBroadcast(ta, tb, {2, 8}, [](float p, float q) {
                           return std::min(6.0f, std::max(0.0f, p + q));
                         })));
}

TEST(ElemLowering, ClipConstantAndRuntimeBounds) {
  Graph g;
  Value *x = g.addValue("x", DType::F32, {10});
  Value *lo = g.addConstant("lo", Tensor::fromFloats({}, {-0.5f}));
  Value *y = g.addValue("y", DType::F32, {10});
  Node *n = g.addNode(OpKind::Clip, "clip0", {x, lo, nullptr}, {y});
  Tensor tx = randTensor({10}, 6);
  std::vector<Tensor> outs;
  ASSERT_TRUE(runNode(*n, {tx}, outs, true));
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(outs[0].data<float>()[i], std::max(-0.5f, tx.data<float>()[i]));
  // A runtime max (second runtime input of the node).
  Value *hi = g.addValue("hi", DType::F32, {});
  Value *y2 = g.addValue("y2", DType::F32, {10});
  Node *n2 = g.addNode(OpKind::Clip, "clip_dyn", {x, nullptr, hi}, {y2});
  std::vector<lir::Instr> body;
  ASSERT_TRUE(runNode(*n2, {tx, Tensor::fromFloats({}, {0.25f})}, outs, false, &body));
  EXPECT_EQ(body[0].callee, "npucc_clip_f32_dyn");
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(outs[0].data<float>()[i], std::min(0.25f, tx.data<float>()[i]));
  // A bound of another type is a node-named error.
  Value *bad = g.addValue("bad", DType::I64, {});
  Value *y3 = g.addValue("y3", DType::F32, {10});
  Node *n3 = g.addNode(OpKind::Clip, "clip_bad", {x, bad}, {y3});
  TestCtx ctx;
  Status s = lower::lowerActivationFamily(*n3, ctx, body);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().node, "clip_bad");
}

TEST(ElemLowering, TransposeAllPermutations) {
  Shape s = {2, 3, 4, 5};
  std::vector<int64_t> perm = {0, 1, 2, 3};
  Tensor tx = randTensor(s, 7);
  do {
    Graph g;
    Shape so;
    for (int64_t p : perm)
      so.push_back(s[size_t(p)]);
    Value *x = g.addValue("x", DType::F32, s), *y = g.addValue("y", DType::F32, so);
    Node *n = g.addNode(OpKind::Transpose, "tr", {x}, {y});
    n->attrs["perm"] = perm;
    std::vector<Tensor> outs;
    std::vector<lir::Instr> body;
    ASSERT_TRUE(runNode(*n, {tx}, outs, false, &body));
    if (perm == std::vector<int64_t>{0, 2, 3, 1}) {
      EXPECT_EQ(body[0].callee, "npucc_transpose2d"); // NCHW -> NHWC
    }
    for (int64_t i = 0; i < outs[0].numElements(); ++i) {
      int64_t rem = i, src = 0;
      int64_t o[4];
      for (int k = 3; k >= 0; --k) {
        o[k] = rem % so[size_t(k)];
        rem /= so[size_t(k)];
      }
      int64_t xi[4];
      for (int k = 0; k < 4; ++k)
        xi[perm[size_t(k)]] = o[k];
      src = ((xi[0] * 3 + xi[1]) * 4 + xi[2]) * 5 + xi[3];
      ASSERT_EQ(outs[0].data<float>()[i], tx.data<float>()[src]);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
}

/// numpy.pad reference: bounce / wrap / clamp step by step.
int64_t refPadIndex(int64_t i, int64_t n, const std::string &mode) {
  if (i >= 0 && i < n)
    return i;
  if (mode == "constant")
    return -1;
  if (mode == "edge")
    return i < 0 ? 0 : n - 1;
  if (mode == "wrap") {
    while (i < 0)
      i += n;
    return i % n;
  }
  if (n == 1)
    return 0;
  while (i < 0 || i >= n)
    i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

TEST(ElemLowering, PadAllModes) {
  Shape s = {2, 3, 4};
  std::vector<int64_t> pads = {0, 2, 5, 1, 3, -1}; // begins, ends (a negative end crops)
  Tensor tx = randTensor(s, 8);
  for (std::string mode : {"constant", "edge", "reflect", "wrap"}) {
    Graph g;
    Shape so = {2 + 0 + 1, 3 + 2 + 3, 4 + 5 - 1};
    Value *x = g.addValue("x", DType::F32, s), *y = g.addValue("y", DType::F32, so);
    Value *p = g.addConstant("pads", Tensor::fromInts(DType::I64, {6}, pads));
    Value *cv = g.addConstant("cv", Tensor::fromFloats({}, {1.5f}));
    Node *n = g.addNode(OpKind::Pad, "pad", {x, p, cv}, {y});
    n->attrs["mode"] = mode;
    std::vector<Tensor> outs;
    Status st = runNode(*n, {tx}, outs);
    ASSERT_TRUE(st) << st.error().str();
    for (int64_t a = 0; a < so[0]; ++a)
      for (int64_t b = 0; b < so[1]; ++b)
        for (int64_t c = 0; c < so[2]; ++c) {
          int64_t i = refPadIndex(a - 0, 2, mode), j = refPadIndex(b - 2, 3, mode),
                  k = refPadIndex(c - 5, 4, mode);
          float want = (i < 0 || j < 0 || k < 0) ? 1.5f : tx.data<float>()[(i * 3 + j) * 4 + k];
          ASSERT_EQ(outs[0].data<float>()[(a * so[1] + b) * so[2] + c], want)
              << mode << " at " << a << "," << b << "," << c;
        }
  }
}

TEST(ElemLowering, ReduceMeanPatterns) {
  Shape s = {2, 3, 4, 5};
  Tensor tx = randTensor(s, 9);
  for (std::vector<int64_t> axes : {std::vector<int64_t>{1, 3}, {2, 3}, {-1}, {0}, {}, {0, 2, 3}}) {
    for (int64_t keep : {0, 1}) {
      Shape so;
      std::vector<bool> red(4, axes.empty());
      for (int64_t a : axes)
        red[size_t(a < 0 ? a + 4 : a)] = true;
      for (size_t k = 0; k < 4; ++k) {
        if (!red[k])
          so.push_back(s[k]);
        else if (keep)
          so.push_back(1);
      }
      Graph g;
      Value *x = g.addValue("x", DType::F32, s), *y = g.addValue("y", DType::F32, so);
      Node *n = g.addNode(OpKind::ReduceMean, "rm", {x}, {y});
      if (!axes.empty())
        n->attrs["axes"] = axes;
      n->attrs["keepdims"] = keep;
      std::vector<Tensor> outs;
      ASSERT_TRUE(runNode(*n, {tx}, outs));
      std::vector<double> sum(size_t(outs[0].numElements()), 0.0);
      int64_t cnt = tx.numElements() / outs[0].numElements();
      for (int64_t i = 0; i < tx.numElements(); ++i) {
        int64_t rem = i, o = 0;
        int64_t idx[4];
        for (int k = 3; k >= 0; --k) {
          idx[k] = rem % s[size_t(k)];
          rem /= s[size_t(k)];
        }
        for (int k = 0; k < 4; ++k)
          if (!red[size_t(k)])
            o = o * s[size_t(k)] + idx[k];
        sum[size_t(o)] += tx.data<float>()[i];
      }
      for (size_t o = 0; o < sum.size(); ++o)
        ASSERT_TRUE(near(outs[0].data<float>()[o], sum[o] / double(cnt), 1e-4));
    }
  }
}

// ---- ONNX backend node tests ---------------------------------------------

const char *NodeDir = "/usr/share/libonnx-testdata/data/node/";

ir::Attribute convertAttr(const ::onnx::AttributeProto &a) {
  switch (a.type()) {
  case ::onnx::AttributeProto::INT:
    return int64_t(a.i());
  case ::onnx::AttributeProto::FLOAT:
    return a.f();
  case ::onnx::AttributeProto::STRING:
    return a.s();
  case ::onnx::AttributeProto::INTS:
    return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  case ::onnx::AttributeProto::FLOATS:
    return std::vector<float>(a.floats().begin(), a.floats().end());
  default:
    return std::string("<unsupported>");
  }
}

/// Builds the one-node graph of a node test; every input but the first is a
/// constant. Returns false (with a reason) when the case does not apply.
bool runOnnxCase(const std::string &name, std::string &why) {
  std::string dir = std::string(NodeDir) + name;
  ::onnx::ModelProto m;
  std::ifstream f(dir + "/model.onnx", std::ios::binary);
  if (!f || !m.ParseFromIstream(&f) || m.graph().node_size() < 1) {
    why = "cannot read the model";
    return false;
  }
  const ::onnx::NodeProto &np = m.graph().node(m.graph().node_size() - 1);
  auto kind = ir::opFromName(np.op_type(), np.domain());
  if (!kind) {
    why = "unknown op";
    return false;
  }
  Graph g;
  std::map<std::string, Value *> vals;
  std::vector<Tensor> runtime;
  for (int i = 0; i < m.graph().input_size(); ++i) {
    auto t =
        npucc::onnx::readTensorProto(dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb");
    if (!t) {
      why = "input: " + t.error().str();
      return false;
    }
    const std::string &vn = m.graph().input(i).name();
    if (i == 0) {
      vals[vn] = g.addValue(vn, t->dtype(), t->shape());
      runtime.push_back(*t);
    } else {
      vals[vn] = g.addConstant(vn, *t);
    }
  }
  for (int i = 0; i + 1 < m.graph().node_size(); ++i) { // leading Constant nodes
    const ::onnx::NodeProto &c = m.graph().node(i);
    if (c.op_type() != "Constant" || c.attribute_size() != 1 || !c.attribute(0).has_t()) {
      why = "not a one-node model";
      return false;
    }
    std::string tmp = ::testing::TempDir() + "/kelem_const.pb";
    std::ofstream(tmp, std::ios::binary) << c.attribute(0).t().SerializeAsString();
    auto t = npucc::onnx::readTensorProto(tmp);
    if (!t) {
      why = "constant: " + t.error().str();
      return false;
    }
    vals[c.output(0)] = g.addConstant(c.output(0), *t);
  }
  std::vector<Value *> ins, outs;
  for (const std::string &in : np.input())
    ins.push_back(in.empty() ? nullptr : vals.at(in));
  std::vector<Tensor> expected;
  for (int i = 0; i < np.output_size(); ++i) {
    auto t =
        npucc::onnx::readTensorProto(dir + "/test_data_set_0/output_" + std::to_string(i) + ".pb");
    if (!t) {
      why = "output: " + t.error().str();
      return false;
    }
    outs.push_back(g.addValue(np.output(i), t->dtype(), t->shape()));
    expected.push_back(*t);
  }
  Node *n = g.addNode(*kind, name, ins, outs);
  for (const auto &a : np.attribute())
    n->attrs[a.name()] = convertAttr(a);
  std::vector<Tensor> got;
  Status s = runNode(*n, runtime, got);
  if (!s) {
    why = s.error().str();
    return false;
  }
  auto ort = test::onnxRuntimeResizeValues().find(name);
  for (size_t i = 0; i < expected.size(); ++i) {
    if (ort != test::onnxRuntimeResizeValues().end()) { // npucc follows ONNX Runtime here
      EXPECT_FALSE(sameTensor(got[i], expected[i], 1e-4)) << name << ": data agree now";
      expected[i] = Tensor::fromFloats(expected[i].shape(), ort->second);
    }
    auto r = sameTensor(got[i], expected[i], 1e-4);
    EXPECT_TRUE(r) << name << " output " << i;
  }
  return true;
}

TEST(ElemLowering, OnnxNodeTests) {
  if (!std::filesystem::exists(NodeDir))
    NPUCC_SKIP() << "no ONNX node test data";
  // Cases that are expected to be rejected by the lowering (with a diagnostic).
  const std::set<std::string> unsupported = {"test_resize_tf_crop_and_resize",
                                             "test_reduce_mean_empty_set",
                                             "test_softmax_example_expanded"};
  const char *prefixes[] = {
      "test_add",          "test_sub",         "test_mul",         "test_div",       "test_max_",
      "test_min_",         "test_prelu",       "test_relu",        "test_leakyrelu", "test_clip",
      "test_sigmoid",      "test_hardsigmoid", "test_hardswish",   "test_tanh",      "test_softmax",
      "test_reduce_mean",  "test_transpose",   "test_concat",      "test_slice",     "test_split",
      "test_constant_pad", "test_edge_pad",    "test_reflect_pad", "test_gather_",   "test_resize",
      "test_cast_",        "test_shape"};
  std::set<std::string> ran;
  std::vector<std::string> rejected;
  for (const auto &e : std::filesystem::directory_iterator(NodeDir)) {
    std::string name = e.path().filename().string();
    bool match = false;
    for (const char *p : prefixes)
      match = match || name.rfind(p, 0) == 0;
    if (!match || name.find("expanded") != std::string::npos ||
        name.find("cubic") != std::string::npos || name.find("FLOAT16") != std::string::npos ||
        name.find("float16") != std::string::npos || name.find("elements") != std::string::npos ||
        name.find("STRING") != std::string::npos || name.find("FLOAT8") != std::string::npos ||
        name.find("INT4") != std::string::npos || name.find("BFLOAT") != std::string::npos)
      continue;
    std::string why;
    if (runOnnxCase(name, why))
      ran.insert(name);
    else if (!unsupported.count(name))
      rejected.push_back(name + ": " + why);
  }
  EXPECT_GT(ran.size(), 140u);
  for (const char *must :
       {"test_slice_neg_steps", "test_slice_end_out_of_bounds", "test_edge_pad", "test_reflect_pad",
        "test_constant_pad", "test_split_variable_parts_2d",
        "test_resize_upsample_sizes_nearest_ceil_half_pixel",
        "test_resize_downsample_scales_linear_align_corners",
        "test_resize_downsample_sizes_linear_pytorch_half_pixel", "test_gather_negative_indices",
        "test_cast_FLOAT_to_DOUBLE", "test_max_uint64", "test_add_uint8", "test_prelu_broadcast"})
    EXPECT_TRUE(ran.count(must)) << must << " did not run";
  for (const std::string &r : rejected)
    ADD_FAILURE() << r;
}

// ---- Resize as ONNX Runtime computes it ---------------------------------
//
// The expected values are ONNX Runtime's (onnxruntime-node 1.x, graph
// optimizations disabled), taken once by hand from the models these cases
// build; they are not computed by npucc. The reference interpreter and the
// CPU lowering (its index tables and kernels) must both give them. Issue 23:
// with align_corners and a non-integer scale npucc took the resized length as
// input size x scale (10 steps off), and in nearest mode with
// tf_half_pixel_for_nn and ceil it transformed the scale-1 axes too, so that
// channel c read channel c + 1. docs/ir.md, "Resize".

struct Case {
  const char *name, *mode, *ctm, *nearest;
  Shape in;
  std::vector<float> scales;
  Shape out;
  std::vector<float> want; // ONNX Runtime's output for input 0, 1, 2, ...
};

const Case kCases[] = {
    // 4 -> floor(2.4) = 2: x = o * 3 / (2 - 1), not o * 3 / (2.4 - 1).
    {"ac_nearest_down", "nearest", "align_corners", "round_prefer_floor", {1, 1, 1, 4},
     {1, 1, 1, 0.6f}, {1, 1, 1, 2}, {0, 3}},
    {"ac_linear_down", "linear", "align_corners", "round_prefer_floor", {1, 1, 1, 4},
     {1, 1, 1, 0.6f}, {1, 1, 1, 2}, {0, 3}},
    // 4 -> floor(6.8) = 6: x = o * 3 / 5.
    {"ac_nearest_up", "nearest", "align_corners", "round_prefer_floor", {1, 1, 1, 4},
     {1, 1, 1, 1.7f}, {1, 1, 1, 6}, {0, 1, 1, 2, 2, 3}},
    {"ac_linear_up", "linear", "align_corners", "round_prefer_floor", {1, 1, 1, 4},
     {1, 1, 1, 1.7f}, {1, 1, 1, 6}, {0, 0.6f, 1.2f, 1.8f, 2.4f, 3}},
    // 5 -> floor(2.5) = 2 (the same either way) and 5 -> floor(1.5) = 1:
    // pytorch_half_pixel's "length > 1" test on the integer length gives 0.
    {"pth_nearest_down", "nearest", "pytorch_half_pixel", "round_prefer_floor", {1, 1, 1, 5},
     {1, 1, 1, 0.5f}, {1, 1, 1, 2}, {0, 2}},
    {"pth_linear_to_1", "linear", "pytorch_half_pixel", "round_prefer_floor", {1, 1, 1, 5},
     {1, 1, 1, 0.3f}, {1, 1, 1, 1}, {0}},
    // Scale 1 on N, C and H: those axes keep their elements; W x2 with
    // x = (o + 0.5) / 2: ceil gives 1 1 2 2 (clamped to 1), round_prefer_ceil 0 1 1 2.
    {"tfnn_ceil", "nearest", "tf_half_pixel_for_nn", "ceil", {1, 3, 3, 2}, {1, 1, 1, 2},
     {1, 3, 3, 4}, {1,  1,  1,  1,  3,  3,  3,  3,  5,  5,  5,  5,  7,  7,  7,  7,  9,  9,
                    9,  9,  11, 11, 11, 11, 13, 13, 13, 13, 15, 15, 15, 15, 17, 17, 17, 17}},
    {"tfnn_round_prefer_ceil", "nearest", "tf_half_pixel_for_nn", "round_prefer_ceil",
     {1, 3, 3, 2}, {1, 1, 1, 2}, {1, 3, 3, 4}, {0,  1,  1,  1,  2,  3,  3,  3,  4,  5,  5,  5,
                                                6,  7,  7,  7,  8,  9,  9,  9,  10, 11, 11, 11,
                                                12, 13, 13, 13, 14, 15, 15, 15, 16, 17, 17, 17}},
};

TEST(ResizeSemantics, InterpreterAndCpuLoweringGiveOnnxRuntimesValues) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    Graph g;
    Value *x = g.addValue("x", DType::F32, c.in), *y = g.addValue("y", DType::F32, c.out);
    Value *sc = g.addConstant("scales", Tensor::fromFloats({int64_t(c.scales.size())}, c.scales));
    Node *n = g.addNode(OpKind::Resize, "resize", {x, nullptr, sc}, {y});
    n->attrs["mode"] = std::string(c.mode);
    n->attrs["coordinate_transformation_mode"] = std::string(c.ctm);
    n->attrs["nearest_mode"] = std::string(c.nearest);
    Tensor tx(DType::F32, c.in);
    for (int64_t i = 0; i < tx.numElements(); ++i)
      tx.data<float>()[i] = float(i);

    auto ri = interp::evaluateNode(*n, {&tx, nullptr, sc->constant.get()});
    ASSERT_TRUE(ri.ok()) << ri.error().str();
    std::vector<Tensor> lowered;
    Status st = runNode(*n, {tx}, lowered);
    ASSERT_TRUE(st) << st.error().str();
    ASSERT_EQ((*ri)[0].numElements(), int64_t(c.want.size()));
    ASSERT_EQ(lowered[0].numElements(), int64_t(c.want.size()));
    for (size_t i = 0; i < c.want.size(); ++i) {
      EXPECT_NEAR((*ri)[0].data<float>()[i], c.want[i], 1e-5) << "interpreter, element " << i;
      EXPECT_NEAR(lowered[0].data<float>()[i], c.want[i], 1e-5) << "CPU lowering, element " << i;
    }
  }
}

} // namespace
