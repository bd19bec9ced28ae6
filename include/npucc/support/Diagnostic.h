//===- Diagnostic.h - User-facing errors with model/node/op context -------===//
//
// A Diagnostic is an error value: the library returns it instead of calling
// exit() or throwing across its boundary. Its one-line form is
//   model.onnx: node 'Conv_3' (Conv): error: stride 4 not supported
// followed by optional "note:" lines.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace npucc {

struct Diagnostic {
  std::string file;    // model or target file, may be empty
  std::string node;    // node name, may be empty
  std::string op;      // op type, may be empty
  std::string message; // what went wrong
  std::vector<std::string> notes;

  Diagnostic() = default;
  explicit Diagnostic(std::string msg) : message(std::move(msg)) {}

  Diagnostic &inFile(std::string f) {
    if (file.empty())
      file = std::move(f);
    return *this;
  }
  Diagnostic &atNode(std::string n, std::string o) {
    if (node.empty() && op.empty()) {
      node = std::move(n);
      op = std::move(o);
    }
    return *this;
  }
  Diagnostic &note(std::string n) {
    notes.push_back(std::move(n));
    return *this;
  }

  /// The full text: one error line, then one line per note.
  std::string str() const;
};

} // namespace npucc
