//===- Records.cpp - Weights, bias and requantization tables, NPU layout ---===//
//
// At compile time the weights are re-laid for the NPU's commands
// (docs/target.md, "Semantic parameters"): conv weights OHWI, depthwise
// [k_h][k_w][channels], matmul W[n][k], unless the operation's "weights"
// names another layout (OIHW, HWIO, blocked: runtime/include/npucc_layout.h,
// the simulator's definition too; a blocked layout's padding is zero). Each
// output-channel block becomes one record of the NPU constant blob, laid out
// as recordLayout() says:
//   [ weights | pad | int32 bias[block] | pad | int32 mult[block], int32 shift[block] ]
// (the requantization stage fp32_scale: binary32 scale[block] instead of mult and shift)
// so one DMA brings everything a block's commands read. A layer whose activation
// stage is lut256 has its 256-byte table after the last record (aligned to the
// act operand's alignment): loaded once, read by every block.
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include "npucc/quant/Multiplier.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace npucc::lower::npu {

namespace {

uint64_t alignUp(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }

void putI32(std::vector<uint8_t> &b, uint64_t off, int32_t v) {
  uint32_t u = uint32_t(v);
  for (int i = 0; i < 4; ++i)
    b[off + uint64_t(i)] = uint8_t(u >> (8 * i));
}

} // namespace

npucc_wlayout weightLayoutOf(const target::TargetDesc &t, const Layer &l) {
  npucc_wlayout wl{NPUCC_WL_OHWI, 1, 1};
  const target::OpLimits *lim = t.operation(l.op.kindName);
  if (lim && (l.op.kind == NPUCC_KIND_CONV || l.op.kind == NPUCC_KIND_MATMUL)) {
    wl.kind = uint8_t(lim->weightLayout);
    wl.bo = uint16_t(lim->weightBlockO);
    wl.bi = uint16_t(lim->weightBlockI);
  }
  return wl;
}

npucc_alayout actLayoutOf(const target::TargetDesc &t, const Layer &l) {
  npucc_alayout al{NPUCC_AL_NHWC, 1};
  const target::OpLimits *lim = t.operation(l.op.kindName);
  if (lim && lim->actBlock > 1 &&
      (l.op.kind == NPUCC_KIND_CONV || l.op.kind == NPUCC_KIND_DEPTHWISE ||
       l.op.kind == NPUCC_KIND_POOL)) {
    al.kind = NPUCC_AL_BLOCKED;
    al.block = uint16_t(lim->actBlock);
  }
  return al;
}

std::pair<int32_t, int32_t> fusedClampOf(const ir::Node &n) {
  const ir::Value *y = n.output(0);
  double lo = n.hasAttr("act_min") ? double(n.attrFloat("act_min", 0.0f)) : -INFINITY;
  double hi = n.hasAttr("act_max") ? double(n.attrFloat("act_max", 0.0f)) : INFINITY;
  quant::ClampBounds cb = quant::activationBounds(
      lo, hi, y->quant->scale[0], y->quant->zeroPoint.empty() ? 0 : y->quant->zeroPoint[0]);
  return {cb.lo, cb.hi};
}

Result<std::vector<uint8_t>> buildRecords(const ir::Node &n, const Layer &l,
                                          const target::TargetDesc &t, int64_t block,
                                          const quant::LutTable *next,
                                          const std::vector<quant::PwlSegment> *pwl) {
  const target::NpuOp &op = l.op;
  const ir::Value *x = n.input(0), *w = n.input(1), *y = n.output(0);
  const ir::Value *bias = n.kind == ir::OpKind::MatMul ? nullptr : n.input(2);
  if (!w || !w->isConstant() || !x || !x->quant || !y || !y->quant || !w->quant)
    return error("weights or quantization parameters missing");
  const ir::Tensor &wt = *w->constant;
  const int8_t *wd = wt.data<int8_t>();
  bool transB = n.kind == ir::OpKind::Gemm && n.attrInt("transB", 0) != 0;
  // Weight element of output channel o, tap (ky, kx), input channel (or k) c.
  auto weight = [&](int64_t o, int64_t ky, int64_t kx, int64_t c) -> int8_t {
    if (op.kind == NPUCC_KIND_CONV)
      return wd[((o * l.C + c) * op.kh + ky) * op.kw + kx];
    if (op.kind == NPUCC_KIND_DEPTHWISE)
      return wd[(o * op.kh + ky) * op.kw + kx];
    return transB ? wd[o * l.C + c] : wd[c * l.OC + o];
  };
  uint64_t wAlign = recordAlign(t, l);
  npucc_wlayout wl = weightLayoutOf(t, l);
  int64_t kh = op.kind == NPUCC_KIND_MATMUL ? 1 : op.kh,
          kw = op.kind == NPUCC_KIND_MATMUL ? 1 : op.kw;
  std::vector<uint8_t> out;
  for (int64_t b0 = 0; b0 < l.OC; b0 += block) {
    int64_t nb = std::min(block, l.OC - b0);
    RecordLayout rl = recordLayout(l, t, nb);
    uint64_t base = out.size();
    out.resize(base + alignUp(rl.size, wAlign), 0);
    uint8_t *rec = out.data() + base;
    uint64_t k = 0;
    if (op.kind == NPUCC_KIND_DEPTHWISE) {
      for (int64_t ky = 0; ky < op.kh; ++ky)
        for (int64_t kx = 0; kx < op.kw; ++kx)
          for (int64_t o = b0; o < b0 + nb; ++o)
            rec[k++] = uint8_t(weight(o, ky, kx, 0));
    } else {
      for (int64_t o = b0; o < b0 + nb; ++o)
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx)
            for (int64_t c = 0; c < l.C; ++c)
              rec[npucc_wlayout_offset(wl, nb, kh, kw, l.C, o - b0, ky, kx, c)] =
                  uint8_t(weight(o, ky, kx, c));
    }
    for (int64_t o = b0; o < b0 + nb; ++o) {
      int32_t bv = bias ? bias->constant->data<int32_t>()[o] : 0;
      const std::vector<float> &sw = w->quant->scale;
      float s = sw.size() == 1 ? sw[0] : sw[size_t(o)];
      if (op.rqMsa) {
        // mul[nb], shift[nb], add[nb]; the bias takes floor's rounding offset
        // (Legality proved the fit and bias + offset within int32).
        int32_t zy = y->quant->zeroPoint.empty() ? 0 : y->quant->zeroPoint[0];
        std::string why;
        auto fit = quant::fitMulShiftAdd(quant::msaRatio(x->quant->scale[0], s, y->quant->scale[0]),
                                         zy, op.msa, &why);
        if (!fit)
          return error("mul_shift_add of channel " + std::to_string(o) + ": " + why);
        const quant::MsaParams &p = *fit;
        putI32(out, base + rl.biasOff + uint64_t(o - b0) * 4, int32_t(int64_t(bv) + p.biasAdd));
        putI32(out, base + rl.rqOff + uint64_t(o - b0) * 4, p.mul);
        putI32(out, base + rl.rqOff + uint64_t(nb + o - b0) * 4, p.shift);
        putI32(out, base + rl.rqOff + uint64_t(2 * nb + o - b0) * 4, p.add);
        continue;
      }
      putI32(out, base + rl.biasOff + uint64_t(o - b0) * 4, bv);
      if (op.perChannel) {
        quant::QuantMultiplier m =
            quant::productMultiplier(x->quant->scale[0], s, y->quant->scale[0],
                                     op.fp32Scale ? quant::Rounding::Fp32 : quant::Rounding::Exact);
        if (op.fp32Scale) {
          // The binary32 scale fl(fl(sx * sw) / sy), which m holds exactly.
          float f = float(std::ldexp(double(m.mult), -31 - m.shift));
          uint32_t bits = 0;
          std::memcpy(&bits, &f, 4);
          putI32(out, base + rl.rqOff + uint64_t(o - b0) * 4, int32_t(bits));
          continue;
        }
        if (op.rqShift) {
          // Legality proved mult == 2^30: the multiplier is 2^-(shift + 1).
          putI32(out, base + rl.rqOff + uint64_t(o - b0) * 4, m.shift + 1);
          continue;
        }
        putI32(out, base + rl.rqOff + uint64_t(o - b0) * 4, m.mult);
        putI32(out, base + rl.rqOff + uint64_t(nb + o - b0) * 4, m.shift);
      }
    }
  }
  const target::OpLimits *lim = t.operation(l.op.kindName);
  if (hasActTable(l, t) && lim && lim->stage(NPUCC_SLOT_ACTIVATION) == NPUCC_STAGE_ACT_PWL) {
    // The pwl table after the last record: a fused activation's fitted
    // segments (act_pwl), else the fused clamp's exact ones.
    if (next && !pwl)
      return error("a fused activation on a pwl NPU needs its segments (attribute act_pwl)");
    auto [lo, hi] = fusedClampOf(n);
    std::vector<uint8_t> table = quant::pwlTable(pwl ? *pwl : quant::pwlClamp(lo, hi));
    uint64_t off = actTableOffset(l, t, block);
    out.resize(off + table.size(), 0);
    std::copy(table.begin(), table.end(), out.begin() + int64_t(off));
  } else if (hasActTable(l, t)) {
    // The lut256 table after the last record: the fused clamp, then a fused
    // activation's table (exact: StageOps.Lut256TableFusesTheClamp...).
    auto [lo, hi] = fusedClampOf(n);
    std::array<uint8_t, 256> lut = quant::actLut256(lo, hi, next);
    uint64_t off = actTableOffset(l, t, block);
    out.resize(off + ActTableBytes, 0);
    std::copy(lut.begin(), lut.end(), out.begin() + int64_t(off));
  }
  return out;
}

} // namespace npucc::lower::npu
