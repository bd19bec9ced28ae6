//===- BuildFragments.cpp - <prefix>.cmake, <prefix>.mk, README.md --------===//
//
// OUT/ as a component: the CMake and Make fragments list the model's own
// sources (<prefix>.c, <prefix>_weights.c), its include directory (OUT/
// itself) and libm when a source includes <math.h>, and the shared runtime
// files with a hash of each, so that several OUT/ folders build each runtime
// file once (CMake: library npucc_runtime; Make: NPUCC_RUNTIME_SRCS); with
// <PREFIX>_SIM_DIR set to an `npucc --emit-runtime DIR --with-sim` folder they
// add the simulator's sources and NPUCC_HAL_SIM for a host run. README.md is
// written from the same facts (the header's API, the arena and weight bytes,
// the section macros the generated files actually use).
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/BuildFragments.h"

#include "CText.h"

#include <algorithm>

namespace npucc::codegen {

using namespace ctext;

namespace {

bool endsWith(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool contains(const std::vector<EmittedFile> &files, const std::string &path,
              const std::string &text) {
  for (const EmittedFile &f : files)
    if (f.path == path)
      return f.contents.find(text) != std::string::npos;
  return false;
}

std::string shapeText(const lir::IOBuffer &b) {
  std::string s;
  for (size_t k = 0; k < b.shape.size(); ++k)
    s += (k ? "x" : "") + std::to_string(b.shape[k]);
  return s.empty() ? "scalar" : s;
}

/// Markdown table cell text: no '|' or newline breaks the row.
std::string cell(const std::string &s) {
  std::string r;
  for (char c : s)
    r += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return r;
}

/// FNV-1a (64 bits) of a file's contents: the fragments compare shared
/// runtime files across OUT/ folders by it.
std::string contentHash(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char digits[] = "0123456789abcdef";
  std::string r(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4)
    r[size_t(i)] = digits[h & 15];
  return r;
}

/// A file of the shared runtime (kernels, HAL, target table): not named
/// after the prefix, the same in every OUT/ of one npucc version and target.
struct RuntimeFile {
  std::string name, hash;
};

/// What the fragments and the README are written from.
struct Component {
  std::string prefix, upper, version, target, regsHeader;
  std::vector<std::string> sources, headers; // the model's own files (<prefix>*)
  std::vector<RuntimeFile> runtime;          // the shared runtime files, sorted
  std::string testProgram;                   // "<prefix>_test.c" when OUT/ has it
  bool libm = false, npu = false;
  bool arenaAttr = false, npuConstAttr = false, layerHook = false, npuLayerHook = false;
  bool runtimeSources() const {
    for (const RuntimeFile &r : runtime)
      if (endsWith(r.name, ".c"))
        return true;
    return false;
  }
};

const char *const SharedNote =
    "# Several models in one image: the model's own files are named after its prefix; the\n"
    "# runtime files (kernels, HAL, target table) are the same in every OUT/ of one npucc\n"
    "# version and NPU target and are built once for all included fragments";

std::string cmakeFragment(const Component &c) {
  const std::string &P = c.upper;
  std::string s = "# " + c.prefix + ".cmake - CMake fragment of the npucc output folder (npucc " +
                  c.version + ", target " + c.target + "). Generated file: do not edit.\n";
  s += "#\n#   include(path/to/OUT/" + c.prefix +
       ".cmake)\n"
       "#   target_link_libraries(app PRIVATE " +
       c.prefix +
       ")\n#\n"
       "# defines the STATIC library target '" +
       c.prefix + "' (C99, the model's files) with OUT/ as its public include directory";
  s += c.libm ? " and libm (m) as a public link library.\n" : ".\n";
  s += std::string(SharedNote) +
       ": the first fragment\n# defines the STATIC library 'npucc_runtime', each adds the "
       "runtime sources it needs\n# that are not in it yet and stops if a file differs from "
       "the copy already added.\n";
  if (c.npu)
    s += "# For a host run on the NPU simulator, set " + P +
         "_SIM_DIR to a folder written by\n#   npucc --target " + c.target +
         " --emit-runtime DIR --with-sim\n# before the include: npucc_runtime then also builds "
         "DIR/npucc_sim*.c and defines NPUCC_HAL_SIM\n# (public, so that the program attaching "
         "the simulator sees it too).\n";
  s += "# Definitions: none are needed; the section macros (README.md) can be added with\n"
       "#   target_compile_definitions(" +
       c.prefix + " PRIVATE \"NPUCC_ARENA_ATTR=...\")\n";
  s += "include_guard(GLOBAL)\nif(CMAKE_VERSION VERSION_LESS 3.11)\n  message(FATAL_ERROR "
       "\"npucc: " +
       c.prefix + ".cmake needs CMake 3.11 or later\")\nendif()\n";
  s += "set(" + P + "_NPUCC_DIR \"${CMAKE_CURRENT_LIST_DIR}\")\n";
  s += "set(" + P + "_SRCS\n";
  for (const std::string &f : c.sources)
    s += "    \"${" + P + "_NPUCC_DIR}/" + f + "\"\n";
  s += ")\n";
  if (!c.testProgram.empty())
    s += "# The test program (a main with embedded inputs and golden outputs; not in the "
         "library).\nset(" +
         P + "_TEST_SRC \"${" + P + "_NPUCC_DIR}/" + c.testProgram + "\")\n";
  s += "add_library(" + c.prefix + " STATIC ${" + P + "_SRCS})\n";
  s += "target_include_directories(" + c.prefix + " PUBLIC \"${" + P + "_NPUCC_DIR}\")\n";
  s += "set_target_properties(" + c.prefix + " PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)\n";
  s += "# The shared runtime: a file is added once (global property NPUCC_RUNTIME_<name>: its\n"
       "# hash and folder); the same name with other contents stops the configuration.\n";
  s += "function(npucc_runtime_file dir name hash)\n"
       "  get_property(seen GLOBAL PROPERTY \"NPUCC_RUNTIME_${name}\")\n"
       "  if(NOT seen)\n"
       "    set_property(GLOBAL PROPERTY \"NPUCC_RUNTIME_${name}\" \"${hash} ${dir}\")\n"
       "    if(name MATCHES \"\\\\.c$\")\n"
       "      if(NOT TARGET npucc_runtime)\n"
       "        add_library(npucc_runtime STATIC)\n"
       "        set_target_properties(npucc_runtime PROPERTIES C_STANDARD 99 "
       "C_STANDARD_REQUIRED ON)\n"
       "      endif()\n"
       "      target_sources(npucc_runtime PRIVATE \"${dir}/${name}\")\n"
       "    endif()\n"
       "  elseif(NOT seen MATCHES \"^${hash} \")\n"
       "    string(REGEX REPLACE \"^[0-9a-f]+ \" \"\" other \"${seen}\")\n"
       "    message(FATAL_ERROR \"npucc: ${dir}/${name} differs from ${other}/${name}: these "
       "output folders come from different npucc versions or NPU targets and cannot share "
       "one image\")\n"
       "  endif()\n"
       "endfunction()\n";
  for (const RuntimeFile &r : c.runtime)
    s += "npucc_runtime_file(\"${" + P + "_NPUCC_DIR}\" " + r.name + " " + r.hash + ")\n";
  if (c.runtimeSources())
    s += "target_link_libraries(" + c.prefix + " PUBLIC npucc_runtime)\n";
  if (c.libm)
    s += "target_link_libraries(" + c.prefix + " PUBLIC m)\n";
  if (c.npu) {
    s += "if(" + P + "_SIM_DIR)\n";
    s += "  file(GLOB " + P + "_SIM_SRCS \"${" + P + "_SIM_DIR}/npucc_sim*.c\")\n";
    s += "  list(SORT " + P + "_SIM_SRCS)\n";
    s += "  if(NOT " + P + "_SIM_SRCS)\n    message(FATAL_ERROR \"" + P + "_SIM_DIR '${" + P +
         "_SIM_DIR}' has no npucc_sim*.c (npucc --target " + c.target +
         " --emit-runtime DIR --with-sim writes them)\")\n  endif()\n";
    s += "  get_property(" + P + "_SIM_SEEN GLOBAL PROPERTY NPUCC_RUNTIME_SIM)\n";
    s += "  if(NOT " + P + "_SIM_SEEN)\n";
    s += "    set_property(GLOBAL PROPERTY NPUCC_RUNTIME_SIM \"${" + P + "_SIM_DIR}\")\n";
    s += "    if(NOT TARGET npucc_runtime)\n      add_library(npucc_runtime STATIC)\n"
         "      target_link_libraries(" +
         c.prefix + " PUBLIC npucc_runtime)\n    endif()\n";
    s += "    target_sources(npucc_runtime PRIVATE ${" + P + "_SIM_SRCS})\n";
    s += "    target_include_directories(npucc_runtime PUBLIC \"${" + P + "_SIM_DIR}\")\n";
    s += "    target_compile_definitions(npucc_runtime PUBLIC NPUCC_HAL_SIM)\n";
    s += "  endif()\n";
    s += "endif()\n";
  }
  return s;
}

std::string makeFragment(const Component &c) {
  const std::string &P = c.upper;
  std::string s = "# " + c.prefix + ".mk - Make fragment of the npucc output folder (npucc " +
                  c.version + ", target " + c.target + "). Generated file: do not edit.\n";
  s += "#\n#   include path/to/OUT/" + c.prefix +
       ".mk\n"
       "#   app: main.c $(" +
       P +
       "_SRCS) $(NPUCC_RUNTIME_SRCS)\n"
       "#   \t$(CC) -std=c99 $(CFLAGS) $(" +
       P + "_CFLAGS) -o $@ $^ $(" + P + "_LDLIBS)\n#\n";
  s += "# " + P + "_SRCS: the model's C sources (C99); " + P +
       "_CFLAGS: include flags (and\n# "
       "definitions); " +
       P + "_LDLIBS: libraries to link after the objects.\n";
  s += std::string(SharedNote) +
       ":\n# NPUCC_RUNTIME_SRCS lists each runtime source once for all included fragments "
       "(build it\n# with any of their _CFLAGS); a file that differs from the copy already "
       "listed stops make.\n";
  if (c.npu)
    s += "# For a host run on the NPU simulator, set " + P +
         "_SIM_DIR to a folder written by\n#   npucc --target " + c.target +
         " --emit-runtime DIR --with-sim\n# before the include: it adds DIR/npucc_sim*.c to "
         "NPUCC_RUNTIME_SRCS (once), -IDIR and\n# -DNPUCC_HAL_SIM to " +
         P + "_CFLAGS and NPUCC_RUNTIME_CFLAGS.\n";
  s += P + "_NPUCC_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))\n";
  s += P + "_SRCS :=";
  for (const std::string &f : c.sources)
    s += " \\\n    $(" + P + "_NPUCC_DIR)/" + f;
  s += "\n" + P + "_HDRS :=";
  for (const std::string &f : c.headers)
    s += " \\\n    $(" + P + "_NPUCC_DIR)/" + f;
  s += "\n";
  if (!c.testProgram.empty())
    s += P + "_TEST_SRC := $(" + P + "_NPUCC_DIR)/" + c.testProgram + "\n";
  s += P + "_CFLAGS := -I$(" + P + "_NPUCC_DIR)\n";
  s += P + "_LDLIBS :=" + std::string(c.libm ? " -lm" : "") + "\n";
  s += "# $(call npucc_runtime_file,DIR,NAME,HASH): lists DIR/NAME (a .c file) in\n"
       "# NPUCC_RUNTIME_SRCS unless NAME is listed already; stops if that copy has another "
       "hash.\n";
  s += "npucc_runtime_file = $(if $(NPUCC_RUNTIME_$(2)),$(if $(filter $(3),$(NPUCC_RUNTIME_$(2)))"
       ",,$(error npucc: $(1)/$(2) differs from the copy another included npucc fragment "
       "listed: these output folders come from different npucc versions or NPU targets and "
       "cannot share one image)),$(eval NPUCC_RUNTIME_$(2) := $(3))$(if $(filter %.c,$(2)),"
       "$(eval NPUCC_RUNTIME_SRCS += $(1)/$(2))))\n";
  s += "NPUCC_RUNTIME_SRCS +=\nNPUCC_RUNTIME_CFLAGS +=\n";
  for (const RuntimeFile &r : c.runtime)
    s += "$(call npucc_runtime_file,$(" + P + "_NPUCC_DIR)," + r.name + "," + r.hash + ")\n";
  if (c.npu) {
    s += "ifneq ($(" + P + "_SIM_DIR),)\n";
    s += P + "_SIM_SRCS := $(sort $(wildcard $(" + P + "_SIM_DIR)/npucc_sim*.c))\n";
    s += "ifeq ($(" + P + "_SIM_SRCS),)\n$(error " + P + "_SIM_DIR '$(" + P +
         "_SIM_DIR)' has no npucc_sim*.c (npucc --target " + c.target +
         " --emit-runtime DIR --with-sim writes them))\nendif\n";
    s += "ifeq ($(NPUCC_RUNTIME_SIM),)\n";
    s += "NPUCC_RUNTIME_SIM := $(" + P + "_SIM_DIR)\n";
    s += "NPUCC_RUNTIME_SRCS += $(" + P + "_SIM_SRCS)\n";
    s += "NPUCC_RUNTIME_CFLAGS += -DNPUCC_HAL_SIM -I$(" + P + "_SIM_DIR)\n";
    s += "endif\n";
    s += P + "_CFLAGS += -DNPUCC_HAL_SIM -I$(" + P + "_SIM_DIR)\n";
    s += "endif\n";
  }
  return s;
}

/// OUT/README.md: how a failed NPU run tells where its command stream stopped.
const char *const npuFaultText =
    "When an NPU layer fails, `npucc_stream_last_fault()` (`npucc_stream.h`) tells where its "
    "command stream stopped until the next run: `op` (from the layer's first command), the "
    "command kind, the parameter the command layer refused with its value (`NPUCC_ERR_RANGE`, "
    "`_ALIGN`, `_PARAM`, `_UNSUPPORTED`), or the engine and code of a device error; "
    "`npucc_stream_fault_names(NPUCC_TARGET, f, &command, &param, &reg, &field)` names them "
    "(`npucc_target.h`). The test program prints them.\n\n";

std::string readme(const lir::Program &p, const Component &c, const FragmentOptions &o) {
  const std::string &P = c.upper, &pre = c.prefix;
  int64_t weights = 0, npuWeights = 0;
  for (const lir::ConstBuffer &k : p.constants) {
    weights += int64_t(k.data.byteSize());
    if (k.npu)
      npuWeights += int64_t(k.data.byteSize());
  }
  std::string s = "# " + pre + ": the model " + cell(cString(p.modelName)) +
                  ", compiled by npucc " + c.version + "\n\n";
  s += "Generated by npucc for the target `" + c.target +
       "`: do not edit. Every file npucc wrote is listed in `.npucc-files`; a recompile into "
       "this folder replaces exactly those files and refuses the folder if it holds anything "
       "else. All code is C99 for a CPU without an OS (no malloc, no printf outside the test "
       "program)" +
       std::string(c.npu ? "; NPU commands run through the HAL (`npucc_hal.c`)" : "") + ".\n\n";

  s += "## API (`" + pre + ".h`)\n\n";
  if (o.externalArena) {
    s += "    #include \"" + pre + ".h\"\n    int " + pre + "_init(" + pre +
         "_ctx *ctx, void *arena, size_t arena_bytes);\n    int " + pre + "_run(" + pre +
         "_ctx *ctx, const void *const inputs[], void *const outputs[]);\n    int " + pre +
         "_last_error(const " + pre + "_ctx *ctx, int32_t *layer, const char **layer_name);\n\n";
    s += "Compiled with `--arena external`: the caller owns the context and the arena (at least "
         "`" +
         P + "_ARENA_BYTES` bytes, aligned to `" + P + "_ARENA_ALIGN`). `" + pre +
         "_init` checks the arena" +
         std::string(c.npu ? " and initialises the NPU's HAL once" : "") + "; `" + pre +
         "_run` runs the model once: `inputs[i]` points to the input's bytes (read only), "
         "`outputs[i]` to a buffer that receives the output (densely packed, row-major, aligned "
         "for the element type). Both return `NPUCC_OK` (0) or a negative code: `" +
         P + "_ERR_ARGUMENT` (-16, a null pointer), `" + P + "_ERR_ARENA_SIZE` (-17), `" + P +
         "_ERR_ARENA_ALIGN` (-18), `" + P + "_ERR_NOT_READY` (-19, no successful init)" +
         std::string(c.npu ? ", or the NPU runtime's -1 to -6 (`npucc_hal.h`)" : "") + "; `" + pre +
         "_last_error` returns the last code and the failing layer's index and name.\n\n";
    if (c.npu)
      s += npuFaultText;
  } else {
    s += "    #include \"" + pre + ".h\"\n    int " + pre +
         "_run(const void *const inputs[], void *const outputs[]);\n\n";
    s += "Runs the model once: `inputs[i]` points to the input's bytes (read only), `outputs[i]` "
         "to a buffer that receives the output; elements are densely packed in row-major order "
         "and buffers should be aligned for their element type. Returns `NPUCC_OK` (0), or a "
         "negative `NPUCC_ERR_*` code" +
         std::string(c.npu ? " (`npucc_hal.h`: the NPU refused a command or timed out)" : "") +
         ". It uses one static arena: not reentrant.\n\n";
    if (c.npu)
      s += npuFaultText;
  }
  s += "| | name | type | shape | bytes |\n|---|---|---|---|---|\n";
  auto row = [&](const char *what, size_t i, const lir::IOBuffer &b) {
    std::string macro =
        P + "_" + (what[0] == 'i' ? "INPUT" : "OUTPUT") + std::to_string(i) + "_BYTES";
    s += "| " + std::string(what) + " " + std::to_string(i) + " | `" + cell(b.name) + "` | " +
         ir::dtypeName(b.dtype) + " | " + shapeText(b) + " | " +
         std::to_string(ir::Tensor::byteSizeOf(b.dtype, b.shape)) + " (`" + macro + "`) |\n";
  };
  for (size_t i = 0; i < p.inputs.size(); ++i)
    row("input", i, p.inputs[i]);
  for (size_t i = 0; i < p.outputs.size(); ++i)
    row("output", i, p.outputs[i]);
  s += "\n`" + P + "_NUM_INPUTS`, `" + P + "_NUM_OUTPUTS`, and at run time `" + pre +
       "_inputs[]` / `" + pre + "_outputs[]` (`npucc_tensor_info`: name, type, shape, bytes).\n\n";

  s += "## Memory\n\n| what | bytes | where |\n|---|---|---|\n";
  if (o.externalArena)
    s += "| arena: activations and scratch (the caller's, given to `" + pre + "_init`) | " +
         std::to_string(p.arenaSize) + " (`" + P + "_ARENA_BYTES`), aligned to " +
         std::to_string(p.arenaAlign) + " (`" + P +
         "_ARENA_ALIGN`) | RAM, where the caller "
         "puts it |\n";
  else
    s += "| arena: activations and scratch (static, in `" + pre + ".c`) | " +
         std::to_string(p.arenaSize) + " (`" + P + "_ARENA_BYTES`) | RAM" +
         (c.arenaAttr ? ", section `NPUCC_ARENA_ATTR`" : "") + " |\n";
  s += "| weights: constant tensors (`" + pre + "_weights.c`) | " + std::to_string(weights) +
       " (`" + P + "_WEIGHT_BYTES`) | flash (const)";
  if (npuWeights > 0)
    s += "; the " + std::to_string(npuWeights) +
         " bytes the NPU reads: section "
         "`NPUCC_NPU_CONST_ATTR`";
  s += " |\n";
  if (c.npu)
    s += "| NPU command stream tables (" + std::to_string(o.npuCommands) + " commands) | " +
         std::to_string(o.npuStreamBytes) + " | flash (const) |\n";
  s += "\nCode, small tables and stack are not counted here; `report.json` has the compile's "
       "figures.\n\n";

  s += "## Section and hook macros\n\nDefined on the compiler's command line (or in a header "
       "forced with `-include`); each is empty unless defined.\n\n";
  if (c.arenaAttr)
    s += "- `NPUCC_ARENA_ATTR`: attributes of the arena, e.g. "
         "`-DNPUCC_ARENA_ATTR='__attribute__((section(\".npu_ram\")))'` to place it where " +
         std::string(c.npu ? "the NPU's DMA reaches it" : "you want it") + ".\n";
  if (o.externalArena)
    s += "- `NPUCC_CONST_ATTR`: the constants the CPU reads (`" + pre +
         "_weights.c`); `NPUCC_TABLE_ATTR`: the kernel parameter and requantization tables "
         "and the tensor tables (`" +
         pre + ".c`)" +
         std::string(c.npu ? "; `NPUCC_STREAM_ATTR`: the NPU command stream tables" : "") +
         ". E.g. `-DNPUCC_CONST_ATTR='__attribute__((section(\".rodata.npucc\")))'`.\n";
  if (c.npuConstAttr)
    s += "- `NPUCC_NPU_CONST_ATTR`: attributes of the constants the NPU reads, e.g. "
         "`-DNPUCC_NPU_CONST_ATTR='__attribute__((section(\".npu_flash\")))'` in a window "
         "its DMA reaches.\n";
  if (c.layerHook)
    s += "- `NPUCC_LAYER_HOOK(index, kernel)`: called before each CPU kernel call of `" + pre +
         "_run` (e.g. to read a cycle counter per layer).\n";
  if (c.npuLayerHook)
    s += "- `NPUCC_NPU_LAYER_HOOK(index, layer)`: called before the command stream of each NPU "
         "layer (`layer`: its node name and op) and once at the end: with `NPUCC_LAYER_HOOK` "
         "it splits the run into CPU and NPU intervals.\n";
  if (c.npu)
    s += "- `NPUCC_RUNTIME_ATTR`: the runtime's own state (the command stream's parameters and "
         "last fault, the HAL's pending status bits: under 1 KiB, zero-initialised, shared by "
         "every model of the image), e.g. "
         "`-DNPUCC_RUNTIME_ATTR='__attribute__((section(\".bss.npu_state\")))'`; it must be "
         "`.bss`-like (zeroed at start-up).\n";
  if (c.npu)
    s += "- `NPUCC_DEVICE_ADDR(p)`: the NPU's address of a CPU pointer, when the NPU does "
         "not see the CPU's addresses (`npucc_hal.h`).\n";
  if (!c.testProgram.empty())
    s += "- `NPUCC_TEST_REPEAT=N`: `" + c.testProgram + "` runs the model N times.\n";
  if (!c.arenaAttr && !c.npuConstAttr && !c.layerHook && !c.npu && c.testProgram.empty() &&
      !o.externalArena)
    s += "- none in this program.\n";

  s += "\n## Flags\n\n- C99: `-std=c99` (the files build warning-free with `-Wall -Wextra "
       "-Werror -pedantic`).\n";
  s += c.libm ? "- libm: link with `-lm` (a kernel uses `<math.h>`).\n"
              : "- libm: not needed (no source includes `<math.h>`).\n";
  s += "- Firmware: compile with `-ffunction-sections -fdata-sections` and link with "
       "`-Wl,--gc-sections`: the kernel files hold more functions than this model calls.\n";
  if (c.npu)
    s += "- `-DNPUCC_HAL_SIM`: host builds only, with the simulator's sources (below).\n";

  s += "\n## Build with CMake (`" + pre + ".cmake`)\n\n";
  s += "    include(path/to/OUT/" + pre + ".cmake)   # the STATIC library target '" + pre +
       "'\n    add_executable(app main.c)\n    target_link_libraries(app PRIVATE " + pre + ")\n";
  if (!c.testProgram.empty())
    s += "    add_executable(" + pre + "_test ${" + P +
         "_TEST_SRC})   # the test program\n"
         "    target_link_libraries(" +
         pre + "_test PRIVATE " + pre + ")\n";
  s += "\n## Build with Make (`" + pre + ".mk`)\n\n";
  s += "    include path/to/OUT/" + pre + ".mk\n    app: main.c $(" + P +
       "_SRCS) $(NPUCC_RUNTIME_SRCS)\n"
       "    \t$(CC) -std=c99 $(CFLAGS) $(" +
       P + "_CFLAGS) -o $@ $^ $(" + P + "_LDLIBS)\n";
  s += "\n`" + P + "_SRCS` (sources), `" + P + "_HDRS` (headers), `" + P +
       "_CFLAGS` (`-I` "
       "this folder), `" +
       P + "_LDLIBS`" +
       (c.testProgram.empty() ? std::string() : ", `" + P + "_TEST_SRC` (the test program)") +
       "; `NPUCC_RUNTIME_SRCS`: the runtime's sources (kernels" +
       std::string(c.npu ? ", HAL, target table" : "") + "), shared by all included fragments.\n";
  s += "\n## Several models in one image\n\n"
       "Compile each model with its own `--prefix` into its own folder and include every "
       "fragment: the model files are named after the prefix, and the runtime files (kernels" +
       std::string(c.npu ? ", HAL, target table" : "") +
       ") are the same in every output folder of this npucc version and NPU target. CMake: "
       "link the program with each model's library; the runtime's sources are built once, in "
       "the library `npucc_runtime`. Make: build `$(A_SRCS) $(B_SRCS) $(NPUCC_RUNTIME_SRCS)`. "
       "Either stops with a message when two folders hold different copies of a runtime file "
       "(different npucc versions, or two NPU targets).\n";

  s += "\n## Run on the host\n\n";
  if (c.npu) {
    s +=
        "The NPU commands run on the target's simulator:\n\n"
        "    npucc --target " +
        c.target +
        " --emit-runtime SIM --with-sim\n\n"
        "then set `" +
        P +
        "_SIM_DIR` to `SIM` (an absolute path for CMake) before including "
        "a fragment: it adds `SIM/npucc_sim*.c`, `-ISIM` and `-DNPUCC_HAL_SIM` (only those: "
        "the HAL and target files of `SIM` are the ones in this folder). The program creates "
        "and attaches the simulator before `" +
        pre +
        "_run`:\n\n"
        "    npucc_sim *sim = npucc_sim_create(NPUCC_TARGET);   /* npucc_sim.h, npucc_target.h */\n"
        "    npucc_sim_attach(sim);\n"
        "    npucc_hal_set_wait_hook(npucc_sim_wfi_hook, sim);  /* npucc_hal.h */\n\n"
        "and after the run, `npucc_sim_failed(sim)` / `npucc_sim_error(sim)` tell whether the "
        "simulator found a hazard.";
    if (!c.testProgram.empty())
      s += " `" + c.testProgram + "` does all this when built with `-DNPUCC_HAL_SIM`.";
    s += " `npucc check` does the same with golden data.\n";
  } else {
    s += "Every op runs on the CPU kernels: build the sources with any C99 compiler and run "
         "(`npucc check` does so with golden data).\n";
  }

  s += "\n## Run on silicon\n\n";
  if (c.npu) {
    s += "Build without `NPUCC_HAL_SIM`: the HAL accesses the NPU's registers by volatile "
         "MMIO at the description's base address";
    if (!c.regsHeader.empty()) {
      std::string id = c.regsHeader.substr(0, c.regsHeader.size() - 7);
      s += " (`" + upper(id) + "_BASE_ADDRESS` in `" + c.regsHeader +
           "`, the register map for reading)";
    }
    s += ". The NPU's DMA reads the weights and reads and writes the arena and the I/O "
         "buffers at the CPU's addresses (or `NPUCC_DEVICE_ADDR(p)`): place them in the "
         "windows the description allows with the section macros above. While it waits for "
         "the NPU the HAL polls its status registers; `npucc_hal_set_wait_hook(hook, ctx)` "
         "runs `hook` per poll (e.g. a WFI).\n";
  } else {
    s += "Cross-compile the sources for the microcontroller (no OS, no heap); `" + pre +
         "_run` needs only the arena and the stack.\n";
  }
  if (!c.testProgram.empty())
    s += "\n`" + c.testProgram +
         "` embeds inputs and golden outputs, prints the comparison and "
         "`PASS` or `FAIL` (exit status 0 or 1): build it with the library for a bring-up run.\n";
  return s;
}

} // namespace

std::vector<EmittedFile> emitBuildFragments(const lir::Program &p,
                                            const std::vector<EmittedFile> &files,
                                            const FragmentOptions &o) {
  Component c;
  c.prefix = o.prefix;
  c.upper = upper(o.prefix);
  c.version = o.version;
  c.target = o.target.empty() ? "cpu" : o.target;
  c.regsHeader = o.regsHeader;
  c.npu = p.usesNpu();
  const std::string &pre = o.prefix;
  auto own = [&](const std::string &path) {
    return path == pre + ".c" || path == pre + ".h" || path == pre + "_weights.c" ||
           path == pre + "_weights.h";
  };
  for (const EmittedFile &f : files) {
    if (f.path.find('/') != std::string::npos)
      continue; // OUT/'s own files are flat
    if (f.path == pre + "_test.c") {
      c.testProgram = f.path;
      continue;
    }
    bool src = endsWith(f.path, ".c");
    if (!src && !endsWith(f.path, ".h"))
      continue;
    c.libm = c.libm || f.contents.find("#include <math.h>") != std::string::npos;
    if (!own(f.path))
      c.runtime.push_back({f.path, contentHash(f.contents)});
    else
      (src ? c.sources : c.headers).push_back(f.path);
  }
  std::sort(c.runtime.begin(), c.runtime.end(),
            [](const RuntimeFile &a, const RuntimeFile &b) { return a.name < b.name; });
  std::sort(c.sources.begin(), c.sources.end());
  std::sort(c.headers.begin(), c.headers.end());
  c.arenaAttr = contains(files, o.prefix + ".c", "NPUCC_ARENA_ATTR");
  c.npuConstAttr = contains(files, o.prefix + "_weights.c", "NPUCC_NPU_CONST_ATTR");
  c.layerHook = contains(files, o.prefix + ".c", "NPUCC_LAYER_HOOK");
  c.npuLayerHook = contains(files, o.prefix + ".c", "NPUCC_NPU_LAYER_HOOK");
  return {{o.prefix + ".cmake", cmakeFragment(c)},
          {o.prefix + ".mk", makeFragment(c)},
          {"README.md", readme(p, c, o)}};
}

} // namespace npucc::codegen
