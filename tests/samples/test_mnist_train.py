"""samples/mnist_train: the compiled SGD step against numpy, training to
accuracy on the digits, and the step's generated C."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import mlvm
import mlvm.reference

MLIR = Path(__file__).resolve().parents[2] / "samples" / "mnist_train" / "train_step.mlir"


@dataclass(frozen=True)
class Built:
    """train_step.mlir built once for this test module, and train.py."""

    so: Path
    module: mlvm.Module
    train: ModuleType


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory,
    sample: Callable[[str], ModuleType],
    aot_build: Callable[[Path, Path, Path | None], Path],
) -> Built:
    so = aot_build(MLIR, tmp_path_factory.mktemp("mnist_train"), None)
    return Built(so, mlvm.load(so), sample("mnist_train/train.py"))


@dataclass(frozen=True)
class Trained:
    losses: list[float]
    accuracy: float
    seconds: float


@pytest.fixture(scope="module")
def trained(built: Built) -> Trained:
    t0 = time.perf_counter()
    losses, accuracy = built.train.train(module=built.module)
    return Trained(losses, accuracy, time.perf_counter() - t0)


def test_exports(built: Built) -> None:
    fns = built.module.functions
    assert sorted(fns) == ["predict", "train_step"]
    step, predict = fns["train_step"], fns["predict"]
    param_shapes = [(64, 32), (32,), (32, 10), (10,)]
    assert [s.shape for s in step.inputs] == [*param_shapes, (32, 64), (32, 10)]
    assert [s.shape for s in step.outputs] == [*param_shapes, ()]
    assert [s.shape for s in predict.inputs] == [*param_shapes, (128, 64)]
    assert [(s.shape, s.dtype) for s in predict.outputs] == [((128,), np.int32)]


def test_numpy_step_is_the_ir_step(built: Built) -> None:
    """numpy_step computes what train_step.mlir means (per mlvm's reference
    interpreter), learning rate included."""
    t = built.train
    data = t.load_digits()
    params = t.init_params()
    x, y = next(t.batches(data))
    *ref_params, ref_loss = mlvm.reference.run_file(MLIR, "train_step", [*params, x, y])
    new_params, loss = t.numpy_step(params, x, y)
    assert loss == pytest.approx(float(ref_loss), abs=1e-5)
    for got, want, old in zip(new_params, ref_params, params):
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, atol=1e-5)
        assert not np.array_equal(got, old)  # every parameter moved


def test_first_losses_match_numpy(built: Built) -> None:
    """Ten compiled steps and ten numpy steps, each carrying its own
    parameters, from the same start on the same batches."""
    t = built.train
    data = t.load_digits()
    stream = t.batches(data)
    p_mlvm = p_np = t.init_params()
    losses_mlvm: list[float] = []
    losses_np: list[float] = []
    for _ in range(10):
        x, y = next(stream)
        *p_mlvm, loss = built.module.train_step(*p_mlvm, x, y)
        assert loss.shape == () and loss.dtype == np.float32
        losses_mlvm.append(float(loss))
        p_np, loss_np = t.numpy_step(p_np, x, y)
        losses_np.append(loss_np)
    np.testing.assert_allclose(losses_mlvm, losses_np, rtol=0, atol=1e-4)
    # Not vacuous: the step trains, starting near ln(10) for 10 classes.
    assert 1.5 < losses_np[0] < 4.0
    assert losses_np[-1] < losses_np[0] - 0.3
    for a, b in zip(p_mlvm, p_np):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


def test_training_reaches_accuracy(built: Built, trained: Trained) -> None:
    steps_per_epoch = len(built.train.load_digits().x_train) // built.train.BATCH
    first = float(np.mean(trained.losses[:steps_per_epoch]))
    last = float(np.mean(trained.losses[-steps_per_epoch:]))
    assert len(trained.losses) == built.train.DEFAULT_STEPS
    assert np.all(np.isfinite(trained.losses))
    assert last < 0.25 * first, (first, last)
    assert trained.accuracy >= 0.90
    assert trained.seconds < 60


def test_predict_matches_numpy(built: Built) -> None:
    t = built.train
    data = t.load_digits()
    params, _ = t.run_steps(t.compiled_step(built.module), t.init_params(), data, 100)
    # 360 rows: two full chunks of 128 and a padded one; then exact and tiny sizes.
    for x in (data.x_test, data.x_test[:128], data.x_test[:1]):
        got = t.compiled_predict(built.module, params, x)
        want = t.numpy_predict(params, x)
        assert got.shape == (len(x),) and got.dtype == np.int32
        np.testing.assert_array_equal(got, want)
    assert len(set(t.numpy_predict(params, data.x_test).tolist())) == 10


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_generated_c_is_strict_c99(
    built: Built, compiler: str, strict_c99: Callable[[str, Path], None]
) -> None:
    strict_c99(compiler, built.so.with_suffix(".c"))
