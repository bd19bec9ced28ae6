#!/usr/bin/env bash
# run.sh: benchmark npucc-generated C against ONNX Runtime (see docs/benchmarks.md).
# Installs onnxruntime-node into bench/node_modules on first use (pinned by
# package-lock.json; --ignore-scripts because its postinstall downloads GPU files),
# then runs bench/run.py with all arguments passed through, e.g.
#   bench/run.sh --npucc build/tools/npucc/npucc --models mnist8,tinycnn
set -eu
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/../scripts/setup-deps.sh" python3-onnx python3-numpy
command -v npm > /dev/null || "$here/../scripts/setup-deps.sh" nodejs npm
if [ ! -d "$here/node_modules/onnxruntime-node" ]; then
  (cd "$here" && npm ci --ignore-scripts --no-audit --no-fund)
fi
exec /usr/bin/python3 "$here/run.py" "$@"
