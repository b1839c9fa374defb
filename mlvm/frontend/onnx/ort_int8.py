"""onnxruntime's int8 arithmetic on this host, for comparing with it.

mlvm's integer products are exact sums on every target. onnxruntime's u8 x
s8 kernels on some x86-64 hosts (with AVX2 or AVX-512 but without VNNI)
take vpmaddubsw, which adds each pair of products in 16 bits with
saturation: a pair of 255 x -128 saturates, so its results there are exact
only where the weights are within [-64, 64], as its quantizer's
`reduce_range` makes them (and its documentation advises on such
machines). Tests, samples and benches that compare mlvm with onnxruntime
bit for bit quantize with it there. Which kernel onnxruntime takes depends
on its build and the CPU, so it is asked: one product of two rows."""

from __future__ import annotations

import functools

import numpy as np

#: Magnitude of s8 weights that stays exact whatever onnxruntime's kernel.
REDUCED = 64


def matmul_integer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a (u8) @ b (s8, a constant) by onnxruntime's MatMulInteger."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "b"], ["y"])], "probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, list(a.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)], [numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, {"a": a})[0])


@functools.cache
def onnxruntime_saturates() -> bool:
    """Whether onnxruntime's u8 x s8 products on this host saturate pairs of
    full-range 8-bit products: a MatMulInteger of 255s by -128s run by it."""
    a = np.full((2, 64), 255, np.uint8)
    b = np.full((64, 16), -128, np.int8)
    return not np.array_equal(matmul_integer(a, b), a.astype(np.int32) @ b.astype(np.int32))


def weight_range() -> tuple[int, int]:
    """The s8 weights (least, greatest) that onnxruntime sums exactly here:
    all of them, or [-REDUCED, REDUCED] where it saturates."""
    return (-REDUCED, REDUCED) if onnxruntime_saturates() else (-128, 127)
