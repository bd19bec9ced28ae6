//===- target_wide_test.cpp - 64-bit registers and the bus access width ----===//
//
// Issue 19, phase 1 (docs/design-issue19.md): registers of 8, 16, 32 or 64
// bits, fields anywhere in bits 0..63, and a bus narrower than a register
// ("bus": {"access_bits", "order"}). The loader accepts and refuses with JSON
// paths; the command layer encodes and decodes a whole 64-bit field, fields
// that cross bit 32 and a parameter split over a 64-bit and a 32-bit
// register; the simulator applies a split write only when the access that is
// last in the bus order arrives, reads each access's bits, and refuses
// accesses of the wrong width or order. Uses test/target/good_minimal.json
// (edited), npu-wide.json (32-bit bus, high half first) and npu-wide64.json
// (64-bit bus).
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"

#include <gtest/gtest.h>

#include "TargetJsonEdit.h"
#include "TestTargets.h"

#include <memory>
#include <string>
#include <vector>

using namespace npucc::target;
using namespace npucc::test;

namespace {

/// A 64-bit register W at 0x40 with the given fields, added to good_minimal.
void addWide(json &j, json fields, const std::string &offset = "0x40") {
  j["registers"].push_back(
      {{"name", "W"}, {"offset", offset}, {"width", 64}, {"fields", std::move(fields)}});
}

json field(const std::string &name, unsigned lsb, unsigned width) {
  return {{"name", name}, {"lsb", lsb}, {"width", width}};
}

// --- Loader ----------------------------------------------------------------------------------

TEST(TargetWide, SixtyFourBitRegistersAndFieldsAreAccepted) {
  auto r = parseEdited([](json &j) {
    addWide(j, json::array({field("lo", 0, 32), field("top", 60, 4)}));
    j["registers"].push_back({{"name", "Q"}, {"offset", "0x48"}, {"width", 64}});
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_EQ(r->registers.size(), 11u);
  EXPECT_EQ(r->registers[9].width, 64u);
  EXPECT_EQ(r->registers[9].fields[1].lsb, 60u);
  EXPECT_EQ(r->registers[10].width, 64u);
  // The defaults: a 32-bit bus, the low half first.
  EXPECT_EQ(r->bus.accessBits, 32u);
  EXPECT_FALSE(r->bus.highFirst);
  auto b = parseEdited([](json &j) { j["bus"] = {{"access_bits", 64}, {"order", "high_first"}}; });
  ASSERT_TRUE(b.ok()) << b.error().str();
  EXPECT_EQ(b->bus.accessBits, 64u);
  EXPECT_TRUE(b->bus.highFirst);
  CTable t(*b);
  EXPECT_EQ(t.get()->bus_access_bits, 64);
  EXPECT_EQ(t.get()->bus_order, NPUCC_BUS_HIGH_FIRST);
}

TEST(TargetWide, RegisterAndFieldRefusals) {
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/2/width", 128); }),
            "mini.json: error: /registers/2/width: register width must be 8, 16, 32 or 64 bits, "
            "got 128");
  EXPECT_EQ(errOf([](json &j) { addWide(j, json::array({field("x", 60, 8)})); }),
            "mini.json: error: /registers/9/fields/0: field 'x' (bits 60..67) is wider than its "
            "64-bit register 'W'");
  EXPECT_EQ(errOf([](json &j) { addWide(j, json::array({field("x", 64, 1)})); }),
            "mini.json: error: /registers/9/fields/0/lsb: value 64 out of range 0..63");
  EXPECT_EQ(errOf([](json &j) { addWide(j, json::array({field("x", 0, 65)})); }),
            "mini.json: error: /registers/9/fields/0/width: value 65 out of range 1..64");
  // A 32-bit field cannot leave a 32-bit register either (the old limits held that).
  EXPECT_EQ(errOf([](json &j) { set(j, "/registers/0/fields/1/lsb", 40); }),
            "mini.json: error: /registers/0/fields/1: field 'op' (bits 40..41) is wider than its "
            "32-bit register 'CTRL'");
  // Offsets are aligned to the register's width: 8 bytes for 64 bits.
  EXPECT_EQ(errOf([](json &j) { addWide(j, json::array(), "0x44"); }),
            "mini.json: error: /registers/9/offset: register 'W' at offset 0x44 is not aligned "
            "to its width");
  EXPECT_EQ(errOf([](json &j) { addWide(j, json::array(), "0x1c"); }),
            "mini.json: error: /registers/9/offset: register 'W' at offset 0x1c is not aligned "
            "to its width");
  EXPECT_EQ(errOf([](json &j) { addWide(j, json::array(), "0x18"); }),
            "mini.json: error: /registers/9: register 'W' (offset 0x18) overlaps register 'DIMS' "
            "(offset 0x18)");
}

TEST(TargetWide, BusRefusals) {
  EXPECT_EQ(errOf([](json &j) {
              j["bus"] = {{"access_bits", 24}};
            }),
            "mini.json: error: /bus/access_bits: bus access width must be 8, 16, 32 or 64 bits, "
            "got 24");
  EXPECT_EQ(errOf([](json &j) {
              j["bus"] = {{"order", "middle_first"}};
            }),
            "mini.json: error: /bus/order: unknown access order 'middle_first' (expected "
            "low_first or high_first)");
  EXPECT_EQ(errOf([](json &j) {
              j["bus"] = {{"acces_bits", 64}};
            }),
            "mini.json: error: /bus/acces_bits: unknown field 'acces_bits' (did you mean "
            "'access_bits'?)");
  EXPECT_EQ(errOf([](json &j) { j["bus"] = 64; }),
            "mini.json: error: /bus: expected an object, got integer");
}

TEST(TargetWide, StatusFieldMustLieWithinOneBusAccess) {
  auto spanning = [](json &j) {
    addWide(j, json::array({field("err", 28, 8), field("busy", 36, 1)}));
    del(j, "/status/register");
    set(j, "/status/dma/error", "W.err");
  };
  EXPECT_EQ(errOf(spanning),
            "mini.json: error: /status/dma/error: status field 'W.err' (bits 28..35) spans two "
            "32-bit accesses of register 'W'; one poll must read it in one access");
  EXPECT_EQ(errOf([&](json &j) {
              spanning(j);
              j["bus"] = {{"access_bits", 16}};
            }),
            "mini.json: error: /status/dma/error: status field 'W.err' (bits 28..35) spans two "
            "16-bit accesses of register 'W'; one poll must read it in one access");
  // One 64-bit access reads it whole; a busy bit in the high half is fine on any bus.
  auto wide = parseEdited([&](json &j) {
    spanning(j);
    j["bus"] = {{"access_bits", 64}};
  });
  EXPECT_TRUE(wide.ok()) << wide.error().str();
  auto high = parseEdited([&](json &j) {
    spanning(j);
    set(j, "/status/dma/error", "W.busy");
    j["bus"] = {{"access_bits", 8}};
  });
  EXPECT_TRUE(high.ok()) << high.error().str();
}

// --- Command layer ---------------------------------------------------------------------------

struct Wide {
  TargetDesc T;
  std::unique_ptr<CTable> Table;
  const npucc_target_desc *D = nullptr;
  explicit Wide(const std::string &file) {
    auto r = loadTarget(testTarget(file));
    EXPECT_TRUE(r.ok()) << (r ? "" : r.error().str());
    if (!r)
      return;
    T = r.take();
    Table = std::make_unique<CTable>(T);
    D = Table->get();
  }
  int reg(const std::string &name) const {
    for (size_t i = 0; i < T.registers.size(); ++i)
      if (T.registers[i].name == name)
        return int(i);
    ADD_FAILURE() << "no register " << name;
    return 0;
  }
  /// Encodes `kind` with `p`; the register values (0 where not written).
  std::vector<uint64_t> encode(int kind, const std::vector<int64_t> &p, int *last = nullptr) {
    npucc_reg_write w[NPUCC_MAX_CMD_REGS];
    int n = 0, bad = -1;
    EXPECT_EQ(npucc_npu_encode(D, kind, p.data(), w, &n, &bad), NPUCC_OK) << "param " << bad;
    std::vector<uint64_t> regs(D->num_regs, 0);
    for (int i = 0; i < n; ++i)
      regs[w[i].reg] = w[i].value;
    if (last && n)
      *last = w[n - 1].reg;
    return regs;
  }
};

std::vector<int64_t> defaults() {
  std::vector<int64_t> p(NPUCC_P_COUNT);
  npucc_npu_defaults(p.data());
  return p;
}

TEST(TargetWide, WholeSixtyFourBitFieldAndFieldsAcrossBit32) {
  Wide w("npu-wide.json");
  ASSERT_NE(w.D, nullptr);
  auto p = defaults();
  p[NPUCC_P_SRC_ADDR] = 0x0123456789ABCDEFll; // every bit of the 64-bit DMA_SRC
  p[NPUCC_P_DST_ADDR] = INT64_MAX;
  p[NPUCC_P_LENGTH] = 0xBEEF; // DMA_SIZE.length: bits 24..39
  p[NPUCC_P_ROWS] = 3;
  int last = -1;
  std::vector<uint64_t> regs = w.encode(NPUCC_KIND_DMA, p, &last);
  EXPECT_EQ(regs[w.reg("DMA_SRC")], 0x0123456789ABCDEFull);
  EXPECT_EQ(regs[w.reg("DMA_DST")], 0x7FFFFFFFFFFFFFFFull);
  EXPECT_EQ(regs[w.reg("DMA_SIZE")], (0xBEEFull << 24) | (3ull << 40));
  EXPECT_EQ(regs[w.reg("DMA_CTRL")], 1ull << 32); // the doorbell in the high half
  EXPECT_EQ(last, w.reg("DMA_CTRL"));             // written last
  std::vector<int64_t> back(NPUCC_P_COUNT);
  npucc_npu_decode(w.D, npucc_desc_find_cmd(w.D, NPUCC_KIND_DMA), regs.data(), back.data());
  EXPECT_EQ(back[NPUCC_P_SRC_ADDR], 0x0123456789ABCDEFll);
  EXPECT_EQ(back[NPUCC_P_DST_ADDR], INT64_MAX);
  EXPECT_EQ(back[NPUCC_P_LENGTH], 0xBEEF);
  EXPECT_EQ(back[NPUCC_P_ROWS], 3);
  // A negative address does not fit an unsigned 64-bit field.
  p[NPUCC_P_SRC_ADDR] = -1;
  npucc_reg_write wr[NPUCC_MAX_CMD_REGS];
  int n = 0, bad = -1;
  EXPECT_EQ(npucc_npu_encode(w.D, NPUCC_KIND_DMA, p.data(), wr, &n, &bad), NPUCC_ERR_RANGE);
  EXPECT_EQ(bad, NPUCC_P_SRC_ADDR);
  // The field helpers at the top bits.
  npucc_fieldref top = {0, 60, 4}, all = {0, 0, 64};
  EXPECT_EQ(npucc_field_put(0, top, 0xF), 0xF000000000000000ull);
  EXPECT_EQ(npucc_field_get(0xA000000000000000ull, top), 0xAull);
  EXPECT_EQ(npucc_field_put(5, all, ~0ull), ~0ull);
  EXPECT_EQ(npucc_field_get(~0ull, all), ~0ull);
}

TEST(TargetWide, ParameterSplitOverASixtyFourAndAThirtyTwoBitRegister) {
  Wide w("npu-wide.json");
  ASSERT_NE(w.D, nullptr);
  for (int64_t mult : {int64_t(0x12345678), int64_t(-2), int64_t(INT32_MIN)}) {
    auto p = defaults();
    p[NPUCC_P_IN_H] = p[NPUCC_P_IN_W] = p[NPUCC_P_OUT_H] = p[NPUCC_P_OUT_W] = 4;
    p[NPUCC_P_IN_CH] = p[NPUCC_P_OUT_CH] = 16;
    p[NPUCC_P_REQUANT_MULT] = mult;
    p[NPUCC_P_REQUANT_SHIFT] = 31;
    p[NPUCC_P_OUT_ZP] = -128; // QPARAM.out_zp: bits 28..35
    std::vector<uint64_t> regs = w.encode(NPUCC_KIND_CONV, p);
    uint32_t code = uint32_t(int32_t(mult));
    EXPECT_EQ(regs[w.reg("RQ")], (uint64_t(code & 0xFFFF) << 48) | 31) << mult;
    EXPECT_EQ(regs[w.reg("RQ_MULT_HI")], code >> 16) << mult;
    EXPECT_EQ((regs[w.reg("QPARAM")] >> 28) & 0xFF, 0x80u);
    EXPECT_EQ(regs[w.reg("COMP_CTRL")], 1ull << 32); // start, op 0
    std::vector<int64_t> back(NPUCC_P_COUNT);
    npucc_npu_decode(w.D, npucc_desc_find_cmd(w.D, NPUCC_KIND_CONV), regs.data(), back.data());
    EXPECT_EQ(back[NPUCC_P_REQUANT_MULT], mult);
    EXPECT_EQ(back[NPUCC_P_OUT_ZP], -128);
    EXPECT_EQ(back[NPUCC_P_IN_CH], 16);
  }
}

// --- Simulator: accesses of a register wider than the bus -------------------------------------

struct WideSim : Wide {
  npucc_sim *Sim = nullptr;
  explicit WideSim(const std::string &file) : Wide(file) {
    if (D)
      Sim = npucc_sim_create(D);
  }
  ~WideSim() { npucc_sim_destroy(Sim); }
  uint32_t off(const std::string &r) const { return T.registers[size_t(reg(r))].offset; }
};

TEST(TargetWide, SimulatorAppliesASplitWriteWhenItsLastAccessArrives) {
  WideSim s("npu-wide.json");
  ASSERT_NE(s.Sim, nullptr);
  uint32_t src = s.off("DMA_SRC");
  // high_first: the high half (offset + 4) first, the low half applies the write.
  npucc_sim_reg_write(s.Sim, src + 4, 0x01234567, 32);
  EXPECT_EQ(npucc_sim_reg_read(s.Sim, src + 4, 32), 0u); // not applied yet
  npucc_sim_reg_write(s.Sim, src, 0x89ABCDEF, 32);
  EXPECT_EQ(npucc_sim_reg_read(s.Sim, src + 4, 32), 0x01234567u);
  EXPECT_EQ(npucc_sim_reg_read(s.Sim, src, 32), 0x89ABCDEFu);
  // The doorbell (DMA_CTRL.start, bit 32) starts nothing until the low half arrives.
  auto p = defaults();
  p[NPUCC_P_SRC_ADDR] = int64_t(s.T.system[1].base);
  p[NPUCC_P_DST_ADDR] = int64_t(s.T.scratchpads[0].base);
  p[NPUCC_P_LENGTH] = 16;
  std::vector<uint8_t> ram(4096, 7);
  ASSERT_EQ(npucc_sim_map(s.Sim, s.T.system[1].base, ram.data(), ram.size()), 0);
  std::vector<uint64_t> regs = s.encode(NPUCC_KIND_DMA, p);
  for (const char *r : {"DMA_SRC", "DMA_DST", "DMA_SIZE", "DMA_STRIDE"})
    for (uint32_t part : {4u, 0u})
      npucc_sim_reg_write(s.Sim, s.off(r) + part, regs[s.reg(r)] >> (part * 8) & 0xFFFFFFFFu, 32);
  uint32_t ctrl = s.off("DMA_CTRL");
  npucc_sim_reg_write(s.Sim, ctrl + 4, 1, 32);
  EXPECT_EQ(npucc_sim_num_commands(s.Sim), 0u);
  npucc_sim_reg_write(s.Sim, ctrl, 0, 32);
  EXPECT_EQ(npucc_sim_num_commands(s.Sim), 1u);
  EXPECT_FALSE(npucc_sim_failed(s.Sim)) << npucc_sim_error(s.Sim);
}

TEST(TargetWide, SimulatorRefusesAccessesOfTheWrongWidthOrOrder) {
  {
    WideSim s("npu-wide.json");
    ASSERT_NE(s.Sim, nullptr);
    npucc_sim_reg_write(s.Sim, s.off("DMA_SRC"), 1, 64); // one 64-bit access on a 32-bit bus
    EXPECT_STREQ(npucc_sim_error(s.Sim), "write of 0x1 to offset 0x10: no 64-bit register there");
  }
  {
    WideSim s("npu-wide.json");
    ASSERT_NE(s.Sim, nullptr);
    npucc_sim_reg_write(s.Sim, s.off("DMA_CTRL"), 0, 32); // the low half first
    EXPECT_STREQ(npucc_sim_error(s.Sim),
                 "register DMA_CTRL: its last 32-bit access (offset 0x8, high half first) arrived "
                 "before the others");
  }
  {
    WideSim s("npu-wide.json");
    ASSERT_NE(s.Sim, nullptr);
    npucc_sim_reg_write(s.Sim, s.off("DMA_SRC") + 2, 1, 32); // not at an access boundary
    EXPECT_STREQ(npucc_sim_error(s.Sim), "write of 0x1 to offset 0x12: no 32-bit register there");
  }
  {
    WideSim s("npu-wide64.json");
    ASSERT_NE(s.Sim, nullptr);
    npucc_sim_reg_write(s.Sim, s.off("DMA_SRC"), 0x0123456789ABCDEFull, 64);
    EXPECT_EQ(npucc_sim_reg_read(s.Sim, s.off("DMA_SRC"), 64), 0x0123456789ABCDEFull);
    EXPECT_FALSE(npucc_sim_failed(s.Sim)) << npucc_sim_error(s.Sim);
    npucc_sim_reg_write(s.Sim, s.off("DMA_SRC"), 1, 32); // half a register on a 64-bit bus
    EXPECT_STREQ(npucc_sim_error(s.Sim), "write of 0x1 to offset 0x10: no 32-bit register there");
  }
}

TEST(TargetWide, HalSplitsInTheStatedOrderAndReadsStatusHalves) {
  for (const char *file : {"npu-wide.json", "npu-wide64.json"}) {
    WideSim s(file);
    ASSERT_NE(s.Sim, nullptr);
    npucc_sim_attach(s.Sim);
    npucc_hal_set_wait_hook(nullptr, nullptr);
    uint32_t src = s.off("DMA_SRC");
    npucc_hal_write(src, 0xFEDCBA9876543210ull, 64);
    EXPECT_FALSE(npucc_sim_failed(s.Sim)) << file << ": " << npucc_sim_error(s.Sim);
    EXPECT_EQ(npucc_hal_read(src, 64), 0xFEDCBA9876543210ull) << file;
    // A DMA through the HAL completes; the busy bit (bit 32) is read in the high half.
    std::vector<uint8_t> ram(4096, 9);
    ASSERT_EQ(npucc_sim_map(s.Sim, s.T.system[1].base, ram.data(), ram.size()), 0);
    auto p = defaults();
    p[NPUCC_P_SRC_ADDR] = int64_t(s.T.system[1].base);
    p[NPUCC_P_DST_ADDR] = int64_t(s.T.scratchpads[0].base);
    p[NPUCC_P_LENGTH] = 64;
    ASSERT_EQ(npucc_npu_issue(s.D, NPUCC_KIND_DMA, p.data(), nullptr), NPUCC_OK) << file;
    EXPECT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 1000000), NPUCC_OK) << npucc_sim_error(s.Sim);
    uint8_t got[64];
    ASSERT_EQ(npucc_sim_spm_read(s.Sim, s.T.scratchpads[0].base, got, sizeof got), 0);
    EXPECT_EQ(got[0], 9);
    EXPECT_EQ(got[63], 9);
    EXPECT_EQ(npucc_sim_num_commands(s.Sim), 1u);
  }
}

TEST(TargetWide, ClearOnReadBitClearsOnlyThroughTheAccessHoldingIt) {
  // npu-wide with the DMA's DONE sticky, cleared by reading, and moved to bit 1:
  // the low half, which high_first reads last. Reading the high half first must
  // not clear it, or the wait never sees it.
  json j = json::parse(readText(targetDir() + "npu-wide.json"), nullptr, true, true);
  for (json &f : j["registers"][0]["fields"])
    if (f["name"] == "dma_done")
      f["lsb"] = 1;
  j["status"]["dma"] = {
      {"done", {{"field", "STATUS.dma_done"}, {"sticky", true}, {"clear", "read"}}},
      {"error", "STATUS.dma_err"}};
  auto r = parseTargetJson(j.dump(), "wide.json");
  ASSERT_TRUE(r.ok()) << r.error().str();
  TargetDesc T = r.take();
  CTable table(T);
  npucc_sim *sim = npucc_sim_create(table.get());
  ASSERT_NE(sim, nullptr);
  npucc_sim_attach(sim);
  npucc_hal_set_wait_hook(nullptr, nullptr);
  std::vector<uint8_t> ram(4096, 3);
  ASSERT_EQ(npucc_sim_map(sim, T.system[1].base, ram.data(), ram.size()), 0);
  for (int i = 0; i < 2; ++i) {
    auto p = defaults();
    p[NPUCC_P_SRC_ADDR] = int64_t(T.system[1].base);
    p[NPUCC_P_DST_ADDR] = int64_t(T.scratchpads[0].base + 64 * uint64_t(i));
    p[NPUCC_P_LENGTH] = 64;
    ASSERT_EQ(npucc_npu_issue(table.get(), NPUCC_KIND_DMA, p.data(), nullptr), NPUCC_OK);
    EXPECT_EQ(npucc_hal_wait(NPUCC_ENGINE_DMA, 1000), NPUCC_OK) << "DMA " << i;
  }
  EXPECT_FALSE(npucc_sim_failed(sim)) << npucc_sim_error(sim);
  npucc_sim_destroy(sim);
}

TEST(TargetWide, GeneratedHeaderAndTable) {
  auto r = parseEdited([](json &j) {
    addWide(j, json::array({field("all", 0, 64)}));
    j["registers"].push_back(
        {{"name", "V"},
         {"offset", "0x48"},
         {"width", 64},
         {"fields", json::array({field("top", 60, 4), field("mid", 24, 16)})}});
    j["bus"] = {{"order", "high_first"}};
  });
  ASSERT_TRUE(r.ok()) << r.error().str();
  std::string h = emitRegisterHeader(*r);
  EXPECT_NE(h.find("/* W: 64-bit register at offset 0x40u (2 32-bit accesses, the high bits "
                   "first) */"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("#define MINI_REG_W_WIDTH 64u\n"), std::string::npos);
  EXPECT_NE(h.find("#define MINI_W_ALL_MASK 0xFFFFFFFFFFFFFFFFull /* bits 63..0 */"),
            std::string::npos);
  EXPECT_NE(h.find("#define MINI_V_TOP_SHIFT 60u\n"), std::string::npos);
  EXPECT_NE(h.find("#define MINI_V_MID_MASK 0xFFFFu /* bits 39..24 */"), std::string::npos);
  // 32-bit registers say nothing about the bus.
  EXPECT_NE(h.find("/* A: 32-bit register at offset 0x08u */"), std::string::npos);
  std::string c = emitCTableSource(*r);
  EXPECT_NE(c.find("    .bus_access_bits = 32,\n    .bus_order = NPUCC_BUS_HIGH_FIRST,\n"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("{\"top\", 60, 4, -1}"), std::string::npos);
}

} // namespace
