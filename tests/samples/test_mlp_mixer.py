"""samples/mlp_mixer: the compiled MLP-Mixer (batch 1 and 8) against the
textbook numpy model, within 1e-4; its weights are seeded; the checked-in
.mlir files are what mixer.py writes; its C is strict C99 and builds for a
Cortex-M4."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import mlvm
from mlvm.codegen.cc import INCLUDE_DIR

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "mlp_mixer"
ATOL = 1e-4
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
       "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-ffreestanding"]


@pytest.fixture(scope="module")
def mixer(sample: Callable[[str], ModuleType]) -> ModuleType:
    return sample("mlp_mixer/mixer.py")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, mixer: ModuleType,
          aot_build: Callable[[Path, Path, Path | None], Path]) -> dict[int, Path]:
    out = tmp_path_factory.mktemp("mixer")
    npz, mlirs = mixer.write(out)
    return {b: aot_build(m, out, npz) for b, m in zip(mixer.BATCHES, mlirs)}


def test_checked_in_mlir_is_what_the_script_writes(mixer: ModuleType) -> None:
    for b in mixer.BATCHES:
        assert (SAMPLE / f"mixer_b{b}.mlir").read_text() == mixer.mlir_text(b), (
            f"samples/mlp_mixer/mixer_b{b}.mlir is stale: run python samples/mlp_mixer/mixer.py"
        )


def test_params_are_seeded(mixer: ModuleType) -> None:
    a, b, c = mixer.make_params(0), mixer.make_params(0), mixer.make_params(1)
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k].dtype == np.float32
        np.testing.assert_array_equal(a[k], b[k])
    assert a["b0_ch_w1"].shape == (128, 512) and a["b3_tok_w2"].shape == (64, 64)
    assert a["embed_w"].shape == (48, 128) and a["head_w"].shape == (128, 10)
    assert not np.array_equal(a["embed_w"], c["embed_w"])


@pytest.mark.parametrize("batch", [1, 8])
def test_matches_numpy(built: dict[int, Path], mixer: ModuleType, batch: int) -> None:
    params = mixer.make_params(0)
    module = mlvm.load(built[batch])
    info = module.functions["main"]
    assert info.inputs[0].shape == (batch, 32, 32, 3)
    assert info.outputs[0].shape == (batch, 10)
    g = np.random.default_rng(batch)
    for _ in range(3):
        x = g.random((batch, 32, 32, 3), dtype=np.float32)
        got, want = module.main(x), mixer.forward(params, x)
        err = float(np.max(np.abs(got - want)))
        assert err <= ATOL, f"batch {batch}: max |mlvm - numpy| = {err:.2e}"
        assert np.array_equal(np.argmax(got, axis=1), np.argmax(want, axis=1))


def test_batch_items_are_independent(built: dict[int, Path]) -> None:
    one, eight = mlvm.load(built[1]), mlvm.load(built[8])
    x = np.random.default_rng(5).random((8, 32, 32, 3), dtype=np.float32)
    y = eight.main(x)
    for i in (0, 3, 7):
        np.testing.assert_allclose(y[i : i + 1], one.main(x[i : i + 1]), atol=1e-5, rtol=0)


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_strict_c99(built: dict[int, Path], compiler: str,
                    strict_c99: Callable[[str, Path], None]) -> None:
    strict_c99(compiler, built[1].with_suffix(".c"))


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed (make test installs it)")
def test_builds_for_cortex_m4(built: dict[int, Path]) -> None:
    c = built[1].with_suffix(".c")
    subprocess.run([*ARM, "-I", str(INCLUDE_DIR), "-I", str(c.parent), "-c", str(c),
                    "-o", str(c.with_suffix(".arm.o"))], check=True)
