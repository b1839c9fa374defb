"""A ResNet-8-style CIFAR model (32x32x3 -> 10 classes) as an ONNX file.

The graph is what PyTorch's exporter writes for such a network: Conv,
BatchNormalization, Relu, residual Add, a strided 1x1 Conv shortcut,
GlobalAveragePool, Flatten, Gemm (transB=1, PyTorch's nn.Linear layout).
Weights are seeded random (He-initialised), batch norm statistics are
non-trivial, so every op matters in the output.

    python samples/onnx_resnet/make_model.py OUT.onnx [--batch N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.n = 0

    def name(self, kind: str) -> str:
        self.n += 1
        return f"{kind}{self.n}"

    def init(self, kind: str, arr: np.ndarray) -> str:
        name = self.name(kind)
        self.inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    def conv_bn(self, x: str, cin: int, cout: int, k: int, stride: int, relu: bool) -> str:
        w = self.rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))
        conv = self.name("conv")
        self.nodes.append(helper.make_node(
            "Conv", [x, self.init("w", w)], [conv], name=conv, kernel_shape=[k, k],
            strides=[stride, stride], pads=[k // 2] * 4))
        bn = self.name("bn")
        stats = [self.rng.uniform(0.5, 1.5, cout), self.rng.normal(0, 0.1, cout),
                 self.rng.normal(0, 0.1, cout), self.rng.uniform(0.5, 1.5, cout)]
        self.nodes.append(helper.make_node(
            "BatchNormalization", [conv, *(self.init(s, a) for s, a in zip(
                ("gamma", "beta", "mean", "var"), stats, strict=True))], [bn], name=bn))
        if not relu:
            return bn
        out = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [bn], [out], name=out))
        return out

    def block(self, x: str, cin: int, cout: int, stride: int) -> str:
        h = self.conv_bn(x, cin, cout, 3, stride, relu=True)
        h = self.conv_bn(h, cout, cout, 3, 1, relu=False)
        short = x if stride == 1 and cin == cout else self.conv_bn(x, cin, cout, 1, stride, relu=False)
        add, out = self.name("add"), self.name("relu")
        self.nodes.append(helper.make_node("Add", [h, short], [add], name=add))
        self.nodes.append(helper.make_node("Relu", [add], [out], name=out))
        return out


def resnet8(batch: int = 1, seed: int = 0) -> onnx.ModelProto:
    b = Builder(seed)
    h = b.conv_bn("input", 3, 16, 3, 1, relu=True)
    h = b.block(h, 16, 16, 1)
    h = b.block(h, 16, 32, 2)
    h = b.block(h, 32, 64, 2)
    b.nodes.append(helper.make_node("GlobalAveragePool", [h], ["pooled"], name="pool"))
    b.nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"))
    fc_w = b.rng.standard_normal((10, 64)) / 8.0
    fc_b = b.rng.normal(0, 0.1, 10)
    b.nodes.append(helper.make_node(
        "Gemm", ["flat", b.init("fc_w", fc_w), b.init("fc_b", fc_b)], ["logits"], name="fc",
        transB=1))
    graph = helper.make_graph(
        b.nodes, "resnet8",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 10])],
        b.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="mlvm samples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--batch", type=int, default=1)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(resnet8(args.batch), args.out)


if __name__ == "__main__":
    main()
