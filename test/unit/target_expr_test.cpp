//===- target_expr_test.cpp - Field expressions: parse, print, evaluate ---===//
//
// Issue 19, phase 3: the expression language of a command's "fields"
// (include/npucc/target/Expr.h): C precedence, errors with their column and
// a "did you mean", checked int64 evaluation through the runtime's
// npucc_expr_eval (overflow, division by zero, negative operands and shifts
// fail), cdiv/min/max, and the interval bound the loader uses.
//
//===----------------------------------------------------------------------===//
#include "npucc/target/Expr.h"
#include "npucc/target/Target.h"

#include "npucc_params.h"

#include <gtest/gtest.h>

using namespace npucc::target;

namespace {

Expr parsed(const std::string &s) {
  ExprError err;
  std::optional<Expr> e = parseExpr(s, err);
  EXPECT_TRUE(e.has_value()) << s << ": column " << err.column << ": " << err.message;
  return e ? *e : Expr{};
}

std::string errorOf(const std::string &s) {
  ExprError err;
  std::optional<Expr> e = parseExpr(s, err);
  return e ? "parsed" : "column " + std::to_string(err.column) + ": " + err.message;
}

std::vector<int64_t> params(std::initializer_list<std::pair<const char *, int64_t>> kv) {
  std::vector<int64_t> p(NPUCC_P_COUNT, 0);
  for (const auto &x : kv)
    p[size_t(paramId(x.first))] = x.second;
  return p;
}

std::optional<int64_t> eval(const std::string &s, const std::vector<int64_t> &p = {}) {
  return evalExpr(parsed(s), p.empty() ? std::vector<int64_t>(NPUCC_P_COUNT, 0) : p);
}

TEST(TargetExpr, PrecedenceAndAssociativityAreCs) {
  EXPECT_EQ(eval("2 + 3 * 4"), 14);
  EXPECT_EQ(eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(eval("20 - 5 - 3"), 12); // left associative
  EXPECT_EQ(eval("64 / 4 / 2"), 8);
  EXPECT_EQ(eval("1 << 2 + 1"), 8); // + binds tighter than <<
  EXPECT_EQ(eval("6 & 3 | 8"), 10); // & tighter than |
  EXPECT_EQ(eval("1 | 2 << 1"), 5); // << tighter than |
  EXPECT_EQ(eval("17 % 5 * 2"), 4);
  EXPECT_EQ(eval("-3 + 5"), 2);
  EXPECT_EQ(eval("0x10 + 1_000"), 1016);
  // The printer keeps the meaning with the fewest parentheses, and its text
  // parses back to the same text.
  for (const char *s :
       {"(out_w - 1) * (out_h + 2)", "a_b", "cdiv(out_ch, 16) - 1", "in_ch - (k_h - k_w)",
        "(in_ch << 2) >> 1", "min(max(in_h, 4), 256)", "in_zp - -3", "k_h * (k_w | 1) & 7"}) {
    ExprError err;
    std::optional<Expr> e = parseExpr(s, err);
    if (!e)
      continue; // a_b: checked below
    std::string once = printExpr(*e);
    EXPECT_EQ(printExpr(parsed(once)), once) << s;
  }
  EXPECT_EQ(printExpr(parsed("(out_w - 1) * (out_h + 2)")), "(out_w - 1) * (out_h + 2)");
  EXPECT_EQ(printExpr(parsed("((in_ch))  -(k_h-k_w)")), "in_ch - (k_h - k_w)");
  EXPECT_EQ(printExpr(parsed("(in_ch*2)+1")), "in_ch * 2 + 1");
  EXPECT_EQ(printExpr(parsed("cdiv( out_ch,16 )-1")), "cdiv(out_ch, 16) - 1");
  EXPECT_EQ(printExpr(parsed("in_zp - -3")), "in_zp - (-3)");
}

TEST(TargetExpr, ParametersFunctionsAndAffineForms) {
  std::vector<int64_t> p = params({{"out_ch", 40}, {"in_h", 7}, {"in_w", 300}, {"in_zp", -5}});
  EXPECT_EQ(eval("cdiv(out_ch, 16)", p), 3);
  EXPECT_EQ(eval("cdiv(out_ch, 8)", p), 5);
  EXPECT_EQ(eval("cdiv(0, 8)", p), 0);
  EXPECT_EQ(eval("min(in_h, in_w)", p), 7);
  EXPECT_EQ(eval("max(in_h, in_w)", p), 300);
  EXPECT_EQ(eval("in_zp + 128", p), 123);
  EXPECT_EQ(exprParams(parsed("in_h * in_w + in_h")),
            (std::vector<int>{paramId("in_h"), paramId("in_w")}));
  auto aff = [](const char *s) { return exprAffine(parsed(s)); };
  EXPECT_EQ(aff("out_w - 1"), std::make_pair(paramId("out_w"), int64_t(1)));
  EXPECT_EQ(aff("out_w + 2"), std::make_pair(paramId("out_w"), int64_t(-2)));
  EXPECT_EQ(aff("2 + out_w"), std::make_pair(paramId("out_w"), int64_t(-2)));
  EXPECT_EQ(aff("out_w"), std::make_pair(paramId("out_w"), int64_t(0)));
  EXPECT_FALSE(aff("1 - out_w"));
  EXPECT_FALSE(aff("out_w * 1"));
  EXPECT_FALSE(aff("out_w - out_h"));
}

TEST(TargetExpr, ErrorsNameTheColumn) {
  EXPECT_EQ(errorOf("out_c - 1"), "column 1: unknown parameter 'out_c' (did you mean 'out_ch'?)");
  EXPECT_EQ(errorOf("in_h * (in_w - 1"), "column 17: expected ')'");
  EXPECT_EQ(errorOf("in_h +"), "column 7: expected a number, a parameter or '('");
  EXPECT_EQ(errorOf("in_h $ 2"), "column 6: unexpected '$'");
  EXPECT_EQ(errorOf("cdiv(in_h)"), "column 10: cdiv takes two arguments: expected ','");
  EXPECT_EQ(errorOf("min in_h"), "column 5: expected '(' after 'min'");
  EXPECT_EQ(errorOf("12ab"), "column 3: bad digit 'a' in a number");
  EXPECT_EQ(errorOf("0x"), "column 1: expected digits after '0x'");
  EXPECT_EQ(errorOf("99999999999999999999"), "column 1: number does not fit 63 bits");
  EXPECT_EQ(errorOf("a_b"), "column 1: unknown parameter 'a_b'");
  std::string deep(70, '(');
  EXPECT_EQ(errorOf(deep + "1" + std::string(70, ')')), "column 65: expression nested too deeply");
  // More stack than the C evaluator has.
  std::string wide = "1";
  for (int i = 0; i < 20; ++i)
    wide = "1 + (" + wide + ")";
  EXPECT_EQ(errorOf(wide), "column 1: expression needs more than 16 stack slots; simplify it");
}

TEST(TargetExpr, OverflowDivisionByZeroAndNegativeOperandsFail) {
  std::vector<int64_t> p = params({{"length", 0}, {"in_zp", -1}});
  EXPECT_FALSE(eval("9223372036854775807 + 1"));
  EXPECT_EQ(eval("9223372036854775807 + 0"), INT64_MAX);
  EXPECT_FALSE(eval("-9223372036854775807 - 2"));
  EXPECT_FALSE(eval("4294967296 * 4294967296"));
  EXPECT_EQ(eval("3037000499 * 3037000499"), int64_t(3037000499) * 3037000499);
  EXPECT_FALSE(eval("8 / length", p));
  EXPECT_FALSE(eval("8 % length", p));
  EXPECT_FALSE(eval("cdiv(8, length)", p));
  EXPECT_FALSE(eval("in_zp / 2", p));  // / takes non-negative operands
  EXPECT_FALSE(eval("1 << in_zp", p)); // negative shift
  EXPECT_FALSE(eval("1 << 63"));       // beyond 62
  EXPECT_FALSE(eval("3 << 62"));       // overflow
  EXPECT_EQ(eval("1 << 62"), int64_t(1) << 62);
  EXPECT_FALSE(eval("in_zp & 1", p));
  EXPECT_EQ(eval("min(in_zp, 3)", p), -1); // min/max take any sign
}

TEST(TargetExpr, IntervalsEncloseEveryValue) {
  auto range = [](int id) {
    if (id == paramId("out_ch"))
      return Interval{1, 4095, true};
    if (id == paramId("k_h"))
      return Interval{1, 7, true};
    return Interval{0, 1023, true};
  };
  Interval a = exprInterval(parsed("cdiv(out_ch, 16) - 1"), range);
  EXPECT_EQ(a.lo, 0);
  EXPECT_EQ(a.hi, 255);
  EXPECT_TRUE(a.exact);
  Interval b = exprInterval(parsed("out_w * out_h - 1"), range);
  EXPECT_EQ(b.lo, -1);
  EXPECT_EQ(b.hi, 1023 * 1023 - 1);
  Interval c = exprInterval(parsed("min(k_h * 3, 10) + max(k_h, 5)"), range);
  EXPECT_EQ(c.lo, 3 + 5);
  EXPECT_EQ(c.hi, 10 + 7);
  Interval d = exprInterval(parsed("(out_ch >> 4) | k_h"), range);
  EXPECT_EQ(d.lo, 1);
  EXPECT_EQ(d.hi, 255);
  // A division by a range holding 0 may fail: not exact, still bounded.
  Interval e = exprInterval(parsed("out_ch / in_h"), range);
  EXPECT_FALSE(e.exact);
  EXPECT_EQ(e.hi, 4095);
  // Overflow saturates and is marked.
  Interval f = exprInterval(parsed("out_ch * 4611686018427387904"), range);
  EXPECT_FALSE(f.exact);
  EXPECT_EQ(f.hi, INT64_MAX);
  // Every value of a brute-force sweep lies inside.
  Expr g = parsed("cdiv(out_w * k_h, 3) % 7 + (k_h << 2) - min(out_w, 9)");
  Interval gi = exprInterval(g, [](int id) {
    return id == paramId("k_h") ? Interval{1, 7, true} : Interval{0, 40, true};
  });
  for (int64_t w = 0; w <= 40; ++w)
    for (int64_t k = 1; k <= 7; ++k) {
      std::optional<int64_t> v = evalExpr(g, params({{"out_w", w}, {"k_h", k}}));
      ASSERT_TRUE(v);
      EXPECT_GE(*v, gi.lo);
      EXPECT_LE(*v, gi.hi);
    }
}

} // namespace
