#!/usr/bin/env bash
# End-to-end checks of the npucc command line: bad input gives a clear one-line error, a
# non-zero exit and leaves OUT/ untouched (every model in test/e2e/bad/ with its .expect
# pattern, under a 1 GB memory limit; endless files; check tolerances, shapes and --cflags;
# --emit-test data; -o; opt --target; flag values: the classes of issue 11); output is
# byte-identical across runs; the arena size printed equals the one the generated code
# declares and, on the models where greedy by size missed it, the planner's lower bound.
# Also run with the sanitized npucc (NPUCC_SANITIZED=1, docs/fuzzing.md).
# Usage: cli_test.sh NPUCC SOURCE_DIR
set -uo pipefail
npucc="$1"
src="$2"
. "$src/test/e2e/ci_skip.sh"
model="$src/models/tinycnn/model.onnx"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }

# expect_error NAME PATTERN CMD...: non-zero exit, stderr matches PATTERN, OUT/ untouched.
expect_error() {
  local name="$1" pattern="$2"
  shift 2
  # OUT/ as an earlier npucc run leaves it (its manifest lists every file), so that npucc
  # would replace it if the command succeeded.
  rm -rf "$tmp/out" && mkdir -p "$tmp/out" && echo keep > "$tmp/out/sentinel"
  printf '# written by npucc: it replaces this folder only while it holds just these files\nsentinel\n' \
    > "$tmp/out/.npucc-files"
  if "$@" > "$tmp/stdout" 2> "$tmp/stderr"; then
    bad "$name: exit code 0"
    return
  fi
  if ! grep -Eq -- "$pattern" "$tmp/stderr"; then
    bad "$name: stderr does not match /$pattern/:"
    sed 's/^/    /' "$tmp/stderr"
    return
  fi
  if [ "$(ls "$tmp/out")" != "sentinel" ] || [ "$(cat "$tmp/out/sentinel")" != keep ]; then
    bad "$name: OUT/ was modified"
    return
  fi
  ok "$name ($(head -n1 "$tmp/stderr"))"
}

printf 'this is not an onnx model\n\x01\x02\x03' > "$tmp/garbage.onnx"
head -c 300 "$model" > "$tmp/truncated.onnx"
expect_error "missing file" "missing\.onnx.*(not found|cannot open|No such)" \
  "$npucc" "$tmp/missing.onnx" -o "$tmp/out"
expect_error "garbage file" "garbage\.onnx.*error" "$npucc" "$tmp/garbage.onnx" -o "$tmp/out"
expect_error "truncated file" "truncated\.onnx.*error" "$npucc" "$tmp/truncated.onnx" -o "$tmp/out"
expect_error "bad --shape" "--shape|shape" "$npucc" "$model" -o "$tmp/out" --shape "input=1xZ"
expect_error "bad --prefix" "prefix" "$npucc" "$model" -o "$tmp/out" --prefix "9bad-name"
expect_error "unknown pass" "unknown pass.*no-such-pass" "$npucc" "$model" -o "$tmp/out" \
  --passes no-such-pass
# Each bad model under a 1 GB address-space limit: a size must be checked against the data
# before anything is allocated (init_short_data.onnx declares 1.6 GB and holds 8 bytes).
# Under AddressSanitizer (NPUCC_SANITIZED=1, test/fuzz/run_sanitized.sh) ASAN_OPTIONS'
# max_allocation_size_mb takes the limit's place: ASan's shadow memory needs the address space.
limited() { (if [ -z "${NPUCC_SANITIZED:-}" ]; then ulimit -v 1000000; fi; exec "$@"); }
for f in "$src"/test/e2e/bad/*.onnx; do
  [ -e "$f" ] || continue
  expected="$(cat "${f%.onnx}.expect" 2>/dev/null || echo 'error')"
  expect_error "bad model $(basename "$f")" "$expected" limited "$npucc" "$f" -o "$tmp/out"
done

# Determinism: two compilations give byte-identical folders.
"$npucc" "$model" -o "$tmp/a" > "$tmp/a.log" 2>&1 && "$npucc" "$model" -o "$tmp/b" > /dev/null 2>&1
if diff -r "$tmp/a" "$tmp/b" > /dev/null; then ok "byte-identical output"; else bad "output differs between runs"; fi

# Re-compiling over an OUT/ that npucc wrote replaces it wholly (its manifest lists what npucc
# wrote; a file deleted since is no obstacle); a folder npucc did not write, or one holding a
# file it did not write, is never replaced: before the manifest, `-o MODEL_DIR` deleted the
# model and its test data, exit 0.
rm "$tmp/a/model_weights.c"
if "$npucc" "$model" -o "$tmp/a" > /dev/null 2>&1 && [ -f "$tmp/a/model_weights.c" ] \
   && diff -r "$tmp/a" "$tmp/b" > /dev/null; then
  ok "OUT/ written by npucc replaced"
else
  bad "OUT/ written by npucc not replaced"
fi
refused_folder() { # NAME DIR PATTERN: -o DIR fails naming PATTERN and DIR keeps every file
  local before after
  before="$(cd "$2" && find . | LC_ALL=C sort | xargs -d '\n' md5sum 2>/dev/null)"
  if "$npucc" "$model" -o "$2" > /dev/null 2> "$tmp/refused.err"; then
    bad "$1: exit code 0"
  elif ! grep -Eq -- "$3" "$tmp/refused.err"; then
    bad "$1: stderr does not match /$3/: $(cat "$tmp/refused.err")"
  else
    after="$(cd "$2" && find . | LC_ALL=C sort | xargs -d '\n' md5sum 2>/dev/null)"
    if [ "$before" = "$after" ]; then ok "$1 ($(head -n1 "$tmp/refused.err"))"; else bad "$1: folder changed"; fi
  fi
}
echo mine > "$tmp/a/stale.txt"
refused_folder "-o over npucc's OUT/ with a user's file" "$tmp/a" "refusing to replace.*'stale\.txt'"
rm "$tmp/a/stale.txt"
mkdir -p "$tmp/mdir/test_data_set_0" && cp "$model" "$tmp/mdir/model.onnx" \
  && echo data > "$tmp/mdir/test_data_set_0/input_0.pb"
refused_folder "-o the model's own folder" "$tmp/mdir" "refusing to replace.*npucc did not write it"
( cd "$tmp/mdir" && "$npucc" model.onnx -o . > /dev/null 2> "$tmp/refused.err" )
if [ $? -ne 0 ] && [ -f "$tmp/mdir/model.onnx" ] && [ -f "$tmp/mdir/test_data_set_0/input_0.pb" ]; then
  ok "-o . inside the model's folder refused"
else
  bad "-o . inside the model's folder"
fi
ln -s /etc "$tmp/a/link"
refused_folder "-o over npucc's OUT/ holding a symbolic link" "$tmp/a" "refusing to replace.*'link'"
rm "$tmp/a/link"

# The arena size printed equals the one the generated code declares.
printed="$(sed -n 's/.*arena: \([0-9]*\) bytes.*/\1/p' "$tmp/a.log" | head -n1)"
declared="$(sed -n 's/^#define MODEL_ARENA_BYTES \([0-9]*\).*/\1/p' "$tmp/a/model.h" | head -n1)"
if [ -n "$printed" ] && [ "$printed" = "$declared" ]; then ok "arena printed = declared ($printed)"; else bad "arena printed '$printed' vs declared '$declared'"; fi

# The arena equals the planner's lower bound (most bytes live at once, printed in model.c) on
# the models where greedy by size alone stayed above it (docs/npu.md, "Memory"): tinycnn_int8,
# and, when the shared model folder exists, mlpt_vww_qdq, ali_ic_f32 and ali_kws_f32.
shared="$src/../shared/models"
arena_models=("$src/models/tinycnn_int8")
for m in mlpt_vww_qdq ali_ic_f32 ali_kws_f32; do
  if [ -f "$shared/$m/model.onnx" ]; then
    arena_models+=("$shared/$m")
  else
    ci_skip "arena bound of $m (no $shared/$m)" || failed=$((failed + 1))
  fi
done
for m in "${arena_models[@]}"; do
  rm -rf "$tmp/arena"
  "$npucc" "$m/model.onnx" -o "$tmp/arena" --target cpu > /dev/null 2>&1
  line="$(grep -h 'Activations: ' "$tmp/arena/model.c" 2>/dev/null | head -n1)"
  size="$(echo "$line" | sed -n 's/.*Activations: \([0-9]*\) bytes (lower bound \([0-9]*\),.*/\1/p')"
  bound="$(echo "$line" | sed -n 's/.*Activations: \([0-9]*\) bytes (lower bound \([0-9]*\),.*/\2/p')"
  if [ -n "$size" ] && [ "$size" = "$bound" ]; then ok "arena = lower bound on $(basename "$m") ($size)"; else bad "arena on $(basename "$m"): '$line'"; fi
done

# model.h tells firmware builds to drop unused kernels and tables (issue 12).
if grep -q -- '-ffunction-sections$' "$tmp/a/model.h" && grep -q -- '^ \* -fdata-sections and link with -Wl,--gc-sections' "$tmp/a/model.h"; then
  ok "model.h asks for -ffunction-sections -fdata-sections and -Wl,--gc-sections"
else
  bad "model.h lacks the -ffunction-sections -fdata-sections / -Wl,--gc-sections guidance"
fi

# The generated C is warning-free under gcc and clang in strict C99.
for cc in gcc clang; do
  if ! command -v "$cc" > /dev/null; then
    ci_skip "$cc not installed: strict C99 not checked with it" || failed=$((failed + 1))
    continue
  fi
  if (cd "$tmp/a" && "$cc" -std=c99 -Wall -Wextra -Werror -pedantic -O2 -c ./*.c) > "$tmp/cc.log" 2>&1; then
    ok "generated C compiles with $cc -std=c99 -Wall -Wextra -Werror -pedantic"
  else
    bad "generated C does not compile cleanly with $cc:"; sed 's/^/    /' "$tmp/cc.log" | head -20
  fi
done

# --emit-test writes a self-contained program that passes.
if "$npucc" "$model" -o "$tmp/t" --emit-test --data "$src/models/tinycnn/test_data_set_0" > /dev/null 2>&1 \
   && (cd "$tmp/t" && cc -std=c99 -O2 ./*.c -o test -lm && ./test) > "$tmp/t.log" 2>&1; then
  ok "--emit-test --data program passes"
else
  bad "--emit-test --data:"; sed 's/^/    /' "$tmp/t.log" | tail -5
fi
if "$npucc" "$model" -o "$tmp/t2" --emit-test > /dev/null 2>&1 \
   && (cd "$tmp/t2" && cc -std=c99 -O2 ./*.c -o test -lm && ./test) > "$tmp/t2.log" 2>&1; then
  ok "--emit-test (reference interpreter) program passes"
else
  bad "--emit-test (interpreter):"; sed 's/^/    /' "$tmp/t2.log" | tail -5
fi

# --target: built-ins listed; each target's register map is written into OUT/ and compiles on
# its own in strict C99; a JSON file (the test-only third NPU) works; bad targets fail cleanly.
list="$("$npucc" --target list 2>&1)"
if grep -q "^npu-default " <<< "$list" && grep -q "^npu-small " <<< "$list"; then
  ok "--target list names the built-ins"
else
  bad "--target list:"; sed 's/^/    /' <<< "$list"
fi
for t in npu-default npu-small "$src/test/target/npu-third.json" "$src/test/target/npu-fourth.json" \
         "$src/test/target/npu-queue.json"; do
  id="$(basename "$t" .json | tr '-' '_')"
  rm -rf "$tmp/tg"
  if "$npucc" "$model" -o "$tmp/tg" --target "$t" > "$tmp/tg.log" 2>&1 && [ -f "$tmp/tg/${id}_regs.h" ] \
     && grep -q "define ${id^^}_" "$tmp/tg/${id}_regs.h" \
     && gcc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c "$tmp/tg/${id}_regs.h" > "$tmp/cc.log" 2>&1; then
    ok "--target $(basename "$t"): OUT/${id}_regs.h written, strict C99"
  else
    bad "--target $t:"; cat "$tmp/tg.log" "$tmp/cc.log" 2>/dev/null | sed 's/^/    /' | head -10
  fi
done
expect_error "unknown --target" "target description .nope.: not a readable file nor a built-in target" \
  "$npucc" "$model" -o "$tmp/out" --target nope
expect_error "bad --target file" "bad_field_wider\.json.*/registers/3/fields/1.*wider" \
  "$npucc" "$model" -o "$tmp/out" --target "$src/test/target/bad_field_wider.json"

# The compile-time memory fit (docs/output.md, "Memory fit"): over --ram or --flash the
# compile fails with the breakdown and OUT/ stays as it was; within them it writes report.json's
# "memory" for the --mcu asked.
int8="$src/models/tinycnn_int8/model.onnx"
expect_error "--ram below the arena" "tinycnn_int8/model\.onnx: error: the program does not fit: needs [0-9]+ bytes of RAM, [0-9]+ more than --ram 8192" \
  "$npucc" "$int8" -o "$tmp/out" --ram 8K
if grep -Eq "^ +[0-9]+  arena$" "$tmp/stderr" && grep -q "stack (deepest kernel call path" "$tmp/stderr"; then
  ok "--ram refusal lists the arena and the stack"
else bad "--ram refusal without the breakdown:"; sed 's/^/    /' "$tmp/stderr"; fi
expect_error "--flash below the program" "needs [0-9]+ bytes of flash, [0-9]+ more than --flash 4096" \
  "$npucc" "$int8" -o "$tmp/out" --flash 0x1000 --target cpu --mcu rv32-O2
grep -q "^memory on rv32-O2:" "$tmp/stderr" && grep -Eq "runtime code \([0-9]+ functions\) \(estimate\)" "$tmp/stderr" \
  && ok "--flash refusal names the --mcu and the runtime code" || bad "--flash refusal: $(cat "$tmp/stderr")"
expect_error "bad --ram" "^npucc: error: --ram '8KB': expected a size in bytes" "$npucc" "$int8" -o "$tmp/out" --ram 8KB
expect_error "unknown --mcu" "--mcu" "$npucc" "$int8" -o "$tmp/out" --mcu cortex-m7
rm -rf "$tmp/fit"
if "$npucc" "$int8" -o "$tmp/fit" --flash 1M --ram 64K --mcu rv32 > "$tmp/fit.log" 2>&1 \
  && /usr/bin/python3 -c "import json,sys; m = json.load(open(sys.argv[1]))['memory']; sys.exit(not (m['mcu'] == 'rv32' and 0 < m['ram_bytes'] <= 65536 and m['ram'][0]['what'] == 'arena'))" "$tmp/fit/report.json" \
  && grep -q "^memory on rv32: flash about" "$tmp/fit.log"; then
  ok "--flash/--ram within the limits: report.json memory, summary line"
else bad "--flash/--ram within the limits:"; sed 's/^/    /' "$tmp/fit.log"; fi

# --memory-map: a region that overflows, or (NPU program) an arena/NPU-constants region outside
# the description's system-memory windows, is refused with the breakdown per region and OUT/
# untouched; a bad map names its JSON path; a fitting map writes OUT/<prefix>_sections.ld and
# the section macros default to its sections.
mm() { printf '{"regions": [{"name": "FLASH", "origin": "%s", "length": "%s"}, {"name": "SRAM", "origin": "0x20000000", "length": "%s"}], "place": {"code": "FLASH", "const": "FLASH", "arena": "SRAM", "data": "SRAM", "stack": "SRAM"}}' "$1" "$2" "$3" > "$tmp/$4.json"; }
mm 0x08000000 1M 8K small
expect_error "--memory-map: SRAM overflows" "does not fit the memory map .*small\.json: region 'SRAM' \(8192 bytes\) would hold [0-9]+, [0-9]+ more" \
  "$npucc" "$int8" -o "$tmp/out" --memory-map "$tmp/small.json"
grep -Eq "^  SRAM \(0x20000000, 8192 bytes\): [0-9]+ bytes$" "$tmp/stderr" && grep -Eq "^ +16384  arena$" "$tmp/stderr" \
  && ok "--memory-map refusal: breakdown per region" || bad "--memory-map refusal: $(cat "$tmp/stderr")"
mm 0x00000000 1M 1M lowflash
expect_error "--memory-map: NPU constants out of the NPU's reach" "region 'FLASH' \(0x0\.\.0xfffff\) holding the NPU constants is outside every system-memory window of 'npu-default'" \
  "$npucc" "$int8" -o "$tmp/out" --memory-map "$tmp/lowflash.json"
echo '{"regions": [{"name": "A", "origin": 0, "length": 100}], "place": {"code": "B"}}' > "$tmp/badmap.json"
expect_error "--memory-map: bad map" "badmap\.json: error: /place/code: 'B' is not a region of /regions" \
  "$npucc" "$int8" -o "$tmp/out" --memory-map "$tmp/badmap.json"
mm 0x08000000 1M 1M fits
rm -rf "$tmp/mmout"
if "$npucc" "$int8" -o "$tmp/mmout" --memory-map "$tmp/fits.json" > "$tmp/mm.log" 2>&1 \
  && grep -q "^  KEEP(\*(.npucc.model.npu_const))$" "$tmp/mmout/model_sections.ld" \
  && grep -q '^#define NPUCC_NPU_CONST_ATTR __attribute__((section(".npucc.model.npu_const")))$' "$tmp/mmout/model_weights.c" \
  && grep -q '^#define NPUCC_ARENA_ATTR __attribute__((section(".npucc.model.arena")))$' "$tmp/mmout/model.c" \
  && grep -q "model_sections.ld" "$tmp/mmout/.npucc-files"; then
  ok "--memory-map that fits: OUT/model_sections.ld, section macros default to its sections"
else bad "--memory-map that fits:"; cat "$tmp/mm.log" | sed 's/^/    /' | tail -5; fi

# Issue 11 (hardened against bad input): each class gives a one-line diagnostic naming the
# file, a non-zero exit, and OUT/ untouched.
py=/usr/bin/python3
# A copy of tinycnn whose golden output is wrong by 1003, and one whose golden output has the
# right element count in another shape ([10, 1] instead of [1, 10]).
cp -r "$src/models/tinycnn" "$tmp/wrong" && cp -r "$src/models/tinycnn" "$tmp/reshaped"
"$py" - "$tmp" <<'PYEOF'
import sys, onnx, onnx.numpy_helper as nh
d = sys.argv[1]
for name, fix in (("wrong", lambda a: a + 1003), ("reshaped", lambda a: a.reshape(10, 1))):
    p = "%s/%s/test_data_set_0/output_0.pb" % (d, name)
    t = onnx.TensorProto()
    t.ParseFromString(open(p, "rb").read())
    open(p, "wb").write(nh.from_array(fix(nh.to_array(t)), t.name).SerializeToString())
PYEOF
expect_error "check --tolerance nan" "^npucc: error: --tolerance nan: must be a finite number >= 0" \
  "$npucc" check "$tmp/wrong" --tolerance nan
expect_error "check --tolerance -1" "^npucc: error: --tolerance -1: must be a finite number >= 0" \
  "$npucc" check "$tmp/wrong" --tolerance -1
expect_error "check --tolerance-steps nan" "--tolerance-steps nan: must be a finite" \
  "$npucc" check "$tmp/wrong" --tolerance-steps nan
expect_error "check: golden output of another shape" "FAIL \(type/shape\)" \
  sh -c '"$0" check "$1" 1>&2' "$npucc" "$tmp/reshaped"
expect_error "check: wrong golden output" "^wrong: FAIL" sh -c '"$0" check "$1" 1>&2' "$npucc" "$tmp/wrong"
# --cflags are split at whitespace without a shell: a lone quote is just an argument.
if "$npucc" check "$src/models/tinycnn" --cflags '-O1 -DUNUSED="' > "$tmp/cf.log" 2>&1 \
   && grep -q "tinycnn: PASS" "$tmp/cf.log"; then ok "check --cflags '-DUNUSED=\"' (no shell)"; else bad "check --cflags with a quote:"; sed 's/^/    /' "$tmp/cf.log" | head -5; fi
expect_error "check --cflags '; touch' runs no shell" "building the generated C failed" \
  "$npucc" check "$src/models/tinycnn" --cflags "-O1 ; touch $tmp/out/pwned"
# npucc check binds dynamic dims from the first data set (x: [N,3,4], data 2x3x4).
if "$npucc" check "$src/test/e2e/bad/canon/shape_chain_reshape" > "$tmp/dyn.log" 2>&1 \
   && grep -q "note: input 'x' \[N,3,4\] bound to 2x3x4 from the first data set" "$tmp/dyn.log" \
   && grep -q "shape_chain_reshape: PASS" "$tmp/dyn.log"; then ok "check binds dynamic dims from the data set"
else bad "check with dynamic dims:"; sed 's/^/    /' "$tmp/dyn.log" | head -5; fi
# Issue 13: check with NaN and infinity on either side. y = x / d with x = [2, 1, 0, -1],
# d = [1, 0, 0, 0] computes [2, inf, NaN, -inf]: the true golden output passes (NaN matches
# NaN, inf the same inf); each doctored golden output fails even with a huge tolerance.
"$py" - "$tmp/naninf" <<'PYEOF'
import os, sys, numpy as np, onnx, onnx.numpy_helper as nh
from onnx import helper, TensorProto
base = sys.argv[1]
g = helper.make_graph([helper.make_node("Div", ["x", "d"], ["y"])], "naninf",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    [nh.from_array(np.array([[1, 0, 0, 0]], np.float32), "d")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
x = np.array([[2, 1, 0, -1]], np.float32)
golden = {"ok": [2, np.inf, np.nan, -np.inf],
          "got_nan_ref_finite": [2, np.inf, 0, -np.inf],
          "got_finite_ref_nan": [np.nan, np.inf, np.nan, -np.inf],
          "got_inf_ref_minus_inf": [2, -np.inf, np.nan, -np.inf],
          "got_inf_ref_finite": [2, 1e30, np.nan, -np.inf],
          "got_finite_ref_inf": [np.inf, np.inf, np.nan, -np.inf]}
for name, y in golden.items():
    d = os.path.join(base, name, "test_data_set_0")
    os.makedirs(d)
    onnx.save(m, os.path.join(base, name, "model.onnx"))
    open(os.path.join(d, "input_0.pb"), "wb").write(nh.from_array(x, "x").SerializeToString())
    open(os.path.join(d, "output_0.pb"), "wb").write(
        nh.from_array(np.array([y], np.float32), "y").SerializeToString())
PYEOF
if "$npucc" check "$tmp/naninf/ok" > "$tmp/ni.log" 2>&1 && grep -q "^ok: PASS" "$tmp/ni.log"; then
  ok "check: NaN vs NaN and inf vs the same inf pass"
else bad "check with NaN/inf in both outputs:"; sed 's/^/    /' "$tmp/ni.log" | head -5; fi
for c in got_nan_ref_finite got_finite_ref_nan got_inf_ref_minus_inf got_inf_ref_finite got_finite_ref_inf; do
  expect_error "check must FAIL: $c" "^$c: FAIL" sh -c '"$0" check "$1" --tolerance 1e6 1>&2' \
    "$npucc" "$tmp/naninf/$c"
done
# Issue 13: the float packed GEMM's K-blocking (NPUCC_GEMM_KC = 256) end to end. A model with
# a Conv of K = 64*3*3 = 576, a strided Conv of K = 288 and a Gemm of K = 300
# (scripts/make_kblock_model.py; golden output from a float64 numpy convolution written there)
# must match within 1e-4, on the CPU and also as compiled for the default NPU target (float
# stays on the CPU kernels there).
if "$py" "$src/scripts/make_kblock_model.py" "$tmp/kblock" > "$tmp/kb.log" 2>&1 \
   && "$npucc" check "$tmp/kblock" --tolerance 1e-4 --target cpu >> "$tmp/kb.log" 2>&1 \
   && grep -q "^kblock: PASS" "$tmp/kb.log" \
   && "$npucc" check "$tmp/kblock" --tolerance 1e-4 > "$tmp/kb2.log" 2>&1 \
   && grep -q "^kblock: PASS" "$tmp/kb2.log"; then
  ok "check: Conv K=576/288 and Gemm K=300 (packed GEMM K-blocking) match a numpy reference"
else bad "check of the K > 256 model:"; cat "$tmp/kb.log" "$tmp/kb2.log" 2>/dev/null | sed 's/^/    /' | head -8; fi
# The NPU path end to end in a fast tier (mutation testing found that emitter bugs - a wait
# on the wrong engine, parameter state shared between engines - passed every fast tier):
# the bundled int8 model compiled for all five NPUs, run on their simulators (which fail a
# run on any race), bit-exact with the integer interpreter and within the golden tolerance.
# Built by gcc and clang with the strict flags, so check's own harness (npucc_check_main.c)
# must be warning-free too: it once called npucc_hal_set_wait_hook without its header, an
# error by default from GCC 14 (issue 23).
strict="-O1 -std=c99 -pedantic -Wall -Wextra -Werror -Werror=implicit-function-declaration"
for cc in gcc clang; do
  if ! command -v "$cc" > /dev/null; then
    ci_skip "$cc not installed: npucc check --cc $cc not run" || failed=$((failed + 1))
    continue
  fi
  for t in npu-default npu-small "$src/test/target/npu-third.json" \
           "$src/test/target/npu-fourth.json" "$src/test/target/npu-queue.json" cpu; do
    if "$npucc" check "$src/models/tinycnn_int8" --target "$t" --interp-check on --cc "$cc" \
         --cflags "$strict" > "$tmp/npu.log" 2>&1 && grep -q "^tinycnn_int8: PASS" "$tmp/npu.log"; then
      ok "check tinycnn_int8 on $(basename "$t" .json) (--cc $cc, strict flags)"
    else bad "check tinycnn_int8 --target $t --cc $cc --cflags '$strict':"; sed 's/^/    /' "$tmp/npu.log" | tail -8; fi
  done
done
# Issue 24: a partial output-channel block (70 channels in blocks of 16) and a layer placed
# at the scratchpad's top end (mirrored), on npu-default with 4096 bytes of scratchpad
# (test/lit/npu/blocks-mirror.test shows the loop IR): bit-exact with the interpreter and at
# 0 steps from the numpy golden output (test/lit/npu/Inputs/make_blocks_mirror.py).
sed 's/"size": 262144/"size": 4096/' "$src/runtime/targets/npu-default.json" > "$tmp/spm4k.json"
if "$npucc" check "$src/test/lit/npu/Inputs/blocks_mirror" --target "$tmp/spm4k.json" --interp-check on \
     --tolerance-steps 0 > "$tmp/bm.log" 2>&1 && grep -q "^blocks_mirror: PASS" "$tmp/bm.log"; then
  ok "check blocks_mirror: partial channel block and mirrored scratchpad (NPU simulator)"
else bad "check blocks_mirror (4 KiB scratchpad):"; sed 's/^/    /' "$tmp/bm.log" | tail -5; fi
# Issue 19 phase 7e: strides by selection. npu-select convolves at stride 1 only; the stride-2
# conv, depthwise and 1x1 of test/lit/npu/Inputs/make_select.py run at stride 1 plus the select
# pool stage (kept pixel [0, 0]); with an implied padding of 1 for 3x3, select_even's first conv
# keeps [0, 1] (test/lit/npu/select-stride.test shows the commands): bit-exact with the
# interpreter, 0 steps from the numpy golden output, 0 hazards, all three layers on the NPU.
sed 's/"kernel_sizes": \[1, 2, 3, 5, 7\], "strides": \[1\],/"kernel_sizes": [1, 3], "implied_padding": {"1": 0, "3": 1}, "strides": [1],/' \
  "$src/test/target/npu-select.json" > "$tmp/select-implied.json"
for sm in "select $src/test/target/npu-select.json" "select_even $tmp/select-implied.json"; do
  read -r sname starget <<< "$sm"
  if "$npucc" check "$src/test/lit/npu/Inputs/$sname" --target "$starget" --interp-check on \
       --tolerance-steps 0 > "$tmp/sel.log" 2>&1 && grep -q "^$sname: PASS" "$tmp/sel.log" \
       && grep -q "hazards 0" "$tmp/sel.log" && grep -q "3 of 7 layers on the NPU" "$tmp/sel.log"; then
    ok "check $sname: stride-2 convs by selection on $(basename "$starget" .json) (NPU simulator)"
  else bad "check $sname on $starget:"; sed 's/^/    /' "$tmp/sel.log" | tail -5; fi
done
# A dynamic leading (batch) dim defaults to 1, with a note.
if "$npucc" "$src/models/invalid/dynamic_batch.onnx" -o "$tmp/db" > "$tmp/db.log" 2>&1 \
   && grep -q "note: input 'x' \[N,4\] bound to 1x4 by default" "$tmp/db.log" \
   && grep -q "MODEL_INPUT0_BYTES 16" "$tmp/db/model.h"; then ok "dynamic batch dim defaults to 1"
else bad "dynamic batch default:"; sed 's/^/    /' "$tmp/db.log" | head -5; fi
# --emit-test --data with another model's data set is refused at compile time.
expect_error "--emit-test --data of another model" \
  "input_0\.pb: error: f32 \[2x3x4\] does not match the model's input 'input' f32 \[1x3x32x32\]" \
  "$npucc" "$model" -o "$tmp/out" --emit-test --data "$src/test/e2e/bad/canon/shape_chain_reshape/test_data_set_0"
# -o creates only the last level.
expect_error "-o with a missing parent" "cannot create output folder '$tmp/out/no/such/dir': its parent folder '$tmp/out/no/such' does not exist" \
  "$npucc" "$model" -o "$tmp/out/no/such/dir"
# Endless or huge inputs stop at a read limit.
expect_error "model /dev/zero" "^npucc: /dev/zero: error: model is not a regular file and is larger than 64 MiB" \
  "$npucc" /dev/zero -o "$tmp/out"
expect_error "opt /dev/zero" "^npucc: /dev/zero: error: textual IR is not a regular file and is larger than 64 MiB" \
  "$npucc" opt /dev/zero
expect_error "--target /dev/zero" "^npucc: /dev/zero: error: target description is not a regular file and is larger than 16 MiB" \
  "$npucc" "$model" -o "$tmp/out" --target /dev/zero
# npucc opt loads and validates --target like the other commands.
expect_error "opt --target missing" "target description .nope.: not a readable file nor a built-in target" \
  "$npucc" opt "$model" --target nope
expect_error "opt --target garbage" "bad_field_wider\.json.*/registers/3/fields/1.*wider" \
  "$npucc" opt "$model" --target "$src/test/target/bad_field_wider.json"
expect_error "opt --target /dev/zero" "^npucc: /dev/zero: error: target description is not a regular file" \
  "$npucc" opt "$model" --target /dev/zero
# Bounded sample counts and refused doubtful flag values.
expect_error "--calib-random 1000000000" "^npucc: .*model\.onnx: error: --calib-random 1000000000: at most 1000 samples" \
  "$npucc" "$model" -o "$tmp/out" --quantize int8 --calib-random 1000000000
expect_error "--calib-random -3" "--calib-random -3: must be positive" \
  "$npucc" "$model" -o "$tmp/out" --quantize int8 --calib-random -3
expect_error "--list-ops=bogus" "^--list-ops: bogus not in \{text,md,npu\}" "$npucc" --list-ops=bogus
expect_error "--quantize ''" "^--quantize:  not in \{int8\}" "$npucc" "$model" -o "$tmp/out" --quantize ''
expect_error "conflicting --shape" "^npucc: error: --shape input given twice with different dimensions \(1x3x32x32 and 2x3x32x32\)" \
  "$npucc" "$model" -o "$tmp/out" --shape input=1x3x32x32 --shape input=2x3x32x32

# A QDQ Conv whose weights are all zero: every output channel is a constant, so the fast
# kernel gets no weights at all (a null pointer: a C array cannot be empty); the C builds
# under strict C99 and matches the hand-computed golden planes (bias * 0.001 quantized by 0.1).
mkdir -p "$tmp/zeroconv/test_data_set_0"
"$py" - "$tmp/zeroconv" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper as nh
d = sys.argv[1]
f = lambda v, n, t=np.float32: nh.from_array(np.array(v, dtype=t), n)
inits = [f(0.05, "s"), f(0, "z", np.int8), nh.from_array(np.zeros((3, 2, 3, 3), np.int8), "w"),
         f(0.02, "ws"), f([100, -300, 7], "b", np.int32), f(0.001, "bs"), f(0, "bz", np.int32),
         f(0.1, "ys")]
nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
         helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
         helper.make_node("DequantizeLinear", ["w", "ws", "z"], ["wd"]),
         helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"]),
         helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("QuantizeLinear", ["c", "ys", "z"], ["cq"]),
         helper.make_node("DequantizeLinear", ["cq", "ys", "z"], ["y"])]
g = helper.make_graph(nodes, "zeroconv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), d + "/model.onnx")
x = (np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4) - 16) * np.float32(0.07)
y = np.broadcast_to(np.array([0.1, -0.3, 0.0], np.float32).reshape(1, 3, 1, 1), (1, 3, 4, 4)).copy()
open(d + "/test_data_set_0/input_0.pb", "wb").write(nh.from_array(x, "x").SerializeToString())
open(d + "/test_data_set_0/output_0.pb", "wb").write(nh.from_array(y, "y").SerializeToString())
PYEOF
if "$npucc" check "$tmp/zeroconv" --target cpu --tolerance-steps 0 > "$tmp/zc.log" 2>&1 \
   && grep -q "zeroconv: PASS" "$tmp/zc.log" \
   && "$npucc" "$tmp/zeroconv/model.onnx" -o "$tmp/zc" --target cpu > /dev/null 2>&1 \
   && grep -q "npucc_conv2d_s8_fast(.*(const int8_t \*)0, (const int32_t \*)0" "$tmp/zc/model.c" \
   && (cd "$tmp/zc" && gcc -std=c99 -Wall -Wextra -Werror -pedantic -c ./*.c) > /dev/null 2>&1; then
  ok "all-zero Conv weights: no weight array, strict C99, outputs at 0 steps"
else
  bad "all-zero Conv weights:"; sed 's/^/    /' "$tmp/zc.log" | tail -5
fi

# Issue 23: models with an empty result (a Conv with 0 output channels, a MatMul with 0
# output features) crashed npucc with SIGFPE on an NPU target and the generated program on
# cpu. They compile on both, the --emit-test program builds strictly and PASSes (the
# simulator's too), and --explain names the empty tensor.
for f in "$src"/test/e2e/bad/edge/*_out0.onnx; do
  for t in cpu npu-default; do
    name="$(basename "$f" .onnx) on $t"
    rm -rf "$tmp/edge"
    if "$npucc" "$f" -o "$tmp/edge" --target "$t" --emit-test > "$tmp/edge.log" 2>&1 \
       && (cd "$tmp/edge" && gcc -std=c99 -Wall -Wextra -Werror -pedantic -DNPUCC_HAL_SIM \
             ./*.c -o t -lm && ./t) >> "$tmp/edge.log" 2>&1 && grep -q PASS "$tmp/edge.log"; then
      ok "empty result: $name compiles and its test program passes"
    else
      bad "empty result: $name"; tail -5 "$tmp/edge.log" | sed 's/^/    /'
    fi
  done
  if "$npucc" "$f" --explain --target npu-default 2>&1 | grep -q "is empty (shape"; then
    ok "empty result: --explain $(basename "$f") names the empty tensor"
  else
    bad "empty result: --explain $(basename "$f")"
  fi
done

# --requant takes auto|exact|fp32 only.
expect_error "bad --requant" "--requant: float not in \{auto,exact,fp32\}" \
  "$npucc" "$model" -o "$tmp/out" --requant float

# Issue 23. Every file npucc writes reports a failed write, naming the file, exit non-zero:
# /dev/full refuses every byte (--emit-qdq once renamed a temporary file over it: as root,
# /dev/full became a regular file, exit 0), and a file-size limit (SIGXFSZ ignored, so a
# write fails with EFBIG) stops OUT/ and --emit-runtime part-way: nothing is left behind.
if [ -c /dev/full ]; then
  expect_error "--emit-qdq /dev/full" "cannot write the QDQ model \(--emit-qdq\) '/dev/full': No space left" \
    "$npucc" "$model" -o "$tmp/out" --quantize int8 --calib-random 2 --emit-qdq /dev/full
  expect_error "check --json /dev/full" "cannot write the check report \(--json\) '/dev/full': No space left" \
    "$npucc" check "$src/models/tinycnn" --target cpu --json /dev/full
  if "$npucc" --list-ops > /dev/full 2> "$tmp/so.err"; then bad "--list-ops > /dev/full: exit 0"
  elif grep -q "cannot write the standard output: No space left" "$tmp/so.err"; then ok "stdout on /dev/full fails"
  else bad "stdout on /dev/full: $(cat "$tmp/so.err")"; fi
  [ -c /dev/full ] && ok "/dev/full is still a device" || bad "npucc replaced /dev/full"
else
  ci_skip "no /dev/full device: write failures to it not checked" || failed=$((failed + 1))
fi
fsize_limited() { (trap '' XFSZ; ulimit -f 4; exec "$@"); }
expect_error "OUT/ past a file-size limit" "cannot write file '$tmp/out\.tmp-[0-9]+/[a-z_0-9]+\.[ch]': File too large" \
  fsize_limited "$npucc" "$model" -o "$tmp/out"
if ls -d "$tmp"/out.* > /dev/null 2>&1; then bad "a temporary folder was left: $(ls -d "$tmp"/out.*)"; else ok "no temporary folder left"; fi
rm -rf "$tmp/rt"
if fsize_limited "$npucc" --target npu-default --emit-runtime "$tmp/rt" > /dev/null 2> "$tmp/rt.err"; then
  bad "--emit-runtime past a file-size limit: exit 0"
elif grep -q "cannot write file '.*': File too large" "$tmp/rt.err" && [ ! -e "$tmp/rt" ]; then
  ok "--emit-runtime past a file-size limit fails, nothing written"
else bad "--emit-runtime past a file-size limit: $(cat "$tmp/rt.err")"; fi

# --prefix names only the generated API: it may not collide with the runtime's npucc_*
# files and names (--prefix npucc_sim compiled, then npucc_sim.h replaced the simulator's
# header), the target's <id>_* register map and table, C keywords or reserved identifiers.
expect_error "--prefix npucc_sim" "--prefix 'npucc_sim' is in the npucc_ namespace of the runtime" \
  "$npucc" "$model" -o "$tmp/out" --prefix npucc_sim
expect_error "--prefix NPUCC" "--prefix 'NPUCC' is in the npucc_ namespace" "$npucc" "$model" -o "$tmp/out" --prefix NPUCC
expect_error "--prefix npu_default_regs" "--prefix 'npu_default_regs' is in the namespace of the target 'npu_default'" \
  "$npucc" "$model" -o "$tmp/out" --prefix npu_default_regs
expect_error "--prefix npu_small --target npu-small" "namespace of the target 'npu_small'" \
  "$npucc" "$model" -o "$tmp/out" --prefix NPU_SMALL --target npu-small
expect_error "--prefix _model" "--prefix '_model' starts with '_': .*reserved" "$npucc" "$model" -o "$tmp/out" --prefix _model
expect_error "--prefix int" "--prefix 'int' is a C keyword" "$npucc" "$model" -o "$tmp/out" --prefix int
if "$npucc" check "$src/models/tinycnn_int8" --prefix npu_small --cflags "$strict" > "$tmp/px.log" 2>&1 \
   && grep -q "^tinycnn_int8: PASS" "$tmp/px.log"; then ok "--prefix npu_small on npu-default: check passes"
else bad "check --prefix npu_small:"; sed 's/^/    /' "$tmp/px.log" | tail -5; fi

# --passes: an empty entry is an error naming it; a list without fold-qdq still lowers a QDQ
# model (fold-qdq runs first, with a note) instead of failing inside the lowering with
# "expected i8/u8 -> f32, got i32 -> f32".
expect_error "--passes=,,," "--passes=',,,': entry 1 is empty" "$npucc" "$model" -o "$tmp/out" --passes=,,,
expect_error "--passes=dce,,fold-pad" "--passes='dce,,fold-pad': entry 2 is empty" \
  "$npucc" "$model" -o "$tmp/out" --passes=dce,,fold-pad
expect_error "--passes=" "--passes='': entry 1 is empty" "$npucc" "$model" -o "$tmp/out" --passes=
expect_error "opt --passes=dce," "--passes='dce,': entry 2 is empty" "$npucc" opt "$model" --passes=dce,
if "$npucc" check "$src/models/tinycnn_int8" --passes=dce > "$tmp/pd.log" 2>&1 \
   && grep -q "^tinycnn_int8: PASS" "$tmp/pd.log" \
   && grep -q "note: --passes=dce leaves out fold-qdq, .*: it ran first" "$tmp/pd.log"; then
  ok "check tinycnn_int8 --passes=dce: fold-qdq runs first, PASS"
else bad "check tinycnn_int8 --passes=dce:"; sed 's/^/    /' "$tmp/pd.log" | tail -5; fi

# --seed takes the whole uint64 range, and seeds that differ above bit 31 give other inputs.
expect_error "--seed -1" "--seed '-1': expected a whole number from 0 to 18446744073709551615" \
  "$npucc" "$model" -o "$tmp/out" --emit-test --seed -1
expect_error "--seed 2^64" "--seed '18446744073709551616': expected a whole number" \
  "$npucc" "$model" -o "$tmp/out" --emit-test --seed 18446744073709551616
expect_error "--seed 12abc" "--seed '12abc': expected a whole number" "$npucc" "$model" -o "$tmp/out" --emit-test --seed 12abc
if "$npucc" "$model" -o "$tmp/s1" --emit-test --seed 1 > /dev/null 2>&1 \
   && "$npucc" "$model" -o "$tmp/s2" --emit-test --seed 4294967297 > /dev/null 2>&1 \
   && "$npucc" "$model" -o "$tmp/s3" --emit-test --seed 18446744073709551615 > /dev/null 2>&1 \
   && ! cmp -s "$tmp/s1/model_test.c" "$tmp/s2/model_test.c" \
   && (cd "$tmp/s3" && cc -std=c99 -O1 ./*.c -o test -lm && ./test) > "$tmp/s3.log" 2>&1; then
  ok "--seed: 2^32+1 differs from 1, 2^64-1 gives a passing test program"
else bad "--seed over 32 bits:"; sed 's/^/    /' "$tmp/s3.log" 2>/dev/null | tail -3; fi
# --target list also names cpu.
if "$npucc" --target list | grep -q "^cpu  *no NPU  "; then ok "--target list names cpu"; else bad "--target list lacks cpu"; fi

# The skip rule (test/e2e/ci_skip.sh, docs/testing.md): a test that lacks data or a tool
# skips without CI and fails with it, in the shell helper, a real script and export_check.py.
ci_case() { # NAME WANT_RC PATTERN CMD...: exit status WANT_RC and stdout matching PATTERN
  local name="$1" want="$2" pattern="$3"; shift 3
  "$@" > "$tmp/ci.out" 2>&1
  local rc=$?
  if [ "$rc" -eq "$want" ] && grep -Eq -- "$pattern" "$tmp/ci.out"; then ok "$name (exit $rc)"
  else bad "$name: exit $rc, want $want and /$pattern/:"; sed 's/^/    /' "$tmp/ci.out" | tail -3; fi
}
for ci in "" 1; do
  if [ -n "$ci" ]; then want=1 word=FAIL; else want=77 word=SKIP; fi
  ci_case "ci_skip_exit with CI='$ci'" $want "^$word: no widget" \
    env CI="$ci" bash -c ". '$src/test/e2e/ci_skip.sh'; ci_skip_exit 'no widget'; exit 0"
  ci_case "run_npu_models.sh without models, CI='$ci'" $want "^$word: shared models dir '$tmp/none' does not exist" \
    env CI="$ci" bash "$src/scripts/run_npu_models.sh" "$npucc" "$tmp/none"
  ci_case "run_quant_models.sh without models, CI='$ci'" $want "^$word: shared models dir" \
    env CI="$ci" bash "$src/scripts/run_quant_models.sh" "$npucc" "$tmp/none"
  ci_case "export_check.py without a runtime, CI='$ci'" $want "^$word: no independent runtime \(stub" \
    env CI="$ci" "$py" -c "import sys; sys.path.insert(0, '$src/test/e2e'); import export_check as e
e.run_reference = lambda m, f: (None, 'stub'); e.run_ort_node = lambda p, f: (None, 'stub2')
sys.argv = ['export_check.py', '$model', '$src/models/tinycnn/test_data_set_0']; sys.exit(e.main())"
done
ci_case "ci_skip (one part) with CI=1 returns 1" 1 "^FAIL: part" \
  env CI=1 bash -c ". '$src/test/e2e/ci_skip.sh'; ci_skip part"
ci_case "ci_skip (one part) without CI returns 0" 0 "^SKIP: part" \
  env CI= bash -c ". '$src/test/e2e/ci_skip.sh'; ci_skip part"

# docs/ops.md is what --list-ops=md prints (regenerate it when Ops.def changes).
if "$npucc" --list-ops=md | diff -q - "$src/docs/ops.md" > /dev/null; then ok "docs/ops.md is up to date"; else bad "docs/ops.md differs from npucc --list-ops=md"; fi
# docs/SUPPORTED_OPS.md is what --list-ops=npu prints for the built-in targets (regenerate it when
# Legality.cpp, SupportedOps.cpp or a built-in description changes); --target narrows it to one,
# with that description's own limits (npu-small's 1..4 kernel fields, no depthwise).
if "$npucc" --list-ops=npu | diff -q - "$src/docs/SUPPORTED_OPS.md" > /dev/null; then
  ok "docs/SUPPORTED_OPS.md is up to date"
else bad "docs/SUPPORTED_OPS.md differs from npucc --list-ops=npu"; fi
if "$npucc" --list-ops=npu --target npu-small > "$tmp/so.md" 2>&1 && ! grep -q '^## npu-default' "$tmp/so.md" \
   && grep -q '^| Conv (group 1) | `conv` | .*k_h 1\.\.4' "$tmp/so.md" \
   && grep -q '^| Conv (group = input channels) | - | the description has no `depthwise` operation: CPU |' "$tmp/so.md"; then
  ok "--list-ops=npu --target npu-small: that description's limits only"
else bad "--list-ops=npu --target npu-small:"; head -20 "$tmp/so.md" | sed 's/^/    /'; fi

# --list-ops, --version, --help.
# (Into files: `grep -q` quits at its match and, with pipefail, npucc's SIGPIPE on a later
# write of a long text would fail the pipeline.)
"$npucc" --list-ops > "$tmp/ops.txt" && grep -q "^Conv " "$tmp/ops.txt" && ok "--list-ops" || bad "--list-ops"
"$npucc" --version > "$tmp/version.txt" && grep -q "^npucc " "$tmp/version.txt" && ok "--version" || bad "--version"
"$npucc" --help > "$tmp/help.txt" && grep -q -- "--emit-test" "$tmp/help.txt" && grep -q -- "--memory-map" "$tmp/help.txt" \
  && ok "--help" || bad "--help"

# Issue 22: `npucc target export --svd` then `import --svd` (docs/target.md, "Starting from a
# register file"): the skeleton's registers equal the description's, the loader names the todo
# list; a malformed SVD gets the file, line and element and writes nothing; -o is replaced only
# on success.
if "$npucc" target export --svd "$tmp/d.svd" --target "$src/test/target/npu-tiny.json" > "$tmp/exp.log" 2>&1 \
  && "$npucc" target import --svd "$tmp/d.svd" -o "$tmp/d.json" > "$tmp/imp.log" 2>&1 \
  && grep -q "npucc: wrote $tmp/d.json: 23 registers" "$tmp/imp.log" \
  && /usr/bin/python3 - "$tmp/d.json" "$src/test/target/npu-tiny.json" <<'PYEOF'
import json, re, sys
sk = json.load(open(sys.argv[1]))
text = re.sub(r"^\s*//.*$", "", open(sys.argv[2]).read(), flags=re.M)
orig = json.loads(text)
assert sk["todo"] == ["memories", "dma", "compute", "commands", "status", "timing"], sk["todo"]
strip = lambda d, keys: {k: v for k, v in d.items() if k not in keys}
num = lambda v: v if isinstance(v, int) else int(v, 0)
assert num(sk["base_address"]) == num(orig["base_address"])
for a, b in zip(sk["registers"], orig["registers"], strict=True):
    assert a["name"] == b["name"] and num(a["offset"]) == num(b["offset"]), (a, b)
    assert a["width"] == b.get("width", 32) and a.get("doc", "") == b.get("doc", ""), (a, b)
    fa = [strip(f, ()) for f in a.get("fields", [])]
    fb = [strip(f, ("nop", "write_enable")) for f in b.get("fields", [])]
    assert fa == fb, (fa, fb)
PYEOF
then
  ok "target export/import --svd: npu-tiny's registers back"
else bad "target export/import --svd:"; cat "$tmp/exp.log" "$tmp/imp.log" | sed 's/^/    /' | head; fi
if "$npucc" --target "$tmp/d.json" --emit-runtime "$tmp/rt" > /dev/null 2> "$tmp/todo.err"; then
  bad "a skeleton loads"
else
  grep -q '/todo: a skeleton written by `npucc target import` (its 23 registers load); still to describe: memories, dma, compute, commands, status, timing' "$tmp/todo.err" \
    && ok "a skeleton: the loader names what is left" || { bad "skeleton error:"; sed 's/^/    /' "$tmp/todo.err"; }
fi
printf '<device><name>D</name>\n<peripherals><peripheral><name>P</name><baseAddress>0</baseAddress>\n<registers><register><name>R</name><size>24</size><addressOffset>0</addressOffset></register></registers></peripheral></peripherals></device>\n' > "$tmp/bad.svd"
echo keep > "$tmp/keep.json"
if "$npucc" target import --svd "$tmp/bad.svd" -o "$tmp/keep.json" > /dev/null 2> "$tmp/bad.err"; then
  bad "malformed SVD: exit 0"
elif grep -q "bad.svd:3: <register> 'R': size 24: npucc registers are 8, 16, 32 or 64 bits" "$tmp/bad.err" \
  && [ "$(cat "$tmp/keep.json")" = keep ]; then
  ok "malformed SVD: file, line and element named, -o untouched"
else bad "malformed SVD:"; sed 's/^/    /' "$tmp/bad.err"; fi
expect_error "target import without a register file" "give the register file with --svd FILE" "$npucc" target import -o "$tmp/x.json"

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
