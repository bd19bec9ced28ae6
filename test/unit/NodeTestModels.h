//===- NodeTestModels.h - Helpers for tests over ONNX backend node tests --===//
#pragma once

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace npucc::testing {

/// The node test's model with every graph input but the first turned into an
/// initializer holding the test data (ONNX feeds scales and zero points as
/// runtime inputs; npucc needs them constant). With `keepInputs` they also stay
/// graph inputs (an initializer listed as an input: a default value, as older
/// exporters write scales). Written under the temp dir; returns "" when the
/// model or its data cannot be read or written.
inline std::string constantizedModel(const std::filesystem::path &dir, bool keepInputs = false) {
  namespace fs = std::filesystem;
  ::onnx::ModelProto m;
  {
    std::ifstream f(dir / "model.onnx", std::ios::binary);
    if (!f || !m.ParseFromIstream(&f))
      return "";
  }
  auto *g = m.mutable_graph();
  for (int i = g->input_size() - 1; i >= 1; --i) {
    ::onnx::TensorProto t;
    std::ifstream f(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"),
                    std::ios::binary);
    if (!f || !t.ParseFromIstream(&f))
      return "";
    t.set_name(g->input(i).name());
    *g->add_initializer() = t;
    if (!keepInputs)
      g->mutable_input()->DeleteSubrange(i, 1);
  }
  fs::path out = fs::temp_directory_path() /
                 ("npucc_q_" + dir.filename().string() + (keepInputs ? "_inputs_" : "_") +
                  std::to_string(::getpid()) + ".onnx");
  std::ofstream o(out, std::ios::binary);
  if (!o || !m.SerializeToOstream(&o))
    return "";
  return out.string();
}

} // namespace npucc::testing
