#!/usr/bin/env bash
# Configures (once) and builds the sanitized clang build: npucc, its unit tests and the
# libFuzzer targets, all with -fsanitize=address,undefined (docs/fuzzing.md).
# -O1: the sanitizers' usual optimisation level, and the cheapest build on 2 cores; line
# tables only (reports keep file:line; a sixth cheaper to compile than -g). -Werror: this clang
# build is also the check that the compiler's C++ and C are warning-free under clang (the
# main build uses gcc).
# Usage: build_sanitized.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1"
build="$2"
command -v clang++ > /dev/null || { echo "FAIL: clang++ not installed (scripts/setup-deps.sh)"; exit 1; }
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S "$src" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DNPUCC_FUZZ=ON -DNPUCC_WERROR=ON > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
start=$(date +%s)
cmake --build "$build" -j 2 --target npucc npucc_unit_tests fuzz_onnx_import fuzz_target_json \
  fuzz_ir_parser fuzz_lir_parser
echo "sanitized build: $(( $(date +%s) - start )) s"
