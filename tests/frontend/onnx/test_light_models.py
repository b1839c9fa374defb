"""Whole networks as other tools exported them: the onnx package's light
copies of the model zoo's SqueezeNet (Concat of expand branches, global
average pooling), ShuffleNet (grouped convolutions, channel shuffles by
Reshape + Transpose, BatchNormalization, Sum) and Inception v1 (LRN,
Dropout, four-way Concat), with seeded weights (bench/zoo.py, the same
files `make bench-zoo` times), against onnxruntime. Tolerance: rel 1e-4
of the largest output (sums in a different order through 20-50 layers)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import onnxruntime as ort
import mlvm

ZOO = Path(__file__).resolve().parents[3] / "bench" / "zoo.py"


def _zoo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mlvm_bench_zoo", ZOO)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet", "inception_v1"])
def test_light_model_matches_onnxruntime(name: str, tmp_path: Path) -> None:
    zoo = _zoo()
    path, data, shape = zoo.model_file(zoo.LIGHT / f"light_{name}.onnx", tmp_path)
    m = mlvm.compile(path)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    want = sess.run(None, {data: x})[0]
    got = m.main(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.all(np.isfinite(want)) and np.max(np.abs(want)) > 0
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * float(np.max(np.abs(want))))
