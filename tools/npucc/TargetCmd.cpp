//===- TargetCmd.cpp - `npucc target import|export`: register files -------===//
//
//   npucc target import --svd FILE.svd|--ipxact FILE.xml [--peripheral NAME] -o DESC.json
//   npucc target export --svd FILE.svd [--target NAME|DESC.json]
//
// Import writes a description skeleton (registers and base address from the
// CMSIS-SVD or IP-XACT file, the semantic sections listed in "todo") and checks that its
// registers load; export writes a description's registers as SVD.
// docs/target.md, "Starting from a register file".
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "npucc/support/FileWrite.h"
#include "npucc/target/Svd.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace npucc::tool {

namespace {

/// The register file's text (at most 64 MiB: register files are small).
Result<std::string> readSvd(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return error("cannot open the register file '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  if (s.str().size() > (size_t(64) << 20))
    return error("'" + path + "': larger than 64 MiB; not a register file");
  return s.str();
}

} // namespace

int runTargetImport(const TargetImportFlags &f) {
  if (f.svd.empty() == f.ipxact.empty())
    return reportError(error("npucc target import: give the register file with --svd FILE "
                             "(CMSIS-SVD) or --ipxact FILE (IP-XACT), one of them"));
  const std::string &file = f.svd.empty() ? f.ipxact : f.svd;
  auto text = readSvd(file);
  if (!text)
    return reportError(text.error());
  target::SvdImportOptions io{file, f.peripheral};
  auto j = f.svd.empty() ? target::importIpXact(*text, io) : target::importSvd(*text, io);
  if (!j)
    return reportError(j.error());
  std::string json = j->dump(2) + "\n";
  // The skeleton must load up to its "todo": a register the loader refuses is named now.
  auto loaded = target::parseTargetJson(json, f.out);
  std::string msg = loaded ? "" : loaded.error().str();
  if (loaded || msg.find("/todo: a skeleton written by") == std::string::npos)
    return reportError(error("the registers imported from '" + file +
                             "' do not form a valid description: " + msg));
  if (Status s = replaceFileBytes(f.out, json, "the description skeleton"); !s)
    return reportError(s.error());
  size_t fields = 0;
  for (const auto &r : (*j)["registers"])
    fields += r.contains("fields") ? r["fields"].size() : 0;
  std::printf("npucc: wrote %s: %zu registers, %zu fields, base address %s (peripheral of %s)\n"
              "still to describe (the \"todo\" list; docs/target.md, \"Starting from a register "
              "file\"): memories, dma, compute, commands, status, timing\n",
              f.out.c_str(), (*j)["registers"].size(), fields,
              (*j)["base_address"].get<std::string>().c_str(), file.c_str());
  return 0;
}

int runTargetExport(const TargetExportFlags &f, const std::string &targetName) {
  if (f.svd.empty())
    return reportError(error("npucc target export: give the output file with --svd FILE"));
  auto t = driver::loadTarget(targetName);
  if (!t)
    return reportError(t.error());
  if (Status s = replaceFileBytes(f.svd, target::exportSvd(*t), "the SVD file"); !s)
    return reportError(s.error());
  size_t n = 0;
  for (const target::Register &r : t->registers)
    n += !r.isWord();
  std::printf("npucc: wrote %s: %zu registers of '%s'\n", f.svd.c_str(), n, t->name.c_str());
  return 0;
}

} // namespace npucc::tool
