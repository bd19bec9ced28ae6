//===- Svd.h - Register files in CMSIS-SVD: import and export -------------===//
//
// A chip team's register file is usually an SVD (or IP-XACT) file already;
// `npucc target import --svd FILE` starts a description from it: a skeleton
// whose "registers" (offsets, widths, fields, access types, write-1-to-clear
// and read-to-clear, reset values, docs) and "base_address" are filled in and
// whose semantic sections are listed in "todo" (the loader reports them).
// `npucc target export --svd` writes a description's registers as SVD (for
// the vendor's tools, and the round-trip test). IP-XACT components are
// imported too (IpXact.cpp). docs/target.md, "Starting from a register file".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Result.h"
#include "npucc/target/Target.h"

#include <nlohmann/json.hpp>

#include <string>

namespace npucc::target {

struct SvdImportOptions {
  std::string file;       // for diagnostics ("FILE:LINE: ...")
  std::string peripheral; // which peripheral; "" = the only one
};

/// The description skeleton (an ordered JSON object: name, description, todo,
/// base_address, registers) of one peripheral of the SVD text `xml`. Errors
/// name the file, the line and the element. Clusters are flattened (their
/// registers named CLUSTER_REG), `dim` arrays expanded, `derivedFrom`
/// peripherals and registers resolved.
Result<nlohmann::ordered_json> importSvd(const std::string &xml, const SvdImportOptions &opts);

/// The same skeleton from an IP-XACT component (IEEE 1685: 1.4/1.5, 2009, 2014, 2022), one
/// address block of its memory maps (`opts.peripheral`: the block's name, or MAP/BLOCK;
/// "" = the only one). Register files are flattened; register arrays are refused.
Result<nlohmann::ordered_json> importIpXact(const std::string &xml, const SvdImportOptions &opts);

/// The memory-mapped registers of `t` (frame words are not registers) as an
/// SVD device with one peripheral at t.baseAddress.
std::string exportSvd(const TargetDesc &t);

} // namespace npucc::target
