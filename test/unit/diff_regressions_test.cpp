//===- diff_regressions_test.cpp - The differential tier's regressions -----===//
//
// Each folder of test/diff/regressions (a minimised model the differential
// tier found, with ONNX Runtime's output) compiled for the CPU and for
// npu-default: the interpreter on the compiled graph agrees with ONNX
// Runtime within one quantization step. ctest diff_models runs the same
// folders through `npucc check` on every target; this is the fast guard the
// mutation tiers see (a ceil_mode pool's shape, the integer Clip's bounds,
// a same-shape constant's layout).
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Compare.h"
#include "npucc/driver/Driver.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/onnx/Importer.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace npucc;

namespace {

std::vector<std::string> regressionFolders() {
  std::vector<std::string> r;
  for (const auto &e : std::filesystem::directory_iterator(std::string(NPUCC_SOURCE_DIR) +
                                                           "/test/diff/regressions"))
    if (std::filesystem::exists(e.path() / "model.onnx"))
      r.push_back(e.path().string());
  std::sort(r.begin(), r.end());
  return r;
}

TEST(DiffRegressions, CompiledGraphAgreesWithOnnxRuntime) {
  auto folders = regressionFolders();
  ASSERT_GE(folders.size(), 3u);
  for (const std::string &dir : folders)
    for (const char *target : {"cpu", "npu-default"}) {
      SCOPED_TRACE(dir + " on " + target);
      driver::CompileOptions o;
      o.modelPath = dir + "/model.onnx";
      o.target = target;
      auto r = driver::compileModel(o);
      ASSERT_TRUE(r.ok()) << r.error().str();
      const ir::Graph &g = *r->graph;
      std::map<std::string, ir::Tensor> in;
      std::string name;
      auto x = onnx::readTensorProto(dir + "/test_data_set_0/input_0.pb", &name);
      ASSERT_TRUE(x.ok()) << x.error().str();
      in.emplace(g.inputs[0]->name, x.take());
      auto got = interp::runGraph(g, in);
      ASSERT_TRUE(got.ok()) << got.error().str();
      for (size_t k = 0; k < g.outputs.size(); ++k) {
        auto want = onnx::readTensorProto(dir + "/test_data_set_0/output_" +
                                          std::to_string(k) + ".pb");
        ASSERT_TRUE(want.ok()) << want.error().str();
        const ir::Tensor &y = got->at(g.outputs[k]->name);
        auto q = driver::classifyOutput(g, *g.outputs[k]);
        auto c = driver::compareSteps(y, *want, q, 1);
        EXPECT_FALSE(c.shapeMismatch) << "output " << k << ": [" << ir::shapeStr(y.shape())
                                      << "] vs ONNX Runtime's ["
                                      << ir::shapeStr(want->shape()) << "]";
        EXPECT_TRUE(c.pass) << "output " << k << ": " << c.mismatches << " values more than "
                            << "one step off, the first at " << c.firstMismatch;
      }
    }
}

} // namespace
