#!/usr/bin/env bash
# OUT/ as a build component (issue 20): for --target cpu and npu-default, tinycnn_int8 with
# its --emit-test program is built only through the generated fragments - OUT/model.cmake
# (include() into a CMake project) and OUT/model.mk (include into a Makefile, make -f) - with
# -std=c99 -Wall -Wextra -Werror -pedantic, the NPU build on the host simulator
# (MODEL_SIM_DIR = an `npucc --emit-runtime --with-sim` folder), and each program must print
# PASS. Also: a re-run writes byte-identical files, the manifest lists the fragments and
# README.md, and a MODEL_SIM_DIR without the simulator's sources stops make with its message.
# Several models in one image: three OUT/ folders (cpu float, cpu int8, npu-default int8 on the
# simulator) link into one program through their fragments unchanged (CMake and Make), each
# shared runtime file built once; folders of two NPU targets stop both fragments.
# --arena external: the test programs pass through the fragments (cpu, npu-default), the HAL is
# initialised in <prefix>_init only, a failing NPU layer is named by <prefix>_last_error, and
# npucc check runs with the caller's arena. NPU layer hooks (NPUCC_NPU_LAYER_HOOK) run in order
# beside the CPU ones in the npu-default test program. The NPU constant blob is aligned as the
# description needs (npu-sysmem, npu-align: 64 bytes) with gcc, clang and arm-none-eabi-gcc.
# Usage: out_component_test.sh NPUCC SOURCE_DIR
set -uo pipefail
npucc="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
src="$(cd "$2" && pwd)"
. "$src/test/e2e/ci_skip.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "PASS: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
m="$src/models/tinycnn_int8"
warn="-Wall -Wextra -Werror -pedantic"

for tool in cmake make cc; do
  command -v "$tool" > /dev/null || ci_skip_exit "$tool not installed"
done

for t in cpu npu-default; do
  d="$tmp/$t"
  mkdir -p "$d"
  if ! "$npucc" "$m/model.onnx" -o "$d/OUT" --target "$t" --emit-test \
       --data "$m/test_data_set_0" > "$d/log" 2>&1 \
     || ! "$npucc" "$m/model.onnx" -o "$d/OUT2" --target "$t" --emit-test \
       --data "$m/test_data_set_0" > "$d/log2" 2>&1; then
    bad "$t: compile"; sed 's/^/    /' "$d/log" "$d/log2" | tail -5; continue
  fi
  if diff -r "$d/OUT" "$d/OUT2" > "$d/diff" && [ -f "$d/OUT/model.cmake" ] && [ -f "$d/OUT/model.mk" ] \
     && [ -f "$d/OUT/README.md" ]; then
    ok "$t: model.cmake, model.mk, README.md written, byte-identical on a re-run"
  else bad "$t: fragments missing or not deterministic:"; head -5 "$d/diff" | sed 's/^/    /'; fi
  if grep -qx "model.cmake" "$d/OUT/.npucc-files" && grep -qx "model.mk" "$d/OUT/.npucc-files" \
     && grep -qx "README.md" "$d/OUT/.npucc-files"; then
    ok "$t: the manifest lists the fragments and README.md"
  else bad "$t: .npucc-files does not list the fragments"; fi

  sim=""
  if [ "$t" != cpu ]; then
    if ! "$npucc" --target "$t" --emit-runtime "$d/SIM" --with-sim > "$d/log" 2>&1; then
      bad "$t: --emit-runtime --with-sim"; sed 's/^/    /' "$d/log" | tail -3; continue
    fi
    sim="$d/SIM"
  fi

  # CMake: include() the fragment, build the test program against the library target.
  mkdir -p "$d/cm"
  cat > "$d/cm/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.13)
project(app C)
set(MODEL_SIM_DIR "$sim")
include("$d/OUT/model.cmake")
target_compile_options(model PRIVATE $warn)
add_executable(model_test \${MODEL_TEST_SRC})
target_compile_options(model_test PRIVATE $warn)
target_link_libraries(model_test PRIVATE model)
EOF
  if cmake -S "$d/cm" -B "$d/cm/build" > "$d/cm.log" 2>&1 \
     && cmake --build "$d/cm/build" >> "$d/cm.log" 2>&1 \
     && "$d/cm/build/model_test" > "$d/cm.run" 2>&1 && tail -n1 "$d/cm.run" | grep -qx PASS; then
    ok "$t: test program built through model.cmake${sim:+ (simulator)}: PASS"
  else bad "$t: through model.cmake:"; cat "$d/cm.log" "$d/cm.run" 2>/dev/null | tail -8 | sed 's/^/    /'; fi

  # Make: include the fragment, build with its variables only.
  mkdir -p "$d/mk"
  printf 'MODEL_SIM_DIR := %s\ninclude %s/OUT/model.mk\nmodel_test: $(MODEL_TEST_SRC) $(MODEL_SRCS) $(NPUCC_RUNTIME_SRCS)\n\t$(CC) -std=c99 %s -O2 $(MODEL_CFLAGS) -o $@ $^ $(MODEL_LDLIBS)\n' \
    "$sim" "$d" "$warn" > "$d/mk/app.mk"
  if make -C "$d/mk" -f app.mk model_test > "$d/mk.log" 2>&1 \
     && "$d/mk/model_test" > "$d/mk.run" 2>&1 && tail -n1 "$d/mk.run" | grep -qx PASS; then
    ok "$t: test program built through model.mk${sim:+ (simulator)}: PASS"
  else bad "$t: through model.mk:"; cat "$d/mk.log" "$d/mk.run" 2>/dev/null | tail -8 | sed 's/^/    /'; fi

  if [ -n "$sim" ]; then
    # A simulator folder without the simulator's sources stops make with the fragment's message.
    mkdir -p "$d/empty"
    if make -C "$d/mk" -f app.mk MODEL_SIM_DIR="$d/empty" model_test > "$d/mk2.log" 2>&1; then
      bad "$t: make with an empty MODEL_SIM_DIR succeeded"
    elif grep -q "has no npucc_sim\*.c" "$d/mk2.log"; then
      ok "$t: an empty MODEL_SIM_DIR stops make ($(grep -o 'has no npucc_sim[^(]*' "$d/mk2.log" | head -1))"
    else bad "$t: make with an empty MODEL_SIM_DIR:"; tail -3 "$d/mk2.log" | sed 's/^/    /'; fi
  fi
done

# NPU layer hooks: NPUCC_NPU_LAYER_HOOK(index, layer) before each NPU layer's command stream and
# once at the end, beside NPUCC_LAYER_HOOK on the CPU calls. The npu-default test program built
# with both defined (printing) on the simulator passes, and every hook of model.c ran once, in
# order, the NPU ones ending with "end".
d="$tmp/npu-default"
if [ -f "$d/OUT/model.c" ] && [ -n "$(ls "$d/SIM"/npucc_sim*.c 2>/dev/null)" ]; then
  printf '#include <stdio.h>\n#define NPUCC_LAYER_HOOK(i, k) printf("cpu %%d %%s\\n", (int)(i), k)\n#define NPUCC_NPU_LAYER_HOOK(i, l) printf("npu %%d %%s\\n", (int)(i), l)\n' > "$d/hook.h"
  printf 'MODEL_SIM_DIR := %s\ninclude %s/OUT/model.mk\nhooked: $(MODEL_TEST_SRC) $(MODEL_SRCS) $(NPUCC_RUNTIME_SRCS)\n\t$(CC) -std=c99 %s -O2 -include %s/hook.h $(MODEL_CFLAGS) -o $@ $^ $(MODEL_LDLIBS)\n' \
    "$d/SIM" "$d" "$warn" "$d" > "$d/hook.mk"
  mkdir -p "$d/hk"
  want="$(grep -c '^  NPUCC_NPU_LAYER_HOOK(' "$d/OUT/model.c")"
  wantc="$(grep -c '^  NPUCC_LAYER_HOOK(' "$d/OUT/model.c")"
  if make -C "$d/hk" -f "$d/hook.mk" hooked > "$d/hk.log" 2>&1 \
     && "$d/hk/hooked" > "$d/hk.run" 2>&1 && tail -n1 "$d/hk.run" | grep -qx PASS \
     && [ "$want" -gt 1 ] && [ "$(grep -c '^npu ' "$d/hk.run")" = "$want" ] \
     && [ "$(grep -c '^cpu ' "$d/hk.run")" = "$wantc" ] \
     && grep '^npu ' "$d/hk.run" | awk '$2 != NR - 1 {exit 1}' \
     && [ "$(grep '^npu ' "$d/hk.run" | tail -n1)" = "npu $((want - 1)) end" ] \
     && grep -q '^npu 0 .*(Conv on the NPU: conv)$' "$d/hk.run"; then
    ok "npu-default: $want NPU layer hooks and $wantc CPU hooks ran in order on the simulator: PASS"
  else bad "npu-default with layer hooks ($want NPU, $wantc CPU expected):"; cat "$d/hk.log" "$d/hk.run" 2>/dev/null | tail -8 | sed 's/^/    /'; fi
else
  bad "npu-default OUT/ or simulator folder missing for the hook test"
fi

# Several models in one image: tinycnn (float) on --target cpu as f32, tinycnn_int8 on
# --target cpu as kws and on npu-default (simulator) as ad. kws and ad share int8 kernels, f32
# uses others, ad adds the HAL and target table. One host program links all three through
# their fragments unchanged (each test program's main renamed) and all three print PASS.
mm="$tmp/multi"
mkdir -p "$mm"
if "$npucc" "$src/models/tinycnn/model.onnx" -o "$mm/f32" --prefix f32 --target cpu --emit-test \
     --data "$src/models/tinycnn/test_data_set_0" > "$mm/log" 2>&1 \
   && "$npucc" "$m/model.onnx" -o "$mm/kws" --prefix kws --target cpu --emit-test \
     --data "$m/test_data_set_0" >> "$mm/log" 2>&1 \
   && "$npucc" "$m/model.onnx" -o "$mm/ad" --prefix ad --target npu-default --emit-test \
     --data "$m/test_data_set_0" >> "$mm/log" 2>&1 \
   && "$npucc" "$m/model.onnx" -o "$mm/small" --prefix small --target npu-small \
     >> "$mm/log" 2>&1 \
   && "$npucc" --target npu-default --emit-runtime "$mm/SIM" --with-sim >> "$mm/log" 2>&1; then
  cat > "$mm/main.c" << 'EOF'
#include <stdio.h>
int f32_main(void);
int kws_main(void);
int ad_main(void);
int main(void) {
  int a = f32_main(), b = kws_main(), c = ad_main();
  printf("models: %d %d %d\n", a, b, c);
  return a || b || c;
}
EOF
  passes() { [ "$(grep -cx PASS "$1")" = 3 ] && grep -qx "models: 0 0 0" "$1"; }
  mkdir -p "$mm/cm"
  cat > "$mm/cm/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.13)
project(app C)
set(AD_SIM_DIR "$mm/SIM")
include("$mm/f32/f32.cmake")
include("$mm/kws/kws.cmake")
include("$mm/ad/ad.cmake")
add_executable(app "$mm/main.c" \${F32_TEST_SRC} \${KWS_TEST_SRC} \${AD_TEST_SRC})
set_source_files_properties(\${F32_TEST_SRC} PROPERTIES COMPILE_DEFINITIONS main=f32_main)
set_source_files_properties(\${KWS_TEST_SRC} PROPERTIES COMPILE_DEFINITIONS main=kws_main)
set_source_files_properties(\${AD_TEST_SRC} PROPERTIES COMPILE_DEFINITIONS main=ad_main)
foreach(t app f32 kws ad npucc_runtime)
  target_compile_options(\${t} PRIVATE $warn)
endforeach()
target_link_libraries(app PRIVATE f32 kws ad)
get_target_property(rt npucc_runtime SOURCES)
file(WRITE "\${CMAKE_BINARY_DIR}/runtime_sources.txt" "\${rt}")
EOF
  if cmake -S "$mm/cm" -B "$mm/cm/build" > "$mm/cm.log" 2>&1 \
     && cmake --build "$mm/cm/build" >> "$mm/cm.log" 2>&1 \
     && "$mm/cm/build/app" > "$mm/cm.run" 2>&1 && passes "$mm/cm.run"; then
    ok "three models (cpu float, cpu int8, npu-default) in one program through their .cmake: 3 x PASS"
  else bad "three models through .cmake:"; cat "$mm/cm.log" "$mm/cm.run" 2>/dev/null | tail -12 | sed 's/^/    /'; fi
  # Each shared runtime source is built once: npucc_pool_s8.c is in kws/ and ad/.
  rts() { tr ';' '\n' < "$mm/cm/build/runtime_sources.txt"; }
  if [ "$(rts | grep -c '/npucc_pool_s8\.c$')" = 1 ] && rts | grep -q '/kws/npucc_pool_s8\.c$' \
     && rts | grep -q '/npucc_hal\.c$'; then
    ok "npucc_runtime builds each shared runtime file once (the first fragment's copy)"
  else bad "npucc_runtime sources: $(head -c 400 "$mm/cm/build/runtime_sources.txt" 2>/dev/null)"; fi

  # Make: one object per source (the runtime's listed once), the test programs' mains renamed.
  cat > "$mm/app.mk" << EOF
AD_SIM_DIR := $mm/SIM
include $mm/f32/f32.mk
include $mm/kws/kws.mk
include $mm/ad/ad.mk
OBJS := \$(patsubst %.c,%.o,\$(NPUCC_RUNTIME_SRCS) \$(F32_SRCS) \$(KWS_SRCS) \$(AD_SRCS))
CFLAGS := -std=c99 $warn -O2 \$(F32_CFLAGS) \$(KWS_CFLAGS) \$(AD_CFLAGS)
f32_test.o: \$(F32_TEST_SRC)
	\$(CC) \$(CFLAGS) -Dmain=f32_main -c -o \$@ \$<
kws_test.o: \$(KWS_TEST_SRC)
	\$(CC) \$(CFLAGS) -Dmain=kws_main -c -o \$@ \$<
ad_test.o: \$(AD_TEST_SRC)
	\$(CC) \$(CFLAGS) -Dmain=ad_main -c -o \$@ \$<
app: $mm/main.c f32_test.o kws_test.o ad_test.o \$(OBJS)
	\$(CC) \$(CFLAGS) -o \$@ \$^ \$(F32_LDLIBS) \$(KWS_LDLIBS) \$(AD_LDLIBS)
EOF
  mkdir -p "$mm/mk"
  if make -C "$mm/mk" -f "$mm/app.mk" app > "$mm/mk.log" 2>&1 \
     && "$mm/mk/app" > "$mm/mk.run" 2>&1 && passes "$mm/mk.run"; then
    ok "three models in one program through their .mk (one object per runtime file): 3 x PASS"
  else bad "three models through .mk:"; cat "$mm/mk.log" "$mm/mk.run" 2>/dev/null | tail -12 | sed 's/^/    /'; fi

  # Two NPU targets have different target tables: both fragments stop, naming the file.
  printf 'include %s/ad/ad.mk\ninclude %s/small/small.mk\nall:\n\t@echo $(NPUCC_RUNTIME_SRCS)\n' \
    "$mm" "$mm" > "$mm/two.mk"
  if make -f "$mm/two.mk" > "$mm/two.log" 2>&1; then
    bad "make with OUT/ folders of two NPU targets did not stop"
  elif grep -q "small/npucc_target.h differs from the copy" "$mm/two.log"; then
    ok "make stops on OUT/ folders of two NPU targets (npucc_target.h differs)"
  else bad "make with two NPU targets:"; tail -3 "$mm/two.log" | sed 's/^/    /'; fi
  mkdir -p "$mm/two"
  printf 'cmake_minimum_required(VERSION 3.13)\nproject(two C)\ninclude("%s/ad/ad.cmake")\ninclude("%s/small/small.cmake")\n' \
    "$mm" "$mm" > "$mm/two/CMakeLists.txt"
  if cmake -S "$mm/two" -B "$mm/two/build" > "$mm/two2.log" 2>&1; then
    bad "cmake with OUT/ folders of two NPU targets did not stop"
  elif grep -q "npucc_target.h differs from" "$mm/two2.log"; then
    ok "cmake stops on OUT/ folders of two NPU targets"
  else bad "cmake with two NPU targets:"; tail -5 "$mm/two2.log" | sed 's/^/    /'; fi
else
  bad "multi-model compiles:"; tail -5 "$mm/log" | sed 's/^/    /'
fi

# --arena external: the caller's arena and context (docs/output.md, "Caller-owned memory").
# The --emit-test program of tinycnn_int8 through the fragments for cpu (CMake) and npu-default
# (Make, simulator) passes; the HAL is initialised in ext_init only; a wait the program aborts
# makes ext_run return NPUCC_ERR_TIMEOUT (-5) and ext_last_error name the NPU layer; npucc check
# runs its harness with the caller's arena.
xe="$tmp/ext"
mkdir -p "$xe"
if "$npucc" "$m/model.onnx" -o "$xe/cpu" --prefix ext --target cpu --arena external --emit-test \
     --data "$m/test_data_set_0" > "$xe/log" 2>&1 \
   && "$npucc" "$m/model.onnx" -o "$xe/npu" --prefix ext --target npu-default --arena external \
     --emit-test --data "$m/test_data_set_0" >> "$xe/log" 2>&1 \
   && "$npucc" --target npu-default --emit-runtime "$xe/SIM" --with-sim >> "$xe/log" 2>&1; then
  mkdir -p "$xe/cm"
  cat > "$xe/cm/CMakeLists.txt" << EOF
cmake_minimum_required(VERSION 3.13)
project(app C)
include("$xe/cpu/ext.cmake")
target_compile_options(ext PRIVATE $warn)
add_executable(ext_test \${EXT_TEST_SRC})
target_compile_options(ext_test PRIVATE $warn)
target_link_libraries(ext_test PRIVATE ext)
EOF
  if cmake -S "$xe/cm" -B "$xe/cm/build" > "$xe/cm.log" 2>&1 \
     && cmake --build "$xe/cm/build" >> "$xe/cm.log" 2>&1 \
     && "$xe/cm/build/ext_test" > "$xe/cm.run" 2>&1 && tail -n1 "$xe/cm.run" | grep -qx PASS; then
    ok "--arena external, cpu: test program (ext_init with its own arena) through ext.cmake: PASS"
  else bad "--arena external, cpu, through ext.cmake:"; cat "$xe/cm.log" "$xe/cm.run" 2>/dev/null | tail -8 | sed 's/^/    /'; fi

  cat > "$xe/abort.c" << 'EOF'
#include <stdio.h>
#include <string.h>
#include "ext.h"
#include "npucc_hal.h"
#include "npucc_sim.h"
#include "npucc_stream.h"
#include "npucc_target.h"
static unsigned char pool[EXT_ARENA_BYTES + EXT_ARENA_ALIGN];
static float x[EXT_INPUT0_BYTES / 4], y[EXT_OUTPUT0_BYTES / 4];
static int polls;
static int abort_hook(void *sim) { return ++polls > 2 ? 1 : npucc_sim_wfi_hook(sim); }
int main(void) {
  unsigned char *arena = pool + (EXT_ARENA_ALIGN - (uintptr_t)pool % EXT_ARENA_ALIGN) % EXT_ARENA_ALIGN;
  const void *in[1];
  void *out[1];
  ext_ctx ctx;
  int32_t layer = -2;
  const char *name = "?";
  int rc, ok;
  npucc_sim *sim = npucc_sim_create(NPUCC_TARGET);
  in[0] = x;
  out[0] = y;
  memset(x, 0, sizeof x);
  npucc_sim_attach(sim);
  npucc_hal_set_wait_hook(abort_hook, sim);
  if (ext_init(&ctx, arena, EXT_ARENA_BYTES) != NPUCC_OK)
    return 2;
  rc = ext_run(&ctx, in, out);
  ok = ext_last_error(&ctx, &layer, &name) == rc;
  printf("rc %d layer %d name %s", rc, (int)layer, name);
  {
    const npucc_stream_fault *f = npucc_stream_last_fault();
    const char *cmd = "?";
    npucc_stream_fault_names(NPUCC_TARGET, f, &cmd, 0, 0, 0);
    printf("; stream op %ld (%s) rc %d\n", (long)f->op, cmd, (int)f->rc);
    ok = ok && f->rc == rc && f->op >= 0 && f->kind == NPUCC_STREAM_WAIT && strcmp(cmd, "wait") == 0;
  }
  npucc_sim_destroy(sim);
  return !(ok && rc == NPUCC_ERR_TIMEOUT && layer >= 0 && strstr(name, "on the NPU"));
}
EOF
  cat > "$xe/app.mk" << EOF
EXT_SIM_DIR := $xe/SIM
include $xe/npu/ext.mk
CFLAGS := -std=c99 $warn -O2 \$(EXT_CFLAGS)
ext_test: \$(EXT_TEST_SRC) \$(EXT_SRCS) \$(NPUCC_RUNTIME_SRCS)
	\$(CC) \$(CFLAGS) -o \$@ \$^ \$(EXT_LDLIBS)
abort: $xe/abort.c \$(EXT_SRCS) \$(NPUCC_RUNTIME_SRCS)
	\$(CC) \$(CFLAGS) -o \$@ \$^ \$(EXT_LDLIBS)
EOF
  mkdir -p "$xe/mk"
  if make -C "$xe/mk" -f "$xe/app.mk" ext_test > "$xe/mk.log" 2>&1 \
     && "$xe/mk/ext_test" > "$xe/mk.run" 2>&1 && tail -n1 "$xe/mk.run" | grep -qx PASS; then
    ok "--arena external, npu-default: test program through ext.mk (simulator): PASS"
  else bad "--arena external, npu-default, through ext.mk:"; cat "$xe/mk.log" "$xe/mk.run" 2>/dev/null | tail -8 | sed 's/^/    /'; fi
  # The HAL is initialised once, in ext_init: ext_run does not call npucc_hal_init.
  if [ "$(awk '/^int ext_init\(/,/^}/' "$xe/npu/ext.c" | grep -c 'npucc_hal_init(')" = 1 ] \
     && [ "$(awk '/^int ext_run\(/,/^}/' "$xe/npu/ext.c" | grep -c 'npucc_hal_init(')" = 0 ]; then
    ok "--arena external: npucc_hal_init in ext_init, not in ext_run"
  else bad "--arena external: npucc_hal_init is not (only) in ext_init"; fi
  if make -C "$xe/mk" -f "$xe/app.mk" abort > "$xe/ab.log" 2>&1 \
     && "$xe/mk/abort" > "$xe/ab.run" 2>&1; then
    ok "--arena external: an aborted NPU wait returns -5, ext_last_error names the layer, npucc_stream_last_fault the wait ($(cut -c1-100 "$xe/ab.run"))"
  else bad "--arena external, failing NPU layer:"; cat "$xe/ab.log" "$xe/ab.run" 2>/dev/null | tail -6 | sed 's/^/    /'; fi
  # A target table narrower than the one compiled for (DMA_SIZE.length 4 bits instead of 16,
  # e.g. an older description in the firmware): the run fails with NPUCC_ERR_RANGE and the test
  # program prints the failing layer, the command, the parameter with its value and the field.
  rm -rf "$xe/narrow" && cp -r "$xe/npu" "$xe/narrow"
  sed -i -e 's/{NPUCC_P_LENGTH, 0, 1, {4, 0, 16}/{NPUCC_P_LENGTH, 0, 1, {4, 0, 4}/' \
      -e 's/{"length", 0, 16, -1}/{"length", 0, 4, -1}/' "$xe/narrow/npu_default_target.c"
  sed "s|$xe/npu/ext.mk|$xe/narrow/ext.mk|" "$xe/app.mk" > "$xe/narrow.mk"
  mkdir -p "$xe/nmk"
  if ! grep -q '{NPUCC_P_LENGTH, 0, 1, {4, 0, 4}' "$xe/narrow/npu_default_target.c"; then
    bad "narrowed table: the sed found no DMA_SIZE.length binding in npu_default_target.c"
  elif make -C "$xe/nmk" -f "$xe/narrow.mk" ext_test > "$xe/nmk.log" 2>&1 \
       && ! "$xe/nmk/ext_test" > "$xe/nmk.run" 2>&1 \
       && grep -q "ext_init/_run returned -2 (layer [0-9]*: .*on the NPU" "$xe/nmk.run" \
       && grep -Eq "^NPU stream: op [0-9]+ of the layer \(dma\) returned -2: parameter length = [0-9]+, register DMA_SIZE field length$" "$xe/nmk.run"; then
    ok "a field narrower at run time: the test program names layer, command, parameter and field ($(grep '^NPU stream' "$xe/nmk.run"))"
  else bad "a field narrower at run time:"; cat "$xe/nmk.log" "$xe/nmk.run" 2>/dev/null | tail -6 | sed 's/^/    /'; fi
  # NPUCC_RUNTIME_ATTR places every writable static of the NPU runtime (command stream state
  # and fault, HAL pending bits): no .data/.bss symbol is left outside the named section
  # (.data.rel.ro is a PIE host's read-only-after-relocation data: const tables).
  rs=0
  for f in npucc_stream npucc_hal npucc_npu; do
    cc -std=c99 $warn -O2 -c -I"$xe/npu" "-DNPUCC_RUNTIME_ATTR=__attribute__((section(\".bss.npu_state\")))" \
       "$xe/npu/$f.c" -o "$xe/$f.o" 2>> "$xe/rs.log" || rs=1
  done
  if [ "$rs" = 0 ] && objdump -t "$xe"/npucc_stream.o "$xe"/npucc_hal.o "$xe"/npucc_npu.o > "$xe/rs.sym" \
     && [ "$(grep -Ec ' O \.bss\.npu_state' "$xe/rs.sym")" -ge 9 ] \
     && ! grep -E ' O (\.data|\.bss)([. ]|$)' "$xe/rs.sym" | grep -Ev '\.bss\.npu_state|\.data\.rel\.ro' | grep -q .; then
    ok "NPUCC_RUNTIME_ATTR places the runtime's $(grep -Ec ' O \.bss\.npu_state' "$xe/rs.sym") writable statics (.bss.npu_state), none left in .data/.bss"
  else bad "NPUCC_RUNTIME_ATTR:"; cat "$xe/rs.log" 2>/dev/null | head -5; grep -E ' O (\.data|\.bss)' "$xe/rs.sym" | head -5 | sed 's/^/    /'; fi
  # npucc check's harness with the caller's arena, under strict flags.
  if "$npucc" check "$m" --target npu-default --arena external --keep "$xe/kept" \
       --cflags "-O2 -std=c99 -Wall -Wextra -Werror -pedantic" > "$xe/check.log" 2>&1 \
     && grep -q "rc = model_init(&ctx, arena, MODEL_ARENA_BYTES);" "$xe/kept/npucc_check_main.c" \
     && grep -q "^int model_init(" "$xe/kept/model.c" \
     && "$npucc" check "$m" --target cpu --arena external > "$xe/check2.log" 2>&1; then
    ok "npucc check --arena external passes on npu-default (strict flags) and cpu"
  else bad "npucc check --arena external:"; tail -5 "$xe/check.log" "$xe/check2.log" | sed 's/^/    /'; fi
else
  bad "--arena external compiles:"; tail -5 "$xe/log" | sed 's/^/    /'
fi

# The NPU constant blob starts at the alignment the NPU reads it at: npu-sysmem's conv reads
# weights from system memory at 64-byte aligned offsets (npu-align's DMA moves 64-byte
# aligned blocks). Without NPUCC_ALIGNED on its type the blob is only long-double aligned
# (8 on Arm EABI, 16 on the host).
al="$tmp/align"
mkdir -p "$al"
for t in npu-sysmem npu-align; do
  if ! "$npucc" "$m/model.onnx" -o "$al/$t" --target "$src/test/target/$t.json" > "$al/$t.log" 2>&1; then
    bad "$t: compile"; tail -3 "$al/$t.log" | sed 's/^/    /'; continue
  fi
  cat > "$al/$t/align_check.c" <<'EOF_ALIGN'
#include <stdint.h>
#include <stdio.h>
#include "model_weights.h"
_Static_assert(_Alignof(model_w_npu_const_t) == MODEL_NPU_CONST_ALIGN, "blob type alignment");
int main(void) {
  uintptr_t a = (uintptr_t)&model_w_npu_const;
  printf("align %d offset %lu\n", MODEL_NPU_CONST_ALIGN, (unsigned long)(a % MODEL_NPU_CONST_ALIGN));
  return MODEL_NPU_CONST_ALIGN == 64 && a % MODEL_NPU_CONST_ALIGN == 0 ? 0 : 1;
}
EOF_ALIGN
  for cc in gcc clang; do
    if (cd "$al/$t" && "$cc" -std=c99 $warn -c model_weights.c -o w.o \
          && "$cc" -std=c11 $warn align_check.c w.o -o align_check && ./align_check) > "$al/run" 2>&1; then
      ok "$t ($cc): the NPU constant blob is ${cc}-aligned to MODEL_NPU_CONST_ALIGN ($(cat "$al/run"))"
    else bad "$t ($cc): NPU constant blob alignment:"; tail -3 "$al/run" | sed 's/^/    /'; fi
  done
done
if command -v arm-none-eabi-gcc > /dev/null && [ -f "$al/npu-sysmem/model_weights.c" ] \
   && arm-none-eabi-gcc -std=c99 $warn -mcpu=cortex-m4 -mthumb -c "$al/npu-sysmem/model_weights.c" \
        -o "$al/w_m4.o" 2> "$al/m4.log" \
   && arm-none-eabi-readelf -S -W "$al/w_m4.o" | grep -E '\.rodata' | awk '{print $NF}' | grep -qx 64; then
  ok "npu-sysmem (arm-none-eabi-gcc): the blob's section is 64-byte aligned on Cortex-M4"
else bad "npu-sysmem (arm-none-eabi-gcc): blob section alignment"; cat "$al/m4.log" 2>/dev/null | head -3; fi

echo "out_component: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
