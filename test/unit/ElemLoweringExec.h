//===- ElemLoweringExec.h - Run lowered loop-IR calls on a test arena ------===//
//
// Test-only: a LowerContext that gives every value its own slice of one byte
// arena, a table from kernel names to the host-built kernels, and helpers
// that lower one node, execute its calls and return its outputs. Used by
// elem_lowering_test.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../runtime/kernels/npucc_act.h"
#include "../../runtime/kernels/npucc_cast.h"
#include "../../runtime/kernels/npucc_eltwise.h"
#include "../../runtime/kernels/npucc_move.h"
#include "../../runtime/kernels/npucc_reduce.h"
#include "../../runtime/kernels/npucc_resize.h"
#include "../../runtime/kernels/npucc_softmax.h"

#include "npucc/ir/Graph.h"
#include "npucc/lower/CpuLowering.h"
#include "npucc/onnx/Importer.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>

using namespace npucc;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::OpKind;
using ir::Shape;
using ir::Tensor;
using ir::Value;
using lir::BufferRef;

namespace {

std::vector<float> randf(size_t n, unsigned seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

bool near(double a, double b, double tol = 1e-5) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= tol * (1.0 + std::fabs(b));
}

// ---- executing lowered loop IR ------------------------------------------

/// Every value and scratch request gets its own slice of one byte arena.
class TestCtx : public lower::LowerContext {
public:
  std::vector<uint8_t> mem;
  std::map<const Value *, BufferRef> bufs;
  std::set<std::string> files;
  const Value *aliasOut = nullptr, *aliasIn = nullptr; // simulate in-place planning

  BufferRef alloc(int64_t bytes, DType t) {
    BufferRef b;
    b.offset = int64_t((mem.size() + 15) / 16 * 16);
    b.size = bytes;
    b.dtype = t;
    mem.resize(size_t(b.offset + bytes + 16));
    return b;
  }
  BufferRef buffer(const Value *v) override {
    if (!v)
      return BufferRef{lir::Region::Arena, 0, 0, 0, DType::F32};
    if (v == aliasOut && aliasIn)
      return buffer(aliasIn);
    auto it = bufs.find(v);
    if (it != bufs.end())
      return it->second;
    BufferRef b = alloc(int64_t(v->byteSize()), v->dtype);
    if (v->isConstant())
      std::memcpy(mem.data() + b.offset, v->constant->raw(), v->constant->byteSize());
    return bufs[v] = b;
  }
  BufferRef scratch(int64_t bytes) override { return alloc(bytes, DType::U8); }
  void useKernelFile(const std::string &p) override { files.insert(p); }
};

struct Args {
  std::vector<void *> p;
  std::vector<int64_t> i;
  std::vector<float> f;
  std::vector<std::vector<int32_t>> ia;
  std::vector<std::vector<float>> fa;
  template <typename T> T *P(size_t k) { return static_cast<T *>(p[k]); }
  int32_t I(size_t k) { return int32_t(i[k]); }
  const int32_t *IA(size_t k) { return ia[k].empty() ? nullptr : ia[k].data(); }
  const float *FA(size_t k) { return fa[k].empty() ? nullptr : fa[k].data(); }
};
using Table = std::map<std::string, std::function<void(Args &)>>;

template <typename T>
void regBinary(Table &t, const std::string &n, void (*f)(const T *, const T *, T *, int32_t),
               void (*rb)(const T *, const T *, T *, int32_t, int32_t, int32_t),
               void (*lb)(const T *, const T *, T *, int32_t, int32_t, int32_t),
               void (*nd)(const T *, const T *, T *, int32_t, const int32_t *, const int32_t *,
                          const int32_t *)) {
  t[n] = [f](Args &a) { f(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.I(3)); };
  t[n + "_rb"] = [rb](Args &a) { rb(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.I(3), a.I(4), a.I(5)); };
  t[n + "_lb"] = [lb](Args &a) { lb(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.I(3), a.I(4), a.I(5)); };
  t[n + "_nd"] = [nd](Args &a) {
    nd(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.I(3), a.IA(4), a.IA(5), a.IA(6));
  };
}

template <typename T>
void regClip(Table &t, const std::string &n,
             void (*f)(const T *, T *, int32_t, int64_t, int64_t, int32_t, int32_t)) {
  t[n] = [f](Args &a) { f(a.P<T>(0), a.P<T>(1), a.I(2), a.i[3], a.i[4], a.I(5), a.I(6)); };
}

template <typename T>
void regUnary(Table &t, const std::string &n, void (*f)(const T *, T *, int32_t)) {
  t[n] = [f](Args &a) { f(a.P<T>(0), a.P<T>(1), a.I(2)); };
}

const Table &kernels() {
  static Table t = [] {
    Table t;
#define REG_BIN(OP, SUF, T)                                                                        \
  regBinary<T>(t, "npucc_" #OP "_" #SUF, npucc_##OP##_##SUF, npucc_##OP##_##SUF##_rb,              \
               npucc_##OP##_##SUF##_lb, npucc_##OP##_##SUF##_nd);
#define REG_BIN_TYPE(SUF, T)                                                                       \
  REG_BIN(add, SUF, T)                                                                             \
  REG_BIN(sub, SUF, T)                                                                             \
  REG_BIN(mul, SUF, T) REG_BIN(div, SUF, T) REG_BIN(maximum, SUF, T) REG_BIN(minimum, SUF, T)
    REG_BIN_TYPE(f32, float)
    REG_BIN_TYPE(f64, double)
    REG_BIN_TYPE(i8, int8_t) REG_BIN_TYPE(i16, int16_t) REG_BIN_TYPE(i32, int32_t) REG_BIN_TYPE(
        i64, int64_t) REG_BIN_TYPE(u8, uint8_t) REG_BIN_TYPE(u16, uint16_t)
        REG_BIN_TYPE(u32, uint32_t) REG_BIN_TYPE(u64, uint64_t) REG_BIN(prelu, f32, float)
            t["npucc_addc_f32"] = [](Args &a) {
              npucc_addc_f32(a.P<float>(0), a.P<float>(1), a.P<float>(2), a.I(3), a.f[4], a.f[5]);
            };
    t["npucc_addc_f32_rb"] = [](Args &a) {
      npucc_addc_f32_rb(a.P<float>(0), a.P<float>(1), a.P<float>(2), a.I(3), a.I(4), a.I(5), a.f[6],
                        a.f[7]);
    };
    t["npucc_addc_f32_lb"] = [](Args &a) {
      npucc_addc_f32_lb(a.P<float>(0), a.P<float>(1), a.P<float>(2), a.I(3), a.I(4), a.I(5), a.f[6],
                        a.f[7]);
    };
    t["npucc_addc_f32_nd"] = [](Args &a) {
      npucc_addc_f32_nd(a.P<float>(0), a.P<float>(1), a.P<float>(2), a.I(3), a.IA(4), a.IA(5),
                        a.IA(6), a.f[7], a.f[8]);
    };
    regUnary<float>(t, "npucc_relu_f32", npucc_relu_f32);
    regUnary<int8_t>(t, "npucc_relu_i8", npucc_relu_i8);
    regUnary<int16_t>(t, "npucc_relu_i16", npucc_relu_i16);
    regUnary<int32_t>(t, "npucc_relu_i32", npucc_relu_i32);
    regUnary<int64_t>(t, "npucc_relu_i64", npucc_relu_i64);
    regUnary<float>(t, "npucc_sigmoid_f32", npucc_sigmoid_f32);
    regUnary<float>(t, "npucc_hardswish_f32", npucc_hardswish_f32);
    regUnary<float>(t, "npucc_tanh_f32", npucc_tanh_f32);
    t["npucc_leakyrelu_f32"] = [](Args &a) {
      npucc_leakyrelu_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.f[3]);
    };
    t["npucc_clip_f32"] = [](Args &a) {
      npucc_clip_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.f[3], a.f[4]);
    };
    t["npucc_hardsigmoid_f32"] = [](Args &a) {
      npucc_hardsigmoid_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.f[3], a.f[4]);
    };
    regClip<int8_t>(t, "npucc_clip_i8", npucc_clip_i8);
    regClip<uint8_t>(t, "npucc_clip_u8", npucc_clip_u8);
    regClip<int16_t>(t, "npucc_clip_i16", npucc_clip_i16);
    regClip<uint16_t>(t, "npucc_clip_u16", npucc_clip_u16);
    regClip<int32_t>(t, "npucc_clip_i32", npucc_clip_i32);
    regClip<uint32_t>(t, "npucc_clip_u32", npucc_clip_u32);
    regClip<int64_t>(t, "npucc_clip_i64", npucc_clip_i64);
    regClip<uint64_t>(t, "npucc_clip_u64", npucc_clip_u64);
#define REG_CLIP_DYN(SUF, T)                                                                       \
  t["npucc_clip_" #SUF "_dyn"] = [](Args &a) {                                                     \
    npucc_clip_##SUF##_dyn(a.P<T>(0), a.P<T>(1), a.P<T>(2), a.P<T>(3), a.I(4), a.I(5), a.I(6));    \
  };
    REG_CLIP_DYN(f32, float)
    REG_CLIP_DYN(i8, int8_t) REG_CLIP_DYN(u8, uint8_t) REG_CLIP_DYN(i16, int16_t)
        REG_CLIP_DYN(u16, uint16_t) REG_CLIP_DYN(i32, int32_t) REG_CLIP_DYN(u32, uint32_t)
            REG_CLIP_DYN(i64, int64_t) REG_CLIP_DYN(u64, uint64_t)
                t["npucc_softmax_f32"] = [](Args &a) {
                  npucc_softmax_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.I(3), a.I(4));
                };
    t["npucc_reduce_mean_f32"] = [](Args &a) {
      npucc_reduce_mean_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.I(3), a.I(4));
    };
    t["npucc_reduce_mean_f32_nd"] = [](Args &a) {
      npucc_reduce_mean_f32_nd(a.P<float>(0), a.P<float>(1), a.I(2), a.I(3), a.IA(4), a.IA(5),
                               a.I(6));
    };
    t["npucc_fill"] = [](Args &a) { npucc_fill(a.p[0], a.I(1), a.I(2), a.IA(3)); };
    t["npucc_strided_copy"] = [](Args &a) {
      npucc_strided_copy(a.p[0], a.p[1], a.I(2), a.I(3), a.I(4), a.IA(5), a.IA(6));
    };
    t["npucc_transpose2d"] = [](Args &a) {
      npucc_transpose2d(a.p[0], a.p[1], a.I(2), a.I(3), a.I(4), a.I(5));
    };
    t["npucc_copy_rows"] = [](Args &a) {
      npucc_copy_rows(a.p[0], a.p[1], a.I(2), a.I(3), a.I(4), a.I(5), a.I(6), a.I(7));
    };
    t["npucc_remap"] = [](Args &a) {
      npucc_remap(a.p[0], a.p[1], a.I(2), a.I(3), a.IA(4), a.IA(5), a.IA(6), a.IA(7), a.IA(8));
    };
    t["npucc_gather_idx64"] = [](Args &a) {
      npucc_gather_idx64(a.p[0], a.P<int64_t>(1), a.p[2], a.I(3), a.I(4), a.I(5), a.I(6));
    };
    t["npucc_gather_idx32"] = [](Args &a) {
      npucc_gather_idx32(a.p[0], a.P<int32_t>(1), a.p[2], a.I(3), a.I(4), a.I(5), a.I(6));
    };
    t["npucc_resize_bilinear_f32"] = [](Args &a) {
      npucc_resize_bilinear_f32(a.P<float>(0), a.P<float>(1), a.I(2), a.I(3), a.I(4), a.I(5),
                                a.I(6), a.IA(7), a.FA(8), a.IA(9), a.FA(10));
    };
    t["npucc_resize_linear_f32_nd"] = [](Args &a) {
      npucc_resize_linear_f32_nd(a.P<float>(0), a.P<float>(1), a.I(2), a.IA(3), a.IA(4), a.IA(5),
                                 a.FA(6));
    };
    t["npucc_ints_to_i64"] = [](Args &a) { npucc_ints_to_i64(a.P<int64_t>(0), a.I(1), a.IA(2)); };
#define REG_CAST_ONE(FS, FT, FC, TS, TT, TC)                                                       \
  t["npucc_cast_" #FS "_" #TS] = [](Args &a) {                                                     \
    npucc_cast_##FS##_##TS(a.P<FT>(0), a.P<TT>(1), a.I(2));                                        \
  };
#define REG_CAST_FROM(FS, FT, FC) NPUCC_CAST_TO_LIST(REG_CAST_ONE, FS, FT, FC)
    NPUCC_CAST_FROM_LIST(REG_CAST_FROM)
    return t;
  }();
  return t;
}

/// Lowers node `n` with its family lowering and runs the calls. `inputs`
/// holds data for the node's non-constant inputs, in input order.
Status runNode(const Node &n, const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs,
               bool inPlace = false, std::vector<lir::Instr> *instrsOut = nullptr) {
  TestCtx ctx;
  if (inPlace) {
    ctx.aliasIn = n.input(0);
    ctx.aliasOut = n.output(0);
  }
  size_t k = 0;
  std::vector<std::pair<BufferRef, const Tensor *>> writes;
  for (const Value *v : n.inputs)
    if (v && !v->isConstant()) {
      if (k >= inputs.size())
        return error("test: missing input data");
      writes.push_back({ctx.buffer(v), &inputs[k++]});
    }
  lower::FamilyLowering fam = lower::familyFor(n.kind);
  if (!fam)
    return error("no family");
  std::vector<lir::Instr> body;
  NPUCC_TRY(fam(n, ctx, body));
  for (const Value *v : n.outputs)
    ctx.buffer(v);
  for (auto &[b, t] : writes)
    if (t->byteSize() > 0)
      std::memcpy(ctx.mem.data() + b.offset, t->raw(), t->byteSize());
  for (const lir::Instr &in : body) {
    Args a;
    size_t na = in.args.size();
    a.p.assign(na, nullptr);
    a.i.assign(na, 0);
    a.f.assign(na, 0.0f);
    a.ia.resize(na);
    a.fa.resize(na);
    for (size_t j = 0; j < na; ++j) {
      const lir::Arg &arg = in.args[j];
      if (auto *b = std::get_if<BufferRef>(&arg))
        a.p[j] = b->size ? ctx.mem.data() + b->offset : nullptr;
      else if (auto *i = std::get_if<int64_t>(&arg))
        a.i[j] = *i;
      else if (auto *f = std::get_if<float>(&arg))
        a.f[j] = *f;
      else if (auto *ia = std::get_if<lir::IntArray>(&arg))
        a.ia[j].assign(ia->values.begin(), ia->values.end());
      else if (auto *fa = std::get_if<lir::FloatArray>(&arg))
        a.fa[j] = fa->values;
    }
    if (in.opcode == "memcpy") {
      const BufferRef &d = std::get<BufferRef>(in.args[0]);
      std::memmove(a.p[0], a.p[1], size_t(d.size));
      continue;
    }
    auto it = kernels().find(in.callee);
    if (it == kernels().end())
      return error("test: no kernel " + in.callee);
    it->second(a);
  }
  outputs.clear();
  for (const Value *v : n.outputs) {
    Tensor t(v->dtype, v->shape);
    BufferRef b = ctx.buffer(v);
    if (t.byteSize() > 0)
      std::memcpy(t.raw(), ctx.mem.data() + b.offset, t.byteSize());
    outputs.push_back(std::move(t));
  }
  if (instrsOut)
    *instrsOut = body;
  return success();
}

::testing::AssertionResult sameTensor(const Tensor &got, const Tensor &want, double tol = 1e-5) {
  if (got.dtype() != want.dtype() || got.numElements() != want.numElements())
    return ::testing::AssertionFailure() << "dtype or size differs";
  for (int64_t i = 0; i < got.numElements(); ++i) {
    bool ok = ir::isFloat(got.dtype()) ? near(got.getDouble(i), want.getDouble(i), tol)
                                       : got.getInt(i) == want.getInt(i);
    if (!ok)
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got.getDouble(i) << " want " << want.getDouble(i);
  }
  return ::testing::AssertionSuccess();
}

Tensor randTensor(const Shape &s, unsigned seed) {
  return Tensor::fromFloats(s, randf(size_t(ir::numElements(s)), seed));
}

/// Reference multidirectional broadcast of a binary f32 op.
Tensor refBroadcast(const Tensor &a, const Tensor &b, const Shape &so,
                    const std::function<float(float, float)> &op) {
  Tensor y(DType::F32, so);
  size_t r = so.size();
  auto index = [&](const Shape &s, int64_t flat) {
    Shape al(r - s.size(), 1);
    al.insert(al.end(), s.begin(), s.end());
    int64_t off = 0, rem = flat, mul = 1;
    std::vector<int64_t> idx(r);
    for (size_t k = r; k-- > 0;) {
      idx[k] = rem % so[k];
      rem /= so[k];
    }
    for (size_t k = r; k-- > 0;) {
      off += (al[k] == 1 ? 0 : idx[k]) * mul;
      mul *= al[k];
    }
    return off;
  };
  for (int64_t i = 0; i < y.numElements(); ++i)
    y.data<float>()[i] =
        op(a.data<float>()[index(a.shape(), i)], b.data<float>()[index(b.shape(), i)]);
  return y;
}

} // namespace
