//===- OnnxModelBuilder.h - ModelProtos built in C++ for importer tests ---===//
//
// TempDir (a folder removed at the end of the test) and MB, a minimal
// ModelProto builder, shared by the importer unit tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <variant>
#include <vector>

namespace npucc::testing {

namespace fs = std::filesystem;

using Dim = std::variant<int64_t, std::string>;

/// A temporary folder removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string &tag) {
    path = fs::temp_directory_path() /
           ("npucc_onnx_" + tag + "_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Minimal ModelProto builder.
struct MB {
  ::onnx::ModelProto m;
  ::onnx::GraphProto *g;
  explicit MB(int opset = 13, const std::string &extraDomain = "") {
    m.set_ir_version(8);
    m.set_producer_name("npucc-unit-tests");
    auto *o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    if (!extraDomain.empty()) {
      o = m.add_opset_import();
      o->set_domain(extraDomain);
      o->set_version(1);
    }
    g = m.mutable_graph();
    g->set_name("g");
  }
  static void setType(::onnx::ValueInfoProto *vi, const std::string &name,
                      const std::vector<Dim> &dims, int elem) {
    vi->set_name(name);
    auto *tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto *s = tt->mutable_shape();
    for (const Dim &d : dims) {
      auto *pd = s->add_dim();
      if (auto *v = std::get_if<int64_t>(&d))
        pd->set_dim_value(*v);
      else
        pd->set_dim_param(std::get<std::string>(d));
    }
  }
  void input(const std::string &n, const std::vector<Dim> &dims, int elem = 1) {
    setType(g->add_input(), n, dims, elem);
  }
  void output(const std::string &n, const std::vector<Dim> &dims, int elem = 1) {
    setType(g->add_output(), n, dims, elem);
  }
  ::onnx::NodeProto *node(const std::string &op, std::vector<std::string> ins,
                          std::vector<std::string> outs, const std::string &name = "",
                          const std::string &domain = "") {
    auto *n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (auto &i : ins)
      n->add_input(i);
    for (auto &o : outs)
      n->add_output(o);
    return n;
  }
  ::onnx::TensorProto *floats(const std::string &n, std::vector<int64_t> dims,
                              const std::vector<float> &v) {
    auto *t = g->add_initializer();
    t->set_name(n);
    t->set_data_type(1);
    for (auto d : dims)
      t->add_dims(d);
    for (float f : v)
      t->add_float_data(f);
    return t;
  }
  ::onnx::TensorProto *ints(const std::string &n, std::vector<int64_t> dims,
                            const std::vector<int64_t> &v) {
    auto *t = g->add_initializer();
    t->set_name(n);
    t->set_data_type(7);
    for (auto d : dims)
      t->add_dims(d);
    for (auto x : v)
      t->add_int64_data(x);
    return t;
  }
  std::string save(const fs::path &dir, const std::string &file = "model.onnx") {
    std::string p = (dir / file).string();
    std::ofstream out(p, std::ios::binary);
    m.SerializeToOstream(&out);
    return p;
  }
};

} // namespace npucc::testing
