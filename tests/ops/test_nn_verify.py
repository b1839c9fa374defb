"""The verifiers of transpose, slice, concat, softmax, layer_norm, gelu,
conv2d and pool2d: an invalid op raises `mlvm.MlvmError` with one line
naming the file, the offending op's line, the op, and the operands, shapes
and options involved.

Each program puts a valid op on line 2 and the invalid one on line 3.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mlvm  # noqa: E402
from mlvm.dialect.nn import NN_OPS  # noqa: E402
from mlvm.pipeline import parse_file  # noqa: E402
from verify_cases import Bad, check_message  # noqa: E402

T = "tensor<2x3x4xf32>"
X = "tensor<1x4x5x5xf32>"

CASES = [
    # --- transpose
    Bad("transpose-not-permutation", "transpose", [T], [T], "perm = array<i64: 0, 0, 1>",
        ("perm [0, 0, 1]", "not a permutation of 0..2", T)),
    Bad("transpose-short-perm", "transpose", [T], [T], "perm = array<i64: 1, 0>",
        ("perm [1, 0]", "not a permutation", T)),
    Bad("transpose-out-of-range", "transpose", [T], [T], "perm = array<i64: 0, 1, 3>",
        ("perm [0, 1, 3]", T)),
    Bad("transpose-wrong-result", "transpose", [T], ["tensor<2x4x3xf32>"], "perm = array<i64: 2, 0, 1>",
        ("tensor<2x4x3xf32>", "tensor<4x2x3xf32>")),
    Bad("transpose-si8", "transpose", ["tensor<2x3xsi8>"], ["tensor<3x2xsi8>"], "perm = array<i64: 1, 0>",
        ("tensor<2x3xsi8>", "element type mlvm does not support")),
    Bad("transpose-perm-i32", "transpose", [T], [T], "perm = array<i32: 0, 1, 2>", ("i64", "i32")),
    # --- slice
    Bad("slice-out-of-range", "slice", ["tensor<4x5xf32>"], ["tensor<2x3xf32>"],
        "start = array<i64: 0, 3>, stride = array<i64: 1, 1>",
        ("dim 1", "start 3", "size 3", "index 5", "0..4", "tensor<4x5xf32>")),
    Bad("slice-negative-stride-out", "slice", ["tensor<4x5xf32>"], ["tensor<3x1xf32>"],
        "start = array<i64: 1, 0>, stride = array<i64: -1, 1>",
        ("dim 0", "stride -1", "index -1")),
    Bad("slice-zero-stride", "slice", ["tensor<4x5xf32>"], ["tensor<2x2xf32>"],
        "start = array<i64: 0, 0>, stride = array<i64: 0, 1>", ("stride [0, 1]", "zero")),
    Bad("slice-start-length", "slice", ["tensor<4x5xf32>"], ["tensor<2x2xf32>"],
        "start = array<i64: 0>", ("start [0]", "2 entries", "tensor<4x5xf32>")),
    Bad("slice-rank", "slice", ["tensor<4x5xf32>"], ["tensor<20xf32>"],
        "start = array<i64: 0, 0>", ("tensor<20xf32>", "rank", "tensor<4x5xf32>")),
    # --- concat
    Bad("concat-mismatch", "concat", ["tensor<2x3xf32>", "tensor<3x4xf32>"], ["tensor<5x3xf32>"],
        "axis = 0 : i64", ("operand 1 tensor<3x4xf32>", "operand 0 tensor<2x3xf32>", "axis 0")),
    Bad("concat-elem", "concat", ["tensor<2x3xf32>", "tensor<2x3xi32>"], ["tensor<4x3xf32>"],
        "axis = 0 : i64", ("tensor<2x3xi32>", "tensor<2x3xf32>")),
    Bad("concat-axis", "concat", ["tensor<2x3xf32>"], ["tensor<2x3xf32>"], "axis = 2 : i64",
        ("axis 2", "out of range", "tensor<2x3xf32>")),
    Bad("concat-result", "concat", ["tensor<2x3xf32>", "tensor<2x4xf32>"], ["tensor<2x8xf32>"],
        "axis = -1 : i64", ("tensor<2x8xf32>", "tensor<2x7xf32>")),
    Bad("concat-scalar", "concat", ["tensor<f32>"], ["tensor<f32>"], "axis = 0 : i64",
        ("tensor<f32>", "rank >= 1")),
    # --- softmax
    Bad("softmax-axis", "softmax", [T], [T], "axis = 3 : i64", ("axis 3", "out of range", T)),
    Bad("softmax-i32", "softmax", ["tensor<3xi32>"], ["tensor<3xi32>"], "", ("tensor<3xi32>", "f32")),
    Bad("softmax-result", "softmax", [T], ["tensor<2x3x5xf32>"], "", ("tensor<2x3x5xf32>", T)),
    Bad("log_softmax-axis", "log_softmax", [T], [T], "axis = -4 : i64", ("axis -4", "out of range", T)),
    Bad("log_softmax-i32", "log_softmax", ["tensor<3xi32>"], ["tensor<3xi32>"], "",
        ("tensor<3xi32>", "f32")),
    Bad("log_softmax-scalar", "log_softmax", ["tensor<f32>"], ["tensor<f32>"], "",
        ("tensor<f32>", "rank >= 1")),
    # --- layer_norm
    Bad("layer_norm-repeated-axis", "layer_norm", [T], [T], "axes = array<i64: 2, -1>",
        ("axis -1", "repeated", "[2, -1]")),
    Bad("layer_norm-axis-range", "layer_norm", [T], [T], "axes = array<i64: 3>", ("axis 3", T)),
    Bad("layer_norm-gamma-only", "layer_norm", [T, "tensor<4xf32>"], [T], "",
        ("gamma and beta together", "1")),
    Bad("layer_norm-gamma-shape", "layer_norm", [T, "tensor<3xf32>", "tensor<4xf32>"], [T],
        "axes = array<i64: -1>", ("gamma tensor<3xf32>", "(4,)", T)),
    Bad("layer_norm-beta-shape", "layer_norm", [T, "tensor<3x4xf32>", "tensor<4x3xf32>"], [T],
        "axes = array<i64: 1, 2>", ("beta tensor<4x3xf32>", "(3, 4)", "[1, 2]")),
    Bad("layer_norm-eps-f64", "layer_norm", [T], [T], "eps = 1.0e-05 : f64", ("eps", "f32")),
    Bad("layer_norm-empty-axes", "layer_norm", [T], [T], "axes = array<i64>", ("axes", "empty")),
    # --- gelu
    Bad("gelu-mode", "gelu", [T], [T], 'approximate = "fast"', ("approximate 'fast'", "tanh", "none")),
    Bad("gelu-i32", "gelu", ["tensor<3xi32>"], ["tensor<3xi32>"], "", ("tensor<3xi32>", "f32")),
    Bad("gelu-result", "gelu", [T], ["tensor<24xf32>"], "", ("tensor<24xf32>", T)),
    # --- conv2d
    Bad("conv2d-groups-divide-channels", "conv2d", [X, "tensor<6x1x3x3xf32>"], ["tensor<1x6x3x3xf32>"],
        "groups = 3 : i64", ("groups 3", "does not divide the 4 input channels", X)),
    Bad("conv2d-groups-divide-outputs", "conv2d", [X, "tensor<5x2x3x3xf32>"], ["tensor<1x5x3x3xf32>"],
        "groups = 2 : i64", ("groups 2", "5 output channels", "tensor<5x2x3x3xf32>")),
    Bad("conv2d-channels-per-group", "conv2d", [X, "tensor<4x4x3x3xf32>"], ["tensor<1x4x3x3xf32>"],
        "groups = 2 : i64", ("tensor<4x4x3x3xf32>", "4 input channels per group", "expected 2")),
    Bad("conv2d-groups-zero", "conv2d", [X, "tensor<4x4x3x3xf32>"], ["tensor<1x4x3x3xf32>"],
        "groups = 0 : i64", ("groups 0", ">= 1")),
    Bad("conv2d-rank", "conv2d", ["tensor<4x5x5xf32>", "tensor<4x4x3x3xf32>"], ["tensor<4x3x3xf32>"],
        "", ("tensor<4x5x5xf32>", "rank 4", "NCHW")),
    Bad("conv2d-kernel-too-big", "conv2d", [X, "tensor<2x4x3x3xf32>"], ["tensor<1x2x1x1xf32>"],
        "dilations = array<i64: 3, 3>", ("dilated kernel 7x7", "padded input 5x5", X)),
    Bad("conv2d-strides-zero", "conv2d", [X, "tensor<2x4x3x3xf32>"], ["tensor<1x2x3x3xf32>"],
        "strides = array<i64: 0, 1>", ("strides [0, 1]", ">= 1")),
    Bad("conv2d-padding-length", "conv2d", [X, "tensor<2x4x3x3xf32>"], ["tensor<1x2x3x3xf32>"],
        "padding = array<i64: 1, 1>", ("padding [1, 1]", "4 entries", "top, left, bottom, right")),
    Bad("conv2d-negative-padding", "conv2d", [X, "tensor<2x4x3x3xf32>"], ["tensor<1x2x3x3xf32>"],
        "padding = array<i64: -1, 0, 0, 0>", ("padding [-1, 0, 0, 0]", ">= 0")),
    Bad("conv2d-bias-shape", "conv2d", [X, "tensor<2x4x3x3xf32>", "tensor<4xf32>"], ["tensor<1x2x3x3xf32>"],
        "", ("bias tensor<4xf32>", "(2,)")),
    Bad("conv2d-result", "conv2d", [X, "tensor<2x4x3x3xf32>"], ["tensor<1x2x5x5xf32>"],
        "", ("tensor<1x2x5x5xf32>", "tensor<1x2x3x3xf32>")),
    # --- pool2d
    Bad("pool2d-kind", "pool2d", [X], [X], 'kind = "min", window = array<i64: 1, 1>',
        ("kind 'min'", "max, avg")),
    Bad("pool2d-padding-vs-window", "pool2d", [X], ["tensor<1x4x4x3xf32>"],
        'kind = "max", window = array<i64: 2, 2>, padding = array<i64: 2, 0, 0, 0>',
        ("padding [2, 0, 0, 0]", "smaller than the window 2x2")),
    Bad("pool2d-window-length", "pool2d", [X], [X], 'kind = "avg", window = array<i64: 2>',
        ("window [2]", "2 entries")),
    Bad("pool2d-window-zero", "pool2d", [X], [X], 'kind = "avg", window = array<i64: 0, 1>',
        ("window [0, 1]", ">= 1")),
    Bad("pool2d-window-too-big", "pool2d", [X], [X], 'kind = "max", window = array<i64: 6, 1>',
        ("window 6x1", "padded input 5x5")),
    Bad("pool2d-result", "pool2d", [X], [X], 'kind = "max", window = array<i64: 2, 2>, strides = array<i64: 2, 2>',
        (X, "tensor<1x4x2x2xf32>")),
    Bad("pool2d-avg-of-bytes", "pool2d", ["tensor<1x4x5x5xui8>"], ["tensor<1x4x4x4xui8>"],
        'kind = "avg", window = array<i64: 2, 2>', ("x tensor<1x4x5x5xui8>", "element type f32")),
    Bad("pool2d-max-of-i32", "pool2d", ["tensor<1x4x5x5xi32>"], ["tensor<1x4x4x4xi32>"],
        'kind = "max", window = array<i64: 2, 2>', ("x tensor<1x4x5x5xi32>", "f32, i8 or ui8")),
    Bad("pool2d-max-result-type", "pool2d", ["tensor<1x4x5x5xi8>"], ["tensor<1x4x4x4xf32>"],
        'kind = "max", window = array<i64: 2, 2>', ("tensor<1x4x4x4xf32>", "tensor<1x4x4x4xi8>")),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_invalid_nn_op(tmp_path: Path, case: Bad) -> None:
    path = tmp_path / f"{case.id}.mlir"
    path.write_text(case.text())
    with pytest.raises(mlvm.MlvmError) as info:
        parse_file(path)
    check_message(str(info.value), str(path), case)


def test_every_nn_op_has_invalid_cases() -> None:
    covered = {f"mlvm.{c.op}" for c in CASES}
    assert not {op.name for op in NN_OPS} - covered


@pytest.mark.parametrize("case", CASES[::9], ids=[c.id for c in CASES[::9]])
def test_invalid_nn_op_through_compile(tmp_path: Path, case: Bad) -> None:
    path = tmp_path / f"{case.id}.mlir"
    path.write_text(case.text())
    with pytest.raises(mlvm.MlvmError) as info:
        mlvm.compile(path)
    check_message(str(info.value), str(path), case)
