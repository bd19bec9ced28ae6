#!/usr/bin/env bash
# Quick start, part 2: install what is missing, build everything, run every test tier
# (unit, textual IR, ONNX node conformance, sanitizers, real models when ../shared exists,
# firmware builds with the Cortex-M4 and RV32 bare-metal cross compilers).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup-deps.sh" gcc-arm-none-eabi libnewlib-arm-none-eabi gcc-riscv64-unknown-elf \
  picolibc-riscv64-unknown-elf qemu-system-arm qemu-system-misc
"$root/scripts/build.sh"
build="${NPUCC_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j 2 "$@"
