//===- TestTargets.h - The NPU descriptions every command test runs on ----===//
//
// The two built-ins and the test-only descriptions in test/target/: npu-third
// (fence completion, two scratchpads, 3-D DMA), npu-fourth (40-bit addresses,
// W1C completion without busy bits, opcode-as-doorbell, half-rate MACs, two
// banks), npu-queue (job queue, active-low busy, clear-on-read status),
// npu-wide (64-bit registers on a 32-bit bus, high half first), npu-wide64
// (the same registers on a 64-bit bus) and npu-tiny (one 8-bit read-modify-
// write CTRL register holding GO as start bit and busy, a compute DONE, the
// opcode and an error flag; a clear register; an init write) and npu-expr
// (fields computed by expressions and a cases table: derived counts, a
// kernel type, one parameter in two fields) and npu-fifo (the compute commands
// one frame of nine 64-bit words pushed into a FIFO register, K210-like) and
// npu-insn (the same words as custom CPU instructions, two per instruction)
// and npu-cmdbuf (every command, DMA too, a frame appended to a command buffer
// in memory and started by a kick, Ethos-U-like)
// and npu-sysmem (conv, depthwise and matmul read w, bias and rq from system
// memory themselves) and npu-weights (conv weights channel-blocked, matmul
// weights HWIO: npucc_layout.h) and npu-fp32lut (conv, depthwise and
// matmul requantize with a binary32 scale per channel, the fp32_scale stage)
// and npu-blocked (conv, depthwise and pool operands channel-blocked by 16 in
// the scratchpad, conv weights blocked 16 x 16) and npu-avgpool (the pool's
// average rounds half to even; kernels and strides up to 25) and npu-pwl (conv
// and depthwise activate through the pwl stage's segment table).
// The tests take everything from the description; none names an NPU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#ifndef NPUCC_SOURCE_DIR
#define NPUCC_SOURCE_DIR "."
#endif

namespace npucc::test {

inline std::string testTarget(const std::string &file) {
  return std::string(NPUCC_SOURCE_DIR) + "/test/target/" + file;
}

inline std::vector<std::string> allTargets() {
  return {"npu-default",
          "npu-small",
          testTarget("npu-third.json"),
          testTarget("npu-fourth.json"),
          testTarget("npu-queue.json"),
          testTarget("npu-wide.json"),
          testTarget("npu-wide64.json"),
          testTarget("npu-tiny.json"),
          testTarget("npu-expr.json"),
          testTarget("npu-fifo.json"),
          testTarget("npu-insn.json"),
          testTarget("npu-cmdbuf.json"),
          testTarget("npu-sysmem.json"),
          testTarget("npu-weights.json"), testTarget("npu-fp32lut.json"),
          testTarget("npu-blocked.json"),
          testTarget("npu-avgpool.json"),
          testTarget("npu-pwl.json")};
}

/// "…/npu-third.json" -> "npu_third" for parameterized test names.
inline std::string targetTestName(const ::testing::TestParamInfo<std::string> &i) {
  std::string n = i.param.substr(i.param.find_last_of('/') + 1);
  std::string out;
  for (char c : n.substr(0, n.find('.')))
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

} // namespace npucc::test
