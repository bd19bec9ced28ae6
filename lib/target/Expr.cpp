//===- Expr.cpp - Field expressions: parse, print, evaluate, bound ---------===//
//
// The grammar and semantics are in include/npucc/target/Expr.h and
// docs/target.md ("fields"). Evaluation is the runtime's npucc_expr_eval on
// the postfix form; the interval bound is this file's own (sound, not tight
// for shared parameters).
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Expr.h"

#include "npucc/target/Target.h"

#include "JsonReader.h"

#include "../../runtime/hal/npucc_desc.h"

#include <algorithm>
#include <cctype>

namespace npucc::target {

namespace {

struct OpInfo {
  ExprOp op;
  const char *text;
  int prec; // C precedence: higher binds tighter; 0 = a function
};

const OpInfo Ops[] = {
    {ExprOp::Or, "|", 1},      {ExprOp::And, "&", 2},   {ExprOp::Shl, "<<", 3},
    {ExprOp::Shr, ">>", 3},    {ExprOp::Add, "+", 4},   {ExprOp::Sub, "-", 4},
    {ExprOp::Mul, "*", 5},     {ExprOp::Div, "/", 5},   {ExprOp::Mod, "%", 5},
    {ExprOp::CDiv, "cdiv", 0}, {ExprOp::Min, "min", 0}, {ExprOp::Max, "max", 0},
};

const OpInfo *info(ExprOp op) {
  for (const OpInfo &o : Ops)
    if (o.op == op)
      return &o;
  return nullptr;
}

class Parser {
public:
  Parser(const std::string &t, ExprError &e) : S(t), Err(e) {}

  std::optional<Expr> run() {
    std::optional<Expr> e = binary(1);
    if (!e)
      return std::nullopt;
    skip();
    if (Pos < S.size())
      return fail(std::string("unexpected '") + S[Pos] + "'");
    return e;
  }

private:
  const std::string &S;
  ExprError &Err;
  size_t Pos = 0;
  unsigned Depth = 0;

  std::nullopt_t fail(const std::string &msg, size_t at = SIZE_MAX) {
    if (Err.message.empty()) {
      Err.message = msg;
      Err.column = (at == SIZE_MAX ? Pos : at) + 1;
    }
    return std::nullopt;
  }
  void skip() {
    while (Pos < S.size() && std::isspace(static_cast<unsigned char>(S[Pos])))
      ++Pos;
  }
  /// The binary operator at Pos with precedence >= minPrec, or null.
  const OpInfo *peekOp(int minPrec) {
    skip();
    for (const OpInfo &o : Ops) {
      size_t n = std::char_traits<char>::length(o.text);
      if (o.prec >= minPrec && o.prec > 0 && S.compare(Pos, n, o.text) == 0)
        return &o;
    }
    return nullptr;
  }
  std::optional<Expr> binary(int minPrec) {
    std::optional<Expr> lhs = unary();
    if (!lhs)
      return std::nullopt;
    while (const OpInfo *o = peekOp(minPrec)) {
      Pos += std::char_traits<char>::length(o->text);
      std::optional<Expr> rhs = binary(o->prec + 1);
      if (!rhs)
        return std::nullopt;
      Expr e;
      e.op = o->op;
      e.args = {std::move(*lhs), std::move(*rhs)};
      lhs = std::move(e);
    }
    return lhs;
  }
  std::optional<Expr> unary() {
    skip();
    if (++Depth > 64)
      return fail("expression nested too deeply");
    std::optional<Expr> r = primary();
    --Depth;
    return r;
  }
  std::optional<Expr> primary() {
    if (Pos >= S.size())
      return fail("expected a number, a parameter or '('");
    char c = S[Pos];
    if (c == '-') {
      ++Pos;
      std::optional<Expr> x = unary();
      if (!x)
        return std::nullopt;
      if (x->isConst() && x->value != INT64_MIN) {
        x->value = -x->value;
        return x;
      }
      Expr e;
      e.op = ExprOp::Sub;
      e.args = {Expr{}, std::move(*x)};
      return e;
    }
    if (c == '(') {
      ++Pos;
      std::optional<Expr> x = binary(1);
      if (!x)
        return std::nullopt;
      skip();
      if (Pos >= S.size() || S[Pos] != ')')
        return fail("expected ')'");
      ++Pos;
      return x;
    }
    if (std::isdigit(static_cast<unsigned char>(c)))
      return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
      return name();
    return fail(std::string("unexpected '") + c + "'");
  }
  std::optional<Expr> number() {
    size_t start = Pos;
    unsigned base = 10;
    if (S.compare(Pos, 2, "0x") == 0 || S.compare(Pos, 2, "0X") == 0) {
      base = 16;
      Pos += 2;
    }
    uint64_t v = 0;
    bool digits = false;
    while (Pos < S.size()) {
      char c = char(std::tolower(static_cast<unsigned char>(S[Pos])));
      unsigned d;
      if (c >= '0' && c <= '9')
        d = unsigned(c - '0');
      else if (base == 16 && c >= 'a' && c <= 'f')
        d = unsigned(c - 'a' + 10);
      else if (c == '_' && digits) {
        ++Pos;
        continue;
      } else if (std::isalnum(static_cast<unsigned char>(c)))
        return fail("bad digit '" + std::string(1, S[Pos]) + "' in a number");
      else
        break;
      if (v > (uint64_t(INT64_MAX) - d) / base)
        return fail("number does not fit 63 bits", start);
      v = v * base + d;
      digits = true;
      ++Pos;
    }
    if (!digits)
      return fail("expected digits after '0x'", start);
    Expr e;
    e.value = int64_t(v);
    return e;
  }
  std::optional<Expr> name() {
    size_t start = Pos;
    while (Pos < S.size() && (std::isalnum(static_cast<unsigned char>(S[Pos])) || S[Pos] == '_'))
      ++Pos;
    std::string n = S.substr(start, Pos - start);
    for (const OpInfo &o : Ops)
      if (o.prec == 0 && n == o.text)
        return call(o, start);
    int id = paramId(n);
    if (id < 0) {
      std::set<std::string> names(paramNames().begin(), paramNames().end());
      names.insert({"cdiv", "min", "max"});
      std::string near = json_reader::closest(n, names);
      return fail("unknown parameter " + json_reader::shortQuote(n) +
                      (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                  start);
    }
    Expr e;
    e.op = ExprOp::Param;
    e.param = id;
    return e;
  }
  std::optional<Expr> call(const OpInfo &o, size_t start) {
    skip();
    if (Pos >= S.size() || S[Pos] != '(')
      return fail(std::string("expected '(' after '") + o.text + "'");
    ++Pos;
    Expr e;
    e.op = o.op;
    for (int i = 0; i < 2; ++i) {
      std::optional<Expr> a = binary(1);
      if (!a)
        return std::nullopt;
      e.args.push_back(std::move(*a));
      skip();
      char want = i == 0 ? ',' : ')';
      if (Pos >= S.size() || S[Pos] != want)
        return fail(std::string(o.text) + " takes two arguments: expected '" + want + "'",
                    Pos < S.size() ? Pos : start);
      ++Pos;
    }
    return e;
  }
};

void print(const Expr &e, std::string &out) {
  switch (e.op) {
  case ExprOp::Const:
    out += std::to_string(e.value);
    return;
  case ExprOp::Param:
    out += paramNames()[size_t(e.param)];
    return;
  default:
    break;
  }
  const OpInfo *o = info(e.op);
  if (o->prec == 0) {
    out += std::string(o->text) + "(";
    print(e.args[0], out);
    out += ", ";
    print(e.args[1], out);
    out += ")";
    return;
  }
  auto side = [&](const Expr &a, bool right) {
    const OpInfo *ai = a.args.empty() ? nullptr : info(a.op);
    bool paren = ai && ai->prec > 0 && (ai->prec < o->prec || (right && ai->prec == o->prec));
    if (a.isConst() && a.value < 0 && right)
      paren = true;
    if (paren)
      out += "(";
    print(a, out);
    if (paren)
      out += ")";
  };
  side(e.args[0], false);
  out += std::string(" ") + o->text + " ";
  side(e.args[1], true);
}

void postfix(const Expr &e, std::vector<std::pair<uint8_t, int64_t>> &out) {
  for (const Expr &a : e.args)
    postfix(a, out);
  out.push_back({uint8_t(e.op), e.op == ExprOp::Param ? e.param : e.value});
}

using I128 = __int128;

int64_t clampTo(I128 v, bool &exact) {
  if (v > I128(INT64_MAX)) {
    exact = false;
    return INT64_MAX;
  }
  if (v < I128(INT64_MIN)) {
    exact = false;
    return INT64_MIN;
  }
  return int64_t(v);
}

} // namespace

std::optional<Expr> parseExpr(const std::string &text, ExprError &err) {
  err = ExprError{};
  if (text.size() > 1000) {
    err.message = "expression longer than 1000 characters";
    err.column = 1;
    return std::nullopt;
  }
  Parser p(text, err);
  std::optional<Expr> e = p.run();
  if (e && exprStackDepth(*e) > NPUCC_EXPR_STACK) {
    err.message = "expression needs more than " + std::to_string(NPUCC_EXPR_STACK) +
                  " stack slots; simplify it";
    err.column = 1;
    return std::nullopt;
  }
  return e;
}

std::string printExpr(const Expr &e) {
  std::string s;
  print(e, s);
  return s;
}

std::vector<int> exprParams(const Expr &e) {
  std::vector<int> out;
  std::function<void(const Expr &)> walk = [&](const Expr &x) {
    if (x.op == ExprOp::Param && std::find(out.begin(), out.end(), x.param) == out.end())
      out.push_back(x.param);
    for (const Expr &a : x.args)
      walk(a);
  };
  walk(e);
  return out;
}

std::vector<std::pair<uint8_t, int64_t>> exprPostfix(const Expr &e) {
  std::vector<std::pair<uint8_t, int64_t>> out;
  postfix(e, out);
  return out;
}

unsigned exprStackDepth(const Expr &e) {
  if (e.args.empty())
    return 1;
  return std::max(exprStackDepth(e.args[0]), exprStackDepth(e.args[1]) + 1);
}

std::optional<int64_t> evalExpr(const Expr &e, const std::vector<int64_t> &params) {
  std::vector<npucc_expr_op> ops;
  for (const auto &o : exprPostfix(e))
    ops.push_back({o.first, o.second});
  std::vector<int64_t> p = params;
  p.resize(std::max<size_t>(p.size(), NPUCC_P_COUNT), 0);
  int64_t v = 0;
  if (npucc_expr_eval(ops.data(), unsigned(ops.size()), p.data(), &v) != 0)
    return std::nullopt;
  return v;
}

std::optional<std::pair<int, int64_t>> exprAffine(const Expr &e) {
  if (e.op == ExprOp::Param)
    return std::make_pair(e.param, int64_t(0));
  if (e.op != ExprOp::Add && e.op != ExprOp::Sub)
    return std::nullopt;
  const Expr &a = e.args[0], &b = e.args[1];
  if (a.op == ExprOp::Param && b.isConst() && b.value != INT64_MIN)
    return std::make_pair(a.param, e.op == ExprOp::Sub ? b.value : -b.value);
  if (e.op == ExprOp::Add && b.op == ExprOp::Param && a.isConst() && a.value != INT64_MIN)
    return std::make_pair(b.param, -a.value);
  return std::nullopt;
}

Interval exprInterval(const Expr &e, const std::function<Interval(int)> &paramRange) {
  if (e.op == ExprOp::Const)
    return {e.value, e.value, true};
  if (e.op == ExprOp::Param)
    return paramRange(e.param);
  Interval a = exprInterval(e.args[0], paramRange), b = exprInterval(e.args[1], paramRange);
  Interval r;
  r.exact = a.exact && b.exact;
  switch (e.op) {
  case ExprOp::Add:
    r.lo = clampTo(I128(a.lo) + b.lo, r.exact);
    r.hi = clampTo(I128(a.hi) + b.hi, r.exact);
    return r;
  case ExprOp::Sub:
    r.lo = clampTo(I128(a.lo) - b.hi, r.exact);
    r.hi = clampTo(I128(a.hi) - b.lo, r.exact);
    return r;
  case ExprOp::Mul: {
    I128 c[] = {I128(a.lo) * b.lo, I128(a.lo) * b.hi, I128(a.hi) * b.lo, I128(a.hi) * b.hi};
    r.lo = clampTo(*std::min_element(c, c + 4), r.exact);
    r.hi = clampTo(*std::max_element(c, c + 4), r.exact);
    return r;
  }
  case ExprOp::Min:
    return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), r.exact};
  case ExprOp::Max:
    return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), r.exact};
  default:
    break;
  }
  // Non-negative operands: negative parts fail at run time.
  if (a.lo < 0 || b.lo < 0)
    r.exact = false;
  a.lo = std::max<int64_t>(a.lo, 0);
  b.lo = std::max<int64_t>(b.lo, 0);
  if (a.hi < 0 || b.hi < 0)
    return {0, 0, false};
  switch (e.op) {
  case ExprOp::Div:
  case ExprOp::CDiv:
  case ExprOp::Mod: {
    if (b.lo == 0)
      r.exact = false;
    if (b.hi == 0)
      return {0, 0, false};
    int64_t blo = std::max<int64_t>(b.lo, 1);
    if (e.op == ExprOp::Mod)
      return {0, std::min(a.hi, b.hi - 1), r.exact};
    if (e.op == ExprOp::Div)
      return {a.lo / b.hi, a.hi / blo, r.exact};
    return {a.lo / b.hi + (a.lo % b.hi != 0), a.hi / blo + (a.hi % blo != 0), r.exact};
  }
  case ExprOp::Shl:
  case ExprOp::Shr: {
    if (b.hi > 62)
      r.exact = false;
    int64_t blo = std::min<int64_t>(b.lo, 62), bhi = std::min<int64_t>(b.hi, 62);
    if (e.op == ExprOp::Shr)
      return {a.lo >> bhi, a.hi >> blo, r.exact};
    r.lo = clampTo(I128(a.lo) << blo, r.exact);
    r.hi = clampTo(I128(a.hi) << bhi, r.exact);
    return r;
  }
  case ExprOp::And:
    return {0, std::min(a.hi, b.hi), r.exact};
  case ExprOp::Or: {
    // The smallest 2^k - 1 at or above both maxima.
    int64_t m = std::max(a.hi, b.hi), p = 1;
    while (p - 1 < m && p < (int64_t(1) << 62))
      p <<= 1;
    int64_t top = p - 1 >= m ? p - 1 : INT64_MAX;
    return {std::max(a.lo, b.lo), top, r.exact};
  }
  default:
    return {INT64_MIN, INT64_MAX, false};
  }
}

} // namespace npucc::target
