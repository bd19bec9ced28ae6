//===- ci_skip_test.cpp - Skips fail the run when CI is set ----------------===//
//
// NPUCC_SKIP and NPUCC_SKIP_PART (CiSkip.h) run with CI unset, empty and set:
// a skip (or a note) without CI, a fatal (or non-fatal) failure carrying the
// reason with it. The results are intercepted, so this test itself passes.
//
//===----------------------------------------------------------------------===//
#include "CiSkip.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

void skipWhole() { NPUCC_SKIP() << "no such model folder"; }

void skipPart() { NPUCC_SKIP_PART("case " << 3 << " missing"); }

/// Sets CI to `value` (nullptr: unset) for its lifetime.
class CiEnv {
public:
  explicit CiEnv(const char *value) {
    if (const char *old = std::getenv("CI"))
      Old = old;
    if (value)
      setenv("CI", value, 1);
    else
      unsetenv("CI");
  }
  ~CiEnv() {
    if (Old)
      setenv("CI", Old->c_str(), 1);
    else
      unsetenv("CI");
  }

private:
  std::optional<std::string> Old;
};

/// Runs `f`, its test-part results into `results` instead of this test's.
void run(void (*f)(), ::testing::TestPartResultArray &results) {
  ::testing::ScopedFakeTestPartResultReporter reporter(
      ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
  f();
}

TEST(CiSkip, WholeTestSkipsWithoutCiAndFailsWithIt) {
  for (const char *ci : {static_cast<const char *>(nullptr), "", "1", "true"}) {
    SCOPED_TRACE(ci ? std::string("CI='") + ci + "'" : std::string("CI unset"));
    CiEnv env(ci);
    const bool set = ci && *ci;
    ::testing::TestPartResultArray r;
    run(skipWhole, r);
    ASSERT_EQ(r.size(), 1);
    const ::testing::TestPartResult &p = r.GetTestPartResult(0);
    EXPECT_EQ(p.type(),
              set ? ::testing::TestPartResult::kFatalFailure : ::testing::TestPartResult::kSkip);
    std::string msg = p.message();
    EXPECT_NE(msg.find("no such model folder"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("CI is set") != std::string::npos, set) << msg;
  }
}

TEST(CiSkip, OneCaseNotesWithoutCiAndFailsWithIt) {
  for (const char *ci : {static_cast<const char *>(nullptr), "1"}) {
    SCOPED_TRACE(ci ? "CI set" : "CI unset");
    CiEnv env(ci);
    ::testing::internal::CaptureStdout();
    ::testing::TestPartResultArray r;
    run(skipPart, r);
    std::string out = ::testing::internal::GetCapturedStdout();
    if (ci) {
      ASSERT_EQ(r.size(), 1);
      EXPECT_EQ(r.GetTestPartResult(0).type(), ::testing::TestPartResult::kNonFatalFailure);
      EXPECT_NE(std::string(r.GetTestPartResult(0).message()).find("case 3 missing"),
                std::string::npos);
    } else {
      EXPECT_EQ(r.size(), 0);
      EXPECT_NE(out.find("note: skipped: case 3 missing"), std::string::npos) << out;
    }
  }
}

} // namespace
