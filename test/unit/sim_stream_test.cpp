//===- sim_stream_test.cpp - Command streams carry offsets up to 4 GiB - 1 --===//
//
// npucc_stream_run (runtime/hal/npucc_stream.c) adds an address's 32-bit
// offset to its buffer's base. The offset is unsigned: a 4 GiB - 1
// scratchpad has offsets above 2^31 (the compiler used to refuse such a
// description: "parameter 'dst_addr' = 4294960448 does not fit the stream's
// 32-bit values"). The stream stores them as the int32 with the same bits;
// read as signed, they would land 4 GiB below their buffer.
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

} // namespace
