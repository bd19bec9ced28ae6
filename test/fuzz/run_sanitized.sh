#!/usr/bin/env bash
# Runs the sanitized build's unit tests (unit) or the bad-input tier (cli) under
# AddressSanitizer + UndefinedBehaviorSanitizer; any report fails the test.
# Usage: run_sanitized.sh unit|cli SANITIZED_BUILD_DIR SOURCE_DIR
set -uo pipefail
what="$1"
build="$2"
src="$3"
# max_allocation_size_mb: one allocation above 3 GB is a bug (the importer's limit for one
# tensor is 2 GiB); it replaces cli_test.sh's `ulimit -v`, which ASan's shadow memory forbids.
export ASAN_OPTIONS="detect_leaks=1:max_allocation_size_mb=3072:allocator_may_return_null=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
start=$(date +%s)
case "$what" in
  unit)
    "$build/test/npucc_unit_tests" --gtest_brief=1
    rc=$?
    ;;
  cli)
    NPUCC_SANITIZED=1 bash "$src/test/e2e/cli_test.sh" "$build/tools/npucc/npucc" "$src"
    rc=$?
    ;;
  *)
    echo "usage: run_sanitized.sh unit|cli BUILD SRC" >&2
    exit 2
    ;;
esac
echo "sanitized $what: exit $rc in $(( $(date +%s) - start )) s"
exit "$rc"
