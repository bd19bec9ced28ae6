//===- Interpreter.cpp - Dispatch of the reference interpreter ------------===//
//
// evaluateNode switches over OpKind to the per-family functions; runGraph
// walks the nodes in (topological) order, keeping every live value, and
// drops values after their last use unless the caller asked for all of them.
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "npucc/interp/QuantInterpreter.h"
#include "npucc/quant/FusedActivation.h"
#include "npucc/quant/FusedPool.h"
#include "npucc/quant/Pwl.h"

#include <array>
#include <cstring>
#include <unordered_map>

namespace npucc::interp {

using namespace detail;
using ir::OpKind;

namespace {

using EvalFn = EvalResult (*)(const ir::Node &, const Inputs &);

EvalFn evaluatorFor(OpKind k) {
  switch (k) {
  case OpKind::Conv:
    return evalConv;
  case OpKind::ConvTranspose:
    return evalConvTranspose;
  case OpKind::Gemm:
    return evalGemm;
  case OpKind::MatMul:
    return evalMatMul;
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
    return evalBinary;
  case OpKind::Max:
  case OpKind::Min:
    return evalMaxMin;
  case OpKind::PRelu:
    return evalPRelu;
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::Sigmoid:
  case OpKind::HardSigmoid:
  case OpKind::HardSwish:
  case OpKind::Tanh:
    return evalUnary;
  case OpKind::Clip:
    return evalClip;
  case OpKind::Softmax:
    return evalSoftmax;
  case OpKind::MaxPool:
    return evalMaxPool;
  case OpKind::AveragePool:
    return evalAveragePool;
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool:
    return evalGlobalPool;
  case OpKind::ReduceMean:
    return evalReduceMean;
  case OpKind::BatchNormalization:
    return evalBatchNorm;
  case OpKind::Flatten:
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Identity:
    return evalView;
  case OpKind::Dropout:
    return evalDropout;
  case OpKind::Transpose:
    return evalTranspose;
  case OpKind::Concat:
    return evalConcat;
  case OpKind::Slice:
    return evalSlice;
  case OpKind::Split:
    return evalSplit;
  case OpKind::Pad:
    return evalPad;
  case OpKind::Resize:
    return evalResize;
  case OpKind::Gather:
    return evalGather;
  case OpKind::Constant:
    return evalConstant;
  case OpKind::ConstantOfShape:
    return evalConstantOfShape;
  case OpKind::Shape:
    return evalShape;
  case OpKind::Cast:
    return evalCast;
  case OpKind::QuantizeLinear:
    return evalQuantizeLinear;
  case OpKind::DequantizeLinear:
    return evalDequantizeLinear;
  default:
    // Rows added to Ops.def later are reported as unsupported until they get
    // an evaluator (canEvaluate is false for them).
    break;
  }
  return nullptr;
}

/// Ops whose main input must be float32/float64.
bool needsFloat(OpKind k) {
  switch (k) {
  case OpKind::Conv:
  case OpKind::ConvTranspose:
  case OpKind::Gemm:
  case OpKind::Sigmoid:
  case OpKind::HardSigmoid:
  case OpKind::HardSwish:
  case OpKind::Tanh:
  case OpKind::Softmax:
  case OpKind::AveragePool:
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool:
  case OpKind::BatchNormalization:
    return true;
  default:
    return false;
  }
}

/// Arithmetic ops that reject Bool data.
bool rejectsBool(OpKind k) {
  switch (k) {
  case OpKind::MatMul:
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::PRelu:
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::MaxPool:
  case OpKind::Resize:
  case OpKind::ReduceMean:
    return true;
  default:
    return false;
  }
}

/// A typed integer node (docs/quantization.md): an integer operand or result
/// carries quant params. Only byte-moving ops, whose quant params pass through
/// unchanged, and the Q/DQ boundaries keep their float-interpreter meaning;
/// the rest belong to the integer interpreter (QuantInterpreter.h).
bool isTypedQuantNode(const ir::Node &n) {
  switch (n.kind) {
  case OpKind::QuantizeLinear:
  case OpKind::DequantizeLinear:
  case OpKind::Flatten:
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Identity:
  case OpKind::Transpose:
  case OpKind::Slice:
  case OpKind::Split:
  case OpKind::Gather:
  case OpKind::Shape:
    return false;
  default:
    break;
  }
  auto typed = [](const ir::Value *v) { return v && v->quant && !ir::isFloat(v->dtype); };
  for (const ir::Value *v : n.inputs)
    if (typed(v))
      return true;
  for (const ir::Value *v : n.outputs)
    if (typed(v))
      return true;
  return false;
}

} // namespace

int64_t resultBytes(const ir::Node &n) {
  int64_t bytes = 0;
  for (const ir::Value *o : n.outputs)
    if (o)
      bytes += static_cast<int64_t>(o->byteSize());
  return bytes;
}

bool canEvaluate(const ir::Node &n) {
  // Mirrors the "unsupported" (as opposed to "invalid model") errors of the
  // evaluators, so that constant folding can rely on it.
  if (!evaluatorFor(n.kind) || isTypedQuantNode(n))
    return false;
  const ir::Value *x = n.input(0);
  if (x && needsFloat(n.kind) && !ir::isFloat(x->dtype))
    return false;
  if (x && rejectsBool(n.kind) && x->dtype == ir::DType::Bool)
    return false;
  switch (n.kind) {
  case OpKind::Dropout:
    if (const ir::Value *tm = n.input(2)) {
      // Training-mode Dropout is random; only a constant-false training_mode is safe.
      if (!tm->isConstant() || tm->constant->numElements() != 1 || tm->constant->getInt(0) != 0)
        return false;
    }
    return true;
  case OpKind::BatchNormalization:
    return n.outputs.size() <= 3;
  case OpKind::Pad: {
    std::string mode = n.attrString("mode", "constant");
    return mode == "constant" || mode == "reflect" || mode == "edge";
  }
  case OpKind::Resize: {
    std::string mode = n.attrString("mode", "nearest");
    std::string ctm = n.attrString("coordinate_transformation_mode", "half_pixel");
    std::string nm = n.attrString("nearest_mode", "round_prefer_floor");
    return (mode == "nearest" || mode == "linear" || mode == "cubic") &&
           (ctm == "half_pixel" || ctm == "pytorch_half_pixel" || ctm == "align_corners" ||
            ctm == "asymmetric" || ctm == "tf_half_pixel_for_nn" || ctm == "tf_crop_and_resize") &&
           (nm == "round_prefer_floor" || nm == "round_prefer_ceil" || nm == "floor" ||
            nm == "ceil");
  }
  case OpKind::Cast:
    return ir::dtypeFromOnnx(static_cast<int>(n.attrInt("to", 0))).has_value();
  case OpKind::Constant:
    return n.attrTensor("value") || n.hasAttr("value_float") || n.hasAttr("value_int") ||
           n.hasAttr("value_floats") || n.hasAttr("value_ints");
  default:
    return true;
  }
}

Result<std::vector<ir::Tensor>> evaluateNode(const ir::Node &n,
                                             const std::vector<const ir::Tensor *> &inputs) {
  // A max pool fused into an NPU conv/depthwise (pool_max, quant/FusedPool.h):
  // the node at the convolution's resolution (with any fused activation),
  // then the k x k, stride k max pool of the activated int8 values, exactly
  // what the graph's MaxPool computed.
  if (auto pc = quant::poolCoreOf(n)) {
    auto r = evaluateNode(pc->node, inputs);
    if (!r || r->empty())
      return r;
    (*r)[0] = quant::maxPoolOf((*r)[0], n.output(0)->shape, quant::fusedPoolOf(n),
                               n.attrString("layout", "") == "NHWC");
    return r;
  }
  // A lookup-table activation fused into an NPU MAC node (act_fn, on a lut256
  // NPU): the MAC part into the value in between, then the activation's table
  // (what the NPU's table holds: quant::actLut256 equals clamp-then-table).
  // On a pwl NPU the table is the fitted segments (act_pwl, quant/Pwl.h),
  // constant outside the MAC part's clamp, so they give on its int8 value
  // what the NPU gives on the requantized value before the clamp.
  if (auto core = quant::coreOf(n)) {
    auto lut = quant::fusedLut(n);
    if (!lut)
      return nodeErr(n, "fused activation '" + n.attrString("act_fn", "") +
                            "' has no int8 lookup table");
    if (auto pwl = quant::pwlOf(n))
      for (int32_t v = -128; v < 128; ++v)
        (*lut)[size_t(v + 128)] = quant::pwlValue(*pwl, v);
    auto r = evaluateNode(core->node, inputs);
    if (!r || r->empty())
      return r;
    ir::Tensor &t = (*r)[0];
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.setInt(i, (*lut)[size_t(t.getInt(i) + 128)]);
    return r;
  }
  // The same segments on the activation node itself (the pre-target graph
  // of npucc check's per-layer distance, where the activation is not fused).
  if (auto pwl = quant::pwlOf(n);
      pwl && !inputs.empty() && inputs[0] && inputs[0]->dtype() == ir::DType::I8) {
    ir::Node plain = n;
    plain.attrs.erase("act_pwl");
    auto r = evaluateNode(plain, inputs);
    if (!r || r->empty())
      return r;
    ir::Tensor &t = (*r)[0];
    std::array<int32_t, 256> f{};
    for (int32_t v = -128; v < 128; ++v)
      f[size_t(v + 128)] = quant::pwlValue(*pwl, v);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.setInt(i, f[size_t(inputs[0]->getInt(i) + 128)]);
    return r;
  }
  // layout="NHWC" (npu-partition): Conv and pooling read and write NHWC
  // values; evaluate the NCHW definition between transposes. Element-wise
  // ops need nothing: their operands are permuted alike.
  if (n.attrString("layout", "") == "NHWC" &&
      (n.kind == OpKind::Conv || n.kind == OpKind::MaxPool || n.kind == OpKind::AveragePool ||
       n.kind == OpKind::GlobalAveragePool) &&
      !inputs.empty() && inputs[0] && inputs[0]->shape().size() == 4 && n.output(0) &&
      n.output(0)->shape.size() == 4) {
    static const int ToNchw[4] = {0, 3, 1, 2}, ToNhwc[4] = {0, 2, 3, 1};
    ir::Value x = *n.input(0), y = *n.output(0);
    x.shape = {x.shape[0], x.shape[3], x.shape[1], x.shape[2]};
    y.shape = {y.shape[0], y.shape[3], y.shape[1], y.shape[2]};
    ir::Node nchw;
    nchw.kind = n.kind;
    nchw.name = n.name;
    nchw.inputs = n.inputs;
    nchw.outputs = n.outputs;
    nchw.attrs = n.attrs;
    nchw.attrs.erase("layout");
    nchw.inputs[0] = &x;
    nchw.outputs[0] = &y;
    ir::Tensor xt = ir::permute4(*inputs[0], ToNchw);
    std::vector<const ir::Tensor *> ins = inputs;
    ins[0] = &xt;
    auto r = evaluateNode(nchw, ins);
    if (r && !r->empty())
      (*r)[0] = ir::permute4((*r)[0], ToNhwc);
    return r;
  }
  // Typed integer nodes go to the integer reference interpreter (QInt*.cpp).
  if (isTypedQuantNode(n) && canEvaluateQuantized(n))
    return evaluateQuantizedNode(n, inputs);
  EvalFn fn = evaluatorFor(n.kind);
  if (!fn)
    return nodeErr(n, "op not supported by the reference interpreter");
  if (isTypedQuantNode(n))
    return nodeErr(n, "typed integer (quantized) node: the float reference interpreter does not "
                      "evaluate it (see QuantInterpreter.h)");
  const ir::OpInfo &info = n.info();
  for (int i = 0; i < info.minInputs; ++i)
    if (static_cast<size_t>(i) >= inputs.size() || !inputs[static_cast<size_t>(i)])
      return nodeErr(n, "missing required input " + std::to_string(i));
  if (n.outputs.empty())
    return nodeErr(n, "node has no outputs");
  auto r = fn(n, inputs);
  if (!r)
    return r;
  // Outputs must line up with the node's output Values.
  if (r->size() > n.outputs.size())
    r->resize(n.outputs.size());
  for (size_t i = 0; i < r->size(); ++i) {
    const ir::Value *v = n.output(i);
    const ir::Tensor &t = (*r)[i];
    if (v && t.dtype() != v->dtype)
      return nodeErr(n, "output " + std::to_string(i) + " computed as " + ir::dtypeName(t.dtype()) +
                            " but the value '" + v->name + "' is " + ir::dtypeName(v->dtype));
  }
  if (r->size() < n.outputs.size())
    for (size_t i = r->size(); i < n.outputs.size(); ++i)
      if (n.output(i))
        return nodeErr(n, "output " + std::to_string(i) + " is not supported");
  return r;
}

Result<std::map<std::string, ir::Tensor>> runGraph(const ir::Graph &g,
                                                   const std::map<std::string, ir::Tensor> &inputs,
                                                   std::map<std::string, ir::Tensor> *all) {
  std::unordered_map<const ir::Value *, ir::Tensor> env;
  std::unordered_map<const ir::Value *, size_t> usesLeft;
  for (const auto &node : g.nodes())
    for (const ir::Value *v : node->inputs)
      if (v)
        ++usesLeft[v];

  for (const ir::Value *v : g.inputs) {
    auto it = inputs.find(v->name);
    if (it == inputs.end()) {
      if (v->isConstant())
        continue; // an initializer listed as input keeps its value
      return Diagnostic("missing value for graph input '" + v->name + "'").inFile(g.sourceFile);
    }
    const ir::Tensor &t = it->second;
    if (t.dtype() != v->dtype || t.shape() != v->shape)
      return Diagnostic("graph input '" + v->name + "' expects " + ir::dtypeName(v->dtype) + " " +
                        ir::shapeStr(v->shape) + ", got " + ir::dtypeName(t.dtype()) + " " +
                        ir::shapeStr(t.shape()))
          .inFile(g.sourceFile);
    env[v] = t;
    if (all)
      (*all)[v->name] = t;
  }

  auto lookup = [&](const ir::Value *v) -> const ir::Tensor * {
    auto it = env.find(v);
    if (it != env.end())
      return &it->second;
    return v->isConstant() ? v->constant.get() : nullptr;
  };

  for (const auto &node : g.nodes()) {
    std::vector<const ir::Tensor *> ins;
    for (const ir::Value *v : node->inputs) {
      if (!v) {
        ins.push_back(nullptr);
        continue;
      }
      const ir::Tensor *t = lookup(v);
      if (!t) {
        Diagnostic d("input '" + v->name + "' has no value (not computed before use)");
        d.inFile(g.sourceFile).atNode(node->name, node->opName());
        return d;
      }
      ins.push_back(t);
    }
    auto r = evaluateNode(*node, ins);
    if (!r)
      return std::move(r.error().inFile(g.sourceFile));
    for (size_t i = 0; i < r->size(); ++i) {
      const ir::Value *v = node->output(i);
      if (!v)
        continue;
      if (all)
        (*all)[v->name] = (*r)[i];
      env[v] = std::move((*r)[i]);
    }
    // Free values past their last use (graph outputs are never freed).
    if (!all)
      for (const ir::Value *v : node->inputs)
        if (v && --usesLeft[v] == 0 && !g.isGraphOutput(v) && !g.isGraphInput(v))
          env.erase(v);
  }

  std::map<std::string, ir::Tensor> result;
  for (const ir::Value *v : g.outputs) {
    const ir::Tensor *t = lookup(v);
    if (!t)
      return Diagnostic("graph output '" + v->name + "' was not computed").inFile(g.sourceFile);
    result[v->name] = *t;
  }
  return result;
}

} // namespace npucc::interp
