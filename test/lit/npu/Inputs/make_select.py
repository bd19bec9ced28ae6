#!/usr/bin/env python3
"""make_select.py - a QDQ model of stride-2 convolutions for the select pool stage.

usage: /usr/bin/python3 test/lit/npu/Inputs/make_select.py OUT_DIR [even]

Writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/{input_0,output_0}.pb (the layout
`npucc check` reads); the committed copies are test/lit/npu/Inputs/select and
test/lit/npu/Inputs/select_even.

  x [1,4,9,9] -> Q (0.05, 3) -> Conv 3x3 stride 2 pads 1, 4->8 (per-channel) + bias -> Relu
  -> Q (0.02, -128) -> depthwise 3x3 stride 2 pads 1 (8 groups) + bias -> Q (0.03, -5)
  -> Conv 1x1 stride 2, 8->8 + bias -> Q (0.04, 2) -> y [1,8,2,2]

Odd sizes on purpose: 9x9 -> 5x5 -> 3x3 -> 2x2, so run at stride 1 each needs one more
row and column of padding after the image than the model has (the last window's dropped
pixels). With `even`: x [1,4,8,8] and the first conv padded [top 1, left 0, bottom 1,
right 1]: 8x8 -> 4x4 -> 2x2 -> 1x1; under an implied padding of 1 for 3x3 (0 for 1x1) the
first conv keeps pixel (0, 1) of each window (right_top on the K210) and the 1x1 (0, 0). The golden output is computed here with numpy in float64 (QDQ semantics:
quantize = round half to even, then clip), from seeded random data: no ONNX runtime, no
npucc code.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh
from onnx import TensorProto, helper


def quantize(v, s, z):
    return np.clip(np.rint(v / s) + z, -128, 127)


def conv(x, w, b, stride, pads, group):
    """NCHW convolution in float64 (square kernel, stride, pads [top, left, bottom, right])."""
    n, c, h, wd = x.shape
    m, cg, k, _ = w.shape
    t, l, bo, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (t, bo), (l, r)))
    oh, ow = (h + t + bo - k) // stride + 1, (wd + l + r - k) // stride + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for o in range(m):
        g = o // mg
        for i in range(oh):
            for j in range(ow):
                win = xp[0, g * cg:(g + 1) * cg, i * stride:i * stride + k,
                         j * stride:j * stride + k]
                y[0, o, i, j] = (win * w[o]).sum() + b[o]
    return y


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "even"):
        sys.exit(__doc__)
    out = sys.argv[1]
    even = len(sys.argv) == 3
    hw = 8 if even else 9
    p1 = [1, 0, 1, 1] if even else [1, 1, 1, 1]
    o1 = (hw + p1[0] + p1[2] - 3) // 2 + 1
    o3 = ((o1 + 1) // 2 + 1) // 2
    rng = np.random.default_rng(19)
    f32 = np.float32
    sx, zx = 0.05, 3
    s1, z1 = 0.02, -128
    s2, z2 = 0.03, -5
    s3, z3 = 0.04, 2
    x = rng.standard_normal((1, 4, hw, hw)).astype(f32)
    w1 = rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)
    sw1 = (0.004 + 0.002 * rng.random(8)).astype(f32)
    b1 = rng.integers(-300, 301, 8).astype(np.int32)
    w2 = rng.integers(-127, 128, (8, 1, 3, 3)).astype(np.int8)
    sw2 = (0.004 + 0.002 * rng.random(8)).astype(f32)
    b2 = rng.integers(-300, 301, 8).astype(np.int32)
    w3 = rng.integers(-127, 128, (8, 8, 1, 1)).astype(np.int8)
    sw3 = (0.004 + 0.002 * rng.random(8)).astype(f32)
    b3 = rng.integers(-300, 301, 8).astype(np.int32)
    sb1 = (f32(sx) * sw1).astype(f32)
    sb2 = (f32(s1) * sw2).astype(f32)
    sb3 = (f32(s2) * sw3).astype(f32)

    def c(v, name, t=f32):
        return nh.from_array(np.array(v, dtype=t), name)

    inits = [c(sx, "sx"), c(zx, "zx", np.int8), c(s1, "s1"), c(z1, "z1", np.int8),
             c(s2, "s2"), c(z2, "z2", np.int8), c(s3, "s3"), c(z3, "z3", np.int8)]
    for i, (w, sw, b, sb) in enumerate([(w1, sw1, b1, sb1), (w2, sw2, b2, sb2),
                                         (w3, sw3, b3, sb3)], 1):
        inits += [nh.from_array(w, "w%d" % i), c(sw, "sw%d" % i),
                  c(np.zeros(8), "zw%d" % i, np.int8), nh.from_array(b, "b%d" % i),
                  c(sb, "sb%d" % i), c(np.zeros(8), "zb%d" % i, np.int32)]
    dq = lambda i, s, z, o, axis=None: helper.make_node(
        "DequantizeLinear", [i, s, z], [o], **({} if axis is None else {"axis": axis}))
    q = lambda i, s, z, o: helper.make_node("QuantizeLinear", [i, s, z], [o])
    nodes = [q("x", "sx", "zx", "xq"), dq("xq", "sx", "zx", "xd")]
    for i in (1, 2, 3):
        nodes += [dq("w%d" % i, "sw%d" % i, "zw%d" % i, "w%dd" % i, 0),
                  dq("b%d" % i, "sb%d" % i, "zb%d" % i, "b%dd" % i, 0)]
    nodes += [helper.make_node("Conv", ["xd", "w1d", "b1d"], ["c1"], kernel_shape=[3, 3],
                               strides=[2, 2], pads=p1, name="conv_s2"),
              helper.make_node("Relu", ["c1"], ["r1"]),
              q("r1", "s1", "z1", "q1"), dq("q1", "s1", "z1", "d1"),
              helper.make_node("Conv", ["d1", "w2d", "b2d"], ["c2"], kernel_shape=[3, 3],
                               strides=[2, 2], pads=[1, 1, 1, 1], group=8, name="dw_s2"),
              q("c2", "s2", "z2", "q2"), dq("q2", "s2", "z2", "d2"),
              helper.make_node("Conv", ["d2", "w3d", "b3d"], ["c3"], kernel_shape=[1, 1],
                               strides=[2, 2], name="pw_s2"),
              q("c3", "s3", "z3", "q3"), dq("q3", "s3", "z3", "y")]
    g = helper.make_graph(nodes, "select_even" if even else "select",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, o3, o3])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(out, "model.onnx"))
    # The golden output: QDQ in float64.
    xd = (quantize(x.astype(np.float64), sx, zx) - zx) * sx
    wd = lambda w, sw: w.astype(np.float64) * sw.astype(np.float64).reshape(-1, 1, 1, 1)
    bd = lambda b, sb: b.astype(np.float64) * sb.astype(np.float64)
    a1 = np.maximum(conv(xd, wd(w1, sw1), bd(b1, sb1), 2, p1, 1), 0)
    d1 = (quantize(a1, s1, z1) - z1) * s1
    d2 = (quantize(conv(d1, wd(w2, sw2), bd(b2, sb2), 2, [1, 1, 1, 1], 8), s2, z2) - z2) * s2
    y = ((quantize(conv(d2, wd(w3, sw3), bd(b3, sb3), 2, [0, 0, 0, 0], 1), s3, z3) - z3) * s3).astype(f32)
    with open(os.path.join(out, "test_data_set_0/input_0.pb"), "wb") as f:
        f.write(nh.from_array(x, "x").SerializeToString())
    with open(os.path.join(out, "test_data_set_0/output_0.pb"), "wb") as f:
        f.write(nh.from_array(y, "y").SerializeToString())


if __name__ == "__main__":
    main()
