#!/usr/bin/env bash
# patches_test.sh: `--patches auto` (docs/kernels.md, "Patches") on --target cpu.
# For tinycnn_int8 (models/; --patches always: its chain ends at its largest tensor, so auto
# finds less than 2% to gain; also with --io int8: the chain then starts at a Conv reading
# the whole int8 input), and the shared mlpt_vww_qdq and mlpt_ic_qdq:
#   - `npucc check --patches auto --tolerance-steps 0 --interp-check on`: the generated C
#     with the stripes gives EXACTLY the golden output and the integer interpreter's
#     (which computes layer by layer), so it is bit-exact with the program without patches
#     (the same check without --patches, run by the `models` tiers);
#   - the loop IR (--print-lir): with patches the arena is smaller than without where the
#     planner takes a plan (tinycnn_int8, mlpt_vww_qdq: there at most half) and the calls name
#     their stripes; mlpt_ic_qdq (a residual block right after its first convolution) keeps
#     the layer-by-layer program: same arena, no stripe.
# A missing shared model is a SKIP (a FAIL under CI: test/e2e/ci_skip.sh).
# Usage: patches_test.sh NPUCC SOURCE_DIR
set -uo pipefail
npucc="$1"
src="$(cd "$2" && pwd)"
. "$src/test/e2e/ci_skip.sh"
shared="$src/../shared/models"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
# name|model folder|flags
runs=("tinycnn_int8|$src/models/tinycnn_int8|--patches always"
      "tinycnn_int8_io_int8|$src/models/tinycnn_int8|--patches always --io int8")
for m in mlpt_vww_qdq mlpt_ic_qdq; do
  if [ -f "$shared/$m/model.onnx" ]; then
    runs+=("$m|$shared/$m|--patches auto")
  else
    ci_skip "$shared/$m missing: not run" || failed=$((failed + 1))
  fi
done
arena() { sed -n 's/^arena \([0-9]*\) .*/\1/p' "$1"; }
for run in "${runs[@]}"; do
  IFS='|' read -r name d flags <<< "$run"
  read -r -a on_flags <<< "$flags"
  off_flags=()
  case "$flags" in *"--io int8"*) off_flags=(--io int8) ;; esac
  if ! "$npucc" "$d/model.onnx" --target cpu "${off_flags[@]}" --print-lir -o "$tmp/$name-off" \
       > "$tmp/$name-off.err" 2> "$tmp/$name-off.lir" ||
     ! "$npucc" "$d/model.onnx" --target cpu "${on_flags[@]}" --print-lir -o "$tmp/$name-on" \
       > "$tmp/$name-on.err" 2> "$tmp/$name-on.lir"; then
    echo "FAIL: $name: npucc failed"; tail -5 "$tmp/$name"-*.lir; failed=$((failed + 1)); continue
  fi
  off="$(arena "$tmp/$name-off.lir")" on="$(arena "$tmp/$name-on.lir")"
  stripes="$(grep -c ' patch [0-9]*/[0-9]* rows ' "$tmp/$name-on.lir")"
  if [ -z "$on" ] || [ -z "$off" ]; then
    echo "FAIL: $name: no arena line in the loop IR"; failed=$((failed + 1)); continue
  elif [ "$name" = mlpt_ic_qdq ]; then
    if [ "$on" != "$off" ] || [ "$stripes" -ne 0 ]; then
      echo "FAIL: $name: expected the layer-by-layer program (arena $on vs $off, $stripes stripe calls)"
      failed=$((failed + 1)); continue
    fi
  elif [ "$on" -ge "$off" ] || [ "$stripes" -eq 0 ]; then
    echo "FAIL: $name: arena with patches $on, without $off, $stripes stripe calls"
    failed=$((failed + 1)); continue
  elif [ "${name#mlpt_vww}" != "$name" ] && [ $((2 * on)) -gt "$off" ]; then
    echo "FAIL: $name: arena with patches $on is more than half of $off"
    failed=$((failed + 1)); continue
  fi
  if ! "$npucc" check "$d" --target cpu "${on_flags[@]}" --tolerance-steps 0 --interp-check on \
       --keep "$tmp/$name-check" > "$tmp/$name-check.log" 2>&1; then
    echo "FAIL: $name: npucc check $flags"; tail -20 "$tmp/$name-check.log"
    failed=$((failed + 1)); continue
  fi
  # The program the check built is the one with the stripes.
  if [ "$stripes" -ne 0 ] && ! grep -rq ' patch 1/' "$tmp/$name-check" --include='*.c'; then
    echo "FAIL: $name: the checked program has no stripe"; failed=$((failed + 1)); continue
  fi
  echo "ok: $name: arena $on with patches, $off without; $stripes stripe calls; check bit-exact"
done
[ "$failed" -eq 0 ] || { echo "patches: $failed failed"; exit 1; }
echo "patches: all passed"
