//===- EmbeddedRuntime.cpp - Lookup of embedded runtime files -------------===//
#include "npucc/codegen/EmbeddedRuntime.h"

namespace npucc::codegen {

const std::string *findRuntimeFile(const std::string &path) {
  for (const EmbeddedFile &f : embeddedRuntimeFiles())
    if (path == f.path)
      return &f.contents;
  return nullptr;
}

} // namespace npucc::codegen
