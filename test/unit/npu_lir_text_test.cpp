//===- npu_lir_text_test.cpp - Loop IR text of NPU programs round-trips ---===//
//
// The loop-IR text of NPU programs (target, scratchpads, `npu KIND #token
// (param=value, ...)`, `wait #a #b`, %spmN[off:size] buffers), through
// lir::printProgram / lir::parseProgram directly: printed, parsed back,
// printed again, the two texts equal and the parsed program equal to the
// original field by field; hand-written text parses to what it says;
// malformed NPU lines are refused with their position; a scheduled layer on
// every test NPU survives the text with the same estimate and waits.
//
//===----------------------------------------------------------------------===//
#include "../../lib/lower/npu/NpuInternal.h"

#include "npucc/lir/Program.h"
#include "npucc/target/Target.h"

#include "TestTargets.h"

#include <gtest/gtest.h>

using namespace npucc;
using npucc::lir::Arg;
using npucc::lir::BufferRef;
using npucc::lir::Instr;
using npucc::lir::Program;
using npucc::lir::Region;

namespace {

BufferRef ref(Region r, int index, int64_t off, int64_t size, ir::DType t) {
  BufferRef b;
  b.region = r;
  b.index = index;
  b.offset = off;
  b.size = size;
  b.dtype = t;
  return b;
}

Instr npu(const std::string &kind, int token, std::vector<std::pair<std::string, Arg>> params,
          const std::string &comment = "") {
  Instr in;
  in.opcode = "npu";
  in.callee = kind;
  in.token = token;
  in.params = std::move(params);
  in.comment = comment;
  return in;
}

Instr wait(std::vector<int> tokens, const std::string &comment = "") {
  Instr in;
  in.opcode = "wait";
  in.tokens = std::move(tokens);
  in.comment = comment;
  return in;
}

/// A program with every kind of NPU item: two scratchpads (one at a 40-bit
/// base), the constant blob, arena / input / output / const / scratchpad
/// operands with and without a dtype suffix, negative and 64-bit values,
/// a command without parameters, waits on one and several tokens, CPU calls
/// between them and comments.
Program sample() {
  Program p;
  p.modelName = "npu sample";
  p.arenaSize = 4096;
  p.arenaAlign = 64;
  p.peakLiveBytes = 2048;
  p.activationBytes = 3072;
  lir::ConstBuffer blob;
  blob.name = "npu_const";
  blob.data = ir::Tensor(ir::DType::U8, {1216});
  blob.npu = true;
  p.constants.push_back(std::move(blob));
  lir::ConstBuffer w;
  w.name = "w0";
  w.data = ir::Tensor(ir::DType::F32, {4, 3});
  p.constants.push_back(std::move(w));
  p.inputs.push_back({"x", ir::DType::I8, {1, 8, 8, 16}});
  p.outputs.push_back({"y", ir::DType::I8, {1, 8, 8, 32}});
  p.kernelFiles = {"kernels/npucc_move.c"};
  p.target = "npu-fourth";
  p.scratchpads = {{"sram", 0x0, 131072}, {"far", 0x10000000000ull, 65536}};
  p.spmPeak = 40960;
  using ir::DType;
  auto spm = [](int i, int64_t off, int64_t size, DType t = DType::I8) {
    return ref(Region::Spm, i, off, size, t);
  };
  p.body.push_back(npu("dma", 0,
                       {{"src_addr", ref(Region::Const, 0, 0, 1216, DType::I8)},
                        {"dst_addr", spm(0, 65536, 1216)},
                        {"length", int64_t(1216)}},
                       "conv0 (Conv on the NPU: conv)"));
  p.body.push_back(npu("dma", 1,
                       {{"src_addr", ref(Region::Input, 0, 128, 3072, DType::I8)},
                        {"dst_addr", spm(0, 0, 3072)},
                        {"length", int64_t(256)},
                        {"rows", int64_t(12)},
                        {"src_stride", int64_t(512)},
                        {"dst_stride", int64_t(256)}}));
  p.body.push_back(wait({0, 1}, "conv0 (Conv on the NPU: conv)"));
  p.body.push_back(npu("conv", 2,
                       {{"in_addr", spm(0, 0, 3072)},
                        {"w_addr", spm(0, 65536, 1152)},
                        {"bias_addr", spm(0, 66688, 128, DType::I32)},
                        {"rq_addr", spm(0, 66816, 256)},
                        {"per_channel", int64_t(1)},
                        {"out_addr", spm(1, 4096, 2048)},
                        {"in_h", int64_t(12)},
                        {"in_w", int64_t(16)},
                        {"in_ch", int64_t(16)},
                        {"out_h", int64_t(4)},
                        {"out_w", int64_t(16)},
                        {"out_ch", int64_t(32)},
                        {"k_h", int64_t(3)},
                        {"k_w", int64_t(3)},
                        {"pad_top", int64_t(0)},
                        {"in_zp", int64_t(-128)},
                        {"out_zp", int64_t(-5)},
                        {"act_min", int64_t(-128)},
                        {"act_max", int64_t(127)},
                        {"requant_shift", int64_t(-3)},
                        {"requant_mult", int64_t(1518500250)}},
                       "conv0 (Conv on the NPU: conv)"));
  p.body.push_back(npu("dma", 3,
                       {{"src_addr", spm(1, 4096, 2048)},
                        {"dst_addr", ref(Region::Arena, 0, 1024, 2048, DType::I8)},
                        {"length", int64_t(2048)},
                        {"zero_fill", int64_t(0)}}));
  p.body.push_back(wait({2}));
  p.body.push_back(npu("fence", 2147483647, {}));
  p.body.push_back(wait({3, 2147483647}, "end of the program"));
  Instr call;
  call.opcode = "call";
  call.callee = "npucc_transpose2d";
  call.args = {ref(Region::Arena, 0, 1024, 2048, DType::I8), ref(Region::Output, 0, 0, 2048, DType::I8),
               int64_t(1), int64_t(64), int64_t(32), int64_t(1)};
  call.comment = "y_transpose (Transpose)";
  p.body.push_back(call);
  return p;
}

void expectSameBuffer(const BufferRef &a, const BufferRef &b, const std::string &where) {
  EXPECT_EQ(int(a.region), int(b.region)) << where;
  EXPECT_EQ(a.index, b.index) << where;
  EXPECT_EQ(a.offset, b.offset) << where;
  EXPECT_EQ(a.size, b.size) << where;
  EXPECT_EQ(a.dtype, b.dtype) << where;
}

void expectSameArg(const Arg &a, const Arg &b, const std::string &where) {
  ASSERT_EQ(a.index(), b.index()) << where;
  if (auto *x = std::get_if<BufferRef>(&a)) {
    expectSameBuffer(*x, std::get<BufferRef>(b), where);
  } else if (auto *i = std::get_if<int64_t>(&a)) {
    EXPECT_EQ(*i, std::get<int64_t>(b)) << where;
  }
}

/// Field-by-field equality of the NPU parts (and of every instruction).
void expectSameProgram(const Program &a, const Program &b) {
  EXPECT_EQ(a.target, b.target);
  ASSERT_EQ(a.scratchpads.size(), b.scratchpads.size());
  for (size_t i = 0; i < a.scratchpads.size(); ++i) {
    EXPECT_EQ(a.scratchpads[i].name, b.scratchpads[i].name);
    EXPECT_EQ(a.scratchpads[i].base, b.scratchpads[i].base);
    EXPECT_EQ(a.scratchpads[i].size, b.scratchpads[i].size);
  }
  EXPECT_EQ(a.spmPeak, b.spmPeak);
  ASSERT_EQ(a.body.size(), b.body.size());
  for (size_t k = 0; k < a.body.size(); ++k) {
    const Instr &x = a.body[k], &y = b.body[k];
    std::string where = "instruction " + std::to_string(k);
    EXPECT_EQ(x.opcode, y.opcode) << where;
    EXPECT_EQ(x.callee, y.callee) << where;
    EXPECT_EQ(x.comment, y.comment) << where;
    EXPECT_EQ(x.tokens, y.tokens) << where;
    if (x.opcode == "npu") {
      EXPECT_EQ(x.token, y.token) << where;
    }
    ASSERT_EQ(x.params.size(), y.params.size()) << where;
    for (size_t i = 0; i < x.params.size(); ++i) {
      EXPECT_EQ(x.params[i].first, y.params[i].first) << where;
      expectSameArg(x.params[i].second, y.params[i].second, where + " " + x.params[i].first);
    }
    ASSERT_EQ(x.args.size(), y.args.size()) << where;
    for (size_t i = 0; i < x.args.size(); ++i)
      expectSameArg(x.args[i], y.args[i], where + " arg " + std::to_string(i));
  }
}

TEST(NpuLirText, PrintParsePrintIsStable) {
  Program p = sample();
  std::string text = lir::printProgram(p);
  auto q = lir::parseProgram(text, "sample.lir");
  ASSERT_TRUE(q.ok()) << q.error().str() << "\n" << text;
  EXPECT_EQ(lir::printProgram(*q), text);
  expectSameProgram(p, *q);
  EXPECT_TRUE(q->usesNpu());
}

TEST(NpuLirText, PrintedForm) {
  std::string text = lir::printProgram(sample());
  for (const char *line :
       {"target \"npu-fourth\"\n", "scratchpad %spm0 \"sram\" base 0x0 size 131072\n",
        "scratchpad %spm1 \"far\" base 0x10000000000 size 65536\n", "spm peak 40960\n",
        "npu dma #0 (src_addr=@npu_const[0:1216]:i8, dst_addr=%spm0[65536:1216], length=1216)  "
        "// conv0 (Conv on the NPU: conv)\n",
        "wait #0 #1  // conv0 (Conv on the NPU: conv)\n",
        "bias_addr=%spm0[66688:128]:i32, ", "out_addr=%spm1[4096:2048], ",
        "in_zp=-128, out_zp=-5, ", "requant_shift=-3, requant_mult=1518500250)",
        "dst_addr=%arena[1024:2048]:i8, ", "\nwait #2\n", "npu fence #2147483647 ()\n",
        "wait #3 #2147483647  // end of the program\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
}

TEST(NpuLirText, HandWrittenTextParses) {
  const char *text = R"(program "hand"
arena 1024 align 16
stats peak 0 activations 0
const @npu_const: u8[64] 64 bytes
target "npu-default"
scratchpad %spm0 "spm" base 0x0 size 262144
spm peak 4096
npu dma #4 (src_addr=@npu_const[0:64]:i8, dst_addr=%spm0[1536:64], length=64)  // conv0
wait #4
npu conv #5 (in_addr=%spm0[0:672], out_addr=%spm0[2048:512], in_h=7, pad_top=1, in_zp=-3)
wait #4 #5
)";
  auto p = lir::parseProgram(text, "hand.lir");
  ASSERT_TRUE(p.ok()) << p.error().str();
  EXPECT_EQ(p->target, "npu-default");
  ASSERT_EQ(p->scratchpads.size(), 1u);
  EXPECT_EQ(p->scratchpads[0].size, 262144u);
  ASSERT_EQ(p->body.size(), 4u);
  const Instr &d = p->body[0];
  EXPECT_EQ(d.opcode, "npu");
  EXPECT_EQ(d.callee, "dma");
  EXPECT_EQ(d.token, 4);
  EXPECT_EQ(d.comment, "conv0");
  ASSERT_EQ(d.params.size(), 3u);
  expectSameBuffer(std::get<BufferRef>(d.params[0].second),
                   ref(Region::Const, 0, 0, 64, ir::DType::I8), "src");
  expectSameBuffer(std::get<BufferRef>(d.params[1].second),
                   ref(Region::Spm, 0, 1536, 64, ir::DType::I8), "dst");
  EXPECT_EQ(std::get<int64_t>(d.params[2].second), 64);
  EXPECT_EQ(p->body[1].tokens, (std::vector<int>{4}));
  const Instr &c = p->body[2];
  EXPECT_EQ(c.callee, "conv");
  EXPECT_EQ(lower::npu::paramValue(c, "in_h"), 7);
  EXPECT_EQ(lower::npu::paramValue(c, "in_zp"), -3);
  EXPECT_EQ(lower::npu::paramValue(c, "out_addr"), 2048);
  EXPECT_EQ(p->body[3].tokens, (std::vector<int>{4, 5}));
  // And it prints back as written.
  EXPECT_EQ(lir::printProgram(*p), text);
}

TEST(NpuLirText, MalformedNpuLinesAreRefused) {
  const std::string head = "program \"bad\"\narena 0 align 16\nstats peak 0 activations 0\n"
                           "scratchpad %spm0 \"spm\" base 0x0 size 4096\n";
  struct Case {
    std::string line, message;
  };
  for (const Case &c : std::vector<Case>{
           {"wait\n", "expected '#token' after wait"},
           {"npu dma #0 (dst_addr=%spm1[0:16], length=16)\n", "buffer '%spm1' out of range"},
           {"npu dma #-1 (length=16)\n", "bad token #-1"},
           {"npu dma #0 (length=16\n", ""},
           {"npu dma #0 (dst_addr=%spm0, length=16)\n", "expected '[offset:size]'"}}) {
    auto p = lir::parseProgram(head + c.line, "bad.lir");
    ASSERT_FALSE(p.ok()) << c.line;
    std::string msg = p.error().str();
    EXPECT_NE(msg.find("bad.lir:5:"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
  }
}

TEST(NpuLirText, ScheduledLayerRoundTrips) {
  // What the lowering emits for a tiled conv on every test NPU (tokens, waits,
  // strided transfers, scratchpad addresses) survives the text.
  for (const std::string &name : test::allTargets()) {
    auto t = target::loadTarget(name);
    ASSERT_TRUE(t.ok()) << t.error().str();
    target::NpuOp op;
    op.kind = NPUCC_KIND_CONV;
    op.kindName = "conv";
    op.inH = op.outH = 20;
    op.inW = op.outW = 12;
    op.inC = 16;
    op.outC = 48;
    op.kh = op.kw = 3;
    op.padTop = op.padBottom = op.padLeft = op.padRight = 1;
    op.perChannel = !t->operation("conv")->perTensorRequant;
    lower::npu::Layer l = lower::npu::makeLayer(op);
    auto c = lower::npu::chooseTiling(l, *t);
    ASSERT_TRUE(c.ok()) << name << ": " << c.error().message;
    Program p;
    p.modelName = "layer";
    p.target = t->name;
    for (const target::Scratchpad &s : t->scratchpads)
      p.scratchpads.push_back({s.name, s.base, s.size});
    lir::ConstBuffer blob;
    blob.name = "npu_const";
    blob.data = ir::Tensor(ir::DType::U8, {65536});
    p.constants.push_back(std::move(blob));
    lower::npu::LayerIo io;
    io.in = ref(Region::Arena, 0, 0, 20 * 12 * 16, ir::DType::I8);
    io.out = ref(Region::Arena, 0, 4096, 20 * 12 * 48, ir::DType::I8);
    io.blob = ref(Region::Const, 0, 0, 0, ir::DType::U8);
    int tok = 0;
    ASSERT_TRUE(lower::npu::scheduleLayer(l, *t, c->tiling, c->spm, io, tok, "conv (Conv)", p.body).ok());
    ASSERT_TRUE(lower::insertNpuWaits(p, *t).ok());
    std::string text = lir::printProgram(p);
    auto q = lir::parseProgram(text, name);
    ASSERT_TRUE(q.ok()) << q.error().str();
    EXPECT_EQ(lir::printProgram(*q), text) << name;
    expectSameProgram(p, *q);
    // The parsed program times and waits exactly like the original.
    lower::NpuEstimate a = lower::estimateProgram(p, *t), b = lower::estimateProgram(*q, *t);
    EXPECT_EQ(a.cycles, b.cycles) << name;
    EXPECT_EQ(a.sysRead, b.sysRead) << name;
    Program r = *q;
    ASSERT_TRUE(lower::insertNpuWaits(r, *t).ok());
    EXPECT_EQ(lir::printProgram(r), text) << name << ": waits recomputed from the text differ";
  }
}

} // namespace
