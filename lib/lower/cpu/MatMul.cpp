//===- MatMul.cpp - CPU lowering of Gemm and MatMul ------------------------===//
//
// Both ops run on the packed SGEMM of runtime/kernels/npucc_gemm.c:
//   - Gemm -> npucc_gemm_f32 with transA/transB, alpha, beta and a C
//     broadcast mode (absent, scalar, per column, per row, full);
//   - MatMul -> npucc_matmul_f32 over the broadcast batch: per-batch element
//     offsets of A and B are passed as constant arrays. When B has no batch
//     dimensions, A's batch is folded into M (one large GEMM). 1-D operands
//     follow numpy (a prepended / appended unit dimension).
// The fused activation (act_min/act_max) becomes the SGEMM clamp.
//
//===----------------------------------------------------------------------===//
#include "npucc/lower/CpuLowering.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace npucc::lower {

// Mirrors NPUCC_GEMM_{MR,NR,MC,KC,NC} and npucc_sgemm_scratch_floats in
// runtime/kernels/npucc_gemm.{h,c}; the kernel unit test checks they agree.
int64_t cpuSgemmScratchBytes(int64_t M, int64_t N, int64_t K) {
  const int64_t MR = 8, NR = 8, MC = 64, KC = 256, NC = 256;
  if (M <= 0 || N <= 0 || K <= 0)
    return 0;
  int64_t mc = std::min(MC, (M + MR - 1) / MR * MR);
  int64_t nc = std::min(NC, (N + NR - 1) / NR * NR);
  int64_t kc = std::min(KC, K);
  return (mc * kc + kc * nc) * 4;
}

namespace {

Diagnostic nodeErr(const ir::Node &n, const std::string &msg) {
  return error(msg).atNode(n.name, n.opName());
}

float boundAttr(const ir::Node &n, const char *name, float dflt) {
  float v = n.attrFloat(name, dflt);
  if (std::isnan(v))
    return dflt;
  return v < -FLT_MAX ? -FLT_MAX : (v > FLT_MAX ? FLT_MAX : v);
}

Status checkF32(const ir::Node &n) {
  for (const auto &vs : {n.inputs, n.outputs})
    for (const ir::Value *v : vs)
      if (v && v->dtype != ir::DType::F32)
        return nodeErr(n, std::string("CPU kernels support float32 only, got ") +
                              ir::dtypeName(v->dtype) + " for '" + v->name + "'");
  return success();
}

bool fitsI32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

lir::BufferRef scratchFor(LowerContext &ctx, int64_t M, int64_t N, int64_t K) {
  int64_t bytes = cpuSgemmScratchBytes(M, N, K);
  return bytes > 0 ? ctx.scratch(bytes) : lir::BufferRef::null();
}

Status lowerGemm(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *a = n.input(0), *b = n.input(1), *c = n.input(2), *y = n.output(0);
  if (!a || !b || !y)
    return nodeErr(n, "expected inputs A, B and output Y");
  if (a->shape.size() != 2 || b->shape.size() != 2)
    return nodeErr(n, "Gemm needs 2-D A and B, got " + ir::shapeStr(a->shape) + " and " +
                          ir::shapeStr(b->shape));
  bool ta = n.attrInt("transA", 0) != 0, tb = n.attrInt("transB", 0) != 0;
  int64_t M = ta ? a->shape[1] : a->shape[0], K = ta ? a->shape[0] : a->shape[1];
  int64_t Kb = tb ? b->shape[1] : b->shape[0], N = tb ? b->shape[0] : b->shape[1];
  if (K != Kb)
    return nodeErr(n, "inner dimensions differ: " + ir::shapeStr(a->shape) + " and " +
                          ir::shapeStr(b->shape));
  if (y->numElements() != M * N)
    return nodeErr(n, "output " + ir::shapeStr(y->shape) + " is not " + std::to_string(M) + "x" +
                          std::to_string(N));
  float alpha = n.attrFloat("alpha", 1.0f), beta = n.attrFloat("beta", 1.0f);
  int64_t cMode = 0;
  if (c) {
    const ir::Shape &s = c->shape;
    int64_t rows = s.size() >= 2 ? s[s.size() - 2] : 1, cols = s.empty() ? 1 : s.back();
    if (c->numElements() == 1)
      cMode = 1;
    else if (s.size() > 2 || c->numElements() != rows * cols)
      cMode = -1;
    else if (rows == M && cols == N)
      cMode = 4;
    else if (rows == 1 && cols == N)
      cMode = 2;
    else if (rows == M && cols == 1 && s.size() == 2)
      cMode = 3;
    else
      cMode = -1;
    if (cMode < 0)
      return nodeErr(n, "C of shape " + ir::shapeStr(s) + " does not broadcast to " +
                            std::to_string(M) + "x" + std::to_string(N));
  }
  if (!fitsI32(M * K) || !fitsI32(K * N) || !fitsI32(M * N))
    return nodeErr(n, "matrices too large for the 32-bit kernel parameters");
  lir::Instr in;
  in.opcode = "call";
  in.callee = "npucc_gemm_f32";
  in.comment = n.name + " (" + n.opName() + ")";
  in.args = {ctx.buffer(a), ctx.buffer(b), c ? ctx.buffer(c) : lir::BufferRef::null(),
             ctx.buffer(y), scratchFor(ctx, M, N, K)};
  for (int64_t v : {M, N, K, int64_t(ta), int64_t(tb)})
    in.args.push_back(v);
  in.args.push_back(alpha);
  in.args.push_back(beta);
  in.args.push_back(cMode);
  in.args.push_back(boundAttr(n, "act_min", -FLT_MAX));
  in.args.push_back(boundAttr(n, "act_max", FLT_MAX));
  ctx.useKernelFile("kernels/npucc_gemm.c");
  out.push_back(std::move(in));
  return success();
}

Status lowerMatMul(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  const ir::Value *a = n.input(0), *b = n.input(1), *y = n.output(0);
  if (!a || !b || !y)
    return nodeErr(n, "expected inputs A, B and output Y");
  const ir::Shape &sa = a->shape, &sb = b->shape;
  if (sa.empty() || sb.empty())
    return nodeErr(n, "MatMul operands must have rank >= 1");
  int64_t M = sa.size() == 1 ? 1 : sa[sa.size() - 2], K = sa.back();
  int64_t Kb = sb.size() == 1 ? sb[0] : sb[sb.size() - 2], N = sb.size() == 1 ? 1 : sb.back();
  if (K != Kb)
    return nodeErr(n, "inner dimensions differ: " + ir::shapeStr(sa) + " and " + ir::shapeStr(sb));
  ir::Shape ba(sa.begin(), sa.end() - std::min<size_t>(sa.size(), 2));
  ir::Shape bb(sb.begin(), sb.end() - std::min<size_t>(sb.size(), 2));
  size_t rank = std::max(ba.size(), bb.size());
  ba.insert(ba.begin(), rank - ba.size(), 1);
  bb.insert(bb.begin(), rank - bb.size(), 1);
  ir::Shape bo(rank);
  for (size_t i = 0; i < rank; i++) {
    if (ba[i] != bb[i] && ba[i] != 1 && bb[i] != 1)
      return nodeErr(n, "batch dimensions of " + ir::shapeStr(sa) + " and " + ir::shapeStr(sb) +
                            " do not broadcast");
    bo[i] = ba[i] == 1 ? bb[i] : ba[i];
  }
  int64_t batch = ir::numElements(bo);
  if (y->numElements() != batch * M * N)
    return nodeErr(n, "output " + ir::shapeStr(y->shape) + " does not match the operands");
  if (!fitsI32(a->numElements()) || !fitsI32(b->numElements()) || !fitsI32(y->numElements()))
    return nodeErr(n, "tensors too large for the 32-bit kernel parameters");

  lir::IntArray aOff, bOff;
  if (ir::numElements(bb) == 1) { // B shared by all batches: fold A's batch into M
    M *= batch;
    batch = 1;
    aOff.values = {0};
    bOff.values = {0};
  } else {
    // Row-major strides (in elements) of A's and B's batch dims, 0 where broadcast.
    std::vector<int64_t> strA(rank, 0), strB(rank, 0);
    int64_t accA = M * K, accB = K * N;
    for (size_t i = rank; i-- > 0;) {
      strA[i] = ba[i] == 1 ? 0 : accA;
      strB[i] = bb[i] == 1 ? 0 : accB;
      accA *= ba[i];
      accB *= bb[i];
    }
    std::vector<int64_t> idx(rank, 0);
    for (int64_t t = 0; t < batch; t++) {
      int64_t oa = 0, ob = 0;
      for (size_t i = 0; i < rank; i++) {
        oa += idx[i] * strA[i];
        ob += idx[i] * strB[i];
      }
      aOff.values.push_back(oa);
      bOff.values.push_back(ob);
      for (size_t i = rank; i-- > 0;) {
        if (++idx[i] < bo[i])
          break;
        idx[i] = 0;
      }
    }
  }
  lir::Instr in;
  in.opcode = "call";
  in.callee = "npucc_matmul_f32";
  in.comment = n.name + " (" + n.opName() + ")";
  in.args = {ctx.buffer(a), ctx.buffer(b), ctx.buffer(y), scratchFor(ctx, M, N, K)};
  for (int64_t v : {batch, M, N, K})
    in.args.push_back(v);
  in.args.push_back(boundAttr(n, "act_min", -FLT_MAX));
  in.args.push_back(boundAttr(n, "act_max", FLT_MAX));
  in.args.push_back(std::move(aOff));
  in.args.push_back(std::move(bOff));
  ctx.useKernelFile("kernels/npucc_gemm.c");
  out.push_back(std::move(in));
  return success();
}

} // namespace

Status lowerMatMulFamily(const ir::Node &n, LowerContext &ctx, std::vector<lir::Instr> &out) {
  NPUCC_TRY(checkF32(n));
  if (n.kind == ir::OpKind::Gemm)
    return lowerGemm(n, ctx, out);
  if (n.kind == ir::OpKind::MatMul)
    return lowerMatMul(n, ctx, out);
  return nodeErr(n, "not a matrix product");
}

} // namespace npucc::lower
