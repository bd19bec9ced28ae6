#!/usr/bin/python3
"""Export the project's own small test models from PyTorch to ONNX.

Each model is written in the ONNX backend-test layout:
    models/<name>/model.onnx
    models/<name>/test_data_set_0/input_0.pb, output_0.pb   (onnx.TensorProto)
Weights are seeded random values (nothing can be downloaded); BatchNorm running
statistics are randomised too so that BatchNormalization is not an identity.
The input is seeded N(0,1) data and the golden output comes from PyTorch itself
(eval mode, float32).  The script also rewrites models/MANIFEST.tsv.

usage: /usr/bin/python3 scripts/export_torch_models.py [--out DIR] [NAME ...]
       NAME in: tinycnn mobilenetv2 tinyunet resnet18 invalid   (default: all but resnet18)
Needs Debian's python3-torch (1.13), python3-torchvision (0.14), python3-onnx, python3-numpy.
"""
import argparse
import os
import sys
import zlib

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

OPSET = 13


class TinyCnn(nn.Module):
    """conv-bn-relu x3, maxpool, global average pool, linear (1x3x32x32 -> 1x10).

    The head flattens with x.reshape(x.shape[0], -1); exported without constant
    folding this becomes Shape -> Gather -> Unsqueeze -> Concat -> Reshape, which
    the compiler has to fold itself."""

    def __init__(self, num_classes=10):
        super().__init__()
        chans = [3, 8, 16, 32]
        layers = []
        for i in range(3):
            layers += [nn.Conv2d(chans[i], chans[i + 1], 3, padding=1, bias=False),
                       nn.BatchNorm2d(chans[i + 1]), nn.ReLU()]
            if i == 0:
                layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(chans[-1], num_classes)

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.fc(x.reshape(x.shape[0], -1))


class TinyUNet(nn.Module):
    """Small encoder/decoder exercising ops the classifiers do not use:
    ConvTranspose, Resize (nearest), Concat skip connections, Pad, Slice, Split,
    Sigmoid, LeakyRelu, HardSwish (HardSigmoid*Mul at opset 13), Softmax over channels.
    1x3x32x32 -> 1x4x32x32."""

    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1))
        self.enc2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.Hardswish())
        self.mid = nn.Conv2d(16, 16, 3, padding=0)        # shrinks by 2: padded back with F.pad
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec = nn.Conv2d(16, 8, 3, padding=1)
        self.gate = nn.Conv2d(16, 8, 1)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        e1 = self.enc1(x)                                 # 8x32x32
        e2 = self.enc2(e1)                                # 16x16x16
        m = F.pad(torch.tanh(self.mid(e2)), (1, 1, 1, 1))  # 16x16x16
        a, b = torch.split(m, 8, dim=1)                   # 2 x 8x16x16
        u = self.up(torch.cat([a, b], dim=1))             # 8x32x32
        r = F.interpolate(e2, scale_factor=2.0, mode="nearest")  # 16x32x32
        g = torch.sigmoid(self.gate(r))                   # 8x32x32
        d = self.dec(torch.cat([u * g, e1], dim=1))       # 8x32x32
        d = d[:, :, :, :] + e1[:, 0:8, :, :]
        return torch.softmax(self.head(F.relu(d)), dim=1)


def mobilenetv2():
    import torchvision
    return torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=10)


def resnet18():
    import torchvision
    return torchvision.models.resnet18(num_classes=10)


# name -> settings.  fold: do_constant_folding.  keepBn: export with
# TrainingMode.PRESERVE (model in eval mode) so BatchNormalization is not fused into
# Conv by the exporter.  dynBatch: export with a dynamic batch dimension so that
# Shape/Gather/Unsqueeze/Concat survive in the graph, then pin the batch to 1 in the
# graph's declared inputs/outputs (the model stays valid ONNX with static shapes).
MODELS = {
    "tinycnn": dict(ctor=TinyCnn, shape=(1, 3, 32, 32), fold=False, keepBn=True, dynBatch=True,
                    desc="conv-bn-relu x3 + maxpool + global avgpool + linear; BN unfused, "
                         "Shape/Gather/Unsqueeze/Concat->Reshape head, no constant folding"),
    "mobilenetv2": dict(ctor=mobilenetv2, shape=(1, 3, 96, 96), fold=True, keepBn=False,
                        dynBatch=False, desc="torchvision MobileNetV2, width_mult=0.35, 10 classes"),
    "tinyunet": dict(ctor=TinyUNet, shape=(1, 3, 32, 32), fold=True, keepBn=False, dynBatch=False,
                     desc="encoder/decoder: ConvTranspose, Resize, Concat, Pad, Split, Slice, Softmax"),
    "resnet18": dict(ctor=resnet18, shape=(1, 3, 64, 64), fold=True, keepBn=False, dynBatch=False,
                     desc="torchvision ResNet-18, 10 classes (about 45 MB; not committed)"),
}
DEFAULT = ["tinycnn", "mobilenetv2", "tinyunet", "invalid"]


def seedFor(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def randomizeBatchNorm(model, gen):
    """Give every BatchNorm non-trivial affine parameters and running statistics."""
    for mod in model.modules():
        if isinstance(mod, nn.BatchNorm2d):
            n = mod.num_features
            with torch.no_grad():
                mod.weight.copy_(0.5 + torch.rand(n, generator=gen))
                mod.bias.copy_(0.2 * torch.randn(n, generator=gen))
                mod.running_mean.copy_(0.2 * torch.randn(n, generator=gen))
                mod.running_var.copy_(0.5 + torch.rand(n, generator=gen))


def writeTensor(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def pinBatch(m):
    """Replace the symbolic batch dimension of graph inputs/outputs with 1."""
    for vi in list(m.graph.input) + list(m.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if dims and dims[0].dim_param:
            dims[0].Clear()
            dims[0].dim_value = 1
    del m.graph.value_info[:]


def export(name, outRoot):
    cfg = MODELS[name]
    seed = seedFor(name)
    torch.manual_seed(seed)
    model = cfg["ctor"]()
    randomizeBatchNorm(model, torch.Generator().manual_seed(seed + 1))
    model.eval()

    rng = np.random.default_rng(seed)
    x = rng.standard_normal(cfg["shape"]).astype(np.float32)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy().astype(np.float32)

    d = os.path.join(outRoot, name)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    mode = torch.onnx.TrainingMode.PRESERVE if cfg["keepBn"] else torch.onnx.TrainingMode.EVAL
    dyn = {"input": {0: "N"}, "output": {0: "N"}} if cfg["dynBatch"] else None
    torch.onnx.export(model, torch.from_numpy(x), path, opset_version=OPSET,
                      do_constant_folding=cfg["fold"], input_names=["input"],
                      output_names=["output"], training=mode, dynamic_axes=dyn)
    m = onnx.load(path)
    if cfg["dynBatch"]:
        pinBatch(m)
        onnx.save(m, path)
    onnx.checker.check_model(m, full_check=True)
    writeTensor(os.path.join(ds, "input_0.pb"), x, m.graph.input[0].name)
    writeTensor(os.path.join(ds, "output_0.pb"), y, m.graph.output[0].name)
    print(f"{name}: {os.path.getsize(path)} bytes, input {list(x.shape)}, "
          f"output {list(y.shape)}, constant folding {'on' if cfg['fold'] else 'off'}")


def exportInvalid(outRoot):
    """Tiny hand-built models for npucc's error paths, in models/invalid/ (not model dirs,
    so the model test drivers skip them).  See models/README.md for the expected outcome."""
    from onnx import TensorProto, helper
    d = os.path.join(outRoot, "invalid")
    os.makedirs(d, exist_ok=True)
    opset = [helper.make_opsetid("", OPSET)]

    # 1. An op npucc does not implement (Det).
    g = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="det0")], "unsupported_op",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=opset, producer_name="npucc-tests")
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(d, "unsupported_op.onnx"))

    # 2. A symbolic batch dimension: needs --shape x=2x4 (or similar) to compile.
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu0")], "dynamic_batch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    m = helper.make_model(g, opset_imports=opset, producer_name="npucc-tests")
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(d, "dynamic_batch.onnx"))

    # 3. A node reading a value nothing defines (fails onnx.checker too).
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "missing_bias"], ["y"], name="add0")], "undefined_value",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    m = helper.make_model(g, opset_imports=opset, producer_name="npucc-tests")
    onnx.save(m, os.path.join(d, "undefined_value.onnx"))

    # 4. A protobuf cut short: the first half of a valid model's bytes.
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", kernel_shape=[3, 3])],
        "truncated", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        [numpy_helper.from_array(np.full((4, 2, 3, 3), 0.5, np.float32), "w")])
    data = helper.make_model(g, opset_imports=opset, producer_name="npucc-tests").SerializeToString()
    with open(os.path.join(d, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    print("invalid: unsupported_op, dynamic_batch, undefined_value, truncated")


def opsOf(path):
    seen = []
    for node in onnx.load(path, load_external_data=False).graph.node:
        if node.op_type not in seen:
            seen.append(node.op_type)
    return seen


def writeManifest(outRoot):
    rows = ["name\tbytes\topset\tconstant_folding\tops\tdescription"]
    for name, cfg in MODELS.items():
        path = os.path.join(outRoot, name, "model.onnx")
        if not os.path.exists(path):
            continue
        m = onnx.load(path, load_external_data=False)
        opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
        rows.append("\t".join([name, str(os.path.getsize(path)), str(opset),
                               "on" if cfg["fold"] else "off", ",".join(opsOf(path)),
                               cfg["desc"]]))
    with open(os.path.join(outRoot, "MANIFEST.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "models"))
    ap.add_argument("names", nargs="*", help="models to export (default: %s)" % " ".join(DEFAULT))
    args = ap.parse_args()
    names = args.names or DEFAULT
    for n in names:
        if n not in MODELS and n != "invalid":
            sys.exit(f"unknown model '{n}' (known: {', '.join(MODELS)}, invalid)")
    torch.set_num_threads(1)
    for n in names:
        if n == "invalid":
            exportInvalid(args.out)
        else:
            export(n, args.out)
    writeManifest(args.out)


if __name__ == "__main__":
    main()
