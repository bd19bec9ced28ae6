#!/usr/bin/env python3
"""make_blocks_mirror.py - a two-conv QDQ model for the NPU lowering's edges.

usage: /usr/bin/python3 test/lit/npu/Inputs/make_blocks_mirror.py OUT_DIR

Writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/{input_0,output_0}.pb (the layout
`npucc check` reads); the committed copy is test/lit/npu/Inputs/blocks_mirror.

  x [1,64,4,5] -> Q (0.05, 3) -> Conv 1x1 64->70 (per-channel weights) + bias -> Relu
  -> Q (0.02, -128) -> Conv 1x1 70->24 (per-channel) + bias -> Q (0.03, -5) -> y

On npu-default with its scratchpad cut to 4096 bytes (test/lit/npu/blocks-mirror.test),
the first conv's weights (70 * 64 = 4480 bytes) fit only as streamed records of 16 output
channels, so its channel blocks are 16, 16, 16, 16 and a partial one of 6; the second conv
is the second NPU layer, placed at the scratchpad's top end (mirrored), with input tiles
of 5 * 70 = 350 bytes a row (not a multiple of the alignment 16). The golden output is
computed here with numpy in float64 (QDQ semantics: quantize = round half to even, then
clip), from seeded random data: no ONNX runtime, no npucc code.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh
from onnx import TensorProto, helper


def quantize(v, s, z):
    return np.clip(np.rint(v / s) + z, -128, 127)


def conv1x1(x, w, b):
    """NCHW 1x1 convolution in float64."""
    return np.einsum("nchw,mc->nmhw", x, w[:, :, 0, 0]) + b.reshape(1, -1, 1, 1)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rng = np.random.default_rng(24)
    f32 = np.float32
    sx, zx = 0.05, 3
    s1, z1 = 0.02, -128
    s2, z2 = 0.03, -5
    x = rng.standard_normal((1, 64, 4, 5)).astype(f32)
    w1 = rng.integers(-127, 128, (70, 64, 1, 1)).astype(np.int8)
    sw1 = (0.0015 + 0.001 * rng.random(70)).astype(f32)
    b1 = rng.integers(-3000, 3001, 70).astype(np.int32)
    w2 = rng.integers(-127, 128, (24, 70, 1, 1)).astype(np.int8)
    sw2 = (0.0015 + 0.001 * rng.random(24)).astype(f32)
    b2 = rng.integers(-3000, 3001, 24).astype(np.int32)
    sb1 = (f32(sx) * sw1).astype(f32)
    sb2 = (f32(s1) * sw2).astype(f32)

    def c(v, name, t=f32):
        return nh.from_array(np.array(v, dtype=t), name)

    inits = [c(sx, "sx"), c(zx, "zx", np.int8), c(s1, "s1"), c(z1, "z1", np.int8),
             c(s2, "s2"), c(z2, "z2", np.int8),
             nh.from_array(w1, "w1"), c(sw1, "sw1"), c(np.zeros(70), "zw1", np.int8),
             nh.from_array(b1, "b1"), c(sb1, "sb1"), c(np.zeros(70), "zb1", np.int32),
             nh.from_array(w2, "w2"), c(sw2, "sw2"), c(np.zeros(24), "zw2", np.int8),
             nh.from_array(b2, "b2"), c(sb2, "sb2"), c(np.zeros(24), "zb2", np.int32)]
    dq = lambda i, s, z, o, axis=None: helper.make_node(
        "DequantizeLinear", [i, s, z], [o], **({} if axis is None else {"axis": axis}))
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             dq("xq", "sx", "zx", "xd"),
             dq("w1", "sw1", "zw1", "w1d", 0), dq("b1", "sb1", "zb1", "b1d", 0),
             helper.make_node("Conv", ["xd", "w1d", "b1d"], ["c1"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("QuantizeLinear", ["r1", "s1", "z1"], ["q1"]),
             dq("q1", "s1", "z1", "d1"),
             dq("w2", "sw2", "zw2", "w2d", 0), dq("b2", "sb2", "zb2", "b2d", 0),
             helper.make_node("Conv", ["d1", "w2d", "b2d"], ["c2"], kernel_shape=[1, 1]),
             helper.make_node("QuantizeLinear", ["c2", "s2", "z2"], ["q2"]),
             dq("q2", "s2", "z2", "y")]
    g = helper.make_graph(nodes, "blocks_mirror",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 4, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 4, 5])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="make_blocks_mirror.py")
    onnx.checker.check_model(m)

    f64 = np.float64
    xd = (quantize(x.astype(f64), f64(f32(sx)), zx) - zx) * f64(f32(sx))
    y1 = np.maximum(conv1x1(xd, w1.astype(f64) * sw1.astype(f64).reshape(-1, 1, 1, 1),
                            b1.astype(f64) * sb1.astype(f64)), 0)
    d1 = (quantize(y1, f64(f32(s1)), z1) - z1) * f64(f32(s1))
    y2 = conv1x1(d1, w2.astype(f64) * sw2.astype(f64).reshape(-1, 1, 1, 1),
                 b2.astype(f64) * sb2.astype(f64))
    y = ((quantize(y2, f64(f32(s2)), z2) - z2) * f64(f32(s2))).astype(f32)

    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(out, "model.onnx"))
    with open(os.path.join(out, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(nh.from_array(x, "x").SerializeToString())
    with open(os.path.join(out, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(nh.from_array(y, "y").SerializeToString())


if __name__ == "__main__":
    main()
