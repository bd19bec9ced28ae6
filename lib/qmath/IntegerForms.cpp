//===- IntegerForms.cpp - Which float ops have an exact integer form ------===//
//
// See include/npucc/quant/IntegerForms.h.
//
//===----------------------------------------------------------------------===//
#include "npucc/quant/IntegerForms.h"

namespace npucc::quant {

bool isDataMovement(ir::OpKind k) {
  using K = ir::OpKind;
  switch (k) {
  case K::Reshape:
  case K::Flatten:
  case K::Squeeze:
  case K::Unsqueeze:
  case K::Transpose:
  case K::MaxPool:
  case K::Identity:
  case K::Slice:
  case K::Gather:
    return true;
  default:
    return false;
  }
}

bool hasLutForm(ir::OpKind k) {
  using K = ir::OpKind;
  return k == K::Sigmoid || k == K::Tanh || k == K::HardSwish || k == K::LeakyRelu ||
         k == K::HardSigmoid;
}

bool movesElementsExactly(const ir::Node &n) {
  if (n.kind != ir::OpKind::Pad && n.kind != ir::OpKind::Resize)
    return false;
  if (n.kind == ir::OpKind::Resize && n.attrString("mode", "nearest") != "nearest")
    return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] && !n.inputs[i]->isConstant())
      return false;
  return n.kind != ir::OpKind::Pad || !n.input(2) || n.input(2)->constant->numElements() == 1;
}

} // namespace npucc::quant
