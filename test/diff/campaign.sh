#!/usr/bin/env bash
# campaign.sh - A longer run of the differential tier (docs/testing.md, "Differential testing").
#
# usage: test/diff/campaign.sh --models N [--seed S] [--npucc BIN] [--out DIR] [--jobs J]
#                              [--float-share F] [--cflags FLAGS] [--targets LIST]
#   N models (a share F of them float, default 0.25; the rest int8 QDQ) with seeds S, S+1,
#   ... (default S = 1), each int8 model checked on every target (cpu, npu-default,
#   npu-small, test/target/npu-*.json), each float model on cpu and npu-default, with at
#   most J checks at once (default 2), the generated C built with FLAGS (default -O2).
#   BIN defaults to build/tools/npucc/npucc; OUT to a new temp folder, which keeps
#   summary.txt, results.json and failures/ (each failing case with its check log; shrink
#   one with test/diff/minimize.py). Needs ONNX Runtime for node (NPUCC_ORT_NODE_MODULES,
#   default bench/node_modules). Exit 0 when no check failed unexplained.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
models="" seed=1 npucc="$root/build/tools/npucc/npucc" out="" jobs=2 share=0.25 cflags=-O2
targets=all
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --npucc) npucc="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --float-share) share="$2"; shift 2 ;;
    --cflags) cflags="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "campaign.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ "$models" =~ ^[0-9]+$ ]] && [ "$models" -gt 0 ] || usage
nfloat="$(/usr/bin/python3 -c "import sys; print(int(round(int(sys.argv[1]) * float(sys.argv[2]))))" \
  "$models" "$share")"
nint8=$((models - nfloat))
[ -n "$out" ] || out="$(mktemp -d "${TMPDIR:-/tmp}/npucc-campaign.XXXXXX")"
export NPUCC_ORT_NODE_MODULES="${NPUCC_ORT_NODE_MODULES:-$root/bench/node_modules}"
exec /usr/bin/python3 "$here/run_diff.py" --npucc "$npucc" --seed "$seed" --int8 "$nint8" \
  --float "$nfloat" --targets "$targets" --jobs "$jobs" --cflags="$cflags" --out "$out"
