"""QDQ models written by onnxruntime's static quantizer (seeded weights and
calibration data), run in integers by mlvm (the mlvm-fuse-qdq pass) and
compared with onnxruntime's own int8 execution, bit for bit."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

import mlvm
from mlvm.codegen.lowering import value_shape
from mlvm.dialect.ops import ConstantOp
from mlvm.dialect.quant import QConv2dRequantOp
from mlvm.frontend.onnx.importer import import_onnx
from mlvm.frontend.onnx.ort_int8 import onnxruntime_saturates
from mlvm.passes.fuse_qdq import FuseQdqPass
from mlvm.pipeline import CompileOptions, load_source, lower

C = 16
# weights in [-64, 64] where onnxruntime's u8 x s8 products saturate (mlvm.frontend.onnx.ort_int8)
REDUCE_RANGE = onnxruntime_saturates()


def _save(path: Path, name: str, nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto],
          x_shape: list[int]) -> Path:
    """A model of `nodes` from input x to output y, opset 17, saved at path."""
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def cnn(path: Path) -> Path:
    """conv + relu, strided conv + relu, depthwise conv + relu, average
    pool, flatten, matmul: the shapes of a small keyword-spotting CNN."""
    g = np.random.default_rng(0)

    def init(name: str, shape: tuple[int, ...], scale: float) -> onnx.TensorProto:
        return numpy_helper.from_array((g.standard_normal(shape) * scale).astype(np.float32), name)

    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]), n("Relu", ["c2"], ["r2"]),
        n("Conv", ["r2", "w3", "b3"], ["c3"], group=C, pads=[1, 1, 1, 1]), n("Relu", ["c3"], ["r3"]),
        n("GlobalAveragePool", ["r3"], ["p"]), n("Flatten", ["p"], ["f"]), n("MatMul", ["f", "wf"], ["y"]),
    ]
    inits = [init("w1", (C, 3, 3, 3), 0.3), init("b1", (C,), 0.1), init("w2", (C, C, 3, 3), 0.1),
             init("b2", (C,), 0.1), init("w3", (C, 1, 3, 3), 0.3), init("b3", (C,), 0.1),
             init("wf", (C, 10), 0.3)]
    return _save(path, "cnn", nodes, inits, [1, 3, 16, 16])


class Calibration(CalibrationDataReader):
    """8 seeded standard-normal batches for the input `name` (bench/int8.py
    calibrates its models with it too)."""

    def __init__(self, name: str = "x", shape: tuple[int, ...] = (1, 3, 16, 16)) -> None:
        g = np.random.default_rng(1)
        self.batches = iter([{name: g.standard_normal(shape).astype(np.float32)} for _ in range(8)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


@pytest.fixture(scope="module", params=[QuantType.QUInt8, QuantType.QInt8], ids=["u8-activations", "s8-activations"])
def qdq(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("qdq")
    out = d / "qdq.onnx"
    quantize_static(str(cnn(d / "f32.onnx")), str(out), Calibration(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=request.param, weight_type=QuantType.QInt8,
                    reduce_range=REDUCE_RANGE)
    return out


def test_qdq_runs_in_integers(qdq: Path) -> None:
    module, _ = import_onnx(qdq)
    FuseQdqPass().apply(Context(), module)
    ops = Counter(op.name for op in module.walk())
    # three convolutions, and the classifier's matmul as a 1x1 one
    assert ops["mlvm.qconv2d_requant"] == 4 and ops["mlvm.qmatmul"] == 0, ops
    assert ops["mlvm.conv2d"] == 0 and ops["mlvm.matmul"] == 0, ops


def test_qdq_constants_fold_at_compile_time(qdq: Path) -> None:
    """The quantizer's per-channel weight scales and zero points are
    imported as constants: after the pipeline each kernel reads its
    multipliers as a constant (none computed at run time) and its weight
    zero point, all 0, as one value."""
    module, source, _ = load_source(qdq)
    lower(module, CompileOptions(), source)
    ops = Counter(op.name for op in module.walk())
    assert ops["mlvm.mul"] == ops["mlvm.div"] == ops["mlvm.fill"] == 0, ops
    for op in module.walk():
        if isinstance(op, QConv2dRequantOp):
            assert isinstance(op.operands[4].owner, ConstantOp), op.operands[4].owner
            assert math.prod(value_shape(op.operands[3])) == 1


def test_qdq_matches_onnxruntime_bit_for_bit(qdq: Path) -> None:
    sess = ort.InferenceSession(str(qdq), providers=["CPUExecutionProvider"])
    m = mlvm.compile(qdq)
    g = np.random.default_rng(2)
    for _ in range(10):
        x = (g.standard_normal((1, 3, 16, 16)) * 1.5).astype(np.float32)
        want = sess.run(None, {"x": x})[0]
        np.testing.assert_array_equal(m.main(x), want)


def _quantized(f32: Path, shape: tuple[int, ...], act: QuantType = QuantType.QUInt8) -> tuple[Path, ModuleOp]:
    """f32 quantized by onnxruntime's static quantizer beside it (QDQ,
    per-channel s8 weights, `act` activations), and its module after
    mlvm-fuse-qdq."""
    out = f32.with_name("qdq.onnx")
    quantize_static(str(f32), str(out), Calibration("x", shape), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=act, weight_type=QuantType.QInt8, reduce_range=REDUCE_RANGE)
    module, _ = import_onnx(out)
    FuseQdqPass().apply(Context(), module)
    return out, module


def _assert_as_onnxruntime(qdq: Path, shape: tuple[int, ...], g: np.random.Generator, scale: float = 1.5) -> None:
    """mlvm's outputs are onnxruntime's, bit for bit, on 10 inputs from g."""
    sess = ort.InferenceSession(str(qdq), providers=["CPUExecutionProvider"])
    m = mlvm.compile(qdq)
    for _ in range(10):
        x = (g.standard_normal(shape) * scale).astype(np.float32)
        np.testing.assert_array_equal(m.main(x), sess.run(None, {"x": x})[0])


def mlp(path: Path, rows: int) -> Path:
    """Gemm transB=1 with a bias (PyTorch's Linear), Relu, MatMul with a
    [K, N] weight plus a bias (a Keras Dense), over `rows` rows."""
    g = np.random.default_rng(3)
    inits = [numpy_helper.from_array((g.standard_normal(s) * 0.2).astype(np.float32), name)
             for name, s in (("w1", (24, 37)), ("b1", (24,)), ("w2", (24, 11)), ("b2", (11,)))]
    n = helper.make_node
    nodes = [n("Gemm", ["x", "w1", "b1"], ["h"], transB=1), n("Relu", ["h"], ["r"]),
             n("MatMul", ["r", "w2"], ["m"]), n("Add", ["m", "b2"], ["y"])]
    return _save(path, "mlp", nodes, inits, [rows, 37])


@pytest.mark.parametrize("rows", [1, 5])
@pytest.mark.parametrize("act", [QuantType.QUInt8, QuantType.QInt8], ids=["u8", "s8"])
def test_qdq_linear_layers_run_in_integers(tmp_path: Path, rows: int, act: QuantType) -> None:
    """Gemm / MatMul + bias layers become 1x1 int8 convolutions over their
    rows (mlvm-fuse-qdq's FuseQdqLinear), bit for bit onnxruntime's."""
    out, module = _quantized(mlp(tmp_path / "f32.onnx", rows), (rows, 37), act)
    ops = Counter(op.name for op in module.walk())
    assert ops["mlvm.qconv2d_requant"] == 2 and ops["mlvm.matmul"] == 0, ops
    _assert_as_onnxruntime(out, (rows, 37), np.random.default_rng(4))


def scaled_pools(path: Path) -> Path:
    """Conv, a per-channel Mul (a BatchNormalization spelt as Mul, as
    DenseNet's export has it), AveragePool 2x2 stride 2, AveragePool 3x3
    with padding left out of the count."""
    g = np.random.default_rng(5)
    inits = [numpy_helper.from_array((g.standard_normal(s) * 0.3).astype(np.float32), name)
             for name, s in (("w", (4, 3, 3, 3)), ("b", (4,)))]
    inits.append(numpy_helper.from_array((0.5 + g.random((4, 1, 1))).astype(np.float32), "k"))
    n = helper.make_node
    nodes = [n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), n("Mul", ["c", "k"], ["m"]),
             n("AveragePool", ["m"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             n("AveragePool", ["p"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    return _save(path, "pools", nodes, inits, [1, 3, 10, 14])


def test_qdq_mul_and_average_pools_as_onnxruntime(tmp_path: Path) -> None:
    """A QDQ Mul and AveragePool computed as onnxruntime's QLinearMul and
    QLinearAveragePool do, bit for bit. (u8 activations, the quantizer's
    default: with s8 ones onnxruntime 1.32 fuses some of these nodes and
    leaves others in f32, depending on which of their tensors are graph
    outputs, so its results follow no one rule.)"""
    out, module = _quantized(scaled_pools(tmp_path / "f32.onnx"), (1, 3, 10, 14))
    ops = Counter(op.name for op in module.walk())
    assert ops["mlvm.qavgpool2d"] == 2 and ops["mlvm.pool2d"] == 0 and ops["mlvm.dequantize"] == 1, ops
    _assert_as_onnxruntime(out, (1, 3, 10, 14), np.random.default_rng(6))


@pytest.mark.parametrize("signed", [False, True], ids=["u8", "s8"])
@pytest.mark.parametrize("pool", ["global-2d", "global-1d", "avg-2d", "avg-1d", "avg-pads-2d", "avg-pads-1d"])
def test_qdq_average_pools_of_both_types_as_onnxruntime(tmp_path: Path, pool: str, signed: bool) -> None:
    """DequantizeLinear, GlobalAveragePool or AveragePool, QuantizeLinear of
    one 8-bit type, 2-D and 1-D: onnxruntime makes each one QLinear node
    (QLinearGlobalAveragePool, QLinearAveragePool) of u8 and s8 alike, and
    mlvm computes what it does, bit for bit; at equal scales over windows of
    4, whose averages of integers tie (the float form's rounded products
    break about one tie in twenty the other way); also a pool that counts
    its pads (count_include_pad: the importer pads with zeros first, the
    bytes are padded with the zero point)."""
    t, dt = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    shape = [2, 64, 2, 2] if pool.endswith("2d") else [2, 64, 4]
    window = {"global-2d": [], "global-1d": [], "avg-2d": [2, 2], "avg-1d": [2], "avg-pads-2d": [2, 2],
              "avg-pads-1d": [2]}[pool]
    n = helper.make_node
    pads = {"count_include_pad": 1, "pads": [1] * 2 * len(window)} if "pads" in pool else {}
    op = n("GlobalAveragePool", ["d"], ["p"]) if not window else n("AveragePool", ["d"], ["p"], kernel_shape=window,
                                                                     **pads)
    nodes = [n("DequantizeLinear", ["x", "s", "z"], ["d"]), op, n("QuantizeLinear", ["p", "s", "zy"], ["y"])]
    inits = [numpy_helper.from_array(np.array(v, d), name) for v, d, name in
             ((0.1, np.float32, "s"), (3, dt, "z"), (7, dt, "zy"))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", t, shape)],
                              [helper.make_tensor_value_info("y", t, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "pool.onnx"
    onnx.save(model, path)
    module, _ = import_onnx(path)
    FuseQdqPass().apply(Context(), module)
    assert Counter(op.name for op in module.walk())["mlvm.qavgpool2d"] == 1
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    m, g = mlvm.compile(path), np.random.default_rng(12)
    info = np.iinfo(dt)
    for _ in range(20):
        x = g.integers(info.min, info.max + 1, shape).astype(dt)
        np.testing.assert_array_equal(m.main(x), sess.run(None, {"x": x})[0])


@pytest.mark.parametrize("case", ["global-u8", "avg-u8", "avg-1d-u8", "two-readers-u8", "two-readers-s8"])
def test_qdq_pool_after_a_reshape_as_onnxruntime(tmp_path: Path, case: str) -> None:
    """Pools after a Reshape of the model's own (channels merged; a 1-D
    pool's then between the importer's own reshapes): onnxruntime moves the dequantize across it and
    fuses the pool (QLinearGlobalAveragePool / QLinearAveragePool), of u8,
    and of s8 where the Reshape has two readers (on x86 it makes an s8 pair
    read once u8 and computes that pool in f32); mlvm pools the reshaped
    bytes as it does, bit for bit at tie scales."""
    n = helper.make_node
    signed = case.endswith("s8")
    t, dt = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    shape, inits = [4, 64, 4, 4], [numpy_helper.from_array(np.array([4, 256, 1, 4], np.int64), "shape")]
    reshape = n("Reshape", ["d", "shape"], ["r"])
    if case == "avg-1d-u8":
        shape, inits = [4, 64, 16], [numpy_helper.from_array(np.array([4, 128, 8], np.int64), "shape")]
    pool = (n("GlobalAveragePool", ["r"], ["p"]) if case == "global-u8"
            else n("AveragePool", ["r"], ["p"], kernel_shape=[1, 2] if case != "avg-1d-u8" else [2]))
    nodes = [n("DequantizeLinear", ["x", "s", "z"], ["d"]), reshape, pool, n("QuantizeLinear", ["p", "s2", "zy"], ["y"])]
    outs = [helper.make_tensor_value_info("y", t, None)]
    if case.startswith("two-readers"):
        nodes += [n("AveragePool", ["r"], ["p2"], kernel_shape=[1, 4]), n("QuantizeLinear", ["p2", "s2", "zy"], ["y2"])]
        outs.append(helper.make_tensor_value_info("y2", t, None))
    inits += [numpy_helper.from_array(np.array(v, d), name) for v, d, name in
              ((0.1, np.float32, "s"), (3, dt, "z"), (0.2, np.float32, "s2"), (7, dt, "zy"))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", t, shape)], outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "pool.onnx"
    onnx.save(model, path)
    so = ort.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    fused = [node.op_type for node in onnx.load(tmp_path / "opt.onnx").graph.node if node.op_type.startswith("QLinear")]
    assert len(fused) == len(outs), fused
    module, _ = import_onnx(path)
    FuseQdqPass().apply(Context(), module)
    assert Counter(op.name for op in module.walk())["mlvm.qavgpool2d"] == len(outs)
    m, g = mlvm.compile(path), np.random.default_rng(13)
    info = np.iinfo(dt)
    for _ in range(10):
        x = g.integers(info.min, info.max + 1, shape).astype(dt)
        got, want = m.main(x), sess.run(None, {"x": x})
        for a, b in zip(got if isinstance(got, tuple) else (got,), want, strict=True):
            np.testing.assert_array_equal(a, b)


def classifier(path: Path, n: int) -> Path:
    """Gemm transB=1 to n classes, then Softmax (the end of a classifier)."""
    g = np.random.default_rng(8)
    inits = [numpy_helper.from_array((g.standard_normal(s) * 0.3).astype(np.float32), name)
             for name, s in (("w", (n, 40)), ("b", (n,)))]
    n_ = helper.make_node
    nodes = [n_("Gemm", ["x", "w", "b"], ["h"], transB=1), n_("Softmax", ["h"], ["y"])]
    return _save(path, "cls", nodes, inits, [2, 40])


@pytest.mark.parametrize("n", [1, 10, 1000])
def test_qdq_softmax_as_onnxruntime(tmp_path: Path, n: int) -> None:
    """A QDQ Softmax computed as onnxruntime's QLinearSoftmax does (its table
    of exponentials, f32 sums, floor(1 / y_scale)), bit for bit."""
    out, module = _quantized(classifier(tmp_path / "f32.onnx", n), (2, 40))
    assert Counter(op.name for op in module.walk())["mlvm.qsoftmax"] == 1
    _assert_as_onnxruntime(out, (2, 40), np.random.default_rng(9), scale=2.0)


@pytest.mark.parametrize("signed", [False, True], ids=["u8", "s8"])
def test_qsoftmax_is_onnxruntimes_qlinear_softmax(tmp_path: Path, signed: bool) -> None:
    """mlvm.qsoftmax against onnxruntime's own QLinearSoftmax node (its
    contrib op), rows of 1 to 1000 values and several scales: every byte."""
    from mlvm.dialect.quant import qsoftmax_table

    t, dt, zy = (TensorProto.INT8, np.int8, -128) if signed else (TensorProto.UINT8, np.uint8, 0)
    e = "i8" if signed else "ui8"
    g = np.random.default_rng(10)
    for d in (1, 2, 7, 1000):
        for xs, ys in ((0.05, 1 / 256), (0.2, 1 / 255), (0.013, 1 / 255)):
            inits = [numpy_helper.from_array(np.array(xs, np.float32), "xs"), numpy_helper.from_array(np.array(3, dt), "xz"),
                     numpy_helper.from_array(np.array(ys, np.float32), "ys"), numpy_helper.from_array(np.array(zy, dt), "yz")]
            node = helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft",
                                    axis=-1, opset=13)
            graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", t, [16, d])],
                                      [helper.make_tensor_value_info("y", t, [16, d])], inits)
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                             helper.make_opsetid("com.microsoft", 1)])
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            table = ", ".join(repr(float(v)) for v in qsoftmax_table(xs, d, signed))
            src = tmp_path / f"qs_{e}_{d}_{xs}.mlir"
            src.write_text(
                f"func.func @main(%x: tensor<16x{d}x{e}>) -> tensor<16x{d}x{e}> {{\n"
                f'  %t = "mlvm.constant"() <{{value = dense<[{table}]> : tensor<256xf32>}}> : () -> tensor<256xf32>\n'
                f'  %s = "mlvm.constant"() <{{value = dense<{float(np.float32(ys))!r}> : tensor<f32>}}> : () -> tensor<f32>\n'
                f'  %z = "mlvm.constant"() <{{value = dense<{zy}> : tensor<{e}>}}> : () -> tensor<{e}>\n'
                f'  %y = "mlvm.qsoftmax"(%x, %t, %s, %z) : (tensor<16x{d}x{e}>, tensor<256xf32>, tensor<f32>, '
                f"tensor<{e}>) -> tensor<16x{d}x{e}>\n"
                f"  func.return %y : tensor<16x{d}x{e}>\n}}\n")
            m = mlvm.compile(src)
            info = np.iinfo(dt)
            for _ in range(3):
                x = g.integers(info.min, info.max + 1, (16, d)).astype(dt)
                np.testing.assert_array_equal(m.main(x), sess.run(None, {"x": x})[0], err_msg=f"{d} {xs} {ys}")


def concat_model(path: Path) -> Path:
    """Two convolutions of one input concatenated with the first again
    (Inception's and DenseNet's joins): inputs of differing scales."""
    g = np.random.default_rng(11)
    inits = [numpy_helper.from_array((g.standard_normal(s) * k).astype(np.float32), name)
             for name, s, k in (("w1", (4, 3, 3, 3), 0.3), ("w2", (5, 3, 1, 1), 1.5))]
    n = helper.make_node
    nodes = [n("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]), n("Conv", ["x", "w2"], ["b"]),
             n("Concat", ["a", "b", "a"], ["y"], axis=1)]
    return _save(path, "cat", nodes, inits, [1, 3, 6, 7])


def test_qdq_concat_in_bytes_as_onnxruntime(tmp_path: Path) -> None:
    """A QDQ Concat joins the bytes (each input requantized to the output's
    parameters by the float form's steps), bit for bit onnxruntime's."""
    out, module = _quantized(concat_model(tmp_path / "f32.onnx"), (1, 3, 6, 7))
    concats = [op for op in module.walk() if op.name == "mlvm.concat"]
    assert len(concats) == 1 and all(str(v.type).endswith("xui8>") for v in concats[0].operands)
    _assert_as_onnxruntime(out, (1, 3, 6, 7), np.random.default_rng(12))


def test_qdq_softmax_over_channels_as_onnxruntime(tmp_path: Path) -> None:
    """A QDQ Softmax over axis 1 of a 4-D map (a segmentation head):
    onnxruntime transposes the axis last for its QLinearSoftmax and back,
    and so does mlvm; bit for bit."""
    g = np.random.default_rng(13)
    w = numpy_helper.from_array((g.standard_normal((6, 3, 1, 1)) * 0.8).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Softmax", ["c"], ["y"], axis=1)]
    out, module = _quantized(_save(tmp_path / "f32.onnx", "seg", nodes, [w], [1, 3, 5, 7]), (1, 3, 5, 7))
    assert Counter(op.name for op in module.walk())["mlvm.qsoftmax"] == 1
    _assert_as_onnxruntime(out, (1, 3, 5, 7), g)


# scales and zero points where the operands' two orders round differently
# at some pairs of values, and where onnxruntime's fused constant term
# differs from the one rounded twice (tests/ops/test_quant.py's QADD_TIES)
QADD_TIES = ((False, "0x1.3f88acp-5", "0x1.4f7e16p-3", "0x1.3f88acp-4", 241, 206, 214),
             (False, "0x1.fbfe72p-4", "0x1.7d801cp-3", "0x1.235da6p-3", 223, 101, 82),
             (True, "0x1.79700ap-4", "0x1.00fe88p-3", "0x1.79700ap-3", -118, 115, -114),
             (True, "0x1.e4a9d8p-5", "0x1.e2083cp-6", "0x1.179efcp-4", 82, -45, -74),
             (False, "0x1.99999ap-5", "0x1.99999ap-4", "0x1.99999ap-5", 3, 7, 1))


@pytest.mark.parametrize("layout", ["whole", "a-rows", "b-rows", "b-row", "a-one"])
def test_qadd_is_onnxruntimes_qlinear_add(tmp_path: Path, layout: str) -> None:
    """mlvm.qadd against onnxruntime's own QLinearAdd node: every pair of
    byte values, both operands whole, or one of them one value per row
    (a or b: onnxruntime's scalar runs), a row ([256] over every row) or
    one value; u8 and s8; scales that tell the orders of rounding apart."""
    for signed, *scales, za, zb, zy in QADD_TIES:
        t, dt, e = (TensorProto.INT8, np.int8, "i8") if signed else (TensorProto.UINT8, np.uint8, "ui8")
        values = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1).astype(dt)
        rows, cols = np.repeat(values[:, None], 256, 1), np.repeat(values[None, :], 256, 0)
        a, b = {"whole": (rows, cols), "a-rows": (values[:, None].copy(), cols), "b-rows": (cols, values[:, None].copy()),
                "b-row": (rows, values.copy()), "a-one": (values[77:78].copy(), cols)}[layout]
        sa, sb, sy = (float(np.float32(float.fromhex(v))) for v in scales)
        inits = [numpy_helper.from_array(np.array(v, d), name) for v, d, name in
                 ((sa, np.float32, "sa"), (za, dt, "za"), (sb, np.float32, "sb"), (zb, dt, "zb"), (sy, np.float32, "sy"),
                  (zy, dt, "zy"))]
        node = helper.make_node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"], domain="com.microsoft")
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", t, list(a.shape)),
                                                helper.make_tensor_value_info("b", t, list(b.shape))],
                                  [helper.make_tensor_value_info("y", t, [256, 256])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])

        def ty(v: np.ndarray) -> str:
            return f"tensor<{'x'.join(map(str, v.shape))}x{e}>"

        def const(name: str, v: float | int, elem: str) -> str:
            return f'  %{name} = "mlvm.constant"() <{{value = dense<{v!r}> : tensor<{elem}>}}> : () -> tensor<{elem}>\n'

        src = tmp_path / f"qadd_{layout}_{scales[0]}.mlir"
        src.write_text(
            f"func.func @main(%a: {ty(a)}, %b: {ty(b)}) -> tensor<256x256x{e}> {{\n"
            + const("sa", sa, "f32") + const("za", za, e) + const("sb", sb, "f32") + const("zb", zb, e)
            + const("sy", sy, "f32") + const("zy", zy, e)
            + f'  %y = "mlvm.qadd"(%a, %sa, %za, %b, %sb, %zb, %sy, %zy) : ({ty(a)}, tensor<f32>, tensor<{e}>, {ty(b)}, '
            f"tensor<f32>, tensor<{e}>, tensor<f32>, tensor<{e}>) -> tensor<256x256x{e}>\n"
            f"  func.return %y : tensor<256x256x{e}>\n}}\n")
        np.testing.assert_array_equal(mlvm.compile(src).main(a, b), sess.run(None, {"a": a, "b": b})[0],
                                      err_msg=f"{layout} {scales}")


@pytest.mark.parametrize("case", ["activations", "constant-bias"])
@pytest.mark.parametrize("signed", [False, True], ids=["u8", "s8"])
def test_qdq_add_as_onnxruntime_runs_it(tmp_path: Path, case: str, signed: bool) -> None:
    """A QDQ Add as onnxruntime runs the model: of two activations
    (quantize, dequantize each), every pair of byte values, or of an
    activation and a constant bias of every byte value broadcast over its
    rows; at scales that tell the orders of rounding apart. onnxruntime
    makes a QLinearAdd of u8 tensors; i8 activations it turns into u8 first
    (a quantize read by one dequantize), and a constant i8 operand keeps
    the float Add: bit for bit in each case."""
    n = helper.make_node
    for u8_signed, *scales, za, zb, zy in QADD_TIES:
        if u8_signed:
            continue  # (the u8 sets, their zero points read as bytes of either type)
        dt = np.int8 if signed else np.uint8
        za, zb, zy = (int(np.uint8(v).view(np.int8)) if signed else v for v in (za, zb, zy))
        sa, sb, sy = (np.float32(float.fromhex(v)) for v in scales)
        values = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1)
        inits = [numpy_helper.from_array(np.array(v, d), name) for v, d, name in
                 ((sa, np.float32, "sa"), (za, dt, "za"), (sb, np.float32, "sb"), (zb, dt, "zb"), (sy, np.float32, "sy"),
                  (zy, dt, "zy"))]
        nodes = [n("QuantizeLinear", ["xa", "sa", "za"], ["qa"]), n("DequantizeLinear", ["qa", "sa", "za"], ["da"]),
                 n("Add", ["da", "db"], ["s"]), n("QuantizeLinear", ["s", "sy", "zy"], ["qy"]),
                 n("DequantizeLinear", ["qy", "sy", "zy"], ["y"])]
        xa = ((np.repeat(values[:, None], 256, 1) - za) * sa).astype(np.float32)
        feeds = {"xa": xa}
        ins = [helper.make_tensor_value_info("xa", TensorProto.FLOAT, [256, 256])]
        if case == "activations":
            nodes[1:1] = [n("QuantizeLinear", ["xb", "sb", "zb"], ["qb"]), n("DequantizeLinear", ["qb", "sb", "zb"], ["db"])]
            ins.append(helper.make_tensor_value_info("xb", TensorProto.FLOAT, [256, 256]))
            feeds["xb"] = ((np.repeat(values[None, :], 256, 0) - zb) * sb).astype(np.float32)
        else:
            nodes[1:1] = [n("DequantizeLinear", ["bq", "sb", "zb"], ["db"])]
            inits.append(numpy_helper.from_array(values.astype(dt), "bq"))
        graph = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        path = tmp_path / f"add_{case}_{scales[0]}.onnx"
        onnx.save(model, path)
        want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        np.testing.assert_array_equal(mlvm.compile(path).main(*feeds.values()), want, err_msg=f"{case} {scales}")
