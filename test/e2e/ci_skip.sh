# ci_skip.sh - one rule for tests that cannot run here (sourced by the test scripts)
#
# A test (or a part of one) that lacks data or a tool skips with its reason,
# unless the environment variable CI is set (non-empty; .ci/run sets CI=1):
# then the same reason is a failure, so a CI machine that lost the shared models
# or a cross compiler fails instead of passing with less coverage
# (docs/testing.md, "Skips and CI").
#
#   ci_skip REASON        a part of the test: prints "SKIP: REASON" and returns 0,
#                         or under CI prints "FAIL: REASON (...)" and returns 1;
#                         callers count the failure: ci_skip "..." || failed=$((failed + 1))
#   ci_skip_exit REASON   the whole test: exit 77 (CTest's SKIP_RETURN_CODE), or exit 1
#                         under CI

ci_skip() {
  if [ -n "${CI:-}" ]; then
    echo "FAIL: $* (CI is set: a test that cannot run fails the run)"
    return 1
  fi
  echo "SKIP: $*"
  return 0
}

ci_skip_exit() {
  if ci_skip "$@"; then
    exit 77
  fi
  exit 1
}
