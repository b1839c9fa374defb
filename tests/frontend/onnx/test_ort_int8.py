"""mlvm.frontend.onnx.ort_int8 says whether onnxruntime's u8 x s8 products
saturate on this host: checked against onnxruntime itself."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from mlvm.frontend.onnx.ort_int8 import onnxruntime_saturates, weight_bound


def _matmul_integer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a (u8) @ b (s8, a constant) by onnxruntime's MatMulInteger."""
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "b"], ["y"])], "mmi",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, list(a.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)], [numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, {"a": a})[0])


def test_saturation_is_onnxruntimes() -> None:
    a = np.full((4, 64), 255, np.uint8)
    b = np.full((64, 16), -128, np.int8)
    exact = a.astype(np.int32) @ b.astype(np.int32)
    assert np.array_equal(_matmul_integer(a, b), exact) != onnxruntime_saturates()


def test_weights_within_the_bound_are_exact() -> None:
    """Where the weights stay below weight_bound(), onnxruntime's sums are
    exact on this host (the range the tests' and samples' quantizer keeps)."""
    w = weight_bound()
    a = np.full((4, 64), 255, np.uint8)
    for value in (1 - w, w - 1, -w if w < 128 else -128):
        b = np.full((64, 16), value, np.int8)
        np.testing.assert_array_equal(_matmul_integer(a, b), a.astype(np.int32) @ b.astype(np.int32))
