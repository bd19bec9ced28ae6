#!/usr/bin/env python3
"""make_kblock_model.py - a small float model whose Conv and Gemm have K > 256.

usage: /usr/bin/python3 scripts/make_kblock_model.py OUT_DIR

Writes OUT_DIR/model.onnx and OUT_DIR/test_data_set_0/{input_0,output_0}.pb in the layout
`npucc check` reads. The float packed GEMM blocks its depth in NPUCC_GEMM_KC = 256
(runtime/kernels/npucc_gemm.h); this model makes every blocking edge happen end to end:

  x [1,64,9,7] -> Conv 64->24, 3x3, pad 1 (K = 64*9 = 576: two full blocks and a partial
  one of 64) + bias -> Relu -> Conv 24->20, 4x3, stride 2, pads 1/1/2/0 (K = 288: one full
  block and 32) -> Flatten (20*5*3 = 300) -> Gemm 300 -> 37 (K = 300, transB = 1).

Odd widths/heights and output counts keep the micro-kernel's edges in play too. The golden
output is computed here in float64 by a direct convolution written with numpy (no ONNX
runtime, no npucc code), from seeded random weights and input, so it is an independent
reference. Deterministic: same numpy version, same files.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh
from onnx import TensorProto, helper


def conv2d(x, w, b, stride, pads):
    """Direct NCHW convolution in float64; pads = (top, left, bottom, right)."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    pt, pl, pb, pr = pads
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr))
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    oh = (h + pt + pb - kh) // stride + 1
    ow = (wd + pl + pr - kw) // stride + 1
    y = np.zeros((n, m, oh, ow))
    for oy in range(oh):
        for ox in range(ow):
            win = xp[:, :, oy * stride:oy * stride + kh, ox * stride:ox * stride + kw]
            y[:, :, oy, ox] = np.tensordot(win, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, m, 1, 1)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rng = np.random.default_rng(576)
    f32 = np.float32
    x = rng.standard_normal((1, 64, 9, 7)).astype(f32)
    w1 = (rng.standard_normal((24, 64, 3, 3)) / 24).astype(f32)
    b1 = rng.standard_normal(24).astype(f32)
    w2 = (rng.standard_normal((20, 24, 4, 3)) / 17).astype(f32)
    b2 = rng.standard_normal(20).astype(f32)
    w3 = (rng.standard_normal((37, 300)) / 17).astype(f32)
    b3 = rng.standard_normal(37).astype(f32)

    y1 = np.maximum(conv2d(x.astype(np.float64), w1.astype(np.float64), b1, 1, (1, 1, 1, 1)), 0)
    y2 = conv2d(y1, w2.astype(np.float64), b2, 2, (1, 1, 2, 0))
    assert y2.shape == (1, 20, 5, 3), y2.shape
    y3 = y2.reshape(1, 300) @ w3.astype(np.float64).T + b3

    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[4, 3],
                         strides=[2, 2], pads=[1, 1, 2, 0]),
        helper.make_node("Flatten", ["c2"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["output"], transB=1),
    ]
    inits = [nh.from_array(a, n) for a, n in
             ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (w3, "w3"), (b3, "b3"))]
    g = helper.make_graph(nodes, "kblock",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 64, 9, 7])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 37])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="npucc make_kblock_model.py")
    onnx.checker.check_model(m)
    d = os.path.join(out, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(out, "model.onnx"))
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(nh.from_array(x, "input").SerializeToString())
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(nh.from_array(y3.astype(f32), "output").SerializeToString())


if __name__ == "__main__":
    main()
