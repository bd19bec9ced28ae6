//===- EmbeddedRuntime.h - The C runtime files compiled into npucc --------===//
#pragma once

#include <string>
#include <vector>

namespace npucc::codegen {

struct EmbeddedFile {
  const char *path;     // relative to runtime/, e.g. "kernels/npucc_conv.c"
  std::string contents;
};

const std::vector<EmbeddedFile> &embeddedRuntimeFiles();
/// Contents of one file, or null.
const std::string *findRuntimeFile(const std::string &path);

} // namespace npucc::codegen
