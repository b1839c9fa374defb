"""Small models for the emulated boards, in the project's own copies."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def cnn28(path: Path) -> None:
    """The 28x28 CNN, seeded weights, as an ONNX file."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    g = np.random.default_rng(28)

    def init(name: str, *shape: int) -> onnx.TensorProto:
        fan_in = int(np.prod(shape[1:]))
        w = (g.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
        return numpy_helper.from_array(w, name)

    conv = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], **conv),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], **conv),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Flatten", ["r2"], ["f"]),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1),
    ]
    inits = [init("w1", 8, 1, 3, 3), init("b1", 8), init("w2", 16, 8, 3, 3), init("b2", 16),
             init("w3", 10, 784), init("b3", 10)]
    graph = helper.make_graph(
        nodes, "cnn28", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def mlp784(path: Path) -> None:
    """A 784-256-256-10 MLP with ReLUs as PyTorch exports nn.Linear (Gemm,
    weights [out, in], transB=1), seeded weights, as an ONNX file."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    g = np.random.default_rng(784)
    sizes = [784, 256, 256, 10]
    nodes, inits, x = [], [], "x"
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        w = (g.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
        b = (0.1 * g.standard_normal(n_out)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        last = i == len(sizes) - 2
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], ["y" if last else f"g{i}"], transB=1))
        if not last:
            nodes.append(helper.make_node("Relu", [f"g{i}"], [f"r{i}"]))
            x = f"r{i}"
    graph = helper.make_graph(
        nodes, "mlp784", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 784])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
