#!/usr/bin/env bash
# Quick start, part 2: install what is missing, build everything, run every test tier
# (unit, textual IR, ONNX node conformance, sanitizers, real models when ../shared exists,
# firmware builds and bare-metal runs for Cortex-M4 and RV32, exported ONNX checked by ONNX
# Runtime).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# python3-onnx/python3-numpy: the test scripts' model helpers (/usr/bin/python3), not on a
# fresh Debian 12 machine. libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes for the
# sanitized_* and fuzz_* tiers (docs/fuzzing.md). chromium: the browser the report_html tier
# opens OUT/report.html in (driven by playwright-core from bench/node_modules).
"$root/scripts/setup-deps.sh" gcc-arm-none-eabi libnewlib-arm-none-eabi gcc-riscv64-unknown-elf \
  picolibc-riscv64-unknown-elf qemu-system-arm qemu-system-misc python3-onnx python3-numpy \
  libclang-rt-14-dev chromium
# ONNX Runtime from npm (pinned in bench/package-lock.json): an independent runtime for the
# exported-ONNX tests (and the benchmark); playwright-core: the report_html tier's browser
# driver (it uses Debian's chromium, no browser download). --ignore-scripts: onnxruntime's
# post-install step would try to download GPU libraries; the CPU library ships in the package.
command -v npm > /dev/null || "$root/scripts/setup-deps.sh" nodejs npm
if [ ! -d "$root/bench/node_modules/onnxruntime-node" ] ||
  [ ! -d "$root/bench/node_modules/playwright-core" ]; then
  (cd "$root/bench" && npm ci --ignore-scripts --no-audit --no-fund)
fi
export NPUCC_ORT_NODE_MODULES="$root/bench/node_modules"
"$root/scripts/build.sh"
build="${NPUCC_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j 2 "$@"
