//===- arena_api_test.cpp - `--arena external`: init/run with a context ---===//
//
// EmitOptions::externalArena: no static arena, <prefix>_init(ctx, arena,
// bytes) checks the caller's arena, <prefix>_run(ctx, ...) returns a distinct
// code per failure and <prefix>_last_error reads it back; every constant
// table has a section macro. The emitted files are compiled with
// `cc -std=c99 -Wall -Wextra -Werror -pedantic` against a host main that
// drives every error path, and the section macros are checked in the object
// files' symbol tables. (The NPU path: test/e2e/out_component_test.sh.)
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/CEmitter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace npucc;
using namespace npucc::codegen;
using lir::BufferRef;
using lir::Region;
using npucc::ir::DType;
using npucc::ir::Tensor;
namespace fs = std::filesystem;

namespace {

const char *kKernels = R"(/* arena_kernels.h - kernels of the arena API test. */
#ifndef ARENA_KERNELS_H
#define ARENA_KERNELS_H
#include <stdint.h>
static void test_add_f32(const float *a, const float *b, float *out, int32_t n,
                         const int32_t *dims, const float *bias) {
  int32_t i;
  for (i = 0; i < n && i < dims[0]; ++i)
    out[i] = a[i] + b[i] + bias[0];
}
#endif
)";

// y = x + w + 0.5 through an arena buffer.
lir::Program program() {
  lir::Program p;
  p.modelName = "arena";
  p.arenaSize = 64;
  p.arenaAlign = 32;
  p.constants.push_back({"w", Tensor::fromFloats({4}, {1.0f, 2.0f, 3.0f, 4.0f})});
  p.inputs.push_back({"x", DType::F32, {4}});
  p.outputs.push_back({"y", DType::F32, {4}});
  BufferRef x{Region::Input, 0, 0, 16, DType::F32};
  BufferRef w{Region::Const, 0, 0, 16, DType::F32};
  BufferRef t{Region::Arena, 0, 32, 16, DType::F32};
  BufferRef y{Region::Output, 0, 0, 16, DType::F32};
  p.body.push_back({"call",
                    "test_add_f32",
                    {x, w, t, int64_t(4), lir::IntArray{{4}}, lir::FloatArray{{0.5f}}},
                    "add (Add)",
                    {},
                    -1,
                    {}});
  p.body.push_back({"memcpy", "", {y, t}, "y (copy)", {}, -1, {}});
  return p;
}

EmitOptions options(bool external) {
  EmitOptions o;
  o.prefix = "net";
  o.extraIncludes = {"arena_kernels.h"};
  o.externalArena = external;
  return o;
}

const std::string &contents(const std::vector<EmittedFile> &files, const std::string &path) {
  static const std::string none;
  for (const EmittedFile &f : files)
    if (f.path == path)
      return f.contents;
  ADD_FAILURE() << "no " << path;
  return none;
}

int run(const std::string &cmd, std::string *output) {
  int rc = std::system((cmd + " > cmd.out 2>&1").c_str());
  std::ifstream is("cmd.out");
  std::stringstream ss;
  ss << is.rdbuf();
  *output = ss.str();
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Every error path of net_init / net_run, then two contexts on two arenas.
const char *kMain = R"(#include <stdio.h>
#include <string.h>
#include "net.h"
static unsigned char pool[2 * NET_ARENA_BYTES + 2 * NET_ARENA_ALIGN];
#define CHECK(e) do { if (!(e)) { printf("line %d: %s\n", __LINE__, #e); return 1; } } while (0)
int main(void) {
  unsigned char *a = pool + (NET_ARENA_ALIGN - (uintptr_t)pool % NET_ARENA_ALIGN) % NET_ARENA_ALIGN;
  unsigned char *b = a + NET_ARENA_BYTES;
  float x[4] = {1, 2, 3, 4}, y[4], y2[4];
  const void *in[1];
  void *out[1];
  net_ctx c, c2;
  int32_t layer = 7;
  const char *name = "x";
  in[0] = x;
  out[0] = y;
  memset(&c, 0, sizeof c);
  CHECK(net_init(0, a, NET_ARENA_BYTES) == NET_ERR_ARGUMENT);
  CHECK(net_run(0, in, out) == NET_ERR_ARGUMENT);
  CHECK(net_run(&c, in, out) == NET_ERR_NOT_READY);
  CHECK(net_last_error(&c, &layer, &name) == NET_ERR_NOT_READY && layer == -1 && !*name);
  CHECK(net_init(&c, 0, NET_ARENA_BYTES) == NET_ERR_ARGUMENT);
  CHECK(net_init(&c, a, NET_ARENA_BYTES - 1) == NET_ERR_ARENA_SIZE);
  CHECK(net_last_error(&c, 0, 0) == NET_ERR_ARENA_SIZE);
  CHECK(net_init(&c, a + NET_ARENA_ALIGN / 2, NET_ARENA_BYTES) == NET_ERR_ARENA_ALIGN);
  CHECK(net_run(&c, in, out) == NET_ERR_NOT_READY); /* a failed init leaves it unusable */
  CHECK(net_init(&c, a, NET_ARENA_BYTES) == NPUCC_OK);
  CHECK(net_last_error(&c, &layer, &name) == NPUCC_OK);
  CHECK(net_run(&c, in, 0) == NET_ERR_ARGUMENT);
  out[0] = 0;
  CHECK(net_run(&c, in, out) == NET_ERR_ARGUMENT);
  out[0] = y;
  CHECK(net_run(&c, in, out) == NPUCC_OK);
  CHECK(net_last_error(&c, &layer, &name) == NPUCC_OK && layer == -1);
  CHECK(y[0] == 2.5f && y[3] == 8.5f);
  CHECK(net_init(&c2, b, NET_ARENA_BYTES) == NPUCC_OK);
  x[0] = 10;
  out[0] = y2;
  CHECK(net_run(&c2, in, out) == NPUCC_OK && y2[0] == 11.5f && y2[1] == 4.5f);
  CHECK(a[32] == 0 && a[33] == 0 && a[34] == 0x20 && a[35] == 0x40); /* c's arena: 2.5f */
  printf("OK %d %d %d %d\n", NET_ERR_ARGUMENT, NET_ERR_ARENA_SIZE, NET_ERR_ARENA_ALIGN,
         NET_ERR_NOT_READY);
  return 0;
}
)";

} // namespace

TEST(ArenaApi, HeaderAndSourceOfTheExternalArena) {
  auto r = emitC(program(), options(true));
  ASSERT_TRUE(r) << r.error().str();
  const std::string &h = contents(*r, "net.h");
  EXPECT_NE(h.find("#define NET_ARENA_BYTES 64\n"), std::string::npos);
  EXPECT_NE(h.find("#define NET_ARENA_ALIGN 32\n"), std::string::npos) << h;
  for (const char *s :
       {"#define NET_ERR_ARGUMENT (-16)", "#define NET_ERR_ARENA_SIZE (-17)",
        "#define NET_ERR_ARENA_ALIGN (-18)", "#define NET_ERR_NOT_READY (-19)", "} net_ctx;",
        "int net_init(net_ctx *ctx, void *arena, size_t arena_bytes);",
        "int net_run(net_ctx *ctx, const void *const inputs[], void *const outputs[]);",
        "int net_last_error(const net_ctx *ctx, int32_t *layer, const char **layer_name);"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
  const std::string &c = contents(*r, "net.c");
  EXPECT_EQ(c.find("net_arena"), std::string::npos) << c; // no static arena
  EXPECT_EQ(c.find("NPUCC_ARENA_ATTR"), std::string::npos);
  EXPECT_NE(c.find("(float *)(ctx->arena + 32)"), std::string::npos) << c;
  EXPECT_NE(c.find("NPUCC_TABLE_ATTR static const int32_t net_ia0[1]"), std::string::npos);
  EXPECT_NE(c.find("NPUCC_TABLE_ATTR static const float net_fa0[1]"), std::string::npos);
  EXPECT_NE(c.find("NPUCC_TABLE_ATTR const npucc_tensor_info net_inputs[1]"), std::string::npos);
  EXPECT_EQ(c.find("NPUCC_STREAM_ATTR"), std::string::npos); // no NPU commands
  EXPECT_NE(contents(*r, "net_weights.c").find("NPUCC_CONST_ATTR\nconst net_w_w_t net_w_w"),
            std::string::npos);
  // The default (static arena) has none of it.
  auto d = emitC(program(), options(false));
  ASSERT_TRUE(d);
  EXPECT_EQ(contents(*d, "net.h").find("net_init"), std::string::npos);
  EXPECT_EQ(contents(*d, "net.c").find("NPUCC_TABLE_ATTR"), std::string::npos);
  EXPECT_EQ(contents(*d, "net_weights.c").find("NPUCC_CONST_ATTR"), std::string::npos);
  EXPECT_NE(contents(*d, "net.c").find("net_arena NPUCC_ARENA_ATTR"), std::string::npos);
}

TEST(ArenaApi, ErrorPathsTwoContextsSectionsAndTheTestProgram) {
  fs::path dir = fs::temp_directory_path() / ("npucc_arena_api_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ASSERT_TRUE(writeOutputDir(dir.string(), [&] {
    auto r = emitC(program(), options(true));
    std::vector<EmittedFile> f = r ? *r : std::vector<EmittedFile>{};
    f.push_back({"arena_kernels.h", kKernels});
    f.push_back({"main.c", kMain});
    f.push_back(emitTestProgram(program(), options(true),
                                {Tensor::fromFloats({4}, {0.0f, 0.0f, 0.0f, 1.0f})},
                                {Tensor::fromFloats({4}, {1.5f, 2.5f, 3.5f, 5.5f})}, 1e-6));
    return f;
  }()));
  fs::path cwd = fs::current_path();
  fs::current_path(dir);
  std::string log;
  const std::string cc = "cc -std=c99 -Wall -Wextra -Werror -pedantic ";
  EXPECT_EQ(run(cc + "-o main main.c net.c net_weights.c", &log), 0) << log;
  EXPECT_EQ(run("./main", &log), 0) << log;
  EXPECT_EQ(log, "OK -16 -17 -18 -19\n");
  EXPECT_EQ(run(cc + "-o net_test net_test.c net.c net_weights.c", &log), 0) << log;
  EXPECT_EQ(run("./net_test", &log), 0) << log;
  EXPECT_NE(log.find("PASS"), std::string::npos) << log;
  // Each constant table lands in the section its macro names.
  EXPECT_EQ(run(cc + "-c net.c net_weights.c "
                     "-DNPUCC_TABLE_ATTR='__attribute__((section(\".rodata.npt\")))' "
                     "-DNPUCC_CONST_ATTR='__attribute__((section(\".rodata.npw\")))' && "
                     "objdump -t net.o net_weights.o",
                &log),
            0)
      << log;
  for (const char *s :
       {".rodata.npt\t0000000000000004 net_ia0", ".rodata.npt\t0000000000000004 net_fa0",
        ".rodata.npw\t0000000000000010 net_w_w"})
    EXPECT_NE(log.find(s), std::string::npos) << s << "\n" << log;
  fs::current_path(cwd);
  fs::remove_all(dir);
}
