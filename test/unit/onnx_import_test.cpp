//===- onnx_import_test.cpp - ONNX importer on models built in C++ --------===//
//
// Each test builds a small ModelProto with the protobuf API, writes it to a
// temporary folder and imports it: shapes, attributes, constants, external
// data (and its sandbox), error paths and value-dependent static shapes.
//
//===----------------------------------------------------------------------===//
#include "npucc/ir/Printer.h"
#include "npucc/onnx/Importer.h"

#include "OnnxModelBuilder.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <variant>

namespace fs = std::filesystem;
using namespace npucc;
using namespace npucc::ir;
using npucc::onnx::importModel;
using npucc::onnx::ImportOptions;

namespace {

using namespace npucc::testing;

void attrInts(::onnx::NodeProto *n, const std::string &name, std::vector<int64_t> v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (auto x : v)
    a->add_ints(x);
}
void attrInt(::onnx::NodeProto *n, const std::string &name, int64_t v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
void attrStr(::onnx::NodeProto *n, const std::string &name, const std::string &v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

const Node *findNode(const Graph &g, OpKind k) {
  for (const auto &n : g.nodes())
    if (n->kind == k)
      return n.get();
  return nullptr;
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = 0.01f * static_cast<float>(i) - 0.5f;
  return v;
}

TEST(OnnxImport, ConvReluShapesAndAttrs) {
  TempDir dir("convrelu");
  MB mb;
  mb.input("x", {1, 3, 8, 8});
  mb.output("y", {1, 4, 4, 4});
  mb.floats("w", {4, 3, 3, 3}, ramp(108));
  mb.floats("bias", {4}, {1, 2, 3, 4});
  auto *conv = mb.node("Conv", {"x", "w", "bias"}, {"c"}, "conv0");
  attrInts(conv, "strides", {2, 2});
  attrStr(conv, "auto_pad", "SAME_UPPER");
  mb.node("Relu", {"c"}, {"y"}); // unnamed: gets "Relu_1"
  auto r = importModel(mb.save(dir.path));
  ASSERT_TRUE(r) << r.error().str();
  const Graph &g = **r;
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0]->name, "x");
  ASSERT_EQ(g.nodes().size(), 2u);
  const Node &c = *g.nodes()[0];
  EXPECT_EQ(c.kind, OpKind::Conv);
  EXPECT_EQ(c.name, "conv0");
  EXPECT_EQ(c.attrInts("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(c.attrInts("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.attrInts("dilations"), (std::vector<int64_t>{1, 1}));
  // SAME_UPPER, in 8, stride 2, k 3: out 4, total pad 1 -> [0,0,1,1].
  EXPECT_EQ(c.attrInts("pads"), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(c.attrInt("group", -1), 1);
  EXPECT_FALSE(c.hasAttr("auto_pad"));
  EXPECT_EQ(c.outputs[0]->shape, (Shape{1, 4, 4, 4}));
  ASSERT_TRUE(c.inputs[1]->isConstant());
  EXPECT_EQ(c.inputs[1]->constant->shape(), (Shape{4, 3, 3, 3}));
  EXPECT_FLOAT_EQ(c.inputs[1]->constant->data<float>()[107], 0.01f * 107 - 0.5f);
  const Node &relu = *g.nodes()[1];
  EXPECT_EQ(relu.kind, OpKind::Relu);
  EXPECT_EQ(relu.name, "Relu_1");
  EXPECT_EQ(g.outputs[0]->name, "y");
  EXPECT_EQ(g.outputs[0]->shape, (Shape{1, 4, 4, 4}));
}

TEST(OnnxImport, ConstantNodesBecomeConstants) {
  TempDir dir("const");
  MB mb;
  mb.input("x", {2, 3});
  mb.output("y", {2, 3});
  auto *c1 = mb.node("Constant", {}, {"k"}, "const0");
  auto *a = c1->add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(1);
  a->mutable_t()->add_dims(3);
  for (float f : {1.f, 2.f, 3.f})
    a->mutable_t()->add_float_data(f);
  auto *c2 = mb.node("Constant", {}, {"s"}, "const1");
  auto *b = c2->add_attribute();
  b->set_name("value_float");
  b->set_type(::onnx::AttributeProto::FLOAT);
  b->set_f(0.5f);
  mb.node("Add", {"x", "k"}, {"t"}, "add0");
  mb.node("Mul", {"t", "s"}, {"y"}, "mul0");
  auto r = importModel(mb.save(dir.path));
  ASSERT_TRUE(r) << r.error().str();
  const Graph &g = **r;
  EXPECT_EQ(findNode(g, OpKind::Constant), nullptr);
  ASSERT_EQ(g.nodes().size(), 2u);
  Value *k = g.nodes()[0]->inputs[1];
  ASSERT_TRUE(k->isConstant());
  EXPECT_EQ(k->name, "k");
  EXPECT_EQ(k->constant->shape(), (Shape{3}));
  EXPECT_FLOAT_EQ(k->constant->data<float>()[2], 3.f);
  Value *s = g.nodes()[1]->inputs[1];
  ASSERT_TRUE(s->isConstant());
  EXPECT_TRUE(s->shape.empty());
  EXPECT_FLOAT_EQ(s->constant->data<float>()[0], 0.5f);
}

TEST(OnnxImport, InitializerListedAsInputIsConstant) {
  TempDir dir("initinput");
  MB mb;
  mb.input("x", {2});
  mb.input("w", {2}); // also an initializer (old exporters do this)
  mb.output("y", {2});
  mb.floats("w", {2}, {3.f, 4.f});
  mb.node("Add", {"x", "w"}, {"y"}, "add0");
  auto r = importModel(mb.save(dir.path));
  ASSERT_TRUE(r) << r.error().str();
  ASSERT_EQ((*r)->inputs.size(), 1u);
  EXPECT_EQ((*r)->inputs[0]->name, "x");
  Value *w = (*r)->nodes()[0]->inputs[1];
  ASSERT_TRUE(w->isConstant());
  EXPECT_FLOAT_EQ(w->constant->data<float>()[1], 4.f);
}

/// Model Add(x[4], w_ext) with w_ext stored externally at `loc`.
MB externalModel(const std::string &loc, int64_t offset) {
  MB mb;
  mb.input("x", {4});
  mb.output("y", {4});
  auto *t = mb.g->add_initializer();
  t->set_name("w_ext");
  t->set_data_type(1);
  t->add_dims(4);
  t->set_data_location(::onnx::TensorProto::EXTERNAL);
  for (auto kv : std::vector<std::pair<std::string, std::string>>{
           {"location", loc}, {"offset", std::to_string(offset)}, {"length", "16"}}) {
    auto *e = t->add_external_data();
    e->set_key(kv.first);
    e->set_value(kv.second);
  }
  mb.node("Add", {"x", "w_ext"}, {"y"}, "add0");
  return mb;
}

void writeFloats(const fs::path &p, size_t padBytes, const std::vector<float> &v) {
  std::ofstream out(p, std::ios::binary);
  std::string pad(padBytes, 'z');
  out.write(pad.data(), static_cast<std::streamsize>(pad.size()));
  out.write(reinterpret_cast<const char *>(v.data()), static_cast<std::streamsize>(v.size() * 4));
}

TEST(OnnxImport, ExternalDataRead) {
  TempDir dir("extok");
  fs::create_directories(dir.path / "data");
  writeFloats(dir.path / "data" / "weights.bin", 8, {1.5f, -2.f, 3.25f, 4.f});
  auto r = importModel(externalModel("data/weights.bin", 8).save(dir.path));
  ASSERT_TRUE(r) << r.error().str();
  Value *w = (*r)->nodes()[0]->inputs[1];
  ASSERT_TRUE(w->isConstant());
  const float *d = w->constant->data<float>();
  EXPECT_FLOAT_EQ(d[0], 1.5f);
  EXPECT_FLOAT_EQ(d[1], -2.f);
  EXPECT_FLOAT_EQ(d[2], 3.25f);
  EXPECT_FLOAT_EQ(d[3], 4.f);
}

TEST(OnnxImport, ExternalDataTooShortIsAnError) {
  TempDir dir("extshort");
  writeFloats(dir.path / "w.bin", 0, {1.f, 2.f});
  auto r = importModel(externalModel("w.bin", 0).save(dir.path));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().str().find("w_ext"), std::string::npos) << r.error().str();
  EXPECT_NE(r.error().str().find("too short"), std::string::npos) << r.error().str();
}

TEST(OnnxImport, ExternalDataEscapingTheFolderIsRefused) {
  TempDir dir("extesc");
  fs::create_directories(dir.path / "model");
  writeFloats(dir.path / "secret.bin", 0, {1.f, 2.f, 3.f, 4.f}); // exists, but outside
  for (const std::string loc : {"../secret.bin", "/etc/passwd", "sub/../../secret.bin"}) {
    auto r = importModel(externalModel(loc, 0).save(dir.path / "model"));
    ASSERT_FALSE(r) << loc;
    std::string msg = r.error().str();
    EXPECT_NE(msg.find("initializer 'w_ext'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(loc), std::string::npos) << msg;
    EXPECT_TRUE(msg.find("escapes the model's folder") != std::string::npos ||
                msg.find("absolute path") != std::string::npos)
        << msg;
  }
  // A symlink inside the folder that points outside is refused too.
  fs::create_symlink(dir.path / "secret.bin", dir.path / "model" / "link.bin");
  auto r = importModel(externalModel("link.bin", 0).save(dir.path / "model"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().str().find("escapes the model's folder"), std::string::npos)
      << r.error().str();
}

TEST(OnnxImport, MissingTruncatedAndGarbageFiles) {
  TempDir dir("badfiles");
  auto missing = importModel((dir.path / "nope.onnx").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().str().find("nope.onnx: error: cannot open model: no such file"),
            std::string::npos)
      << missing.error().str();

  MB mb;
  mb.input("x", {1, 3, 8, 8});
  mb.output("y", {1, 4, 8, 8});
  mb.floats("w", {4, 3, 3, 3}, ramp(108));
  mb.node("Conv", {"x", "w"}, {"y"}, "conv0");
  std::string full;
  mb.m.SerializeToString(&full);
  {
    std::ofstream out(dir.path / "trunc.onnx", std::ios::binary);
    out.write(full.data(), static_cast<std::streamsize>(full.size() / 2));
  }
  auto trunc = importModel((dir.path / "trunc.onnx").string());
  ASSERT_FALSE(trunc);
  EXPECT_NE(trunc.error().str().find(
                "trunc.onnx: error: not a valid ONNX model (failed to parse protobuf)"),
            std::string::npos)
      << trunc.error().str();

  {
    std::ofstream out(dir.path / "garbage.onnx", std::ios::binary);
    std::string junk = "\xff\xff\xff\xff this is not a protobuf at all";
    out.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto garbage = importModel((dir.path / "garbage.onnx").string());
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().str().find("not a valid ONNX model"), std::string::npos);
  EXPECT_EQ(garbage.error().str().find('\n'), std::string::npos) << "one line expected";
}

TEST(OnnxImport, AllUnsupportedOpsAreListed) {
  TempDir dir("unsupported");
  MB mb(13, "com.microsoft");
  mb.input("x", {1, 8});
  mb.input("boxes", {1, 4, 4});
  mb.input("scores", {1, 1, 4});
  mb.output("y", {1, 2});
  mb.output("sel", {3, 3}, 7);
  mb.ints("k", {1}, {2});
  mb.node("Relu", {"x"}, {"r"}, "relu0");
  mb.node("TopK", {"r", "k"}, {"v", "i"}, "topk0");
  mb.node("NonMaxSuppression", {"boxes", "scores"}, {"sel"}, "nms0");
  mb.node("FusedGemm", {"v", "v"}, {"y"}, "fused0", "com.microsoft");
  auto r = importModel(mb.save(dir.path));
  ASSERT_FALSE(r);
  const Diagnostic &d = r.error();
  EXPECT_EQ(d.message.rfind("3 unsupported operations", 0), 0u) << d.str();
  ASSERT_EQ(d.notes.size(), 3u) << d.str();
  EXPECT_EQ(d.notes[0], "node 'topk0' (TopK): not supported");
  EXPECT_EQ(d.notes[1], "node 'nms0' (NonMaxSuppression): not supported");
  EXPECT_NE(d.notes[2].find("fused0"), std::string::npos);
}

TEST(OnnxImport, OpsetOutsideTheTableRangeIsUnsupported) {
  TempDir dir("opsetrange");
  MB mb(13); // HardSwish exists from opset 14
  mb.input("x", {4});
  mb.output("y", {4});
  mb.node("HardSwish", {"x"}, {"y"}, "hs0");
  auto r = importModel(mb.save(dir.path));
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().notes.size(), 1u) << r.error().str();
  EXPECT_NE(r.error().notes[0].find("node 'hs0' (HardSwish): not supported at opset 13"),
            std::string::npos)
      << r.error().str();
}

MB dynamicModel() {
  MB mb;
  mb.input("x", {std::string("N"), 3, int64_t(4)});
  mb.output("y", {std::string("N"), 3, int64_t(4)});
  mb.node("Relu", {"x"}, {"y"}, "relu0");
  return mb;
}

TEST(OnnxImport, DynamicDimsBoundByShape) {
  TempDir dir("dyn");
  std::string path = dynamicModel().save(dir.path);
  ImportOptions o;
  o.shapes["x"] = {2, 3, 4};
  auto r = importModel(path, o);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ((*r)->inputs[0]->shape, (Shape{2, 3, 4}));
  EXPECT_EQ((*r)->outputs[0]->shape, (Shape{2, 3, 4}));

  // Issue 11: a dynamic leading dim with static others defaults to a batch of 1, with a note.
  std::vector<std::string> notes;
  ImportOptions dflt;
  dflt.notes = &notes;
  auto batch1 = importModel(path, dflt);
  ASSERT_TRUE(batch1) << batch1.error().str();
  EXPECT_EQ((*batch1)->inputs[0]->shape, (Shape{1, 3, 4}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("input 'x' [N,3,4] bound to 1x3x4 by default"), std::string::npos)
      << notes[0];

  // The first data set's shapes (npucc check) bind what --shape does not.
  ImportOptions fromData;
  fromData.dataShapes = {{5, 3, 4}};
  auto five = importModel(path, fromData);
  ASSERT_TRUE(five) << five.error().str();
  EXPECT_EQ((*five)->inputs[0]->shape, (Shape{5, 3, 4}));
  fromData.dataShapes = {{5, 2, 4}};
  auto clash = importModel(path, fromData);
  ASSERT_FALSE(clash);
  EXPECT_NE(clash.error().str().find("the first data set's shape 5x2x4 conflicts with input 'x'"),
            std::string::npos)
      << clash.error().str();

  // Other dynamic dims still need --shape.
  MB two;
  two.input("x", {std::string("N"), std::string("C")});
  two.output("y", {std::string("N"), std::string("C")});
  two.node("Relu", {"x"}, {"y"}, "relu0");
  TempDir dir2("dyn2");
  auto unbound = importModel(two.save(dir2.path));
  ASSERT_FALSE(unbound);
  EXPECT_NE(unbound.error().str().find("dynamic dimensions"), std::string::npos);
  ASSERT_EQ(unbound.error().notes.size(), 1u);
  EXPECT_EQ(unbound.error().notes[0], "input 'x' [N,C]");

  ImportOptions bad;
  bad.shapes["x"] = {2, 12};
  auto rank = importModel(path, bad);
  ASSERT_FALSE(rank);
  EXPECT_NE(rank.error().str().find("has rank 2 but input 'x' is [N,3,4]"), std::string::npos)
      << rank.error().str();

  ImportOptions conflict;
  conflict.shapes["x"] = {2, 5, 4};
  auto c = importModel(path, conflict);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().str().find("conflicts with input 'x'"), std::string::npos);

  ImportOptions unknown;
  unknown.shapes["z"] = {1};
  auto u = importModel(path, unknown);
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().str().find("'z'"), std::string::npos);
}

TEST(OnnxImport, InconsistentShapesNameTheNode) {
  TempDir dir("incons");
  MB mb;
  mb.input("a", {2, 3});
  mb.input("b", {4, 5});
  mb.output("y", {std::string("p"), std::string("q")});
  mb.node("Add", {"a", "b"}, {"y"}, "add0");
  auto r = importModel(mb.save(dir.path));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().node, "add0");
  EXPECT_EQ(r.error().op, "Add");
  EXPECT_NE(r.error().str().find("node 'add0' (Add): error:"), std::string::npos)
      << r.error().str();
}

TEST(OnnxImport, ShapeGatherUnsqueezeConcatReshapeIsStatic) {
  TempDir dir("shapechain");
  MB mb;
  mb.input("x", {std::string("N"), 3, int64_t(4)});
  mb.output("y", {std::string("N"), std::string("M")});
  mb.ints("i0", {}, {0});
  mb.ints("ax", {1}, {0});
  mb.ints("m1", {1}, {-1});
  mb.node("Shape", {"x"}, {"s"});
  mb.node("Gather", {"s", "i0"}, {"n"});
  mb.node("Unsqueeze", {"n", "ax"}, {"nu"});
  mb.node("Concat", {"nu", "m1"}, {"shp"})->add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  mb.node("Reshape", {"x", "shp"}, {"y"}, "flat");
  ImportOptions o;
  o.shapes["x"] = {5, 3, 4};
  auto r = importModel(mb.save(dir.path), o);
  ASSERT_TRUE(r) << r.error().str();
  const Graph &g = **r;
  ASSERT_EQ(g.nodes().size(), 1u) << printGraph(g);
  const Node &n = *g.nodes()[0];
  EXPECT_EQ(n.kind, OpKind::Reshape);
  EXPECT_EQ(n.name, "flat");
  EXPECT_EQ(n.outputs[0]->shape, (Shape{5, 12}));
  ASSERT_TRUE(n.inputs[1]->isConstant());
  EXPECT_EQ(n.inputs[1]->constant->toInts(), (std::vector<int64_t>{5, -1}));
}

TEST(OnnxImport, UnsupportedElementTypeNamesTheValue) {
  TempDir dir("f16");
  MB mb;
  mb.input("x", {2}, 10); // float16
  mb.output("y", {2}, 10);
  mb.node("Relu", {"x"}, {"y"}, "relu0");
  auto r = importModel(mb.save(dir.path));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().str().find("'x' has element type float16"), std::string::npos)
      << r.error().str();
}

TEST(OnnxImport, DropoutMaskIsConstantTrueInInference) {
  TempDir dir("dropout");
  MB mb;
  mb.input("x", {2, 2});
  mb.output("y", {2, 2});
  mb.output("mask", {2, 2}, 9);
  mb.node("Dropout", {"x"}, {"y", "mask"}, "drop0");
  auto r = importModel(mb.save(dir.path));
  ASSERT_TRUE(r) << r.error().str();
  const Node *d = findNode(**r, OpKind::Dropout);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->inputs.size(), 1u);
  EXPECT_EQ(d->outputs.size(), 1u);
  Value *mask = (*r)->outputs[1];
  ASSERT_TRUE(mask->isConstant());
  EXPECT_EQ(mask->dtype, DType::Bool);
  EXPECT_EQ(mask->constant->toInts(), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(OnnxImport, OldOpsetAttributesBecomeInputs) {
  TempDir dir("oldopset");
  MB mb(11);
  mb.input("x", {2, 1, 6});
  mb.output("y", {2, 3});
  attrInts(mb.node("Squeeze", {"x"}, {"s"}, "sq0"), "axes", {1});
  mb.node("Slice", {"s", "st", "en", "ax"}, {"y"}, "sl0");
  mb.ints("st", {1}, {1});
  mb.ints("en", {1}, {4});
  mb.ints("ax", {1}, {1});
  auto r = importModel(mb.save(dir.path));
  ASSERT_TRUE(r) << r.error().str();
  const Node *sq = findNode(**r, OpKind::Squeeze);
  ASSERT_NE(sq, nullptr);
  ASSERT_EQ(sq->inputs.size(), 2u) << printGraph(**r);
  ASSERT_TRUE(sq->inputs[1]->isConstant());
  EXPECT_EQ(sq->inputs[1]->constant->toInts(), (std::vector<int64_t>{1}));
  EXPECT_FALSE(sq->hasAttr("axes"));
  EXPECT_EQ((*r)->outputs[0]->shape, (Shape{2, 3}));
}

TEST(OnnxImport, MaxPoolSameLowerPadsAndDefaults) {
  TempDir dir("maxpool");
  MB mb(13);
  mb.input("x", {1, 1, 5, 5});
  mb.output("y", {1, 1, 3, 3});
  auto *p = mb.node("MaxPool", {"x"}, {"y"}, "pool0");
  attrInts(p, "kernel_shape", {2, 2});
  attrInts(p, "strides", {2, 2});
  attrStr(p, "auto_pad", "SAME_LOWER");
  attrInt(p, "ceil_mode", 0);
  auto r = importModel(mb.save(dir.path));
  ASSERT_TRUE(r) << r.error().str();
  const Node *n = findNode(**r, OpKind::MaxPool);
  ASSERT_NE(n, nullptr);
  // in 5, stride 2, k 2: out 3, total pad 1, SAME_LOWER puts it at the start.
  EXPECT_EQ(n->attrInts("pads"), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(n->attrInts("dilations"), (std::vector<int64_t>{1, 1}));
  EXPECT_FALSE(n->hasAttr("auto_pad"));
  EXPECT_EQ(n->outputs.size(), 1u);
  EXPECT_EQ(n->outputs[0]->shape, (Shape{1, 1, 3, 3}));
}

TEST(OnnxImport, OpsetNewerThanLibonnxUsesOwnShapeRules) {
  TempDir dir("opset18");
  MB mb(18); // libonnx 1.12 knows opsets up to 17: no checker/inference
  mb.input("x", {2, 3, 4});
  mb.output("y", {2, 4});
  mb.ints("axes", {1}, {1});
  attrInt(mb.node("ReduceMean", {"x", "axes"}, {"m"}, "mean0"), "keepdims", 0);
  mb.node("Relu", {"m"}, {"y"}, "relu0");
  auto r = importModel(mb.save(dir.path));
  ASSERT_TRUE(r) << r.error().str();
  const Node *n = findNode(**r, OpKind::ReduceMean);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->inputs.size(), 1u);
  EXPECT_EQ(n->attrInts("axes"), (std::vector<int64_t>{1}));
  EXPECT_EQ(n->outputs[0]->shape, (Shape{2, 4}));

  MB bad(18);
  bad.input("a", {2, 3});
  bad.input("b", {4, 5});
  bad.output("y", {2, 3});
  bad.node("Add", {"a", "b"}, {"y"}, "add0");
  auto e = importModel(bad.save(dir.path, "bad.onnx"));
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().node, "add0");
  EXPECT_NE(e.error().str().find("incompatible shapes [2,3] and [4,5]"), std::string::npos)
      << e.error().str();
}

} // namespace
