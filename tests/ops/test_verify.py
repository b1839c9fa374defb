"""The verifier of every op: invalid programs raise `mlvm.MlvmError` with a
one-line message naming the file, the line of the offending op, the op and
the shapes involved.

Each program puts a valid op on line 2 and the invalid op on line 3, so the
line number must be the offending op's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mlvm  # noqa: E402
from mlvm.diagnostics import parse_module, verify_module  # noqa: E402
from mlvm.pipeline import make_context, parse_file  # noqa: E402
from verify_cases import Bad, check_message  # noqa: E402

T43 = "tensor<4x3xf32>"

CASES = [
    # --- binary elementwise
    Bad("add-no-broadcast", "add", [T43, "tensor<5xf32>"], [T43], words=("tensor<4x3xf32>", "tensor<5xf32>", "broadcast")),
    Bad("sub-mixed-elem", "sub", [T43, "tensor<4x3xi32>"], [T43], words=("tensor<4x3xf32>", "tensor<4x3xi32>")),
    Bad("mul-wrong-result-shape", "mul", [T43, "tensor<3xf32>"], ["tensor<4x4xf32>"], words=("tensor<4x4xf32>", "tensor<4x3xf32>")),
    Bad("div-i1", "div", ["tensor<4x3xi1>", "tensor<4x3xi1>"], ["tensor<4x3xi1>"], words=("tensor<4x3xi1>", "f32")),
    Bad("pow-i32", "pow", ["tensor<4x3xi32>", "tensor<4x3xi32>"], ["tensor<4x3xi32>"], words=("tensor<4x3xi32>", "f32")),
    Bad("max-result-i32", "max", ["tensor<3xf32>", "tensor<3xf32>"], ["tensor<3xi32>"], words=("tensor<3xi32>", "tensor<3xf32>")),
    Bad("min-both-ways", "min", ["tensor<2x3xf32>", "tensor<3x2xf32>"], ["tensor<3x3xf32>"], words=("tensor<2x3xf32>", "tensor<3x2xf32>")),
    Bad("eq-result-i32", "eq", ["tensor<3xi32>", "tensor<3xi32>"], ["tensor<3xi32>"], words=("tensor<3xi32>", "f32 or i1")),
    Bad("cmpl-f80", "cmpl", ["tensor<3xf80>", "tensor<3xf80>"], ["tensor<3xf32>"], words=("tensor<3xf80>", "element type mlvm does not support")),
    Bad("cmpl-result-i32", "cmpl", [T43, T43], ["tensor<4x3xi32>"], words=("tensor<4x3xi32>", "f32 or i1")),
    Bad("add-i1", "add", ["tensor<3xi1>", "tensor<3xi1>"], ["tensor<3xi1>"], words=("tensor<3xi1>", "f16, bf16, f32")),
    Bad("select-cond-f32", "select", [T43, T43, T43], [T43], words=("cond", "i1")),
    Bad("select-mixed", "select", ["tensor<4x3xi1>", T43, "tensor<4x3xi32>"], [T43], words=("same element type",)),
    Bad("select-broadcast", "select", ["tensor<5xi1>", T43, T43], [T43], words=("do not broadcast",)),
    Bad("shl-f32", "shl", [T43, T43], [T43], words=("lhs", "i8, i16")),
    Bad("shr-mixed", "shr", ["tensor<3xi8>", "tensor<3xui8>"], ["tensor<3xi8>"], words=("differ",)),
    Bad("and-f32", "and", [T43, T43], [T43], words=("lhs", "i1")),
    Bad("or-broadcast", "or", ["tensor<3xi1>", "tensor<4xi1>"], ["tensor<4xi1>"], words=("do not broadcast",)),
    Bad("xor-result", "xor", ["tensor<3xi8>", "tensor<3xi8>"], ["tensor<3xi16>"], words=("tensor<3xi16>", "tensor<3xi8>")),
    Bad("mod-i1", "mod", ["tensor<3xi1>", "tensor<3xi1>"], ["tensor<3xi1>"], words=("tensor<3xi1>",)),
    Bad("ne-result-i8", "ne", [T43, T43], ["tensor<4x3xi8>"], words=("f32 or i1",)),
    Bad("lt-mixed", "lt", [T43, "tensor<4x3xf64>"], ["tensor<4x3xi1>"], words=("differ",)),
    Bad("le-broadcast", "le", [T43, "tensor<5xf32>"], ["tensor<4x3xi1>"], words=("do not broadcast",)),
    Bad("gt-shape", "gt", [T43, T43], ["tensor<4x4xi1>"], words=("tensor<4x4xi1>",)),
    Bad("gather-index-f32", "gather", [T43, "tensor<2xf32>"], ["tensor<2x3xf32>"], "axis = 0 : i64", words=("indices", "i32 or i64")),
    Bad("gather-axis", "gather", [T43, "tensor<2xi64>"], ["tensor<2x3xf32>"], "axis = 2 : i64", words=("axis 2",)),
    Bad("gather-shape", "gather", [T43, "tensor<2xi64>"], ["tensor<4x3xf32>"], "axis = 0 : i64", words=("tensor<2x3xf32>",)),
    Bad("pad-count", "pad", [T43], [T43], "pads = array<i64: 1, 1>", words=("pads has 2 entries", "4")),
    Bad("pad-mode", "pad", [T43], ["tensor<6x3xf32>"], 'pads = array<i64: 1, 0, 1, 0>, mode = "wrap"', words=("mode 'wrap'",)),
    Bad("pad-reflect-wide", "pad", [T43], ["tensor<4x9xf32>"], 'pads = array<i64: 0, 3, 0, 3>, mode = "reflect"', words=("smaller than its size 3",)),
    Bad("pad-crop-below-zero", "pad", [T43], ["tensor<0x3xf32>"], "pads = array<i64: -3, 0, -2, 0>", words=("below size 0",)),
    Bad("pad-value-i8", "pad", ["tensor<3xi8>"], ["tensor<5xi8>"], "pads = array<i64: 1, 1>, value = 0.5 : f32", words=("value 0.5 is not an integer but the result is i8",)),
    Bad("cumsum-i1", "cumsum", ["tensor<3xi1>"], ["tensor<3xi1>"], "axis = 0 : i64", words=("tensor<3xi1>",)),
    Bad("cumsum-axis", "cumsum", [T43], [T43], "axis = -3 : i64", words=("axis -3",)),
    Bad("iota-scalar", "iota", [], ["tensor<f32>"], "", words=("no axis",)),
    Bad("iota-int-step", "iota", [], ["tensor<4xi32>"], "step = 0.5 : f32", words=("step 0.5",)),
    Bad("quantize-to-i32", "quantize", [T43, "tensor<f32>", "tensor<i32>"], ["tensor<4x3xi32>"], words=("zero_point", "i8, ui8")),
    Bad("quantize-int-x", "quantize", ["tensor<3xi8>", "tensor<f32>", "tensor<i8>"], ["tensor<3xi8>"], words=("x", "f16")),
    Bad("quantize-scale-f16", "quantize", [T43, "tensor<f16>", "tensor<i8>"], ["tensor<4x3xi8>"], words=("scale", "f32")),
    Bad("quantize-broadcast", "quantize", [T43, "tensor<5xf32>", "tensor<i8>"], ["tensor<4x3xi8>"], words=("do not broadcast",)),
    Bad("dequantize-zp-type", "dequantize", ["tensor<3xi8>", "tensor<f32>", "tensor<ui8>"], ["tensor<3xf32>"], words=("zero_point", "i8")),
    Bad("dequantize-result", "dequantize", ["tensor<3xi8>", "tensor<f32>", "tensor<i8>"], ["tensor<3xf16>"], words=("tensor<3xf16>", "tensor<3xf32>")),
    Bad("requantize-acc-i8", "requantize", ["tensor<3xi8>", "tensor<f32>", "tensor<i8>"], ["tensor<3xi8>"], words=("acc", "i32")),
    Bad("qmatmul-k", "qmatmul", ["tensor<2x3xi8>", "tensor<4x5xi8>", "tensor<i8>", "tensor<i8>"], ["tensor<2x5xi32>"], words=("contraction dims differ",)),
    Bad("qmatmul-rhs-rank", "qmatmul", ["tensor<2x3xi8>", "tensor<2x3x5xi8>", "tensor<i8>", "tensor<i8>"], ["tensor<2x5xi32>"], words=("rank 2",)),
    Bad("qmatmul-zp", "qmatmul", ["tensor<2x3xi8>", "tensor<3x5xi8>", "tensor<2xi8>", "tensor<i8>"], ["tensor<2x5xi32>"], words=("single value",)),
    Bad("qmatmul-f32", "qmatmul", [T43, "tensor<3x5xf32>", "tensor<f32>", "tensor<f32>"], ["tensor<4x5xi32>"], words=("lhs", "i8 or ui8")),
    Bad("qconv2d-f32", "qconv2d", ["tensor<1x2x4x4xf32>", "tensor<3x2x3x3xi8>", "tensor<f32>", "tensor<i8>"], ["tensor<1x3x2x2xi32>"], words=("x", "i8 or ui8")),
    Bad("qconv2d-zw", "qconv2d", ["tensor<1x2x4x4xi8>", "tensor<3x2x3x3xi8>", "tensor<i8>", "tensor<2xi8>"], ["tensor<1x3x2x2xi32>"], words=("w_zero_point", "one per output channel (3)")),
    Bad("qconv2d-channels", "qconv2d", ["tensor<1x2x4x4xi8>", "tensor<3x3x3x3xi8>", "tensor<i8>", "tensor<i8>"], ["tensor<1x3x2x2xi32>"], words=("input channels per group",)),
    Bad("qconv2d_requant-multiplier", "qconv2d_requant", ["tensor<1x2x4x4xui8>", "tensor<3x2x3x3xi8>", "tensor<ui8>", "tensor<i8>", "tensor<2xf32>", "tensor<ui8>"], ["tensor<1x3x2x2xui8>"], words=("multiplier", "one per output channel (3)")),
    Bad("qconv2d_requant-bias", "qconv2d_requant", ["tensor<1x2x4x4xui8>", "tensor<3x2x3x3xi8>", "tensor<ui8>", "tensor<i8>", "tensor<f32>", "tensor<ui8>", "tensor<2xi32>"], ["tensor<1x3x2x2xui8>"], words=("bias", "one value per output channel (3)")),
    Bad("qconv2d_requant-bias-type", "qconv2d_requant", ["tensor<1x2x4x4xui8>", "tensor<3x2x3x3xi8>", "tensor<ui8>", "tensor<i8>", "tensor<f32>", "tensor<ui8>", "tensor<3xf32>"], ["tensor<1x3x2x2xui8>"], words=("bias", "i32")),
    Bad("qconv2d_requant-zy", "qconv2d_requant", ["tensor<1x2x4x4xui8>", "tensor<3x2x3x3xi8>", "tensor<ui8>", "tensor<i8>", "tensor<f32>", "tensor<2xui8>"], ["tensor<1x3x2x2xui8>"], words=("y_zero_point", "single value")),
    Bad("qadd-shapes", "qadd", ["tensor<4x1xui8>", "tensor<f32>", "tensor<ui8>", "tensor<3xui8>", "tensor<f32>", "tensor<ui8>", "tensor<f32>", "tensor<ui8>"], ["tensor<4x3xui8>"], words=("a tensor<4x1xui8>", "b tensor<3xui8>", "one shape", "one run")),
    Bad("qadd-scale", "qadd", ["tensor<4x3xui8>", "tensor<f32>", "tensor<ui8>", "tensor<4x3xi8>", "tensor<3xf32>", "tensor<i8>", "tensor<f32>", "tensor<ui8>"], ["tensor<4x3xui8>"], words=("b_scale", "single value")),
    Bad("qadd-zero-point-type", "qadd", ["tensor<4x3xui8>", "tensor<f32>", "tensor<i8>", "tensor<4x3xui8>", "tensor<f32>", "tensor<ui8>", "tensor<f32>", "tensor<ui8>"], ["tensor<4x3xui8>"], words=("a_zero_point", "ui8")),
    Bad("qavgpool2d-x-type", "qavgpool2d", ["tensor<1x2x4x4xf32>", "tensor<f32>", "tensor<ui8>", "tensor<f32>", "tensor<ui8>"], ["tensor<1x2x2x2xui8>"], 'window = array<i64: 2, 2>, strides = array<i64: 2, 2>', words=("x tensor<1x2x4x4xf32>", "i8 or ui8")),
    Bad("qavgpool2d-scale", "qavgpool2d", ["tensor<1x2x4x4xui8>", "tensor<2xf32>", "tensor<ui8>", "tensor<f32>", "tensor<ui8>"], ["tensor<1x2x2x2xui8>"], 'window = array<i64: 2, 2>, strides = array<i64: 2, 2>', words=("x_scale tensor<2xf32>", "single value")),
    Bad("qavgpool2d-zero-point-type", "qavgpool2d", ["tensor<1x2x4x4xui8>", "tensor<f32>", "tensor<i8>", "tensor<f32>", "tensor<ui8>"], ["tensor<1x2x2x2xui8>"], 'window = array<i64: 2, 2>, strides = array<i64: 2, 2>', words=("x_zero_point", "ui8")),
    Bad("qavgpool2d-result", "qavgpool2d", ["tensor<1x2x4x4xui8>", "tensor<f32>", "tensor<ui8>", "tensor<f32>", "tensor<ui8>"], ["tensor<1x2x3x3xui8>"], 'window = array<i64: 2, 2>, strides = array<i64: 2, 2>', words=("tensor<1x2x3x3xui8>", "tensor<1x2x2x2xui8>")),
    Bad("qavgpool2d-padding", "qavgpool2d", ["tensor<1x2x4x4xui8>", "tensor<f32>", "tensor<ui8>", "tensor<f32>", "tensor<ui8>"], ["tensor<1x2x2x2xui8>"], 'window = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>', words=("padding [2, 0, 0, 0]", "smaller than the window")),
    Bad("qsoftmax-table", "qsoftmax", ["tensor<2x10xui8>", "tensor<255xf32>", "tensor<f32>", "tensor<ui8>"], ["tensor<2x10xui8>"], words=("table tensor<255xf32>", "256 values")),
    Bad("qsoftmax-zero-point", "qsoftmax", ["tensor<2x10xui8>", "tensor<256xf32>", "tensor<f32>", "tensor<3xui8>"], ["tensor<2x10xui8>"], words=("y_zero_point tensor<3xui8>", "single value")),
    Bad("qsoftmax-types", "qsoftmax", ["tensor<2x10xui8>", "tensor<256xf32>", "tensor<f32>", "tensor<i8>"], ["tensor<2x10xui8>"], words=("y_zero_point", "ui8")),
    Bad("qsoftmax-rank0", "qsoftmax", ["tensor<ui8>", "tensor<256xf32>", "tensor<f32>", "tensor<ui8>"], ["tensor<ui8>"], words=("x tensor<ui8>", "rank >= 1")),
    Bad("qadd-result", "qadd", ["tensor<4x3xui8>", "tensor<f32>", "tensor<ui8>", "tensor<4x3xui8>", "tensor<f32>", "tensor<ui8>", "tensor<f32>", "tensor<i8>"], ["tensor<4x3xui8>"], words=("tensor<4x3xui8>", "tensor<4x3xi8>")),
    Bad("qconv2d_requant-result", "qconv2d_requant", ["tensor<1x2x4x4xui8>", "tensor<3x2x3x3xi8>", "tensor<ui8>", "tensor<i8>", "tensor<f32>", "tensor<ui8>"], ["tensor<1x3x2x2xi8>"], words=("tensor<1x3x2x2xi8>", "tensor<1x3x2x2xui8>")),
    Bad("qconv2d-result", "qconv2d", ["tensor<1x2x4x4xi8>", "tensor<3x2x3x3xi8>", "tensor<i8>", "tensor<i8>"], ["tensor<1x3x2x2xf32>"], words=("tensor<1x3x2x2xf32>", "tensor<1x3x2x2xi32>")),
    Bad("gather_elements-rank", "gather_elements", [T43, "tensor<2xi64>"], ["tensor<2xf32>"], "axis = 0 : i64", words=("rank",)),
    Bad("gather_elements-wide", "gather_elements", [T43, "tensor<2x5xi64>"], ["tensor<2x5xf32>"], "axis = 0 : i64", words=("no larger dims",)),
    Bad("one_hot-rank", "one_hot", ["tensor<3xi64>"], ["tensor<3xf32>"], "", words=("one dim more",)),
    Bad("one_hot-on-i8", "one_hot", ["tensor<3xi64>"], ["tensor<3x4xi8>"], "on = 300.0 : f32", words=("on 300",)),
    Bad("topk-k", "topk", [T43], [T43.replace("4x3", "4x5"), "tensor<4x5xi64>"], "axis = 1 : i64", words=("at most 3",)),
    Bad("topk-index-f32", "topk", [T43], ["tensor<4x2xf32>", "tensor<4x2xf32>"], "axis = 1 : i64", words=("indices", "i32 or i64")),
    Bad("scatter_elements-updates", "scatter_elements", [T43, "tensor<2x3xi64>", "tensor<2x2xf32>"], [T43], "axis = 0 : i64", words=("updates", "shape of indices")),
    Bad("scatter_elements-kind", "scatter_elements", [T43, "tensor<2x3xi64>", "tensor<2x3xf32>"], [T43], 'axis = 0 : i64, reduction = "mean"', words=("reduction 'mean'",)),
    Bad("ge-f80", "ge", ["tensor<3xf80>", "tensor<3xf80>"], ["tensor<3xi1>"], words=("element type mlvm does not support",)),
    Bad("not-f32", "not", [T43], [T43], words=("operand", "i1")),
    Bad("exp-i32", "exp", ["tensor<3xi32>"], ["tensor<3xi32>"], words=("tensor<3xi32>", "f16, bf16, f32 or f64")),
    Bad("add-dynamic", "add", ["tensor<?x3xf32>", "tensor<?x3xf32>"], ["tensor<?x3xf32>"], words=("tensor<?x3xf32>", "static")),
    Bad("add-rank-9", "add", ["tensor<1x1x1x1x1x1x1x1x2xf32>"] * 2, ["tensor<1x1x1x1x1x1x1x1x2xf32>"], words=("tensor<1x1x1x1x1x1x1x1x2xf32>", "rank 9")),
    # --- unary elementwise
    Bad("neg-ui8-i8", "neg", ["tensor<4x3xui8>"], ["tensor<4x3xi8>"], words=("tensor<4x3xi8>", "tensor<4x3xui8>")),
    Bad("exp-wrong-shape", "exp", [T43], ["tensor<3x4xf32>"], words=("tensor<3x4xf32>", "tensor<4x3xf32>")),
    Bad("log-result-i32", "log", [T43], ["tensor<4x3xi32>"], words=("tensor<4x3xi32>", "tensor<4x3xf32>")),
    Bad("sqrt-wrong-rank", "sqrt", [T43], ["tensor<12xf32>"], words=("tensor<12xf32>", "tensor<4x3xf32>")),
    Bad("tanh-i32", "tanh", ["tensor<5xi32>"], ["tensor<5xf32>"], words=("tensor<5xi32>", "f32")),
    Bad("sigmoid-scalar-result", "sigmoid", ["tensor<5xf32>"], ["tensor<f32>"], words=("tensor<f32>", "tensor<5xf32>")),
    Bad("relu-i32", "relu", ["tensor<5xi32>"], ["tensor<5xi32>"], words=("tensor<5xi32>", "f32")),
    Bad("rsqrt-eps-f64", "rsqrt", [T43], [T43], "eps = 1.0e-05 : f64", words=("eps", "f32")),
    Bad("erf-i32", "erf", ["tensor<5xi32>"], ["tensor<5xi32>"], words=("tensor<5xi32>", "f32")),
    Bad("abs-wrong-shape", "abs", [T43], ["tensor<4x4xf32>"], words=("tensor<4x4xf32>", "tensor<4x3xf32>")),
    Bad("floor-result-i32", "floor", [T43], ["tensor<4x3xi32>"], words=("tensor<4x3xi32>", "tensor<4x3xf32>")),
    Bad("ceil-wrong-rank", "ceil", [T43], ["tensor<12xf32>"], words=("tensor<12xf32>", "tensor<4x3xf32>")),
    Bad("sin-i32", "sin", ["tensor<2xi32>"], ["tensor<2xf32>"], words=("tensor<2xi32>", "f32")),
    Bad("cos-scalar-result", "cos", ["tensor<5xf32>"], ["tensor<f32>"], words=("tensor<f32>", "tensor<5xf32>")),
    Bad("rsqrt-i32", "rsqrt", ["tensor<2xi32>"], ["tensor<2xi32>"], "eps = 0.0 : f32", words=("tensor<2xi32>", "f32")),
    # --- matmul
    Bad("matmul-contraction", "matmul", [T43, T43], [T43], words=("3 vs 4", "tensor<4x3xf32>")),
    Bad("matmul-contraction-transposed", "matmul", [T43, "tensor<3x5xf32>"], ["tensor<3x5xf32>"], "transpose_lhs = true", words=("4 vs 3", "tensor<4x3xf32>", "tensor<3x5xf32>", "transpose_lhs=true")),
    Bad("matmul-contraction-transposed-rhs", "matmul", [T43, "tensor<5x4xf32>"], ["tensor<4x5xf32>"], "transpose_rhs = true", words=("3 vs 4", "tensor<4x3xf32>", "tensor<5x4xf32>", "transpose_rhs=true")),
    Bad("matmul-rank-1", "matmul", ["tensor<3xf32>", "tensor<3x5xf32>"], ["tensor<5xf32>"], words=("tensor<3xf32>", "tensor<3x5xf32>", "rank")),
    Bad("matmul-rank-2-and-3", "matmul", ["tensor<2x4x3xf32>", "tensor<3x5xf32>"], ["tensor<2x4x5xf32>"], words=("tensor<2x4x3xf32>", "tensor<3x5xf32>", "rank")),
    Bad("matmul-batch", "matmul", ["tensor<2x4x3xf32>", "tensor<3x3x5xf32>"], ["tensor<3x4x5xf32>"], words=("tensor<2x4x3xf32>", "tensor<3x3x5xf32>", "batch")),
    Bad("matmul-result", "matmul", [T43, "tensor<3x5xf32>"], ["tensor<5x4xf32>"], words=("tensor<5x4xf32>", "tensor<4x5xf32>")),
    Bad("matmul-i32", "matmul", ["tensor<4x3xi32>", "tensor<3x5xi32>"], ["tensor<4x5xi32>"], words=("tensor<4x3xi32>", "f32")),
    # --- reduce
    Bad("reduce-kind", "reduce", [T43], ["tensor<4xf32>"], 'kind = "median", axes = array<i64: 1>', words=("median", "sum", "max", "mean", "min", "prod")),
    Bad("reduce-kind-min-empty", "reduce", ["tensor<4x0xf32>"], ["tensor<4xf32>"], 'kind = "min", axes = array<i64: 1>', words=("'min'", "size 0")),
    Bad("reduce-axis-range", "reduce", [T43], ["tensor<4xf32>"], 'kind = "sum", axes = array<i64: 2>', words=("axis 2", "tensor<4x3xf32>")),
    Bad("reduce-negative-axis-range", "reduce", [T43], ["tensor<4xf32>"], 'kind = "max", axes = array<i64: -3>', words=("axis -3", "tensor<4x3xf32>")),
    Bad("reduce-repeated-axis", "reduce", [T43], ["tensor<4xf32>"], 'kind = "sum", axes = array<i64: 1, 1>', words=("axis 1", "repeated")),
    Bad("reduce-repeated-negative-axis", "reduce", [T43], ["tensor<4xf32>"], 'kind = "mean", axes = array<i64: 1, -1>', words=("repeated",)),
    Bad("reduce-keepdims-result", "reduce", [T43], ["tensor<4xf32>"], 'kind = "sum", axes = array<i64: 1>, keepdims = true', words=("tensor<4xf32>", "tensor<4x1xf32>")),
    Bad("reduce-dropped-result", "reduce", [T43], ["tensor<4x1xf32>"], 'kind = "sum", axes = array<i64: 1>', words=("tensor<4x1xf32>", "tensor<4xf32>")),
    Bad("reduce-i1", "reduce", ["tensor<4x3xi1>"], ["tensor<4xi1>"], 'kind = "sum", axes = array<i64: 1>', words=("tensor<4x3xi1>", "f32")),
    Bad("reduce-result-elem", "reduce", ["tensor<4x3xi32>"], ["tensor<4xf32>"], 'kind = "sum", axes = array<i64: 1>', words=("tensor<4xf32>", "tensor<4xi32>")),
    Bad("reduce-axes-i32", "reduce", [T43], ["tensor<4xf32>"], 'kind = "sum", axes = array<i32: 1>'),
    Bad("reduce-missing-kind", "reduce", [T43], ["tensor<4xf32>"], "axes = array<i64: 1>", words=("kind",)),
    # --- argmax
    Bad("argmax-axis-range", "argmax", [T43], ["tensor<4xi32>"], "axis = 2 : i64", words=("axis 2", "tensor<4x3xf32>")),
    Bad("argmax-negative-axis-range", "argmax", [T43], ["tensor<4xi32>"], "axis = -3 : i64", words=("axis -3", "tensor<4x3xf32>")),
    Bad("argmax-result-f32", "argmax", [T43], ["tensor<4xf32>"], "axis = 1 : i64", words=("tensor<4xf32>", "i32 or i64")),
    Bad("argmax-result-shape", "argmax", [T43], ["tensor<3xi32>"], "axis = 1 : i64", words=("tensor<3xi32>", "tensor<4xi32>")),
    Bad("argmax-i1", "argmax", ["tensor<4x3xi1>"], ["tensor<4xi32>"], "axis = 1 : i64", words=("tensor<4x3xi1>", "f32")),
    Bad("argmin-empty", "argmin", ["tensor<4x0xf32>"], ["tensor<4xi64>"], "axis = 1 : i64", words=("size 0",)),
    Bad("argmax-axis-i32-attr", "argmax", [T43], ["tensor<4xi32>"], "axis = 1 : i32"),
    # --- fill
    Bad("fill-value-f64", "fill", [], ["tensor<3xf32>"], "value = 1.5 : f64", words=("value", "f32")),
    Bad("fill-value-not-integer", "fill", [], ["tensor<3xi32>"], "value = 1.5 : f32", words=("1.5", "i32")),
    Bad("fill-value-beyond-i32", "fill", [], ["tensor<3xi32>"], "value = 3.0e+09 : f32", words=("3", "i32")),
    Bad("fill-value-nan-i32", "fill", [], ["tensor<3xi32>"], "value = 0x7FC00000 : f32", words=("nan", "i32")),
    Bad("fill-result-f80", "fill", [], ["tensor<3xf80>"], "value = 1.0 : f32", words=("tensor<3xf80>",)),
    Bad("fill-i8-range", "fill", [], ["tensor<3xi8>"], "value = 300.0 : f32", words=("does not fit in i8",)),
    Bad("fill-ui8-negative", "fill", [], ["tensor<3xui8>"], "value = -1.0 : f32", words=("does not fit in ui8",)),
    # --- rng_normal
    Bad("rng_normal-i32", "rng_normal", [], ["tensor<3xi32>"], "seed = 1 : i64", words=("tensor<3xi32>", "f32")),
    Bad("rng_normal-seed-i32", "rng_normal", [], ["tensor<3xf32>"], "seed = 1 : i32"),
    Bad("rng_normal-no-seed", "rng_normal", [], ["tensor<3xf32>"], words=("seed",)),
    # --- softmax_xent
    Bad("softmax_xent-shapes", "softmax_xent", [T43, "tensor<4x5xf32>"], ["tensor<4xf32>", T43], words=("tensor<4x3xf32>", "tensor<4x5xf32>")),
    Bad("softmax_xent-rank-0", "softmax_xent", ["tensor<f32>", "tensor<f32>"], ["tensor<f32>", "tensor<f32>"], words=("tensor<f32>", "rank")),
    Bad("softmax_xent-loss", "softmax_xent", [T43, T43], ["tensor<3xf32>", T43], words=("tensor<3xf32>", "tensor<4xf32>", "loss")),
    Bad("softmax_xent-grad", "softmax_xent", [T43, T43], ["tensor<4xf32>", "tensor<4xf32>"], words=("tensor<4xf32>", "tensor<4x3xf32>", "grad")),
    Bad("softmax_xent-i32", "softmax_xent", ["tensor<4x3xi32>", T43], ["tensor<4xf32>", T43], words=("tensor<4x3xi32>", "f32")),
    # --- cast
    Bad("cast-shape", "cast", [T43], ["tensor<3x4xi32>"], words=("tensor<3x4xi32>", "tensor<4x3xi32>")),
    Bad("cast-f80", "cast", [T43], ["tensor<4x3xf80>"], words=("tensor<4x3xf80>", "element type mlvm does not support")),
    # --- reshape
    Bad("reshape-count", "reshape", ["tensor<2x3xf32>"], ["tensor<7xf32>"], words=("tensor<2x3xf32>", "tensor<7xf32>", "6", "7")),
    Bad("reshape-elem", "reshape", ["tensor<2x3xf32>"], ["tensor<6xi32>"], words=("tensor<2x3xf32>", "tensor<6xi32>")),
    # --- broadcast_to
    Bad("broadcast_to-incompatible", "broadcast_to", ["tensor<3xf32>"], ["tensor<2x4xf32>"], words=("tensor<3xf32>", "tensor<2x4xf32>")),
    Bad("broadcast_to-rank-drop", "broadcast_to", ["tensor<1x3xf32>"], ["tensor<3xf32>"], words=("tensor<1x3xf32>", "tensor<3xf32>")),
    Bad("broadcast_to-shrink", "broadcast_to", ["tensor<4x3xf32>"], ["tensor<1x3xf32>"], words=("tensor<4x3xf32>", "tensor<1x3xf32>")),
    Bad("broadcast_to-elem", "broadcast_to", ["tensor<3xf32>"], ["tensor<2x3xi32>"], words=("tensor<3xf32>", "tensor<2x3xi32>")),
    # --- constant
    Bad("constant-shape", "constant", [], ["tensor<4xf32>"], "value = dense<1.0> : tensor<2x2xf32>", words=("tensor<2x2xf32>", "tensor<4xf32>")),
    Bad("constant-elem", "constant", [], ["tensor<2xf32>"], "value = dense<[1, 2]> : tensor<2xi32>", words=("tensor<2xi32>", "tensor<2xf32>")),
    Bad("constant-no-value", "constant", [], ["tensor<2xf32>"], words=("value",)),
    # --- param
    Bad("param-i4", "param", [], ["tensor<3xi4>"], 'name = "w"', words=("tensor<3xi4>", "element type mlvm does not support")),
    Bad("param-no-name", "param", [], ["tensor<3xf32>"], words=("name",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_invalid_op(tmp_path: Path, case: Bad) -> None:
    path = tmp_path / f"{case.id}.mlir"
    path.write_text(case.text())
    with pytest.raises(mlvm.MlvmError) as info:
        parse_file(path)
    check_message(str(info.value), str(path), case)


@pytest.mark.parametrize("case", CASES[::7], ids=[c.id for c in CASES[::7]])
def test_invalid_op_through_parse_and_verify(case: Bad) -> None:
    name = f"in-memory/{case.id}.mlir"
    module = parse_module(make_context(), case.text(), name)
    with pytest.raises(mlvm.MlvmError) as info:
        verify_module(module, name)
    check_message(str(info.value), name, case)


@pytest.mark.parametrize("case", CASES[3::9], ids=[c.id for c in CASES[3::9]])
def test_invalid_op_rejected_by_compile(tmp_path: Path, case: Bad) -> None:
    path = tmp_path / f"{case.id}.mlir"
    path.write_text(case.text())
    with pytest.raises(mlvm.MlvmError) as info:
        mlvm.compile(path)
    check_message(str(info.value), str(path), case)


def test_every_op_has_an_invalid_case() -> None:
    from mlvm.dialect import MLVM_OPS
    from mlvm.dialect.index import INDEX_OPS
    from mlvm.dialect.logic import LOGIC_OPS
    from mlvm.dialect.quant import QUANT_OPS

    covered = {f"mlvm.{c.op}" for c in CASES}
    missing = {op.name for op in [*MLVM_OPS, *LOGIC_OPS, *INDEX_OPS, *QUANT_OPS]} - covered
    assert not missing, missing


def test_valid_version_of_the_template_verifies(tmp_path: Path) -> None:
    good = Bad("good", "add", [T43, "tensor<3xf32>"], [T43])
    path = tmp_path / "good.mlir"
    path.write_text(good.text())
    parse_file(path)


def test_error_names_the_op_line_among_many(tmp_path: Path) -> None:
    lines = ["func.func @f(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {"]
    for i in range(20):
        src = "%a" if i == 0 else f"%{i - 1}"
        lines.append(f'  %{i} = "mlvm.exp"({src}) : (tensor<4x3xf32>) -> tensor<4x3xf32>')
    lines[15] = (
        '  %14 = "mlvm.reduce"(%13) <{kind = "sum", axes = array<i64: 5>}> '
        ": (tensor<4x3xf32>) -> tensor<4x3xf32>"
    )
    lines.append("  func.return %19 : tensor<4x3xf32>")
    lines.append("}")
    path = tmp_path / "many.mlir"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(mlvm.MlvmError) as info:
        parse_file(path)
    msg = str(info.value)
    assert f"{path}:16:" in msg and "mlvm.reduce" in msg and "axis 5" in msg, msg
