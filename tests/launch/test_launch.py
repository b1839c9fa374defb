"""Launch: programs run on a VM's tensors, from C (threads under TSan, and
ASan/UBSan) and from Python (mlvm.eager.VM.launch)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm import eager

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from c_build import aot_compile, sanitized_build  # noqa: E402


@pytest.mark.parametrize("sanitizer", ["thread", "address"])
def test_c_launch(tmp_path: Path, sanitizer: str) -> None:
    model = aot_compile(HERE / "program.mlir", tmp_path / "model.c")
    exe = sanitized_build(HERE / "harness.c", [model], tmp_path / "harness", sanitizer)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING: ThreadSanitizer" not in run.stderr, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "16 passed, 0 failed", run.stdout


def probe(x: np.ndarray) -> np.ndarray:
    return x


@pytest.fixture(scope="module")
def program() -> mlvm.Module:
    return mlvm.compile(HERE / "program.mlir", imports={"probe": probe})


def test_python_launch_interleaves_with_eager_ops(program: mlvm.Module) -> None:
    program.reset_state()
    with eager.VM() as vm:
        x = vm.tensor(np.ones(64, np.float32))
        before = vm.consumed
        y, s = vm.launch(program, "step", [x])
        assert np.array_equal(vm.read(y), np.full(64, 3, np.float32)) and vm.read(s) == 192
        # The VM's scratch for the program counts in what it holds.
        assert vm.consumed >= before + program.functions["step"].arena_bytes + 64 * 4
        assert vm.consumed_mib == vm.consumed / 2**20
        z = vm.tensor(shape=(64,), dtype=np.float32)
        vm.exec("add", z, y, x)                        # eager, on the program's output
        y2, s2 = vm.launch(program, "step", [z], [y, s])  # into existing tensors
        assert (y2, s2) == (y, s)
        assert np.array_equal(vm.read(y), np.full(64, 13, np.float32))
        # The module's own state moved with both launches.
        assert np.array_equal(program.state["total"], np.full(64, 5, np.float32))


def test_python_launch_errors(program: mlvm.Module) -> None:
    with eager.VM() as vm:
        x = vm.tensor(np.ones(64, np.float32))
        wrong = vm.tensor(np.ones(8, np.float32))
        with pytest.raises(eager.EagerError, match="ERR_SHAPE"):
            vm.launch(program, "step", [wrong])
        y, s = vm.launch(program, "step", [x])
        with pytest.raises(eager.EagerError, match="ERR_INVALID"):
            vm.launch(program, "step", [x], [x, s])
        with pytest.raises(KeyError):
            vm.launch(program, "nope", [x])
        with pytest.raises(ValueError, match="takes 1 inputs"):
            vm.launch(program, "step", [])


def test_python_launches_from_threads_are_serialized(program: mlvm.Module) -> None:
    program.reset_state()
    with eager.VM() as vm:
        xs = [vm.tensor(np.ones(64, np.float32)) for _ in range(4)]
        outs = [(vm.tensor(shape=(64,), dtype=np.float32), vm.tensor(shape=(), dtype=np.float32))
                for _ in range(4)]
        errors: list[BaseException] = []

        def work(k: int) -> None:
            try:
                for _ in range(50):
                    vm.launch(program, "step", [xs[k]], list(outs[k]))
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        # 200 launches each added 1 to the state: none was lost to a race.
        assert np.array_equal(program.state["total"], np.full(64, 200, np.float32))
