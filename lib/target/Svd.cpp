//===- Svd.cpp - Register files in CMSIS-SVD: import and export -----------===//
//
// The SVD file is parsed with pugixml (Debian's libpugixml-dev). Import
// resolves what SVD leaves implicit (inherited size/access/resetValue,
// derivedFrom, dim arrays, clusters) into one flat register list in the
// description's JSON form; every error names the file, the line and the
// element. Export writes the inverse with no inheritance, so export then
// import gives the description's registers back exactly.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Svd.h"

#include "npucc/target/CTable.h"

#include "RegFileXml.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

namespace npucc::target {

namespace {

using namespace regfile;

/// Inherited register properties (SVD's registerPropertiesGroup).
struct Props {
  std::optional<uint64_t> size, reset;
  std::string access;
};

class Importer : XmlReader {
public:
  Importer(const std::string &xml, const SvdImportOptions &o) : XmlReader(xml, o.file), Opts(o) {}

  ojson run() {
    parse();
    pugi::xml_node dev = Doc.child("device");
    if (!dev)
      throw ImportError{Opts.file + ": no <device> element: not a CMSIS-SVD file"};
    Props devProps = props(dev, Props{});
    pugi::xml_node periphs = dev.child("peripherals");
    std::vector<pugi::xml_node> all;
    for (pugi::xml_node p : periphs.children("peripheral"))
      all.push_back(p);
    if (all.empty())
      fail(dev, "the device has no <peripherals><peripheral>");
    pugi::xml_node p;
    std::string names;
    for (pugi::xml_node q : all) {
      std::string n = text(q, "name");
      names += (names.empty() ? "" : ", ") + n;
      if (n == Opts.peripheral)
        p = q;
    }
    if (Opts.peripheral.empty()) {
      if (all.size() > 1)
        fail(periphs, std::to_string(all.size()) + " peripherals (" + names +
                          "): choose one with --peripheral NAME");
      p = all[0];
    } else if (!p) {
      fail(periphs, "no peripheral '" + Opts.peripheral + "' (the file has " + names + ")");
    }
    std::string pname = text(p, "name");
    if (pname.empty())
      fail(p, "a peripheral without a <name>");
    Props pp = props(p, devProps);
    pugi::xml_node regsOwner = p;
    if (!p.child("registers") && p.attribute("derivedFrom")) {
      std::string from = p.attribute("derivedFrom").value();
      regsOwner = pugi::xml_node();
      for (pugi::xml_node q : all)
        if (text(q, "name") == from)
          regsOwner = q;
      if (!regsOwner)
        fail(p, "derivedFrom '" + from + "': no such peripheral");
      pp = props(p, props(regsOwner, devProps));
    }
    auto base = number(p, "baseAddress", true);
    ojson regs = ojson::array();
    container(regsOwner.child("registers"), "", 0, pp, regs);
    if (regs.empty())
      fail(p, "peripheral '" + pname + "' has no registers");
    std::string desc = text(p, "description");
    if (desc.empty())
      desc = text(dev, "description");
    ojson j;
    j["name"] = slug(pname);
    j["description"] = (desc.empty() ? "" : desc + "; ") + "registers imported from " + Opts.file +
                       " (device " + text(dev, "name") + ", peripheral " + pname +
                       ") by npucc target import";
    j["todo"] = todoList();
    j["base_address"] = hex(*base);
    j["registers"] = std::move(regs);
    return j;
  }

private:
  const SvdImportOptions &Opts;

  std::optional<uint64_t> number(pugi::xml_node n, const char *child, bool required) const {
    pugi::xml_node c = n.child(child);
    if (!c) {
      if (required)
        fail(n, std::string("missing <") + child + ">");
      return std::nullopt;
    }
    auto v = svdNumber(c.text().as_string());
    if (!v)
      fail(c, std::string("'") + c.text().as_string() + "' is not a number (decimal, 0x hex, " +
                  "# binary)");
    return v;
  }
  Props props(pugi::xml_node n, Props in) const {
    if (auto s = number(n, "size", false))
      in.size = s;
    if (auto r = number(n, "resetValue", false))
      in.reset = r;
    if (n.child("access"))
      in.access = checked(n, "access", accessValues());
    return in;
  }

  /// The names and offsets of a possibly dim-ed element.
  std::vector<std::pair<std::string, uint64_t>> instances(pugi::xml_node n) const {
    std::string name = text(n, "name");
    if (name.empty())
      fail(n, "missing <name>");
    auto off = number(n, "addressOffset", true);
    auto dim = number(n, "dim", false);
    if (!dim) {
      if (name.find("%s") != std::string::npos)
        fail(n, "a name with %s needs <dim>");
      return {{name, *off}};
    }
    if (*dim == 0 || *dim > 1024)
      fail(n.child("dim"), "dim " + std::to_string(*dim) + " out of range 1..1024");
    auto inc = number(n, "dimIncrement", true);
    std::vector<std::string> idx;
    std::string di = text(n, "dimIndex");
    if (di.empty()) {
      for (uint64_t i = 0; i < *dim; ++i)
        idx.push_back(std::to_string(i));
    } else if (size_t dash = di.find('-'); dash != std::string::npos && di.find(',') == di.npos) {
      auto a = svdNumber(di.substr(0, dash)), b = svdNumber(di.substr(dash + 1));
      if (!a || !b || *b < *a)
        fail(n.child("dimIndex"), "'" + di + "' is not a range FIRST-LAST");
      for (uint64_t i = *a; i <= *b; ++i)
        idx.push_back(std::to_string(i));
    } else {
      std::stringstream ss(di);
      for (std::string item; std::getline(ss, item, ',');)
        idx.push_back(squeeze(item));
    }
    if (idx.size() != *dim)
      fail(n, "dimIndex gives " + std::to_string(idx.size()) + " indices, dim is " +
                  std::to_string(*dim));
    bool brackets = name.find("[%s]") != std::string::npos;
    std::string pat = brackets ? "[%s]" : "%s";
    size_t at = name.find(pat);
    if (at == std::string::npos)
      fail(n, "a register array (dim) needs %s or [%s] in its name");
    std::vector<std::pair<std::string, uint64_t>> out;
    for (size_t i = 0; i < idx.size(); ++i)
      out.push_back({name.substr(0, at) + idx[i] + name.substr(at + pat.size()), *off + i * *inc});
    return out;
  }

  /// `n`'s child `tag`, or that of the register it is derived from.
  static pugi::xml_node own(pugi::xml_node n, pugi::xml_node base, const char *tag) {
    return n.child(tag) ? n.child(tag) : base.child(tag);
  }

  void container(pugi::xml_node c, const std::string &prefix, uint64_t base, const Props &in,
                 ojson &regs) const {
    for (pugi::xml_node n : c.children()) {
      std::string tag = n.name();
      if (tag == "cluster") {
        Props cp = props(n, in);
        for (auto &[name, off] : instances(n))
          container(n, prefix + name + "_", base + off, cp, regs);
      } else if (tag == "register") {
        registerOf(n, c, prefix, base, in, regs);
      }
    }
  }

  void registerOf(pugi::xml_node n, pugi::xml_node scope, const std::string &prefix, uint64_t base,
                  const Props &in, ojson &regs) const {
    pugi::xml_node from;
    if (pugi::xml_attribute d = n.attribute("derivedFrom")) {
      for (pugi::xml_node s : scope.children("register"))
        if (text(s, "name") == d.value() && s != n)
          from = s;
      if (!from)
        fail(n, "derivedFrom '" + std::string(d.value()) + "': no such register here");
    }
    Props p = props(n, from ? props(from, in) : in);
    if (!p.size)
      p.size = 32;
    if (*p.size != 8 && *p.size != 16 && *p.size != 32 && *p.size != 64)
      fail(n, "size " + std::to_string(*p.size) + ": npucc registers are 8, 16, 32 or 64 bits");
    std::string doc = squeeze(own(n, from, "description").text().as_string());
    pugi::xml_node fieldsNode = own(n, from, "fields");
    for (auto &[name, off] : instances(n)) {
      ojson r;
      r["name"] = prefix + name;
      r["offset"] = hex(base + off);
      r["width"] = *p.size;
      if (!doc.empty())
        r["doc"] = doc;
      if (!p.access.empty())
        r["access"] = p.access;
      if (pugi::xml_node m = own(n, from, "modifiedWriteValues"))
        r["modified_write"] = writeAction(m.parent());
      if (pugi::xml_node m = own(n, from, "readAction"))
        r["read_action"] = readAction(m.parent());
      if (p.reset)
        r["reset"] = hex(*p.reset & (*p.size >= 64 ? ~uint64_t(0) : (uint64_t(1) << *p.size) - 1));
      ojson fs = ojson::array();
      for (pugi::xml_node f : fieldsNode.children("field"))
        fs.push_back(field(f, unsigned(*p.size)));
      if (!fs.empty())
        r["fields"] = std::move(fs);
      regs.push_back(std::move(r));
    }
  }

  std::string writeAction(pugi::xml_node n) const {
    return checked(n, "modifiedWriteValues", modifiedWriteValues());
  }
  std::string readAction(pugi::xml_node n) const {
    return checked(n, "readAction", readActionValues());
  }

  ojson field(pugi::xml_node f, unsigned width) const {
    std::string name = text(f, "name");
    if (name.empty())
      fail(f, "missing <name>");
    if (f.child("dim"))
      fail(f, "field arrays (dim) are not supported; list the fields");
    uint64_t lsb = 0, w = 0;
    if (f.child("bitOffset")) {
      lsb = *number(f, "bitOffset", true);
      w = f.child("bitWidth") ? *number(f, "bitWidth", true) : 1;
    } else if (f.child("lsb")) {
      lsb = *number(f, "lsb", true);
      uint64_t msb = *number(f, "msb", true);
      if (msb < lsb)
        fail(f, "msb " + std::to_string(msb) + " below lsb " + std::to_string(lsb));
      w = msb - lsb + 1;
    } else if (f.child("bitRange")) {
      std::string br = text(f, "bitRange");
      unsigned msb = 0, l = 0;
      char close = 0;
      if (std::sscanf(br.c_str(), "[%u:%u%c", &msb, &l, &close) != 3 || close != ']' || msb < l)
        fail(f.child("bitRange"), "'" + br + "' is not [MSB:LSB]");
      lsb = l;
      w = msb - l + 1;
    } else {
      fail(f, "no bit position (bitOffset/bitWidth, lsb/msb or bitRange)");
    }
    if (w == 0 || lsb + w > width)
      fail(f, "bits " + std::to_string(lsb) + ".." + std::to_string(lsb + w - 1) + " outside its " +
                  std::to_string(width) + "-bit register");
    ojson o;
    o["name"] = name;
    o["lsb"] = lsb;
    o["width"] = w;
    if (std::string d = text(f, "description"); !d.empty())
      o["doc"] = d;
    if (f.child("access"))
      o["access"] = checked(f, "access", accessValues());
    if (f.child("modifiedWriteValues"))
      o["modified_write"] = writeAction(f);
    if (f.child("readAction"))
      o["read_action"] = readAction(f);
    return o;
  }
};

void addText(pugi::xml_node parent, const char *tag, const std::string &value) {
  parent.append_child(tag).text().set(value.c_str());
}

void addInfo(pugi::xml_node n, const RegFileInfo &i) {
  if (!i.access.empty())
    addText(n, "access", i.access);
  if (i.reset)
    addText(n, "resetValue", hex(*i.reset));
}

void addActions(pugi::xml_node n, const RegFileInfo &i) {
  if (!i.modifiedWrite.empty())
    addText(n, "modifiedWriteValues", i.modifiedWrite);
  if (!i.readAction.empty())
    addText(n, "readAction", i.readAction);
}

} // namespace

Result<nlohmann::ordered_json> importSvd(const std::string &xml, const SvdImportOptions &opts) {
  try {
    return Importer(xml, opts).run();
  } catch (const ImportError &e) {
    return error(e.message);
  }
}

std::string exportSvd(const TargetDesc &t) {
  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "utf-8";
  pugi::xml_node dev = doc.append_child("device");
  dev.append_attribute("schemaVersion") = "1.3";
  std::string id = cIdentifier(t.name);
  addText(dev, "name", id);
  addText(dev, "version", "1.0");
  addText(dev, "description",
          t.description.empty() ? t.name + " (written by npucc target export)" : t.description);
  addText(dev, "addressUnitBits", "8");
  addText(dev, "width", std::to_string(t.bus.accessBits));
  pugi::xml_node p = dev.append_child("peripherals").append_child("peripheral");
  addText(p, "name", id);
  addText(p, "baseAddress", hex(t.baseAddress));
  uint64_t end = 0;
  for (const Register &r : t.registers)
    if (!r.isWord())
      end = std::max<uint64_t>(end, r.offset + r.width / 8);
  pugi::xml_node blk = p.append_child("addressBlock");
  addText(blk, "offset", "0x0");
  addText(blk, "size", hex(end));
  addText(blk, "usage", "registers");
  pugi::xml_node regs = p.append_child("registers");
  for (const Register &r : t.registers) {
    if (r.isWord())
      continue;
    pugi::xml_node x = regs.append_child("register");
    addText(x, "name", r.name);
    if (!r.doc.empty())
      addText(x, "description", r.doc);
    addText(x, "addressOffset", hex(r.offset));
    addText(x, "size", std::to_string(r.width));
    addInfo(x, r.file);
    addActions(x, r.file);
    if (r.fields.empty())
      continue;
    pugi::xml_node fs = x.append_child("fields");
    for (const Field &f : r.fields) {
      pugi::xml_node y = fs.append_child("field");
      addText(y, "name", f.name);
      if (!f.doc.empty())
        addText(y, "description", f.doc);
      addText(y, "bitOffset", std::to_string(f.lsb));
      addText(y, "bitWidth", std::to_string(f.width));
      if (!f.file.access.empty())
        addText(y, "access", f.file.access);
      addActions(y, f.file);
    }
  }
  std::ostringstream os;
  doc.save(os, "  ", pugi::format_default, pugi::encoding_utf8);
  return os.str();
}

} // namespace npucc::target
