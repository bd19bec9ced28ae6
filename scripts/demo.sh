#!/usr/bin/env bash
# Quick start, part 1: install what is missing, build npucc, compile the bundled int8 model
# for the default NPU (printing the per-layer table: placement, cycles, memory), then build
# the generated C together with the NPU simulator, run it on the golden inputs and compare
# with ONNX Runtime's golden output (and bit for bit with npucc's integer interpreter).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup-deps.sh"
"$root/scripts/build.sh" --target npucc
npucc="${NPUCC_BUILD_DIR:-$root/build}/tools/npucc/npucc"
model="${1:-$root/models/tinycnn_int8}"
shift $(( $# > 0 ? 1 : 0 ))
echo "== npucc $(basename "$model"): compile for the NPU to $root/out/$(basename "$model")"
mkdir -p "$root/out"
"$npucc" "$model/model.onnx" -o "$root/out/$(basename "$model")" "$@"
echo "== build the generated C with the NPU simulator, run it on the golden inputs, compare"
"$npucc" check "$model" "$@"
