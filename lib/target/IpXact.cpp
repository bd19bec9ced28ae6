//===- IpXact.cpp - Register files in IP-XACT (IEEE 1685): import ---------===//
//
// A component's memory map -> the description skeleton of Svd.h, as for
// CMSIS-SVD. Tags are matched by local name, so IP-XACT 1.4/1.5 (`spirit:`),
// 2014 and 2022 (`ipxact:`) files are read alike. One address block is the
// NPU's register window (`--peripheral BLOCK` when the component has
// several); register files are flattened like SVD clusters; the reset value
// is the register's (`reset/value`, 1.5/2009) or composed from its fields'
// (`resets/reset/value`, 2014/2022). Numbers: decimal, 0x hex and Verilog
// literals ('h1F, 8'hFF, 'b101, 'd10); parameter expressions are refused
// naming the element.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Svd.h"

#include "RegFileXml.h"

#include <algorithm>

namespace npucc::target {

namespace {

using namespace regfile;

std::optional<uint64_t> ipxactNumber(std::string s) {
  s = squeeze(s);
  size_t q = s.find('\'');
  if (q == std::string::npos)
    return svdNumber(s);
  if (q + 2 > s.size())
    return std::nullopt;
  char base = char(std::tolower(static_cast<unsigned char>(s[q + 1])));
  std::string digits = s.substr(q + 2);
  digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
  if (base == 'h')
    return svdNumber("0x" + digits);
  if (base == 'b')
    return svdNumber("#" + digits);
  if (base == 'd')
    return svdNumber(digits);
  return std::nullopt;
}

class IpXactImporter : XmlReader {
public:
  IpXactImporter(const std::string &xml, const SvdImportOptions &o)
      : XmlReader(xml, o.file), Opts(o) {}

  ojson run() {
    parse();
    pugi::xml_node comp = Doc.document_element();
    if (!comp || localName(comp.name()) != "component")
      throw ImportError{Opts.file + ": no <component> element: not an IP-XACT file"};
    std::vector<std::pair<std::string, pugi::xml_node>> blocks; // "MAP/BLOCK"
    for (pugi::xml_node maps : kids(comp, "memoryMaps"))
      for (pugi::xml_node map : kids(maps, "memoryMap"))
        for (pugi::xml_node b : kids(map, "addressBlock"))
          blocks.push_back({text(map, "name") + "/" + text(b, "name"), b});
    if (blocks.empty())
      fail(comp, "no memoryMaps/memoryMap/addressBlock: the component has no registers");
    std::string names;
    pugi::xml_node block;
    for (const auto &[n, b] : blocks) {
      names += (names.empty() ? "" : ", ") + n;
      if (text(b, "name") == Opts.peripheral || n == Opts.peripheral)
        block = b;
    }
    if (Opts.peripheral.empty()) {
      if (blocks.size() > 1)
        fail(comp, std::to_string(blocks.size()) + " address blocks (" + names +
                       "): choose one with --peripheral BLOCK");
      block = blocks[0].second;
    } else if (!block) {
      fail(comp, "no address block '" + Opts.peripheral + "' (the component has " + names + ")");
    }
    ojson regs = ojson::array();
    container(block, "", 0, regs);
    if (regs.empty())
      fail(block, "address block '" + text(block, "name") + "' has no registers");
    std::string cname = text(comp, "name");
    std::string vlnv = text(comp, "vendor") + ":" + text(comp, "library") + ":" + cname + ":" +
                       text(comp, "version");
    std::string desc = squeeze(text(comp, "description"));
    ojson j;
    j["name"] = slug(cname);
    j["description"] = (desc.empty() ? "" : desc + "; ") + "registers imported from " + Opts.file +
                       " (IP-XACT component " + vlnv + ", address block " + text(block, "name") +
                       ") by npucc target import";
    j["todo"] = todoList();
    j["base_address"] = hex(number(block, "baseAddress", true).value_or(0));
    j["registers"] = std::move(regs);
    return j;
  }

private:
  const SvdImportOptions &Opts;

  std::optional<uint64_t> number(pugi::xml_node n, const char *tag, bool required) const {
    pugi::xml_node c = kid(n, tag);
    if (!c) {
      if (required)
        fail(n, std::string("missing <") + tag + ">");
      return std::nullopt;
    }
    auto v = ipxactNumber(c.text().as_string());
    if (!v)
      fail(c, std::string("'") + squeeze(c.text().as_string()) +
                  "' is not a number (decimal, 0x hex or a Verilog literal such as 'h1F; "
                  "parameter expressions are not evaluated)");
    return v;
  }
  std::string access(pugi::xml_node n) const { return checked(n, "access", accessValues()); }

  void container(pugi::xml_node c, const std::string &prefix, uint64_t base, ojson &regs) const {
    for (pugi::xml_node n : c.children()) {
      std::string tag = localName(n.name());
      if (tag == "registerFile") {
        if (kid(n, "dim"))
          fail(n, "register file arrays (dim) are not supported; list the register files");
        container(n, prefix + text(n, "name") + "_", base + *number(n, "addressOffset", true),
                  regs);
      } else if (tag == "register") {
        regs.push_back(registerOf(n, prefix, base));
      }
    }
  }

  ojson registerOf(pugi::xml_node n, const std::string &prefix, uint64_t base) const {
    std::string name = text(n, "name");
    if (name.empty())
      fail(n, "missing <name>");
    if (kid(n, "dim"))
      fail(n, "register arrays (dim) are not supported; list the registers");
    uint64_t size = *number(n, "size", true);
    if (size != 8 && size != 16 && size != 32 && size != 64)
      fail(n, "size " + std::to_string(size) + ": npucc registers are 8, 16, 32 or 64 bits");
    ojson r;
    r["name"] = prefix + name;
    r["offset"] = hex(base + *number(n, "addressOffset", true));
    r["width"] = size;
    if (std::string d = text(n, "description"); !d.empty())
      r["doc"] = d;
    if (kid(n, "access"))
      r["access"] = access(n);
    std::optional<uint64_t> reset;
    if (pugi::xml_node rs = kid(n, "reset")) // 1.5 / 2009: the register's reset
      reset = number(rs, "value", true);
    ojson fs = ojson::array();
    for (pugi::xml_node f : kids(n, "field")) {
      std::string fname = text(f, "name");
      if (fname.empty())
        fail(f, "missing <name>");
      uint64_t lsb = *number(f, "bitOffset", true);
      uint64_t w = *number(f, "bitWidth", true);
      if (w == 0 || lsb + w > size)
        fail(f, "bits " + std::to_string(lsb) + ".." + std::to_string(lsb + w - 1) +
                    " outside its " + std::to_string(size) + "-bit register");
      ojson o;
      o["name"] = fname;
      o["lsb"] = lsb;
      o["width"] = w;
      if (std::string d = text(f, "description"); !d.empty())
        o["doc"] = d;
      if (kid(f, "access"))
        o["access"] = access(f);
      if (kid(f, "modifiedWriteValue"))
        o["modified_write"] = checked(f, "modifiedWriteValue", modifiedWriteValues());
      if (kid(f, "readAction")) // IP-XACT's read actions: SVD's but modifyExternal
        o["read_action"] = checked(
            f, "readAction", Vocabulary(readActionValues().begin(), readActionValues().end() - 1));
      // 2014 / 2022: resets/reset/value per field, composed into the register's.
      if (pugi::xml_node rr = kid(kid(f, "resets"), "reset")) {
        uint64_t v = *number(rr, "value", true);
        uint64_t mask = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
        reset = reset.value_or(0) | ((v & mask) << lsb);
      }
      fs.push_back(std::move(o));
    }
    if (reset)
      r["reset"] = hex(*reset & (size >= 64 ? ~uint64_t(0) : (uint64_t(1) << size) - 1));
    if (!fs.empty())
      r["fields"] = std::move(fs);
    return r;
  }
};

} // namespace

Result<nlohmann::ordered_json> importIpXact(const std::string &xml, const SvdImportOptions &opts) {
  try {
    return IpXactImporter(xml, opts).run();
  } catch (const ImportError &e) {
    return error(e.message);
  }
}

} // namespace npucc::target
