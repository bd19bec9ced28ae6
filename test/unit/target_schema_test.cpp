//===- target_schema_test.cpp - What a description can state, and its rules ===//
//
// For every property a description can express (wide addresses, parameters
// split over several fields, status bits with polarity / sticky / clearing,
// error codes, opcode doorbells with a no-op value, job queues, per-operation
// capabilities, banks, operand alignment, DMA limits; timing is in
// target_timing_test.cpp)
// one test that it is accepted and carried into the runtime's table, and one
// rejection per rule with the JSON path. Also the loader's holes: commands that
// would start identically, too many registers per command, numbers that do not
// fit what carries them, misspelt required keys, huge values in messages.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_desc.h"
#include "npucc_npu.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"

using namespace npucc::target;
using namespace npucc::test;

namespace {

// --- System addresses wider than 32 bits ---------------------------------------------------

TEST(TargetSchema, WideAddressesAndSplitParameters) {
  auto r = parseEdited([](json &j) {
    set(j, "/address_bits", 40);
    set(j, "/memories/system/0/base", "0xA0_0000_0000");
    set(j, "/memories/system/0/access", "ro"); // only read: src_addr reaches it
    set(j, "/registers/6/fields/0/width", 8);
    set(j, "/commands/dma/params/src_addr", {{"fields", {"A", "DIMS.n"}}});
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->system[0].base, 0xA000000000ull);
  const ParamBinding *b = r->command("dma")->binding("src_addr");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->fields.size(), 2u);
  EXPECT_EQ(b->totalWidth(), 40u);
  EXPECT_EQ(r->paramRange("dma", "src_addr").hi, (int64_t(1) << 40) - 1);
  // The command layer splits the value low part first and the simulator's
  // decoder joins it again.
  CTable t(*r);
  std::vector<int64_t> p = CTable::defaultParams();
  p[NPUCC_P_SRC_ADDR] = 0xA012345678ll;
  p[NPUCC_P_DST_ADDR] = 16;
  p[NPUCC_P_LENGTH] = 4;
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int n = 0;
  ASSERT_EQ(npucc_npu_encode(t.get(), NPUCC_KIND_DMA, p.data(), w, &n, nullptr), NPUCC_OK);
  std::vector<uint64_t> regs(r->registers.size(), 0);
  for (int i = 0; i < n; ++i)
    regs[w[i].reg] = w[i].value;
  EXPECT_EQ(regs[2], 0x12345678u);        // A: low 32 bits
  EXPECT_EQ(regs[6] >> 16 & 0xFF, 0xA0u); // DIMS.n: bits 32..39
  EXPECT_EQ(w[n - 1].reg, 0u);            // the doorbell register (CTRL) last
  int64_t back[NPUCC_P_COUNT];
  npucc_npu_decode(t.get(), npucc_desc_find_cmd(t.get(), NPUCC_KIND_DMA), regs.data(), back);
  EXPECT_EQ(back[NPUCC_P_SRC_ADDR], 0xA012345678ll);
  // One more bit does not fit the 40 bits of the two fields.
  p[NPUCC_P_SRC_ADDR] = int64_t(1) << 40;
  int bad = -1;
  EXPECT_EQ(npucc_npu_encode(t.get(), NPUCC_KIND_DMA, p.data(), w, &n, &bad), NPUCC_ERR_RANGE);
  EXPECT_EQ(bad, NPUCC_P_SRC_ADDR);
}

TEST(TargetSchema, WideAddressRules) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/address_bits", 31); }),
            "mini.json: error: /address_bits: value 31 out of range 32..64");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/address_bits", 40);
              set(j, "/memories/system/0/base", "0x100_0000_0000");
            }),
            "mini.json: error: /memories/system/0/base: system memory 'ram' starts at "
            "0x10000000000, outside the 40-bit address space (address_bits)");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/address_bits", 40);
              set(j, "/memories/system/0/base", "0xFF_FFFF_F000");
              set(j, "/memories/system/0/size", 8192);
            }),
            "mini.json: error: /memories/system/0/size: system memory 'ram' (0xfffffff000 + "
            "0x2000 bytes) extends past the 40-bit address space (address_bits)");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/src_addr", {{"fields", {"A", "B", "C"}}});
            }),
            "mini.json: error: /commands/dma/params/src_addr: the fields of parameter 'src_addr' "
            "hold 96 bits; at most 64");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/src_addr", {{"field", "A"}, {"fields", {"A"}}});
            }),
            "mini.json: error: /commands/dma/params/src_addr: exactly one of 'field' or 'fields' "
            "is required");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/src_addr", {{"fields", {"A", "DIMS.m"}}});
              set(j, "/commands/dma/params/length", "DIMS.k");
              set(j, "/commands/dma/params/dst_addr", {{"fields", {"B", "DIMS.m"}}});
            }),
            "mini.json: error: /commands/dma/params/src_addr: field 'DIMS.m' overlaps 'DIMS.m', "
            "already written by this command");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/src_addr", {{"fields", json::array()}});
            }),
            "mini.json: error: /commands/dma/params/src_addr/fields: expected 1 to 8 fields, "
            "least significant first");
}

// --- Completion without busy bits, polarity, clearing, error codes -------------------------

/// Status of the minimal description with DONE bits in an interrupt register.
void irqStatus(json &j, json dmaDone, json compDone) {
  j["registers"].push_back({{"name", "IRQ"}, {"offset", 40}, {"fields", {{{"name", "d"}, {"lsb", 0}, {"width", 1}}, {{"name", "c"}, {"lsb", 1}, {"width", 1}}}}});
  j["registers"].push_back({{"name", "ERR"}, {"offset", 44}, {"fields", {{{"name", "code"}, {"lsb", 0}, {"width", 4}}}}});
  j["status"] = {{"dma", {{"done", dmaDone}, {"error", {{"field", "ERR.code"}, {"clear", "write1"}}}}},
                 {"compute", {{"done", compDone}, {"error", {{"field", "ERR.code"}, {"clear", "write1"}}}}}};
}

TEST(TargetSchema, StickyDoneBitsAndSharedErrorCodes) {
  auto r = parseEdited([](json &j) {
    irqStatus(j, {{"field", "IRQ.d"}, {"sticky", true}, {"clear", "write1"}, {"require_clear", true}},
              {{"field", "IRQ.c"}, {"sticky", true}, {"clear", "read"}});
    j["status"]["dma"]["busy"] = {{"field", "STATUS.busy"}, {"active_low", true}};
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  const EngineStatus &d = r->engines[0];
  EXPECT_TRUE(d.done.sticky && d.done.clearOnWrite1 && d.done.requireClear);
  EXPECT_TRUE(d.busy.activeLow);
  EXPECT_TRUE(r->engines[1].done.clearOnRead);
  EXPECT_EQ(d.error.field.width, 4u);
  EXPECT_TRUE(r->isStatusRegister(9));  // IRQ
  EXPECT_FALSE(r->isStatusRegister(2)); // A
  CTable t(*r);
  const npucc_target_desc *c = t.get();
  EXPECT_EQ(c->engines[0].done.flags, NPUCC_SB_STICKY | NPUCC_SB_CLEAR_W1C | NPUCC_SB_REQUIRE_CLEAR);
  EXPECT_EQ(c->engines[0].busy.flags, NPUCC_SB_ACTIVE_LOW);
  EXPECT_EQ(c->engines[1].done.flags, NPUCC_SB_STICKY | NPUCC_SB_CLEAR_READ);
  // Both engines name the same error field.
  EXPECT_EQ(c->engines[0].error.f.reg, c->engines[1].error.f.reg);
}

TEST(TargetSchema, StatusBitRules) {
  json sticky = {{"field", "IRQ.d"}, {"sticky", true}, {"clear", "write1"}};
  EXPECT_EQ(errOf([&](json &j) {
              irqStatus(j, {{"field", "IRQ.d"}, {"sticky", true}}, "IRQ.c");
            }),
            "mini.json: error: /status/dma/done/sticky: a sticky done bit needs a 'clear' mode "
            "(write1, read or {\"field\", \"value\"})");
  EXPECT_EQ(errOf([&](json &j) { irqStatus(j, {{"field", "IRQ.d"}, {"clear", "read"}}, "IRQ.c"); }),
            "mini.json: error: /status/dma/done/clear: only a sticky done bit can be cleared");
  EXPECT_EQ(errOf([&](json &j) {
              irqStatus(j, {{"field", "IRQ.d"}, {"require_clear", true}}, "IRQ.c");
            }),
            "mini.json: error: /status/dma/done/require_clear: require_clear needs a sticky done "
            "bit");
  EXPECT_EQ(errOf([&](json &j) {
              irqStatus(j, {{"field", "IRQ.d"}, {"sticky", true}, {"clear", "write0"}}, "IRQ.c");
            }),
            "mini.json: error: /status/dma/done/clear: unknown clear mode 'write0' (expected "
            "none, write1, read or {\"field\", \"value\"})");
  EXPECT_EQ(errOf([&](json &j) {
              irqStatus(j, sticky, "IRQ.c");
              j["status"]["dma"]["busy"] = {{"field", "STATUS.busy"}, {"clear", "write1"}};
            }),
            "mini.json: error: /status/dma/busy/clear: a busy bit cannot be cleared");
  EXPECT_EQ(errOf([&](json &j) {
              irqStatus(j, sticky, "IRQ.c");
              j["status"]["compute"]["error"] = {{"field", "ERR.code"}, {"active_low", true}};
            }),
            "mini.json: error: /status/compute/error/active_low: an error code field cannot be "
            "active-low");
  EXPECT_EQ(errOf([&](json &j) { irqStatus(j, sticky, "IRQ.d"); }),
            "mini.json: error: /status/compute/done: status field 'IRQ.d' overlaps 'IRQ.d' "
            "(/status/dma/done)");
  EXPECT_EQ(errOf([](json &j) { del(j, "/status/compute/busy"); del(j, "/status/compute/done"); }),
            "mini.json: error: /status/compute: the compute engine needs a 'busy' or a 'done' bit "
            "to observe completion");
  // A register holding status bits is not a command register.
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/params/length", "STATUS"); }),
            "mini.json: error: /commands/dma/params/length: register 'STATUS' holds status bit "
            "'STATUS.busy' (/status/dma/busy); command 'dma' cannot write it; make it the "
            "doorbell's start_bit, guard it with a write_enable field, or mark 'STATUS' \"write\": "
            "\"rmw\"");
}

// --- Opcode as doorbell, no-op values ------------------------------------------------------

TEST(TargetSchema, OpcodeDoorbellWithNoOpValue) {
  // Commands started by writing their opcode into CTRL.op (no separate doorbell bit).
  auto edit = [](json &j) {
    set(j, "/registers/0/fields/1/nop", 3);
    del(j, "/commands/dma/select");
    del(j, "/commands/matmul/select");
    set(j, "/commands/dma/doorbell", {{"field", "CTRL.op"}, {"value", 0}});
    set(j, "/commands/matmul/doorbell", {{"field", "CTRL.op"}, {"value", 1}});
  };
  auto r = parseEdited(edit);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->command("dma")->doorbellNop, 3u);
  EXPECT_EQ(CTable(*r).get()->cmds[0].doorbell_nop, 3u);
  EXPECT_EQ(errOf([&](json &j) {
              edit(j);
              set(j, "/commands/matmul/doorbell/value", 3);
            }),
            "mini.json: error: /commands/matmul/doorbell/value: value 3 is the no-op (idle) "
            "value of 'CTRL.op'; writing it starts nothing");
  // Without a declared no-op, 0 is the idle value of a doorbell field.
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/dma/doorbell/value", 0); }),
            "mini.json: error: /commands/dma/doorbell/value: value 0 is the no-op (idle) value "
            "of 'CTRL.go'; writing it starts nothing");
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/0/fields/1/nop", 4); }),
            "mini.json: error: /registers/0/fields/1/nop: value 4 out of range 0..3");
}

TEST(TargetSchema, CommandsThatStartIdenticallyAreRejected) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/matmul/select/0/value", 0); }),
            "mini.json: error: /commands/matmul: command 'matmul' starts exactly like command "
            "'dma' (/commands/dma): 'CTRL.go' = 1 and no select field holds a different value "
            "for the two");
  EXPECT_EQ(errOf([](json &j) { del(j, "/commands/matmul/select"); }),
            "mini.json: error: /commands/matmul: command 'matmul' starts exactly like command "
            "'dma' (/commands/dma): 'CTRL.go' = 1 and no select field holds a different value "
            "for the two");
}

// --- Job queues ----------------------------------------------------------------------------

void jobQueue(json &j) {
  del(j, "/status/register"); // the free-slot counts live in another register
  j["registers"].push_back({{"name", "Q"}, {"offset", 40}, {"fields", {{{"name", "d"}, {"lsb", 0}, {"width", 3}}, {{"name", "c"}, {"lsb", 4}, {"width", 3}}}}});
  j["job_queue"] = {{"depth", 4}, {"commit", {{"field", "CTRL.go"}, {"value", 1}}}};
  del(j, "/commands/dma/doorbell");
  del(j, "/commands/matmul/doorbell");
  j["status"]["dma"]["free_slots"] = "Q.d";
  j["status"]["compute"]["free_slots"] = "Q.c";
}

TEST(TargetSchema, JobQueue) {
  auto r = parseEdited(jobQueue);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->queue.depth, 4u);
  EXPECT_EQ(r->command("matmul")->doorbell.field.text, "CTRL.go");
  CTable t(*r);
  EXPECT_EQ(t.get()->queue_depth, 4u);
  EXPECT_EQ(t.get()->engines[NPUCC_ENGINE_COMPUTE].free_slots.f.lsb, 4u);
  EXPECT_EQ(errOf([](json &j) {
              jobQueue(j);
              set(j, "/commands/dma/doorbell", {{"field", "CTRL.go"}, {"value", 1}});
            }),
            "mini.json: error: /commands/dma/doorbell: with a job queue, commands are started by "
            "the queue's commit (/job_queue/commit); remove 'doorbell'");
  EXPECT_EQ(errOf([](json &j) {
              jobQueue(j);
              del(j, "/status/compute/free_slots");
            }),
            "mini.json: error: /status/compute: with a job queue, the compute engine needs "
            "'free_slots'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/status/dma/free_slots", "STATUS.busy"); }),
            "mini.json: error: /status/dma/free_slots: free_slots needs a job queue (/job_queue)");
  EXPECT_EQ(errOf([](json &j) {
              jobQueue(j);
              set(j, "/job_queue/depth", 0);
            }),
            "mini.json: error: /job_queue/depth: value 0 out of range 1..255");
  // The commit selects among commands by their select fields only.
  EXPECT_EQ(errOf([](json &j) {
              jobQueue(j);
              set(j, "/commands/matmul/select/0/value", 0);
            }),
            "mini.json: error: /commands/matmul: command 'matmul' starts exactly like command "
            "'dma' (/commands/dma): 'CTRL.go' = 1 and no select field holds a different value "
            "for the two");
}

// --- Memory structure: banks, operand alignment, DMA limits ----------------------------------

TEST(TargetSchema, BanksAndOperandAlignment) {
  auto r = parseEdited([](json &j) {
    set(j, "/memories/scratchpads/0/banks", 2);
    set(j, "/memories/scratchpads/0/operand_alignment", {{"w", 64}, {"bias", 4}});
    set(j, "/memories/scratchpads/0/alignment", 8);
    set(j, "/memories/scratchpads/0/separate_banks",
        json::array({json::array({"in", "w"}), json::array({"w", "out"})}));
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  const Scratchpad &s = r->scratchpads[0];
  EXPECT_EQ(s.bankSize, 2048u);
  EXPECT_EQ(s.alignmentOf(Operand::W), 64u);
  EXPECT_EQ(s.alignmentOf(Operand::Bias), 4u);
  EXPECT_EQ(s.alignmentOf(Operand::In), 8u);
  EXPECT_TRUE(s.conflictIsError);
  CTable table(*r);
  const npucc_mem_desc &m = table.get()->mems[0];
  EXPECT_EQ(m.separate[NPUCC_OPND_W], (1u << NPUCC_OPND_IN) | (1u << NPUCC_OPND_OUT));
  EXPECT_EQ(m.separate[NPUCC_OPND_IN], 1u << NPUCC_OPND_W);
  EXPECT_EQ(m.operand_alignment[NPUCC_OPND_W], 64u);
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/scratchpads/0/banks", 3); }),
            "mini.json: error: /memories/scratchpads/0/banks: size 4096 is not a multiple of 3 "
            "banks (give bank_size)");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/memories/scratchpads/0/banks", 2);
              set(j, "/memories/scratchpads/0/bank_size", 1024);
            }),
            "mini.json: error: /memories/scratchpads/0/bank_size: banks x bank_size = 2 x 1024 "
            "is not the size 4096");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/memories/scratchpads/0/separate_banks", json::array({json::array({"in", "w"})}));
            }),
            "mini.json: error: /memories/scratchpads/0/separate_banks: separate_banks needs at "
            "least 2 banks");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/memories/scratchpads/0/banks", 2);
              set(j, "/memories/scratchpads/0/separate_banks",
                  json::array({json::array({"in", "weights"})}));
            }),
            "mini.json: error: /memories/scratchpads/0/separate_banks/0/1: unknown operand "
            "'weights' (expected in, in2, w, bias, rq, out or act)");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/memories/scratchpads/0/banks", 2);
              set(j, "/memories/scratchpads/0/separate_banks", json::array({json::array({"w", "w"})}));
            }),
            "mini.json: error: /memories/scratchpads/0/separate_banks/0: an operand cannot be "
            "separated from itself");
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/scratchpads/0/bank_conflict", "slowdown"); }),
            "mini.json: error: /memories/scratchpads/0/bank_conflict: bank_conflict needs "
            "separate_banks");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/memories/scratchpads/0/operand_alignment", {{"w", 48}});
            }),
            "mini.json: error: /memories/scratchpads/0/operand_alignment/w: alignment 48 is not "
            "a power of two");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/memories/scratchpads/0/operand_alignment", {{"weights", 64}});
            }),
            "mini.json: error: /memories/scratchpads/0/operand_alignment/weights: unknown field "
            "'weights'");
}

TEST(TargetSchema, DmaLimitsExplicitOrFromFieldWidths) {
  // length is bound to the 32-bit register C; the explicit limit is smaller.
  auto r = parseEdited([](json &j) { set(j, "/dma/max_length", 4096); });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->dma.maxLength, 4096u);
  EXPECT_EQ(CTable(*r).get()->dma_max_length, 4096u);
  // Bound to an 8-bit field, the length can be at most 255 ...
  r = parseEdited([](json &j) { set(j, "/commands/dma/params/length", "SHIFT"); });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->dma.maxLength, 255u);
  // ... and an explicit limit beyond what the field holds is an error.
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/dma/params/length", "SHIFT");
              set(j, "/dma/max_length", 256);
            }),
            "mini.json: error: /dma/max_length: max_length 256 exceeds what the dma command's "
            "fields can hold (255)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/max_rows", 8); }),
            "mini.json: error: /dma/max_rows: max_rows > 1 needs a DMA with dims >= 2");
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/dims", 2); }),
            "mini.json: error: /commands/dma/params: a 2-D DMA must bind parameter 'rows'");
}

// --- Per-operation capabilities --------------------------------------------------------------

TEST(TargetSchema, PerOperationCapabilities) {
  auto r = parseEdited([](json &j) {
    set(j, "/compute/requant", {"per_tensor", "per_channel"});
    set(j, "/commands/matmul/params/rq_addr", "D");
    set(j, "/commands/matmul/fixed", {{"per_channel", 1}});
    set(j, "/commands/matmul/params/out_addr", {{"fields", {"MULT"}}});
    del(j, "/commands/matmul/params/requant_mult");
    set(j, "/compute/operations/matmul",
        {{"max_m", 64}, {"max_k", 512}, {"max_n", 128}, {"requant", {"per_channel"}},
         {"max_in_channels", 500}});
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  const OpLimits &mm = *r->operation("matmul");
  EXPECT_TRUE(mm.perChannelRequant);
  EXPECT_FALSE(mm.perTensorRequant);
  EXPECT_EQ(mm.maxM, 64u);
  EXPECT_EQ(mm.maxK, 512u);
  EXPECT_EQ(mm.maxN, 128u);
  EXPECT_EQ(mm.maxInChannels, 500u);
  CTable table(*r);
  const npucc_op_limits &l = table.get()->ops[NPUCC_KIND_MATMUL];
  EXPECT_EQ(l.requant, NPUCC_RQ_PER_CHANNEL);
  EXPECT_EQ(l.max_k, 512u);
  EXPECT_EQ(errOf([](json &j) { set(j, "/compute/operations/matmul", {{"requant", json::array()}}); }),
            "mini.json: error: /compute/operations/matmul/requant: at least one requant mode is "
            "required");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/compute/operations/matmul", {{"requant", {"per_channel"}}});
            }),
            "mini.json: error: /commands/matmul/params: per-channel requant needs parameter "
            "'rq_addr' bound");
  EXPECT_EQ(errOf([](json &j) { set(j, "/compute/operations/matmul", {{"kernel_sizes", {3}}}); }),
            "mini.json: error: /compute/operations/matmul/kernel_sizes: 'kernel_sizes' does not "
            "apply to operation 'matmul'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/compute/fused_activations", {"clamp"}); }),
            "mini.json: error: /commands/matmul/params: a fused clamp needs parameters 'act_min' "
            "and 'act_max' bound");
}

/// Adds a conv and a depthwise operation and command to the minimal description.
void spatialOps(json &j, json conv, json dw) {
  auto field = [](const char *n, int lsb, int w) {
    return json{{"name", n}, {"lsb", lsb}, {"width", w}};
  };
  j["registers"].push_back({{"name", "G"}, {"offset", 48},
                            {"fields", {field("ih", 0, 8), field("iw", 8, 8), field("oh", 16, 8),
                                        field("ow", 24, 8)}}});
  j["registers"].push_back({{"name", "K2"}, {"offset", 52},
                            {"fields", {field("kh", 0, 4), field("kw", 4, 4), field("c", 8, 12),
                                        field("oc", 20, 12)}}});
  j["registers"].push_back({{"name", "PAD"}, {"offset", 56},
                            {"fields", {field("t", 0, 4), field("l", 4, 4)}}});
  json params = {{"in_addr", "A"},   {"w_addr", "B"},    {"bias_addr", "C"}, {"out_addr", "D"},
                 {"in_h", "G.ih"},   {"in_w", "G.iw"},   {"in_ch", "K2.c"},  {"out_h", "G.oh"},
                 {"out_w", "G.ow"},  {"k_h", "K2.kh"},   {"k_w", "K2.kw"},   {"requant_mult", "MULT"},
                 {"requant_shift", "SHIFT"}, {"pad_top", "PAD.t"}, {"pad_left", "PAD.l"}};
  json cp = params;
  cp["out_ch"] = "K2.oc";
  j["compute"]["operations"]["conv"] = conv;
  j["compute"]["operations"]["depthwise"] = dw;
  j["commands"]["conv"] = {{"params", cp}, {"select", {{{"field", "CTRL.op"}, {"value", 2}}}},
                           {"doorbell", {{"field", "CTRL.go"}, {"value", 1}}}};
  j["commands"]["depthwise"] = {{"params", params},
                                {"select", {{{"field", "CTRL.op"}, {"value", 3}}}},
                                {"doorbell", {{"field", "CTRL.go"}, {"value", 1}}}};
}

TEST(TargetSchema, SpatialCapabilities) {
  auto r = parseEdited([](json &j) {
    spatialOps(j,
               {{"kernel_heights", {1, 3}}, {"kernel_widths", {1, 3, 7}},
                {"max_padding", {{"top", 1}, {"bottom", 2}, {"left", 3}}},
                {"max_in_channels", 256}, {"max_out_channels", 64}, {"out_channel_multiple", 8},
                {"max_in_h", 100}, {"max_out_w", 50}},
               {{"kernel_sizes", {3}}, {"channel_multipliers", {1}}});
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  const OpLimits &c = *r->operation("conv");
  EXPECT_TRUE(c.allowsKernel(1, 7));
  EXPECT_FALSE(c.allowsKernel(7, 1));
  EXPECT_EQ(c.maxPad[0], 1u);
  EXPECT_EQ(c.maxPad[1], 2u);
  EXPECT_EQ(c.maxPad[2], 3u);
  EXPECT_EQ(c.maxPad[3], 0u); // not given: no padding on that side
  EXPECT_EQ(c.maxInChannels, 256u);
  EXPECT_EQ(c.maxOutChannels, 64u);
  EXPECT_EQ(c.outChannelMultiple, 8u);
  EXPECT_EQ(c.inChannelMultiple, 1u);
  EXPECT_EQ(c.maxInH, 100u);
  EXPECT_EQ(c.maxOutW, 50u);
  CTable table(*r);
  const npucc_op_limits &l = table.get()->ops[NPUCC_KIND_CONV];
  EXPECT_EQ(l.kh_mask, (1u << 1) | (1u << 3));
  EXPECT_EQ(l.kw_mask, (1u << 1) | (1u << 3) | (1u << 7));
  EXPECT_EQ(l.max_pad[1], 2u);
  EXPECT_EQ(l.out_ch_multiple, 8u);
  EXPECT_EQ(errOf([](json &j) {
              spatialOps(j, {{"kernel_heights", {3}}}, {{"kernel_sizes", {3}}});
            }),
            "mini.json: error: /compute/operations/conv/kernel_sizes: operation 'conv' needs "
            "kernel_sizes (or kernel_heights and kernel_widths)");
  EXPECT_EQ(errOf([](json &j) {
              spatialOps(j, {{"kernel_sizes", {3}}, {"max_padding", {{"middle", 1}}}},
                         {{"kernel_sizes", {3}}});
            }),
            "mini.json: error: /compute/operations/conv/max_padding/middle: unknown field "
            "'middle'");
  EXPECT_EQ(errOf([](json &j) {
              spatialOps(j, {{"kernel_sizes", {3}}},
                         {{"kernel_sizes", {3}}, {"channel_multipliers", {1, 2}}});
            }),
            "mini.json: error: /commands/depthwise/params: channel multipliers other than 1 need "
            "parameter 'depth_mult' bound");
  EXPECT_EQ(errOf([](json &j) {
              spatialOps(j, {{"kernel_sizes", {3}}, {"channel_multipliers", {2}}},
                         {{"kernel_sizes", {3}}});
            }),
            "mini.json: error: /compute/operations/conv/channel_multipliers: "
            "'channel_multipliers' does not apply to operation 'conv'");
  EXPECT_EQ(errOf([](json &j) {
              spatialOps(j, {{"kernel_sizes", {3}}, {"strides", json::array()}},
                         {{"kernel_sizes", {3}}});
            }),
            "mini.json: error: /compute/operations/conv/strides: expected a non-empty list");
}

TEST(TargetSchema, CapabilitiesMustBeProgrammable) {
  // A kernel the 4-bit k_h field of K2 cannot hold.
  EXPECT_EQ(errOf([](json &j) {
              spatialOps(j, {{"kernel_sizes", {3, 17}}}, {{"kernel_sizes", {3}}});
            }),
            "mini.json: error: /compute/operations/conv/kernel_sizes: kernel height 17 cannot be "
            "programmed: command 'conv' parameter 'k_h' = 17 does not fit its field 'K2.kh' "
            "(0..15)");
  // A dilation the command fixes to another value.
  EXPECT_EQ(errOf([](json &j) {
              spatialOps(j, {{"kernel_sizes", {3}}, {"dilations", {1, 2}}}, {{"kernel_sizes", {3}}});
              j["commands"]["conv"]["fixed"] = {{"dil_h", 1}, {"dil_w", 1}};
            }),
            "mini.json: error: /compute/operations/conv/dilations: dilation 2 cannot be "
            "programmed: command 'conv' parameter 'dil_h' = 2 but the command fixes it to 1");
  EXPECT_EQ(errOf([](json &j) {
              spatialOps(j, {{"kernel_sizes", {3}}, {"max_padding", 16}}, {{"kernel_sizes", {3}}});
            }),
            "mini.json: error: /compute/operations/conv/max_padding: max_padding top 16 cannot be "
            "programmed: command 'conv' parameter 'pad_top' = 16 does not fit its field 'PAD.t' "
            "(0..15)");
  // Both requant modes: per_channel must be a field, not fixed.
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/compute/requant", {"per_tensor", "per_channel"});
              set(j, "/commands/matmul/params/rq_addr", "D");
              set(j, "/commands/matmul/params/out_addr", {{"fields", {"MULT"}}});
              del(j, "/commands/matmul/params/requant_mult");
              set(j, "/compute/operations/matmul", {{"requant", {"per_channel", "per_tensor"}}});
            }),
            "mini.json: error: /commands/matmul/params: per-tensor requant needs parameter "
            "'requant_mult' bound (or fixed: a shift-only requantizer) and 'requant_shift' bound");
  // A fixed multiplier (a shift-only requantizer) is accepted.
  EXPECT_EQ(errOf([](json &j) {
              del(j, "/commands/matmul/params/requant_mult");
              set(j, "/commands/matmul/fixed", {{"requant_mult", 1073741824}});
            }),
            "");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/commands/matmul/fixed", {{"per_channel", 1}});
            }),
            "mini.json: error: /commands/matmul/fixed: per-tensor requant needs 'per_channel' 0, "
            "but the command fixes it to 1");
  EXPECT_EQ(errOf([](json &j) {
              set(j, "/compute/requant", {"per_channel"});
              set(j, "/commands/matmul/params/rq_addr", "D");
              set(j, "/commands/matmul/params/out_addr", {{"fields", {"MULT"}}});
              del(j, "/commands/matmul/params/requant_mult");
            }),
            "mini.json: error: /commands/matmul/params: per-channel requant needs parameter "
            "'per_channel' bound (or fixed to 1)");
  // Only the dma command runs on the DMA engine.
  EXPECT_EQ(errOf([](json &j) { set(j, "/commands/matmul/engine", "dma"); }),
            "mini.json: error: /commands/matmul/engine: only the dma command runs on the dma "
            "engine");
}

TEST(TargetSchema, NamesThatWouldCollideInC) {
  // Register A_B field C and register A field B_C both give ..._A_B_C_SHIFT.
  EXPECT_EQ(errOf([](json &j) {
              j["registers"].push_back({{"name", "A_B"}, {"offset", 40},
                                        {"fields", {{{"name", "C"}, {"lsb", 0}, {"width", 1}}}}});
              j["registers"].push_back({{"name", "Q"}, {"offset", 44},
                                        {"fields", {{{"name", "B_C"}, {"lsb", 0}, {"width", 1}}}}});
              j["registers"][10]["name"] = "A";
              j["registers"][2]["name"] = "A_";
              set(j, "/commands/dma/params/src_addr", "A_");
              set(j, "/commands/matmul/params/in_addr", "A_");
            }),
            "mini.json: error: /registers/10/fields/0/name: field 'B_C' of register 'A' gives the "
            "same C macro name as another field");
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/system/0/name", "SPM"); }),
            "mini.json: error: /memories/system/0/name: memory 'SPM' gives the same C identifier "
            "as memory 'spm'");
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/system/0/name", ""); }),
            "mini.json: error: /memories/system/0/name: a memory name must not be empty");
}

TEST(TargetSchema, NumbersAndSuggestions) {
  // Decimal strings up to 2^64 - 1, like hex ones (the CPU address of the
  // registers is not an NPU address the DMA must reach).
  auto r = parseEdited([](json &j) { set(j, "/base_address", "18446744073709547520"); });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->baseAddress, 18446744073709547520ull);
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/system/0/base", "18446744073709551616"); }),
            "mini.json: error: /memories/system/0/base: expected an unsigned integer, got string "
            "\"18446744073709551616\"");
  // A stride limit of 0 is documented as allowed (the DMA cannot step between
  // rows); a count limit of 0 is not.
  r = parseEdited([](json &j) {
    set(j, "/dma/dims", 2);
    j["registers"].push_back({{"name", "ROWS"}, {"offset", 40}});
    j["registers"].push_back({{"name", "STRIDE"},
                              {"offset", 44},
                              {"fields",
                               {{{"name", "s"}, {"lsb", 0}, {"width", 16}},
                                {{"name", "d"}, {"lsb", 16}, {"width", 16}}}}});
    set(j, "/commands/dma/params/rows", "ROWS");
    set(j, "/commands/dma/params/src_stride", "STRIDE.s");
    set(j, "/commands/dma/params/dst_stride", "STRIDE.d");
    set(j, "/dma/max_stride", 0);
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->dma.maxStride, 0u);
  EXPECT_EQ(errOf([](json &j) { set(j, "/dma/max_length", 0); }),
            "mini.json: error: /dma/max_length: value 0 out of range 1..9223372036854775807");
  // A misspelt field name gets a suggestion; a different word does not.
  EXPECT_EQ(errOf([](json &j) { set(j, "/status/dma/busy", "STATUS.bsy"); }),
            "mini.json: error: /status/dma/busy: unknown field 'bsy' in register 'STATUS' (did "
            "you mean 'busy'?)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/status/dma/busy", "STATUS.nope"); }),
            "mini.json: error: /status/dma/busy: unknown field 'nope' in register 'STATUS'");
}

// --- Holes: limits of the runtime, number ranges, diagnostics --------------------------------

TEST(TargetSchema, ManyRegistersAreFineButNotPerCommand) {
  // 100 extra registers: beyond the 64 the runtime once supported in all.
  auto r = parseEdited([](json &j) {
    for (int i = 0; i < 100; ++i)
      j["registers"].push_back({{"name", "X" + std::to_string(i)}, {"offset", 64 + 4 * i}});
    set(j, "/commands/dma/params/length", "X99");
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->registers.size(), 109u);
  CTable t(*r);
  std::vector<int64_t> p = CTable::defaultParams();
  p[NPUCC_P_LENGTH] = 12;
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int n = 0;
  ASSERT_EQ(npucc_npu_encode(t.get(), NPUCC_KIND_DMA, p.data(), w, &n, nullptr), NPUCC_OK);
  bool found = false;
  for (int i = 0; i < n; ++i)
    found |= w[i].reg == 108 && w[i].value == 12u;
  EXPECT_TRUE(found) << "length must land in register #108 (X99)";
  // One command may write at most 64 registers: 9 parameters over 8 byte-registers each.
  EXPECT_EQ(errOf([](json &j) {
              for (int i = 0; i < 72; ++i)
                j["registers"].push_back(
                    {{"name", "R" + std::to_string(i)}, {"offset", 64 + i}, {"width", 8}});
              const char *ps[] = {"in_addr", "w_addr", "bias_addr", "out_addr", "m",
                                  "k",       "n",      "requant_mult", "in_zp"};
              json params = json::object();
              for (int k = 0; k < 9; ++k) {
                json f = json::array();
                for (int i = 0; i < 8; ++i)
                  f.push_back("R" + std::to_string(8 * k + i));
                params[ps[k]] = {{"fields", f}};
              }
              params["requant_shift"] = "SHIFT";
              set(j, "/commands/matmul/params", params);
            }),
            "mini.json: error: /commands/matmul: command 'matmul' writes 74 registers; the "
            "runtime supports at most 64 per command");
}

TEST(TargetSchema, EveryNumberFitsWhatCarriesIt) {
  struct Case {
    const char *ptr;
    uint64_t max; // the largest value accepted
    std::function<uint64_t(const npucc_target_desc &)> carried;
  } cases[] = {
      {"/dma/bytes_per_cycle", 0xFFFFFFFFu, [](auto &d) { return uint64_t(d.dma_bytes_per_cycle); }},
      {"/dma/setup_cycles", 0xFFFFFFFFu, [](auto &d) { return uint64_t(d.dma_setup_cycles); }},
      {"/dma/max_burst", 0xFFFFFFFFu, [](auto &d) { return uint64_t(d.dma_max_burst); }},
      {"/dma/channels", 255, [](auto &d) { return uint64_t(d.dma_channels); }},
      {"/dma/alignment", uint64_t(1) << 31, [](auto &d) { return uint64_t(d.dma_alignment); }},
      {"/memories/scratchpads/0/alignment", uint64_t(1) << 31,
       [](auto &d) { return uint64_t(d.mems[0].alignment); }},
      {"/compute/mac_array/rows", 65535, [](auto &d) { return uint64_t(d.mac_rows); }},
      {"/compute/mac_array/cols", 65535, [](auto &d) { return uint64_t(d.mac_cols); }},
      {"/timing/clock_hz", 0xFFFFFFFFu, [](auto &d) { return uint64_t(d.clock_hz); }},
      {"/timing/command_overhead_cycles", 0xFFFFFFFFu,
       [](auto &d) { return uint64_t(d.command_overhead_cycles); }},
      {"/timing/vector_elements_per_cycle", 0xFFFFFFFFu,
       [](auto &d) { return uint64_t(d.vector_elems_per_cycle); }},
      {"/timing/reg_access_cycles", 0xFFFFFFFFu, [](auto &d) { return uint64_t(d.reg_access_cycles); }},
      {"/timing/poll_cycles", 0xFFFFFFFFu, [](auto &d) { return uint64_t(d.poll_cycles); }},
  };
  for (const Case &c : cases) {
    // 65536 was once accepted and became 0 in a 16-bit table field.
    for (uint64_t v : {uint64_t(65536), c.max}) {
      if (v > c.max)
        continue;
      auto r = parseEdited([&](json &j) { set(j, c.ptr, v); });
      ASSERT_TRUE(r.ok()) << c.ptr << " = " << v << ": " << r.error().str();
      EXPECT_EQ(c.carried(*CTable(*r).get()), v) << c.ptr;
    }
    std::string e = errOf([&](json &j) { set(j, c.ptr, c.max + 1); });
    EXPECT_NE(e.find(std::string("mini.json: error: ") + c.ptr + ": "), std::string::npos)
        << c.ptr << ": " << e;
  }
}

TEST(TargetSchema, MisspeltRequiredKeyIsNamed) {
  EXPECT_EQ(errOf([](json &j) {
              del(j, "/dma/bytes_per_cycle");
              set(j, "/dma/bytes_per_cyle", 4);
            }),
            "mini.json: error: /dma: missing required field 'bytes_per_cycle'; unknown field "
            "'bytes_per_cyle' (did you mean 'bytes_per_cycle'?)");
  EXPECT_EQ(errOf([](json &j) { set(j, "/memories/scratchpads/0/aligment", 4); }),
            "mini.json: error: /memories/scratchpads/0/aligment: unknown field 'aligment' (did "
            "you mean 'alignment'?)");
}

TEST(TargetSchema, HugeValuesAreQuotedBriefly) {
  std::string huge(10 * 1000 * 1000, 'x');
  for (const char *ptr : {"/commands/dma/params/length", "/completion", "/status/dma/busy"}) {
    std::string e = errOf([&](json &j) { set(j, ptr, huge); });
    EXPECT_FALSE(e.empty()) << ptr;
    EXPECT_LT(e.size(), 400u) << ptr << ": " << e.substr(0, 400);
    EXPECT_NE(e.find("(10000000 bytes)"), std::string::npos) << ptr << ": " << e.substr(0, 400);
  }
  std::string e = errOf([&](json &j) { set(j, "/dma/" + huge, 1); });
  EXPECT_LT(e.size(), 400u);
}

} // namespace

namespace {

TEST(TargetSchema, HugeUserStringsStayOutOfDiagnostics) {
  // A 1 MB key, a 1 MB string where a number belongs, and an unterminated
  // 1 MB string: each error names the place but quotes only a short prefix.
  const std::string huge(1000000, 'x');
  std::string key = errOf([&](json &j) { j[huge] = 1; });
  EXPECT_NE(key.find("unknown field"), std::string::npos) << key.substr(0, 300);
  EXPECT_NE(key.find("(1000000 bytes)"), std::string::npos) << key.substr(0, 300);
  EXPECT_LT(key.size(), 600u);
  std::string val = errOf([&](json &j) { set(j, "/dma/bytes_per_cycle", huge); });
  EXPECT_NE(val.find("/dma/bytes_per_cycle"), std::string::npos) << val.substr(0, 300);
  EXPECT_LT(val.size(), 600u);
  std::string text = readText(targetDir() + "good_minimal.json");
  auto r = parseTargetJson(text.substr(0, text.size() / 2) + "\"" + huge, "cut.json");
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.error().str().size(), 600u);
}

} // namespace
