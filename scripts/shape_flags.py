#!/usr/bin/python3
"""Print `--shape NAME=DIMS` flags (one word per line) for the graph inputs of
MODEL_DIR/model.onnx that have symbolic dimensions, from test_data_set_0's inputs.
usage: /usr/bin/python3 scripts/shape_flags.py MODEL_DIR"""
import os
import sys

import onnx
from onnx import numpy_helper

d = sys.argv[1]
m = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
init = {i.name for i in m.graph.initializer}
ins = [i for i in m.graph.input if i.name not in init]
for k, vi in enumerate(ins):
    dims = vi.type.tensor_type.shape.dim
    if all(x.dim_value for x in dims):
        continue
    p = os.path.join(d, "test_data_set_0", f"input_{k}.pb")
    shape = numpy_helper.to_array(onnx.load_tensor(p)).shape
    print("--shape")
    print(vi.name + "=" + "x".join(str(s) for s in shape))
