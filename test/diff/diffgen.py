#!/usr/bin/python3
"""diffgen.py - Seeded generator of small random valid ONNX models (differential tier).

A model is described by a *spec* (plain JSON: input shape, activation type and a
list of ops with all their parameters); random_spec(seed, kind) draws one, build(spec)
turns it into an ONNX model (opset 13) and its seeded input. The same spec always
gives byte-identical files. Two kinds:
  int8  - QDQ models: per-tensor or per-channel weight scales, int8 or uint8
          activations with random zero points, float or integer graph inputs,
          DequantizeLinear or integer graph outputs.
  float - the same ops in float32.
Ops: Conv (random kernels, strides, dilations, asymmetric pads, groups incl.
depthwise), MatMul, Gemm, MaxPool, AveragePool (ceil_mode, count_include_pad),
GlobalAveragePool, Add/Mul (another tensor, broadcast constants, same-shape
constants), Concat (incl. a constant), Reshape, Flatten, Resize (nearest,
sometimes linear), Softmax, Relu, Clip; chains of 1-6 ops, sometimes branching.

Usage: diffgen.py OUT_DIR --seed S --count N [--kind int8|float|mixed]
       diffgen.py OUT_DIR --spec spec.json       (rebuild one model from its spec)
Writes OUT_DIR/<name>/{model.onnx, spec.json, test_data_set_0/input_K.pb}; the
golden outputs come from golden.js (run_diff.py does both).
"""
import argparse
import copy
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class Invalid(Exception):
    """The spec cannot be built (a shape too small for a kernel, ...)."""


# ---------------------------------------------------------------- shapes

def conv_out(n, k, s, d, p0, p1):
    o = (n + p0 + p1 - d * (k - 1) - 1) // s + 1
    if o < 1:
        raise Invalid("conv output < 1")
    return o


def pool_out(n, k, s, d, p0, p1, ceil):
    span = n + p0 + p1 - d * (k - 1) - 1
    if span < 0:
        raise Invalid("pool window larger than input")
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + p0:  # the last window may not start in the end padding
        o -= 1
    return o


def ceil_window_in_end_pad(op, xs):
    """A ceil_mode pool whose last window would start in the end padding (ONNX Runtime
    and onnx >= 1.16 drop it; the importer keeps it: an open finding, docs/testing.md)."""
    if op["op"] not in ("MaxPool", "AveragePool") or not op["ceil"]:
        return False
    d = op.get("d", [1, 1])
    for i in range(2):
        n, k, s, p0, p1 = xs[2 + i], op["k"][i], op["s"][i], op["pads"][i], op["pads"][2 + i]
        span = n + p0 + p1 - d[i] * (k - 1) - 1
        if span >= 0 and (-(-span // s)) * s >= n + p0:
            return True
    return False


def const_shape(kind, xs):
    """Shape of a constant operand of an element-wise op on a tensor of shape xs."""
    r = len(xs)
    if kind == "same":
        return list(xs)
    if kind == "scalar":
        return []
    if kind == "one":
        return [1]
    if r == 4:
        return {"chan": [1, xs[1], 1, 1], "chan3": [xs[1], 1, 1], "row": [1, 1, 1, xs[3]],
                "plane": [1, 1, xs[2], xs[3]]}[kind]
    return {"chan": [xs[1]], "chan3": [xs[1]], "row": [xs[1]], "plane": [1, xs[1]]}[kind]


def reshape_target(mode, xs):
    if len(xs) == 2:
        k = xs[1]
        if mode == "to4d":
            return [1, k, 1, 1]
        if mode == "to4d_w":
            return [1, 1, 1, k]
        raise Invalid("reshape mode")
    n, c, h, w = xs
    if mode == "flatten":
        return [1, c * h * w]
    if mode == "merge_hw":
        return [1, c, h * w, 1]
    if mode == "fold_c":
        if c % 2:
            raise Invalid("odd C")
        return [1, c // 2, h * 2, w]
    if mode == "to_w":
        return [1, 1, c * h, w]
    raise Invalid("reshape mode")


def infer(op, shapes):
    """Output shape of op given the shapes of earlier tensors (index -> shape)."""
    x = shapes[op["x"]]
    t = op["op"]
    if t == "Conv":
        if len(x) != 4:
            raise Invalid("conv on rank %d" % len(x))
        (kh, kw), (sh, sw), (dh, dw), (pt, pl, pb, pr) = op["k"], op["s"], op["d"], op["pads"]
        g = op["group"]
        if x[1] % g or op["cout"] % g or op["cout"] < 1:
            raise Invalid("groups")
        return [1, op["cout"], conv_out(x[2], kh, sh, dh, pt, pb),
                conv_out(x[3], kw, sw, dw, pl, pr)]
    if t in ("MaxPool", "AveragePool"):
        if len(x) != 4:
            raise Invalid("pool rank")
        (kh, kw), (sh, sw), (pt, pl, pb, pr) = op["k"], op["s"], op["pads"]
        dh, dw = op.get("d", [1, 1])
        if max(pt, pb) >= kh or max(pl, pr) >= kw:
            raise Invalid("pad >= kernel")
        return [1, x[1], pool_out(x[2], kh, sh, dh, pt, pb, op["ceil"]),
                pool_out(x[3], kw, sw, dw, pl, pr, op["ceil"])]
    if t == "GlobalAveragePool":
        if len(x) != 4:
            raise Invalid("gap rank")
        return [1, x[1], 1, 1]
    if t == "MatMul":
        if op["n"] < 1:
            raise Invalid("n")
        return list(x[:-1]) + [op["n"]]
    if t == "Gemm":
        if len(x) != 2 or op["n"] < 1:
            raise Invalid("gemm rank")
        return [x[0], op["n"]]
    if t in ("Add", "Mul"):
        if "y" in op:
            if shapes[op["y"]] != x:
                raise Invalid("residual shape")
        else:
            const_shape(op["const"], x)
        return list(x)
    if t == "Concat":
        ys = shapes[op["y"]] if "y" in op else None
        cs = list(x)
        cs[1] = op.get("cc", 1)
        other = ys if ys is not None else cs
        if len(other) != len(x) or any(a != b for i, (a, b) in enumerate(zip(other, x))
                                       if i != 1):
            raise Invalid("concat shapes")
        out = list(x)
        out[1] = x[1] + other[1]
        return out
    if t == "Reshape":
        return reshape_target(op["mode"], x)
    if t == "Flatten":
        return [1, int(np.prod(x[1:]))]
    if t == "Resize":
        if len(x) != 4:
            raise Invalid("resize rank")
        if "sizes" in op:
            return [x[0], x[1]] + list(op["sizes"])
        return [x[0], x[1], int(math.floor(x[2] * op["scales"][0])),
                int(math.floor(x[3] * op["scales"][1]))]
    if t in ("Softmax", "Relu", "Clip"):
        return list(x)
    raise Invalid("op " + t)


# ---------------------------------------------------------------- random specs

def _pick(rng, items, p=None):
    i = int(rng.choice(len(items), p=p))
    return items[i]


def _integer_resize(op, xs):
    """Every resized axis has an integer scale (out = k * in)."""
    out = infer(op, {0: xs, op["x"]: xs})[2:]
    return all(o % i == 0 and ("scales" not in op or float(s).is_integer())
               for o, i, s in zip(out, xs[2:], op.get("scales", [1, 1])))


def random_op(rng, x_idx, shapes):
    """One random op on tensor x_idx (its params fit the shapes), or None."""
    xs = shapes[x_idx]
    r4 = len(xs) == 4
    names = (["Conv", "Conv", "Conv", "Conv", "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "Add",
              "Add", "Mul", "Concat", "Reshape", "Flatten", "Resize", "Softmax", "Relu",
              "Clip", "MatMul"] if r4 else
             ["Gemm", "Gemm", "MatMul", "MatMul", "Add", "Mul", "Concat", "Softmax", "Relu",
              "Clip", "Reshape"])
    t = _pick(rng, names)
    op = {"op": t, "x": x_idx}
    if t == "Conv":
        c = xs[1]
        form = _pick(rng, ["plain", "plain", "dw", "group"])
        ks = [1, 1, 2, 3, 3, 3, 5]
        kh = _pick(rng, ks)
        kw = kh if rng.random() < 0.7 else _pick(rng, ks)
        dil = [1, 1] if rng.random() < 0.75 else [int(rng.integers(1, 3)) for _ in range(2)]
        st = [1, 1] if rng.random() < 0.5 else ([2, 2] if rng.random() < 0.6 else
                                                [int(rng.integers(1, 4)) for _ in range(2)])
        pads = [int(rng.integers(0, (kh if i % 2 == 0 else kw) * dil[i % 2]))
                if rng.random() < 0.8 else 0 for i in range(4)]
        if rng.random() < 0.5:  # symmetric "same"-style pads are the common case
            pads = [((kh - 1) * dil[0]) // 2, ((kw - 1) * dil[1]) // 2] * 2
        if form == "dw":
            group, cout = c, c * int(_pick(rng, [1, 1, 1, 2]))
        elif form == "group":
            divs = [g for g in range(2, c + 1) if c % g == 0]
            if not divs:
                group, cout = 1, int(rng.integers(1, 17))
            else:
                group = int(_pick(rng, divs))
                cout = group * int(rng.integers(1, 4))
        else:
            group, cout = 1, int(rng.integers(1, 17))
        op.update(k=[kh, kw], s=st, d=dil, pads=pads, group=group, cout=cout,
                  bias=bool(rng.random() < 0.8), act=_pick(rng, ["none", "none", "relu", "clip"]))
    elif t in ("MaxPool", "AveragePool"):
        kh = int(rng.integers(1, 4))
        kw = kh if rng.random() < 0.7 else int(rng.integers(1, 4))
        st = [int(rng.integers(1, 4)) for _ in range(2)] if rng.random() < 0.4 else \
            [_pick(rng, [1, 2, 2])] * 2
        pads = [int(rng.integers(0, k)) if rng.random() < 0.5 else 0 for k in (kh, kw, kh, kw)]
        op.update(k=[kh, kw], s=st, pads=pads, ceil=int(rng.random() < 0.3))
        if t == "AveragePool":
            op["cip"] = int(rng.random() < 0.4)
        elif rng.random() < 0.15:
            op["d"] = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    elif t in ("Add", "Mul"):
        same = [j for j, s in shapes.items() if s == xs and j != x_idx]
        if same and rng.random() < 0.5:
            op["y"] = int(_pick(rng, same))
        elif rng.random() < 0.05:
            op["y"] = x_idx  # x + x
        else:
            op["const"] = _pick(rng, ["same", "same", "chan", "chan3", "row", "plane", "scalar",
                                      "one"])
        if t == "Add":
            op["act"] = _pick(rng, ["none", "none", "relu"])
        if rng.random() < 0.3:
            op["swap"] = 1  # constant / other operand first
    elif t == "Concat":
        fit = [j for j, s in shapes.items() if len(s) == len(xs) and j != x_idx and
               all(a == b for i, (a, b) in enumerate(zip(s, xs)) if i != 1)]
        if fit and rng.random() < 0.6:
            op["y"] = int(_pick(rng, fit))
        else:
            op["cc"] = int(rng.integers(1, 5))
        if rng.random() < 0.3:
            op["swap"] = 1
        op["same_q"] = int(rng.random() < 0.3)
    elif t == "Reshape":
        op["mode"] = _pick(rng, ["flatten", "merge_hw", "fold_c", "to_w"] if r4 else
                           ["to4d", "to4d", "to4d_w"])
    elif t == "Resize":
        op["mode"] = "nearest" if rng.random() < 0.85 else "linear"
        ctms = ["asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners",
                "tf_half_pixel_for_nn"]
        if op["mode"] == "linear":
            ctms = ctms[:4]
        op["ctm"] = _pick(rng, ctms)
        op["nearest"] = _pick(rng, ["floor", "ceil", "round_prefer_floor", "round_prefer_ceil"])
        if rng.random() < 0.75:
            op["scales"] = [float(_pick(rng, [0.5, 1.0, 1.5, 2.0, 2.0, 3.0])) for _ in range(2)]
        else:
            op["sizes"] = [int(rng.integers(1, 2 * xs[2] + 2)), int(rng.integers(1, 2 * xs[3] + 2))]
    elif t == "Softmax":
        op["axis"] = -1 if (not r4 or rng.random() < 0.75) else 1
    elif t == "Clip":
        op["lo"], op["hi"] = sorted(float(v) for v in rng.uniform(-1.0, 1.5, 2))
        if rng.random() < 0.5:
            # output params whose range covers [lo, hi]; else any params, and [lo, hi] may
            # lie outside the output's range (the clamp then gives a constant)
            op["cover"] = 1
    elif t == "MatMul":
        op["n"] = int(rng.integers(1, 33 if not r4 else 9))
    elif t == "Gemm":
        op.update(n=int(rng.integers(1, 33)), transB=int(rng.random() < 0.5),
                  bias=bool(rng.random() < 0.8), act=_pick(rng, ["none", "none", "relu"]))
    if t in ("Conv", "MatMul", "Gemm"):
        op["perch"] = int(rng.random() < 0.5)
    if t in ("Conv", "MatMul") and rng.random() < 0.15:
        op["qlinear"] = 1  # int8 models: QLinearConv / QLinearMatMul (fp32 requantization)
        op["act"] = "none"
    return op


def random_spec(seed, kind):
    """A random valid spec (deterministic in seed)."""
    rng = np.random.default_rng([seed, 0 if kind == "int8" else 1])
    if rng.random() < 0.85:
        shape = [1, int(rng.integers(1, 17)), int(rng.integers(1, 13)), int(rng.integers(1, 13))]
    else:
        shape = [1, int(rng.integers(1, 65))]
    spec = {"seed": int(seed), "kind": kind, "input": shape, "ops": []}
    if kind == "int8":
        spec["act"] = "int8" if rng.random() < 0.6 else "uint8"
        spec["input_q"] = int(rng.random() < 0.25)   # integer graph input
        spec["output_q"] = int(rng.random() < 0.2)   # integer graph output
        spec["shared_dq"] = int(rng.random() < 0.5)  # one DequantizeLinear per tensor
    shapes = {0: shape}
    n_ops = int(rng.integers(1, 7))
    tries = 0
    while len(spec["ops"]) < n_ops and tries < 200:
        tries += 1
        last = len(shapes) - 1
        x = last if rng.random() < 0.85 or last == 0 else int(rng.integers(0, last))
        op = random_op(rng, x, shapes)
        op["uid"] = len(spec["ops"])
        try:
            out = infer(op, shapes)
        except Invalid:
            continue
        if int(np.prod(out)) > 4096 or min(out) < 1:
            continue
        spec["ops"].append(op)
        shapes[len(shapes)] = out
        if op["op"] == "Conv" and rng.random() < 0.2 and len(spec["ops"]) < n_ops:
            # An element-wise op with a same-shape constant after an NPU op: its constant
            # must follow the op into the NPU's layout (a silent wrong answer once).
            spec["ops"].append({"op": "Add", "x": len(shapes) - 1, "const": "same",
                                "act": "none", "uid": len(spec["ops"])})
            shapes[len(shapes)] = out
    if len(spec["ops"]) > 1 and rng.random() < 0.1:
        spec["extra_output"] = int(rng.integers(1, len(spec["ops"])))
    return spec


# ---------------------------------------------------------------- building

class Builder:
    """Emits nodes and initializers; a tensor is a dict with its (float) name, shape,
    estimated magnitude r and, for int8 models, its quantized name q, scale s, zp z."""

    def __init__(self, spec):
        self.spec = spec
        self.nodes, self.inits = [], []
        self.n = 0
        self.int8 = spec["kind"] == "int8"
        self.adt = np.int8 if spec.get("act", "int8") == "int8" else np.uint8

    def name(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def init(self, base, arr):
        nm = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def node(self, op, ins, base, **attrs):
        out = self.name(base)
        self.nodes.append(helper.make_node(op, ins, [out], name=out + "_n", **attrs))
        return out

    # quantization helpers
    def act_params(self, rng, r, nonneg=False):
        lo, hi = (-128, 127) if self.adt == np.int8 else (0, 255)
        r = max(float(r), 1e-3)
        f = float(rng.uniform(0.6, 1.3))
        if nonneg or rng.random() < 0.15:
            s = r * f / 255.0
            z = lo if rng.random() < 0.8 else lo + int(rng.integers(0, 30))
        else:
            s = r * f / 127.5
            mid = (lo + hi + 1) // 2
            z = mid + int(rng.integers(-40, 41)) if rng.random() < 0.9 else \
                int(rng.integers(lo, hi + 1))
        return np.float32(s), int(z)

    def covering_params(self, rng, lo, hi):
        """Activation params whose range covers [lo, hi] (and 0, which every range of
        params with an in-range zero point holds)."""
        qlo, qhi = (-128, 127) if self.adt == np.int8 else (0, 255)
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        s = max(hi - lo, 1e-3) * float(rng.uniform(1.0, 1.3)) / 255.0
        z = qlo - int(math.floor(lo / s)) + int(rng.integers(0, 3))
        return np.float32(s), int(min(max(z, qlo), qhi))

    def qdq_consts(self, s, z, dt):
        return self.init("s", np.float32(s)), self.init("z", np.array(z, dtype=dt))

    def quantize(self, fname, s, z, base="q"):
        sn, zn = self.qdq_consts(s, z, self.adt)
        return self.node("QuantizeLinear", [fname, sn, zn], base)

    def dq(self, t):
        """The float view of quantized tensor t (shared or per consumer)."""
        if self.spec.get("shared_dq") and "dq" in t:
            return t["dq"]
        sn, zn = self.qdq_consts(t["s"], t["z"], self.adt)
        f = self.node("DequantizeLinear", [t["q"], sn, zn], "dq")
        t["dq"] = f
        return f

    def fin(self, rng, fname, shape, r, nonneg=False, same_as=None):
        """Ends an op: quantizes float result fname (int8), or just records it."""
        t = {"shape": shape, "r": float(r)}
        if not self.int8:
            t["f"] = fname
            return t
        if same_as is not None:
            s, z = same_as["s"], same_as["z"]
        else:
            s, z = self.act_params(rng, r, nonneg)
        t.update(q=self.quantize(fname, s, z), s=s, z=z)
        return t

    def src(self, t):
        return self.dq(t) if self.int8 else t["f"]

    def qweight(self, rng, shape, wmax, perch, axis):
        """An int8 weight: the names of its data, scale and zero point, and its scales."""
        wq = rng.integers(-127, 128, shape).astype(np.int8)
        if rng.random() < 0.1:
            wq.flat[int(rng.integers(0, wq.size))] = -128
        if perch:
            n = shape[axis]
            sw = (wmax * rng.uniform(0.3, 1.5, n) / 127.0).astype(np.float32)
            zw = np.zeros(n, dtype=np.int8)
        else:
            sw, zw = np.float32(wmax / 127.0), np.int8(0)
        return (self.init("wq", wq), self.init("ws", sw), self.init("wz", zw)), sw

    def weight(self, rng, shape, wmax, perch, axis):
        """A weight constant of shape (float or DQ of int8) and its per-channel scales."""
        if not self.int8:
            return self.init("w", rng.uniform(-wmax, wmax, shape).astype(np.float32)), None
        names, sw = self.qweight(rng, shape, wmax, perch, axis)
        attrs = {"axis": axis} if perch else {}
        return self.node("DequantizeLinear", list(names), "wdq", **attrs), sw

    def qbias(self, rng, n, sx, sw, mag):
        """int32 bias data of scale sx * sw (zero point 0) and that scale."""
        sb = (np.float32(sx) * np.asarray(sw, dtype=np.float32)).astype(np.float32)
        sbv = np.broadcast_to(sb, (n,)) if sb.ndim else np.full(n, sb)
        bq = np.round(rng.uniform(-mag, mag, n) / sbv).clip(-2**30, 2**30).astype(np.int32)
        return bq, sb

    def qlinear(self, rng, op_type, x, wshape, wmax, perch, axis, bias_mag, r_out, **attrs):
        """QLinearConv / QLinearMatMul on quantized tensor x (no DequantizeLinear)."""
        names, sw = self.qweight(rng, wshape, wmax, perch, axis)
        ins = [x["q"], *self.qdq_consts(x["s"], x["z"], self.adt), *names]
        s, z = self.act_params(rng, r_out)
        ins += list(self.qdq_consts(s, z, self.adt))
        if bias_mag is not None:
            ins.append(self.init("bq", self.qbias(rng, wshape[0], x["s"], sw, bias_mag)[0]))
        return {"q": self.node(op_type, ins, op_type.lower(), **attrs), "s": s, "z": z}

    def bias(self, rng, n, sx, sw, mag):
        if not self.int8:
            return self.init("b", rng.uniform(-mag, mag, n).astype(np.float32))
        bq, sb = self.qbias(rng, n, sx, sw, mag)
        if sb.ndim:
            return self.node("DequantizeLinear", [self.init("bq", bq), self.init("bs", sb),
                                                  self.init("bz", np.zeros(n, np.int32))],
                             "bdq", axis=0)
        return self.node("DequantizeLinear", [self.init("bq", bq), self.init("bs", sb),
                                              self.init("bz", np.int32(0))], "bdq")

    def constant(self, rng, shape, r):
        """A constant operand (float, or DQ of a quantized constant) with magnitude r."""
        vals = rng.uniform(-r, r, shape).astype(np.float32)
        if not self.int8:
            return self.init("c", vals), None
        s, z = self.act_params(rng, r)
        lo, hi = (-128, 127) if self.adt == np.int8 else (0, 255)
        q = np.clip(np.round(vals / s) + z, lo, hi).astype(self.adt)
        c = {"q": self.init("cq", q), "s": s, "z": z, "shape": list(shape), "r": r}
        return self.dq(dict(c)), c


def _gain(rng):
    return float(rng.uniform(0.6, 1.6))


def build_op(b, op, ts, rng):
    """Appends op (reading tensors ts) and returns its output tensor."""
    t, x = op["op"], ts[op["x"]]
    xs, r = x["shape"], x["r"]
    out_shape = infer(op, {k: v["shape"] for k, v in ts.items()})
    xf = b.src(x)
    if t == "Conv":
        cin, g = xs[1], op["group"]
        kk = cin // g * op["k"][0] * op["k"][1]
        gain = _gain(rng)
        if op.get("qlinear") and b.int8:
            y = b.qlinear(rng, "QLinearConv", x, [op["cout"], cin // g] + op["k"],
                          gain / math.sqrt(kk), op["perch"], 0, 0.3 * r if op["bias"] else None,
                          r * gain, kernel_shape=op["k"], strides=op["s"], dilations=op["d"],
                          pads=op["pads"], group=g)
            y.update(shape=out_shape, r=r * gain)
            return y
        w, sw = b.weight(rng, [op["cout"], cin // g] + op["k"], gain / math.sqrt(kk),
                         op["perch"], 0)
        ins = [xf, w]
        if op["bias"]:
            ins.append(b.bias(rng, op["cout"], x.get("s", 1.0), sw, 0.3 * r))
        y = b.node("Conv", ins, "conv", kernel_shape=op["k"], strides=op["s"],
                   dilations=op["d"], pads=op["pads"], group=g)
        return _activation(b, op, y, out_shape, r * gain, rng)
    if t in ("MatMul", "Gemm"):
        k = xs[-1]
        gain = _gain(rng)
        if t == "MatMul" and op.get("qlinear") and b.int8:
            y = b.qlinear(rng, "QLinearMatMul", x, [k, op["n"]], gain / math.sqrt(k),
                          op["perch"], 1, None, r * gain)
            y.update(shape=out_shape, r=r * gain)
            return y
        if t == "MatMul":
            w, sw = b.weight(rng, [k, op["n"]], gain / math.sqrt(k), op["perch"], 1)
            y = b.node("MatMul", [xf, w], "matmul")
            return b.fin(rng, y, out_shape, r * gain)
        wshape = [op["n"], k] if op["transB"] else [k, op["n"]]
        w, sw = b.weight(rng, wshape, gain / math.sqrt(k), op["perch"], 0 if op["transB"] else 1)
        ins = [xf, w]
        if op["bias"]:
            ins.append(b.bias(rng, op["n"], x.get("s", 1.0), sw, 0.3 * r))
        y = b.node("Gemm", ins, "gemm", transB=op["transB"])
        return _activation(b, op, y, out_shape, r * gain, rng)
    if t in ("MaxPool", "AveragePool"):
        attrs = dict(kernel_shape=op["k"], strides=op["s"], pads=op["pads"],
                     ceil_mode=op["ceil"])
        if t == "MaxPool":
            if "d" in op:
                attrs["dilations"] = op["d"]
            y = b.node("MaxPool", [xf], "maxpool", **attrs)
            return b.fin(rng, y, out_shape, r, same_as=x if rng.random() < 0.9 else None)
        y = b.node("AveragePool", [xf], "avgpool", count_include_pad=op["cip"], **attrs)
        return b.fin(rng, y, out_shape, r * 0.8)
    if t == "GlobalAveragePool":
        return b.fin(rng, b.node("GlobalAveragePool", [xf], "gap"), out_shape, r * 0.6)
    if t in ("Add", "Mul"):
        if "y" in op:
            yt = ts[op["y"]]
            yf, ry = b.src(yt), yt["r"]
        else:
            ry = r * float(rng.uniform(0.2, 1.0)) if t == "Add" else float(rng.uniform(0.5, 2))
            yf, _ = b.constant(rng, const_shape(op["const"], xs), ry)
        ins = [yf, xf] if op.get("swap") else [xf, yf]
        y = b.node(t, ins, t.lower())
        ro = math.hypot(r, ry) if t == "Add" else r * ry
        return _activation(b, op, y, out_shape, ro, rng)
    if t == "Concat":
        if "y" in op:
            yt = ts[op["y"]]
            yf, ry = b.src(yt), yt["r"]
        else:
            cs = list(xs)
            cs[1] = op["cc"]
            ry = r * float(rng.uniform(0.3, 1.2))
            yf, _ = b.constant(rng, cs, ry)
        ins = [yf, xf] if op.get("swap") else [xf, yf]
        y = b.node("Concat", ins, "concat", axis=1)
        return b.fin(rng, y, out_shape, max(r, ry), same_as=x if op["same_q"] else None)
    if t in ("Reshape", "Flatten"):
        if t == "Reshape":
            shp = b.init("shape", np.array(out_shape, dtype=np.int64))
            y = b.node("Reshape", [xf, shp], "reshape")
        else:
            y = b.node("Flatten", [xf], "flatten", axis=1)
        return b.fin(rng, y, out_shape, r, same_as=x if rng.random() < 0.9 else None)
    if t == "Resize":
        attrs = dict(mode=op["mode"], coordinate_transformation_mode=op["ctm"])
        if op["mode"] == "nearest":
            attrs["nearest_mode"] = op["nearest"]
        if "sizes" in op:
            ins = [xf, "", "", b.init("sizes", np.array(xs[:2] + op["sizes"], dtype=np.int64))]
        else:
            ins = [xf, "", b.init("scales", np.array([1, 1] + op["scales"], dtype=np.float32))]
        y = b.node("Resize", ins, "resize", **attrs)
        near = op["mode"] == "nearest" and rng.random() < 0.9
        return b.fin(rng, y, out_shape, r, same_as=x if near else None)
    if t == "Softmax":
        y = b.node("Softmax", [xf], "softmax", axis=op["axis"])
        tt = {"shape": out_shape, "r": 1.0}
        if not b.int8:
            tt["f"] = y
            return tt
        z = -128 if b.adt == np.int8 else 0
        tt.update(q=b.quantize(y, np.float32(1.0 / 256), z), s=np.float32(1.0 / 256), z=z)
        return tt
    if t == "Relu":
        y = b.node("Relu", [xf], "relu")
        return b.fin(rng, y, out_shape, r, nonneg=True,
                     same_as=x if rng.random() < 0.3 else None)
    if t == "Clip":
        lo, hi = op["lo"] * r, op["hi"] * r
        y = b.node("Clip", [xf, b.init("lo", np.float32(lo)), b.init("hi", np.float32(hi))],
                   "clip")
        if op.get("cover") and b.int8:
            t = {"shape": out_shape, "r": max(abs(lo), abs(hi))}
            t["s"], t["z"] = b.covering_params(rng, lo, hi)
            t["q"] = b.quantize(y, t["s"], t["z"])
            return t
        return b.fin(rng, y, out_shape, max(abs(lo), abs(hi)), nonneg=lo >= 0)
    raise Invalid("op " + t)


# Lookup-table activations after a Conv/Gemm/MatMul, each quantized on its own (int8: the
# MAC's output, then the activation's). Only hand-written specs name them (random_op never
# draws them, so every seed's model is unchanged): test/diff/regressions.
LUT_ACTS = {"sigmoid": ("Sigmoid", {}, 1.0, True), "tanh": ("Tanh", {}, 1.0, False),
            "hardsigmoid": ("HardSigmoid", {"alpha": 0.25, "beta": 0.4}, 1.0, True),
            "leakyrelu": ("LeakyRelu", {"alpha": 0.125}, None, False)}


def _activation(b, op, y, shape, r, rng):
    act = op.get("act", "none")
    if act in LUT_ACTS:
        kind, attrs, out_r, nonneg = LUT_ACTS[act]
        t = b.fin(rng, y, shape, r)
        a = b.node(kind, [b.src(t)], act, **attrs)
        return b.fin(rng, a, shape, r if out_r is None else out_r, nonneg=nonneg)
    if act == "relu":
        return b.fin(rng, b.node("Relu", [y], "relu"), shape, r, nonneg=True)
    if act == "clip":
        lo = 0.0 if rng.random() < 0.5 else -float(rng.uniform(0.1, 0.5)) * r
        hi = float(rng.uniform(0.3, 1.0)) * r
        c = b.node("Clip", [y, b.init("lo", np.float32(lo)), b.init("hi", np.float32(hi))],
                   "clip")
        return b.fin(rng, c, shape, max(hi, -lo), nonneg=lo >= 0)
    return b.fin(rng, y, shape, r)


ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int8): TensorProto.INT8,
        np.dtype(np.uint8): TensorProto.UINT8}


def build(spec):
    """(ModelProto, {input name: array}) for spec; raises Invalid."""
    b = Builder(spec)
    rng = np.random.default_rng([spec["seed"], 99])
    shape = spec["input"]
    ts = {}
    if b.int8 and spec.get("input_q"):
        s, z = b.act_params(rng, 1.0)
        lo, hi = (-128, 127) if b.adt == np.int8 else (0, 255)
        data = rng.integers(lo, hi + 1, shape).astype(b.adt)
        ts[0] = {"q": "x", "s": s, "z": z, "shape": shape, "r": 1.0}
    else:
        data = rng.uniform(-1.2, 1.2, shape).astype(np.float32)
        ts[0] = {"shape": shape, "r": 1.0}
        if b.int8:
            s, z = b.act_params(rng, 1.0)
            ts[0].update(q=b.quantize("x", s, z), s=s, z=z)
        else:
            ts[0]["f"] = "x"
    used = set()
    for i, op in enumerate(spec["ops"]):
        orng = np.random.default_rng([spec["seed"], 7, op["uid"]])
        ts[i + 1] = build_op(b, op, ts, orng)
        used.update(op[k] for k in ("x", "y") if k in op)
    last = len(spec["ops"])
    outs = [last] + [i for i in range(1, last) if i not in used][:2]
    if spec.get("extra_output") and spec["extra_output"] not in outs:
        outs.append(spec["extra_output"])
    out_types = []
    for i in outs:
        t = ts[i]
        if b.int8 and spec.get("output_q"):
            name, dt = t["q"], b.adt
        elif b.int8:
            sn, zn = b.qdq_consts(t["s"], t["z"], b.adt)
            name, dt = b.node("DequantizeLinear", [t["q"], sn, zn], "out"), np.float32
        else:
            name, dt = t["f"], np.float32
        out_types.append((name, ELEM[np.dtype(dt)], t["shape"]))

    def make(symbolic):
        # Symbolic output dims when onnx 1.12's shape inference disagrees with ONNX
        # Runtime's (and newer onnx's): a ceil_mode pool window that would start in the
        # end padding is dropped (the importer's own inference decides then).
        vis = [helper.make_tensor_value_info(
            n, e, ["%s_d%d" % (n, k) for k in range(len(sh))] if symbolic else sh)
            for n, e, sh in out_types]
        graph = helper.make_graph(
            b.nodes, "diff_%s_%d" % (spec["kind"], spec["seed"]),
            [helper.make_tensor_value_info("x", ELEM[data.dtype], shape)], vis,
            initializer=b.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="npucc-diffgen", ir_version=7)
        onnx.checker.check_model(m, full_check=not symbolic)
        return m
    try:
        model = make(False)
    except Exception:  # noqa: BLE001 - the checker raises several types
        try:
            model = make(True)
        except Exception as e:  # noqa: BLE001
            raise Invalid("onnx checker: " + str(e).splitlines()[0])
    return model, {"x": data}


def describe(spec):
    """A short text of the ops: 'Conv3x3/s2/dw+relu -> Add(same) -> Softmax'."""
    parts = []
    shapes = {0: spec["input"]}
    for pos, op in enumerate(spec["ops"]):
        try:
            shapes[pos + 1] = infer(op, shapes)
        except Invalid:
            shapes[pos + 1] = shapes[op["x"]]
        t = op["op"]
        q = "QLinear" if op.get("qlinear") and spec["kind"] == "int8" else ""
        if t == "Conv":
            g = "dw" if op["group"] > 1 and op["group"] == op["cout"] else \
                ("g%d" % op["group"] if op["group"] > 1 else "")
            t = "%sConv%dx%d/s%d%s%s" % (q, op["k"][0], op["k"][1], op["s"][0],
                                         "/d2" if max(op["d"]) > 1 else "", "/" + g if g else "")
        elif t == "MatMul":
            t = q + t
        elif t in ("Add", "Mul", "Concat"):
            t += "(%s)" % ("t%d" % op["y"] if "y" in op else op.get("const", "const"))
        elif t == "Resize":
            t += "(%s%s,%s%s)" % (op["mode"], ":" + op["nearest"] if op["mode"] == "nearest" else "",
                                  op["ctm"],
                                  "" if _integer_resize(op, shapes[op["x"]]) else ",non-integer")
        elif t in ("MaxPool", "AveragePool"):
            t += "%dx%d/s%d%s%s" % (op["k"][0], op["k"][1], op["s"][0],
                                    "/ceil" if op["ceil"] else "",
                                    "-end-pad" if ceil_window_in_end_pad(op, shapes[op["x"]])
                                    else "")
        elif t == "Clip" and spec["kind"] == "int8" and not op.get("cover"):
            t += "(any-params)"
        if op.get("act", "none") != "none":
            t += "+" + op["act"]
        if op["x"] != pos:
            t = "[t%d]" % op["x"] + t
        parts.append(t)
    return " -> ".join(parts)


def write_case(spec, folder):
    """Builds spec into folder (model.onnx, spec.json, test_data_set_0/input_0.pb)."""
    model, inputs = build(spec)
    ds = os.path.join(folder, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    with open(os.path.join(folder, "spec.json"), "w") as f:
        json.dump(spec, f, indent=1, sort_keys=True)
        f.write("\n")
    for k, (name, arr) in enumerate(sorted(inputs.items())):
        with open(os.path.join(ds, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())


def case_name(spec):
    return "%s_%06d" % (spec["kind"], spec["seed"])


def generate(out, seed, count, kind):
    """count cases with seeds seed, seed+1, ...; kind 'mixed' = 3 int8 : 1 float."""
    names = []
    for i in range(count):
        k = kind if kind != "mixed" else ("float" if i % 4 == 3 else "int8")
        spec = random_spec(seed + i, k)
        name = case_name(spec)
        write_case(spec, os.path.join(out, name))
        names.append(name)
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--kind", choices=["int8", "float", "mixed"], default="mixed")
    ap.add_argument("--spec", help="build this spec.json instead of random ones")
    a = ap.parse_args()
    if a.spec:
        with open(a.spec) as f:
            spec = json.load(f)
        write_case(spec, os.path.join(a.out, case_name(spec)))
        return 0
    for n in generate(a.out, a.seed, a.count, a.kind):
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
