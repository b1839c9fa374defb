"""ONNX import: every converter against onnxruntime, and every error path.

Each case is a one- or few-node ONNX model, with shapes that include unit
dims and odd primes and operands that broadcast. All cases are imported,
gathered into one mlvm module (one function per case) and built once.
Tolerance: rel 1e-5 of the largest output magnitude (plus 1e-6), since
onnxruntime and mlvm may sum in different orders; exact ops are exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
import mlvm
from mlvm.frontend.onnx import import_onnx
from mlvm.frontend.onnx.ort_int8 import weight_range

from .merge import Merged

RNG = np.random.default_rng(7)
# s8 weights of u8 x s8 products: [-64, 64] where onnxruntime's saturate (ort_int8)
W_LO, W_HI = weight_range()


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@dataclass
class Case:
    name: str
    nodes: list[onnx.NodeProto]
    inputs: dict[str, np.ndarray]
    inits: dict[str, np.ndarray] = field(default_factory=dict)
    outputs: tuple[str, ...] = ("y",)
    opset: int = 17
    exact: bool = False
    out_type: int | tuple[int, ...] = TensorProto.FLOAT  # one for all outputs, or one each

    def model(self) -> onnx.ModelProto:
        g = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
             for k, v in self.inputs.items()],
            [helper.make_tensor_value_info(o, t, None) for o, t in zip(
                self.outputs, self.out_type if isinstance(self.out_type, tuple)
                else (self.out_type,) * len(self.outputs), strict=True)],
            [numpy_helper.from_array(v, k) for k, v in self.inits.items()],
        )
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])
        m.ir_version = 8
        return m


def node(op: str, ins: list[str], outs: list[str] | None = None, **attrs: object) -> onnx.NodeProto:
    return helper.make_node(op, ins, outs or ["y"], **attrs)


def branch(name: str, op: str, out: str) -> onnx.GraphProto:
    """A one-node If branch reading the outer graph's x."""
    return helper.make_graph([helper.make_node(op, ["x"], [out])], name, [],
                             [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])


def unary_case(op: str, x: np.ndarray, exact: bool = False, **attrs: object) -> Case:
    return Case(f"{op.lower()}", [node(op, ["x"], **attrs)], {"x": x}, exact=exact)


def i64(*v: int) -> np.ndarray:
    return np.asarray(v, dtype=np.int64)


def ints(dtype: type, *shape: int, lo: int = -50, hi: int = 50) -> np.ndarray:
    return RNG.integers(lo, hi, size=shape).astype(dtype)


def bools(*shape: int) -> np.ndarray:
    return RNG.integers(0, 2, size=shape).astype(bool)


BOOL, I64, F16, F64 = TensorProto.BOOL, TensorProto.INT64, TensorProto.FLOAT16, TensorProto.DOUBLE
BF16_DTYPE = np.dtype(ml_dtypes.bfloat16)


CASES: list[Case] = [
    # elementwise, with broadcasting and unit / odd-prime dims
    Case("add_bcast", [node("Add", ["a", "b"])], {"a": rand(3, 1, 5), "b": rand(7, 1)}, exact=True),
    Case("sub_scalar", [node("Sub", ["a", "b"])], {"a": rand(1, 13)}, {"b": np.float32([2.5])}, exact=True),
    Case("mul", [node("Mul", ["a", "b"])], {"a": rand(2, 3), "b": rand(2, 3)}, exact=True),
    Case("div_bcast", [node("Div", ["a", "b"])], {"a": rand(5, 3), "b": rand(3) + 3}, exact=True),
    Case("max3", [node("Max", ["a", "b", "c"])], {"a": rand(4), "b": rand(4), "c": rand(1)}, exact=True),
    Case("min", [node("Min", ["a", "b"])], {"a": rand(2, 2), "b": rand(2, 1)}, exact=True),
    Case("sum3", [node("Sum", ["a", "b", "c"])], {"a": rand(3), "b": rand(3), "c": rand(3)}),
    Case("mean2", [node("Mean", ["a", "b"])], {"a": rand(3), "b": rand(3)}),
    unary_case("Relu", rand(3, 7), exact=True),
    unary_case("Neg", rand(11), exact=True),
    unary_case("Exp", rand(2, 5)),
    unary_case("Log", np.abs(rand(9)) + 0.1),
    unary_case("Sqrt", np.abs(rand(9))),
    unary_case("Tanh", rand(3, 3)),
    unary_case("Sigmoid", rand(17)),
    unary_case("Abs", rand(6), exact=True),
    unary_case("Reciprocal", rand(5) + 4),
    unary_case("Erf", rand(3, 5)),
    unary_case("Floor", rand(7) * 4, exact=True),
    unary_case("Ceil", rand(7) * 4, exact=True),
    unary_case("Sin", rand(6)),
    unary_case("Cos", rand(6)),
    unary_case("LeakyRelu", rand(8), alpha=0.1),
    unary_case("HardSigmoid", rand(8) * 4),
    unary_case("Identity", rand(2, 2), exact=True),
    Case("gelu", [node("Gelu", ["x"])], {"x": rand(2, 7)}, opset=20),
    Case("clip11", [node("Clip", ["x", "lo", "hi"])], {"x": rand(10) * 3},
         {"lo": np.float32(-1.0), "hi": np.float32(0.5)}, exact=True),
    Case("clip6", [node("Clip", ["x"], min=-0.5, max=2.0)], {"x": rand(10) * 3}, opset=6, exact=True),
    Case("pow2", [node("Pow", ["x", "e"])], {"x": rand(7)}, {"e": np.float32(2.0)}, exact=True),
    Case("dropout", [node("Dropout", ["x"])], {"x": rand(4)}, exact=True),
    # element types other than f32
    Case("add_i64", [node("Add", ["a", "b"])], {"a": ints(np.int64, 3, 1), "b": ints(np.int64, 4)},
         exact=True, out_type=I64),
    Case("div_i64_trunc", [node("Div", ["a", "b"])], {"a": ints(np.int64, 9)},
         {"b": np.asarray([3, -3, 7, -7, 2, -2, 5, 1, -1], np.int64)}, exact=True, out_type=I64),
    Case("mul_f64", [node("Mul", ["a", "b"])], {"a": rand(2, 3).astype(np.float64), "b": rand(3).astype(np.float64)},
         exact=True, out_type=F64),
    Case("equal_i64", [node("Equal", ["a", "b"])], {"a": ints(np.int64, 2, 5, lo=0, hi=3),
         "b": ints(np.int64, 5, lo=0, hi=3)}, exact=True, out_type=BOOL),
    Case("less", [node("Less", ["a", "b"])], {"a": rand(3, 4), "b": rand(4)}, exact=True, out_type=BOOL),
    Case("greater_equal", [node("GreaterOrEqual", ["a", "b"])], {"a": ints(np.int32, 6), "b": ints(np.int32, 6)},
         exact=True, out_type=BOOL),
    Case("where", [node("Where", ["c", "a", "b"])], {"c": bools(2, 1, 3), "a": rand(4, 1), "b": rand(3)},
         exact=True),
    Case("and_not", [node("Not", ["a"], ["n"]), node("And", ["n", "b"])], {"a": bools(7), "b": bools(7)},
         exact=True, out_type=BOOL),
    Case("xor_or", [node("Xor", ["a", "b"], ["t"]), node("Or", ["t", "a"])], {"a": bools(3, 2), "b": bools(2)},
         exact=True, out_type=BOOL),
    Case("mod_i32", [node("Mod", ["a", "b"])], {"a": ints(np.int32, 12)},
         {"b": np.asarray([3, -3, 7, -7] * 3, np.int32)}, exact=True, out_type=TensorProto.INT32),
    Case("fmod_f32", [node("Mod", ["a", "b"], fmod=1)], {"a": rand(8) * 10, "b": rand(8) + 3}, exact=True),
    Case("bitshift_u8", [node("BitShift", ["a", "b"], direction="RIGHT")],
         {"a": ints(np.uint8, 6, lo=0, hi=256), "b": ints(np.uint8, 6, lo=0, hi=8)}, exact=True,
         out_type=TensorProto.UINT8),
    Case("bitwise_and_i16", [node("BitwiseAnd", ["a", "b"])], {"a": ints(np.int16, 5), "b": ints(np.int16, 5)},
         opset=18, exact=True, out_type=TensorProto.INT16),
    Case("cast_f32_f16", [node("Cast", ["x"], to=F16)], {"x": rand(3, 5) * 1000}, exact=True, out_type=F16),
    Case("cast_i64_f32", [node("Cast", ["x"], to=TensorProto.FLOAT)], {"x": ints(np.int64, 7, lo=-(2**40), hi=2**40)},
         exact=True),
    Case("cast_f32_bool", [node("Cast", ["x"], to=BOOL)], {"x": np.float32([0, -0.0, 1, -2, 0.5])},
         exact=True, out_type=BOOL),
    Case("isnan", [node("IsNaN", ["x"])], {"x": np.float32([0, np.nan, np.inf, -1])}, exact=True, out_type=BOOL),
    Case("gather_embedding", [node("Gather", ["w", "i"], axis=0)], {"i": ints(np.int64, 2, 3, lo=-7, hi=7)},
         {"w": rand(7, 4)}, exact=True),
    Case("gather_axis1", [node("Gather", ["x", "i"], axis=1)], {"x": rand(2, 5, 3)}, {"i": i64(4, 0, -2)},
         exact=True),
    Case("pad_reflect", [node("Pad", ["x", "p"], mode="reflect")], {"x": rand(2, 3, 4)},
         {"p": i64(0, 1, 2, 0, 1, 3)}, exact=True),
    Case("pad_constant", [node("Pad", ["x", "p", "v"])], {"x": rand(3, 4)},
         {"p": i64(1, -1, 2, 0), "v": np.float32(2.5)}, exact=True),
    Case("pad_edge_axes", [node("Pad", ["x", "p", "", "ax"], mode="edge")], {"x": rand(2, 3, 4)},
         {"p": i64(2, 1), "ax": i64(-1)}, opset=18, exact=True),
    Case("cumsum_rev_excl", [node("CumSum", ["x", "a"], exclusive=1, reverse=1)],
         {"x": ints(np.int32, 3, 5)}, {"a": i64(1)}, exact=True, out_type=TensorProto.INT32),
    Case("cumsum_f32", [node("CumSum", ["x", "a"])], {"x": rand(4, 6)}, {"a": i64(0)}),
    Case("argmax_keep", [node("ArgMax", ["x"], axis=1)], {"x": rand(3, 5, 2)}, exact=True, out_type=I64),
    Case("argmin_drop", [node("ArgMin", ["x"], axis=-1, keepdims=0)], {"x": ints(np.int32, 4, 6)},
         exact=True, out_type=I64),
    Case("reduce_prod_i64", [node("ReduceProd", ["x"], axes=[0], keepdims=0)], {"x": ints(np.int64, 3, 4, lo=-5, hi=5)},
         opset=13, exact=True, out_type=I64),
    Case("quantize_u8", [node("QuantizeLinear", ["x", "s", "z"])], {"x": rand(3, 5) * 30},
         {"s": np.float32(0.25), "z": np.uint8(128)}, exact=True, out_type=TensorProto.UINT8),
    Case("quantize_i8_per_axis", [node("QuantizeLinear", ["x", "s", "z"], axis=1)], {"x": rand(2, 3, 4) * 10},
         {"s": np.float32([0.1, 0.05, 0.2]), "z": np.int8([0, -3, 7])}, exact=True, out_type=TensorProto.INT8),
    Case("quantize_default_zp", [node("QuantizeLinear", ["x", "s"])], {"x": rand(6) * 5},
         {"s": np.float32(0.03)}, exact=True, out_type=TensorProto.UINT8),
    Case("dequantize_i8_per_axis", [node("DequantizeLinear", ["q", "s", "z"], axis=0)],
         {"q": ints(np.int8, 3, 4, lo=-128, hi=128)}, {"s": np.float32([0.5, 0.01, 3.0]), "z": np.int8([1, 0, -1])},
         exact=True),
    Case("dequantize_i32", [node("DequantizeLinear", ["q", "s"])], {"q": ints(np.int32, 5, lo=-10**6, hi=10**6)},
         {"s": np.float32(0.001)}, exact=True),
    Case("matmul_integer_u8_i8", [node("MatMulInteger", ["a", "b", "za", "zb"])],
         {"a": ints(np.uint8, 2, 4, 33, lo=0, hi=256)}, {"b": ints(np.int8, 33, 7, lo=W_LO, hi=W_HI + 1),
          "za": np.uint8(131), "zb": np.int8([3, -1, 0, 5, 2, 2, -7])}, exact=True, out_type=TensorProto.INT32),
    Case("matmul_integer_no_zp", [node("MatMulInteger", ["a", "b"])], {"a": ints(np.int8, 5, 9, lo=-128, hi=128),
         "b": ints(np.int8, 9, 3, lo=-128, hi=128)}, exact=True, out_type=TensorProto.INT32),
    Case("qlinear_matmul_u8", [node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"])],
         {"a": ints(np.uint8, 6, 40, lo=0, hi=256)},
         {"as": np.float32(0.02), "az": np.uint8(120), "b": ints(np.uint8, 40, 9, lo=0, hi=256),
          "bs": np.float32(0.013), "bz": np.uint8(128), "ys": np.float32(0.9), "yz": np.uint8(100)},
         exact=True, out_type=TensorProto.UINT8),
    Case("qlinear_matmul_i8_per_col", [node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"])],
         {"a": ints(np.int8, 3, 17, lo=-128, hi=128)},
         {"as": np.float32(0.05), "az": np.int8(-3), "b": ints(np.int8, 17, 5, lo=-128, hi=128),
          "bs": np.float32([0.01, 0.02, 0.004, 0.1, 0.03]), "bz": np.int8([0, 0, 0, 0, 0]),
          "ys": np.float32(0.7), "yz": np.int8(-5)},
         exact=True, out_type=TensorProto.INT8),
    Case("conv_integer", [node("ConvInteger", ["x", "w", "zx", "zw"], pads=[1, 1, 1, 1], strides=[2, 1])],
         {"x": ints(np.uint8, 1, 3, 7, 6, lo=0, hi=256)},
         {"w": ints(np.uint8, 4, 3, 3, 3, lo=0, hi=256), "zx": np.uint8(120), "zw": np.uint8(7)},
         exact=True, out_type=TensorProto.INT32),
    Case("qlinear_conv_per_channel",
         [node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], pads=[1, 1, 1, 1])],
         {"x": ints(np.uint8, 2, 3, 6, 5, lo=0, hi=256)},
         {"xs": np.float32(0.02), "xz": np.uint8(128), "w": ints(np.int8, 4, 3, 3, 3, lo=max(W_LO, -127), hi=W_HI + 1),
          "ws": np.float32([0.01, 0.003, 0.02, 0.007]), "wz": np.int8([0, 0, 0, 0]),
          "ys": np.float32(0.05), "yz": np.uint8(110), "b": ints(np.int32, 4, lo=-3000, hi=3000)},
         exact=True, out_type=TensorProto.UINT8),
    Case("qlinear_conv_depthwise_s8",
         [node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], group=3, strides=[2, 2],
               auto_pad="SAME_UPPER")],
         {"x": ints(np.int8, 1, 3, 9, 9, lo=-128, hi=128)},
         {"xs": np.float32(0.1), "xz": np.int8(-4), "w": ints(np.int8, 3, 1, 3, 3, lo=-127, hi=128),
          "ws": np.float32(0.02), "wz": np.int8(0), "ys": np.float32(0.3), "yz": np.int8(3)},
         exact=True, out_type=TensorProto.INT8),
    Case("gather_elements", [node("GatherElements", ["x", "i"], axis=1)], {"x": rand(3, 4)},
         {"i": np.asarray([[0, 3], [-1, 1], [2, 2]], np.int64)}, exact=True),
    Case("one_hot", [node("OneHot", ["i", "d", "v"], axis=1)], {"i": ints(np.int64, 2, 3, lo=-5, hi=5)},
         {"d": np.int64(5), "v": np.float32([0.5, 2.0])}, exact=True),
    Case("topk", [node("TopK", ["x", "k"], ["y", "i"], axis=1)], {"x": ints(np.int32, 3, 10, lo=0, hi=4).astype(np.float32)},
         {"k": i64(4)}, outputs=("y", "i"), exact=True, out_type=(TensorProto.FLOAT, I64)),
    Case("scatter_elements_add", [node("ScatterElements", ["x", "i", "u"], axis=1, reduction="add")],
         {"x": rand(3, 4), "u": rand(3, 2)}, {"i": np.asarray([[0, 3], [-1, 1], [2, 2]], np.int64)}, opset=18,
         exact=True),
    Case("reduce_min_native", [node("ReduceMin", ["x"], axes=[1])], {"x": rand(3, 5)}, opset=13, exact=True),
    # matmul and gemm
    Case("matmul_2d", [node("MatMul", ["a", "b"])], {"a": rand(3, 5), "b": rand(5, 7)}),
    Case("matmul_nd_2d", [node("MatMul", ["a", "w"])], {"a": rand(2, 3, 5)}, {"w": rand(5, 4)}),
    Case("matmul_batch_bcast", [node("MatMul", ["a", "b"])], {"a": rand(2, 1, 3, 5), "b": rand(3, 5, 2)}),
    Case("matmul_vec_mat", [node("MatMul", ["a", "b"])], {"a": rand(5), "b": rand(5, 3)}),
    Case("matmul_mat_vec", [node("MatMul", ["a", "b"])], {"a": rand(2, 4, 5), "b": rand(5)}),
    Case("gemm_transb", [node("Gemm", ["a", "w", "c"], transB=1)], {"a": rand(1, 13)},
         {"w": rand(7, 13), "c": rand(7)}),
    Case("gemm_alpha_beta", [node("Gemm", ["a", "w", "c"], transA=1, alpha=0.5, beta=2.0)],
         {"a": rand(5, 3)}, {"w": rand(5, 4), "c": rand(3, 1)}),
    # shapes
    Case("reshape", [node("Reshape", ["x", "s"])], {"x": rand(2, 3, 4)}, {"s": i64(0, -1)}, exact=True),
    Case("flatten", [node("Flatten", ["x"], axis=2)], {"x": rand(2, 3, 4, 1)}, exact=True),
    Case("squeeze", [node("Squeeze", ["x", "ax"])], {"x": rand(1, 3, 1)}, {"ax": i64(0, -1)}, exact=True),
    Case("unsqueeze", [node("Unsqueeze", ["x", "ax"])], {"x": rand(3, 2)}, {"ax": i64(0, 3)}, exact=True),
    Case("unsqueeze11", [node("Unsqueeze", ["x"], axes=[1])], {"x": rand(3)}, opset=11, exact=True),
    Case("transpose", [node("Transpose", ["x"], perm=[2, 0, 1])], {"x": rand(2, 3, 5)}, exact=True),
    Case("transpose_default", [node("Transpose", ["x"])], {"x": rand(2, 3)}, exact=True),
    Case("expand", [node("Expand", ["x", "s"])], {"x": rand(3, 1)}, {"s": i64(2, 1, 4)}, exact=True),
    Case("concat", [node("Concat", ["a", "b"], axis=-1)], {"a": rand(2, 3), "b": rand(2, 5)}, exact=True),
    Case("slice", [node("Slice", ["x", "st", "en", "ax", "sp"])], {"x": rand(7, 11)},
         {"st": i64(1, -2), "en": i64(6, 0), "ax": i64(0, 1), "sp": i64(2, -3)}, exact=True),
    Case("slice9", [node("Slice", ["x"], starts=[1], ends=[100], axes=[1])], {"x": rand(3, 5)},
         opset=9, exact=True),
    Case("split", [node("Split", ["x", "sp"], ["y", "z"], axis=1)], {"x": rand(2, 5)},
         {"sp": i64(2, 3)}, outputs=("y", "z"), exact=True),
    Case("shape_arith",  # Shape -> Gather -> Concat -> Reshape, all folded at import
         [node("Shape", ["x"], ["s"]), node("Gather", ["s", "i"], ["d"], axis=0),
          node("Concat", ["d", "m1"], ["t"], axis=0), node("Reshape", ["x", "t"])],
         {"x": rand(3, 2, 2)}, {"i": i64(0), "m1": i64(-1)}, exact=True),
    Case("constant_of_shape",
         [node("ConstantOfShape", ["s"], ["c"], value=numpy_helper.from_array(np.float32([1.5]))),
          node("Add", ["x", "c"])], {"x": rand(2, 3)}, {"s": i64(2, 3)}, exact=True),
    # reductions and normalisation
    Case("reduce_mean", [node("ReduceMean", ["x"], axes=[1], keepdims=0)], {"x": rand(3, 5, 2)}, opset=13),
    Case("reduce_sum", [node("ReduceSum", ["x", "ax"])], {"x": rand(3, 5)}, {"ax": i64(-1)}),
    Case("reduce_max_all", [node("ReduceMax", ["x"], keepdims=0)], {"x": rand(3, 5)}, exact=True),
    Case("reduce_min", [node("ReduceMin", ["x", "ax"])], {"x": rand(4, 3)}, {"ax": i64(0)},
         opset=18, exact=True),
    Case("softmax", [node("Softmax", ["x"])], {"x": rand(3, 7)}),
    Case("softmax_opset11", [node("Softmax", ["x"], axis=1)], {"x": rand(2, 3, 4)}, opset=11),
    Case("log_softmax", [node("LogSoftmax", ["x"], axis=0)], {"x": rand(5, 2)}),
    # logits far apart: log(softmax) would give -inf where the softmax underflows
    Case("log_softmax_wide", [node("LogSoftmax", ["x"])],
         {"x": np.float32([[0.0, -150.0, 3.0, -300.0, 80.0], [-1e3, 1e3, 0.5, -20.0, 7.0]])}),
    Case("log_softmax_opset11", [node("LogSoftmax", ["x"], axis=1)], {"x": rand(2, 3, 4)}, opset=11),
    Case("layer_norm", [node("LayerNormalization", ["x", "g", "b"], axis=-1, epsilon=1e-3)],
         {"x": rand(2, 3, 8)}, {"g": rand(8), "b": rand(8)}),
    Case("batch_norm", [node("BatchNormalization", ["x", "s", "b", "m", "v"])], {"x": rand(2, 3, 5, 5)},
         {"s": rand(3), "b": rand(3), "m": rand(3), "v": np.abs(rand(3)) + 0.5}),
    # the scale and variance computed at run time (a quantized model's dequantized scale)
    Case("batch_norm_run_time", [node("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=1e-3)],
         {"x": rand(2, 3, 5, 5), "s": rand(3), "v": np.abs(rand(3)) + 0.5}, {"b": rand(3), "m": rand(3)}),
    # convolution and pooling
    Case("conv_bn_relu",
         [node("Conv", ["x", "w", "c"], ["t"], pads=[1, 0, 2, 1], strides=[2, 1]),
          node("BatchNormalization", ["t", "s", "b", "m", "v"], ["u"]), node("Relu", ["u"])],
         {"x": rand(1, 3, 7, 5)},
         {"w": rand(4, 3, 3, 3), "c": rand(4), "s": rand(4), "b": rand(4), "m": rand(4),
          "v": np.abs(rand(4)) + 0.5}),
    Case("conv_same_group", [node("Conv", ["x", "w"], auto_pad="SAME_LOWER", group=2, strides=[2, 2])],
         {"x": rand(2, 4, 6, 7)}, {"w": rand(6, 2, 2, 3)}),
    Case("conv_same_upper", [node("Conv", ["x", "w"], auto_pad="SAME_UPPER")],
         {"x": rand(1, 2, 5, 4)}, {"w": rand(3, 2, 2, 2)}),
    Case("conv_dilated", [node("Conv", ["x", "w"], dilations=[2, 1], pads=[2, 0, 1, 1])],
         {"x": rand(1, 2, 7, 5)}, {"w": rand(2, 2, 3, 2)}),
    Case("conv_depthwise", [node("Conv", ["x", "w", "c"], group=3, pads=[1, 1, 1, 1])],
         {"x": rand(1, 3, 5, 5)}, {"w": rand(3, 1, 3, 3), "c": rand(3)}),
    Case("conv1d", [node("Conv", ["x", "w"], pads=[1, 1], strides=[2])], {"x": rand(2, 3, 11)},
         {"w": rand(5, 3, 3)}),
    Case("maxpool", [node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
         {"x": rand(1, 2, 7, 7)}, exact=True),
    Case("maxpool_ceil", [node("MaxPool", ["x"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
         {"x": rand(1, 2, 5, 7)}, exact=True),
    Case("avgpool", [node("AveragePool", ["x"], kernel_shape=[2, 3], pads=[1, 1, 0, 1])],
         {"x": rand(2, 1, 5, 6)}),
    Case("global_avg", [node("GlobalAveragePool", ["x"])], {"x": rand(2, 3, 4, 5)}),
    Case("global_avg_1d", [node("GlobalAveragePool", ["x"])], {"x": rand(2, 3, 7)}),
    Case("global_avg_3d", [node("GlobalAveragePool", ["x"])], {"x": rand(1, 2, 3, 4, 2)}),
    Case("global_max", [node("GlobalMaxPool", ["x"])], {"x": rand(1, 3, 3, 2)}, exact=True),
    Case("prelu_channels", [node("PRelu", ["x", "a"])], {"x": rand(2, 3, 5, 1)},
         {"a": rand(3, 1, 1)}, exact=True),
    Case("prelu_scalar_i32", [node("PRelu", ["x", "a"])], {"x": ints(np.int32, 7)},
         {"a": np.asarray([3], np.int32)}, out_type=TensorProto.INT32, exact=True),
    Case("reduce_sum_square", [node("ReduceSumSquare", ["x"], axes=[0, 2], keepdims=0)],
         {"x": rand(3, 5, 2)}, opset=13),
    Case("reduce_l1", [node("ReduceL1", ["x", "ax"])], {"x": rand(3, 5, 2)}, {"ax": i64(-1)},
         opset=18),
    Case("reduce_l2", [node("ReduceL2", ["x"], keepdims=0)], {"x": rand(7, 1, 3)}, opset=13),
    Case("reduce_log_sum", [node("ReduceLogSum", ["x"], axes=[1])],
         {"x": np.abs(rand(2, 5)) + 0.1}, opset=13),
    Case("reduce_log_sum_exp", [node("ReduceLogSumExp", ["x"], axes=[1], keepdims=0)],
         {"x": rand(3, 4) * 40}, opset=13),
    Case("trilu_upper_k", [node("Trilu", ["x", "k"])], {"x": rand(2, 4, 5)}, {"k": i64(1)},
         opset=14, exact=True),
    Case("trilu_lower", [node("Trilu", ["x"], upper=0)], {"x": ints(np.int64, 5, 3)},
         opset=14, out_type=TensorProto.INT64, exact=True),
    Case("conv_transpose", [node("ConvTranspose", ["x", "w", "b"])], {"x": rand(2, 2, 3, 1)},
         {"w": rand(2, 3, 3, 3), "b": rand(3)}),
    Case("conv_transpose_stride_pads_outpad", [node(
        "ConvTranspose", ["x", "w"], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])],
         {"x": rand(1, 4, 5, 4)}, {"w": rand(4, 3, 3, 3)}),
    Case("conv_transpose_groups_dilated", [node(
        "ConvTranspose", ["x", "w", "b"], strides=[3, 2], dilations=[2, 1], group=2,
        pads=[2, 0, 1, 3])], {"x": rand(1, 4, 5, 7)}, {"w": rand(4, 2, 3, 2), "b": rand(4)}),
    Case("conv_transpose_depthwise_same", [node(
        "ConvTranspose", ["x", "w"], strides=[2, 2], auto_pad="SAME_LOWER", group=3)],
         {"x": rand(1, 3, 5, 4)}, {"w": rand(3, 1, 4, 4)}),
    Case("conv_transpose_output_shape", [node(
        "ConvTranspose", ["x", "w"], strides=[2, 2], output_shape=[10, 8])],
         {"x": rand(1, 2, 5, 4)}, {"w": rand(2, 3, 3, 3)}),
    Case("conv_transpose_1d", [node("ConvTranspose", ["x", "w"], strides=[2], pads=[1, 2])],
         {"x": rand(2, 3, 7)}, {"w": rand(3, 2, 4)}),
    Case("nll_loss_weight_ignore", [node("NegativeLogLikelihoodLoss", ["x", "t", "w"],
                                         ignore_index=2)],
         {"x": rand(3, 5, 2), "t": ints(np.int64, 3, 2, lo=0, hi=5)}, {"w": np.abs(rand(5))},
         opset=13),
    Case("nll_loss_sum_i32", [node("NegativeLogLikelihoodLoss", ["x", "t"], reduction="sum")],
         {"x": rand(4, 3), "t": ints(np.int32, 4, lo=0, hi=3)}, opset=13),
    Case("softmax_xent_none_log_prob", [node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"],
                                             reduction="none")],
         {"x": rand(2, 4, 3) * 20, "t": ints(np.int64, 2, 3, lo=0, hi=4)}, outputs=("y", "lp"),
         opset=13),
    Case("layer_norm_moments", [node("LayerNormalization", ["x", "g", "b"], ["y", "m", "r"],
                                     axis=1)],
         {"x": rand(2, 3, 4)}, {"g": rand(3, 4), "b": rand(3, 4)}, outputs=("y", "m", "r")),
    Case("rms_norm", [node("RMSNormalization", ["x", "g"], axis=-2, epsilon=1e-3)],
         {"x": rand(2, 3, 4)}, {"g": rand(3, 4)}, opset=23),
    Case("pow_cube", [node("Pow", ["x", "e"])], {"x": rand(3, 4)}, {"e": np.asarray(3.0, np.float32)}),
    Case("pow_tensor_exponent", [node("Pow", ["x", "e"])], {"x": np.abs(rand(2, 3)) + 0.5,
                                                          "e": rand(3)}),
    Case("pow_int_exponent", [node("Pow", ["x", "e"])], {"x": rand(4)},
         {"e": np.asarray([1, 2, 3, -2], np.int64)}),
    Case("elu", [node("Elu", ["x"], alpha=0.7)], {"x": rand(3, 4)}),
    Case("selu", [node("Selu", ["x"])], {"x": rand(5)}),
    Case("celu", [node("Celu", ["x"], alpha=2.0)], {"x": rand(2, 3)}, opset=12),
    Case("softplus_large", [node("Softplus", ["x"])], {"x": rand(7) * 30}),
    Case("softsign", [node("Softsign", ["x"])], {"x": rand(7)}),
    Case("hard_swish", [node("HardSwish", ["x"])], {"x": rand(11) * 4}, opset=14),
    Case("thresholded_relu", [node("ThresholdedRelu", ["x"], alpha=0.3)], {"x": rand(9)}, exact=True),
    Case("shrink", [node("Shrink", ["x"], bias=0.2, lambd=0.4)], {"x": rand(13)}),
    Case("round_ties_even", [node("Round", ["x"])],
         {"x": np.asarray([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, 1e9, np.inf, 3e-5], np.float32)},
         exact=True),
    Case("sign_nan", [node("Sign", ["x"])], {"x": np.asarray([-2, 0, 3, np.nan], np.float32)},
         exact=True),
    Case("sign_i32", [node("Sign", ["x"])], {"x": ints(np.int32, 6)}, out_type=TensorProto.INT32,
         exact=True),
    Case("is_inf_negative", [node("IsInf", ["x"], detect_positive=0)],
         {"x": np.asarray([np.inf, -np.inf, 1.0, np.nan], np.float32)}, out_type=TensorProto.BOOL,
         exact=True),
    Case("tan_sinh_cosh", [node("Tan", ["x"], ["a"]), node("Sinh", ["a"], ["b"]),
                           node("Cosh", ["b"])], {"x": rand(6) * 0.5}),
    Case("instance_norm", [node("InstanceNormalization", ["x", "g", "b"], epsilon=1e-3)],
         {"x": rand(2, 3, 5, 4)}, {"g": rand(3), "b": rand(3)}),
    Case("lp_norm_l1", [node("LpNormalization", ["x"], axis=0, p=1)], {"x": rand(4, 3)}),
    Case("hardmax", [node("Hardmax", ["x"], axis=1)], {"x": rand(2, 5, 3)}, exact=True),
    Case("tile", [node("Tile", ["x", "r"])], {"x": rand(2, 3)}, {"r": i64(3, 1)}, exact=True),
    Case("eye_like", [node("EyeLike", ["x"], k=1)], {"x": rand(3, 4)}, exact=True),
    Case("space_to_depth", [node("SpaceToDepth", ["x"], blocksize=2)], {"x": rand(1, 3, 4, 6)},
         exact=True),
    Case("depth_to_space_crd", [node("DepthToSpace", ["x"], blocksize=2, mode="CRD")],
         {"x": rand(2, 8, 3, 2)}, exact=True),
    Case("dropout_mask", [node("Dropout", ["x"], ["y", "m"])], {"x": rand(3)}, outputs=("y", "m"),
         out_type=(TensorProto.FLOAT, TensorProto.BOOL), exact=True),
    # ops ONNX defines as functions of others, expanded at import
    Case("mish_function", [node("Mish", ["x"])], {"x": rand(3, 5)}, opset=18),
    Case("attention_causal_function", [node("Attention", ["q", "k", "v"], is_causal=1)],
         {"q": rand(1, 2, 4, 8), "k": rand(1, 2, 6, 8), "v": rand(1, 2, 6, 5)}, opset=23),
    Case("argmax_last_of_ties", [node("ArgMax", ["x"], axis=1, select_last_index=1)],
         {"x": ints(np.int32, 3, 6, lo=0, hi=3)}, out_type=TensorProto.INT64, exact=True),
    Case("argmin_last_keepdims0", [node("ArgMin", ["x"], axis=0, keepdims=0, select_last_index=1)],
         {"x": np.round(rand(5, 4))}, out_type=TensorProto.INT64, exact=True),
    Case("matmul_i32_batched", [node("MatMul", ["a", "b"])],
         {"a": ints(np.int32, 2, 3, 4), "b": ints(np.int32, 4, 5)}, out_type=TensorProto.INT32,
         exact=True),
    Case("matmul_i64_vector", [node("MatMul", ["a", "b"])],
         {"a": ints(np.int64, 4), "b": ints(np.int64, 3, 4, 2)}, out_type=TensorProto.INT64,
         exact=True),
    Case("matmul_f16", [node("MatMul", ["a", "b"])],
         {"a": rand(3, 8).astype(np.float16), "b": rand(8, 2).astype(np.float16)},
         out_type=TensorProto.FLOAT16),
    Case("softmax_f64", [node("Softmax", ["x"], axis=0)], {"x": rand(4, 3).astype(np.float64)},
         out_type=TensorProto.DOUBLE),
    Case("avgpool_count_include_pad", [node("AveragePool", ["x"], kernel_shape=[3, 2],
                                            pads=[1, 0, 2, 1], count_include_pad=1)],
         {"x": rand(2, 3, 5, 4)}),
    Case("einsum_attention_scores", [node("Einsum", ["q", "k"], equation="bhqd,bhkd->bhqk")],
         {"q": rand(2, 3, 4, 5), "k": rand(2, 3, 6, 5)}, opset=12),
    Case("einsum_implicit_chain", [node("Einsum", ["a", "b", "c"], equation="ij,jk,kl")],
         {"a": rand(3, 4), "b": rand(4, 5), "c": rand(5, 2)}, opset=12),
    Case("einsum_ellipsis_outer", [node("Einsum", ["a", "b"], equation="...i,...j->...ij")],
         {"a": rand(2, 3), "b": rand(2, 4)}, opset=12),
    Case("einsum_diag_trace", [node("Einsum", ["a"], equation="bii->b")], {"a": rand(3, 4, 4)},
         opset=12),
    Case("einsum_sum_transpose", [node("Einsum", ["a"], equation="ijk->ki")], {"a": rand(2, 3, 4)},
         opset=12),
    Case("if_known_condition", [node("If", ["c"], then_branch=branch("t", "Neg", "a"),
                                     else_branch=branch("e", "Abs", "b"))],
         {"x": rand(2, 3)}, {"c": np.asarray(False)}, exact=True),
    Case("lp_pool_p3_padded", [node("LpPool", ["x"], kernel_shape=[3, 2], pads=[1, 0, 1, 1], p=3)],
         {"x": rand(2, 3, 5, 4)}),
    Case("lp_pool_1d", [node("LpPool", ["x"], kernel_shape=[3], strides=[2])], {"x": rand(1, 2, 9)}),
    Case("compress_axis", [node("Compress", ["x", "c"], axis=1)], {"x": rand(2, 5, 3)},
         {"c": np.asarray([1, 0, 1, 1], bool)}, exact=True),
    Case("compress_flat", [node("Compress", ["x", "c"])], {"x": rand(2, 3)},
         {"c": np.asarray([0, 1, 0, 0, 1], bool)}, exact=True),
    Case("conv_f16", [node("Conv", ["x", "w"], pads=[1, 1, 1, 1])],
         {"x": rand(1, 2, 5, 5).astype(np.float16)}, {"w": rand(3, 2, 3, 3).astype(np.float16)},
         out_type=TensorProto.FLOAT16),
    Case("pad_minus_inf", [node("Pad", ["x", "p", "v"])], {"x": rand(2, 3)},
         {"p": i64(1, 0, 0, 2), "v": np.asarray(-np.inf, np.float32)}, exact=True),
    # pools by slices: 3-D, dilations, other types, ceil mode with counted pads
    Case("maxpool_3d", [node("MaxPool", ["x"], kernel_shape=[2, 3, 2], strides=[1, 2, 2],
                             pads=[1, 0, 1, 0, 1, 1])], {"x": rand(2, 3, 5, 7, 4)}, exact=True),
    Case("maxpool_3d_ceil_dilated", [node("MaxPool", ["x"], kernel_shape=[3, 2, 2], strides=[2, 3, 1],
                                          dilations=[1, 2, 2], ceil_mode=1)],
         {"x": rand(1, 2, 7, 11, 5)}, exact=True),
    Case("maxpool_2d_dilated", [node("MaxPool", ["x"], kernel_shape=[3, 3], dilations=[2, 3],
                                     pads=[2, 2, 2, 1])], {"x": rand(1, 3, 7, 13)}, exact=True),
    Case("maxpool_1d_dilated", [node("MaxPool", ["x"], kernel_shape=[3], dilations=[2], strides=[2],
                                     pads=[2, 1])], {"x": rand(2, 1, 13)}, exact=True),
    Case("maxpool_u8", [node("MaxPool", ["x"], kernel_shape=[2, 3], pads=[1, 1, 0, 1])],
         {"x": RNG.integers(0, 256, (1, 2, 5, 7)).astype(np.uint8)}, exact=True, out_type=TensorProto.UINT8),
    Case("maxpool_i8_padded", [node("MaxPool", ["x"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
         {"x": RNG.integers(-128, -100, (1, 1, 3, 5)).astype(np.int8)}, exact=True, out_type=TensorProto.INT8),
    Case("maxpool_u8_ceil_strided", [node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
         {"x": RNG.integers(0, 256, (1, 3, 10, 33)).astype(np.uint8)}, exact=True, out_type=TensorProto.UINT8),
    Case("maxpool_i8_1d", [node("MaxPool", ["x"], kernel_shape=[4], strides=[3], pads=[2, 1])],
         {"x": RNG.integers(-128, 128, (2, 3, 40)).astype(np.int8)}, exact=True, out_type=TensorProto.INT8),
    Case("maxpool_f16_dilated", [node("MaxPool", ["x"], kernel_shape=[2, 2], dilations=[2, 1])],
         {"x": rand(1, 2, 6, 5).astype(np.float16)}, exact=True, out_type=TensorProto.FLOAT16),
    Case("avgpool_3d", [node("AveragePool", ["x"], kernel_shape=[3, 2, 3], strides=[2, 1, 2],
                             pads=[1, 1, 0, 1, 0, 2])], {"x": rand(2, 3, 5, 4, 7)}),
    Case("avgpool_3d_ceil_count_pad", [node("AveragePool", ["x"], kernel_shape=[2, 3, 3], strides=[2, 2, 2],
                                            pads=[1, 1, 1, 0, 1, 1], ceil_mode=1, count_include_pad=1)],
         {"x": rand(1, 2, 6, 7, 5)}),
    Case("avgpool_2d_ceil_count_pad", [node("AveragePool", ["x"], kernel_shape=[3, 3], strides=[2, 2],
                                            pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)],
         {"x": rand(1, 1, 6, 6)}, opset=19),
    Case("avgpool_2d_dilated", [node("AveragePool", ["x"], kernel_shape=[2, 3], dilations=[3, 2],
                                     pads=[1, 2, 0, 1])], {"x": rand(1, 2, 11, 9)}, opset=19),
    Case("avgpool_1d_f16", [node("AveragePool", ["x"], kernel_shape=[3], pads=[1, 1])],
         {"x": rand(2, 3, 7).astype(np.float16)}, out_type=TensorProto.FLOAT16),
    Case("conv_3d", [node("Conv", ["x", "w", "b"], pads=[1, 0, 1, 0, 1, 1])], {"x": rand(2, 3, 5, 4, 6)},
         {"w": rand(4, 3, 3, 2, 3), "b": rand(4)}),
    Case("conv_3d_strided_dilated_groups", [node("Conv", ["x", "w"], strides=[2, 1, 2], dilations=[2, 2, 1],
                                                 group=2, pads=[2, 1, 0, 1, 1, 1])],
         {"x": rand(1, 4, 7, 5, 7)}, {"w": rand(6, 2, 2, 3, 3)}),
    Case("conv_3d_depthwise_same", [node("Conv", ["x", "w"], group=3, auto_pad="SAME_UPPER")],
         {"x": rand(1, 3, 3, 5, 4)}, {"w": rand(3, 1, 3, 3, 3)}),
    Case("conv_3d_f16", [node("Conv", ["x", "w"])], {"x": rand(1, 2, 3, 4, 5).astype(np.float16)},
         {"w": rand(3, 2, 1, 2, 3).astype(np.float16)}, out_type=TensorProto.FLOAT16),
    Case("conv_3d_weights_at_run_time", [node("Conv", ["x", "w"], strides=[1, 2, 1])],
         {"x": rand(1, 2, 4, 5, 3), "w": rand(2, 2, 2, 3, 1)}),
    # GridSample: grids reaching past [-1, 1] (padding), halves (nearest ties)
    *(Case(f"grid_sample_{mode}_{pad}_{align}", [node("GridSample", ["x", "g"], mode=mode, padding_mode=pad,
                                                      align_corners=align)],
           {"x": rand(2, 3, 5, 7), "g": np.concatenate(
               [RNG.uniform(-1.4, 1.4, (2, 4, 5, 2)), np.full((2, 1, 5, 2), 0.5)], axis=1).astype(np.float32)},
           opset=20, exact=mode == "nearest")
      for mode, pad, align in (("linear", "zeros", 0), ("linear", "border", 1), ("linear", "reflection", 0),
                               ("nearest", "zeros", 1), ("nearest", "reflection", 0), ("nearest", "border", 0),
                               ("cubic", "zeros", 0), ("cubic", "reflection", 1))),
    Case("grid_sample_3d_linear", [node("GridSample", ["x", "g"], padding_mode="reflection")],
         {"x": rand(1, 2, 3, 4, 5), "g": RNG.uniform(-1.3, 1.3, (1, 2, 3, 4, 3)).astype(np.float32)}, opset=20),
    Case("grid_sample_1x1_input", [node("GridSample", ["x", "g"], mode="linear", align_corners=1,
                                        padding_mode="reflection")],
         {"x": rand(1, 2, 1, 1), "g": RNG.uniform(-2, 2, (1, 3, 2, 2)).astype(np.float32)}, opset=20),
    # Scan, unrolled: a running sum and product (states), reversed and axis-1 scans
    Case("scan_running_sum", [node("Scan", ["s0", "x"], ["s", "ys"], num_scan_inputs=1, body=helper.make_graph(
        [helper.make_node("Add", ["si", "xi"], ["so"]), helper.make_node("Mul", ["so", "xi"], ["yo"])], "b",
        [helper.make_tensor_value_info("si", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("xi", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("so", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("yo", TensorProto.FLOAT, [3])]))],
         {"s0": rand(3), "x": rand(5, 3)}, outputs=("s", "ys"), opset=16),
    Case("scan_reverse_axes", [node("Scan", ["x", "w"], ["ys"], num_scan_inputs=2, scan_input_axes=[1, 0],
                                    scan_input_directions=[1, 0], scan_output_axes=[1],
                                    scan_output_directions=[1], body=helper.make_graph(
        [helper.make_node("MatMul", ["xi", "wi"], ["yo"])], "b",
        [helper.make_tensor_value_info("xi", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("wi", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("yo", TensorProto.FLOAT, [2, 4])]))],
         {"x": rand(2, 4, 3), "w": rand(4, 3, 4)}, outputs=("ys",), opset=16),
    # Loop, unrolled: a known trip count, a state and a scan output
    Case("loop_trip_count", [node("Loop", ["m", "", "s0"], ["s", "ys"], body=helper.make_graph(
        [helper.make_node("Identity", ["c"], ["co"]), helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["si", "fi"], ["t"]), helper.make_node("Add", ["t", "x"], ["so"]),
         helper.make_node("Identity", ["so"], ["yo"])], "b",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("si", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("co", TensorProto.BOOL, []),
         helper.make_tensor_value_info("so", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("yo", TensorProto.FLOAT, [2, 3])]))],
         {"s0": rand(2, 3), "x": rand(2, 3)}, {"m": np.asarray(4, np.int64)}, outputs=("s", "ys"), opset=16),
    Case("lp_pool_3d", [node("LpPool", ["x"], kernel_shape=[2, 2, 3], strides=[1, 2, 1], p=3)],
         {"x": rand(1, 2, 3, 5, 7)}, opset=18),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[mlvm.Module, dict[str, list[np.ndarray]]]:
    """Every case imported into one module (function `c<k>`), built once; and
    onnxruntime's outputs for each case."""
    tmp = tmp_path_factory.mktemp("onnx")
    merged = Merged()
    want: dict[str, list[np.ndarray]] = {}
    for case in CASES:
        path = tmp / f"{case.name}.onnx"
        onnx.save(case.model(), path)
        merged.add(*import_onnx(path))
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        want[case.name] = sess.run(None, case.inputs)
    return mlvm.compile(merged.module, merged.params), want


@pytest.mark.parametrize("k", range(len(CASES)), ids=[c.name for c in CASES])
def test_converter_matches_onnxruntime(built: tuple[mlvm.Module, dict[str, list[np.ndarray]]], k: int) -> None:
    m, want = built
    case = CASES[k]
    got = m[f"c{k}"](*case.inputs.values())
    got = list(got) if isinstance(got, tuple) else [got]
    for g, w in zip(got, want[case.name], strict=True):
        assert g.shape == w.shape, (case.name, g.shape, w.shape)
        if case.exact:
            np.testing.assert_array_equal(g, w)
        else:
            tol = 1e-5 * float(np.max(np.abs(w), initial=0.0)) + 1e-6
            np.testing.assert_allclose(g, w, rtol=0, atol=tol)


def test_batch_norm_folds_into_conv(tmp_path: Path) -> None:
    k = next(i for i, c in enumerate(CASES) if c.name == "conv_bn_relu")
    path = tmp_path / "m.onnx"
    onnx.save(CASES[k].model(), path)
    module, params = import_onnx(path)
    names = [op.name for op in module.walk()]
    assert names.count("mlvm.conv2d") == 1 and "mlvm.mul" not in names and "mlvm.add" not in names
    assert set(params) == {"w__bn"}


# -- the entry points --------------------------------------------------------------
def save(case: Case, path: Path) -> Path:
    onnx.save(case.model(), path)
    return path


def test_compile_build_import_from_the_cli(tmp_path: Path) -> None:
    from mlvm.cli import aot_main

    case = next(c for c in CASES if c.name == "gemm_transb")
    src = save(case, tmp_path / "lin.onnx")
    want = ort.InferenceSession(str(src)).run(None, case.inputs)[0]
    assert aot_main(["import", str(src), "-o", str(tmp_path / "lin.mlir"),
                     "--params-out", str(tmp_path / "lin.npz")]) == 0
    m1 = mlvm.compile(tmp_path / "lin.mlir", params=tmp_path / "lin.npz")
    assert aot_main(["build", str(src), "-o", str(tmp_path / "lin.so")]) == 0
    m2 = mlvm.load(tmp_path / "lin.so")
    m3 = mlvm.compile(src)
    for m in (m1, m2, m3):
        np.testing.assert_allclose(m.main(*case.inputs.values()), want, rtol=1e-5, atol=1e-6)


def test_input_shapes_fix_symbolic_dims(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mlvm.cli import aot_main

    g = helper.make_graph(
        [node("Relu", ["x"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    src = tmp_path / "sym.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), src)
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "s.c")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"{src}: error: input 'x' has an unknown dim 0 ('N'); give the shape with "
                   "--input-shape x=DxDx... (input_shapes= in Python)")
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "s.c"), "--input-shape", "x=5x3"]) == 0
    m = mlvm.compile(src, input_shapes={"x": (2, 3)})
    x = rand(2, 3)
    np.testing.assert_array_equal(m.main(x), np.maximum(x, 0))


# -- errors ------------------------------------------------------------------------------
def import_error(path: Path) -> str:
    with pytest.raises(mlvm.MlvmError) as info:
        import_onnx(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: error: ") and "\n" not in msg, msg
    return msg


def test_every_unsupported_op_is_listed(tmp_path: Path) -> None:
    nodes = [node("Unique", ["x"], ["a"], name="e1"), node("Unique", ["a"], ["b"], name="e2"),
             node("Relu", ["b"], ["c"]), node("Pow", ["k", "p"], ["d"], name="p1"),
             node("Unique", ["x"], ["e"], name="e3"), node("Add", ["c", "d"], ["f"]),
             node("Add", ["e", "f"])]
    case = Case("bad", nodes, {"x": rand(3), "k": ints(np.int32, 3)}, {"p": np.int32(3)})
    msg = import_error(save(case, tmp_path / "bad.onnx"))
    assert msg.endswith("unsupported ONNX ops: Pow (integer Pow) (1: p1); Unique (2: e1, e3)")
    # e2, the Relu and the Adds read unsupported results: not blamed on their own


def test_range_bounds_of_one_element(tmp_path: Path) -> None:
    """Bounds of shape [1] (exporters write them; onnx's shape inference and
    onnxruntime's loader refuse them as initializers): the range numpy makes."""
    nodes = [node("Range", ["a", "b", "c"], ["r"]), node("Add", ["x", "r"])]
    bounds = {"a": np.asarray([1.5], np.float32), "b": np.asarray([6.0], np.float32),
              "c": np.asarray([1.25], np.float32)}
    m = mlvm.compile(save(Case("r", nodes, {"x": rand(2, 4)}, bounds), tmp_path / "r.onnx"))
    x = rand(2, 4)
    np.testing.assert_array_equal(m.main(x), x + np.arange(1.5, 6.0, 1.25, dtype=np.float32))
    for c, why in ((np.asarray([0.0], np.float32), "delta is 0"),
                   (np.asarray([1e-30], np.float32), "a range of 4.5e+30 elements")):
        msg = import_error(save(Case("r", nodes, {"x": rand(2, 4)}, dict(bounds, c=c)), tmp_path / "r.onnx"))
        assert why in msg and "(Range)" in msg, msg


def test_range_bounds_at_the_edges(tmp_path: Path) -> None:
    """int64 bounds past 2**53 count exactly; an infinite float range the
    wrong way is empty (ONNX: max(ceil((limit - start) / delta), 0))."""
    big = 2**62
    nodes = [node("Range", ["a", "b", "c"], ["y"])]
    case = Case("r", nodes, {}, {"a": np.asarray([big], np.int64), "b": np.asarray([big + 5], np.int64),
                                 "c": np.asarray([1], np.int64)}, out_type=I64)
    module, params = import_onnx(save(case, tmp_path / "r.onnx"))
    assert "tensor<5xi64>" in str(module)
    empty = Case("e", nodes, {}, {"a": np.asarray([0.0], np.float32), "b": np.asarray([np.inf], np.float32),
                                  "c": np.asarray([-1.0], np.float32)})
    assert "tensor<0xf32>" in str(import_onnx(save(empty, tmp_path / "e.onnx"))[0])
    nan = Case("n", nodes, {}, {"a": np.asarray([0.0], np.float32), "b": np.asarray([np.inf], np.float32),
                                "c": np.asarray([1.0], np.float32)})
    assert "has no size" in import_error(save(nan, tmp_path / "n.onnx"))


@pytest.mark.parametrize("op,attrs,x_shape,w_shape,why", [
    ("AveragePool", {"kernel_shape": [1, 1, 1], "pads": [0, 0, 0, 2**40, 2**40, 2**40]}, (1, 1, 1, 1, 1),
     None, "average pool over"),
    ("Conv", {}, (1, 1, 3, 3, 3), (1, 1, 0, 1, 1), "an empty kernel"),
    ("Conv", {"pads": [300, 0, 0, 300, 0, 0]}, (1, 1, 1, 2, 2), (1, 1, 300, 1, 1), "a kernel 300 deep"),
    ("LpPool", {"kernel_shape": [0, 1, 1]}, (1, 1, 3, 3, 3), None, "kernel_shape [0, 1, 1]"),
], ids=["avgpool-huge-pads", "conv3d-empty-kernel", "conv3d-deep-kernel", "lppool-empty-kernel"])
def test_hostile_pool_and_conv_sizes_are_refused_at_once(
        tmp_path: Path, op: str, attrs: dict[str, object], x_shape: tuple[int, ...],
        w_shape: tuple[int, ...] | None, why: str) -> None:
    """Sizes in a model file are checked before anything is built from them."""
    ins = ["x", "w"] if w_shape is not None else ["x"]
    inits = {"w": np.ones(w_shape, np.float32)} if w_shape is not None else {}
    case = Case("h", [node(op, ins, **attrs)], {"x": rand(*x_shape)}, inits, opset=18)
    assert why in import_error(save(case, tmp_path / "h.onnx"))


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools_need_spatial_dims(tmp_path: Path, op: str) -> None:
    """A global pool of a rank-2 tensor (no spatial dims) is refused."""
    msg = import_error(save(Case("g", [node(op, ["x"])], {"x": rand(2, 3)}), tmp_path / "g.onnx"))
    assert f"{op}" in msg and "needs a rank of 3 or more (N, C, spatial dims), not 2" in msg, msg


def test_pools_of_bf16_and_f64(tmp_path: Path) -> None:
    """A bf16 max pool with pads (the pads are -inf), and an f64 average
    pool summed in f64, as onnx's reference computes them."""
    from onnx.reference import ReferenceEvaluator

    x = rand(1, 2, 5, 6)
    pads = {"kernel_shape": [3, 2], "pads": [1, 1, 1, 0]}
    bf16 = Case("b", [node("MaxPool", ["x"], **pads)], {"x": x.astype(BF16_DTYPE)}, opset=22,
                out_type=TensorProto.BFLOAT16)
    got = mlvm.compile(save(bf16, tmp_path / "b.onnx")).main(x.astype(BF16_DTYPE))
    want = ReferenceEvaluator(Case("f", bf16.nodes, {"x": x}).model()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(BF16_DTYPE).astype(np.float32))
    x64 = 1e3 + rand(1, 2, 5, 6).astype(np.float64)
    f64 = Case("d", [node("AveragePool", ["x"], dilations=[2, 1], **pads)], {"x": x64}, opset=19,
               out_type=F64)
    got = mlvm.compile(save(f64, tmp_path / "d.onnx")).main(x64)
    want = ReferenceEvaluator(f64.model()).run(None, {"x": x64})[0]
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_cubic_border_follows_the_definition(tmp_path: Path, align: int) -> None:
    """Cubic sampling with border padding as onnx's reference computes it
    (onnxruntime 1.2x clamps the cubic taps differently and disagrees with
    it by up to 0.3 here)."""
    from onnx.reference import ReferenceEvaluator

    x = rand(2, 3, 5, 7)
    g = RNG.uniform(-1.4, 1.4, (2, 4, 5, 2)).astype(np.float32)
    case = Case("c", [node("GridSample", ["x", "g"], mode="cubic", padding_mode="border", align_corners=align)],
                {"x": x, "g": g}, opset=20)
    got = mlvm.compile(save(case, tmp_path / "c.onnx")).main(x, g)
    want = ReferenceEvaluator(case.model()).run(None, {"x": x, "g": g})[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * float(np.abs(want).max()))


def test_grid_sample_errors_name_the_node(tmp_path: Path) -> None:
    bad_grid = Case("g", [node("GridSample", ["x", "g"], name="gs")],
                    {"x": rand(1, 2, 4, 4), "g": rand(1, 3, 3, 3)}, opset=20)
    assert "node 'gs' (GridSample): grid of shape [1, 3, 3, 3] does not fit X" in import_error(
        save(bad_grid, tmp_path / "g.onnx"))
    bad_mode = Case("m", [node("GridSample", ["x", "g"], name="gs", mode="lanczos")],
                    {"x": rand(1, 2, 4, 4), "g": rand(1, 3, 3, 2)}, opset=20)
    assert "mode 'lanczos'" in import_error(save(bad_mode, tmp_path / "m.onnx"))


def test_scans_unroll_within_a_budget(tmp_path: Path) -> None:
    """A Scan is imported once per iteration; a model cannot ask for more
    than MAX_UNROLLED body nodes that way (checked before unrolling)."""
    from mlvm.frontend.onnx.loops import MAX_UNROLLED

    body = helper.make_graph([helper.make_node("Neg", ["xi"], ["yo"])] * 1, "b",
                             [helper.make_tensor_value_info("xi", TensorProto.FLOAT, [])],
                             [helper.make_tensor_value_info("yo", TensorProto.FLOAT, [])])
    steps = MAX_UNROLLED + 1
    case = Case("s", [node("Scan", ["x"], num_scan_inputs=1, body=body)], {"x": rand(steps)}, opset=16)
    assert f"Scans and Loops unrolled to more than {MAX_UNROLLED} nodes" in import_error(save(case, tmp_path / "s.onnx"))
    bad = Case("b", [node("Scan", ["x", "y"], num_scan_inputs=2, body=body)], {"x": rand(3), "y": rand(4)},
               opset=16)
    assert "(Scan)" in import_error(save(bad, tmp_path / "b.onnx"))


def test_an_unrolled_body_reads_its_initializers_once(tmp_path: Path) -> None:
    """Every iteration of a Scan uses the body's weights: one parameter."""
    w = rand(5, 5)
    body = helper.make_graph([helper.make_node("MatMul", ["xi", "w"], ["yo"])], "b",
                             [helper.make_tensor_value_info("xi", TensorProto.FLOAT, [1, 5])],
                             [helper.make_tensor_value_info("yo", TensorProto.FLOAT, [1, 5])],
                             [numpy_helper.from_array(w, "w")])
    case = Case("s", [node("Scan", ["x"], num_scan_inputs=1, body=body)], {"x": rand(4, 1, 5)}, opset=16)
    path = save(case, tmp_path / "s.onnx")
    _, params = import_onnx(path)
    assert len(params) == 1 and np.array_equal(next(iter(params.values())), w)
    x = rand(4, 1, 5)
    np.testing.assert_allclose(mlvm.compile(path).main(x), x @ w, rtol=1e-5, atol=1e-6)


def test_loops_need_their_condition_at_import(tmp_path: Path) -> None:
    """A Loop whose condition after an iteration depends on data computed at
    run time cannot be unrolled; one that never stops hits the budget."""
    from mlvm.frontend.onnx.loops import MAX_UNROLLED

    def body(cond_from: str) -> onnx.GraphProto:
        return helper.make_graph(
            [helper.make_node("ReduceSum", ["si"], ["r"], keepdims=0),
             helper.make_node("Less", ["r", "lim"], ["data_cond"]),
             helper.make_node("Identity", [cond_from], ["co"]), helper.make_node("Neg", ["si"], ["so"])], "b",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c", TensorProto.BOOL, []),
             helper.make_tensor_value_info("si", TensorProto.FLOAT, [3])],
            [helper.make_tensor_value_info("co", TensorProto.BOOL, []),
             helper.make_tensor_value_info("so", TensorProto.FLOAT, [3])],
            [numpy_helper.from_array(np.asarray(1.0, np.float32), "lim")])

    data = Case("d", [node("Loop", ["", "go", "x"], body=body("data_cond"))], {"x": rand(3)},
                {"go": np.asarray(True)}, opset=16)
    assert "Loop (the Loop condition computed at run time)" in import_error(save(data, tmp_path / "d.onnx"))
    forever = Case("f", [node("Loop", ["", "go", "x"], body=body("c"))], {"x": rand(3)},
                   {"go": np.asarray(True)}, opset=16)
    assert f"unrolled to more than {MAX_UNROLLED} nodes" in import_error(save(forever, tmp_path / "f.onnx"))


def test_a_constant_computed_from_an_input_names_that_input(tmp_path: Path) -> None:
    """Pad's pads computed from a graph input (through Concat and Add): the
    error names the input, which the ONNX backend then compiles in."""
    from mlvm.frontend.onnx import backend
    from mlvm.frontend.onnx.importer import UnsupportedModel

    nodes = [node("Concat", ["p", "z"], ["pz"], axis=0), node("Add", ["pz", "one"], ["pads"]),
             node("Pad", ["x", "pads"])]
    case = Case("p", nodes, {"x": rand(2, 3), "p": np.asarray([0, 1], np.int64)},
                {"z": np.asarray([1, 0], np.int64), "one": np.asarray([1, 1, 1, 1], np.int64)})
    model = case.model()
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 6]))
    with pytest.raises(UnsupportedModel) as e:
        import_onnx(save(case, tmp_path / "p.onnx"))
    assert e.value.runtime_inputs == {"p"} and "Pad pads computed at run time" in str(e.value)
    x = rand(2, 3)
    (got,) = backend.prepare(model).run([x, np.asarray([0, 1], np.int64)])
    np.testing.assert_array_equal(got, np.pad(x, [(1, 2), (2, 1)]))


def test_a_node_no_check_foresaw_is_still_one_line(tmp_path: Path) -> None:
    """Models of the kind a fuzzer makes: a converter's unexpected failure
    becomes one line naming the node, a name that is not UTF-8 text or a
    stride of 2^62 are refused up front."""
    bn = Case("bn", [node("BatchNormalization", ["x", "s", "b", "m", "v"], name="bn1")], {"x": rand(3)},
              {k: np.abs(rand(3)) + 0.5 for k in "sbmv"})
    msg = import_error(save(bn, tmp_path / "bn.onnx"))
    assert "node 'bn1' (BatchNormalization)" in msg, msg
    model = CASES[0].model()
    model.graph.node[0].name = "node_name"
    data = model.SerializeToString().replace(b"node_name", b"node_nam\xff")  # same length, not UTF-8
    (tmp_path / "u.onnx").write_bytes(data)
    assert "is not UTF-8 text" in import_error(tmp_path / "u.onnx")
    conv = Case("c", [node("Conv", ["x", "w"], strides=[1, 2**62])], {"x": rand(1, 3, 4, 5)}, {"w": rand(4, 3, 3, 4)})
    assert "must be 2 numbers in [1, 2^20]" in import_error(save(conv, tmp_path / "c.onnx"))


def test_unknown_op_and_foreign_domain_are_listed(tmp_path: Path) -> None:
    nodes = [helper.make_node("Frobnicate", ["x"], ["a"], name="f"),
             helper.make_node("Relu", ["x"], ["y"], name="r", domain="com.example")]
    case = Case("bad", nodes, {"x": rand(3)}, outputs=("y",))
    msg = import_error(save(case, tmp_path / "bad.onnx"))
    assert "Frobnicate (1: f)" in msg and "Relu (domain 'com.example') (1: r)" in msg


@pytest.mark.parametrize("data", [b"", b"garbage\x00\xff", None], ids=["empty", "garbage", "truncated"])
def test_malformed_file(tmp_path: Path, data: bytes | None) -> None:
    path = tmp_path / "m.onnx"
    if data is None:
        full = CASES[0].model().SerializeToString()
        data = full[: len(full) // 2]
    path.write_bytes(data)
    assert "error:" in import_error(path)


def test_graph_out_of_order_or_cyclic(tmp_path: Path) -> None:
    nodes = [node("Relu", ["b"], ["a"], name="first"), node("Neg", ["a"], ["b"], name="second")]
    msg = import_error(save(Case("cyc", nodes, {"x": rand(2)}, outputs=("a",)), tmp_path / "c.onnx"))
    assert "node 'first' (Relu) reads 'b' before it is computed" in msg


def test_missing_initializer(tmp_path: Path) -> None:
    msg = import_error(save(Case("mi", [node("Add", ["x", "w"])], {"x": rand(2)}), tmp_path / "m.onnx"))
    assert "reads 'w' before it is computed" in msg


def test_shape_mismatch_names_the_node(tmp_path: Path) -> None:
    case = Case("mm", [node("MatMul", ["a", "b"], name="mm1")], {"a": rand(2, 3), "b": rand(4, 5)})
    msg = import_error(save(case, tmp_path / "m.onnx"))
    assert "node 'mm1' (MatMul): inner dims differ" in msg


def test_input_of_a_type_mlvm_lacks_is_refused(tmp_path: Path) -> None:
    case = Case("i", [node("Identity", ["x"])], {"x": np.zeros(3, np.complex64)})
    msg = import_error(save(case, tmp_path / "i.onnx"))
    assert "input 'x' has element type complex64, which mlvm does not have" in msg


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "missing.bin"])
def test_external_data_stays_in_the_model_folder(tmp_path: Path, location: str) -> None:
    (tmp_path / "secret.bin").write_bytes(b"\0" * 64)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    case = Case("ext", [node("Add", ["x", "w"])], {"x": rand(4)}, {"w": rand(4)})
    m = case.model()
    w = m.graph.initializer[0]
    w.ClearField("float_data")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value=location)
    msg = import_error(save_model(m, model_dir / "m.onnx"))
    assert "external data" in msg


def save_model(m: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(m.SerializeToString())
    return path


def test_external_data_is_read_bit_exact(tmp_path: Path) -> None:
    w = rand(40)
    case = Case("ext", [node("Add", ["x", "w"])], {"x": rand(40)}, {"w": w})
    m = case.model()
    onnx.save_model(m, tmp_path / "m.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                    location="w.bin", size_threshold=0)
    _, params = import_onnx(tmp_path / "m.onnx")
    assert params["w"].tobytes() == w.tobytes()


def test_huge_declared_initializer_is_refused_before_allocation(tmp_path: Path) -> None:
    case = Case("big", [node("Add", ["x", "w"])], {"x": rand(4)}, {"w": rand(4)})
    m = case.model()
    w = m.graph.initializer[0]
    del w.dims[:]
    w.dims.extend([1 << 30, 1 << 30])
    msg = import_error(save_model(m, tmp_path / "m.onnx"))
    assert "more than the limit" in msg


def test_hostile_node_names_stay_one_line(tmp_path: Path) -> None:
    nodes = [node("Unique", ["x"], name="evil\nname */ \x00")]
    msg = import_error(save(Case("n", nodes, {"x": rand(2)}), tmp_path / "n.onnx"))
    assert "evil\\nname */ \\x00" in msg

