"""begin / resume, imports, queues and checks, from Python."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mlvm

MODEL = Path(__file__).parent / "model.mlir"


def scale(c: np.ndarray, s: np.ndarray) -> np.ndarray:
    return c * s


@pytest.fixture(scope="module")
def m() -> mlvm.Module:
    return mlvm.compile(MODEL, imports={"scale": scale}, queue_capacity=4)


def steps_ref(x: np.ndarray) -> np.ndarray:
    return np.tanh(np.exp(x)) * x


def test_describes_suspension(m: mlvm.Module) -> None:
    assert m.functions["steps"].suspends and m.functions["pipe"].suspends
    assert set(m.queues) == {"in", "out"}


def test_yield_suspends_and_resumes(m: mlvm.Module) -> None:
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    call = m.steps.begin(x)
    assert (call.status, call.resume_point) == ("SUSPENDED", 1)
    assert (call.resume(), call.resume_point) == ("SUSPENDED", 2)
    assert call.resume() == "OK" and call.done
    np.testing.assert_allclose(call.result(), steps_ref(x), rtol=1e-6)
    assert call.resume() == "OK"  # an ended call keeps its status


def test_hundred_interleaved_calls_match_sequential(m: mlvm.Module) -> None:
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(8).astype(np.float32) for _ in range(100)]
    sequential = [m.steps(x) for x in xs]
    calls = [m.steps.begin(x) for x in xs]
    rounds = 0
    while not all(c.done for c in calls):
        for c in calls[rounds % 3 :: 1 + rounds % 2]:  # uneven round-robin
            c.resume()
        rounds += 1
    for c, want in zip(calls, sequential, strict=True):
        assert np.array_equal(c.result().view(np.uint32), want.view(np.uint32))


def test_queue_empty_suspends_then_native_call(m: mlvm.Module) -> None:
    q_in, q_out = m.queues["in"], m.queues["out"]
    s = np.array(3.0, np.float32)
    call = m.pipe.begin(s)
    assert call.status == "SUSPENDED" and call.resume_point == 1  # waits on "in"
    assert call.resume() == "SUSPENDED" and call.resume_point == 1
    a, b = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    assert q_in.push(a) and len(q_in) == 1
    assert call.resume() == "SUSPENDED" and call.resume_point == 2  # the yield
    assert call.resume() == "SUSPENDED" and call.resume_point == 3  # "in" empty again
    q_in.push(b)
    assert call.resume() == "OK"
    np.testing.assert_array_equal(call.result(), (a + b) * 3)
    np.testing.assert_array_equal(q_out.pop(), (a + b) * 3)
    assert q_out.pop() is None


def test_queue_full_suspends_push(m: mlvm.Module) -> None:
    q_in, q_out = m.queues["in"], m.queues["out"]
    for _ in range(4):
        assert q_out.push(np.zeros(4, np.float32))
    assert not q_out.push(np.zeros(4, np.float32))  # capacity 4
    q_in.push(np.ones(4, np.float32))
    q_in.push(np.ones(4, np.float32))
    call = m.pipe.begin(np.array(1.0, np.float32))
    while call.resume_point < 5 and not call.done:
        call.resume()
    assert call.status == "SUSPENDED" and call.resume_point == 5  # push waits
    for _ in range(4):
        q_out.pop()
    assert call.resume() == "OK"
    np.testing.assert_array_equal(q_out.pop(), np.full(4, 2.0, np.float32))


def test_would_block_import_is_retried() -> None:
    answers = iter([mlvm.WOULD_BLOCK, mlvm.WOULD_BLOCK, None])
    seen = []

    def slow(c: np.ndarray, s: np.ndarray) -> object:
        seen.append(c.copy())
        a = next(answers)
        return a if a is mlvm.WOULD_BLOCK else c * s

    m2 = mlvm.compile(MODEL, imports={"scale": slow})
    m2.queues["in"].push(np.ones(4, np.float32))
    m2.queues["in"].push(np.ones(4, np.float32))
    call = m2.pipe.begin(np.array(5.0, np.float32))
    while len(seen) < 3:
        assert call.resume() in ("SUSPENDED", "OK")
        if call.done:
            break
    assert call.status == "OK" and len(seen) == 3
    np.testing.assert_array_equal(call.result(), np.full(4, 10.0, np.float32))


def test_native_exception_surfaces() -> None:
    def broken(c: np.ndarray, s: np.ndarray) -> np.ndarray:
        raise RuntimeError("sensor offline")

    m2 = mlvm.compile(MODEL, imports={"scale": broken})
    m2.queues["in"].push(np.ones(4, np.float32))
    m2.queues["in"].push(np.ones(4, np.float32))
    call = m2.pipe.begin(np.array(1.0, np.float32))
    with pytest.raises(mlvm.MlvmCallError, match="sensor offline"):
        while not call.done:
            call.resume()


def test_missing_import_fails_at_instantiation() -> None:
    with pytest.raises(ValueError, match="missing import 'scale'"):
        mlvm.compile(MODEL)


def test_check_passes_and_fails_with_location(m: mlvm.Module) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    i = np.arange(3, dtype=np.int32)
    np.testing.assert_array_equal(m.checked(x, x + np.float32(5e-4), i), -x)
    y = x.copy()
    y[1, 0] += 0.5
    y[0, 2] += 0.01
    call = m.checked.begin(x, y, i)
    assert call.status == "ERR_CHECK"
    msg = call.check_message()
    assert msg is not None
    assert "model.mlir:24:3: mlvm.check_close failed" in msg
    assert "flat index 3: got 3, want 3.5" in msg
    with pytest.raises(mlvm.MlvmCallError, match="model.mlir:24:3"):
        m.checked(x, y, i)


def test_call_waiting_on_queue_is_not_run_to_end(m: mlvm.Module) -> None:
    with pytest.raises(mlvm.MlvmCallError, match="waits on a queue"):
        m.pipe(np.array(1.0, np.float32))
