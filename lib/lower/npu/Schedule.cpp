//===- Schedule.cpp - A tiling -> the layer's NPU commands ----------------===//
//
// Tiles are visited in the tiling's loop order and software-pipelined:
//     load tile 0 (and the resident weight records)
//     for each tile i:  compute(i); store(i-1); load(i+1)
//     store(last)
// so the DMA moves tile i-1 out and tile i+1 in while the NPU computes
// tile i, with two scratchpad buffers per streamed operand. The waits that
// make this safe are inserted afterwards from the commands' footprints
// (Waits.cpp); nothing here orders commands by waiting.
// DMA transfers respect the description's DMA: dimensions, maximum row
// length, rows and strides, address alignment (a tiling whose transfers
// cannot be aligned is rejected).
// A channel-blocked activation layout ([C/b][H][W][b] in the scratchpad,
// NHWC in system memory) is made by the DMA: one strided transfer per
// channel group (b bytes of each pixel, source stride C, destination
// stride b), and the pad channels of the last group written by a strided
// zero fill, so that the NPU reads only written bytes. No relayout op and no
// CPU pass: the arena stays NHWC.
// A hand-off (Handoff, NpuLowering.cpp) removes a layer's input loads (its
// commands read their rows in the kept input) or its stores (its commands
// write their rows into the kept output).
//
//===----------------------------------------------------------------------===//
#include "NpuInternal.h"

#include "../../../runtime/include/npucc_stages.h"

#include <algorithm>

namespace npucc::lower::npu {

namespace {

uint64_t alignUp(uint64_t v, uint64_t a) { return a > 1 ? (v + a - 1) / a * a : v; }
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

lir::BufferRef at(const lir::BufferRef &base, int64_t offset, int64_t size) {
  lir::BufferRef b = base;
  b.offset += offset;
  b.size = size;
  b.dtype = ir::DType::I8;
  return b;
}

lir::BufferRef spmRef(const SpmPlace &p, int64_t offset, int64_t size) {
  lir::BufferRef b;
  b.region = lir::Region::Spm;
  b.index = p.spm;
  b.offset = int64_t(p.offset) + offset;
  b.size = size;
  b.dtype = ir::DType::I8;
  return b;
}

/// Emits the commands of one layer.
class Emitter {
public:
  Emitter(const Layer &l, const target::TargetDesc &t, const Tiling &tl,
          const std::vector<SpmPlace> &spm, const LayerIo &io, int &tok, const std::string &comment,
          std::vector<lir::Instr> &out, const Handoff &h)
      : L(l), T(t), Tl(tl), Spm(spm), Io(io), Tok(tok), Comment(comment), Out(out), H(h),
        B(tilingBuffers(l, t, tl, h)) {}

  Status run();

private:
  lir::Instr &cmd(const std::string &kind) {
    lir::Instr in;
    in.opcode = "npu";
    in.callee = kind;
    in.token = Tok++;
    in.comment = Comment;
    Out.push_back(std::move(in));
    return Out.back();
  }
  static void set(lir::Instr &in, const std::string &name, lir::Arg v) {
    in.params.emplace_back(name, std::move(v));
  }

  /// Copies `rows` rows of `len` bytes (strides in bytes) as DMA commands.
  Status copy(const lir::BufferRef &src, const lir::BufferRef &dst, int64_t len, int64_t rows,
              int64_t srcStride, int64_t dstStride);
  Status dmaOne(const lir::BufferRef &src, const lir::BufferRef &dst, int64_t len, int64_t rows,
                int64_t srcStride, int64_t dstStride);

  /// Pixels x C bytes of NHWC system memory <-> the channel groups of a
  /// blocked scratchpad buffer (`c0` = first channel, `n` channels of the
  /// buffer, `stride` = the system row of one pixel).
  Status blockedIn(const lir::BufferRef &src, const SpmPlace &buf, int64_t pixels, int64_t n,
                   int64_t stride);
  Status blockedOut(const SpmPlace &buf, const lir::BufferRef &dst, int64_t pixels, int64_t n,
                    int64_t stride);
  Status loadInput(int64_t tile, int slot);
  Status loadRecord(int64_t block, int slot);
  Status loadActTable();
  Status compute(int64_t tile);
  Status store(int64_t tile);

  // Tile i -> (row tile, channel block).
  int64_t rowTiles() const {
    return ceilDiv(L.op.kind == NPUCC_KIND_ELTWISE ? L.op.length : L.OH, Tl.rows);
  }
  int64_t blocks() const { return ceilDiv(L.OC, Tl.block); }
  int64_t numTiles() const { return rowTiles() * blocks(); }
  int64_t rowOf(int64_t i) const { return Tl.blocksOuter ? i % rowTiles() : i / blocks(); }
  int64_t blockOf(int64_t i) const { return Tl.blocksOuter ? i / rowTiles() : i % blocks(); }
  /// Does tile i read an input tile other than tile i-1's?
  bool newInput(int64_t i) const { return i == 0 || rowOf(i) != rowOf(i - 1) || Tl.blocksOuter; }
  bool newBlock(int64_t i) const { return i == 0 || blockOf(i) != blockOf(i - 1); }

  const Layer &L;
  const target::TargetDesc &T;
  const Tiling &Tl;
  const std::vector<SpmPlace> &Spm;
  const LayerIo &Io;
  int &Tok;
  std::string Comment;
  std::vector<lir::Instr> &Out;
  const Handoff &H;
  Buffers B;
  npucc_alayout Al = actLayoutOf(T, L);
  std::vector<int> InSlotOf;                                // tile -> input buffer
  std::vector<uint64_t> RecordBlobOffset;                   // per block, from the blob start
  uint64_t ActTableOffset = actTableOffset(L, T, Tl.block); // from the records' start
};

Status Emitter::dmaOne(const lir::BufferRef &src, const lir::BufferRef &dst, int64_t len,
                       int64_t rows, int64_t srcStride, int64_t dstStride) {
  // Alignment, fields and limits are proven once the layer is scheduled (Proof.cpp).
  lir::Instr &in = cmd("dma");
  set(in, "src_addr", at(src, 0, (rows - 1) * srcStride + len));
  set(in, "dst_addr", at(dst, 0, (rows - 1) * dstStride + len));
  set(in, "length", len);
  if (rows > 1) {
    set(in, "rows", rows);
    set(in, "src_stride", srcStride);
    set(in, "dst_stride", dstStride);
  }
  return success();
}

Status Emitter::copy(const lir::BufferRef &src, const lir::BufferRef &dst, int64_t len,
                     int64_t rows, int64_t srcStride, int64_t dstStride) {
  const target::DmaDesc &d = T.dma;
  uint64_t a = std::max<uint64_t>(1, d.alignment);
  // The limits, and what the command stream's 32-bit values carry.
  const uint64_t maxLength = std::min<uint64_t>(d.maxLength, INT32_MAX);
  const uint64_t maxRows = std::min<uint64_t>(d.maxRows, INT32_MAX);
  // A row stride the DMA takes: within max_stride and in its fields' units.
  auto strideOk = [&](int64_t s) {
    return d.dims >= 2 && uint64_t(s) <= d.maxStride &&
           T.paramBounds(NPUCC_KIND_DMA, NPUCC_P_SRC_STRIDE).holds(s) &&
           T.paramBounds(NPUCC_KIND_DMA, NPUCC_P_DST_STRIDE).holds(s);
  };
  if (len <= 0 || rows <= 0)
    return success();
  if (srcStride == len && dstStride == len && rows > 1) {
    // Contiguous: one linear range.
    len *= rows;
    rows = 1;
  }
  if (rows == 1) {
    // Chunks of at most max_length (a multiple of the alignment), as rows of a
    // 2-D transfer where the DMA has them.
    int64_t chunk = int64_t(std::min<uint64_t>(maxLength, uint64_t(len)));
    if (chunk < len)
      chunk = int64_t(uint64_t(chunk) / a * a);
    if (chunk <= 0)
      return error("the DMA's max_length is below its alignment");
    int64_t full = len / chunk, rest = len % chunk;
    int64_t done = 0;
    while (full > 0) {
      int64_t n = strideOk(chunk) ? std::min<int64_t>(full, int64_t(maxRows)) : 1;
      NPUCC_TRY(dmaOne(at(src, done, chunk * n), at(dst, done, chunk * n), chunk, n, chunk, chunk));
      done += chunk * n;
      full -= n;
    }
    if (rest)
      NPUCC_TRY(dmaOne(at(src, done, rest), at(dst, done, rest), rest, 1, 0, 0));
    return success();
  }
  // Strided rows.
  bool twoD = uint64_t(len) <= maxLength && strideOk(srcStride) && strideOk(dstStride);
  for (int64_t r = 0; r < rows;) {
    int64_t n = twoD ? std::min<int64_t>(rows - r, int64_t(maxRows)) : 1;
    if (twoD || uint64_t(len) <= maxLength) {
      NPUCC_TRY(dmaOne(at(src, r * srcStride, len), at(dst, r * dstStride, len), len, n, srcStride,
                       dstStride));
    } else {
      NPUCC_TRY(copy(at(src, r * srcStride, len), at(dst, r * dstStride, len), len, 1, len, len));
    }
    r += n;
  }
  return success();
}

Status Emitter::blockedIn(const lir::BufferRef &src, const SpmPlace &buf, int64_t pixels, int64_t n,
                          int64_t stride) {
  const int64_t b = Al.block;
  for (int64_t g = 0; g * b < n; ++g) {
    int64_t len = std::min(b, n - g * b);
    NPUCC_TRY(copy(at(src, g * b, 0), spmRef(buf, g * pixels * b, 0), len, pixels, stride, b));
    if (len == b)
      continue;
    // The pad channels: zeros (their weights are zero; the NPU computes
    // with the real channels only, but reads whole groups).
    const int64_t maxRows =
        T.dma.dims >= 2 ? int64_t(std::min<uint64_t>(T.dma.maxRows, INT32_MAX)) : 1;
    for (int64_t r = 0; r < pixels;) {
      int64_t rows = std::min(pixels - r, maxRows);
      lir::BufferRef pad = spmRef(buf, (g * pixels + r) * b + len, (rows - 1) * b + (b - len));
      lir::Instr &z = cmd("dma");
      set(z, "src_addr", pad);
      set(z, "dst_addr", pad);
      set(z, "length", b - len);
      if (rows > 1) {
        set(z, "rows", rows);
        set(z, "src_stride", b);
        set(z, "dst_stride", b);
      }
      set(z, "zero_fill", 1);
      r += rows;
    }
  }
  return success();
}

Status Emitter::blockedOut(const SpmPlace &buf, const lir::BufferRef &dst, int64_t pixels,
                           int64_t n, int64_t stride) {
  const int64_t b = Al.block;
  for (int64_t g = 0; g * b < n; ++g)
    NPUCC_TRY(copy(spmRef(buf, g * pixels * b, 0), at(dst, g * b, 0), std::min(b, n - g * b),
                   pixels, b, stride));
  return success();
}

Status Emitter::loadInput(int64_t tile, int slot) {
  if (L.op.kind == NPUCC_KIND_ELTWISE) { // the operand not kept by the layer before
    int64_t e0 = rowOf(tile) * Tl.rows, n = std::min(Tl.rows, L.op.length - e0);
    if (!H.in || H.inOperand != 0)
      NPUCC_TRY(copy(at(Io.in, e0, n), spmRef(Spm[size_t(slot)], 0, n), n, 1, n, n));
    if (!H.in || H.inOperand != 1)
      NPUCC_TRY(copy(at(Io.in2, e0, n), spmRef(Spm[size_t(B.inCount + slot)], 0, n), n, 1, n, n));
    return success();
  }
  if (H.in)
    return success(); // the commands read the kept input
  const SpmPlace &buf = Spm[size_t(slot)];
  int64_t r0 = rowOf(tile) * Tl.rows, r1 = std::min(L.OH, r0 + Tl.rows);
  auto rows = L.inRows(r0, r1);
  int64_t rowBytes = L.W * L.C, n = rows.second - rows.first;
  if (Al.kind == NPUCC_AL_BLOCKED)
    return blockedIn(at(Io.in, rows.first * rowBytes, 0), buf, n * L.W, L.C, L.C);
  return copy(at(Io.in, rows.first * rowBytes, n * rowBytes), spmRef(buf, 0, n * rowBytes),
              n * rowBytes, 1, n * rowBytes, n * rowBytes);
}

Status Emitter::loadRecord(int64_t block, int slot) {
  int64_t nb = std::min(Tl.block, L.OC - block * Tl.block);
  RecordLayout rl = recordLayout(L, T, nb);
  const SpmPlace &buf = Spm[size_t(B.inCount + B.in2Count + slot)];
  uint64_t inner = Tl.resident ? RecordBlobOffset[size_t(block)] - RecordBlobOffset[0] : 0;
  return copy(
      at(Io.blob, int64_t(Io.recordsOffset + RecordBlobOffset[size_t(block)]), int64_t(rl.size)),
      spmRef(buf, int64_t(inner), int64_t(rl.size)), int64_t(rl.size), 1, int64_t(rl.size),
      int64_t(rl.size));
}

Status Emitter::loadActTable() {
  const SpmPlace &buf = Spm[size_t(B.inCount + B.in2Count + B.wCount + B.outCount)];
  int64_t n = int64_t(actTableBytes(L, T));
  return copy(at(Io.blob, int64_t(Io.recordsOffset + ActTableOffset), n), spmRef(buf, 0, n), n, 1,
              n, n);
}

Status Emitter::compute(int64_t tile) {
  const target::NpuOp &op = L.op;
  int inSlot = InSlotOf[size_t(tile)];
  int outSlot = int(tile % std::max(1, B.outCount));
  const SpmPlace &outBuf = Spm[size_t(B.inCount + B.in2Count + B.wCount + outSlot)];
  lir::Instr &in = cmd(op.kindName);
  if (op.kind == NPUCC_KIND_ELTWISE) {
    int64_t e0 = rowOf(tile) * Tl.rows, n = std::min(Tl.rows, op.length - e0);
    bool kept0 = H.in && H.inOperand == 0, kept1 = H.in && H.inOperand == 1;
    set(in, "in_addr", kept0 ? spmRef(*H.in, e0, n) : spmRef(Spm[size_t(inSlot)], 0, n));
    set(in, "in2_addr",
        kept1 ? spmRef(*H.in, e0, n) : spmRef(Spm[size_t(B.inCount + inSlot)], 0, n));
    set(in, "out_addr", spmRef(outBuf, 0, n));
    set(in, "length", n);
    for (const auto &p : L.fixed)
      set(in, p.first, p.second);
    return success();
  }
  int64_t r0 = rowOf(tile) * Tl.rows, r1 = std::min(L.OH, r0 + Tl.rows);
  int64_t blk = blockOf(tile), nb = std::min(Tl.block, L.OC - blk * Tl.block);
  auto rows = L.inRows(r0, r1);
  int64_t inH = rows.second - rows.first;
  if (H.in) // rows [first, second) of the kept NHWC input
    set(in, "in_addr", spmRef(*H.in, rows.first * L.W * L.C, inH * L.W * L.C));
  else
    set(in, "in_addr",
        spmRef(Spm[size_t(inSlot)], 0, int64_t(npucc_alayout_bytes(Al, inH, L.W, L.C))));
  if (recordsInSystem(L, T)) {
    // Read by the NPU in the constant blob: address = the blob + offset.
    RecordLayout rl = recordLayout(L, T, nb);
    int64_t rec = int64_t(Io.recordsOffset + RecordBlobOffset[size_t(blk)]);
    set(in, "w_addr", at(Io.blob, rec + int64_t(rl.wOff), int64_t(rl.wBytes)));
    set(in, "bias_addr", at(Io.blob, rec + int64_t(rl.biasOff), nb * 4));
    if (op.perChannel) {
      set(in, "rq_addr", at(Io.blob, rec + int64_t(rl.rqOff), nb * rqBytesPerChannel(op)));
      set(in, "per_channel", 1);
    }
  } else if (L.hasWeights()) {
    RecordLayout rl = recordLayout(L, T, nb);
    int wSlot = Tl.resident ? 0 : int(blk % std::max(1, B.wCount));
    const SpmPlace &wBuf = Spm[size_t(B.inCount + B.in2Count + wSlot)];
    int64_t inner = Tl.resident ? int64_t(RecordBlobOffset[size_t(blk)] - RecordBlobOffset[0]) : 0;
    set(in, "w_addr", spmRef(wBuf, inner + int64_t(rl.wOff), int64_t(rl.wBytes)));
    set(in, "bias_addr", spmRef(wBuf, inner + int64_t(rl.biasOff), nb * 4));
    if (op.perChannel) {
      set(in, "rq_addr", spmRef(wBuf, inner + int64_t(rl.rqOff), nb * rqBytesPerChannel(op)));
      set(in, "per_channel", 1);
    }
  }
  if (H.out) // the tile's (pooled) rows of the kept NHWC output, all channels
    set(in, "out_addr",
        spmRef(outBuf, r0 / L.PK * (L.OW / L.PK) * L.OC, (r1 - r0) / L.PK * (L.OW / L.PK) * L.OC));
  else
    set(in, "out_addr",
        spmRef(outBuf, 0, int64_t(npucc_alayout_bytes(Al, (r1 - r0) / L.PK, L.OW / L.PK, nb))));
  if (hasActTable(L, T)) {
    int64_t n = int64_t(actTableBytes(L, T));
    set(in, "act_addr",
        actTableInSystem(L, T)
            ? at(Io.blob, int64_t(Io.recordsOffset + ActTableOffset), n)
            : spmRef(Spm[size_t(B.inCount + B.in2Count + B.wCount + B.outCount)], 0, n));
  }
  if (op.kind == NPUCC_KIND_MATMUL) {
    set(in, "m", r1 - r0);
    set(in, "k", L.C);
    set(in, "n", nb);
  } else {
    int64_t virt = r0 * op.strideH - op.padTop; // first input row, padding included
    set(in, "in_h", inH);
    set(in, "in_w", L.W);
    set(in, "in_ch", L.C);
    set(in, "out_h", r1 - r0);
    set(in, "out_w", L.OW);
    if (op.kind == NPUCC_KIND_CONV)
      set(in, "out_ch", nb);
    set(in, "k_h", op.kh);
    set(in, "k_w", op.kw);
    set(in, "stride_h", op.strideH);
    set(in, "stride_w", op.strideW);
    if (op.kind != NPUCC_KIND_POOL) {
      set(in, "dil_h", op.dilH);
      set(in, "dil_w", op.dilW);
    }
    set(in, "pad_top", rows.first - virt);
    set(in, "pad_left", op.padLeft);
    if (op.kind == NPUCC_KIND_DEPTHWISE && op.depthMult != 1)
      set(in, "depth_mult", op.depthMult);
    if (L.PK > 1) // the fused max pool / select: out_h x out_w computed, pooled when stored
      set(in, "pool_k", L.PK);
    if (op.poolOffY) // select's kept pixel (0 is the parameters' default)
      set(in, "pool_off_y", op.poolOffY);
    if (op.poolOffX)
      set(in, "pool_off_x", op.poolOffX);
  }
  for (const auto &p : L.fixed)
    set(in, p.first, p.second);
  return success();
}

Status Emitter::store(int64_t tile) {
  if (H.out)
    return success(); // the commands wrote the kept output
  int outSlot = int(tile % std::max(1, B.outCount));
  const SpmPlace &outBuf = Spm[size_t(B.inCount + B.in2Count + B.wCount + outSlot)];
  if (L.op.kind == NPUCC_KIND_ELTWISE) {
    int64_t e0 = rowOf(tile) * Tl.rows, n = std::min(Tl.rows, L.op.length - e0);
    return copy(spmRef(outBuf, 0, n), at(Io.out, e0, n), n, 1, n, n);
  }
  int64_t r0 = rowOf(tile) * Tl.rows, r1 = std::min(L.OH, r0 + Tl.rows);
  int64_t blk = blockOf(tile), nb = std::min(Tl.block, L.OC - blk * Tl.block);
  // A fused max pool stores the pooled rows: (r1 - r0) / PK of OW / PK pixels.
  int64_t ow = L.OW / L.PK, p0 = r0 / L.PK;
  int64_t pixels = (r1 - r0) / L.PK * ow;
  // [pixels][nb] in the scratchpad -> rows of OC bytes, columns from blk * block.
  if (Al.kind == NPUCC_AL_BLOCKED)
    return blockedOut(outBuf, at(Io.out, p0 * ow * L.OC + blk * Tl.block, 0), pixels, nb, L.OC);
  return copy(spmRef(outBuf, 0, pixels * nb), at(Io.out, p0 * ow * L.OC + blk * Tl.block, 0), nb,
              pixels, nb, L.OC);
}

Status Emitter::run() {
  int64_t n = numTiles();
  // Record offsets in the blob (the same layout buildRecords writes).
  uint64_t off = 0;
  for (int64_t b = 0; L.hasWeights() && b < blocks(); ++b) {
    RecordLayout rl = recordLayout(L, T, std::min(Tl.block, L.OC - b * Tl.block));
    RecordBlobOffset.push_back(off);
    off += alignUp(rl.size, recordAlign(T, L));
  }
  InSlotOf.assign(size_t(n), 0);
  int slot = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (newInput(i))
      slot = (slot + 1) % std::max({1, B.inCount, B.in2Count});
    InSlotOf[size_t(i)] = slot;
  }
  bool dmaRecords = L.hasWeights() && !recordsInSystem(L, T);
  if (dmaRecords && Tl.resident)
    for (int64_t b = 0; b < blocks(); ++b)
      NPUCC_TRY(loadRecord(b, 0));
  if (B.actCount)
    NPUCC_TRY(loadActTable());
  auto prefetch = [&](int64_t i) -> Status {
    if (dmaRecords && !Tl.resident && newBlock(i))
      NPUCC_TRY(loadRecord(blockOf(i), int(blockOf(i) % std::max(1, B.wCount))));
    if (newInput(i))
      NPUCC_TRY(loadInput(i, InSlotOf[size_t(i)]));
    return success();
  };
  NPUCC_TRY(prefetch(0));
  for (int64_t i = 0; i < n; ++i) {
    NPUCC_TRY(compute(i));
    if (i >= 1)
      NPUCC_TRY(store(i - 1));
    if (i + 1 < n)
      NPUCC_TRY(prefetch(i + 1));
  }
  return store(n - 1);
}

} // namespace

Status scheduleLayer(const Layer &l, const target::TargetDesc &t, const Tiling &tl,
                     const std::vector<SpmPlace> &spm, const LayerIo &io, int &nextToken,
                     const std::string &comment, std::vector<lir::Instr> &out, const Handoff &h) {
  // The layer's scratchpad buffers, explicit in the loop IR: allocated
  // before its first command, freed after its last (verify-spm checks every
  // scratchpad access against them).
  Buffers b = tilingBuffers(l, t, tl, h);
  if ((h.in || h.out) && (actLayoutOf(t, l).kind != NPUCC_AL_NHWC || tl.block != l.OC))
    return error("a hand-off needs the NHWC layout and whole-channel blocks");
  if (spm.size() < b.requests.size())
    return error("scratchpad placements missing for the layer's buffers");
  auto marker = [&](const char *opcode, const char *what, const SpmPlace &p, uint64_t size) {
    lir::Instr in;
    in.opcode = opcode;
    in.callee = what;
    lir::BufferRef ref;
    ref.region = lir::Region::Spm;
    ref.index = p.spm;
    ref.offset = int64_t(p.offset);
    ref.size = int64_t(size);
    ref.dtype = ir::DType::I8;
    in.args.push_back(ref);
    in.comment = comment;
    return in;
  };
  auto bufferInstr = [&](const char *opcode, size_t i) {
    const SpmRequest &r = b.requests[i];
    unsigned roles = r.roles;
    const char *what = roles & (1u << unsigned(target::Operand::W))     ? "w"
                       : roles & (1u << unsigned(target::Operand::In2)) ? "in2"
                       : roles & (1u << unsigned(target::Operand::Out)) ? "out"
                       : roles & (1u << unsigned(target::Operand::Act)) ? "act"
                                                                        : "in";
    return marker(opcode, what, spm[i], r.size);
  };
  for (size_t i = 0; i < b.requests.size(); ++i)
    out.push_back(bufferInstr("alloc", i));
  size_t first = out.size();
  Emitter e(l, t, tl, spm, io, nextToken, comment, out, h);
  NPUCC_TRY(e.run());
  for (size_t i = first; i < out.size(); ++i)
    if (out[i].opcode == "npu")
      NPUCC_TRY(proveCommand(out[i], t));
  for (size_t i = 0; i < b.requests.size(); ++i)
    if (!b.requests[i].kept) // the next layer frees a kept output
      out.push_back(bufferInstr("free", i));
  if (h.in) // the kept input, allocated by the layer before
    out.push_back(marker("free", "in", *h.in, h.inBytes));
  return success();
}

} // namespace npucc::lower::npu
