"""ONNX Resize and Upsample (mlvm/frontend/onnx/resize.py) against the
operator's definition (onnx.reference) and onnxruntime.

Every mode (nearest with its four rounding rules, linear, cubic, with
exclude_outside and antialias) times every coordinate transformation,
upscaling and downscaling by whole and fractional factors, scales and
sizes (keep_aspect_ratio_policy, axes), odd and unit dims: all imported
into one module, built once. Tolerance: 1e-5 of the largest output
magnitude (the definition sums in float64, mlvm in float32); nearest is
exact. onnxruntime computes coordinates in float32 and, with
align_corners, from the floored output length: where it differs from the
definition, mlvm follows the definition (the ONNX backend suite's
expected outputs), so the onnxruntime comparison covers the common
configurations only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import mlvm
from mlvm.diagnostics import MlvmError
from mlvm.frontend.onnx import import_onnx

from harness import LARGE_MODULE_CFLAGS, module_cflags

from .merge import Merged

RNG = np.random.default_rng(11)
COORDS = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
          "half_pixel_symmetric", "tf_crop_and_resize"]


def resize_model(shape: tuple[int, ...], attrs: dict[str, object], scales: list[float] | None = None,
                 sizes: list[int] | None = None, roi: list[float] | None = None,
                 dtype: type = np.float32, opset: int = 19) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.asarray(roi or [], np.float32), "roi")]
    ins = ["x", "roi"]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.asarray(scales, np.float32), "scales"))
        ins.append("scales")
    else:
        inits.append(numpy_helper.from_array(np.asarray(sizes, np.int64), "sizes"))
        ins += ["", "sizes"]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    g = helper.make_graph([helper.make_node("Resize", ins, ["y"], **attrs)], "resize",
                          [helper.make_tensor_value_info("x", elem, list(shape))],
                          [helper.make_tensor_value_info("y", elem, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def upsample_model(shape: tuple[int, ...], mode: str, scales: list[float]) -> onnx.ModelProto:
    g = helper.make_graph(
        [helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode)], "upsample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(scales, np.float32), "s")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])


def definition_cases() -> list[tuple[str, onnx.ModelProto, tuple[int, ...]]]:
    cases = []
    for mode in ("nearest", "linear", "cubic"):
        extras: list[dict[str, object]] = [{}]
        if mode == "nearest":
            extras += [{"nearest_mode": m} for m in ("floor", "ceil", "round_prefer_ceil")]
        else:
            extras += [{"exclude_outside": 1}, {"antialias": 1}]
        for ct in COORDS:
            for scales in ([1, 1, 2, 2], [1, 1, 0.5, 0.6], [1, 1, 1.7, 3.1]):
                for extra in extras:
                    attrs: dict[str, object] = {"mode": mode, "coordinate_transformation_mode": ct,
                                                **extra}
                    roi = None
                    if ct == "tf_crop_and_resize":
                        roi = [0, 0, 0.2, 0.1, 1, 1, 0.9, 1.2]
                        attrs["extrapolation_value"] = 7.0
                    name = f"{mode}_{ct}_{scales[2]}x{scales[3]}_{'_'.join(map(str, extra))}"
                    cases.append((name, resize_model((1, 2, 5, 6), attrs, scales, roi=roi),
                                  (1, 2, 5, 6)))
    cases += [
        ("sizes_linear", resize_model((2, 3, 4, 1), {"mode": "linear"}, sizes=[2, 3, 7, 3]),
         (2, 3, 4, 1)),
        ("sizes_not_larger", resize_model(
            (1, 1, 5, 7), {"mode": "nearest", "keep_aspect_ratio_policy": "not_larger",
                           "axes": [2, 3]}, sizes=[7, 9]), (1, 1, 5, 7)),
        ("sizes_not_smaller_cubic", resize_model(
            (1, 1, 5, 7), {"mode": "cubic", "keep_aspect_ratio_policy": "not_smaller",
                           "axes": [3, 2]}, sizes=[4, 3]), (1, 1, 5, 7)),
        ("axes_3d", resize_model((3, 5, 1), {"mode": "linear", "axes": [1]}, scales=[2.5]),
         (3, 5, 1)),
        ("cubic_a", resize_model((1, 1, 4, 4), {"mode": "cubic", "cubic_coeff_a": -0.5,
                                                "exclude_outside": 1}, scales=[1, 1, 0.8, 0.8]),
         (1, 1, 4, 4)),
    ]
    return cases


CASES = definition_cases()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> mlvm.Module:
    tmp = tmp_path_factory.mktemp("resize")
    merged = Merged()
    for k, (_, m, _) in enumerate(CASES):
        path = tmp / f"c{k}.onnx"
        onnx.save(m, path)
        merged.add(*import_onnx(path))
    with module_cflags(LARGE_MODULE_CFLAGS):
        return mlvm.compile(merged.module, merged.params)


def scale_tol(want: np.ndarray) -> float:
    return 1e-5 * float(np.max(np.abs(want), initial=0.0)) + 1e-6


@pytest.mark.parametrize("k", range(len(CASES)), ids=[c[0] for c in CASES])
def test_resize_matches_the_definition(built: mlvm.Module, k: int) -> None:
    _, model, shape = CASES[k]
    x = RNG.standard_normal(shape).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = built[f"c{k}"](x)
    assert got.shape == want.shape
    if "nearest" in CASES[k][0] and "tf_crop" not in CASES[k][0]:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=scale_tol(want))


# Configurations where onnxruntime and the definition agree: what exported
# models use (PyTorch's nn.Upsample / F.interpolate, TF's resize).
ORT_CASES = [
    ("nearest_2x", (1, 3, 4, 5), {"mode": "nearest"}, [1, 1, 2, 2]),
    ("nearest_asymmetric_floor", (1, 2, 3, 7), {
        "mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
     [1, 1, 3, 2]),
    ("bilinear_half_pixel", (2, 3, 5, 4), {"mode": "linear"}, [1, 1, 2, 2]),
    ("bilinear_pytorch_half_pixel_down", (1, 2, 8, 6), {
        "mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, [1, 1, 0.5, 0.5]),
    ("bilinear_align_corners", (1, 1, 5, 3), {
        "mode": "linear", "coordinate_transformation_mode": "align_corners"}, [1, 1, 2, 3]),
    ("bicubic", (1, 2, 4, 6), {"mode": "cubic"}, [1, 1, 2, 2]),
    ("bicubic_exclude_outside", (1, 1, 6, 6), {"mode": "cubic", "exclude_outside": 1,
                                               "cubic_coeff_a": -0.5}, [1, 1, 0.5, 0.5]),
]


@pytest.mark.parametrize("case", ORT_CASES, ids=[c[0] for c in ORT_CASES])
def test_resize_matches_onnxruntime(case: tuple, tmp_path: Path) -> None:
    name, shape, attrs, scales = case
    path = tmp_path / f"{name}.onnx"
    onnx.save(resize_model(shape, attrs, scales), path)
    x = RNG.standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = mlvm.compile(path).main(x)
    np.testing.assert_allclose(got, want, rtol=0, atol=scale_tol(want))


def test_upsample_and_integer_nearest(tmp_path: Path) -> None:
    """Upsample (opset 9: asymmetric coordinates, floor) in nearest and
    linear, and nearest on uint8 (a gather: exact for every type)."""
    for mode in ("nearest", "linear"):
        path = tmp_path / f"up_{mode}.onnx"
        onnx.save(upsample_model((1, 2, 3, 4), mode, [1, 1, 2, 3]), path)
        x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
        want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
            None, {"x": x})[0]
        np.testing.assert_allclose(mlvm.compile(path).main(x), want, rtol=0, atol=scale_tol(want))
    path = tmp_path / "u8.onnx"
    onnx.save(resize_model((1, 1, 3, 5), {"mode": "nearest"}, [1, 1, 1.5, 0.8], dtype=np.uint8),
              path)
    x = RNG.integers(0, 256, (1, 1, 3, 5)).astype(np.uint8)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(mlvm.compile(path).main(x), want)


def test_resize_of_a_constant_is_folded(tmp_path: Path) -> None:
    """A resize of an initializer is computed at import (no gather left)."""
    x = RNG.standard_normal((1, 1, 3, 4)).astype(np.float32)
    model = resize_model((1, 1, 3, 4), {"mode": "linear"}, [1, 1, 2, 1.5])
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    g = helper.make_graph(
        [helper.make_node("Resize", ["c", "roi", "scales"], ["r"], mode="linear"),
         helper.make_node("Add", ["r", "u"], ["y"])], "folded",
        [helper.make_tensor_value_info("u", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(x, "c"), *model.graph.initializer])
    path = tmp_path / "const.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]), path)
    module, _ = import_onnx(path)
    assert "mlvm.gather" not in str(module)
    got = mlvm.compile(path).main(np.zeros(1, np.float32))
    np.testing.assert_allclose(got, want, rtol=0, atol=scale_tol(want))


@pytest.mark.parametrize("attrs,scales,sizes,message", [
    ({"mode": "area"}, [1, 1, 2, 2], None, "mode 'area'"),
    ({"mode": "linear", "coordinate_transformation_mode": "tf_half_pixel_for_nn"}, [1, 1, 2, 2],
     None, "coordinate_transformation_mode 'tf_half_pixel_for_nn'"),
    ({"mode": "nearest"}, [1, 2, 2], None, "scales has 3 values for 4 axes"),
    ({"mode": "nearest"}, [1, 1, 0, 2], None, "scale 0.0 is not positive"),
    ({"mode": "linear"}, None, [1, 1, -2, 2], "size -2 is negative"),
])
def test_bad_resize_is_one_line(tmp_path: Path, attrs: dict, scales: list | None,
                                sizes: list | None, message: str) -> None:
    path = tmp_path / "bad.onnx"
    onnx.save(resize_model((1, 1, 3, 3), attrs, scales, sizes), path)
    with pytest.raises(MlvmError) as e:
        mlvm.compile(path)
    assert message in str(e.value) and "\n" not in str(e.value)
