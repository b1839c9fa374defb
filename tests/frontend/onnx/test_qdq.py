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

import mlvm
from mlvm.codegen.lowering import value_shape
from mlvm.dialect.ops import ConstantOp
from mlvm.dialect.quant import QConv2dRequantOp
from mlvm.frontend.onnx.importer import import_onnx
from mlvm.passes.fuse_qdq import FuseQdqPass
from mlvm.pipeline import CompileOptions, load_source, lower

C = 16


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
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


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
                    per_channel=True, activation_type=request.param, weight_type=QuantType.QInt8)
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


def mlp(path: Path, rows: int) -> Path:
    """Gemm transB=1 with a bias (PyTorch's Linear), Relu, MatMul with a
    [K, N] weight plus a bias (a Keras Dense), over `rows` rows."""
    g = np.random.default_rng(3)
    inits = [numpy_helper.from_array((g.standard_normal(s) * 0.2).astype(np.float32), name)
             for name, s in (("w1", (24, 37)), ("b1", (24,)), ("w2", (24, 11)), ("b2", (11,)))]
    n = helper.make_node
    nodes = [n("Gemm", ["x", "w1", "b1"], ["h"], transB=1), n("Relu", ["h"], ["r"]),
             n("MatMul", ["r", "w2"], ["m"]), n("Add", ["m", "b2"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 37])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


@pytest.mark.parametrize("rows", [1, 5])
@pytest.mark.parametrize("act", [QuantType.QUInt8, QuantType.QInt8], ids=["u8", "s8"])
def test_qdq_linear_layers_run_in_integers(tmp_path: Path, rows: int, act: QuantType) -> None:
    """Gemm / MatMul + bias layers become 1x1 int8 convolutions over their
    rows (mlvm-fuse-qdq's FuseQdqLinear), bit for bit onnxruntime's."""
    out = tmp_path / "qdq.onnx"
    quantize_static(str(mlp(tmp_path / "f32.onnx", rows)), str(out), Calibration("x", (rows, 37)),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=act,
                    weight_type=QuantType.QInt8)
    module, _ = import_onnx(out)
    FuseQdqPass().apply(Context(), module)
    ops = Counter(op.name for op in module.walk())
    assert ops["mlvm.qconv2d_requant"] == 2 and ops["mlvm.matmul"] == 0, ops
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    m = mlvm.compile(out)
    g = np.random.default_rng(4)
    for _ in range(10):
        x = (g.standard_normal((rows, 37)) * 1.5).astype(np.float32)
        np.testing.assert_array_equal(m.main(x), sess.run(None, {"x": x})[0])


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
    graph = helper.make_graph(nodes, "pools", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 14])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def test_qdq_mul_and_average_pools_as_onnxruntime(tmp_path: Path) -> None:
    """A QDQ Mul and AveragePool computed as onnxruntime's QLinearMul and
    QLinearAveragePool do, bit for bit. (u8 activations, the quantizer's
    default: with s8 ones onnxruntime 1.32 fuses some of these nodes and
    leaves others in f32, depending on which of their tensors are graph
    outputs, so its results follow no one rule.)"""
    act = QuantType.QUInt8
    out = tmp_path / "qdq.onnx"
    quantize_static(str(scaled_pools(tmp_path / "f32.onnx")), str(out), Calibration("x", (1, 3, 10, 14)),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=act,
                    weight_type=QuantType.QInt8)
    module, _ = import_onnx(out)
    FuseQdqPass().apply(Context(), module)
    ops = Counter(op.name for op in module.walk())
    assert ops["mlvm.qavgpool2d"] == 2 and ops["mlvm.pool2d"] == 0 and ops["mlvm.dequantize"] == 1, ops
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    m = mlvm.compile(out)
    g = np.random.default_rng(6)
    for _ in range(10):
        x = (g.standard_normal((1, 3, 10, 14)) * 1.5).astype(np.float32)
        np.testing.assert_array_equal(m.main(x), sess.run(None, {"x": x})[0])
