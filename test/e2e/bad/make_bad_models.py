#!/usr/bin/python3
"""Writes the bad-input ONNX fixtures next to this script.

Each *.onnx file exercises one importer error path; canon/*/ are good models in
old opsets (with numpy reference outputs) that the importer must canonicalize.
Both are used by test/unit/onnx_models_test.cpp. Run with Debian's python:
    /usr/bin/python3 test/e2e/bad/make_bad_models.py
The output is deterministic.
"""
import os

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto as T
from onnx import helper as h

HERE = os.path.dirname(os.path.abspath(__file__))


def model(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=()):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    m = h.make_model(g, opset_imports=ops, producer_name="npucc-tests")
    m.ir_version = 8
    return m


def vi(name, dims, t=T.FLOAT):
    return h.make_tensor_value_info(name, t, dims)


def save(m, name):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(m.SerializeToString())


def conv_relu():
    w = h.make_tensor("w", T.FLOAT, [4, 3, 3, 3], np.linspace(-1, 1, 108).astype(np.float32))
    nodes = [h.make_node("Conv", ["x", "w"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["y"], name="relu0")]
    return model(nodes, [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 8, 8])], [w])


def main():
    good = conv_relu().SerializeToString()
    # A valid model cut in the middle of the weights.
    with open(os.path.join(HERE, "truncated.onnx"), "wb") as f:
        f.write(good[: len(good) // 2])
    # Deterministic bytes that are not a protobuf (0xff starts an invalid field key).
    rng = np.random.RandomState(1234)
    with open(os.path.join(HERE, "garbage.onnx"), "wb") as f:
        f.write(b"\xff\xff\xff\xff" + rng.randint(0, 256, 512).astype(np.uint8).tobytes())
    open(os.path.join(HERE, "empty.onnx"), "wb").close()

    # Three unsupported ops (two in the default domain, one custom) + a supported one.
    nodes = [h.make_node("Relu", ["x"], ["r"], name="relu0"),
             h.make_node("TopK", ["r", "k"], ["v", "i"], name="topk0", axis=1),
             h.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"], name="nms0"),
             h.make_node("FusedGemm", ["v", "v"], ["y"], name="fused0", domain="com.microsoft")]
    save(model(nodes, [vi("x", [1, 8]), vi("boxes", [1, 4, 4]), vi("scores", [1, 1, 4])],
               [vi("y", [1, 2]), vi("sel", [3, 3], T.INT64)],
               [h.make_tensor("k", T.INT64, [1], [2])], extra_opsets=[("com.microsoft", 1)]),
         "unsupported_ops.onnx")

    # Dynamic dims besides the leading (batch) one, no --shape given.
    save(model([h.make_node("Relu", ["x"], ["y"], name="relu0")],
               [vi("x", ["N", "C", 4, 4])], [vi("y", ["N", "C", 4, 4])]), "dynamic_unbound.onnx")

    # Add of [2,3] and [4,5]: inconsistent shapes.
    save(model([h.make_node("Add", ["a", "b"], ["y"], name="add0")],
               [vi("a", [2, 3]), vi("b", [4, 5])], [vi("y", ["?", "?"])]), "bad_add_shapes.onnx")

    # External data escaping the model's folder.
    for name, loc in (("ext_escape_rel.onnx", "../secret.bin"),
                      ("ext_escape_abs.onnx", "/etc/passwd")):
        w = h.make_tensor("w_ext", T.FLOAT, [4], [0, 0, 0, 0])
        w.ClearField("float_data")
        w.data_location = T.EXTERNAL
        for k, v in (("location", loc), ("offset", "0"), ("length", "16")):
            e = w.external_data.add()
            e.key, e.value = k, v
        save(model([h.make_node("Add", ["x", "w_ext"], ["y"], name="add0")],
                   [vi("x", [4])], [vi("y", [4])], [w]), name)

    # Unsupported element type on an input.
    save(model([h.make_node("Relu", ["x"], ["y"], name="relu0")],
               [vi("x", [2, 2], T.FLOAT16)], [vi("y", [2, 2], T.FLOAT16)]), "float16_input.onnx")

    # Dropout in training mode (constant training_mode = true).
    save(model([h.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop0")],
               [vi("x", [2, 2])], [vi("y", [2, 2])],
               [h.make_tensor("r", T.FLOAT, [], [0.5]), h.make_tensor("t", T.BOOL, [], [True])]),
         "dropout_training.onnx")

    # Reshape whose shape is a runtime input: no static shape.
    save(model([h.make_node("Reshape", ["x", "s"], ["y"], name="reshape0")],
               [vi("x", [2, 6]), vi("s", [2], T.INT64)], [vi("y", ["a", "b"])]),
         "reshape_runtime_shape.onnx")

    hardening_cases()
    scale_cases()
    empty_cases()


def raw_tensor(name, elem_type, dims, raw):
    """A TensorProto whose raw_data need not match its dims (make_tensor checks)."""
    t = onnx.TensorProto()
    t.name, t.data_type = name, elem_type
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def hardening_cases():
    """Issue 11: inputs that crashed libonnx or exhausted memory, and doubtful ones."""
    # Graph output produced by no node, opset 11: crashed libonnx's version converter.
    save(model([h.make_node("Relu", ["x"], ["y"], name="relu0")], [vi("x", [2])],
               [vi("z", [2])], opset=11), "output_unproduced.onnx")
    # Reshape whose shape Constant has 5 of the 24 bytes its dims need: crashed libonnx's
    # shape inference (data propagation).
    short = raw_tensor("s", T.INT64, [3], np.array([4], np.int64).tobytes()[:5])
    save(model([h.make_node("Constant", [], ["shp"], value=short, name="shape_const"),
                h.make_node("Reshape", ["x", "shp"], ["y"], name="reshape0")],
               [vi("x", [4])], [vi("y", ["a"])]), "constant_short_raw.onnx")
    # Initializer of 400,000,000 floats (1.6 GB) with 8 bytes of data: was zero-filled
    # before its size was checked (cli_test.sh runs it under a 1 GB memory limit).
    save(model([h.make_node("Add", ["x", "w"], ["y"], name="add0")], [vi("x", [1])],
               [vi("y", ["n"])], [raw_tensor("w", T.FLOAT, [400000000], b"\0" * 8)]),
         "init_short_data.onnx")
    # Initializer of 2^40 elements: above the 2 GiB limit for one tensor.
    save(model([h.make_node("Add", ["x", "w"], ["y"], name="add0")], [vi("x", [1])],
               [vi("y", ["n"])], [raw_tensor("w", T.FLOAT, [1 << 20, 1 << 20], b"")]),
         "init_huge.onnx")
    # Graph input with a dimension of 2^32.
    save(model([h.make_node("Relu", ["x"], ["y"], name="relu0")], [vi("x", [1 << 32])],
               [vi("y", [1 << 32])]), "input_dim_2p32.onnx")
    # ConstantOfShape to [65536, 65536] floats (16 GiB): refused before constant folding.
    save(model([h.make_node("ConstantOfShape", ["s"], ["y"], name="fill0")], [],
               [vi("y", ["a", "b"])], [h.make_tensor("s", T.INT64, [2], [65536, 65536])]),
         "constant_of_shape_huge.onnx")
    # Graph output of element type 0 (undefined).
    save(model([h.make_node("Relu", ["x"], ["y"], name="relu0")], [vi("x", [2])],
               [vi("y", [2], T.UNDEFINED)]), "output_type0.onnx")
    # A graph with no nodes, inputs nor outputs.
    save(model([], [], []), "no_outputs.onnx")
    # Gemm with transB=5, and Gemm with alpha=inf.
    gw = h.make_tensor("w", T.FLOAT, [2, 2], [1, 0, 0, 1])
    for name, attrs in (("gemm_transb5.onnx", {"transB": 5}),
                        ("gemm_alpha_inf.onnx", {"alpha": float("inf")})):
        save(model([h.make_node("Gemm", ["x", "w"], ["y"], name="gemm0", **attrs)],
                   [vi("x", [1, 2])], [vi("y", [1, 2])], [gw]), name)
    # Found by fuzz_onnx_import: Conv of a rank-3 input with a rank-4 weight and auto_pad
    # crashed libonnx's convPoolShapeInference (reads past the shorter of the two ranks).
    cw = h.make_tensor("w", T.FLOAT, [3, 2, 2, 2], np.linspace(-1, 1, 24).astype(np.float32))
    save(model([h.make_node("Conv", ["x", "w"], ["c"], name="conv0", auto_pad="SAME_LOWER"),
                h.make_node("Relu", ["c"], ["y"], name="relu0")],
               [vi("x", [1, 5, 5])], [vi("y", [1, 3, 5, 5])], [cw]), "conv_rank_mismatch.onnx")
    # Found by fuzz_onnx_import: a Conv stride of 0 made libonnx's shape inference divide by
    # zero (SIGFPE in plain npucc too).
    save(model([h.make_node("Conv", ["x", "w"], ["y"], name="conv0", strides=[2, 0])],
               [vi("x", [1, 2, 5, 5])], [vi("y", [1, 3, "a", "b"])], [cw]), "conv_stride0.onnx")
    # Found by fuzz_onnx_import: Pad amounts near 2^62 overflowed the output shape (UB).
    save(model([h.make_node("Pad", ["x", "p"], ["y"], name="pad0")], [vi("x", [2, 2])],
               [vi("y", ["a", "b"])], [h.make_tensor("p", T.INT64, [4], [0, 1 << 62, 0, 1 << 62])]),
         "pad_overflow.onnx")
    # Found by fuzz_onnx_import: a ConstantOfShape of 160,000,000 int64 (1.28 GB) feeding Pad's
    # pads was folded whatever its size (10 GB peak through a chain of such folds); folding
    # now stops at 256 MiB of results, so the pads stay a runtime value.
    cos = h.make_tensor("v", T.INT64, [1], [0])
    save(model([h.make_node("ConstantOfShape", ["n"], ["p"], name="fill0", value=cos),
                h.make_node("Pad", ["x", "p"], ["y"], name="pad0")], [vi("x", [2, 2])],
               [vi("y", ["a", "b"])], [h.make_tensor("n", T.INT64, [1], [160000000])]),
         "fold_budget.onnx")
    # Found by fuzz_onnx_import: a Slice step near 2^62 overflowed the lowering's strides
    # (UB); steps are bounded by the dimension (same elements). Not an error: compiles.
    save(model([h.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice0")],
               [vi("x", [4, 8])], [vi("y", [1, 8])],
               [h.make_tensor(n, T.INT64, [1], [v]) for n, v in
                (("s", 0), ("e", 4), ("a", 0), ("st", 3677752045701431295))]),
         os.path.join("..", "..", "fuzz", "regressions", "onnx_import", "slice_huge_step.onnx"))
    # External data whose location is a folder (canon/, next to this script).
    w = h.make_tensor("w_ext", T.FLOAT, [4], [0, 0, 0, 0])
    w.ClearField("float_data")
    w.data_location = T.EXTERNAL
    e = w.external_data.add()
    e.key, e.value = "location", "canon"
    save(model([h.make_node("Add", ["x", "w_ext"], ["y"], name="add0")],
               [vi("x", [4])], [vi("y", [4])], [w]), "ext_location_dir.onnx")


def qdq_conv_model(scale, wscale):
    """x -> Q/DQ -> Conv(DQ(int8 weights)) -> Q/DQ, with the given scales."""
    inits = [onnx.numpy_helper.from_array(np.ones((2, 2, 3, 3), np.int8), "w"),
             h.make_tensor("s", T.FLOAT, [], [scale]), h.make_tensor("z", T.INT8, [], [0]),
             h.make_tensor("ws", T.FLOAT, [], [wscale])]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="quant_x"),
             h.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dequant_x"),
             h.make_node("DequantizeLinear", ["w", "ws", "z"], ["wd"], name="dequant_w"),
             h.make_node("Conv", ["xd", "wd"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
             h.make_node("QuantizeLinear", ["c", "s", "z"], ["cq"], name="quant_c"),
             h.make_node("DequantizeLinear", ["cq", "s", "z"], ["y"], name="dequant_c")]
    return model(nodes, [vi("x", [1, 2, 4, 4])], [vi("y", [1, 2, 4, 4])], inits)


def scale_cases():
    """Issue 23: a NaN scale compiled (exit 0) into C that did not build ('NAN'
    undeclared); an infinite one was reported by the lowering as "non-positive" at a
    Transpose. Every non-finite or non-positive scale is refused at import."""
    save(qdq_conv_model(float("nan"), 0.01), "scale_nan.onnx")
    save(qdq_conv_model(0.05, float("inf")), "scale_inf.onnx")
    save(qdq_conv_model(0.05, 1e-50), "scale_underflow.onnx")
    # QLinearMatMul with an infinite output scale (its own import path).
    inits = [onnx.numpy_helper.from_array(np.ones((2, 2), np.int8), "b"),
             h.make_tensor("s", T.FLOAT, [], [0.1]), h.make_tensor("z", T.INT8, [], [0]),
             h.make_tensor("ys", T.FLOAT, [], [float("inf")])]
    save(model([h.make_node("QLinearMatMul", ["a", "s", "z", "b", "s", "z", "ys", "z"], ["y"],
                            name="qmm0")],
               [vi("a", [1, 2], T.INT8)], [vi("y", [1, 2], T.INT8)], inits), "qlinear_scale_inf.onnx")


def empty_cases():
    """Issue 23: valid models with an empty (zero-size) result: a QDQ Conv with 0 output
    channels and a QDQ MatMul with 0 output features. They crashed npucc with SIGFPE on an
    NPU target (tiling divided by the channel count), and on --target cpu the generated
    program crashed; now they compile and run (cli_test.sh). edge/ holds good models."""
    os.makedirs(os.path.join(HERE, "edge"), exist_ok=True)
    zero = h.make_tensor("z", T.INT8, [], [0])
    cinits = [onnx.numpy_helper.from_array(np.ones((0, 2, 3, 3), np.int8), "w"),
              h.make_tensor("s", T.FLOAT, [], [0.05]), zero, h.make_tensor("ws", T.FLOAT, [], [0.01])]
    cnodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="quant_x"),
              h.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dequant_x"),
              h.make_node("DequantizeLinear", ["w", "ws", "z"], ["wd"], name="dequant_w"),
              h.make_node("Conv", ["xd", "wd"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
              h.make_node("QuantizeLinear", ["c", "s", "z"], ["cq"], name="quant_c"),
              h.make_node("DequantizeLinear", ["cq", "s", "z"], ["y"], name="dequant_c")]
    save(model(cnodes, [vi("x", [1, 2, 4, 4])], [vi("y", [1, 0, 4, 4])], cinits),
         os.path.join("edge", "conv_out0.onnx"))
    minits = [onnx.numpy_helper.from_array(np.ones((8, 0), np.int8), "w"),
              h.make_tensor("s", T.FLOAT, [], [0.05]), zero, h.make_tensor("ws", T.FLOAT, [], [0.01])]
    mnodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="quant_x"),
              h.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dequant_x"),
              h.make_node("DequantizeLinear", ["w", "ws", "z"], ["wd"], name="dequant_w"),
              h.make_node("MatMul", ["xd", "wd"], ["c"], name="mm0"),
              h.make_node("QuantizeLinear", ["c", "s", "z"], ["cq"], name="quant_c"),
              h.make_node("DequantizeLinear", ["cq", "s", "z"], ["y"], name="dequant_c")]
    save(model(mnodes, [vi("x", [1, 8])], [vi("y", [1, 0])], minits),
         os.path.join("edge", "matmul_out0.onnx"))


def save_case(name, m, inputs, outputs):
    """A good model in canon/NAME/ with test_data_set_0 (numpy reference)."""
    d = os.path.join(HERE, "canon", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    for kind, arrays in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrays):
            t = onnx.numpy_helper.from_array(a, n)
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(t.SerializeToString())


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def canon_cases():
    """Old-opset forms the importer must canonicalize (opset-13 semantics)."""
    rng = np.random.RandomState(7)
    x = rng.randn(2, 3, 4).astype(np.float32)
    # Softmax-11 with axis=1: coerced to 2-D [2, 12].
    y = softmax(x.reshape(2, 12), 1).reshape(2, 3, 4)
    save_case("softmax11_axis1",
              model([h.make_node("Softmax", ["x"], ["y"], axis=1)], [vi("x", [2, 3, 4])],
                    [vi("y", [2, 3, 4])], opset=11), [("x", x)], [("y", y)])
    # Squeeze-11 axes attribute.
    x1 = rng.randn(2, 1, 3).astype(np.float32)
    save_case("squeeze11_attr",
              model([h.make_node("Squeeze", ["x"], ["y"], axes=[1])], [vi("x", [2, 1, 3])],
                    [vi("y", [2, 3])], opset=11), [("x", x1)], [("y", x1.reshape(2, 3))])
    # Slice-1 attributes (opset 9).
    x2 = rng.randn(4, 6).astype(np.float32)
    save_case("slice9_attrs",
              model([h.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, -1], axes=[0, 1])],
                    [vi("x", [4, 6])], [vi("y", [2, 5])], opset=9),
              [("x", x2)], [("y", x2[1:3, 0:-1])])
    # Pad-2 attributes (opset 10), constant value 1.5.
    x3 = rng.randn(1, 2, 3).astype(np.float32)
    save_case("pad10_attrs",
              model([h.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 0, 0, 2], value=1.5)],
                    [vi("x", [1, 2, 3])], [vi("y", [1, 3, 5])], opset=10),
              [("x", x3)], [("y", np.pad(x3, [(0, 0), (1, 0), (0, 2)], constant_values=1.5))])
    # Clip-6 attributes (opset 10).
    x4 = rng.randn(3, 4).astype(np.float32)
    save_case("clip10_attrs",
              model([h.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)], [vi("x", [3, 4])],
                    [vi("y", [3, 4])], opset=10), [("x", x4)], [("y", np.clip(x4, -0.5, 0.25))])
    # Split-11 split attribute.
    x5 = rng.randn(2, 3).astype(np.float32)
    save_case("split11_attr",
              model([h.make_node("Split", ["x"], ["a", "b"], axis=1, split=[1, 2])],
                    [vi("x", [2, 3])], [vi("a", [2, 1]), vi("b", [2, 2])], opset=11),
              [("x", x5)], [("a", x5[:, :1]), ("b", x5[:, 1:])])
    # Resize-10 (X, scales), nearest.
    x6 = rng.randn(1, 1, 2, 3).astype(np.float32)
    sc = h.make_tensor("scales", T.FLOAT, [4], [1, 1, 2, 2])
    save_case("resize10_nearest",
              model([h.make_node("Resize", ["x", "scales"], ["y"], mode="nearest")],
                    [vi("x", [1, 1, 2, 3])], [vi("y", [1, 1, 4, 6])], [sc], opset=10),
              [("x", x6)], [("y", x6.repeat(2, axis=2).repeat(2, axis=3))])
    # ReduceMean-18 axes input (newer than libonnx 1.12 knows).
    x7 = rng.randn(2, 3, 4).astype(np.float32)
    ax = h.make_tensor("axes", T.INT64, [1], [1])
    save_case("reducemean18_axes_input",
              model([h.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)],
                    [vi("x", [2, 3, 4])], [vi("y", [2, 4])], [ax], opset=18),
              [("x", x7)], [("y", x7.mean(axis=1))])
    # Legacy broadcasting Add-6 (broadcast=1, axis=1).
    x8 = rng.randn(2, 3, 4).astype(np.float32)
    b8 = h.make_tensor("b", T.FLOAT, [3], [1, 2, 3])
    save_case("add6_legacy_broadcast",
              model([h.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=1)],
                    [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], [b8], opset=6),
              [("x", x8)], [("y", x8 + np.array([1, 2, 3], np.float32).reshape(3, 1))])
    # PyTorch-style dynamic reshape: Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
    # with a dynamic batch dim (bind with --shape x=2x3x4).
    x9 = rng.randn(2, 3, 4).astype(np.float32)
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Constant", [], ["i0"], value=h.make_tensor("c", T.INT64, [], [0])),
             h.make_node("Gather", ["s", "i0"], ["n"], axis=0),
             h.make_node("Unsqueeze", ["n", "ax"], ["nu"]),
             h.make_node("Concat", ["nu", "m1"], ["shp"], axis=0),
             h.make_node("Reshape", ["x", "shp"], ["y"], name="flatten_reshape")]
    save_case("shape_chain_reshape",
              model(nodes, [vi("x", ["N", 3, 4])], [vi("y", ["N", "M"])],
                    [h.make_tensor("ax", T.INT64, [1], [0]), h.make_tensor("m1", T.INT64, [1], [-1])]),
              [("x", x9)], [("y", x9.reshape(2, 12))])
    # Conv with auto_pad SAME_LOWER and default attributes, then Relu.
    x10 = rng.randn(1, 2, 5, 5).astype(np.float32)
    w10 = rng.randn(3, 2, 2, 2).astype(np.float32)
    xp = np.pad(x10, [(0, 0), (0, 0), (1, 0), (1, 0)])
    y10 = np.zeros((1, 3, 5, 5), np.float32)
    for o in range(3):
        for i in range(5):
            for j in range(5):
                y10[0, o, i, j] = (xp[0, :, i:i + 2, j:j + 2] * w10[o]).sum()
    save_case("conv_same_lower",
              model([h.make_node("Conv", ["x", "w"], ["c"], auto_pad="SAME_LOWER"),
                     h.make_node("Relu", ["c"], ["y"])],
                    [vi("x", [1, 2, 5, 5])], [vi("y", [1, 3, 5, 5])],
                    [onnx.numpy_helper.from_array(w10, "w")]),
              [("x", x10)], [("y", np.maximum(y10, 0))])


if __name__ == "__main__":
    main()
    canon_cases()
