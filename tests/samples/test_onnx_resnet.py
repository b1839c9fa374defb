"""The ONNX ResNet sample: from Python and from a C program, against onnxruntime."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def load_run() -> object:
    spec = importlib.util.spec_from_file_location("onnx_resnet_run", ROOT / "samples/onnx_resnet/run.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_resnet_from_python_and_c_matches_onnxruntime(tmp_path: Path) -> None:
    run = load_run()
    model = tmp_path / "resnet8.onnx"
    model.write_bytes(run.resnet8(seed=3).SerializeToString())  # type: ignore[attr-defined]
    images = np.random.default_rng(5).standard_normal((2, 3, 32, 32)).astype(np.float32)
    assert run.from_python(model, images) <= run.RTOL  # type: ignore[attr-defined]
    err, cls = run.from_c(model, images[1], tmp_path)  # type: ignore[attr-defined]
    assert err <= run.RTOL and cls.startswith("class ")  # type: ignore[attr-defined]


def test_batch_norm_is_folded_into_every_conv(tmp_path: Path) -> None:
    from mlvm.frontend.onnx import import_onnx

    run = load_run()
    model = tmp_path / "resnet8.onnx"
    model.write_bytes(run.resnet8().SerializeToString())  # type: ignore[attr-defined]
    module, params = import_onnx(model)
    names = [op.name for op in module.walk()]
    assert names.count("mlvm.conv2d") == 9 and "mlvm.mul" not in names  # stem + 2+3+3
    assert names.count("mlvm.add") == 4  # the residual adds and the classifier bias
    assert sum(n.endswith("__bn") for n in params) == 9  # each conv's weights, folded
