"""Contexts: modules importing earlier modules' exports, in C and Python."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mlvm

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from c_build import aot_compile, sanitized_build  # noqa: E402


def test_c_context(tmp_path: Path) -> None:
    mods = [aot_compile(HERE / f"{n}.mlir", tmp_path / f"{n}.c") for n in ("a", "b", "bad")]
    exe = sanitized_build(HERE / "harness.c", mods, tmp_path / "harness")
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1] == "21 passed, 0 failed", run.stdout


def _build(tmp: Path, name: str) -> Path:
    from mlvm.cli import aot_main

    so = tmp / f"{name}.so"
    assert aot_main(["build", str(HERE / f"{name}.mlir"), "-o", str(so), "-q"]) == 0
    return so


@pytest.fixture(scope="module")
def sos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("context")
    return {n: _build(tmp, n) for n in ("a", "b", "bad")}


def negate(x: np.ndarray) -> np.ndarray:
    return -x


def test_python_context_links_exports(sos: dict[str, Path]) -> None:
    ctx = mlvm.Context([sos["a"], sos["b"]], imports={"negate": negate})
    a, b = ctx["a"], ctx["b"]
    x = np.arange(1, 5, dtype=np.float32)
    for k in range(1, 4):
        assert np.array_equal(b.main(x), -(2 * k * x + 1))
    # b's calls reached a's instance: its state holds the sum.
    assert np.array_equal(a.state["total"], 3 * 2 * x)
    assert np.array_equal(a.accumulate(x), 7 * x)
    assert repr(ctx) == "<mlvm context ['a', 'b']>"
    with pytest.raises(KeyError, match="no module 'c'"):
        ctx["c"]


def test_loaded_modules_are_taken_as_they_are(sos: dict[str, Path]) -> None:
    a = mlvm.load(sos["a"])
    a.state["total"] = np.full(4, 10, np.float32)
    ctx = mlvm.Context([a, sos["b"]], imports={"negate": negate})
    assert ctx["a"] is a
    assert np.array_equal(ctx["b"].main(np.zeros(4, np.float32)), np.full(4, -11, np.float32))


def test_signature_mismatch_names_both_sides(sos: dict[str, Path]) -> None:
    with pytest.raises(ValueError) as info:
        mlvm.Context([sos["a"], sos["bad"]])
    msg = str(info.value)
    assert "bad.so: import 'scale' is scale(arg0: float32 (5,)) -> float32 (5,)" in msg
    assert "a.so exports scale(x: float32 (4,)) -> float32 (4,)" in msg


def test_missing_import_is_named(sos: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="missing import 'negate'"):
        mlvm.Context([sos["a"], sos["b"]])
    with pytest.raises(ValueError, match="missing import 'scale'"):
        mlvm.Context([sos["b"], sos["a"]], imports={"negate": negate})


def test_a_link_runs_one_call_at_a_time(sos: dict[str, Path]) -> None:
    import gc

    ctx = mlvm.Context([sos["a"], sos["b"]], imports={"negate": negate})
    b = ctx["b"]
    ones = np.ones(4, np.float32)
    first = b.main.begin(ones)  # suspended inside a.slow, through the link
    assert first.status == "SUSPENDED"
    second = b.main.begin(2 * ones)  # reaches the same link: refused, not mixed up
    assert second.status == "ERR_BUSY"
    first.resume()
    assert np.array_equal(first.result(), -(2 * ones + 1))
    # A call dropped while suspended in the link frees it for the next one.
    dropped = b.main.begin(ones)
    assert dropped.status == "SUSPENDED"
    del dropped
    gc.collect()
    total = ctx["a"].state["total"]
    assert np.array_equal(b.main(3 * ones), -(total + 6 * ones + 1))
