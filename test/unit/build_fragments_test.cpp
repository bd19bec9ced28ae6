//===- build_fragments_test.cpp - OUT/<prefix>.cmake, .mk and README.md ---===//
//
// The fragments list the library's sources (not the test program), OUT/ as
// the include directory and libm only when a source includes <math.h>; the
// simulator block only for programs with NPU commands; README.md states the
// arena and weight bytes and only the macros the files use. Re-runs are
// byte-identical (test/e2e/out_component_test.sh builds through them).
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/BuildFragments.h"

#include <gtest/gtest.h>

using namespace npucc;
using codegen::EmittedFile;

namespace {

lir::Program program(bool npu) {
  lir::Program p;
  p.modelName = "tiny";
  p.inputs.push_back({"x", ir::DType::F32, {1, 4}});
  p.outputs.push_back({"y", ir::DType::I8, {1, 2}});
  p.arenaSize = 4096;
  p.constants.push_back({"w", ir::Tensor::fromFloats({3}, {1, 2, 3}), false});
  if (npu) {
    p.constants.push_back({"npu_const", ir::Tensor::fromInts(ir::DType::I8, {20}, {}), true});
    lir::Instr in;
    in.opcode = "npu";
    p.body.push_back(in);
  }
  return p;
}

std::vector<EmittedFile> outFiles(bool math, bool npu) {
  std::vector<EmittedFile> f = {
      {"kws.h", "/* api */"},
      {"kws.c",
       std::string("#include <string.h>\n#ifndef NPUCC_ARENA_ATTR\nNPUCC_LAYER_HOOK(0, k)\n") +
           (npu ? "NPUCC_NPU_LAYER_HOOK(0, \"c (Conv)\")\n" : "")},
      {"kws_weights.c", npu ? "NPUCC_NPU_CONST_ATTR" : ""},
      {"kws_weights.h", ""},
      {"npucc_act.c", math ? "#include <math.h>\n" : "\n"},
      {"kws_test.c", "#include <math.h>\nint main(void) { return 0; }\n"},
      {"report.json", "{}"}};
  return f;
}

const std::string &file(const std::vector<EmittedFile> &fs, const std::string &path) {
  static const std::string none;
  for (const EmittedFile &f : fs)
    if (f.path == path)
      return f.contents;
  ADD_FAILURE() << "no " << path;
  return none;
}

codegen::FragmentOptions options(const std::string &target) {
  codegen::FragmentOptions o;
  o.prefix = "kws";
  o.version = "9.9";
  o.target = target;
  if (target != "cpu")
    o.regsHeader = "npu_default_regs.h";
  return o;
}

} // namespace

TEST(BuildFragments, CMakeLibraryNamedAfterThePrefix) {
  auto fs = codegen::emitBuildFragments(program(false), outFiles(true, false), options("cpu"));
  ASSERT_EQ(fs.size(), 3u);
  const std::string &c = file(fs, "kws.cmake");
  EXPECT_NE(c.find("add_library(kws STATIC ${KWS_SRCS})"), std::string::npos) << c;
  EXPECT_NE(c.find("\"${KWS_NPUCC_DIR}/kws.c\""), std::string::npos);
  // A runtime file is not a model source: npucc_runtime gets it (once for all fragments).
  EXPECT_EQ(c.find("\"${KWS_NPUCC_DIR}/npucc_act.c\""), std::string::npos);
  EXPECT_NE(c.find("npucc_runtime_file(\"${KWS_NPUCC_DIR}\" npucc_act.c "), std::string::npos);
  EXPECT_NE(c.find("target_link_libraries(kws PUBLIC npucc_runtime)"), std::string::npos);
  EXPECT_EQ(c.find("/kws_test.c\"\n    "), std::string::npos); // not a library source
  EXPECT_NE(c.find("set(KWS_TEST_SRC \"${KWS_NPUCC_DIR}/kws_test.c\")"), std::string::npos);
  EXPECT_NE(c.find("target_include_directories(kws PUBLIC \"${KWS_NPUCC_DIR}\")"),
            std::string::npos);
  EXPECT_NE(c.find("target_link_libraries(kws PUBLIC m)"), std::string::npos);
  EXPECT_EQ(c.find("NPUCC_HAL_SIM"), std::string::npos); // no NPU commands: no simulator
  EXPECT_EQ(c.find("report.json"), std::string::npos);
}

TEST(BuildFragments, LibmOnlyWhenASourceIncludesMath) {
  // The test program includes <math.h> too, but it is not part of the library.
  auto fs = codegen::emitBuildFragments(program(false), outFiles(false, false), options("cpu"));
  EXPECT_EQ(file(fs, "kws.cmake").find("PUBLIC m)"), std::string::npos);
  EXPECT_NE(file(fs, "kws.mk").find("\nKWS_LDLIBS :=\n"), std::string::npos);
  EXPECT_NE(file(fs, "README.md").find("libm: not needed"), std::string::npos);
  auto withMath =
      codegen::emitBuildFragments(program(false), outFiles(true, false), options("cpu"));
  EXPECT_NE(file(withMath, "kws.mk").find("\nKWS_LDLIBS := -lm\n"), std::string::npos);
}

TEST(BuildFragments, MakeVariables) {
  auto fs =
      codegen::emitBuildFragments(program(true), outFiles(true, true), options("npu-default"));
  const std::string &m = file(fs, "kws.mk");
  EXPECT_NE(m.find("KWS_NPUCC_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("KWS_SRCS := \\\n    $(KWS_NPUCC_DIR)/kws.c \\\n"), std::string::npos) << m;
  EXPECT_NE(m.find("KWS_HDRS := \\\n    $(KWS_NPUCC_DIR)/kws.h \\\n"), std::string::npos) << m;
  EXPECT_NE(m.find("KWS_CFLAGS := -I$(KWS_NPUCC_DIR)\n"), std::string::npos);
  EXPECT_NE(m.find("KWS_TEST_SRC := $(KWS_NPUCC_DIR)/kws_test.c\n"), std::string::npos);
  // NPU commands: the simulator block (host runs) in both fragments.
  EXPECT_NE(m.find("KWS_CFLAGS += -DNPUCC_HAL_SIM -I$(KWS_SIM_DIR)"), std::string::npos);
  EXPECT_NE(
      file(fs, "kws.cmake").find("target_compile_definitions(npucc_runtime PUBLIC NPUCC_HAL_SIM)"),
      std::string::npos);
}

TEST(BuildFragments, ReadmeStatesApiMemoryAndUsedMacros) {
  auto cpu = codegen::emitBuildFragments(program(false), outFiles(true, false), options("cpu"));
  const std::string &r = file(cpu, "README.md");
  EXPECT_NE(r.find("int kws_run(const void *const inputs[], void *const outputs[]);"),
            std::string::npos);
  EXPECT_NE(r.find("| input 0 | `x` | f32 | 1x4 | 16 (`KWS_INPUT0_BYTES`) |"), std::string::npos)
      << r;
  EXPECT_NE(r.find("| output 0 | `y` | i8 | 1x2 | 2 (`KWS_OUTPUT0_BYTES`) |"), std::string::npos)
      << r;
  EXPECT_NE(r.find("| 4096 (`KWS_ARENA_BYTES`) | RAM, section `NPUCC_ARENA_ATTR` |"),
            std::string::npos);
  EXPECT_NE(r.find("| 12 (`KWS_WEIGHT_BYTES`) | flash (const) |"), std::string::npos) << r;
  EXPECT_NE(r.find("`NPUCC_LAYER_HOOK(index, kernel)`"), std::string::npos);
  EXPECT_EQ(r.find("NPUCC_NPU_CONST_ATTR"), std::string::npos); // no NPU constants
  EXPECT_EQ(r.find("NPUCC_HAL_SIM"), std::string::npos);
  auto npu =
      codegen::emitBuildFragments(program(true), outFiles(true, true), options("npu-default"));
  const std::string &n = file(npu, "README.md");
  EXPECT_NE(n.find("the 20 bytes the NPU reads: section `NPUCC_NPU_CONST_ATTR`"), std::string::npos)
      << n;
  EXPECT_NE(n.find("npucc --target npu-default --emit-runtime SIM --with-sim"), std::string::npos);
  EXPECT_NE(n.find("`NPU_DEFAULT_BASE_ADDRESS` in `npu_default_regs.h`"), std::string::npos);
  EXPECT_NE(n.find("-DNPUCC_HAL_SIM"), std::string::npos);
  EXPECT_NE(n.find("`NPUCC_NPU_LAYER_HOOK(index, layer)`"), std::string::npos);
  EXPECT_EQ(r.find("NPUCC_NPU_LAYER_HOOK"), std::string::npos); // no NPU layers
}

TEST(BuildFragments, Deterministic) {
  auto a = codegen::emitBuildFragments(program(true), outFiles(true, true), options("npu-default"));
  auto b = codegen::emitBuildFragments(program(true), outFiles(true, true), options("npu-default"));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].path, b[i].path);
    EXPECT_EQ(a[i].contents, b[i].contents);
  }
}

TEST(BuildFragments, SharedRuntimeListedOnceWithItsHash) {
  // Several models in one image: the model's files (<prefix>*) are its sources; every
  // other source or header is a shared runtime file, listed with a hash of its contents
  // so that fragments of different npucc versions or NPU targets stop the build.
  auto fs =
      codegen::emitBuildFragments(program(true), outFiles(true, true), options("npu-default"));
  const std::string &m = file(fs, "kws.mk");
  EXPECT_NE(
      m.find("KWS_SRCS := \\\n    $(KWS_NPUCC_DIR)/kws.c \\\n    $(KWS_NPUCC_DIR)/kws_weights.c\n"),
      std::string::npos)
      << m;
  size_t at = m.find("$(call npucc_runtime_file,$(KWS_NPUCC_DIR),npucc_act.c,");
  ASSERT_NE(at, std::string::npos) << m;
  std::string hash = m.substr(at + 55, 16);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos) << hash;
  EXPECT_NE(m.find("$(eval NPUCC_RUNTIME_SRCS += $(1)/$(2))"), std::string::npos);
  EXPECT_NE(file(fs, "kws.cmake")
                .find("npucc_runtime_file(\"${KWS_NPUCC_DIR}\" npucc_act.c " + hash + ")"),
            std::string::npos);
  // Other contents, another hash; a model with no runtime source does not link npucc_runtime.
  std::vector<EmittedFile> other = outFiles(true, true);
  for (EmittedFile &f : other)
    if (f.path == "npucc_act.c")
      f.contents += "/* changed */\n";
  auto fs2 = codegen::emitBuildFragments(program(true), other, options("npu-default"));
  EXPECT_EQ(file(fs2, "kws.mk").find("npucc_act.c," + hash), std::string::npos);
  std::vector<EmittedFile> own = {{"kws.h", ""}, {"kws.c", ""}, {"npucc_types.h", "x"}};
  auto fs3 = codegen::emitBuildFragments(program(false), own, options("cpu"));
  EXPECT_EQ(file(fs3, "kws.cmake").find("PUBLIC npucc_runtime"), std::string::npos);
  EXPECT_NE(file(fs3, "kws.cmake").find("npucc_runtime_file(\"${KWS_NPUCC_DIR}\" npucc_types.h "),
            std::string::npos);
}

TEST(BuildFragments, ReadmeOfTheExternalArena) {
  codegen::FragmentOptions o = options("npu-default");
  o.externalArena = true;
  const std::string r =
      file(codegen::emitBuildFragments(program(true), outFiles(true, true), o), "README.md");
  EXPECT_NE(r.find("int kws_init(kws_ctx *ctx, void *arena, size_t arena_bytes);"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("`KWS_ERR_ARENA_ALIGN` (-18)"), std::string::npos);
  EXPECT_NE(r.find("(the caller's, given to `kws_init`) | 4096 (`KWS_ARENA_BYTES`), aligned to 16"),
            std::string::npos);
  EXPECT_NE(r.find("`NPUCC_STREAM_ATTR`"), std::string::npos);
  EXPECT_EQ(r.find("It uses one static arena"), std::string::npos);
}
