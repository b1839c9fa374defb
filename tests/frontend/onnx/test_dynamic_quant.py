"""DynamicQuantizeLinear, and models quantized by onnxruntime's
`quantize_dynamic` (DynamicQuantizeLinear feeding MatMulInteger, then Cast,
Mul by the scales, the bias): the same bits as onnxruntime, from the
range's edges (all zeros: a scale of 1; no negative or no positive value;
huge and tiny magnitudes) to random inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlvm
from mlvm.cli import aot_main

SHAPE = [3, 37]


def _session(path: Path) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _inputs(g: np.random.Generator, shape: list[int], n: int) -> list[np.ndarray]:
    edges = [np.zeros(shape), np.full(shape, 5.0), np.full(shape, -5.0), np.abs(g.standard_normal(shape)),
             -np.abs(g.standard_normal(shape)), np.full(shape, 1e-30), np.full(shape, 3e38),
             np.where(g.random(shape) < 0.5, 1e-20, -7.0)]
    rand = [g.standard_normal(shape) * g.choice([1e-3, 1.0, 1e3]) + g.choice([0.0, 2.0, -2.0]) for _ in range(n)]
    return [np.asarray(x, np.float32) for x in edges + rand]


def test_dynamic_quantize_linear_is_onnxruntimes(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], "dql",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, SHAPE),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("z", TensorProto.UINT8, [])])
    path = tmp_path / "dql.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    sess, f = _session(path), mlvm.compile(path).main
    for x in _inputs(np.random.default_rng(0), SHAPE, 100):
        for want, got in zip(sess.run(None, {"x": x}), f(x), strict=True):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("weights", ["u8", "s8-reduced"])
def test_dynamically_quantized_linear_is_onnxruntimes(tmp_path: Path, weights: str) -> None:
    """A Linear layer through quantize_dynamic: its MatMulInteger on the int8
    convolution kernels (mlvm-qmatmul-conv), the same outputs."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    g = np.random.default_rng(1)
    m, k, n = 24, 67, 29
    w = (g.standard_normal((k, n)) / 8).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])], "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(g.standard_normal(n).astype(np.float32), "b")])
    f32, q = tmp_path / "linear.onnx", tmp_path / "linear.dq.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f32)
    quantize_dynamic(str(f32), str(q), weight_type=QuantType.QUInt8 if weights == "u8" else QuantType.QInt8,
                     reduce_range=weights != "u8")
    ops = {node.op_type for node in onnx.load(q).graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= ops, ops
    c_path = tmp_path / "linear.c"
    assert aot_main(["compile", str(q), "-o", str(c_path)]) == 0
    source = c_path.read_text()
    assert "mlvm_qmatmul_8(" not in source and "mlvm_qconv2d" in source
    sess, mod = _session(q), mlvm.compile(q)
    for x in _inputs(g, [m, k], 20):
        np.testing.assert_array_equal(mod.main(x), sess.run(None, {"x": x})[0])


def test_dynamic_quantize_of_nothing_is_refused(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], "dql",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [0, 4]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("z", TensorProto.UINT8, [])])
    path = tmp_path / "empty.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    with pytest.raises(mlvm.MlvmError, match=r"empty\.onnx.*DynamicQuantizeLinear.*an empty input") as e:
        mlvm.compile(path)
    assert "\n" not in str(e.value).strip()
