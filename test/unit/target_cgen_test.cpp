//===- target_cgen_test.cpp - Generated register header and C table -------===//
//
// The register-map header must compile as strict C99 and carry every offset
// and field of the JSON; the generated C description table must compile with
// the runtime and drive the simulator (a DMA round trip through the
// data-driven command layer), for every NPU description we have.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"

#include <gtest/gtest.h>

#include "TestTargets.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#ifndef NPUCC_SOURCE_DIR
#define NPUCC_SOURCE_DIR "."
#endif

using namespace npucc::target;

namespace {

std::string hex(uint64_t v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%0*llXu", digits, static_cast<unsigned long long>(v));
  return buf;
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path);
  out << text;
}

/// A scratch directory, unique per process (several build trees may run
/// their tests at once), removed when the test ends.
struct TmpDir {
  std::string path;
  explicit TmpDir(const std::string &tag)
      : path(::testing::TempDir() + "npucc_cgen_" + std::to_string(getpid()) + "_" + tag) {
    std::string cmd = "mkdir -p '" + path + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  ~TmpDir() {
    std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0)
      ADD_FAILURE() << "cannot remove " << path;
  }
};

int run(const std::string &cmd) {
  int rc = std::system((cmd + " > /dev/null 2>&1").c_str());
  if (rc != 0)
    std::system(cmd.c_str()); // repeat with output visible for the log
  return rc;
}

class CGen : public ::testing::TestWithParam<std::string> {};

TEST_P(CGen, RegisterHeaderHasEveryOffsetAndField) {
  auto t = loadTarget(GetParam());
  ASSERT_TRUE(t.ok()) << t.error().str();
  std::string h = emitRegisterHeader(*t), P = macroPrefix(t->name);
  EXPECT_NE(h.find("#define " + P + "_BASE_ADDRESS " + hex(t->baseAddress, 8)), std::string::npos);
  for (const Register &r : t->registers) {
    std::string R = macroPrefix(r.name);
    // A frame word has a position in its frame, not an offset.
    EXPECT_NE(
        h.find(r.isWord()
                   ? "#define " + P + "_WORD_" + R + "_POSITION " + std::to_string(r.offset) + "u\n"
                   : "#define " + P + "_REG_" + R + "_OFFSET " + hex(r.offset, 2) + "\n"),
        std::string::npos)
        << r.name;
    for (const Field &f : r.fields) {
      std::string F = P + "_" + R + "_" + macroPrefix(f.name);
      EXPECT_NE(h.find("#define " + F + "_SHIFT " + std::to_string(f.lsb) + "u\n"),
                std::string::npos)
          << F;
      EXPECT_NE(h.find("#define " + F + "_WIDTH " + std::to_string(f.width) + "u\n"),
                std::string::npos)
          << F;
    }
  }
  // Each command documents its field -> parameter mapping and doorbell.
  for (const CommandDesc &c : t->commands) {
    EXPECT_NE(h.find("/* Command '" + c.kind + "'"), std::string::npos) << c.kind;
    for (const ParamBinding &b : c.params)
      EXPECT_NE(h.find(" *   " + b.text() + " <- " + b.param), std::string::npos) << b.param;
    if (c.frame >= 0)
      EXPECT_NE(h.find(" *   delivered as frame '" + t->frames[size_t(c.frame)].name + "'"),
                std::string::npos);
    else
      EXPECT_NE(h.find(std::string(" *   ") + (t->queue.depth ? "commit: " : "doorbell: ") +
                       c.doorbell.field.text),
                std::string::npos);
  }
}

TEST_P(CGen, RegisterHeaderCompilesAsStrictC99) {
  auto t = loadTarget(GetParam());
  ASSERT_TRUE(t.ok()) << t.error().str();
  TmpDir tmp(macroPrefix(t->name) + "_hdr");
  const std::string &d = tmp.path;
  writeFile(d + "/regs.h", emitRegisterHeader(*t));
  // The macros must also hold the JSON values: check one register and one
  // field with compile-time array sizes.
  std::string P = macroPrefix(t->name);
  const Register *last = nullptr;
  for (const Register &q : t->registers)
    if (!q.isWord())
      last = &q;
  const Register &r = *last;
  std::ostringstream c;
  c << "#include \"regs.h\"\n"
    << "typedef char off_ok[(" << P << "_REG_" << macroPrefix(r.name) << "_OFFSET == " << r.offset
    << "u) ? 1 : -1];\n";
  for (const Register &q : t->registers)
    for (const Field &f : q.fields) {
      std::string F = P + "_" + macroPrefix(q.name) + "_" + macroPrefix(f.name);
      c << "typedef char " << macroPrefix(q.name) << "_" << macroPrefix(f.name) << "_ok[(" << F
        << "_MASK == " << ((uint64_t(1) << f.width) - 1) << "u && " << F << "_SHIFT == " << f.lsb
        << "u) ? 1 : -1];\n";
    }
  writeFile(d + "/use.c", c.str());
  const std::string flags = " -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only ";
  EXPECT_EQ(run("cc" + flags + "-x c '" + d + "/regs.h'"), 0);
  EXPECT_EQ(run("cc" + flags + "-Wno-unused-local-typedefs '" + d + "/use.c'"), 0);
}

TEST_P(CGen, CTableDrivesTheSimulator) {
  auto t = loadTarget(GetParam());
  ASSERT_TRUE(t.ok()) << t.error().str();
  std::string id = cIdentifier(t->name);
  TmpDir tmp(macroPrefix(t->name) + "_tab");
  const std::string &d = tmp.path;
  writeFile(d + "/target.c", emitCTableSource(*t));
  writeFile(d + "/target.h", emitCTableHeader(*t));
  // A tiny "firmware" using only the generated table: DMA 100 bytes into the
  // scratchpad and back through the simulator, via the command layer.
  std::string main = R"(#include "target.h"
#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"
#include <stdio.h>
#include <string.h>
#define T npucc_target_)" +
                     id + R"(
int main(void) {
  static unsigned char ram[4096];
  int64_t p[NPUCC_P_COUNT];
  uint64_t sys = 0, spm = 0;
  uint16_t i;
  npucc_sim *s = npucc_sim_create(&T);
  for (i = 0; i < T.num_mems; ++i) {
    if (T.mems[i].kind == NPUCC_MEM_SYSTEM && T.mems[i].writable && !sys) sys = T.mems[i].base;
    if (T.mems[i].kind == NPUCC_MEM_SCRATCHPAD && !spm) spm = T.mems[i].base;
  }
  if (npucc_sim_map(s, sys, ram, sizeof ram) != 0) return 2;
  npucc_sim_attach(s);
  for (i = 0; i < 100; ++i) ram[i] = (unsigned char)(i * 7 + 1);
  npucc_npu_defaults(p);
  p[NPUCC_P_SRC_ADDR] = (int64_t)sys; p[NPUCC_P_DST_ADDR] = (int64_t)spm; p[NPUCC_P_LENGTH] = 100;
  if (npucc_npu_issue(&T, NPUCC_KIND_DMA, p, NULL) != NPUCC_OK) return 3;
  if (npucc_hal_wait(NPUCC_ENGINE_DMA, 1000000) != NPUCC_OK) return 4;
  p[NPUCC_P_SRC_ADDR] = (int64_t)spm; p[NPUCC_P_DST_ADDR] = (int64_t)(sys + 1024);
  if (npucc_npu_issue(&T, NPUCC_KIND_DMA, p, NULL) != NPUCC_OK) return 5;
  if (npucc_hal_wait(NPUCC_ENGINE_DMA, 1000000) != NPUCC_OK) return 6;
  if (memcmp(ram, ram + 1024, 100) != 0 || npucc_sim_failed(s)) return 7;
  printf("ok %u commands\n", (unsigned)npucc_sim_num_commands(s));
  npucc_sim_destroy(s);
  return 0;
}
)";
  writeFile(d + "/main.c", main);
  std::string src = std::string(NPUCC_SOURCE_DIR) + "/runtime";
  std::string cmd =
      "cc -std=c99 -Wall -Wextra -Werror -pedantic -DNPUCC_HAL_SIM -I'" + d + "' -I'" + src +
      "/hal' -I'" + src + "/sim' -I'" + src + "/include' '" + d + "/main.c' '" + d +
      "/target.c' '" + src + "/hal/npucc_hal.c' '" + src + "/hal/npucc_npu.c' '" + src +
      "/sim/npucc_sim.c' '" + src + "/sim/npucc_sim_ops.c' '" + src + "/sim/npucc_sim_mac.c' '" +
      src + "/sim/npucc_sim_mem.c' '" + src + "/sim/npucc_sim_status.c' '" + src +
      "/sim/npucc_sim_delivery.c' '" + src + "/sim/npucc_sim_tables.c' -o '" + d + "/fw'";
  ASSERT_EQ(run(cmd), 0);
  EXPECT_EQ(run("'" + d + "/fw'"), 0);
}

std::string capture(const std::string &cmd, int *rc) {
  std::string out;
  FILE *f = popen(cmd.c_str(), "r");
  if (!f) {
    *rc = -1;
    return out;
  }
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), f))
    out.append(buf, n);
  *rc = pclose(f);
  return out;
}

// The firmware (MMIO) back end of the HAL, compiled without NPUCC_HAL_SIM,
// with the command interface placed on a host page below 4 GiB: the command
// layer's writes must land at the table's offsets with the table's widths,
// and the completion wait must decode the status bits.
TEST_P(CGen, MmioBackEndWritesRegistersAndDecodesStatus) {
  auto t = loadTarget(GetParam());
  ASSERT_TRUE(t.ok()) << t.error().str();
  std::string id = cIdentifier(t->name);
  TmpDir tmp(macroPrefix(t->name) + "_mmio");
  const std::string &d = tmp.path;
  writeFile(d + "/target.c", emitCTableSource(*t));
  writeFile(d + "/target.h", emitCTableHeader(*t));
  std::string main = R"(#define _GNU_SOURCE
#include "target.h"
#include "npucc_hal.h"
#include "npucc_npu.h"
#include <stdio.h>
#include <stdint.h>
#include <sys/mman.h>
static unsigned char *page;
static npucc_target_desc d;
static void put(uint32_t off, uint8_t w, uint64_t v) {
  if (w == 8) *(volatile uint8_t *)(page + off) = (uint8_t)v;
  else if (w == 16) *(volatile uint16_t *)(page + off) = (uint16_t)v;
  else if (w == 32) *(volatile uint32_t *)(page + off) = (uint32_t)v;
  else *(volatile uint64_t *)(page + off) = v;
}
static uint64_t get(uint32_t off, uint8_t w) {
  if (w == 8) return *(volatile uint8_t *)(page + off);
  if (w == 16) return *(volatile uint16_t *)(page + off);
  if (w == 32) return *(volatile uint32_t *)(page + off);
  return *(volatile uint64_t *)(page + off);
}
/* Makes a status condition hold (or not), polarity applied. */
static void set_cond(npucc_status_bit b, int active) {
  const npucc_reg_desc *r;
  if (b.f.reg < 0) return;
  r = &d.regs[b.f.reg];
  put(r->offset, r->width,
      npucc_field_put(get(r->offset, r->width), b.f,
                      (uint64_t)((b.flags & NPUCC_SB_ACTIVE_LOW) ? !active : active)));
}
int main(void) {
  int64_t p[NPUCC_P_COUNT];
  npucc_status_bit use, slots;
  int eng, by_busy, rc0, rc1, rc2, rc3 = 0;
  uint16_t i;
  void *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (m == MAP_FAILED) return 77;
  d = npucc_target_)" +
                     id + R"(;
  page = (unsigned char *)m;
  d.base_address = (uint32_t)(uintptr_t)m;
  npucc_hal_init(&d);
  /* A job queue must show a free slot before a command is written. */
  slots = d.engines[NPUCC_ENGINE_DMA].free_slots;
  if (slots.f.reg >= 0)
    put(d.regs[slots.f.reg].offset, d.regs[slots.f.reg].width, npucc_field_put(0, slots.f, 1));
  npucc_npu_defaults(p);
  p[NPUCC_P_SRC_ADDR] = (int64_t)d.mems[d.num_mems - 1].base;
  p[NPUCC_P_DST_ADDR] = (int64_t)d.mems[0].base;
  p[NPUCC_P_LENGTH] = 100;
  rc0 = npucc_npu_issue(&d, NPUCC_KIND_DMA, p, NULL);
  /* Status fields are the NPU's (the HAL may acknowledge a sticky DONE there
   * before issuing; a start bit is also the doorbell): clear them before the
   * dump. */
  for (i = 0; i < NPUCC_ENGINE_COUNT; ++i) {
    const npucc_status_bit *b[4];
    int k;
    b[0] = &d.engines[i].busy, b[1] = &d.engines[i].done, b[2] = &d.engines[i].error;
    b[3] = &d.engines[i].free_slots;
    for (k = 0; k < 4; ++k)
      if (b[k]->f.reg >= 0) {
        const npucc_reg_desc *r = &d.regs[b[k]->f.reg];
        put(r->offset, r->width, npucc_field_put(get(r->offset, r->width), b[k]->f, 0));
      }
  }
  for (i = 0; i < d.num_regs && !(d.regs[i].flags & NPUCC_REG_WORD); ++i)
    printf("%s=%08llx\n", d.regs[i].name,
           (unsigned long long)get(d.regs[i].offset, d.regs[i].width));
  eng = d.completion == NPUCC_COMPLETION_FENCE ? NPUCC_ENGINE_FENCE : NPUCC_ENGINE_DMA;
  by_busy = d.engines[eng].busy.f.reg >= 0;
  use = by_busy ? d.engines[eng].busy : d.engines[eng].done;
  for (i = 0; i < NPUCC_ENGINE_COUNT; ++i)
    set_cond(d.engines[i].error, 0);
  set_cond(use, !by_busy); /* completed */
  rc1 = npucc_hal_wait(NPUCC_ENGINE_DMA, 10);
  set_cond(use, by_busy); /* still running */
  rc2 = npucc_hal_wait(NPUCC_ENGINE_DMA, 10);
  if (d.engines[NPUCC_ENGINE_DMA].error.f.reg >= 0) {
    set_cond(use, !by_busy);
    set_cond(d.engines[NPUCC_ENGINE_DMA].error, 1);
    rc3 = npucc_hal_wait(NPUCC_ENGINE_DMA, 10);
  }
  printf("rc %d %d %d %d\n", rc0, rc1, rc2, rc3);
  return 0;
}
)";
  writeFile(d + "/main.c", main);
  std::string src = std::string(NPUCC_SOURCE_DIR) + "/runtime";
  // A port's custom-instruction hook (descriptions with insn delivery need
  // one on a CPU other than RISC-V; this test issues only a DMA), and its
  // device addresses: the low 32 bits of a pointer (the command buffer of
  // buffer delivery is a static of this 64-bit host program; its kick
  // writes the address into a 32-bit field).
  ASSERT_EQ(run("cc -std=c99 -Wall -Wextra -Werror -pedantic "
                "'-DNPUCC_HAL_INSN(o,f3,f7,a,b)=((void)(a),(void)(b))' "
                "'-DNPUCC_DEVICE_ADDR(p)=((uint64_t)(uintptr_t)(p) & 0xFFFFFFFFu)' -I'" +
                d + "' -I'" + src + "/hal' -I'" + src + "/include' '" + d + "/main.c' '" + d +
                "/target.c' '" + src + "/hal/npucc_hal.c' '" + src + "/hal/npucc_npu.c' -o '" + d +
                "/fw'"),
            0);
  int rc = 0;
  std::string out = capture("'" + d + "/fw'", &rc);
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77)
    GTEST_SKIP() << "no MAP_32BIT page";
  ASSERT_EQ(rc, 0) << out;
  // Expected register contents from the in-process command layer.
  CTable table(*t);
  std::vector<int64_t> p(NPUCC_P_COUNT);
  npucc_npu_defaults(p.data());
  p[NPUCC_P_SRC_ADDR] = int64_t(table.get()->mems[table.get()->num_mems - 1].base);
  p[NPUCC_P_DST_ADDR] = int64_t(table.get()->mems[0].base);
  p[NPUCC_P_LENGTH] = 100;
  npucc_reg_write w[NPUCC_MAX_CMD_REGS];
  int n = 0;
  ASSERT_EQ(npucc_npu_encode(table.get(), NPUCC_KIND_DMA, p.data(), w, &n, nullptr), NPUCC_OK);
  // As the HAL writes them: the init writes, the acknowledgement of a stale
  // sticky DONE, the command (read-modify-write where the register says so);
  // then the status fields cleared as main.c does.
  const npucc_target_desc *td = table.get();
  std::vector<uint64_t> regs(t->registers.size(), 0);
  for (uint16_t i = 0; i < td->num_init; ++i) {
    npucc_fieldref f = td->init[i].field;
    regs[f.reg] = npucc_field_put((td->regs[f.reg].flags & NPUCC_REG_RMW) ? regs[f.reg] : 0, f,
                                  td->init[i].value);
  }
  npucc_status_bit ack = td->engines[NPUCC_ENGINE_DMA].done;
  if ((ack.flags & NPUCC_SB_STICKY) && (ack.flags & NPUCC_SB_CLEAR_W1C))
    regs[ack.f.reg] = npucc_field_put(0, ack.f, ~uint64_t(0));
  if ((ack.flags & NPUCC_SB_STICKY) && (ack.flags & NPUCC_SB_CLEAR_FIELD))
    regs[ack.clear.field.reg] = npucc_field_put(0, ack.clear.field, ack.clear.value);
  for (int i = 0; i < n; ++i)
    regs[w[i].reg] = (td->regs[w[i].reg].flags & NPUCC_REG_RMW)
                         ? (regs[w[i].reg] & ~w[i].mask) | w[i].value
                         : w[i].value;
  for (const npucc_engine_status &e : td->engines)
    for (const npucc_status_bit *b : {&e.busy, &e.done, &e.error, &e.free_slots})
      if (b->f.reg >= 0)
        regs[b->f.reg] = npucc_field_put(regs[b->f.reg], b->f, 0);
  std::string expect;
  for (size_t i = 0; i < t->registers.size() && !t->registers[i].isWord(); ++i) {
    char line[96];
    std::snprintf(line, sizeof(line), "%s=%08llx\n", t->registers[i].name.c_str(),
                  static_cast<unsigned long long>(regs[i]));
    expect += line;
  }
  bool hasErr = t->engines[0].error.valid();
  expect += "rc 0 0 " + std::to_string(NPUCC_ERR_TIMEOUT) + " " +
            std::to_string(hasErr ? NPUCC_ERR_DEVICE : 0) + "\n";
  EXPECT_EQ(out, expect);
}

INSTANTIATE_TEST_SUITE_P(AllTargets, CGen, ::testing::ValuesIn(npucc::test::allTargets()),
                         npucc::test::targetTestName);

} // namespace
