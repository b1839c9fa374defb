"""The shared-memory communicator from C: four ranks on threads, built with
ThreadSanitizer (any report fails), and with ASan/UBSan."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mlvm.codegen.cc import INCLUDE_DIR, runtime_sources

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from c_build import SANITIZE, TESTS, aot_compile  # noqa: E402


@pytest.mark.parametrize("sanitizer", ["thread", "address"])
def test_four_ranks_on_threads(tmp_path: Path, sanitizer: str) -> None:
    model = aot_compile(HERE / "model.mlir", tmp_path / "model.c")
    flags = ["-fsanitize=thread"] if sanitizer == "thread" else SANITIZE
    exe = tmp_path / "harness"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-g", "-O1", *flags, "-pthread",
         "-I", str(INCLUDE_DIR), "-I", str(TESTS), "-I", str(tmp_path), str(HERE / "harness.c"),
         str(model), *map(str, runtime_sources()), "-lm", "-o", str(exe)],
        check=True,
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING: ThreadSanitizer" not in run.stderr, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "17 passed, 0 failed", run.stdout
