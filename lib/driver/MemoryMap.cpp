//===- MemoryMap.cpp - The microcontroller's memory regions (--memory-map) ===//
//
// Parses a memory map, checks a memory budget against its regions (and, for
// an NPU program, against the description's system-memory windows), and
// writes the linker-script fragment; see include/npucc/driver/MemoryMap.h.
//
//===----------------------------------------------------------------------===//
#include "npucc/driver/MemoryMap.h"

#include "npucc/support/FileRead.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <map>

namespace npucc::driver {

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

Diagnostic bad(const std::string &file, const std::string &path, const std::string &why) {
  return error(path + ": " + why).inFile(file);
}

/// A size or address: a number, or a string parseByteSize reads ("0x..", "64K").
bool readSize(const nlohmann::json &v, bool allowZero, uint64_t &out) {
  if (v.is_number_unsigned()) {
    out = v.get<uint64_t>();
    return allowZero || out != 0;
  }
  if (!v.is_string())
    return false;
  std::string s = v.get<std::string>();
  if (allowZero && (s == "0" || s == "0x0" || s == "0x00000000")) {
    out = 0;
    return true;
  }
  return parseByteSize(s, out);
}

} // namespace

const std::vector<std::string> &memoryClasses() {
  static const std::vector<std::string> C = {"code",  "const", "npu_const",
                                             "arena", "data",  "stack"};
  return C;
}

const MemoryRegion *MemoryMap::regionOf(const std::string &cls) const {
  for (const auto &p : place)
    if (p.first == cls)
      return &regions[p.second];
  return nullptr;
}

Result<MemoryMap> parseMemoryMap(const std::string &path) {
  auto text = readFileLimited(path, kMaxTargetFileBytes, "memory map");
  if (!text)
    return std::move(text.error());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return bad(path, "/", "not a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "regions" && it.key() != "place")
      return bad(path, "/" + it.key(), "unknown key (expected regions, place)");
  MemoryMap m;
  m.file = path;
  if (!j.contains("regions") || !j["regions"].is_array() || j["regions"].empty())
    return bad(path, "/regions", "a non-empty list of {name, origin, length} is required");
  for (size_t i = 0; i < j["regions"].size(); ++i) {
    const nlohmann::json &r = j["regions"][i];
    std::string at = "/regions/" + std::to_string(i);
    if (!r.is_object())
      return bad(path, at, "expected {name, origin, length}");
    for (auto it = r.begin(); it != r.end(); ++it)
      if (it.key() != "name" && it.key() != "origin" && it.key() != "length")
        return bad(path, at + "/" + it.key(), "unknown key (expected name, origin, length)");
    MemoryRegion reg;
    if (!r.contains("name") || !r["name"].is_string() || r["name"].get<std::string>().empty())
      return bad(path, at + "/name", "a region name is required");
    reg.name = r["name"].get<std::string>();
    for (char c : reg.name)
      if (!(std::isalnum((unsigned char)c) || c == '_'))
        return bad(path, at + "/name", "'" + reg.name + "': letters, digits and _ only");
    for (const MemoryRegion &o : m.regions)
      if (o.name == reg.name)
        return bad(path, at + "/name", "'" + reg.name + "' is named twice");
    if (!r.contains("origin") || !readSize(r["origin"], true, reg.origin))
      return bad(path, at + "/origin", "expected an address (a number or \"0x...\")");
    if (!r.contains("length") || !readSize(r["length"], false, reg.length))
      return bad(path, at + "/length", "expected a size above 0 (a number, \"0x...\", \"64K\")");
    if (reg.origin + reg.length < reg.origin)
      return bad(path, at + "/length", "the region passes the end of the address space");
    for (const MemoryRegion &o : m.regions)
      if (reg.origin < o.origin + o.length && o.origin < reg.origin + reg.length)
        return bad(path, at, "'" + reg.name + "' overlaps '" + o.name + "'");
    m.regions.push_back(reg);
  }
  if (!j.contains("place") || !j["place"].is_object())
    return bad(path, "/place",
               "an object assigning code, const, arena, data, stack (and "
               "optionally npu_const) to regions is required");
  const nlohmann::json &pl = j["place"];
  for (auto it = pl.begin(); it != pl.end(); ++it) {
    bool known = false;
    for (const std::string &c : memoryClasses())
      known = known || c == it.key();
    if (!known)
      return bad(path, "/place/" + it.key(),
                 "unknown class (expected code, const, npu_const, arena, data, stack)");
  }
  for (const std::string &c : memoryClasses()) {
    std::string at = "/place/" + c;
    std::string region;
    if (!pl.contains(c)) {
      if (c != "npu_const")
        return bad(path, at, "missing: every class needs a region");
      region =
          pl.contains("const") && pl["const"].is_string() ? pl["const"].get<std::string>() : "";
    } else if (!pl[c].is_string()) {
      return bad(path, at, "expected a region name");
    } else {
      region = pl[c].get<std::string>();
    }
    size_t k = 0;
    while (k < m.regions.size() && m.regions[k].name != region)
      ++k;
    if (k == m.regions.size())
      return bad(path, at, "'" + region + "' is not a region of /regions");
    m.place.push_back({c, k});
  }
  return m;
}

std::string memoryMapProblem(const MemoryMap &m, const MemoryBudget &b,
                             const target::TargetDesc *npu) {
  std::map<std::string, uint64_t> used; // region -> bytes
  std::map<std::string, std::vector<const MemoryItem *>> items;
  for (const auto *list : {&b.flash, &b.ram})
    for (const MemoryItem &i : *list)
      if (const MemoryRegion *r = m.regionOf(i.cls)) {
        used[r->name] += i.bytes;
        items[r->name].push_back(&i);
      }
  std::string why;
  for (const MemoryRegion &r : m.regions)
    if (used[r.name] > r.length)
      why += (why.empty() ? "" : "; ") + std::string("region '") + r.name + "' (" +
             std::to_string(r.length) + " bytes) would hold " + std::to_string(used[r.name]) +
             ", " + std::to_string(used[r.name] - r.length) + " more";
  if (npu) {
    for (const char *cls : {"arena", "npu_const"}) {
      const MemoryRegion *r = m.regionOf(cls);
      bool needWrite = std::string(cls) == "arena";
      bool covered = false;
      for (const target::SystemRange &w : npu->system)
        covered = covered || (r->origin >= w.base && r->origin + r->length <= w.base + w.size &&
                              (w.writable || !needWrite));
      if (!covered)
        why += (why.empty() ? "" : "; ") + std::string("region '") + r->name + "' (" +
               hex(r->origin) + ".." + hex(r->origin + r->length - 1) + ") holding the " +
               (needWrite ? "arena" : "NPU constants") + " is outside every " +
               (needWrite ? "writable " : "") + "system-memory window of '" + npu->name +
               "': the NPU could not reach it";
    }
  }
  if (why.empty())
    return "";
  std::string s = "the program does not fit the memory map " + m.file + ": " + why + "\n";
  char line[200];
  for (const MemoryRegion &r : m.regions) {
    std::snprintf(line, sizeof line, "  %s (%s, %llu bytes): %llu bytes\n", r.name.c_str(),
                  hex(r.origin).c_str(), (unsigned long long)r.length,
                  (unsigned long long)used[r.name]);
    s += line;
    for (const MemoryItem *i : items[r.name]) {
      std::snprintf(line, sizeof line, "    %10llu  %s%s\n", (unsigned long long)i->bytes,
                    i->what.c_str(), i->estimate ? " (estimate)" : "");
      s += line;
    }
  }
  return s;
}

std::string linkerFragment(const MemoryMap &m, const std::string &prefix) {
  std::string s = "/* Generated by npucc: places the sections of model '" + prefix +
                  "' in the regions of " + m.file +
                  ". INCLUDE it inside the SECTIONS of the firmware's linker script; code "
                  "(.text) stays where that script puts it. */\n";
  struct Out {
    const char *name, *cls, *inputs;
    bool noload;
  };
  const Out outs[] = {
      {"const", "const", "const table stream", false},
      {"npu_const", "npu_const", "npu_const", false},
      {"arena", "arena", "arena", true},
  };
  for (const Out &o : outs) {
    const MemoryRegion *r = m.regionOf(o.cls);
    s += ".npucc_" + prefix + "_" + o.name + (o.noload ? " (NOLOAD)" : "") + " : ALIGN(64)\n{\n";
    std::string in = o.inputs;
    size_t start = 0;
    while (start < in.size()) {
      size_t sp = in.find(' ', start);
      std::string sec = in.substr(start, sp == std::string::npos ? std::string::npos : sp - start);
      s += "  KEEP(*(.npucc." + prefix + "." + sec + "))\n";
      start = sp == std::string::npos ? in.size() : sp + 1;
    }
    s += "} > " + r->name + "\n";
  }
  return s;
}

} // namespace npucc::driver
