//===- sim_stream_test.cpp - Command streams: 32-bit offsets, faults --------===//
//
// npucc_stream_run (runtime/hal/npucc_stream.c) adds an address's 32-bit
// offset to its buffer's base. The offset is unsigned: a 4 GiB - 1
// scratchpad has offsets above 2^31 (the compiler used to refuse such a
// description: "parameter 'dst_addr' = 4294960448 does not fit the stream's
// 32-bit values"). The stream stores them as the int32 with the same bits;
// read as signed, they would land 4 GiB below their buffer.
//
// A failing run leaves its fault to npucc_stream_last_fault: the op, the
// command, the refused parameter, its value and register field, or the
// engine and code of a device error; npucc_stream_reset clears it.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/CTable.h"
#include "npucc/target/Target.h"

#include "npucc_hal.h"
#include "npucc_npu.h"
#include "npucc_sim.h"
#include "npucc_stream.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace npucc::target;

namespace {

TEST(SimStream, AddressOffsetsAreUnsigned32Bit) {
  auto r = loadTarget("npu-default");
  ASSERT_TRUE(r.ok()) << r.error().str();
  CTable table(*r);
  const npucc_target_desc *d = table.get();
  npucc_sim *sim = npucc_sim_create(d);
  ASSERT_NE(sim, nullptr);
  npucc_sim_attach(sim);
  npucc_hal_set_wait_hook(npucc_sim_wfi_hook, sim);
  uint64_t ram = 0;
  for (const SystemRange &w : r->system)
    if (w.writable && !ram)
      ram = w.base;
  std::vector<uint8_t> host(4096);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = uint8_t(i * 7 + 1);
  ASSERT_EQ(npucc_sim_map(sim, ram, host.data(), host.size()), 0);
  // A DMA from "buffer 1 + 0xfffff000" (stored as -4096) into the scratchpad.
  // Buffer 1's base is chosen so that the sum, modulo 2^64, is ram + 0x100.
  const uint32_t offset = 0xFFFFF000u;
  uint64_t bases[3] = {0, ram + 0x100 - offset, r->scratchpads[0].base};
  npucc_stream_param params[3] = {
      {NPUCC_P_SRC_ADDR, 1, int32_t(-4096)}, {NPUCC_P_DST_ADDR, 2, 0}, {NPUCC_P_LENGTH, 0, 64}};
  npucc_stream_op ops[2] = {{NPUCC_KIND_DMA, 3, 0}, {NPUCC_STREAM_WAIT, NPUCC_WAIT_DMA, 0}};
  npucc_stream_reset();
  EXPECT_EQ(npucc_stream_run(d, ops, 2, params, bases), NPUCC_OK) << npucc_sim_error(sim);
  EXPECT_FALSE(npucc_sim_failed(sim)) << npucc_sim_error(sim);
  std::vector<uint8_t> got(64, 0);
  ASSERT_EQ(npucc_sim_spm_read(sim, r->scratchpads[0].base, got.data(), got.size()), 0);
  EXPECT_EQ(0, std::memcmp(got.data(), host.data() + 0x100, got.size()));
  npucc_sim_destroy(sim);
}

/// npu-default on the simulator with 4 KiB of RAM mapped at its first
/// writable system window.
struct StreamRig {
  std::unique_ptr<CTable> Table;
  const npucc_target_desc *D = nullptr;
  npucc_sim *Sim = nullptr;
  uint64_t Ram = 0, Spm = 0;
  std::vector<uint8_t> Host = std::vector<uint8_t>(4096, 3);

  StreamRig() {
    auto r = loadTarget("npu-default");
    EXPECT_TRUE(r.ok()) << r.error().str();
    if (!r)
      return;
    Table = std::make_unique<CTable>(*r);
    D = Table->get();
    Sim = npucc_sim_create(D);
    npucc_sim_attach(Sim);
    npucc_hal_set_wait_hook(npucc_sim_wfi_hook, Sim);
    npucc_hal_init(D);
    for (const SystemRange &w : r->system)
      if (w.writable && !Ram)
        Ram = w.base;
    Spm = r->scratchpads[0].base;
    EXPECT_EQ(npucc_sim_map(Sim, Ram, Host.data(), Host.size()), 0);
  }
  ~StreamRig() { npucc_sim_destroy(Sim); }
  StreamRig(const StreamRig &) = delete;
  StreamRig &operator=(const StreamRig &) = delete;
};

std::string str(const char *s) { return s ? s : "(null)"; }

TEST(SimStream, ARefusedParameterIsReadBackWithItsCommandValueAndField) {
  StreamRig g;
  ASSERT_NE(g.Sim, nullptr);
  // Buffer 1 = RAM, 2 = scratchpad. Op 0: a good DMA, op 1: its wait, op 2: a
  // DMA of 70000 bytes (DMA_SIZE.length has 16 bits).
  uint64_t bases[3] = {0, g.Ram, g.Spm};
  npucc_stream_param params[4] = {{NPUCC_P_SRC_ADDR, 1, 0},
                                  {NPUCC_P_DST_ADDR, 2, 0},
                                  {NPUCC_P_LENGTH, 0, 64},
                                  {NPUCC_P_LENGTH, 0, 70000}};
  npucc_stream_op ops[3] = {
      {NPUCC_KIND_DMA, 3, 0}, {NPUCC_STREAM_WAIT, NPUCC_WAIT_DMA, 0}, {NPUCC_KIND_DMA, 1, 3}};
  npucc_stream_reset();
  EXPECT_EQ(npucc_stream_last_fault()->rc, NPUCC_OK);
  EXPECT_EQ(npucc_stream_run(g.D, ops, 3, params, bases), NPUCC_ERR_RANGE);
  const npucc_stream_fault *f = npucc_stream_last_fault();
  EXPECT_EQ(f->rc, NPUCC_ERR_RANGE);
  EXPECT_EQ(f->op, 2);
  EXPECT_EQ(f->kind, NPUCC_KIND_DMA);
  EXPECT_EQ(f->param, NPUCC_P_LENGTH);
  EXPECT_EQ(f->value, 70000);
  EXPECT_EQ(f->engine, -1);
  const char *cmd = nullptr, *param = nullptr, *reg = nullptr, *field = nullptr;
  npucc_stream_fault_names(g.D, f, &cmd, &param, &reg, &field);
  EXPECT_EQ(str(cmd), "dma");
  EXPECT_EQ(str(param), "length");
  EXPECT_EQ(str(reg), "DMA_SIZE");
  EXPECT_EQ(str(field), "length");
  // A whole-register binding names the register and no field.
  npucc_stream_fault src = *f;
  src.param = NPUCC_P_SRC_ADDR;
  npucc_stream_fault_names(g.D, &src, &cmd, &param, &reg, &field);
  EXPECT_EQ(str(param), "src_addr");
  EXPECT_EQ(str(reg), "DMA_SRC");
  EXPECT_EQ(str(field), "");
  // The next run's reset clears the fault.
  npucc_stream_reset();
  EXPECT_EQ(npucc_stream_last_fault()->rc, NPUCC_OK);
  EXPECT_EQ(npucc_stream_last_fault()->op, -1);
}

TEST(SimStream, ADeviceErrorAtAWaitIsReadBackWithItsEngineAndCode) {
  StreamRig g;
  ASSERT_NE(g.Sim, nullptr);
  // A DMA into an unmapped address: the simulator's DMA engine reports an
  // error, which the wait after it (op 1) returns.
  uint64_t bases[3] = {0, g.Ram, 0x7F000000u};
  npucc_stream_param params[3] = {
      {NPUCC_P_SRC_ADDR, 1, 0}, {NPUCC_P_DST_ADDR, 2, 0}, {NPUCC_P_LENGTH, 0, 64}};
  npucc_stream_op ops[2] = {{NPUCC_KIND_DMA, 3, 0}, {NPUCC_STREAM_WAIT, NPUCC_WAIT_DMA, 0}};
  npucc_stream_reset();
  EXPECT_EQ(npucc_stream_run(g.D, ops, 2, params, bases), NPUCC_ERR_DEVICE);
  const npucc_stream_fault *f = npucc_stream_last_fault();
  EXPECT_EQ(f->rc, NPUCC_ERR_DEVICE);
  EXPECT_EQ(f->op, 1);
  EXPECT_EQ(f->kind, NPUCC_STREAM_WAIT);
  EXPECT_EQ(f->param, -1);
  EXPECT_EQ(f->engine, NPUCC_ENGINE_DMA);
  EXPECT_EQ(f->device_code, 1u) << "STATUS.dma_err is one bit";
  const char *cmd = nullptr, *param = nullptr, *reg = nullptr, *field = nullptr;
  npucc_stream_fault_names(g.D, f, &cmd, &param, &reg, &field);
  EXPECT_EQ(str(cmd), "wait");
  EXPECT_EQ(str(param), "");
  EXPECT_EQ(str(reg), "");
  EXPECT_EQ(str(field), "");
}

} // namespace
