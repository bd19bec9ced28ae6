//===- HostRunS8.h - Runs lowered int8 kernel calls on the host -----------===//
//
// For the lowering tests (lower_s8_test.cpp, lower_s8_fast_test.cpp): a
// LowerContext that hands out one host buffer per value and per scratch
// request, and runS8(), which executes one emitted kernel call (reference or
// fast int8 kernels, the data movers) on those buffers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include "npucc/ir/Graph.h"
#include "npucc/lower/QuantLowering.h"

#include <map>
#include <string>
#include <vector>

extern "C" {
#include "../../runtime/kernels/npucc_conv_s8.h"
#include "../../runtime/kernels/npucc_conv_s8_fast.h"
#include "../../runtime/kernels/npucc_eltwise_s8.h"
#include "../../runtime/kernels/npucc_eltwise_s8_fast.h"
#include "../../runtime/kernels/npucc_gemm_s8.h"
#include "../../runtime/kernels/npucc_fc_s8_fast.h"
#include "../../runtime/kernels/npucc_gemm_s8_fast.h"
#include "../../runtime/kernels/npucc_lut_s8.h"
#include "../../runtime/kernels/npucc_move.h"
#include "../../runtime/kernels/npucc_quantize.h"
#include "../../runtime/kernels/npucc_softmax_s8.h"
}

namespace npucc::test {

/// One host buffer per value (index = value id) and per scratch request;
/// `fast` selects the fast int8 kernels (LowerContext::fastKernels).
class HostContext : public npucc::lower::LowerContext {
public:
  explicit HostContext(bool fast = false) : Fast(fast) {}
  bool Fast;
  std::map<const ir::Value *, int> Ids;
  std::vector<std::vector<uint8_t>> Mem;
  std::vector<std::string> Files;
  lir::BufferRef buffer(const ir::Value *v) override {
    auto it = Ids.find(v);
    if (it == Ids.end()) {
      it = Ids.emplace(v, int(Mem.size())).first;
      Mem.emplace_back(v->byteSize(), 0);
      if (v->constant)
        Mem.back() = v->constant->bytes();
    }
    return lir::BufferRef{lir::Region::Input, it->second, 0, int64_t(v->byteSize()), v->dtype};
  }
  lir::BufferRef scratch(int64_t bytes) override {
    Mem.emplace_back(size_t(bytes), 0);
    return lir::BufferRef{lir::Region::Input, int(Mem.size() - 1), 0, bytes, ir::DType::I32};
  }
  lir::BufferRef constant(const std::string &, ir::Tensor data) override {
    Mem.push_back(data.bytes());
    return lir::BufferRef{lir::Region::Const, int(Mem.size() - 1), 0, int64_t(data.byteSize()),
                          data.dtype()};
  }
  void useKernelFile(const std::string &p) override { Files.push_back(p); }
  bool fastKernels() const override { return Fast; }
  template <typename T> T *ptr(const ir::Value *v) {
    return reinterpret_cast<T *>(Mem[size_t(buffer(v).index)].data());
  }
};

/// Runs one emitted call on the host buffers.
inline void runS8(HostContext &ctx, const lir::Instr &in) {
  std::vector<std::vector<int32_t>> arrs;
  arrs.reserve(8);
  auto P = [&](size_t i) -> void * {
    const auto &b = std::get<lir::BufferRef>(in.args[i]);
    return b.isNull() ? nullptr : ctx.Mem[size_t(b.index)].data();
  };
  auto I = [&](size_t i) { return int32_t(std::get<int64_t>(in.args[i])); };
  auto A = [&](size_t i) -> const int32_t * {
    const auto &v = std::get<lir::IntArray>(in.args[i]).values;
    if (v.empty())
      return nullptr;
    arrs.emplace_back(v.begin(), v.end());
    return arrs.back().data();
  };
  auto S = [&](size_t i) { return static_cast<int8_t *>(P(i)); };
  auto W = [&](size_t i) { return static_cast<int32_t *>(P(i)); };
  if (in.callee == "npucc_conv2d_s8") {
    ASSERT_EQ(in.args.size(), 29u);
    npucc_conv2d_s8(S(0), S(1), W(2), S(3), W(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11), I(12),
                    I(13), I(14), I(15), I(16), I(17), I(18), I(19), I(20), I(21), I(22), I(23),
                    I(24), A(25), A(26), A(27), I(28));
  } else if (in.callee == "npucc_conv2d_s8_fast") {
    ASSERT_EQ(in.args.size(), 27u);
    npucc_conv2d_s8_fast(S(0), S(1), A(2), S(3), static_cast<int16_t *>(P(4)), I(5), I(6), I(7),
                         I(8), I(9), I(10), I(11), I(12), I(13), I(14), I(15), I(16), I(17), I(18),
                         I(19), I(20), I(21), I(22), I(23), A(24), I(25), A(26));
  } else if (in.callee == "npucc_dwconv2d_s8_fast") {
    ASSERT_EQ(in.args.size(), 25u);
    npucc_dwconv2d_s8_fast(S(0), S(1), A(2), S(3), W(4), I(5), I(6), I(7), I(8), I(9), I(10),
                           I(11), I(12), I(13), I(14), I(15), I(16), I(17), I(18), I(19), I(20),
                           I(21), I(22), A(23), I(24));
  } else if (in.callee == "npucc_gemm_s8") {
    ASSERT_EQ(in.args.size(), 21u);
    npucc_gemm_s8(S(0), S(1), W(2), S(3), W(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11), I(12),
                  I(13), I(14), I(15), I(16), A(17), A(18), A(19), I(20));
  } else if (in.callee == "npucc_fc_s8_fast") {
    ASSERT_EQ(in.args.size(), 13u);
    npucc_fc_s8_fast(S(0), S(1), A(2), S(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), A(11),
                     I(12));
  } else if (in.callee == "npucc_gemm_s8_fast") {
    ASSERT_EQ(in.args.size(), 15u);
    npucc_gemm_s8_fast(S(0), S(1), A(2), S(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11),
                       I(12), A(13), I(14));
  } else if (in.callee == "npucc_add_s8") {
    ASSERT_EQ(in.args.size(), 19u);
    npucc_add_s8(S(0), S(1), S(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), I(11), I(12),
                 I(13), I(14), I(15), A(16), A(17), A(18));
  } else if (in.callee == "npucc_add_s8_fast") {
    ASSERT_EQ(in.args.size(), 14u);
    npucc_add_s8_fast(S(0), S(1), S(2), A(3), A(4), I(5), I(6), I(7), I(8), I(9), I(10), A(11),
                      A(12), A(13));
  } else if (in.callee == "npucc_mul_s8") {
    ASSERT_EQ(in.args.size(), 14u);
    npucc_mul_s8(S(0), S(1), S(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9), I(10), A(11), A(12),
                 A(13));
  } else if (in.callee == "npucc_mul_s8_fast") {
    ASSERT_EQ(in.args.size(), 13u);
    npucc_mul_s8_fast(S(0), S(1), S(2), I(3), I(4), A(5), I(6), I(7), I(8), I(9), A(10), A(11),
                      A(12));
  } else if (in.callee == "npucc_quantize_f32_s8" || in.callee == "npucc_quantize_f32_s8_fast") {
    const auto &fa = std::get<lir::FloatArray>(in.args[in.callee.size() > 21 ? 3 : 5]).values;
    const float *X = static_cast<const float *>(P(0));
    if (in.callee.size() > 21) {
      ASSERT_EQ(in.args.size(), 5u);
      npucc_quantize_f32_s8_fast(X, S(1), I(2), fa.data(), I(4));
    } else {
      ASSERT_EQ(in.args.size(), 7u);
      npucc_quantize_f32_s8(X, S(1), I(2), I(3), I(4), fa.data(), A(6));
    }
  } else if (in.callee == "npucc_softmax_s8") {
    ASSERT_EQ(in.args.size(), 8u);
    npucc_softmax_s8(S(0), S(1), I(2), I(3), I(4), I(5), I(6), A(7));
  } else if (in.callee == "npucc_requant_rows_s8") {
    ASSERT_EQ(in.args.size(), 10u);
    npucc_requant_rows_s8(S(0), S(1), I(2), I(3), I(4), I(5), I(6), I(7), I(8), I(9));
  } else if (in.callee == "npucc_copy_rows") {
    npucc_copy_rows(P(0), P(1), I(2), I(3), I(4), I(5), I(6), I(7));
  } else if (in.callee == "npucc_clamp_s8") {
    npucc_clamp_s8(S(0), S(1), I(2), I(3), I(4));
  } else if (in.callee == "npucc_lut_s8") {
    npucc_lut_s8(S(0), S(1), I(2), A(3));
  } else if (in.callee == "npucc_remap") {
    npucc_remap(P(0), P(1), I(2), I(3), A(4), A(5), A(6), A(7), A(8));
  } else {
    FAIL() << "no host runner for " << in.callee;
  }
}

} // namespace npucc::test
