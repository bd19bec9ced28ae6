#!/usr/bin/env bash
# run_node_tests.sh: run `npucc check` on every ONNX backend node test listed in
# test/e2e/node_tests.txt (dirs relative to the node-test root), in parallel.
#
# usage: scripts/run_node_tests.sh [-j N] [--list FILE] [--node-dir DIR] [--log-dir DIR]
#                                  [--timeout SECS] NPUCC [extra `npucc check` flags...]
#   e.g. scripts/run_node_tests.sh build/tools/npucc/npucc
#        scripts/run_node_tests.sh -j 2 build/tools/npucc/npucc \
#            --cc "gcc -fsanitize=address,undefined" --tolerance 1e-5
# Prints one line per case (PASS/FAIL name [reason]) and a final summary line
#   node tests: N passed, M failed, K excluded
# where K counts the entries of test/e2e/node_tests_excluded.txt.  Exits 1 if any case
# failed (or none ran), 2 on bad usage.  Per-case logs go to --log-dir (default: a
# fresh directory under ${TMPDIR:-/tmp}).
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
jobs=2
list="$root/test/e2e/node_tests.txt"
excluded="$root/test/e2e/node_tests_excluded.txt"
node_dir=/usr/share/libonnx-testdata/data/node
log_dir=""
timeout_s=300

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    -j) jobs="$2"; shift 2 ;;
    -j*) jobs="${1#-j}"; shift ;;
    --list) list="$2"; shift 2 ;;
    --node-dir) node_dir="$2"; shift 2 ;;
    --log-dir) log_dir="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
npucc="$1"; shift
if [ ! -x "$npucc" ]; then
  echo "run_node_tests: npucc binary '$npucc' not found or not executable" >&2
  exit 2
fi
npucc="$(cd "$(dirname "$npucc")" && pwd)/$(basename "$npucc")"
if [ ! -d "$node_dir" ]; then
  echo "run_node_tests: node test dir $node_dir missing (apt-get install libonnx-testdata)" >&2
  exit 2
fi
[ -n "$log_dir" ] || log_dir="$(mktemp -d "${TMPDIR:-/tmp}/npucc-node-tests.XXXXXX")"
mkdir -p "$log_dir/status"
rm -f "$log_dir"/status/*

# Extra flags are handed to the workers NUL-separated so quoting survives.
flags_file="$log_dir/flags"
: > "$flags_file"
for f in "$@"; do printf '%s\0' "$f" >> "$flags_file"; done

# First error-looking line of a log; when it ends in ':' the next error line is appended.
first_reason() {
  awk '{ l = tolower($0) }
       !found && l ~ /error|fail|mismatch/ { r = $0; found = 1; if (r !~ /:[ \t]*$/) exit; next }
       found && l ~ /error/ { r = r " " $0; exit }
       END { print substr(r, 1, 200) }' "$1"
}

run_one() {
  local name="$1" flags=() f rc reason
  while IFS= read -r -d '' f; do flags+=("$f"); done < "$FLAGS_FILE"
  timeout "$TIMEOUT_S" "$NPUCC" check "$NODE_DIR/$name" "${flags[@]}" \
    --json "$LOG_DIR/$name.json" > "$LOG_DIR/$name.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    echo pass > "$LOG_DIR/status/$name"
    echo "PASS $name"
  else
    if [ $rc -eq 124 ]; then
      reason="timeout after ${TIMEOUT_S}s"
    else
      reason="exit $rc: $(first_reason "$LOG_DIR/$name.log")"
    fi
    echo fail > "$LOG_DIR/status/$name"
    echo "FAIL $name ($reason)"
  fi
}
export -f run_one first_reason
export NPUCC="$npucc" NODE_DIR="$node_dir" LOG_DIR="$log_dir" TIMEOUT_S="$timeout_s" \
  FLAGS_FILE="$flags_file"

grep -v -E '^[[:space:]]*(#|$)' "$list" | sed 's/[[:space:]]*$//' |
  xargs -d '\n' -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}

passed=$(grep -l -x pass "$log_dir"/status/* 2>/dev/null | wc -l)
failed=$(grep -l -x fail "$log_dir"/status/* 2>/dev/null | wc -l)
listed=$(grep -c -v -E '^[[:space:]]*(#|$)' "$list")
missing=$((listed - passed - failed))
failed=$((failed + missing))
nexcl=0
[ -f "$excluded" ] && nexcl=$(grep -c -v -E '^[[:space:]]*(#|$)' "$excluded")
echo "logs: $log_dir"
echo "node tests: $passed passed, $failed failed, $nexcl excluded"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
