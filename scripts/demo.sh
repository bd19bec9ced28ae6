#!/usr/bin/env bash
# Quick start, part 1: install what is missing, build npucc, compile the bundled model,
# build the generated C, run it on the golden inputs and compare with the golden outputs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup-deps.sh"
"$root/scripts/build.sh" --target npucc
npucc="${NPUCC_BUILD_DIR:-$root/build}/tools/npucc/npucc"
model="${1:-$root/models/tinycnn}"
echo "== npucc $(basename "$model"): compile to $root/out/$(basename "$model")"
mkdir -p "$root/out"
"$npucc" "$model/model.onnx" -o "$root/out/$(basename "$model")"
echo "== build the generated C, run it on the golden inputs, compare"
"$npucc" check "$model" --tolerance 1e-4
