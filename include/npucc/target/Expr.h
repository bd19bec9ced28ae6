//===- Expr.h - Field expressions of a target description ------------------===//
//
// A command field may be computed from the semantic parameters by a small
// integer expression ("fields": {"W5.load_time": "cdiv(out_ch, oc_block) - 1"}):
// integer literals (decimal, 0x hex, '_' separators), parameter names
// (runtime/hal/npucc_params.h), + - * / %, cdiv(a, b), min(a, b), max(a, b),
// << >> & |, unary minus and parentheses, with C's precedence. Values are
// int64; / % cdiv << >> & | take non-negative operands, and overflow,
// division by zero or a shift outside 0..62 is an error. The one evaluator
// is the C stack machine npucc_expr_eval (runtime/hal/npucc_npu.c), which
// the compiler's proofs call on the postfix form built here, so the
// compiler and the firmware compute the same values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace npucc::target {

/// NPUCC_EXPR_* values (runtime/hal/npucc_desc.h).
enum class ExprOp : uint8_t {
  Const = 0,
  Param,
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  CDiv,
  Min,
  Max,
  Shl,
  Shr,
  And,
  Or
};

struct Expr {
  ExprOp op = ExprOp::Const;
  int64_t value = 0;      // Const
  int param = -1;         // Param: index in paramNames()
  std::vector<Expr> args; // binary operations: two

  bool isConst() const { return op == ExprOp::Const; }
};

/// A parse error: the message and the 1-based column it refers to.
struct ExprError {
  std::string message;
  size_t column = 0;
};

/// Parses `text`; on error returns nullopt and fills `err` ("unknown
/// parameter 'out_c' (did you mean 'out_ch'?)", column 1).
std::optional<Expr> parseExpr(const std::string &text, ExprError &err);
/// Deterministic text with the fewest parentheses: "cdiv(out_ch, 16) - 1".
std::string printExpr(const Expr &e);
/// Parameters it reads, in order of first appearance.
std::vector<int> exprParams(const Expr &e);
/// Postfix (op, arg) pairs for npucc_expr_eval.
std::vector<std::pair<uint8_t, int64_t>> exprPostfix(const Expr &e);
/// Stack slots npucc_expr_eval needs.
unsigned exprStackDepth(const Expr &e);
/// Evaluates with npucc_expr_eval; nullopt when it fails (NPUCC_ERR_RANGE).
std::optional<int64_t> evalExpr(const Expr &e, const std::vector<int64_t> &params);
/// `p`, `p - c`, `p + c` or `c + p`: the parameter and c' with value = p - c'.
std::optional<std::pair<int, int64_t>> exprAffine(const Expr &e);

/// A closed range of int64 values; `exact` false when some operation can
/// fail inside it (overflow, a negative operand, division by zero).
struct Interval {
  int64_t lo = 0, hi = 0;
  bool exact = true;
};
/// The values the expression can take when each parameter p lies in
/// paramRange(p): a sound enclosure (every value lies in [lo, hi]).
Interval exprInterval(const Expr &e, const std::function<Interval(int)> &paramRange);

} // namespace npucc::target
