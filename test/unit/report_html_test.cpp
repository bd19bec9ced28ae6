//===- report_html_test.cpp - The schedule and OUT/report.html's data -----===//
//
// models/tinycnn_int8 on every description: traceProgram without CPU cycles
// is estimateProgram's timeline (same end, one span per NPU command, none
// past the end); the report's schedule gives every NPU layer a compute span
// and every CPU layer a CPU span; report.html embeds exactly reportJson and
// is byte-identical on a second rendering; a '<' in the data cannot close
// the script block. The page itself is tested in a browser (report_html tier).
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/Driver.h"
#include "npucc/driver/Report.h"
#include "npucc/lower/NpuTrace.h"

#include "TestTargets.h"

#include <gtest/gtest.h>

#include <set>

using namespace npucc;

namespace {

std::string tinyModel() {
  return std::string(NPUCC_SOURCE_DIR) + "/models/tinycnn_int8/model.onnx";
}

/// The JSON block of a report.html page.
nlohmann::json embedded(const std::string &page) {
  const std::string open = "<script type=\"application/json\" id=\"npucc-data\">";
  size_t a = page.find(open);
  size_t b = page.find("</script>", a);
  if (a == std::string::npos || b == std::string::npos)
    return nullptr;
  a += open.size();
  return nlohmann::json::parse(page.substr(a, b - a));
}

class ReportSchedule : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportSchedule, TraceIsTheEstimateAndEveryLayerHasItsSpan) {
  driver::CompileOptions o;
  o.modelPath = tinyModel();
  o.target = GetParam();
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  ASSERT_TRUE(r->program.usesNpu());
  lower::NpuEstimate e = lower::estimateProgram(r->program, r->target);
  std::vector<lower::NpuSpan> spans;
  lower::NpuEstimate t = lower::traceProgram(r->program, r->target, spans);
  EXPECT_EQ(t.cycles, e.cycles);
  EXPECT_EQ(t.dmaBusy, e.dmaBusy);
  EXPECT_EQ(t.computeBusy, e.computeBusy);
  EXPECT_EQ(spans.size(), e.commands);
  uint64_t dma = 0, compute = 0;
  for (const lower::NpuSpan &s : spans) {
    EXPECT_LE(s.start, s.end);
    EXPECT_LE(s.end, e.cycles);
    EXPECT_EQ(r->program.body[s.instr].opcode, "npu");
    (s.lane == lower::NpuSpan::DmaLane ? dma : compute) += s.end - s.start;
  }
  EXPECT_EQ(dma, e.dmaBusy);
  EXPECT_EQ(compute, e.computeBusy);

  driver::CompileReport rep = driver::buildReport(*r);
  EXPECT_EQ(rep.cycles, e.cycles);
  EXPECT_GE(rep.scheduleCycles, rep.cycles);
  std::set<std::pair<long, int>> seen;
  for (const driver::ScheduleSpan &s : rep.schedule)
    seen.insert({s.layer, int(s.lane)});
  for (size_t i = 0; i < rep.layers.size(); ++i) {
    const driver::LayerRow &l = rep.layers[i];
    if (l.npu) {
      EXPECT_TRUE(seen.count({long(i), int(driver::ScheduleSpan::Compute)})) << l.name;
    } else if (l.cpuCycles[int(lower::CpuCore::CortexM4)]) {
      EXPECT_TRUE(seen.count({long(i), int(driver::ScheduleSpan::Cpu)})) << l.name;
    }
    EXPECT_LE(l.liveBytes, rep.arenaBytes) << l.name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTargets, ReportSchedule, ::testing::ValuesIn(test::allTargets()),
                         test::targetTestName);

TEST(ReportHtml, EmbedsReportJsonDeterministically) {
  driver::CompileOptions o;
  o.modelPath = tinyModel();
  o.target = "npu-default";
  auto r = driver::compileModel(o);
  ASSERT_TRUE(r.ok()) << r.error().str();
  driver::CompileReport rep = driver::buildReport(*r);
  ASSERT_FALSE(rep.layers.empty());
  rep.layers[0].name = "a</script><b>";
  std::string page = driver::reportHtml(rep, nullptr);
  EXPECT_EQ(page, driver::reportHtml(driver::CompileReport(rep), nullptr));
  EXPECT_EQ(page.find("a</script>"), std::string::npos);
  nlohmann::json j = embedded(page);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["report"], driver::reportJson(rep));
  EXPECT_TRUE(j["accuracy"].is_null());
  EXPECT_EQ(j["report"]["layers"][0]["name"], "a</script><b>");
  // Self-contained: no external resource.
  for (const char *ext : {"src=\"http", "href=\"http", "@import", "url("})
    EXPECT_EQ(page.find(ext), std::string::npos) << ext;
}

} // namespace
