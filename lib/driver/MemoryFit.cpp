//===- MemoryFit.cpp - Does the compiled program fit the microcontroller? -===//
//
// Adds up what a compiled program takes in flash and RAM on one reference
// microcontroller configuration; see include/npucc/driver/MemoryFit.h.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/MemoryFit.h"

#include "npucc/target/CTable.h"

#include <cctype>
#include <cstdio>
#include <set>

namespace npucc::driver {

namespace {

std::string baseName(const std::string &p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

uint64_t sum(const std::vector<MemoryItem> &v) {
  uint64_t n = 0;
  for (const MemoryItem &i : v)
    n += i.bytes;
  return n;
}

void lines(std::string &s, const char *title, const std::vector<MemoryItem> &v) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %s %llu bytes:\n", title, (unsigned long long)sum(v));
  s += buf;
  for (const MemoryItem &i : v) {
    std::snprintf(buf, sizeof buf, "    %10llu  %s%s\n", (unsigned long long)i.bytes,
                  i.what.c_str(), i.estimate ? " (estimate)" : "");
    s += buf;
  }
}

} // namespace

uint64_t MemoryBudget::flashBytes() const { return sum(flash); }
uint64_t MemoryBudget::ramBytes() const { return sum(ram); }

MemoryBudget estimateMemory(const CompileResult &r, lower::McuConfig c) {
  MemoryBudget b;
  b.mcu = lower::mcuConfigName(c);
  std::set<std::string> entries;
  size_t calls = 0;
  for (const lir::Instr &in : r.program.body) {
    if (in.opcode == "call")
      entries.insert(in.callee);
    else if (in.opcode == "memcpy" || in.opcode == "memset")
      entries.insert(in.opcode);
    else
      continue;
    ++calls;
  }
  std::vector<std::string> whole;
  for (const codegen::EmittedFile &f : r.files) {
    std::string n = baseName(f.path);
    if (n == "npucc_hal.c" || n == "npucc_npu.c" || n == "npucc_stream.c")
      whole.push_back(n);
  }
  lower::CodeEstimate code = lower::estimateCode(
      std::vector<std::string>(entries.begin(), entries.end()), calls, whole, c);
  b.external = code.external;

  uint64_t consts = 0, npuConsts = 0;
  size_t arrays = 0;
  for (const lir::ConstBuffer &cb : r.program.constants) {
    (cb.npu ? npuConsts : consts) += cb.data.byteSize();
    arrays += !cb.npu;
  }
  b.flash.push_back(
      {"weights (" + std::to_string(arrays) + " constant arrays)", consts, false, "const"});
  b.flash.push_back(
      {"kernel parameter and requantization tables", r.emitStats.tableBytes, false, "const"});
  if (npuConsts)
    b.flash.push_back({"NPU constants (weights, bias and requantization records)", npuConsts, false,
                       "npu_const"});
  if (r.npu) {
    b.flash.push_back({"NPU command stream tables", r.emitStats.npuStreamBytes, false, "const"});
    target::CTable t(r.target);
    b.flash.push_back({"NPU description tables (" + target::cIdentifier(r.target.name) +
                           "_target.c, host layout: an upper bound)",
                       target::descTableBytes(*t.get()), true, "const"});
  }
  b.flash.push_back({"runtime code (" + std::to_string(code.functions) + " functions" +
                         (whole.empty() ? std::string() : ", NPU runtime included") + ")",
                     code.runtimeText, true, "code"});
  if (code.runtimeRodata)
    b.flash.push_back({"runtime read-only data", code.runtimeRodata, true, "const"});
  b.flash.push_back(
      {"model code (" + std::to_string(calls) + " CPU calls)", code.modelText, true, "code"});

  b.ram.push_back({"arena", uint64_t(r.program.arenaSize), false, "arena"});
  if (code.runtimeRam)
    b.ram.push_back({"runtime data (.data, .bss)", code.runtimeRam, true, "data"});
  if (r.npu && r.target.cmdbuf.capacityWords) {
    // Buffer delivery: the command buffer in <id>_target.c (NPUCC_CMDBUF_ATTR),
    // exact: capacity_words words of the frame's width.
    const target::CommandBuffer &cb = r.target.cmdbuf;
    b.ram.push_back({"NPU command buffer (" + target::cIdentifier(r.target.name) +
                         "_target.c, NPUCC_CMDBUF_ATTR)",
                     uint64_t(cb.capacityWords) * (r.target.frames[size_t(cb.frame)].wordBits / 8u),
                     false, "data"});
  }
  if (r.npu && r.target.registersPersist) {
    // registers_persist: the HAL's record of each register (a uint64_t value
    // and a known byte per register, <id>_target.c), exact.
    size_t n = r.target.registers.size();
    bool any = false;
    for (size_t i = 0; i < n; ++i)
      any |= r.target.registerPersists(int(i));
    if (any)
      b.ram.push_back({"NPU register record (" + target::cIdentifier(r.target.name) +
                           "_target.c, registers_persist)",
                       uint64_t(n) * 9u, false, "data"});
  }
  b.ram.push_back({"stack (deepest kernel call path + run function)", code.stack, true, "stack"});
  return b;
}

std::string budgetText(const MemoryBudget &b) {
  std::string s = "memory on " + b.mcu + ":\n";
  lines(s, "flash", b.flash);
  lines(s, "RAM", b.ram);
  if (!b.external.empty()) {
    s += "  not counted (libc, libm, compiler helpers):";
    for (const std::string &e : b.external)
      s += " " + e;
    s += "\n";
  }
  return s;
}

std::string memoryFitProblem(const MemoryBudget &b, uint64_t flashLimit, uint64_t ramLimit) {
  std::string why;
  char buf[160];
  if (flashLimit && b.flashBytes() > flashLimit) {
    std::snprintf(buf, sizeof buf, "needs %llu bytes of flash, %llu more than --flash %llu",
                  (unsigned long long)b.flashBytes(),
                  (unsigned long long)(b.flashBytes() - flashLimit),
                  (unsigned long long)flashLimit);
    why = buf;
  }
  if (ramLimit && b.ramBytes() > ramLimit) {
    std::snprintf(buf, sizeof buf, "needs %llu bytes of RAM, %llu more than --ram %llu",
                  (unsigned long long)b.ramBytes(), (unsigned long long)(b.ramBytes() - ramLimit),
                  (unsigned long long)ramLimit);
    why += (why.empty() ? "" : "; ") + std::string(buf);
  }
  if (why.empty())
    return "";
  return "the program does not fit: " + why + "\n" + budgetText(b);
}

nlohmann::json budgetJson(const MemoryBudget &b) {
  auto items = [](const std::vector<MemoryItem> &v) {
    nlohmann::json a = nlohmann::json::array();
    for (const MemoryItem &i : v)
      a.push_back(
          {{"what", i.what}, {"bytes", i.bytes}, {"estimate", i.estimate}, {"class", i.cls}});
    return a;
  };
  return {{"mcu", b.mcu},
          {"flash_bytes", b.flashBytes()},
          {"ram_bytes", b.ramBytes()},
          {"flash", items(b.flash)},
          {"ram", items(b.ram)},
          {"not_counted", b.external}};
}

bool parseByteSize(const std::string &s, uint64_t &out) {
  if (s.empty())
    return false;
  size_t i = 0;
  uint64_t v = 0;
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (hex)
    i = 2;
  size_t digits = 0;
  for (; i < s.size(); ++i, ++digits) {
    unsigned char ch = (unsigned char)s[i];
    unsigned d;
    if (std::isdigit(ch))
      d = ch - '0';
    else if (hex && std::isxdigit(ch))
      d = unsigned(std::tolower(ch) - 'a' + 10);
    else
      break;
    uint64_t base = hex ? 16 : 10;
    if (v > (UINT64_MAX - d) / base)
      return false;
    v = v * base + d;
  }
  if (!digits)
    return false;
  uint64_t mul = 1;
  if (i < s.size()) {
    if (hex || i + 1 != s.size())
      return false;
    char u = char(std::toupper((unsigned char)s[i]));
    if (u == 'K')
      mul = 1024;
    else if (u == 'M')
      mul = 1024 * 1024;
    else if (u == 'G')
      mul = 1024ull * 1024 * 1024;
    else
      return false;
  }
  if (v == 0 || v > UINT64_MAX / mul)
    return false;
  out = v * mul;
  return true;
}

} // namespace npucc::driver
