#!/usr/bin/python3
"""Select the ONNX backend node tests that npucc is expected to handle.

Reads every <NODE_DIR>/<test>/model.onnx (default NODE_DIR:
/usr/share/libonnx-testdata/data/node), collects its op types and value types, and writes
  test/e2e/node_tests.txt           float/int models using only the supported ops
  test/e2e/node_tests_quant.txt     models that also use the quantization ops (for later)
  test/e2e/node_tests_excluded.txt  `test_name<TAB>reason`, one case per line
Tests using any other op are not listed anywhere.

node_tests_excluded.txt is partly hand-maintained: lines whose reason starts with
"[auto]" are rewritten by this script; every other line is a manual exclusion (e.g. a
case that fails by design), is kept verbatim on regeneration, and removes that test
from the other two lists.

usage: /usr/bin/python3 scripts/list_node_tests.py [--node-dir DIR] [--out-dir DIR]
"""
import argparse
import os

import onnx
from onnx import shape_inference

BASE_OPS = {
    "Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu",
    "PRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softmax", "MaxPool",
    "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "BatchNormalization",
    "Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Concat", "Slice", "Split", "Pad",
    "Resize", "Max", "Min", "Identity", "Dropout", "Constant", "ConstantOfShape", "Shape",
    "Gather", "Cast",
}
QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger",
             "MatMulInteger"}

# ONNX TensorProto element types npucc has a DType for (include/npucc/ir/DType.h).
SUPPORTED_ELEM = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
                  7: "int64", 9: "bool", 11: "double", 12: "uint32", 13: "uint64"}
ELEM_NAMES = {0: "undefined", 8: "string", 10: "float16", 14: "complex64", 15: "complex128",
              16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
              20: "float8e5m2fnuz", 21: "uint4", 22: "int4"}

# Operands that fix an output shape: npucc needs them to be compile-time constants.
SHAPE_OPERANDS = {"Reshape": [1], "Slice": [1, 2, 3, 4], "Pad": [1], "Resize": [1, 2, 3],
                  "Squeeze": [1], "Unsqueeze": [1], "Split": [1], "ConstantOfShape": [0],
                  "ReduceMean": [1]}

AUTO = "[auto] "


def typeProblem(tp, what):
    """Reason string if a TypeProto is not a tensor of a supported element type."""
    kind = tp.WhichOneof("value")
    if kind != "tensor_type":
        return f"{what} is a {kind or 'untyped value'}, not a tensor"
    et = tp.tensor_type.elem_type
    if et not in SUPPORTED_ELEM:
        return f"{what} has element type {ELEM_NAMES.get(et, str(et))}"
    return None


def opTypes(graph):
    ops = set()
    for node in graph.node:
        ops.add((node.domain or "", node.op_type))
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                ops |= opTypes(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    ops |= opTypes(g)
    return ops


def classify(model):
    """Return (category, reason): category in base, quant, excluded, other."""
    g = model.graph
    ops = opTypes(g)
    names = {op for dom, op in ops}
    if any(dom not in ("", "ai.onnx") for dom, _ in ops) or model.functions:
        return "other", None
    if not names <= BASE_OPS | QUANT_OPS:
        return "other", None
    category = "quant" if names & QUANT_OPS else "base"
    init = {i.name for i in g.initializer}
    for vi in list(g.input) + list(g.output):
        if vi.name in init:
            continue
        why = typeProblem(vi.type, f"{'input' if vi in g.input else 'output'} '{vi.name}'")
        if why:
            return "excluded", why
    try:
        inferred = shape_inference.infer_shapes(model).graph.value_info
    except Exception:  # pylint: disable=broad-except
        inferred = []
    for vi in inferred:
        why = typeProblem(vi.type, f"value '{vi.name}'")
        if why:
            return "excluded", why
    for t in g.initializer:
        if t.data_type not in SUPPORTED_ELEM:
            return "excluded", f"initializer '{t.name}' has element type " \
                               f"{ELEM_NAMES.get(t.data_type, str(t.data_type))}"
    for node in g.node:
        if node.op_type == "Cast":
            for a in node.attribute:
                if a.name == "to" and a.i not in SUPPORTED_ELEM:
                    return "excluded", f"Cast to {ELEM_NAMES.get(a.i, str(a.i))}"
    graphInputs = {vi.name for vi in g.input if vi.name not in init}
    for node in g.node:
        if node.op_type == "BatchNormalization" and any(
                a.name == "training_mode" and a.i for a in node.attribute):
            return "excluded", "training-mode BatchNormalization; npucc compiles inference only"
        if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2] in graphInputs:
            return "excluded", ("Dropout training_mode is a runtime graph input (random mask); "
                                "npucc compiles inference only")
    for node in g.node:
        for k in SHAPE_OPERANDS.get(node.op_type, []):
            if k < len(node.input) and node.input[k] in graphInputs:
                return "excluded", (f"{node.op_type} operand {k} ('{node.input[k]}') is a runtime "
                                    "graph input; npucc needs shape operands to be constant")
    return category, None


def readManual(path):
    manual = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition("\t")
            if not reason.startswith(AUTO.strip()):
                manual[name.strip()] = reason.strip() or "(no reason given)"
    return manual


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="write the node-test lists")
    ap.add_argument("--node-dir", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--out-dir", default=os.path.join(here, "..", "test", "e2e"))
    args = ap.parse_args()

    exclPath = os.path.join(args.out_dir, "node_tests_excluded.txt")
    manual = readManual(exclPath)
    base, quant, auto = [], [], []
    for name in sorted(os.listdir(args.node_dir)):
        path = os.path.join(args.node_dir, name, "model.onnx")
        if not os.path.exists(path):
            continue
        category, reason = classify(onnx.load(path))
        if category == "other":
            continue
        if name in manual:
            continue
        if category == "excluded":
            auto.append((name, reason))
        else:
            (base if category == "base" else quant).append(name)

    os.makedirs(args.out_dir, exist_ok=True)
    head = (f"# Generated by scripts/list_node_tests.py from {args.node_dir}; one test dir per line.\n"
            "# Excluded cases live in node_tests_excluded.txt (test_name<TAB>reason).\n")
    with open(os.path.join(args.out_dir, "node_tests.txt"), "w") as f:
        f.write(head + "".join(n + "\n" for n in base))
    with open(os.path.join(args.out_dir, "node_tests_quant.txt"), "w") as f:
        f.write(head.replace("one test dir", "quantization ops; one test dir")
                + "".join(n + "\n" for n in quant))
    with open(exclPath, "w") as f:
        f.write("# Node tests excluded from node_tests.txt / node_tests_quant.txt: test_name<TAB>reason.\n"
                "# Lines whose reason starts with [auto] are rewritten by scripts/list_node_tests.py;\n"
                "# add manual exclusions (e.g. failing by design) as plain lines: they are kept.\n")
        for name in sorted(manual):
            f.write(f"{name}\t{manual[name]}\n")
        for name, reason in auto:
            f.write(f"{name}\t{AUTO}{reason}\n")
    print(f"node tests: {len(base)} listed, {len(quant)} quant, {len(auto)} auto-excluded, "
          f"{len(manual)} manually excluded")


if __name__ == "__main__":
    main()
