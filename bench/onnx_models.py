"""The benchmark models as ONNX graphs (onnx.helper), for onnxruntime.

Each graph computes what the mlvm program of the same name computes, op for
op where ONNX has the op: the MLP as MatMul / Add / Relu, the MLP-Mixer in
the same token-major layout as samples/mlp_mixer (LayerNormalization,
Gelu with approximate="tanh", the token MLP as one MatMul over the batch).
Weights are initializers.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples" / "mlp_mixer"))

import mixer as mx  # noqa: E402

OPSET = 20  # Gelu


class Graph:
    """A tiny builder: nodes, initializers and fresh value names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def const(self, name: str, arr: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def op(self, kind: str, *inputs: str, **attrs: object) -> str:
        out = self.fresh()
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def shape(self, *dims: int) -> str:
        return self.const(f"shape{self.n}_{len(self.inits)}", np.array(dims, np.int64))

    def model(self, inputs: list[tuple[str, tuple[int, ...]]], output: str,
              out_shape: tuple[int, ...]) -> onnx.ModelProto:
        self.nodes.append(helper.make_node("Identity", [output], ["y"]))
        g = helper.make_graph(
            self.nodes, "bench",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))],
            self.inits,
        )
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 9
        onnx.checker.check_model(m)
        return m


def noop(shape: tuple[int, ...] = (1,)) -> onnx.ModelProto:
    g = Graph()
    return g.model([("x", shape)], g.op("Identity", "x"), shape)


def matmul(n: int) -> onnx.ModelProto:
    g = Graph()
    return g.model([("a", (n, n)), ("b", (n, n))], g.op("MatMul", "a", "b"), (n, n))


def mlp(params: Mapping[str, np.ndarray], batch: int) -> onnx.ModelProto:
    g = Graph()
    h = "x"
    for i in (1, 2, 3):
        h = g.op("Add", g.op("MatMul", h, g.const(f"w{i}", params[f"w{i}"])),
                 g.const(f"b{i}", params[f"b{i}"]))
        if i < 3:
            h = g.op("Relu", h)
    return g.model([("x", (batch, 784))], h, (batch, 10))


def mixer(params: Mapping[str, np.ndarray], batch: int) -> onnx.ModelProto:
    g = Graph()
    b = batch
    rows = mx.TOKENS * b
    p = {k: g.const(k, v) for k, v in params.items()}

    def ln(x: str, gamma: str, beta: str) -> str:
        return g.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=mx.EPS)

    x = g.op("Reshape", "x", g.shape(b, mx.GRID, mx.PATCH, mx.GRID, mx.PATCH, mx.CHANNELS_IN))
    x = g.op("Transpose", x, perm=[1, 3, 0, 2, 4, 5])
    x = g.op("Reshape", x, g.shape(rows, mx.PATCH_DIM))
    h = g.op("Add", g.op("MatMul", x, p["embed_w"]), p["embed_b"])
    tok = g.shape(mx.TOKENS, b * mx.HIDDEN)
    back = g.shape(rows, mx.HIDDEN)
    for i in range(mx.DEPTH):
        y = g.op("Reshape", ln(h, p[f"b{i}_ln1_g"], p[f"b{i}_ln1_b"]), tok)
        y = g.op("Add", g.op("MatMul", p[f"b{i}_tok_w1"], y), p[f"b{i}_tok_b1"])
        y = g.op("Gelu", y, approximate="tanh")
        y = g.op("Add", g.op("MatMul", p[f"b{i}_tok_w2"], y), p[f"b{i}_tok_b2"])
        h = g.op("Reshape", g.op("Add", g.op("Reshape", h, tok), y), back)
        y = ln(h, p[f"b{i}_ln2_g"], p[f"b{i}_ln2_b"])
        y = g.op("Gelu", g.op("Add", g.op("MatMul", y, p[f"b{i}_ch_w1"]), p[f"b{i}_ch_b1"]),
                 approximate="tanh")
        y = g.op("Add", g.op("MatMul", y, p[f"b{i}_ch_w2"]), p[f"b{i}_ch_b2"])
        h = g.op("Add", h, y)
    y = g.op("Reshape", ln(h, p["ln_g"], p["ln_b"]), g.shape(mx.TOKENS, b, mx.HIDDEN))
    y = g.op("ReduceMean", y, g.const("axes0", np.array([0], np.int64)), keepdims=0)
    y = g.op("Add", g.op("MatMul", y, p["head_w"]), p["head_b"])
    return g.model([("x", (b, mx.IMAGE, mx.IMAGE, mx.CHANNELS_IN))], y, (b, mx.CLASSES))
