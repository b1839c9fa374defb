"""samples/mlp: the compiled 784-256-256-10 MLP against numpy, and its C."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import mlvm

MLIR = Path(__file__).resolve().parents[2] / "samples" / "mlp" / "mlp.mlir"
#: Max |compiled - numpy| allowed, relative to the largest |output|.
RTOL = 1e-5


@dataclass(frozen=True)
class Built:
    """The sample built once for this test module."""

    params: dict[str, np.ndarray]
    so: Path
    module: mlvm.Module
    demo: ModuleType  # samples/mlp/demo.py, for its numpy MLP


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory,
    sample: Callable[[str], ModuleType],
    aot_build: Callable[[Path, Path, Path | None], Path],
) -> Built:
    out = tmp_path_factory.mktemp("mlp")
    npz = sample("mlp/gen_params.py").write_params(out)
    with np.load(npz) as archive:
        params = {k: archive[k] for k in archive.files}
    so = aot_build(MLIR, out, npz)
    return Built(params, so, mlvm.load(so), sample("mlp/demo.py"))


def test_params_are_seeded_he_normal(sample: Callable[[str], ModuleType]) -> None:
    gen = sample("mlp/gen_params.py")
    a, b = gen.make_params(0), gen.make_params(0)
    assert sorted(a) == ["b1", "b2", "b3", "w1", "w2", "w3"]
    shapes = {"w1": (784, 256), "b1": (256,), "w2": (256, 256), "b2": (256,),
              "w3": (256, 10), "b3": (10,)}
    for k, shape in shapes.items():
        assert a[k].shape == shape and a[k].dtype == np.float32
        np.testing.assert_array_equal(a[k], b[k])
    for k in ("w1", "w2", "w3"):
        he_std = np.sqrt(2.0 / a[k].shape[0])
        assert abs(a[k].std() / he_std - 1) < 0.1, k
    assert not np.array_equal(a["w1"], gen.make_params(1)["w1"])


def test_signature(built: Built) -> None:
    info = built.module.functions["main"]
    assert [(s.shape, s.dtype) for s in info.inputs] == [((1, 784), np.float32)]
    assert [(s.shape, s.dtype) for s in info.outputs] == [((1, 10), np.float32)]


@pytest.mark.parametrize("batch", range(4))
def test_matches_numpy(built: Built, batch: int) -> None:
    rng = np.random.default_rng(100 + batch)
    # Uniform batches like pixel intensities, and signed normal ones.
    if batch % 2 == 0:
        xs = rng.random((8, 784), dtype=np.float32)
    else:
        xs = rng.standard_normal((8, 784), dtype=np.float32)
    got = np.concatenate([built.module.main(np.ascontiguousarray(x[None])) for x in xs])
    want = built.demo.mlp_forward(built.params, xs)
    assert got.shape == want.shape == (8, 10)
    scale = float(np.max(np.abs(want)))
    # The outputs are neither trivial nor the same for every input.
    assert np.all(np.isfinite(got)) and scale > 0.1
    assert float(np.min(np.std(want, axis=0))) > 1e-3
    err = float(np.max(np.abs(got - want)))
    assert err <= RTOL * scale, f"max |err| {err:.3g} on outputs up to {scale:.3g}"


def test_demo_report(tmp_path: Path, sample: Callable[[str], ModuleType],
                     capsys: pytest.CaptureFixture[str]) -> None:
    assert sample("mlp/demo.py").demo(tmp_path) is True
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) < 20
    assert lines[-1].rstrip().endswith("OK")
    assert (tmp_path / "mlp.so").is_file() and (tmp_path / "mlp.o").is_file()


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_generated_c_is_strict_c99(
    built: Built, compiler: str, strict_c99: Callable[[str, Path], None]
) -> None:
    strict_c99(compiler, built.so.with_suffix(".c"))
