//===- Samples.h - Calibration / evaluation input samples -----------------===//
//
// Loads the sample inputs given to `--calib DIR` (and used by the accuracy
// report) and makes seeded random ones for `--calib-random`.
//
// Layout of DIR (see docs/quantization.md, "Calibration"):
//  - one sub-folder per sample (ONNX `test_data_set_N` folders or any name),
//    holding one file per graph input: `input_K.pb` / `input_K.npy` (K = the
//    graph input's index) or `<input name>.pb` / `.npy`; a single-input model
//    may use any one file name;
//  - or, for a single-input model only, the sample files directly in DIR
//    (`*.pb` TensorProto or `*.npy`), one sample per file; a .npy whose shape
//    is [N, <input shape>] (or [N, <input shape without its leading 1>])
//    holds N samples.
// Files named output_* (golden outputs of ONNX test folders) are ignored.
// Sub-folders and files are taken in sorted name order. Every tensor is
// checked against the graph input's shape; numeric dtypes are converted to
// the input's dtype. Errors name the offending file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/ir/Graph.h"
#include "npucc/support/Result.h"

#include <map>
#include <string>
#include <vector>

namespace npucc::quant {

/// One model invocation: a tensor per graph input (keyed by input name).
struct Sample {
  std::map<std::string, ir::Tensor> inputs;
  std::string origin; // file or folder it came from, "random#N" for random ones
};

/// Loads every sample under `dir` (layout above). Error if none is found.
Result<std::vector<Sample>> loadSamples(const std::string &dir, const ir::Graph &g);

/// `n` samples of N(0,1) values (float inputs; integer inputs get 0),
/// deterministic for a given seed.
std::vector<Sample> randomSamples(const ir::Graph &g, int n, unsigned seed);

/// Reads one .npy file (format v1/v2/v3, little-endian numeric dtype, C order).
Result<ir::Tensor> readNpy(const std::string &path);

/// Reads one serialized onnx.TensorProto file (.pb) with the importer's
/// reader (onnx::readTensorProto).
Result<ir::Tensor> readTensorPb(const std::string &path);

} // namespace npucc::quant
