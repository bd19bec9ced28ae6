#!/usr/bin/env bash
# mutate.sh: do the tests bite? Applies small source mutations one at a time, rebuilds
# incrementally, runs the fast test tiers and reports which mutations were killed.
#
# usage: scripts/mutate.sh [--list FILE] [--build DIR] [--timeout SEC] [--only N,M,...]
#                          [--tiers LIST] [--all-tiers] [--log-dir DIR] [--check]
#   --list FILE     mutation list (default scripts/mutations.txt), one mutation a line,
#                   five TAB-separated fields:
#                     FILE  TIERS  ORIGINAL  REPLACEMENT  DESCRIPTION
#                   FILE is relative to the repository; ORIGINAL must occur exactly once
#                   in it (taken literally, no escapes); TIERS is "all" or a comma list of
#                   unit[:GTEST_FILTER], lit, cli, firmware, run in that order. Lines
#                   starting with # and blank lines are ignored.
#   --build DIR     an existing build tree of this checkout (default build/)
#   --timeout SEC   time limit of each tier run (default 600); a tier that times out
#                   counts as killing the mutation (reported as "killed (timeout)")
#   --only N,M      run only these mutations (1-based line numbers among the mutations)
#   --tiers LIST    override every mutation's TIERS
#   --all-tiers     run every tier even after one has failed (default: stop at the first)
#   --log-dir DIR   build and tier logs per mutation (default: a new temp dir)
#   --check         only validate the list (every ORIGINAL found exactly once)
# A mutation that does not compile is "stillborn" and left out of the score. The source
# file is copied aside before the change and copied back after each mutation (and on
# exit or interrupt), so the tree is never left mutated; no git stash, no checkout. At
# the end the restored tree is rebuilt. Prints one line per mutation and
#   mutation score: K killed of N (P%), S survived, B stillborn
# Exits 0 when nothing survived, 1 otherwise, 2 on bad usage or a bad list.
# Do not edit or build the checkout while it runs: it rebuilds the same tree.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
list="$here/mutations.txt"
build="$root/build"
tier_timeout=600
only=""
tiers_override=""
all_tiers=0
log_dir=""
check_only=0
PY=/usr/bin/python3

usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --list) list="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --timeout) tier_timeout="$2"; shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    --tiers) tiers_override="$2"; shift 2 ;;
    --all-tiers) all_tiers=1; shift ;;
    --log-dir) log_dir="$2"; shift 2 ;;
    --check) check_only=1; shift ;;
    -h|--help) usage ;;
    *) echo "mutate.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -f "$list" ] || { echo "mutate.sh: no mutation list '$list'" >&2; exit 2; }
build="$(cd "$build" 2>/dev/null && pwd)" || { echo "mutate.sh: no build dir" >&2; exit 2; }
[ -f "$build/CMakeCache.txt" ] || { echo "mutate.sh: '$build' is not a build tree" >&2; exit 2; }
[ -n "$log_dir" ] || log_dir="$(mktemp -d "${TMPDIR:-/tmp}/npucc-mutate.XXXXXX")"
mkdir -p "$log_dir"
work="$(mktemp -d "${TMPDIR:-/tmp}/npucc-mutate-orig.XXXXXX")"

# The mutations as NUL-free records: index, file, tiers, original, replacement, description.
"$PY" - "$list" "$root" > "$work/list.tsv" <<'PY' || exit 2
import sys
lst, root = sys.argv[1:3]
bad = 0
n = 0
for lineno, line in enumerate(open(lst, encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if not line.strip() or line.lstrip().startswith("#"):
        continue
    f = line.split("\t")
    if len(f) != 5:
        print("%s:%d: expected 5 TAB-separated fields, got %d" % (lst, lineno, len(f)), file=sys.stderr)
        bad = 1
        continue
    n += 1
    path, tiers, orig, repl, desc = f
    try:
        text = open(root + "/" + path, encoding="utf-8").read()
    except OSError as e:
        print("%s:%d: %s" % (lst, lineno, e), file=sys.stderr)
        bad = 1
        continue
    c = text.count(orig)
    if c != 1 or orig == repl:
        print("%s:%d: original text found %d times in %s (must be exactly once, and differ "
              "from the replacement)" % (lst, lineno, c, path), file=sys.stderr)
        bad = 1
        continue
    print("\t".join([str(n), path, tiers, orig, repl, desc]))
sys.exit(bad)
PY

if [ "$check_only" -eq 1 ]; then
  echo "mutate.sh: $(wc -l < "$work/list.tsv") mutations, all valid"
  rm -rf "$work"
  exit 0
fi

current=""
restore() {
  if [ -n "$current" ] && [ -f "$work/orig" ]; then
    cp "$work/orig" "$root/$current"
    current=""
  fi
}
trap 'restore; rm -rf "$work"' EXIT
trap 'restore; exit 130' INT TERM

apply() { # FILE ORIGINAL REPLACEMENT
  "$PY" - "$root/$1" "$2" "$3" <<'PY'
import sys
p, o, r = sys.argv[1:4]
s = open(p, encoding="utf-8").read()
assert s.count(o) == 1
open(p, "w", encoding="utf-8").write(s.replace(o, r))
PY
}

# run_tier TIER LOG: 0 passed, 1 failed, 124 timed out
run_tier() {
  local t="$1" log="$2" name filter
  name="${t%%:*}"
  case "$name" in
    unit)
      filter="*"
      [ "$name" != "$t" ] && filter="${t#unit:}"
      timeout "$tier_timeout" "$build/test/npucc_unit_tests" --gtest_filter="$filter" \
        --gtest_brief=1 > "$log" 2>&1 ;;
    lit|cli|firmware)
      (cd "$build" && timeout "$tier_timeout" ctest -R "^$name\$" --output-on-failure) \
        > "$log" 2>&1 ;;
    *) echo "unknown tier '$t'" > "$log"; return 1 ;;
  esac
  local rc=$?
  [ $rc -eq 124 ] && return 124
  [ $rc -eq 0 ] && return 0
  return 1
}

killed=0
survived=0
stillborn=0
survivors=()
: > "$log_dir/results.tsv"
# The list is read on fd 3: the build and the tiers must not eat it from stdin.
while IFS=$'\t' read -r -u 3 idx file tiers orig repl desc; do
  if [ -n "$only" ] && [[ "$only" != *",$idx,"* ]]; then
    continue
  fi
  [ -n "$tiers_override" ] && tiers="$tiers_override"
  [ "$tiers" = all ] && tiers="unit,lit,cli,firmware"
  cp "$root/$file" "$work/orig"
  current="$file"
  apply "$file" "$orig" "$repl" || { restore; echo "mutate.sh: cannot apply #$idx" >&2; exit 2; }
  start=$SECONDS
  if ! timeout 1800 cmake --build "$build" -j 2 > "$log_dir/$idx.build.log" 2>&1; then
    restore
    stillborn=$((stillborn + 1))
    printf '#%-3s stillborn (does not build)          %s: %s\n' "$idx" "$file" "$desc"
    printf '%s\tstillborn\t-\t%s\t%s\n' "$idx" "$file" "$desc" >> "$log_dir/results.tsv"
    continue
  fi
  by=""
  IFS=',' read -r -a tl <<< "$tiers"
  for t in "${tl[@]}"; do
    run_tier "$t" "$log_dir/$idx.${t%%:*}.log"
    rc=$?
    if [ $rc -ne 0 ]; then
      label="${t%%:*}"
      [ $rc -eq 124 ] && label="$label (timeout)"
      by="${by:+$by, }$label"
      [ "$all_tiers" -eq 1 ] || break
    fi
  done
  restore
  secs=$((SECONDS - start))
  if [ -n "$by" ]; then
    killed=$((killed + 1))
    printf '#%-3s killed by %-24s %4ss  %s: %s\n' "$idx" "$by" "$secs" "$file" "$desc"
    printf '%s\tkilled\t%s\t%s\t%s\n' "$idx" "$by" "$file" "$desc" >> "$log_dir/results.tsv"
  else
    survived=$((survived + 1))
    survivors+=("#$idx $file: $desc")
    printf '#%-3s SURVIVED (%s)%*s %4ss  %s: %s\n' "$idx" "$tiers" 1 "" "$secs" "$file" "$desc"
    printf '%s\tsurvived\t%s\t%s\t%s\n' "$idx" "$tiers" "$file" "$desc" >> "$log_dir/results.tsv"
  fi
done 3< "$work/list.tsv"

echo "rebuilding the restored tree"
cmake --build "$build" -j 2 > "$log_dir/restore.build.log" 2>&1 ||
  echo "mutate.sh: warning: the restored tree does not build (see $log_dir/restore.build.log)"
n=$((killed + survived))
pct=0
[ $n -gt 0 ] && pct=$((100 * killed / n))
echo "mutation score: $killed killed of $n ($pct%), $survived survived, $stillborn stillborn"
for s in "${survivors[@]}"; do echo "  survivor: $s"; done
echo "logs: $log_dir"
[ "$survived" -eq 0 ]
