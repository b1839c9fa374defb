"""mlvm.frontend.onnx.ort_int8: whether onnxruntime's u8 x s8 products
saturate here (its probe is a MatMulInteger), against another of its ops
(QLinearConv), and the weights it then sums exactly."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from mlvm.frontend.onnx.ort_int8 import matmul_integer, onnxruntime_saturates, weight_range


def _conv_exact(value: int) -> bool:
    """Whether QLinearConv (onnxruntime's convolution kernels, not its GEMM)
    of 255s (16 channels, 3x3) by weights `value` gives the exact sums'
    output: the sums scaled to +-100 around the zero point 128."""
    n = 255 * 16 * 9 * abs(value)
    consts: dict[str, np.ndarray] = {
        "xs": np.array(1, np.float32), "xz": np.array(0, np.uint8), "w": np.full((8, 16, 3, 3), value, np.int8),
        "ws": np.array(1, np.float32), "wz": np.array(0, np.int8), "ys": np.array(n / 100, np.float32),
        "yz": np.array(128, np.uint8)}
    graph = helper.make_graph(
        [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"])], "conv",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 16, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = np.asarray(sess.run(None, {"x": np.full((1, 16, 5, 5), 255, np.uint8)})[0])
    return bool(np.all(got == (128 + 100 if value > 0 else 128 - 100)))


def test_probe_agrees_with_conv_integer() -> None:
    assert _conv_exact(-128) != onnxruntime_saturates()


def test_weights_in_the_range_are_exact() -> None:
    """At both ends of weight_range() onnxruntime's sums are exact here
    (the range the tests' and samples' quantizer keeps)."""
    a = np.full((4, 64), 255, np.uint8)
    for value in weight_range():
        b = np.full((64, 16), value, np.int8)
        np.testing.assert_array_equal(matmul_integer(a, b), a.astype(np.int32) @ b.astype(np.int32))
        assert _conv_exact(value), value
