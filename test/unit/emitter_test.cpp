//===- emitter_test.cpp - C emitter output compiles, runs and is stable ---===//
//
// The program under test calls small kernels declared in a test-only header
// (written into the temporary directory), so it does not depend on the real
// runtime kernels. The emitted files and the emitted test program are
// compiled with `cc -std=c99 -Wall -Wextra -Werror -pedantic` and run.
//
//===----------------------------------------------------------------------===//
#include "npucc/codegen/CEmitter.h"
#include "npucc/interp/Interpreter.h"
#include "npucc/lower/CpuLowering.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
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

const char *kKernelsH = R"(/* test_kernels.h - kernels of the emitter test. */
#ifndef TEST_KERNELS_H
#define TEST_KERNELS_H
#include <stdint.h>
void test_add_f32(const float *a, const float *b, float *out, int32_t n, const int32_t *dims,
                  const float *bias);
void test_scale_f32(const float *in, const float *bias, float *out, int32_t n, float s, float hi);
void test_copy_i64(const int64_t *in, int64_t *out, int32_t n);
#endif
)";

const char *kKernelsC = R"(/* test_kernels.c - kernels of the emitter test. */
#include "test_kernels.h"
void test_add_f32(const float *a, const float *b, float *out, int32_t n, const int32_t *dims,
                  const float *bias) {
  int32_t i;
  for (i = 0; i < n && i < dims[0]; ++i)
    out[i] = a[i] + b[i] + bias[0];
}
void test_scale_f32(const float *in, const float *bias, float *out, int32_t n, float s, float hi) {
  int32_t i;
  for (i = 0; i < n; ++i)
    out[i] = (in[i] * s < hi ? in[i] * s : hi) + (bias ? 1000.0f : 0.0f);
}
void test_copy_i64(const int64_t *in, int64_t *out, int32_t n) {
  int32_t i;
  for (i = 0; i < n; ++i)
    out[i] = in[i];
}
)";

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("npucc_emitter_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static int &counter() {
    static int c = 0;
    return c;
  }
};

std::string readFile(const fs::path &p) {
  std::ifstream is(p, std::ios::binary);
  std::stringstream ss;
  ss << is.rdbuf();
  return ss.str();
}

void writeFile(const fs::path &p, const std::string &s) {
  std::ofstream os(p, std::ios::binary);
  os << s;
}

/// Runs a shell command, returns its exit status and captures stdout+stderr.
int run(const std::string &cmd, std::string *output) {
  std::string full = cmd + " > cmd.out 2>&1";
  int rc = std::system(full.c_str());
  if (output)
    *output = readFile("cmd.out");
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

const float kW[4] = {1.5f, -0.0f, 1e-40f /* denormal */, 3.0f};
const int64_t kK[3] = {std::numeric_limits<int64_t>::min(), -1, int64_t(1) << 40};

// y = min((x + w + 0.25) * 0.5, inf); z = k; y2 = x + w + 0.25
lir::Program testProgram() {
  lir::Program p;
  p.modelName = "emit \"test\" */ model";
  p.arenaSize = 16;
  p.constants.push_back({"w", Tensor::fromFloats({4}, {kW[0], kW[1], kW[2], kW[3]})});
  p.constants.push_back({"k", Tensor::fromInts(DType::I64, {3}, {kK[0], kK[1], kK[2]})});
  p.inputs.push_back({"x?in", DType::F32, {1, 4}});
  p.outputs.push_back({"y", DType::F32, {1, 4}});
  p.outputs.push_back({"z", DType::I64, {3}});
  p.outputs.push_back({"y2", DType::F32, {4}});
  BufferRef x{Region::Input, 0, 0, 16, DType::F32};
  BufferRef w{Region::Const, 0, 0, 16, DType::F32};
  BufferRef k{Region::Const, 1, 0, 24, DType::I64};
  BufferRef t{Region::Arena, 0, 0, 16, DType::F32};
  BufferRef y{Region::Output, 0, 0, 16, DType::F32};
  BufferRef z{Region::Output, 1, 0, 24, DType::I64};
  BufferRef y2{Region::Output, 2, 0, 16, DType::F32};
  p.body.push_back({"call",
                    "test_add_f32",
                    {x, w, t, int64_t(4), lir::IntArray{{4}}, lir::FloatArray{{0.25f}}},
                    "add0 (Add) */ tricky /* comment", {}, -1, {}});
  p.body.push_back(
      {"call",
       "test_scale_f32",
       {t, BufferRef::null(), y, int64_t(4), 0.5f, std::numeric_limits<float>::infinity()},
       "scale (Mul)", {}, -1, {}});
  p.body.push_back({"call", "test_copy_i64", {k, z, int64_t(3)}, "copy (Identity)", {}, -1, {}});
  p.body.push_back({"memcpy", "", {y2, t}, "y2 (copy)", {}, -1, {}});
  return p;
}

EmitOptions testOptions() {
  EmitOptions o;
  o.prefix = "net";
  o.extraIncludes = {"test_kernels.h"};
  return o;
}

const EmittedFile *findFile(const std::vector<EmittedFile> &files, const std::string &path) {
  for (const auto &f : files)
    if (f.path == path)
      return &f;
  return nullptr;
}

TEST(CEmitter, EmitsTheExpectedFiles) {
  auto r = emitC(testProgram(), testOptions());
  ASSERT_TRUE(r) << r.error().str();
  for (const char *f : {"net.h", "net.c", "net_weights.h", "net_weights.c", "npucc_types.h"})
    EXPECT_NE(findFile(*r, f), nullptr) << f;
  const std::string &h = findFile(*r, "net.h")->contents;
  EXPECT_NE(h.find("#define NET_NUM_INPUTS 1\n"), std::string::npos);
  EXPECT_NE(h.find("#define NET_NUM_OUTPUTS 3\n"), std::string::npos);
  EXPECT_NE(h.find("#define NET_INPUT0_BYTES 16\n"), std::string::npos);
  EXPECT_NE(h.find("#define NET_OUTPUT1_BYTES 24\n"), std::string::npos);
  EXPECT_NE(h.find("#define NET_ARENA_BYTES 16\n"), std::string::npos);
  EXPECT_NE(h.find("#define NET_WEIGHT_BYTES 40\n"), std::string::npos);
  EXPECT_NE(h.find("int net_run(const void *const inputs[], void *const outputs[]);"),
            std::string::npos);
  const std::string &c = findFile(*r, "net.c")->contents;
  EXPECT_NE(c.find("/* add0 (Add) * / tricky / * comment */"), std::string::npos) << c;
  EXPECT_NE(c.find("test_scale_f32((float *)(net_arena.bytes + 0), (const float *)0, (float "
                   "*)outputs[0], 4, "
                   "0.5f, INFINITY);"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("#include <math.h>"), std::string::npos);
  EXPECT_NE(c.find("\"x\\?in\""), std::string::npos); // no trigraph risk in names
  const std::string &wc = findFile(*r, "net_weights.c")->contents;
  EXPECT_NE(wc.find("0x3fc00000, 0x80000000"), std::string::npos) << wc; // 1.5f, -0.0f
  EXPECT_NE(wc.find("0x8000000000000000"), std::string::npos);           // INT64_MIN
}

TEST(CEmitter, ByteIdenticalOnReEmit) {
  auto a = emitC(testProgram(), testOptions());
  auto b = emitC(testProgram(), testOptions());
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].path, (*b)[i].path);
    EXPECT_EQ((*a)[i].contents, (*b)[i].contents) << (*a)[i].path;
  }
}

TEST(CEmitter, CompilesPedanticAndTheTestProgramPasses) {
  TempDir td;
  auto files = emitC(testProgram(), testOptions());
  ASSERT_TRUE(files) << files.error().str();
  std::vector<float> x = {1.0f, 2.0f, -3.0f, 0.5f};
  std::vector<float> y2(4), y(4);
  for (int i = 0; i < 4; ++i) {
    y2[i] = x[i] + kW[i] + 0.25f;
    y[i] = y2[i] * 0.5f;
  }
  std::vector<Tensor> ins = {Tensor::fromFloats({1, 4}, x)};
  std::vector<Tensor> good = {Tensor::fromFloats({1, 4}, y),
                              Tensor::fromInts(DType::I64, {3}, {kK[0], kK[1], kK[2]}),
                              Tensor::fromFloats({4}, y2)};
  std::vector<Tensor> bad = good;
  bad[1].data<int64_t>()[2] += 1; // integer outputs must match exactly
  std::vector<EmittedFile> all = *files;
  all.push_back(emitTestProgram(testProgram(), testOptions(), ins, good, 1e-6));
  all.push_back({"test_kernels.h", kKernelsH});
  all.push_back({"test_kernels.c", kKernelsC});
  fs::path out = td.path / "out";
  ASSERT_TRUE(writeOutputDir(out.string(), all));

  std::string log;
  fs::path cwd = fs::current_path();
  fs::current_path(out);
  const std::string flags = "-std=c99 -Wall -Wextra -Werror -pedantic";
  for (const char *f : {"net.c", "net_weights.c", "net_test.c"})
    EXPECT_EQ(run("cc " + flags + " -c " + f, &log), 0) << f << ":\n" << log;
  EXPECT_EQ(
      run("cc " + flags + " -o net_test net.c net_weights.c net_test.c test_kernels.c -lm", &log),
      0)
      << log;
  EXPECT_EQ(run("./net_test", &log), 0) << log;
  EXPECT_NE(log.find("PASS"), std::string::npos) << log;
  EXPECT_NE(log.find("output 1 z: max abs err 0, rel err 0, first mismatch -1"), std::string::npos)
      << log;

  // A wrong expected value makes the test program fail and say where.
  writeFile("net_test.c", emitTestProgram(testProgram(), testOptions(), ins, bad, 1e-6).contents);
  EXPECT_EQ(
      run("cc " + flags + " -o net_test net.c net_weights.c net_test.c test_kernels.c -lm", &log),
      0)
      << log;
  EXPECT_EQ(run("./net_test", &log), 1) << log;
  EXPECT_NE(log.find("FAIL"), std::string::npos) << log;
  EXPECT_NE(log.find("first mismatch 2"), std::string::npos) << log;
  // Also with clang, when present.
  if (std::system("clang --version > /dev/null 2>&1") == 0) {
    EXPECT_EQ(run("clang " + flags + " -c net.c net_weights.c", &log), 0) << log;
  }
  fs::current_path(cwd);
}

// Benchmark hooks (issue 12): NPUCC_LAYER_HOOK(index, kernel) before each CPU instruction of
// net_run and once at the end, empty by default; -DNPUCC_TEST_REPEAT=N runs the model N times.
// The header asks firmware builds for -ffunction-sections -fdata-sections -Wl,--gc-sections.
TEST(CEmitter, LayerHooksAndTestRepeat) {
  TempDir td;
  auto files = emitC(testProgram(), testOptions());
  ASSERT_TRUE(files) << files.error().str();
  const std::string &c = findFile(*files, "net.c")->contents;
  EXPECT_NE(c.find("#ifndef NPUCC_LAYER_HOOK\n#define NPUCC_LAYER_HOOK(index, kernel) ((void)0)\n"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("  NPUCC_LAYER_HOOK(0, \"test_add_f32\");\n  test_add_f32("), std::string::npos);
  EXPECT_NE(c.find("  NPUCC_LAYER_HOOK(3, \"memcpy\");\n  memcpy("), std::string::npos);
  EXPECT_NE(c.find("  NPUCC_LAYER_HOOK(4, \"end\");\n  return NPUCC_OK;"), std::string::npos);
  const std::string &h = findFile(*files, "net.h")->contents;
  EXPECT_NE(h.find("-ffunction-sections\n * -fdata-sections and link with -Wl,--gc-sections"),
            std::string::npos)
      << h;
  std::vector<float> x = {1.0f, 2.0f, -3.0f, 0.5f};
  std::vector<float> y2(4), y(4);
  for (int i = 0; i < 4; ++i) {
    y2[i] = x[i] + kW[i] + 0.25f;
    y[i] = y2[i] * 0.5f;
  }
  std::vector<Tensor> ins = {Tensor::fromFloats({1, 4}, x)};
  std::vector<Tensor> good = {Tensor::fromFloats({1, 4}, y),
                              Tensor::fromInts(DType::I64, {3}, {kK[0], kK[1], kK[2]}),
                              Tensor::fromFloats({4}, y2)};
  std::vector<EmittedFile> all = *files;
  all.push_back(emitTestProgram(testProgram(), testOptions(), ins, good, 1e-6));
  all.push_back({"test_kernels.h", kKernelsH});
  all.push_back({"test_kernels.c", kKernelsC});
  all.push_back({"hook.h", "#include <stdio.h>\n#define NPUCC_LAYER_HOOK(i, k) "
                           "printf(\"hook %d %s\\n\", (int)(i), k)\n"});
  const std::string &t = all[all.size() - 4].contents;
  EXPECT_NE(t.find("#ifdef NPUCC_TEST_REPEAT\n"), std::string::npos) << t;
  fs::path out = td.path / "out";
  ASSERT_TRUE(writeOutputDir(out.string(), all));
  std::string log;
  fs::path cwd = fs::current_path();
  fs::current_path(out);
  const std::string flags = "-std=c99 -Wall -Wextra -Werror -pedantic";
  EXPECT_EQ(run("cc " + flags + " -include hook.h -DNPUCC_TEST_REPEAT=3 -o net_test net.c "
                "net_weights.c net_test.c test_kernels.c -lm",
                &log),
            0)
      << log;
  EXPECT_EQ(run("./net_test", &log), 0) << log;
  EXPECT_NE(log.find("PASS"), std::string::npos) << log;
  size_t first = 0, ends = 0;
  for (size_t p = 0; (p = log.find("hook 0 test_add_f32\n", p)) != std::string::npos; ++p)
    ++first;
  for (size_t p = 0; (p = log.find("hook 3 memcpy\nhook 4 end\n", p)) != std::string::npos; ++p)
    ++ends;
  EXPECT_EQ(first, 3u) << log;
  EXPECT_EQ(ends, 3u) << log;
  fs::current_path(cwd);
}

TEST(CEmitter, WeightBitsAreExact) {
  // The weights are exact bit patterns: compile them and compare in C.
  TempDir td;
  auto files = emitC(testProgram(), testOptions());
  ASSERT_TRUE(files);
  std::string check = "#include <string.h>\n#include <stdio.h>\n#include \"net_weights.h\"\n"
                      "static const unsigned char w[16] = {";
  const unsigned char *wb = reinterpret_cast<const unsigned char *>(kW);
  for (int i = 0; i < 16; ++i)
    check += std::to_string(wb[i]) + (i < 15 ? "," : "};\n");
  check += "int main(void) { return memcmp(net_w_w.v, w, 16) != 0 || net_w_k.v[0] >= 0; }\n";
  std::vector<EmittedFile> all = *files;
  all.push_back({"check.c", check});
  fs::path out = td.path / "o";
  ASSERT_TRUE(writeOutputDir(out.string(), all));
  std::string log;
  fs::path cwd = fs::current_path();
  fs::current_path(out);
  EXPECT_EQ(run("cc -std=c99 -Wall -Wextra -Werror -pedantic -o check check.c net_weights.c", &log),
            0)
      << log;
  EXPECT_EQ(run("./check", &log), 0) << log;
  fs::current_path(cwd);
}

TEST(CEmitter, RejectsBadPrograms) {
  auto p = testProgram();
  p.body[0].args[2] = BufferRef{Region::Arena, 0, 8, 16, DType::F32}; // beyond the arena
  auto r = emitC(p, testOptions());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("exceeds"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("test_add_f32"), std::string::npos);

  p = testProgram();
  p.body[0].args[4] = lir::IntArray{{int64_t(1) << 40}};
  EXPECT_FALSE(emitC(p, testOptions()));

  EmitOptions bad = testOptions();
  bad.prefix = "3d-net";
  EXPECT_FALSE(emitC(testProgram(), bad));

  p = testProgram();
  p.kernelFiles.push_back("kernels/does_not_exist.c");
  r = emitC(p, testOptions());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does_not_exist"), std::string::npos);
}

TEST(CEmitter, RuntimeFilesAreClosedUnderIncludes) {
  lir::Program p = testProgram();
  p.kernelFiles = {"kernels/npucc_conv.c"};
  EmitOptions o = testOptions();
  o.extraIncludes.clear();
  p.body.clear(); // no calls: only the copied runtime matters here
  auto files = emitC(p, o);
  ASSERT_TRUE(files) << files.error().str();
  ASSERT_NE(findFile(*files, "npucc_conv.c"), nullptr);
  ASSERT_NE(findFile(*files, "npucc_conv.h"), nullptr);
  for (const EmittedFile &f : *files) {
    size_t pos = 0;
    while ((pos = f.contents.find("#include \"", pos)) != std::string::npos) {
      size_t e = f.contents.find('"', pos + 10);
      std::string inc = f.contents.substr(pos + 10, e - pos - 10);
      EXPECT_NE(findFile(*files, inc), nullptr) << f.path << " includes " << inc;
      pos = e;
    }
  }
  TempDir td;
  fs::path out = td.path / "out";
  ASSERT_TRUE(writeOutputDir(out.string(), *files));
  std::string log;
  fs::path cwd = fs::current_path();
  fs::current_path(out);
  EXPECT_EQ(run("cc -std=c99 -Wall -Wextra -Werror -pedantic -c *.c", &log), 0) << log;
  fs::current_path(cwd);
}

// The whole path with the real families and runtime kernels: lower a small
// network, emit it with a test program whose expected outputs come from the
// reference interpreter, compile pedantically and run.
TEST(CEmitter, RealKernelsMatchTheInterpreter) {
  using namespace npucc::ir;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto rnd = [&](Shape s) {
    Tensor t(DType::F32, s);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data<float>()[i] = u(rng);
    return t;
  };
  Graph g;
  g.name = "e2e";
  Value *x = g.addValue("x", DType::F32, {1, 3, 8, 8});
  g.inputs.push_back(x);
  Value *w = g.addConstant("conv.w", rnd({4, 3, 3, 3}));
  Value *b = g.addConstant("conv.b", rnd({4}));
  Value *c = g.addValue("c", DType::F32, {1, 4, 8, 8});
  Node *conv = g.addNode(OpKind::Conv, "conv0", {x, w, b}, {c});
  conv->attrs["kernel_shape"] = std::vector<int64_t>{3, 3};
  conv->attrs["pads"] = std::vector<int64_t>{1, 1, 1, 1};
  conv->attrs["strides"] = std::vector<int64_t>{1, 1};
  conv->attrs["dilations"] = std::vector<int64_t>{1, 1};
  conv->attrs["group"] = int64_t(1);
  Value *r = g.addValue("r", DType::F32, {1, 4, 8, 8});
  g.addNode(OpKind::Relu, "relu0", {c}, {r});
  Value *shp = g.addConstant("shape", Tensor::fromInts(DType::I64, {2}, {1, 256}));
  Value *f = g.addValue("f", DType::F32, {1, 256});
  g.addNode(OpKind::Reshape, "flat", {r, shp}, {f});
  Value *gw = g.addConstant("fc.w", rnd({10, 256}));
  Value *gb = g.addConstant("fc.b", rnd({10}));
  Value *y = g.addValue("y", DType::F32, {1, 10});
  g.addNode(OpKind::Gemm, "fc", {f, gw, gb}, {y})->attrs["transB"] = int64_t(1);
  Value *s = g.addValue("s", DType::F32, {1, 10});
  g.addNode(OpKind::Softmax, "sm", {y}, {s});
  Value *y2 = g.addValue("y2", DType::F32, {1, 10});
  g.addNode(OpKind::Add, "add", {y, s}, {y2});
  g.outputs.push_back(y2);
  g.outputs.push_back(f);

  auto p = lower::lowerGraphToCpu(g);
  ASSERT_TRUE(p) << p.error().str();
  EXPECT_LE(p->arenaSize, p->activationBytes);
  EXPECT_GE(p->arenaSize, p->peakLiveBytes);
  std::string lirText = lir::printProgram(*p);
  auto reparsed = lir::parseProgram(lirText);
  ASSERT_TRUE(reparsed) << reparsed.error().str();
  EXPECT_EQ(lir::printProgram(*reparsed), lirText);
  Tensor xin = rnd({1, 3, 8, 8});
  auto ref = interp::runGraph(g, {{"x", xin}});
  ASSERT_TRUE(ref) << ref.error().str();
  auto files = emitC(*p, {});
  ASSERT_TRUE(files) << files.error().str();
  files->push_back(emitTestProgram(*p, {}, {xin}, {ref->at("y2"), ref->at("f")}, 1e-5));
  TempDir td;
  fs::path out = td.path / "out";
  ASSERT_TRUE(writeOutputDir(out.string(), *files));
  std::string log;
  fs::path cwd = fs::current_path();
  fs::current_path(out);
  EXPECT_EQ(run("cc -std=c99 -Wall -Wextra -Werror -pedantic -O1 -o t *.c -lm", &log), 0) << log;
  EXPECT_EQ(run("./t", &log), 0) << log;
  EXPECT_NE(log.find("PASS"), std::string::npos) << log;
  fs::current_path(cwd);
}

// -o a/b/c with a missing a/b is refused and creates nothing (issue 11).
TEST(WriteOutputDir, CreatesOnlyTheLastLevel) {
  TempDir td;
  fs::path out = td.path / "missing" / "deeper" / "out";
  Status s = writeOutputDir(out.string(), {{"a.txt", "one"}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().str().find("its parent folder '" + (td.path / "missing" / "deeper").string() +
                                 "' does not exist"),
            std::string::npos)
      << s.error().str();
  EXPECT_FALSE(fs::exists(td.path / "missing"));
}

TEST(WriteOutputDir, ReplacesTheDirectoryAtomically) {
  TempDir td;
  fs::path out = td.path / "sub" / "out";
  fs::create_directory(td.path / "sub");
  ASSERT_TRUE(writeOutputDir(out.string(), {{"a.txt", "one"}, {"d/b.txt", "two"}}));
  EXPECT_EQ(readFile(out / "a.txt"), "one");
  EXPECT_EQ(readFile(out / "d" / "b.txt"), "two");
  // Re-writing replaces everything: stale files disappear.
  ASSERT_TRUE(writeOutputDir(out.string(), {{"c.txt", "three"}}));
  EXPECT_FALSE(fs::exists(out / "a.txt"));
  EXPECT_EQ(readFile(out / "c.txt"), "three");
  // No temporary or old directories are left behind.
  int entries = 0;
  for (const auto &e : fs::directory_iterator(td.path / "sub")) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

// A folder npucc did not write is never replaced (issue 23: `-o MODEL_DIR` deleted the model
// and its test data): only an empty folder or one holding exactly the files of npucc's own
// manifest is; a file added since, a symbolic link or a manifest of another format is refused,
// and nothing in the folder changes.
TEST(WriteOutputDir, ReplacesOnlyFoldersNpuccWrote) {
  TempDir td;
  fs::path model = td.path / "model";
  fs::create_directories(model / "test_data_set_0");
  writeFile(model / "model.onnx", "onnx");
  writeFile(model / "test_data_set_0" / "input_0.pb", "pb");
  Status s = writeOutputDir(model.string(), {{"a.txt", "one"}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().str().find("refusing to replace the output folder '" + model.string() +
                                 "': it holds 'model.onnx' and 1 more and no npucc manifest"),
            std::string::npos)
      << s.error().str();
  EXPECT_FALSE(checkOutputDir(model.string()));
  EXPECT_EQ(readFile(model / "model.onnx"), "onnx");
  EXPECT_EQ(readFile(model / "test_data_set_0" / "input_0.pb"), "pb");
  EXPECT_FALSE(fs::exists(model / "a.txt"));

  fs::path empty = td.path / "empty";
  fs::create_directory(empty);
  EXPECT_TRUE(checkOutputDir(empty.string()));
  ASSERT_TRUE(writeOutputDir(empty.string(), {{"a.txt", "one"}, {"d/b.txt", "two"}}));
  EXPECT_EQ(readFile(empty / ".npucc-files"),
            "# written by npucc: it replaces this folder only while it holds just these files\n"
            "a.txt\nd/b.txt\n");
  fs::remove(empty / "d" / "b.txt"); // fewer files than listed: still npucc's
  EXPECT_TRUE(checkOutputDir(empty.string()));
  writeFile(empty / "d" / "mine.c", "user");
  s = writeOutputDir(empty.string(), {{"c.txt", "three"}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().str().find("it holds 'd/mine.c' that npucc did not write"), std::string::npos)
      << s.error().str();
  EXPECT_EQ(readFile(empty / "a.txt"), "one");
  fs::remove(empty / "d" / "mine.c");
  fs::create_symlink(td.path / "model", empty / "link");
  EXPECT_FALSE(checkOutputDir(empty.string()));
  fs::remove(empty / "link");
  writeFile(empty / ".npucc-files", "a.txt\n"); // not npucc's header
  EXPECT_FALSE(checkOutputDir(empty.string()));
}

TEST(WriteOutputDir, FailureLeavesTheOldDirectoryUntouched) {
  TempDir td;
  fs::path out = td.path / "out";
  ASSERT_TRUE(writeOutputDir(out.string(), {{"keep.txt", "old"}}));
  // "a" is written as a file, then "a/b" needs it to be a directory: fails.
  Status s = writeOutputDir(out.string(), {{"new.txt", "x"}, {"a", "file"}, {"a/b", "y"}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(out.string()), std::string::npos) << s.error().message;
  EXPECT_EQ(readFile(out / "keep.txt"), "old");
  EXPECT_FALSE(fs::exists(out / "new.txt"));
  int entries = 0;
  for (const auto &e : fs::directory_iterator(td.path)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1); // the temporary directory was removed
  // Paths escaping the directory are refused before anything is written.
  EXPECT_FALSE(writeOutputDir(out.string(), {{"../evil", "x"}}));
  EXPECT_FALSE(writeOutputDir(out.string(), {{"/abs", "x"}}));
  EXPECT_EQ(readFile(out / "keep.txt"), "old");
}

TEST(WriteOutputDir, RefusesToReplaceARegularFile) {
  TempDir td;
  fs::path f = td.path / "file";
  writeFile(f, "precious");
  Status s = writeOutputDir(f.string(), {{"a", "b"}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(f.string()), std::string::npos);
  EXPECT_EQ(readFile(f), "precious");
}

} // namespace
