#!/usr/bin/env bash
# The compiler's C++ (libraries, tool, unit tests) must be warning-free under clang++ as well
# as gcc. Re-runs every C++ compile command of the CMake build with clang++ -fsyntax-only
# -Wall -Wextra -Werror (same defines and include paths), two at a time.
# Usage: clang_syntax.sh BUILD_DIR
set -uo pipefail
build="$1"
command -v clang++ > /dev/null || { echo "FAIL: clang++ not installed (scripts/setup-deps.sh)"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# One command per line: compiler, flags, -c SOURCE. Keep the C++ ones only (a compiler
# launcher such as ccache in front of the compiler is dropped).
ninja -C "$build" -t commands npucc npucc_unit_tests \
  | sed -E 's/^[^ ]*ccache //' \
  | grep -E '^[^ ]*(c\+\+|g\+\+|clang\+\+) .* -c [^ ]+\.cpp$' \
  | sed -E 's/^[^ ]+ /clang++ /; s/ -MD//; s/ -MT [^ ]+//; s/ -MF [^ ]+//; s/ -o [^ ]+ -c / -fsyntax-only -Wall -Wextra -Werror -c /' \
  | sort -u > "$tmp/cmds"
n="$(wc -l < "$tmp/cmds")"
[ "$n" -gt 20 ] || { echo "FAIL: only $n C++ compile commands found in $build"; exit 1; }
(cd "$build" && tr '\n' '\0' < "$tmp/cmds" | xargs -0 -P 2 -I{} sh -c '{} 2>&1 || echo "FAILED: {}"') \
  > "$tmp/log" 2>&1
if grep -q "FAILED:" "$tmp/log"; then
  grep -E "error:|FAILED:" "$tmp/log" | head -40
  echo "clang_syntax: $(grep -c FAILED: "$tmp/log") of $n files fail under clang++ -Werror"
  exit 1
fi
echo "clang_syntax: $n C++ files warning-free under $(clang++ --version | head -n1)"
