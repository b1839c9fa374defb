"""samples/mnist_train: the compiled SGD steps (parameters round-tripped,
and weights and momentum kept in the module state) against numpy, training
to accuracy on the digits, and the steps' generated C."""

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
    train = sample("mnist_train/train.py")
    out = tmp_path_factory.mktemp("mnist_train")
    archive = out / "init.npz"
    np.savez(archive, **train.init_archive())
    so = aot_build(MLIR, out, archive)
    return Built(so, mlvm.load(so), train)


@dataclass(frozen=True)
class Trained:
    losses: list[float]
    accuracy: float
    seconds: float


@pytest.fixture(scope="module")
def trained(built: Built) -> Trained:
    t0 = time.perf_counter()
    losses, accuracy = built.train.train(module=built.module, round_trip=True)
    return Trained(losses, accuracy, time.perf_counter() - t0)


def test_exports(built: Built) -> None:
    fns = built.module.functions
    assert sorted(fns) == ["classify", "predict", "sgd_step", "train_step"]
    step, predict = fns["train_step"], fns["predict"]
    param_shapes = [(64, 32), (32,), (32, 10), (10,)]
    assert [s.shape for s in step.inputs] == [*param_shapes, (32, 64), (32, 10)]
    assert [s.shape for s in step.outputs] == [*param_shapes, ()]
    assert [s.shape for s in predict.inputs] == [*param_shapes, (128, 64)]
    assert [(s.shape, s.dtype) for s in predict.outputs] == [((128,), np.int32)]
    sgd = fns["sgd_step"]
    assert [s.shape for s in sgd.inputs] == [(32, 64), (32, 10), (), ()]
    assert [s.shape for s in sgd.outputs] == [()]
    assert {n: s.shape for n, s in built.module.state.specs.items()} == {
        "w1": (64, 32), "b1": (32,), "w2": (32, 10), "b2": (10,),
        "v_w1": (64, 32), "v_b1": (32,), "v_w2": (32, 10), "v_b2": (10,),
    }


def test_state_starts_from_the_archive(built: Built) -> None:
    t = built.train
    built.module.reset_state()
    for got, want in zip(t.get_params(built.module), t.init_params()):
        assert np.array_equal(got, want)
    assert not any(built.module.state[n].any() for n in t.VELOCITY_NAMES)


def test_state_step_matches_numpy_momentum(built: Built) -> None:
    """Ten @sgd_step calls against numpy's SGD with momentum: losses within
    1e-5, weights and velocities after them too."""
    t = built.train
    data = t.load_digits()
    t.set_params(built.module, t.init_params())
    losses = t.state_losses(built.module, data, 10)
    params, vel = t.init_params(), tuple(np.zeros_like(p) for p in t.init_params())
    want: list[float] = []
    stream = t.batches(data)
    for _ in range(10):
        x, y = next(stream)
        params, vel, loss = t.numpy_momentum_step(params, vel, x, y)
        want.append(loss)
    np.testing.assert_allclose(losses, want, rtol=0, atol=1e-5)
    assert want[-1] < want[0] - 0.3
    for got, w in zip(t.get_params(built.module), params):
        np.testing.assert_allclose(got, w, rtol=0, atol=1e-5)
    for name, w in zip(t.VELOCITY_NAMES, vel):
        np.testing.assert_allclose(built.module.state[name], w, rtol=0, atol=1e-5)


def test_state_step_is_the_round_trip_step_without_momentum(built: Built) -> None:
    """With momentum 0, @sgd_step is @train_step's update: the same loss
    curve and the same weights, bit for bit."""
    t = built.train
    data = t.load_digits()
    params, want = t.run_steps(t.compiled_step(built.module), t.init_params(), data, 10)
    t.set_params(built.module, t.init_params())
    got = t.state_losses(built.module, data, 10, lr=t.LEARNING_RATE, mu=np.float32(0))
    assert got == want
    for a, b in zip(t.get_params(built.module), params):
        assert np.array_equal(a, b)


def test_a_call_per_epoch_is_a_call_per_step(built: Built) -> None:
    """state_losses scans an epoch per call; one call per step gives the
    same losses and state, bit for bit, across an epoch boundary."""
    t = built.train
    data = t.load_digits()
    steps = len(data.x_train) // t.BATCH + 5
    runs = []
    for per_call in (False, True):
        t.set_params(built.module, t.init_params())
        losses = t.state_losses(built.module, data, steps, per_call=per_call)
        runs.append((losses, {n: built.module.state[n] for n in built.module.state}))
    (l_scan, s_scan), (l_call, s_call) = runs
    assert len(l_scan) == steps and l_scan == l_call
    assert all(np.array_equal(s_scan[n], s_call[n]) for n in s_call)


def test_training_with_state_reaches_accuracy(built: Built) -> None:
    losses, accuracy = built.train.train(module=built.module)
    assert len(losses) == built.train.DEFAULT_STEPS and np.all(np.isfinite(losses))
    assert accuracy >= 0.90
    # @classify uses the trained state: it agrees with numpy on those weights.
    t = built.train
    x = t.load_digits().x_test
    np.testing.assert_array_equal(t.classify(built.module, x), t.numpy_predict(t.get_params(built.module), x))


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
