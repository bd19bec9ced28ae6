#!/usr/bin/env bash
# Runs one libFuzzer target of the sanitized build for a fixed number of inputs with a fixed
# seed, starting from a seed corpus made of the project's own inputs. Any crash, leak, hang
# (-timeout), undefined behaviour or oversized allocation fails the test and leaves the
# reproducer in BUILD/fuzz-artifacts/ (docs/fuzzing.md: turn it into a regression test).
# Usage: run_fuzzer.sh onnx_import|target_json|ir_parser|lir_parser SANITIZED_BUILD_DIR SOURCE_DIR
#        [extra libFuzzer flags, e.g. -runs=1000000 for a longer run]
set -uo pipefail
name="$1"
build="$2"
src="$3"
shift 3
fuzzer="$build/test/fuzz/fuzz_$name"
npucc="$build/tools/npucc/npucc"
[ -x "$fuzzer" ] || { echo "FAIL: $fuzzer not built (sanitized_build)"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
seeds="$tmp/seeds"
mkdir -p "$seeds" "$tmp/corpus" "$build/fuzz-artifacts"
export ASAN_OPTIONS="detect_leaks=1:max_allocation_size_mb=3072:allocator_may_return_null=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
models=("$src"/models/*/model.onnx "$src"/test/e2e/bad/canon/*/model.onnx)
# Fixed budgets (inputs run) per target: together about three minutes on one core.
case "$name" in
  onnx_import)
    runs=30000
    for m in "${models[@]}" "$src"/test/e2e/bad/*.onnx; do
      cp "$m" "$seeds/$(echo "${m#"$src"/}" | tr '/' '_')"
    done
    ;;
  target_json)
    runs=100000
    cp "$src"/runtime/targets/*.json "$src"/test/target/*.json "$seeds/"
    ;;
  ir_parser)
    runs=150000
    find "$src/test/lit" -name '*.ir' -exec cp {} "$seeds/" \;
    "$npucc" opt "$src/models/tinycnn/model.onnx" --no-elide > "$seeds/tinycnn.ir" 2>/dev/null
    ;;
  lir_parser)
    runs=150000
    for m in "${models[@]}"; do
      id="$(basename "$(dirname "$m")")"
      "$npucc" "$m" -o "$tmp/out" --print-lir > /dev/null 2> "$seeds/$id.lir"
    done
    ;;
  *)
    echo "unknown fuzz target '$name'" >&2
    exit 2
    ;;
esac
# Inputs that once crashed a fuzzer run first (as seeds) and must pass.
regressions="$src/test/fuzz/regressions/$name"
[ -d "$regressions" ] && cp "$regressions"/* "$seeds/"
echo "fuzz_$name: $(ls "$seeds" | wc -l) seed inputs, $runs runs, seed 1"
start=$(date +%s)
"$fuzzer" -seed=1 -runs="$runs" -max_total_time=600 -timeout=60 -rss_limit_mb=4096 \
  -malloc_limit_mb=3072 -max_len=262144 -print_final_stats=1 \
  -artifact_prefix="$build/fuzz-artifacts/${name}-" "$@" "$tmp/corpus" "$seeds" > "$tmp/log" 2>&1
rc=$?
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ *DONE)|ERROR|SUMMARY|Test unit written" \
  "$tmp/log"
if [ "$rc" -ne 0 ]; then
  tail -n 60 "$tmp/log"
  echo "fuzz_$name: FAILED (exit $rc) after $(( $(date +%s) - start )) s; reproducer in $build/fuzz-artifacts/"
  exit 1
fi
echo "fuzz_$name: 1 passed, 0 failed in $(( $(date +%s) - start )) s"
