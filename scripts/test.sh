#!/usr/bin/env bash
# Quick start, part 2: install what is missing, build everything, run every test tier
# (unit, textual IR, ONNX node conformance, sanitizers, real models when ../shared exists).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup-deps.sh"
"$root/scripts/build.sh"
build="${NPUCC_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j 2 "$@"
