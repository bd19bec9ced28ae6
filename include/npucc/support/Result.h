//===- Result.h - Value-or-Diagnostic return type --------------------------===//
//
// Result<T> holds either a T or a Diagnostic. Result<void> is Status.
// Usage:
//   Result<Graph> r = importModel(path);
//   if (!r) return r.error();
//   Graph g = std::move(*r);
//
//===----------------------------------------------------------------------===//
#pragma once

#include "npucc/support/Diagnostic.h"

#include <cassert>
#include <optional>
#include <utility>
#include <variant>

namespace npucc {

/// Convenience constructor: `return error("bad thing") ;`
inline Diagnostic error(std::string msg) { return Diagnostic(std::move(msg)); }

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : V(std::in_place_index<0>, std::move(value)) {}
  Result(Diagnostic d) : V(std::in_place_index<1>, std::move(d)) {}

  explicit operator bool() const { return V.index() == 0; }
  bool ok() const { return V.index() == 0; }

  T &operator*() { return std::get<0>(V); }
  const T &operator*() const { return std::get<0>(V); }
  T *operator->() { return &std::get<0>(V); }
  const T *operator->() const { return &std::get<0>(V); }
  T take() { return std::move(std::get<0>(V)); }

  Diagnostic &error() { return std::get<1>(V); }
  const Diagnostic &error() const { return std::get<1>(V); }

private:
  std::variant<T, Diagnostic> V;
};

template <> class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Diagnostic d) : D(std::move(d)) {}

  explicit operator bool() const { return !D.has_value(); }
  bool ok() const { return !D.has_value(); }
  Diagnostic &error() { return *D; }
  const Diagnostic &error() const { return *D; }

private:
  std::optional<Diagnostic> D;
};

using Status = Result<void>;
inline Status success() { return Status(); }

} // namespace npucc

/// Propagate an error from an expression returning Result<...>.
#define NPUCC_TRY(expr)                                                                            \
  do {                                                                                             \
    auto npucc_try_status_ = (expr);                                                               \
    if (!npucc_try_status_)                                                                        \
      return std::move(npucc_try_status_.error());                                                 \
  } while (0)
