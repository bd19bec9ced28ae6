#!/usr/bin/env bash
#===- run_lit.sh - Minimal lit-style runner for the textual IR tests -------===#
#
# Usage: test/lit/run_lit.sh NPUCC_BINARY [FILE_OR_DIR...]
#
# Runs every test/lit/**/*.ir, *.lir and *.test file (or the given files/folders):
# each `// RUN: <command>` line (or `# RUN:`; a trailing `\` continues it on the
# next RUN line) is run with `bash -o pipefail` after substituting
#   %npucc      the npucc binary (first argument)
#   %FileCheck  FileCheck (env FILECHECK, else llvm-14's, else FileCheck on PATH)
#   %s          the test file          %S  its folder
#   %t          a per-test temporary path
# `not CMD` succeeds when CMD fails without crashing (exit 1..127).
# Prints PASS/FAIL per file (the failing output is shown) and ends with
# `lit: N passed, M failed`; the exit status is non-zero when M > 0.
#
#===------------------------------------------------------------------------===#
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 NPUCC_BINARY [FILE_OR_DIR...]" >&2
  exit 2
fi
npucc=$1
shift
if [ ! -x "$npucc" ]; then
  echo "run_lit.sh: npucc binary '$npucc' is not executable" >&2
  exit 2
fi
npucc=$(cd "$(dirname "$npucc")" && pwd)/$(basename "$npucc")

filecheck=${FILECHECK:-}
if [ -z "$filecheck" ]; then
  for c in /usr/lib/llvm-14/bin/FileCheck "$(command -v FileCheck-14 || true)" \
           "$(command -v FileCheck || true)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then
      filecheck=$c
      break
    fi
  done
fi
if [ -z "$filecheck" ]; then
  echo "run_lit.sh: FileCheck not found (install llvm-14-tools or set FILECHECK)" >&2
  exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 0 ] && set -- "$here"
files=()
for arg in "$@"; do
  if [ -d "$arg" ]; then
    while IFS= read -r f; do files+=("$f"); done \
      < <(find "$arg" -type f \( -name '*.ir' -o -name '*.lir' -o -name '*.test' \) | LC_ALL=C sort)
  else
    files+=("$arg")
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/npucc-lit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Prepended to every RUN command.
prelude='not() {
  "$@"
  local rc=$?
  if [ $rc -eq 0 ]; then echo "not: command succeeded: $*" >&2; return 1; fi
  if [ $rc -ge 128 ]; then echo "not: command crashed (exit $rc): $*" >&2; return $rc; fi
  return 0
}'

subst() { # subst TEXT PATTERN REPLACEMENT (literal, all occurrences)
  local text=$1 pat=$2 rep=$3
  printf '%s' "${text//"$pat"/"$rep"}"
}

passed=0
failed=0
index=0
for f in "${files[@]}"; do
  index=$((index + 1))
  abs=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
  rel=${abs#"$here"/}
  runs=()
  pending=""
  while IFS= read -r line; do
    case "$line" in
      *"RUN:"*) ;;
      *) continue ;;
    esac
    cmd=${line#*RUN:}
    if [[ "$cmd" =~ \\[[:space:]]*$ ]]; then
      pending+="${cmd%\\*} "
      continue
    fi
    runs+=("$pending$cmd")
    pending=""
  done < <(grep -E '^[[:space:]]*(//|#)[[:space:]]*RUN:' "$abs")

  log="$tmp/log.$index"
  : > "$log"
  ok=1
  if [ ${#runs[@]} -eq 0 ]; then
    echo "no RUN: lines" > "$log"
    ok=0
  fi
  for cmd in "${runs[@]}"; do
    c=$cmd
    c=$(subst "$c" "%FileCheck" "$filecheck")
    c=$(subst "$c" "%npucc" "$npucc")
    c=$(subst "$c" "%s" "$abs")
    c=$(subst "$c" "%S" "$(dirname "$abs")")
    c=$(subst "$c" "%t" "$tmp/t$index")
    echo "\$ $c" >> "$log"
    if ! (cd "$tmp" && bash -o pipefail -c "$prelude
$c") >> "$log" 2>&1; then
      echo "(command failed)" >> "$log"
      ok=0
      break
    fi
  done
  if [ $ok -eq 1 ]; then
    echo "PASS: $rel"
    passed=$((passed + 1))
  else
    echo "FAIL: $rel"
    sed 's/^/    /' "$log"
    failed=$((failed + 1))
  fi
done

echo "lit: $passed passed, $failed failed"
[ $failed -eq 0 ]
