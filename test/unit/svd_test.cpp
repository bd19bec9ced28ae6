//===- svd_test.cpp - `npucc target import/export --svd` ------------------===//
//
// Issue 22: a description started from a CMSIS-SVD register file. Round
// trip: every built-in and test description's registers, written as SVD and
// imported back, give the same description (its register map <id>_regs.h
// byte for byte) once the parts SVD does not carry (nop values, rmw writes,
// write enables) are put back. Import resolves SVD's conventions (inherited
// size/access/reset, derivedFrom, dim arrays, clusters, the three ways to
// give bit positions); errors name the file, the line and the element; the
// skeleton's "todo" is reported by the loader after its registers load.
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/EmbeddedRuntime.h"
#include "npucc/target/CTable.h"
#include "npucc/target/Svd.h"
#include "npucc/target/Target.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

using namespace npucc;
using namespace npucc::target;
using json = nlohmann::json;

namespace {

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Name -> JSON text of every built-in description and every loadable test description.
std::vector<std::pair<std::string, std::string>> descriptions() {
  std::vector<std::pair<std::string, std::string>> d;
  for (const std::string &n : builtinTargets()) {
    const std::string *t = codegen::findRuntimeFile("targets/" + n + ".json");
    EXPECT_TRUE(t) << n;
    if (t)
      d.push_back({n, *t});
  }
  for (const auto &e :
       std::filesystem::directory_iterator(std::string(NPUCC_SOURCE_DIR) + "/test/target")) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".json" && name.rfind("bad_", 0) != 0)
      d.push_back({name, readText(e.path().string())});
  }
  return d;
}

/// The description `text` with its registers and base address replaced by those of the
/// skeleton `sk`, the parts SVD does not carry copied from the original registers.
std::string merged(const std::string &text, const nlohmann::ordered_json &sk) {
  json orig = json::parse(text, nullptr, true, true);
  json regs = json::parse(sk["registers"].dump());
  const json &old = orig["registers"];
  EXPECT_EQ(regs.size(), old.size());
  for (size_t i = 0; i < regs.size() && i < old.size(); ++i) {
    EXPECT_EQ(regs[i]["name"], old[i]["name"]);
    for (const char *k : {"nop", "write"})
      if (old[i].contains(k))
        regs[i][k] = old[i][k];
    if (!old[i].contains("fields"))
      continue;
    for (size_t f = 0; f < old[i]["fields"].size() && f < regs[i]["fields"].size(); ++f)
      for (const char *k : {"nop", "write_enable"})
        if (old[i]["fields"][f].contains(k))
          regs[i]["fields"][f][k] = old[i]["fields"][f][k];
  }
  orig["registers"] = regs;
  orig["base_address"] = sk["base_address"];
  return orig.dump(2);
}

void expectSameRegisters(const TargetDesc &a, const TargetDesc &b, const std::string &what) {
  ASSERT_EQ(a.registers.size(), b.registers.size()) << what;
  EXPECT_EQ(a.baseAddress, b.baseAddress) << what;
  for (size_t i = 0; i < a.registers.size(); ++i) {
    const Register &x = a.registers[i], &y = b.registers[i];
    EXPECT_TRUE(x.name == y.name && x.offset == y.offset && x.width == y.width && x.doc == y.doc &&
                x.file == y.file && x.fields.size() == y.fields.size())
        << what << ": register " << x.name;
    for (size_t k = 0; k < x.fields.size() && k < y.fields.size(); ++k)
      EXPECT_TRUE(x.fields[k].name == y.fields[k].name && x.fields[k].lsb == y.fields[k].lsb &&
                  x.fields[k].width == y.fields[k].width && x.fields[k].doc == y.fields[k].doc &&
                  x.fields[k].file == y.fields[k].file)
          << what << ": field " << x.name << "." << x.fields[k].name;
  }
  EXPECT_EQ(emitRegisterHeader(a), emitRegisterHeader(b)) << what;
}

void roundTrip(const std::string &name, const std::string &text) {
  auto t = parseTargetJson(text, name);
  ASSERT_TRUE(t.ok()) << t.error().str();
  std::string svd = exportSvd(*t);
  auto sk = importSvd(svd, SvdImportOptions{name + ".svd", ""});
  ASSERT_TRUE(sk.ok()) << name << ": " << sk.error().str() << "\n" << svd;
  auto back = parseTargetJson(merged(text, *sk), name + " (imported)");
  ASSERT_TRUE(back.ok()) << back.error().str();
  expectSameRegisters(*t, *back, name);
}

TEST(Svd, EveryDescriptionRoundTrips) {
  auto all = descriptions();
  std::set<std::string> names;
  for (const auto &[name, text] : all) {
    names.insert(name);
    roundTrip(name, text);
  }
  // The built-ins and the descriptions with 8- and 64-bit registers, frames (whose words are
  // not exported) and write enables are among them.
  for (const char *n : {"npu-default", "npu-small", "npu-wide64.json", "npu-fifo.json",
                        "npu-tiny.json", "npu-insn.json"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_GE(all.size(), 18u);
}

/// Access types, write-1-to-clear, read-to-clear and reset values survive the round trip
/// and reach the register map (npu-default with them added to two registers).
TEST(Svd, RegisterFileAttributesRoundTrip) {
  const std::string *text = codegen::findRuntimeFile("targets/npu-default.json");
  ASSERT_TRUE(text);
  json j = json::parse(*text, nullptr, true, true);
  json &regs = j["registers"];
  regs[0]["access"] = "read-only";
  regs[0]["reset"] = "0x10";
  regs[0]["fields"][0]["read_action"] = "clear";
  regs[0]["fields"][1]["modified_write"] = "oneToClear";
  regs[1]["access"] = "read-write";
  regs[1]["reset"] = 0;
  std::string desc = j.dump(2);
  auto t = parseTargetJson(desc, "attrs.json");
  ASSERT_TRUE(t.ok()) << t.error().str();
  EXPECT_EQ(t->registers[0].file.access, "read-only");
  EXPECT_EQ(t->registers[0].file.reset, std::optional<uint64_t>(0x10));
  std::string h = emitRegisterHeader(*t);
  std::string reg0 = t->registers[0].name;
  for (char &c : reg0)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_NE(h.find("NPU_DEFAULT_REG_" + reg0 + "_RESET 0x10"), std::string::npos) << h;
  EXPECT_NE(h.find("[read: clear]"), std::string::npos);
  EXPECT_NE(h.find("[oneToClear]"), std::string::npos);
  std::string svd = exportSvd(*t);
  EXPECT_NE(svd.find("<modifiedWriteValues>oneToClear</modifiedWriteValues>"), std::string::npos);
  EXPECT_NE(svd.find("<readAction>clear</readAction>"), std::string::npos);
  EXPECT_NE(svd.find("<resetValue>0x10</resetValue>"), std::string::npos);
  roundTrip("attrs.json", desc);
  // The built-in descriptions state none of them: their headers have no _RESET.
  auto d = loadTarget("npu-default");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(emitRegisterHeader(*d).find("_RESET "), std::string::npos);
}

const char *kSvd = R"(<?xml version="1.0" encoding="utf-8"?>
<device schemaVersion="1.3">
  <name>ACME_SOC</name>
  <description>An SoC</description>
  <size>32</size>
  <access>read-write</access>
  <resetValue>0</resetValue>
  <peripherals>
    <peripheral>
      <name>UART0</name>
      <baseAddress>0x40001000</baseAddress>
      <registers>
        <register><name>DATA</name><addressOffset>0</addressOffset></register>
      </registers>
    </peripheral>
    <peripheral>
      <name>KPU</name>
      <description>The neural
          accelerator</description>
      <baseAddress>0x40800000</baseAddress>
      <registers>
        <register>
          <name>CTRL</name>
          <description>Control   and status</description>
          <addressOffset>0x0</addressOffset>
          <resetValue>0x4</resetValue>
          <fields>
            <field><name>GO</name><bitOffset>0</bitOffset><bitWidth>1</bitWidth>
              <access>write-only</access></field>
            <field><name>BUSY</name><lsb>1</lsb><msb>1</msb><access>read-only</access></field>
            <field><name>DONE</name><bitRange>[2:2]</bitRange>
              <modifiedWriteValues>oneToClear</modifiedWriteValues></field>
            <field><name>MODE</name><bitRange>[7:4]</bitRange></field>
          </fields>
        </register>
        <register>
          <name>IRQ</name><addressOffset>#100</addressOffset><size>8</size>
          <access>read-only</access><readAction>clear</readAction>
        </register>
        <register>
          <name>ARG%s</name><dim>3</dim><dimIncrement>8</dimIncrement>
          <addressOffset>0x10</addressOffset><size>64</size>
        </register>
        <register>
          <name>LUT[%s]</name><dim>2</dim><dimIncrement>4</dimIncrement><dimIndex>A,B</dimIndex>
          <addressOffset>0x30</addressOffset>
        </register>
        <register derivedFrom="CTRL"><name>CTRL2</name><addressOffset>0x40</addressOffset></register>
        <cluster>
          <name>DMA</name><addressOffset>0x100</addressOffset>
          <register><name>SRC</name><addressOffset>0</addressOffset></register>
          <register><name>LEN</name><addressOffset>4</addressOffset><size>16</size></register>
        </cluster>
      </registers>
    </peripheral>
    <peripheral derivedFrom="KPU"><name>KPU1</name><baseAddress>0x40900000</baseAddress></peripheral>
  </peripherals>
</device>
)";

TEST(Svd, ImportResolvesSvdConventions) {
  auto sk = importSvd(kSvd, SvdImportOptions{"acme.svd", "KPU"});
  ASSERT_TRUE(sk.ok()) << sk.error().str();
  const auto &j = *sk;
  EXPECT_EQ(j["name"], "kpu");
  EXPECT_EQ(j["base_address"], "0x40800000");
  EXPECT_EQ(j["description"], "The neural accelerator; registers imported from acme.svd "
                              "(device ACME_SOC, peripheral KPU) by npucc target import");
  std::vector<std::string> names;
  for (const auto &r : j["registers"])
    names.push_back(r["name"].get<std::string>() + "@" + r["offset"].get<std::string>() + "/" +
                    std::to_string(r["width"].get<int>()));
  EXPECT_EQ(names,
            (std::vector<std::string>{"CTRL@0x0/32", "IRQ@0x4/8", "ARG0@0x10/64", "ARG1@0x18/64",
                                      "ARG2@0x20/64", "LUTA@0x30/32", "LUTB@0x34/32",
                                      "CTRL2@0x40/32", "DMA_SRC@0x100/32", "DMA_LEN@0x104/16"}));
  const auto &ctrl = j["registers"][0];
  EXPECT_EQ(ctrl["doc"], "Control and status");
  EXPECT_EQ(ctrl["access"], "read-write"); // inherited from the device
  EXPECT_EQ(ctrl["reset"], "0x4");
  ASSERT_EQ(ctrl["fields"].size(), 4u);
  EXPECT_EQ(ctrl["fields"][0]["access"], "write-only");
  EXPECT_EQ(ctrl["fields"][1]["lsb"], 1);
  EXPECT_EQ(ctrl["fields"][2]["modified_write"], "oneToClear");
  EXPECT_EQ(ctrl["fields"][3]["lsb"], 4);
  EXPECT_EQ(ctrl["fields"][3]["width"], 4);
  const auto &irq = j["registers"][1];
  EXPECT_EQ(irq["access"], "read-only");
  EXPECT_EQ(irq["read_action"], "clear");
  EXPECT_EQ(j["registers"][7]["fields"].size(), 4u); // CTRL2 derived from CTRL
  EXPECT_EQ(j["registers"][7]["reset"], "0x4");

  // A derived peripheral takes its registers from the one it names.
  auto k1 = importSvd(kSvd, SvdImportOptions{"acme.svd", "KPU1"});
  ASSERT_TRUE(k1.ok()) << k1.error().str();
  EXPECT_EQ((*k1)["registers"].size(), j["registers"].size());
  EXPECT_EQ((*k1)["base_address"], "0x40900000");

  // The skeleton's registers load; the loader then reports what is left to describe.
  auto loaded = parseTargetJson(j.dump(2), "kpu.json");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().str().find(
                "kpu.json: error: /todo: a skeleton written by `npucc target import` (its 10 "
                "registers load); still to describe: memories, dma, compute, commands, status, "
                "timing"),
            std::string::npos)
      << loaded.error().str();
}

/// The error for `svd` contains `want`.
void expectError(const std::string &svd, const std::string &want, const std::string &periph = "") {
  auto r = importSvd(svd, SvdImportOptions{"bad.svd", periph});
  ASSERT_FALSE(r.ok()) << want;
  EXPECT_NE(r.error().str().find(want), std::string::npos) << r.error().str();
}

std::string oneRegister(const std::string &reg) {
  return "<device><name>D</name><peripherals><peripheral><name>P</name>"
         "<baseAddress>0x1000</baseAddress><registers>\n" +
         reg + "\n</registers></peripheral></peripherals></device>\n";
}

TEST(Svd, MalformedFilesNameTheElement) {
  expectError("<device><name>D</name>\n<peripherals>\n<peripheral>",
              "bad.svd:3: not well-formed XML");
  expectError("<html/>", "bad.svd: no <device> element: not a CMSIS-SVD file");
  expectError(kSvd,
              "<peripherals>: 3 peripherals (UART0, KPU, KPU1): choose one with --peripheral");
  expectError(kSvd, "no peripheral 'NPU' (the file has UART0, KPU, KPU1)", "NPU");
  expectError(oneRegister("<register><name>R</name></register>"),
              "bad.svd:2: <register> 'R': missing <addressOffset>");
  expectError(oneRegister("<register><name>R</name><addressOffset>0xZZ</addressOffset></register>"),
              "<addressOffset>: '0xZZ' is not a number");
  expectError(oneRegister("<register><name>R</name><addressOffset>0</addressOffset><size>24</size>"
                          "</register>"),
              "<register> 'R': size 24: npucc registers are 8, 16, 32 or 64 bits");
  expectError(oneRegister("<register><name>R</name><addressOffset>0</addressOffset><fields><field>"
                          "<name>F</name><bitRange>[40:33]</bitRange></field></fields></register>"),
              "<field> 'F': bits 33..40 outside its 32-bit register");
  expectError(oneRegister("<register><name>R</name><addressOffset>0</addressOffset><fields><field>"
                          "<name>F</name><bitRange>3:1</bitRange></field></fields></register>"),
              "'3:1' is not [MSB:LSB]");
  expectError(oneRegister("<register><name>R</name><addressOffset>0</addressOffset>"
                          "<access>sometimes</access></register>"),
              "<access>: 'sometimes' is not one of read-write, read-only");
  expectError(oneRegister("<register><name>R%s</name><addressOffset>0</addressOffset></register>"),
              "a name with %s needs <dim>");
  expectError(
      oneRegister("<register derivedFrom=\"Q\"><name>R</name><addressOffset>0</addressOffset>"
                  "</register>"),
      "derivedFrom 'Q': no such register here");
  // Well-formed SVD whose registers npucc refuses: named by the loader on the skeleton.
  auto sk = importSvd(oneRegister("<register><name>A</name><addressOffset>0</addressOffset>"
                                  "</register><register><name>B</name><addressOffset>2"
                                  "</addressOffset><size>16</size></register>"),
                      SvdImportOptions{"bad.svd", ""});
  ASSERT_TRUE(sk.ok());
  auto l = parseTargetJson(sk->dump(), "p.json");
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().str().find("/registers/1: register 'B' (offset 0x2) overlaps register 'A'"),
            std::string::npos)
      << l.error().str();
}

TEST(Svd, LoaderRefusesBadAttributes) {
  const std::string *text = codegen::findRuntimeFile("targets/npu-default.json");
  ASSERT_TRUE(text);
  auto refuse = [&](const std::function<void(json &)> &edit, const std::string &want) {
    json j = json::parse(*text, nullptr, true, true);
    edit(j);
    auto r = parseTargetJson(j.dump(), "x.json");
    ASSERT_FALSE(r.ok()) << want;
    EXPECT_NE(r.error().str().find(want), std::string::npos) << r.error().str();
  };
  refuse([](json &j) { j["registers"][0]["access"] = "rw"; },
         "/registers/0/access: unknown access 'rw' (expected read-write, read-only");
  refuse([](json &j) { j["registers"][0]["fields"][0]["read_action"] = "clr"; },
         "/registers/0/fields/0/read_action: unknown read_action 'clr'");
  refuse([](json &j) { j["registers"][0]["fields"][0]["reset"] = 1; },
         "/registers/0/fields/0/reset: unknown field 'reset'");
  refuse([](json &j) { j["registers"][0]["reset"] = "0x100000000"; }, "/registers/0/reset");
  refuse([](json &j) { j["todo"] = json::array(); },
         "/todo: expected a non-empty array of the sections still to describe");
}

} // namespace
