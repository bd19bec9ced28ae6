//===- CheckReport.cpp - What `npucc check` compares and reports --------===//
//
// The helpers of CheckReport.h: the C outputs against the interpreter, and
// the words the text report and --json share.
//
//===----------------------------------------------------------------------===//
#include "CheckReport.h"

#include <cmath>
#include <cstdio>

namespace npucc::tool {

void compareWithInterp(OutputReport &r, const ir::Tensor &got, const ir::Tensor &want,
                       bool quantized, double relTol) {
  r.interpChecked = true;
  driver::InterpComparison c =
      driver::compareWithInterpreter(got, want, r.kind, quantized, true, relTol, 0);
  r.interp = c.cmp;
  r.interpBitExact = c.bitExact;
  r.interpRule = c.rule;
}

StageReport compareStage(const InterpStage &st, const OutputReport &r, const ir::Tensor &got,
                         const ir::Tensor &want, bool quantized, double relTol, double steps) {
  driver::InterpComparison c =
      driver::compareWithInterpreter(got, want, r.kind, quantized, st.exact, relTol, steps);
  return StageReport{st.name, c.rule, c.cmp, c.bitExact, c.pass};
}

const char *exactness(bool bitExact, const std::string &rule, bool pass) {
  if (bitExact)
    return "exact";
  if (!pass)
    return "differs";
  return rule == "bit-exact" ? "int-exact" : "within";
}

std::string stepsText(double st) {
  char b[32];
  if (std::isinf(st))
    return "inf";
  std::snprintf(b, sizeof b, "%.4g", st);
  return b;
}

} // namespace npucc::tool
