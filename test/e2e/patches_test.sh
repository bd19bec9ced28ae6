#!/usr/bin/env bash
# patches_test.sh: `--patches auto` (docs/kernels.md, "Patches") on --target cpu.
# For tinycnn_int8 (models/; --patches always: its chain ends at its largest tensor, so auto
# finds less than 2% to gain; also with --io int8: the chain then starts at a Conv reading
# the whole int8 input), mobilenetv2 (models/, float) and the shared mlpt_vww_qdq and
# mlpt_ic_qdq:
#   - `npucc check` with and without the patches (int8: --tolerance-steps 0 --interp-check
#     on, EXACTLY the golden output and the integer interpreter's, which computes layer by
#     layer): both pass and the two programs' outputs (--keep DIR, out_*.bin) are
#     byte-identical;
#   - the loop IR (--print-lir): with patches the arena is smaller than without where the
#     planner takes a plan (tinycnn_int8, mlpt_vww_qdq: there at most half) and the calls name
#     their stripes (and npucc's summary prints the plan); mlpt_ic_qdq (a residual block right after its first convolution) keeps
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
q8=(--tolerance-steps 0 --interp-check on)
# name|model folder|flags
runs=("tinycnn_int8|$src/models/tinycnn_int8|--patches always"
      "tinycnn_int8_io_int8|$src/models/tinycnn_int8|--patches always --io int8"
      "mobilenetv2|$src/models/mobilenetv2|--patches auto")
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
  elif ! grep -q '^  patches: .* stripes of ' "$tmp/$name-on.err"; then
    echo "FAIL: $name: npucc's summary does not name the plan"; failed=$((failed + 1)); continue
  elif [ "$on" -ge "$off" ] || [ "$stripes" -eq 0 ]; then
    echo "FAIL: $name: arena with patches $on, without $off, $stripes stripe calls"
    failed=$((failed + 1)); continue
  elif { [ "$name" = mlpt_vww_qdq ] || [ "$name" = mobilenetv2 ]; } && [ $((2 * on)) -gt "$off" ]; then
    echo "FAIL: $name: arena with patches $on is more than half of $off"
    failed=$((failed + 1)); continue
  fi
  cflags=("${q8[@]}")
  [ "$name" = mobilenetv2 ] && cflags=()
  bad=0
  for v in on off; do
    if [ "$v" = on ]; then vflags=("${on_flags[@]}"); else vflags=("${off_flags[@]}"); fi
    if ! "$npucc" check "$d" --target cpu "${vflags[@]}" "${cflags[@]}" \
         --keep "$tmp/$name-check-$v" > "$tmp/$name-check-$v.log" 2>&1; then
      echo "FAIL: $name: npucc check ${vflags[*]}"; tail -20 "$tmp/$name-check-$v.log"; bad=1
    fi
  done
  [ "$bad" -eq 0 ] || { failed=$((failed + 1)); continue; }
  # The program the check built is the one with the stripes, and it computes the same bytes.
  if [ "$stripes" -ne 0 ] && ! grep -rq ' patch 1/' "$tmp/$name-check-on" --include='*.c'; then
    echo "FAIL: $name: the checked program has no stripe"; failed=$((failed + 1)); continue
  fi
  outs=("$tmp/$name-check-off"/out_*.bin)
  if [ ! -f "${outs[0]}" ]; then
    echo "FAIL: $name: no out_*.bin in the kept check build"; failed=$((failed + 1)); continue
  fi
  for o in "${outs[@]}"; do
    if ! cmp -s "$o" "$tmp/$name-check-on/$(basename "$o")"; then
      echo "FAIL: $name: $(basename "$o") differs with and without patches"; bad=1
    fi
  done
  [ "$bad" -eq 0 ] || { failed=$((failed + 1)); continue; }
  echo "ok: $name: arena $on with patches, $off without; $stripes stripe calls; outputs identical"
done
[ "$failed" -eq 0 ] || { echo "patches: $failed failed"; exit 1; }
echo "patches: all passed"
