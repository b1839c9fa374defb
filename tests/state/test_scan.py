"""`Function.scan`: many steps of one function in one call, against the same
steps called one by one (outputs and state, bit for bit), on the state
model of tests/state: stepped and fixed inputs, inputs by name, zero and one
step, a suspending function, a failing step, and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mlvm
import mlvm.loader
from mlvm.loader import MlvmCallError

MODEL = Path(__file__).parent / "model.mlir"
RNG = np.random.default_rng(11)
PARAMS = {
    "w0": RNG.standard_normal((3, 5)).astype(np.float32),
    "a0": RNG.standard_normal(7).astype(np.float32),
}


@pytest.fixture(scope="module")
def m() -> mlvm.Module:
    return mlvm.compile(MODEL, params=PARAMS)


@pytest.fixture
def fresh(m: mlvm.Module) -> mlvm.Module:
    m.reset_state()
    return m


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def state_of(m: mlvm.Module) -> dict[str, np.ndarray]:
    return {name: m.state[name] for name in m.state}


@pytest.mark.parametrize("steps", [1, 3, 17])
def test_scan_is_the_steps_one_by_one(fresh: mlvm.Module, steps: int, monkeypatch: pytest.MonkeyPatch) -> None:
    xs = RNG.standard_normal((steps, 4)).astype(np.float32)
    with monkeypatch.context() as mp:
        mp.setattr(mlvm.loader.Function, "_run_to_end", None)  # the runtime loops
        got = fresh.step.scan(xs)
    after_scan = state_of(fresh)
    fresh.reset_state()
    want = np.stack([fresh.step(x) for x in xs])
    assert same_bits(got, want)
    assert all(same_bits(after_scan[k], v) for k, v in state_of(fresh).items())


def test_fixed_and_stepped_inputs_and_names(fresh: mlvm.Module) -> None:
    gs = RNG.standard_normal((5, 3, 5)).astype(np.float32)
    lrs = RNG.uniform(0.01, 0.2, 5).astype(np.float32)
    lr = np.array(0.1, np.float32)
    for kwargs, per_step in (
        ({"g": gs, "lr": lr}, [(g, lr) for g in gs]),  # lr the same at every step
        ({"g": gs, "lr": lrs}, [(g, np.array(r)) for g, r in zip(gs, lrs)]),
    ):
        fresh.reset_state()
        got = fresh.sgd.scan(**kwargs)
        after_scan = state_of(fresh)
        fresh.reset_state()
        want = np.stack([fresh.sgd(*a) for a in per_step])
        assert same_bits(got, want)
        assert all(same_bits(after_scan[k], v) for k, v in state_of(fresh).items())
        assert fresh.state["calls"] == 5


def test_several_outputs_come_back_stacked(fresh: mlvm.Module) -> None:
    xs = RNG.standard_normal((4, 7)).astype(np.float32)
    diff, r = fresh.reread.scan(xs)
    assert diff.shape == (4, 7) and r.shape == (4, 7)
    fresh.reset_state()
    for k, x in enumerate(xs):
        d, rr = fresh.reread(x)
        assert same_bits(diff[k], d) and same_bits(r[k], rr)


def test_zero_steps_run_nothing(fresh: mlvm.Module) -> None:
    got = fresh.step.scan(np.empty((0, 4), np.float32))
    assert got.shape == (0, 4) and got.dtype == np.float32
    assert not fresh.state["count"].any()


@pytest.fixture
def in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails any step run from Python: the steps of functions without
    natives (checks and yields included) run in the runtime's loop."""
    def from_python(*_: object) -> None:
        raise AssertionError("a step ran from Python")
    monkeypatch.setattr(mlvm.loader.Function, "_run_to_end", from_python)


def test_a_suspending_function_steps_too(fresh: mlvm.Module, in_c: None) -> None:
    xs = RNG.standard_normal((3, 4)).astype(np.float32)
    got = fresh.slow_step.scan(xs)
    assert same_bits(got, np.cumsum(xs, axis=0, dtype=np.float32))
    assert same_bits(fresh.state["count"], got[-1])


def test_a_failing_step_names_itself_and_keeps_the_steps_before(fresh: mlvm.Module, in_c: None) -> None:
    xs = np.arange(16, dtype=np.float32).reshape(4, 4)
    want = xs.copy()
    want[2, 1] += 1  # step 2 fails its check
    with pytest.raises(MlvmCallError, match=r"checked_step: step 2 of 4: .*model.mlir:\d+:\d+: mlvm.check_eq failed"):
        fresh.checked_step.scan(xs, want)
    assert same_bits(fresh.state["count"], xs[0] + xs[1])


def test_yields_and_checks_mixed_over_many_steps(fresh: mlvm.Module, in_c: None) -> None:
    """Every step of slow_step suspends once and resumes; checked_step's
    passing checks: both equal the steps one by one."""
    xs = RNG.standard_normal((9, 4)).astype(np.float32)
    a = fresh.slow_step.scan(xs)
    b = fresh.checked_step.scan(xs, xs)
    assert same_bits(a, np.cumsum(xs, axis=0, dtype=np.float32))
    count, want = a[-1], []
    for x in xs:  # the counter goes on from where slow_step left it
        count = count + x
        want.append(count)
    assert same_bits(b, np.stack(want))


@pytest.mark.parametrize(
    "args, words",
    [
        ((np.ones(4, np.float32),), "no input has a leading axis of steps"),
        ((np.ones((2, 5), np.float32),), "must be float32 (4,) or steps of it"),
        ((np.ones((2, 4), np.float64),), "must be float32 (4,) or steps of it"),
        ((np.ones((4, 2), np.float32).T,), "must be C-contiguous and aligned"),
        ((np.ones((2, 2, 4), np.float32),), "must have shape (4,)"),
    ],
)
def test_refusals(fresh: mlvm.Module, args: tuple[np.ndarray, ...], words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        fresh.step.scan(*args)
    assert not fresh.state["count"].any()


def test_stepped_inputs_must_agree_on_steps(fresh: mlvm.Module) -> None:
    with pytest.raises(ValueError, match="has 3 steps, an earlier input 2"):
        fresh.checked_step.scan(np.ones((2, 4), np.float32), np.ones((3, 4), np.float32))


def test_a_function_without_results(fresh: mlvm.Module, in_c: None) -> None:
    """Called, with out=(), and scanned: nothing comes back, the state moves."""
    x = np.ones(4, np.float32)
    assert fresh.add_only(x) == ()
    assert fresh.add_only(x, out=()) == ()
    assert fresh.add_only(x=x) == ()
    with pytest.raises(ValueError, match="out= needs 0 arrays, got 1"):
        fresh.add_only(x, out=(np.empty(4, np.float32),))
    assert fresh.add_only.scan(np.ones((5, 4), np.float32)) == ()
    assert same_bits(fresh.state["count"], np.full(4, 8.0, np.float32))
