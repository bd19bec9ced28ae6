"""Writes Inputs/poolrq/model.onnx for poolrq.test: a QDQ AveragePool (3x3,
stride 2 over 7x7, windows of 9 pixels) whose input (scale 0.25, zero point 6) and
output (scale 0.1, zero point -3) quantization differ, and one data set
(golden output: the int8 requantized average, as the int8 semantics compute
it: round(sum(x - 6) * 0.25 / (9 * 0.1)) - 3, clamped).
Usage: /usr/bin/python3 make_poolrq.py OUT_DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

d = sys.argv[1]
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
sx, zx = np.float32(0.25), np.int8(6)
sy, zy = np.float32(0.1), np.int8(-3)
inits = [nh.from_array(np.array(sx), "sx"), nh.from_array(np.array(zx), "zx"),
         nh.from_array(np.array(sy), "sy"), nh.from_array(np.array(zy), "zy")]
nodes = [h.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
         h.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
         h.make_node("AveragePool", ["xd"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                     name="avg"),
         h.make_node("QuantizeLinear", ["p", "sy", "zy"], ["pq"]),
         h.make_node("DequantizeLinear", ["pq", "sy", "zy"], ["y"])]
g = h.make_graph(nodes, "poolrq", [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 7, 7])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 3, 3])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(d, "model.onnx"))
q = ((np.arange(392) * 37 + 11) % 256 - 128).astype(np.int8).reshape(1, 8, 7, 7)
x = (q.astype(np.float32) - np.float32(zx)) * sx
d8 = q.astype(np.int64) - int(zx)
s = np.array([[[[d8[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum() for j in range(3)]
                for i in range(3)] for c in range(8)]])
r = np.rint(s * (float(sx) / (9 * float(sy))))  # exact ties are absent here
yq = np.clip(r + int(zy), -128, 127)
y = ((yq - int(zy)) * sy).astype(np.float32)
with open(os.path.join(d, "test_data_set_0/input_0.pb"), "wb") as f:
    f.write(nh.from_array(x, "x").SerializeToString())
with open(os.path.join(d, "test_data_set_0/output_0.pb"), "wb") as f:
    f.write(nh.from_array(y, "y").SerializeToString())
