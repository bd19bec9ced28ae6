//===- ArenaApi.h - The caller-owned arena API (codegen-private) ----------===//
//
// With `--arena external` the generated program has no static arena: the
// caller passes one to <prefix>_init together with a context, which
// <prefix>_run then uses (and records the failing layer in). These helpers
// print the header's API, the section macros of the constant tables, and the
// init / error functions of <prefix>.c (docs/output.md, "Caller-owned
// memory").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/lir/Program.h"

#include <string>

namespace npucc::codegen::arena {

/// The header's API: <PREFIX>_ARENA_ALIGN, the error codes, <prefix>_ctx and
/// the declarations of <prefix>_init, <prefix>_run and <prefix>_last_error.
std::string apiHeader(const lir::Program &p, const std::string &prefix);

/// #ifndef defaults (empty) of the section macros of the constant tables:
/// NPUCC_TABLE_ATTR, and NPUCC_STREAM_ATTR when `stream`.
std::string tableSectionMacros(bool stream, const std::string &sections);
/// `#ifndef NAME / #define NAME [__attribute__((section("<sections>.<cls>")))] / #endif`:
/// empty when `sections` is "".
std::string sectionMacro(const std::string &name, const std::string &sections,
                         const std::string &cls);

/// The error helper <prefix>_fail, <prefix>_init (which initialises the HAL
/// once when `npu`) and <prefix>_last_error.
std::string initSource(const lir::Program &p, const std::string &prefix, bool npu);

/// The first statements of <prefix>_run: the context and I/O pointer checks.
std::string runChecks(const lir::Program &p, const std::string &prefix);

/// The statement that records error `rc` of layer `index` (`name`: its
/// comment) in the context and returns it.
std::string failReturn(const std::string &prefix, int index, const std::string &name);

} // namespace npucc::codegen::arena
