//===- CiSkip.h - Skips that fail when CI is set ---------------------------===//
//
// The unit tests' form of test/e2e/ci_skip.sh (docs/testing.md, "Skips and
// CI"): a test that lacks data or a tool skips with its reason, unless the
// environment variable CI is set (non-empty; .ci/run sets CI=1), where the
// same reason is a failure.
//
//   NPUCC_SKIP() << "reason";   // in a TEST body (returns): GTEST_SKIP, or a
//                               // fatal failure under CI
//   if (!fs::exists(dir)) {     // one case of several in a loop: a note on
//     NPUCC_SKIP_PART(dir << " missing");       // stdout, or a non-fatal failure
//     continue;                                 // under CI
//   }
//
// A skip for a property of the platform, not missing data or tools (e.g. no
// MAP_32BIT page), stays a plain GTEST_SKIP.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

namespace npucc::test {

/// True when the environment variable CI is set and not empty.
inline bool ciIsSet() {
  const char *ci = std::getenv("CI");
  return ci && *ci;
}

inline const char *ciSkipPrefix() {
  return ciIsSet() ? "CI is set, so a test that cannot run fails the run: " : "";
}

} // namespace npucc::test

// GTEST_SKIP() and GTEST_FAIL() are `return AssertHelper(kind, ...) = Message()`;
// these choose the kind at run time.
#define NPUCC_SKIP()                                                                               \
  return ::testing::internal::AssertHelper(                                                        \
             ::npucc::test::ciIsSet() ? ::testing::TestPartResult::kFatalFailure                   \
                                      : ::testing::TestPartResult::kSkip,                          \
             __FILE__, __LINE__, ::npucc::test::ciSkipPrefix()) = ::testing::Message()

#define NPUCC_SKIP_PART(reason)                                                                    \
  do {                                                                                             \
    if (::npucc::test::ciIsSet())                                                                  \
      ADD_FAILURE() << ::npucc::test::ciSkipPrefix() << reason;                                    \
    else                                                                                           \
      std::cout << "note: skipped: " << reason << "\n";                                            \
  } while (0)
