#!/usr/bin/env bash
# npu_bench.sh: NPU benchmark of npucc (docs/benchmarks.md, section "NPU").
#
# For each model and target: compile (`npucc MODEL -o OUT --target T`, wall time measured),
# run `npucc check` (generated C + host NPU simulator on the model's test data), and print
# one table row: NPU MAC fraction, simulated cycles, the compiler's estimate and its error,
# per-layer ideal / simulated, roofline / simulated, system-memory bytes / minimum, arena,
# scratchpad peak, stream / code bytes, compile and check seconds.
#
#   bench/npu_bench.sh                                   all models, npu-default and npu-small
#   bench/npu_bench.sh --all-targets                     also test/target/npu-{third,fourth,queue}.json
#   bench/npu_bench.sh --models mlpt_ic_qdq --layers mlpt_ic_qdq --targets npu-default
#   bench/npu_bench.sh --layers mlpt_vww_qdq --no-check  per-layer breakdown from the compile only
#
# Needs no network. Uses /usr/bin/python3 (bench/npu_bench.py; python3-onnx optional, for
# the independent MAC count). Results: the markdown table on stdout; per run a folder
# bench/results/npu-<UTC time>/ (git-ignored) with the logs, report.json and check JSON of
# every model/target, rows.jsonl, results.md and the per-layer tables.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
helper="$here/npu_bench.py"

usage() {
  cat <<EOF
usage: bench/npu_bench.sh [options]
  --npucc PATH        compiler (default: build/tools/npucc/npucc, else build-*/tools/npucc/npucc)
  --shared DIR        shared third-party models (default: ../shared/models of the checkout)
  --models a,b        subset of: $(default_models | tr '\n' ' ')
  --targets t1,t2     built-in names or JSON files (default: npu-default,npu-small)
  --all-targets       npu-default, npu-small and test/target/npu-third.json, npu-fourth.json,
                      npu-queue.json
  --quick             all models but mobilenetv2_12_int8 (224x224; several minutes on npu-small)
  --layers a,b|all    also print the per-layer breakdown of these models (and, without
                      --models, run only them; 'all': of every model run)
  --no-check          compile only: no simulator run (ratios then use the estimate, shown
                      as "(est x)")
  --timeout SEC       give up a check after SEC seconds (default: none)
  --out DIR           results folder (default: bench/results/npu-<UTC time>)
  --flags "F ..."     extra npucc flags for every compile and check (e.g. "--npu-handoff off"
                      for the layer-by-layer baseline)
  --keep-c            keep the generated C of every model/target (default: only report.json)
  --no-snapshot       run the compiler in place (default: copy it into the results folder
                      first, so a rebuild during the run cannot mix two compilers)
EOF
}

# name|where|extra npucc flags ({dir} = the model folder)
default_models() {
  cat <<'EOF'
mlpt_ad_qdq
mlpt_ic_qdq
mlpt_kws_qdq
mlpt_vww_qdq
torch_ptq_qdq
mobilenetv2_12_int8
mobilenetv2
tinycnn_int8
EOF
}
model_spec() {
  case "$1" in
    mlpt_ad_qdq|mlpt_ic_qdq|mlpt_kws_qdq|mlpt_vww_qdq|torch_ptq_qdq) echo "shared|" ;;
    mobilenetv2_12_int8) echo "shared|--shape input=1x3x224x224" ;;
    mobilenetv2) echo "project|--quantize int8 --calib {dir}/test_data_set_0" ;;
    tinycnn_int8) echo "project|" ;;
    *) return 1 ;;
  esac
}

args="$*"
npucc=""
shared="$(cd "$root/.." && pwd)/shared/models"
models=""
targets="npu-default,npu-small"
layers=""
check=1
timeout_s=""
out=""
snapshot=1
keep_c=0
extra=""
while [ $# -gt 0 ]; do
  case "$1" in
    --npucc) npucc="$2"; shift 2 ;;
    --shared) shared="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --all-targets)
      targets="npu-default,npu-small,$root/test/target/npu-third.json,$root/test/target/npu-fourth.json,$root/test/target/npu-queue.json"
      shift ;;
    --layers) layers="$2"; shift 2 ;;
    --quick) models="$(default_models | grep -vx mobilenetv2_12_int8 | paste -sd, -)"; shift ;;
    --no-check) check=0; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-snapshot) snapshot=0; shift ;;
    --keep-c) keep_c=1; shift ;;
    --flags) extra="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "npu_bench.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

if [ -z "$npucc" ]; then
  npucc="$root/build/tools/npucc/npucc"
  if [ ! -x "$npucc" ]; then
    for c in "$root"/build-*/tools/npucc/npucc; do
      [ -x "$c" ] && { npucc="$c"; break; }
    done
  fi
fi
if [ ! -x "$npucc" ]; then
  echo "npu_bench.sh: no compiler at $npucc (build it: cmake --build build --target npucc, or pass --npucc)" >&2
  exit 2
fi
if [ -z "$models" ]; then
  if [ -n "$layers" ] && [ "$layers" != all ]; then models="$layers"; else models="$(default_models | paste -sd, -)"; fi
fi
[ "$layers" = all ] && layers="$models"
IFS=, read -r -a model_list <<< "$models"
IFS=, read -r -a target_list <<< "$targets"
IFS=, read -r -a layer_list <<< "$layers"
for m in "${model_list[@]}"; do
  model_spec "$m" > /dev/null || { echo "npu_bench.sh: unknown model $m (known: $(default_models | paste -sd, -))" >&2; exit 2; }
done
[ -n "$out" ] || out="$here/results/npu-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out" || exit 2
out="$(cd "$out" && pwd)"
if [ "$snapshot" = 1 ]; then
  cp "$npucc" "$out/npucc" || exit 2
  npucc_run="$out/npucc"
else
  npucc_run="$npucc"
fi

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

rev="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  rev="$rev (+ uncommitted changes)"
fi
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
  echo "npucc: $npucc (revision $rev)"
  echo "command: bench/npu_bench.sh $args"
} > "$out/env.txt"
cat "$out/env.txt" >&2

rows="$out/rows.jsonl"
: > "$rows"

target_name() { local t="${1##*/}"; echo "${t%.json}"; }
target_mpc() {
  case "$1" in
    *.json) "$py" "$helper" mpc "$1" ;;
    *) "$npucc_run" --target list 2>/dev/null |
         awk -v t="$1" '$1 == t { split($2, a, "x"); print a[1] * a[2]; exit }' ;;
  esac
}
in_list() { local x="$1"; shift; for y in "$@"; do [ "$x" = "$y" ] && return 0; done; return 1; }

for m in "${model_list[@]}"; do
  spec="$(model_spec "$m")" || { echo "npu_bench.sh: unknown model $m" >&2; continue; }
  where="${spec%%|*}"
  if [ "$where" = shared ]; then dir="$shared/$m"; else dir="$root/models/$m"; fi
  if [ ! -f "$dir/model.onnx" ]; then
    echo "npu_bench.sh: $m: no $dir/model.onnx, skipped" >&2
    "$py" "$helper" row model="$m" target="-" status="MISSING" >> "$rows"
    continue
  fi
  flags="${spec#*|}"
  flags="${flags//\{dir\}/$dir}"
  shapes=()
  read -r -a fl <<< "$flags $extra"
  for ((i = 0; i < ${#fl[@]}; i++)); do
    [ "${fl[$i]}" = --shape ] && shapes+=("${fl[$((i + 1))]}")
  done
  onnx_macs="$("$py" "$helper" onnx-macs "$dir/model.onnx" "${shapes[@]}" 2>/dev/null)"
  for t in "${target_list[@]}"; do
    tn="$(target_name "$t")"
    w="$out/$m/$tn"
    rm -rf "$w/c" "$w/check.json" "$w/check.log" "$w/layers.md"  # nothing stale from an earlier run
    mkdir -p "$w"
    echo "== $m on $tn" >&2
    t0="$(now)"
    "$npucc_run" "$dir/model.onnx" -o "$w/c" --target "$t" "${fl[@]}" > "$w/compile.log" 2>&1
    crc=$?
    compile_s="$(since "$t0")"
    status=COMPILED
    check_s=""
    if [ $crc -ne 0 ]; then
      status=COMPILE-ERROR
    elif [ $check = 1 ]; then
      pre=()
      [ -n "$timeout_s" ] && pre=(timeout "$timeout_s")
      t0="$(now)"
      "${pre[@]}" "$npucc_run" check "$dir" --target "$t" "${fl[@]}" --json "$w/check.json" \
        > "$w/check.log" 2>&1
      krc=$?
      check_s="$(since "$t0")"
      if [ $krc = 124 ] && [ -n "$timeout_s" ]; then status=TIMEOUT
      elif [ $krc = 0 ]; then status=PASS
      elif grep -q ': FAIL$' "$w/check.log"; then status=FAIL
      else status=CHECK-ERROR; fi
    fi
    "$py" "$helper" row model="$m" target="$tn" status="$status" compile_s="$compile_s" \
      ${check_s:+check_s=$check_s} ${onnx_macs:+onnx_macs=$onnx_macs} \
      report="$w/c/report.json" check_json="$w/check.json" \
      compile_log="$w/compile.log" check_log="$w/check.log" >> "$rows"
    tail -n 1 "$rows" | "$py" -c 'import json,sys; r=json.loads(sys.stdin.read());
print("   %s  compile %.2f s%s  sim %s  estimate %s  ideal/sim %s%s" % (r["status"], r["compile_s"],
  ("  check %.1f s" % r["check_s"]) if r.get("check_s") is not None else "",
  r.get("sim_cycles", "-"), r.get("estimate", "-"),
  ("%.3f" % r["ideal_ratio"]) if r.get("ideal_ratio") is not None else "-",
  ("\n   " + r["message"]) if r.get("message") else ""))' >&2
    if in_list "$m" "${layer_list[@]}" && [ -f "$w/c/report.json" ]; then
      {
        echo "### $m on $tn"
        echo
        "$py" "$helper" layers "$w/c/report.json" "$( [ -f "$w/check.json" ] && echo "$w/check.json" || echo -)" \
          "$(target_mpc "$t")"
        echo
      } > "$w/layers.md"
    fi
    if [ "$keep_c" = 0 ] && [ -d "$w/c" ]; then
      find "$w/c" -type f ! -name report.json -delete
    fi
  done
done

{
  "$py" "$helper" table "$rows"
  echo
  sed 's/^/    /' "$out/env.txt"
} > "$out/results.md"
cat "$out/results.md"
for m in "${layer_list[@]}"; do
  for t in "${target_list[@]}"; do
    f="$out/$m/$(target_name "$t")/layers.md"
    [ -f "$f" ] && { echo; cat "$f"; }
  done
done | tee "$out/layers.md"
[ "$snapshot" = 1 ] && rm -f "$out/npucc"
echo "(results in $out)" >&2
# exit status: 1 when a model is missing, or a model/target did not compile or did not pass
# its check
if grep -q '"status": "\(COMPILE-ERROR\|FAIL\|CHECK-ERROR\|TIMEOUT\|MISSING\)"' "$rows"; then exit 1; fi
exit 0
