"""The benchmark models as ONNX graphs (onnx.helper), for onnxruntime.

Each graph computes what the mlvm program of the same name computes, op for
op where ONNX has the op: the MLP as MatMul / Add / Relu, the MLP-Mixer in
the same token-major layout as samples/mlp_mixer (LayerNormalization,
Gelu with approximate="tanh", the token MLP as one MatMul over the batch).
Weights are initializers. The models users bring (below: the MLP and Linear
layers in PyTorch layout, ResNet-8, DS-CNN, MobileNet v1 0.25, a transformer
encoder block) are compiled by mlvm from these same ONNX graphs.
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


# The vector-math rows: one op over [64, 1000] (the shape of a batch of
# logits), as exporters write it; GELU in erf form as PyTorch exports
# nn.GELU(): x * 0.5 * (1 + Erf(x / sqrt 2)).
MATH_SHAPE = (64, 1000)
MATH_OPS = ("softmax", "log-softmax", "exp", "sigmoid", "tanh", "gelu-erf")


def vector_math(op: str) -> onnx.ModelProto:
    g = Graph()
    if op == "gelu-erf":
        e = g.op("Erf", g.op("Div", "x", g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))))
        y = g.op("Mul", g.op("Mul", "x", g.op("Add", e, g.const("one", np.array(1.0, np.float32)))),
                 g.const("half", np.array(0.5, np.float32)))
    elif op in ("softmax", "log-softmax"):
        y = g.op("Softmax" if op == "softmax" else "LogSoftmax", "x", axis=-1)
    else:
        y = g.op(op.capitalize(), "x")
    return g.model([("x", MATH_SHAPE)], y, MATH_SHAPE)


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


# --------------------------------------------------------------------------
# The models users bring, as their exporters write them (PyTorch layout:
# nn.Linear weights [out, in] through Gemm transB=1; Conv without bias
# followed by BatchNormalization with non-trivial statistics). Each builder
# takes the batch size; weights are seeded, so every call with the same
# arguments builds the same graph.
# --------------------------------------------------------------------------

class Net(Graph):
    """A Graph with seeded random initializers and the usual layers."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.rng = np.random.default_rng(seed)
        self.k = 0

    def param(self, kind: str, arr: np.ndarray) -> str:
        self.k += 1
        return self.const(f"{kind}{self.k}", np.asarray(arr, np.float32))

    def scalar(self, value: float) -> str:
        return self.param("c", np.array(value, np.float32))

    def bn(self, x: str, c: int) -> str:
        stats = (self.rng.uniform(0.5, 1.5, c), self.rng.normal(0, 0.1, c),
                 self.rng.normal(0, 0.1, c), self.rng.uniform(0.5, 1.5, c))
        return self.op("BatchNormalization", x, *(self.param(k, s) for k, s in zip(
            ("gamma", "beta", "mean", "var"), stats, strict=True)), epsilon=1e-3)

    def conv(self, x: str, cin: int, cout: int, k: tuple[int, int], stride: int,
             pads: list[int], group: int = 1) -> str:
        fan_in = cin // group * k[0] * k[1]
        w = self.rng.standard_normal((cout, cin // group, *k)) * np.sqrt(2.0 / fan_in)
        return self.op("Conv", x, self.param("w", w), kernel_shape=list(k),
                       strides=[stride, stride], pads=pads, group=group)

    def relu6(self, x: str) -> str:
        return self.op("Clip", x, self.scalar(0.0), self.scalar(6.0))

    def gemm_t(self, x: str, fan_in: int, fan_out: int) -> str:
        """nn.Linear as PyTorch exports it for a 2-D input: Gemm with W [out, in], transB=1."""
        w = self.rng.standard_normal((fan_out, fan_in)) / np.sqrt(fan_in)
        b = self.rng.normal(0, 0.1, fan_out)
        return self.op("Gemm", x, self.param("fc_w", w), self.param("fc_b", b), transB=1)


def mlp_pytorch(params: Mapping[str, np.ndarray], batch: int) -> onnx.ModelProto:
    """The sample MLP with nn.Linear weights [out, in]: three Gemm transB=1."""
    g = Graph()
    h = "x"
    for i in (1, 2, 3):
        h = g.op("Gemm", h, g.const(f"w{i}", params[f"w{i}"]), g.const(f"b{i}", params[f"b{i}"]),
                 transB=1)
        if i < 3:
            h = g.op("Relu", h)
    return g.model([("x", (batch, 784))], h, (batch, 10))


def linear(w: np.ndarray, b: np.ndarray, m: int, pytorch: bool) -> onnx.ModelProto:
    """relu(x @ W.T + b): `w` is [out, in] (PyTorch layout, Gemm transB=1) when
    `pytorch`, else [in, out] (pre-transposed, Gemm transB=0)."""
    g = Graph()
    n_in = w.shape[1] if pytorch else w.shape[0]
    n_out = w.shape[0] if pytorch else w.shape[1]
    y = g.op("Gemm", "x", g.const("w", w), g.const("b", b), transB=int(pytorch))
    return g.model([("x", (m, n_in))], g.op("Relu", y), (m, n_out))


def resnet8(batch: int) -> onnx.ModelProto:
    """samples/onnx_resnet/make_model.py's ResNet-8 (CIFAR, 3x32x32 -> 10)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples" / "onnx_resnet"))
    import make_model

    return make_model.resnet8(batch)


DSCNN_INPUT = (1, 49, 10)


def dscnn(batch: int, seed: int = 1) -> onnx.ModelProto:
    """A DS-CNN keyword spotter (MLPerf Tiny KWS): 49x10 MFCC input, Conv 10x4
    stride 2 (TF 'same' padding) to 64 channels, four depthwise-separable
    blocks (depthwise 3x3 + BN + ReLU, pointwise 64 + BN + ReLU), global
    average pool, Gemm to 12 classes."""
    g = Net(seed)
    h = g.op("Relu", g.bn(g.conv("x", 1, 64, (10, 4), 2, [4, 1, 5, 1]), 64))
    for _ in range(4):
        h = g.op("Relu", g.bn(g.conv(h, 64, 64, (3, 3), 1, [1, 1, 1, 1], group=64), 64))
        h = g.op("Relu", g.bn(g.conv(h, 64, 64, (1, 1), 1, [0, 0, 0, 0]), 64))
    h = g.op("Flatten", g.op("GlobalAveragePool", h))
    return g.model([("x", (batch, *DSCNN_INPUT))], g.gemm_t(h, 64, 12), (batch, 12))


AUTOENCODER_INPUT = (640,)
#: MLPerf Tiny anomaly detection: dense widths of the encoder, bottleneck, decoder.
AUTOENCODER_WIDTHS = (128, 128, 128, 128, 8, 128, 128, 128, 128, 640)


def autoencoder(batch: int, seed: int = 4) -> onnx.ModelProto:
    """The MLPerf Tiny anomaly-detection autoencoder: 640 log-mel features,
    dense 128 x 4, an 8-wide bottleneck, dense 128 x 4, dense 640; every
    hidden layer with BatchNormalization and ReLU, as nn.Linear exports
    (Gemm transB=1)."""
    g = Net(seed)
    h, fan_in = "x", AUTOENCODER_INPUT[0]
    for i, width in enumerate(AUTOENCODER_WIDTHS):
        h = g.gemm_t(h, fan_in, width)
        if i + 1 < len(AUTOENCODER_WIDTHS):
            h = g.op("Relu", g.bn(h, width))
        fan_in = width
    return g.model([("x", (batch, *AUTOENCODER_INPUT))], h, (batch, AUTOENCODER_INPUT[0]))


MOBILENET_INPUT = (3, 96, 96)
#: MobileNet v1: (output channels, stride) of the 13 depthwise-separable blocks.
MOBILENET_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                    (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))


def mobilenet_v1(batch: int, alpha: float = 0.25, classes: int = 2,
                 seed: int = 2) -> onnx.ModelProto:
    """MobileNet v1 with width multiplier `alpha` at 96x96 (MLPerf Tiny visual
    wake words): Conv 3x3 stride 2, 13 depthwise-separable blocks with
    BatchNormalization and ReLU6 (Clip 0..6), global average pool, Gemm."""
    g = Net(seed)
    c = int(32 * alpha)
    h = g.relu6(g.bn(g.conv("x", 3, c, (3, 3), 2, [1, 1, 1, 1]), c))
    for width, stride in MOBILENET_BLOCKS:
        out = int(width * alpha)
        h = g.relu6(g.bn(g.conv(h, c, c, (3, 3), stride, [1, 1, 1, 1], group=c), c))
        h = g.relu6(g.bn(g.conv(h, c, out, (1, 1), 1, [0, 0, 0, 0]), out))
        c = out
    h = g.op("Flatten", g.op("GlobalAveragePool", h))
    return g.model([("x", (batch, *MOBILENET_INPUT))], g.gemm_t(h, c, classes), (batch, classes))


# -- a transformer encoder block ---------------------------------------------------------------
SEQ, D_MODEL, HEADS, D_MLP = 128, 256, 4, 1024


def transformer_params(seed: int = 3) -> dict[str, np.ndarray]:
    """Weights of one pre-LN encoder block; the matrices are [in, out], as
    PyTorch's exporter stores nn.Linear for a MatMul on a 3-D input."""
    rng = np.random.default_rng(seed)

    def dense(fan_in: int, fan_out: int) -> np.ndarray:
        return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)

    def vec(n: int, mean: float = 0.0, std: float = 0.1) -> np.ndarray:
        return rng.normal(mean, std, n).astype(np.float32)

    p = {"ln1_g": vec(D_MODEL, 1.0), "ln1_b": vec(D_MODEL)}
    for k in "qkvo":
        p[f"w{k}"], p[f"b{k}"] = dense(D_MODEL, D_MODEL), vec(D_MODEL)
    p["ln2_g"], p["ln2_b"] = vec(D_MODEL, 1.0), vec(D_MODEL)
    p["w1"], p["b1"] = dense(D_MODEL, D_MLP), vec(D_MLP)
    p["w2"], p["b2"] = dense(D_MLP, D_MODEL), vec(D_MODEL)
    return p


def transformer(params: Mapping[str, np.ndarray], batch: int, seq: int = SEQ) -> onnx.ModelProto:
    """x + attention(LN(x)), then + MLP(LN(.)): 4-head attention with batched
    MatMul and Softmax, LayerNormalization, GELU in erf form (x * 0.5 *
    (1 + Erf(x / sqrt 2)), as PyTorch exports nn.GELU), residual adds."""
    g = Graph()
    p = {k: g.const(k, v) for k, v in params.items()}
    dh = D_MODEL // HEADS

    def ln(x: str, i: int) -> str:
        return g.op("LayerNormalization", x, p[f"ln{i}_g"], p[f"ln{i}_b"], axis=-1, epsilon=1e-5)

    def dense(x: str, w: str, b: str) -> str:
        return g.op("Add", g.op("MatMul", x, w), b)

    heads = g.shape(batch, seq, HEADS, dh)
    h = ln("x", 1)
    q = g.op("Transpose", g.op("Reshape", dense(h, p["wq"], p["bq"]), heads), perm=[0, 2, 1, 3])
    k = g.op("Transpose", g.op("Reshape", dense(h, p["wk"], p["bk"]), heads), perm=[0, 2, 3, 1])
    v = g.op("Transpose", g.op("Reshape", dense(h, p["wv"], p["bv"]), heads), perm=[0, 2, 1, 3])
    s = g.op("Div", g.op("MatMul", q, k), g.const("sqrt_dh", np.array(np.sqrt(dh), np.float32)))
    a = g.op("MatMul", g.op("Softmax", s, axis=-1), v)
    a = g.op("Reshape", g.op("Transpose", a, perm=[0, 2, 1, 3]), g.shape(batch, seq, D_MODEL))
    x1 = g.op("Add", "x", dense(a, p["wo"], p["bo"]))
    u = dense(ln(x1, 2), p["w1"], p["b1"])
    e = g.op("Erf", g.op("Div", u, g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))))
    gelu = g.op("Mul", g.op("Mul", u, g.op("Add", e, g.const("one", np.array(1.0, np.float32)))),
                g.const("half", np.array(0.5, np.float32)))
    y = g.op("Add", x1, dense(gelu, p["w2"], p["b2"]))
    return g.model([("x", (batch, seq, D_MODEL))], y, (batch, seq, D_MODEL))


def transformer_numpy(p: Mapping[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The same block in float32 numpy (scipy's erf)."""
    from scipy.special import erf

    def ln(t: np.ndarray, i: int) -> np.ndarray:
        mu = t.mean(-1, keepdims=True)
        var = ((t - mu) ** 2).mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(var + np.float32(1e-5)) * p[f"ln{i}_g"] + p[f"ln{i}_b"]

    b, s, _ = x.shape
    dh = D_MODEL // HEADS
    h = ln(x, 1)

    def split(t: np.ndarray) -> np.ndarray:
        return t.reshape(b, s, HEADS, dh).transpose(0, 2, 1, 3)

    q, k, v = (split(h @ p[f"w{n}"] + p[f"b{n}"]) for n in "qkv")
    sc = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(dh))
    sc = np.exp(sc - sc.max(-1, keepdims=True))
    sc /= sc.sum(-1, keepdims=True)
    a = (sc @ v).transpose(0, 2, 1, 3).reshape(b, s, D_MODEL)
    x1 = x + a @ p["wo"] + p["bo"]
    u = ln(x1, 2) @ p["w1"] + p["b1"]
    u = u * np.float32(0.5) * (np.float32(1.0) + erf(u / np.float32(np.sqrt(2.0))))
    return x1 + u @ p["w2"] + p["b2"]
