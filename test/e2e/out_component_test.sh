#!/usr/bin/env bash
# OUT/ as a build component (issue 20): for --target cpu and npu-default, tinycnn_int8 with
# its --emit-test program is built only through the generated fragments - OUT/model.cmake
# (include() into a CMake project) and OUT/model.mk (include into a Makefile, make -f) - with
# -std=c99 -Wall -Wextra -Werror -pedantic, the NPU build on the host simulator
# (MODEL_SIM_DIR = an `npucc --emit-runtime --with-sim` folder), and each program must print
# PASS. Also: a re-run writes byte-identical files, the manifest lists the fragments and
# README.md, and a MODEL_SIM_DIR without the simulator's sources stops make with its message.
# Usage: out_component_test.sh NPUCC SOURCE_DIR
set -uo pipefail
npucc="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
src="$(cd "$2" && pwd)"
. "$src/test/e2e/ci_skip.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
m="$src/models/tinycnn_int8"
warn="-Wall -Wextra -Werror -pedantic"

for tool in cmake make cc; do
  command -v "$tool" > /dev/null || ci_skip_exit "$tool not installed"
done

for t in cpu npu-default; do
  d="$tmp/$t"
  mkdir -p "$d"
  if ! "$npucc" "$m/model.onnx" -o "$d/OUT" --target "$t" --emit-test \
       --data "$m/test_data_set_0" > "$d/log" 2>&1 \
     || ! "$npucc" "$m/model.onnx" -o "$d/OUT2" --target "$t" --emit-test \
       --data "$m/test_data_set_0" > "$d/log2" 2>&1; then
    bad "$t: compile"; sed 's/^/    /' "$d/log" "$d/log2" | tail -5; continue
  fi
  if diff -r "$d/OUT" "$d/OUT2" > "$d/diff" && [ -f "$d/OUT/model.cmake" ] && [ -f "$d/OUT/model.mk" ] \
     && [ -f "$d/OUT/README.md" ]; then
    ok "$t: model.cmake, model.mk, README.md written, byte-identical on a re-run"
  else bad "$t: fragments missing or not deterministic:"; head -5 "$d/diff" | sed 's/^/    /'; fi
  if grep -qx "model.cmake" "$d/OUT/.npucc-files" && grep -qx "model.mk" "$d/OUT/.npucc-files" \
     && grep -qx "README.md" "$d/OUT/.npucc-files"; then
    ok "$t: the manifest lists the fragments and README.md"
  else bad "$t: .npucc-files does not list the fragments"; fi

  sim=""
  if [ "$t" != cpu ]; then
    if ! "$npucc" --target "$t" --emit-runtime "$d/SIM" --with-sim > "$d/log" 2>&1; then
      bad "$t: --emit-runtime --with-sim"; sed 's/^/    /' "$d/log" | tail -3; continue
    fi
    sim="$d/SIM"
  fi

  # CMake: include() the fragment, build the test program against the library target.
  mkdir -p "$d/cm"
  cat > "$d/cm/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.13)
project(app C)
set(MODEL_SIM_DIR "$sim")
include("$d/OUT/model.cmake")
target_compile_options(model PRIVATE $warn)
add_executable(model_test \${MODEL_TEST_SRC})
target_compile_options(model_test PRIVATE $warn)
target_link_libraries(model_test PRIVATE model)
EOF
  if cmake -S "$d/cm" -B "$d/cm/build" > "$d/cm.log" 2>&1 \
     && cmake --build "$d/cm/build" >> "$d/cm.log" 2>&1 \
     && "$d/cm/build/model_test" > "$d/cm.run" 2>&1 && tail -n1 "$d/cm.run" | grep -qx PASS; then
    ok "$t: test program built through model.cmake${sim:+ (simulator)}: PASS"
  else bad "$t: through model.cmake:"; cat "$d/cm.log" "$d/cm.run" 2>/dev/null | tail -8 | sed 's/^/    /'; fi

  # Make: include the fragment, build with its variables only.
  mkdir -p "$d/mk"
  printf 'MODEL_SIM_DIR := %s\ninclude %s/OUT/model.mk\nmodel_test: $(MODEL_TEST_SRC) $(MODEL_SRCS)\n\t$(CC) -std=c99 %s -O2 $(MODEL_CFLAGS) -o $@ $(MODEL_TEST_SRC) $(MODEL_SRCS) $(MODEL_LDLIBS)\n' \
    "$sim" "$d" "$warn" > "$d/mk/app.mk"
  if make -C "$d/mk" -f app.mk model_test > "$d/mk.log" 2>&1 \
     && "$d/mk/model_test" > "$d/mk.run" 2>&1 && tail -n1 "$d/mk.run" | grep -qx PASS; then
    ok "$t: test program built through model.mk${sim:+ (simulator)}: PASS"
  else bad "$t: through model.mk:"; cat "$d/mk.log" "$d/mk.run" 2>/dev/null | tail -8 | sed 's/^/    /'; fi

  if [ -n "$sim" ]; then
    # A simulator folder without the simulator's sources stops make with the fragment's message.
    mkdir -p "$d/empty"
    if make -C "$d/mk" -f app.mk MODEL_SIM_DIR="$d/empty" model_test > "$d/mk2.log" 2>&1; then
      bad "$t: make with an empty MODEL_SIM_DIR succeeded"
    elif grep -q "has no npucc_sim\*.c" "$d/mk2.log"; then
      ok "$t: an empty MODEL_SIM_DIR stops make ($(grep -o 'has no npucc_sim[^(]*' "$d/mk2.log" | head -1))"
    else bad "$t: make with an empty MODEL_SIM_DIR:"; tail -3 "$d/mk2.log" | sed 's/^/    /'; fi
  fi
done

echo "out_component: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
