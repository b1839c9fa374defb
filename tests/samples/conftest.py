"""Fixtures shared by the sample tests: importing sample scripts, building
sample models, and checking generated C with strict compiler flags."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from mlvm.cli import aot_main
from mlvm.codegen.cc import INCLUDE_DIR

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES_DIR = REPO_ROOT / "samples"

#: What the project promises of its generated C.
STRICT_C99 = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic")


def load_sample(relpath: str) -> ModuleType:
    """Import a sample script (`samples/<relpath>`) as a module, without running it."""
    path = SAMPLES_DIR / relpath
    name = "sample_" + path.with_suffix("").as_posix().replace("/", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def sample() -> Callable[[str], ModuleType]:
    """`sample("mlp/demo.py")` imports that sample script."""
    return load_sample


def _aot_build(mlir: Path, out_dir: Path, params: Path | None = None) -> Path:
    """`mlvm-aot build MLIR -o OUT_DIR/<stem>.so --keep-c`: the .so, with the
    generated .c and .h beside it."""
    so = out_dir / f"{mlir.stem}.so"
    args = ["build", str(mlir), "-o", str(so), "--keep-c"]
    if params is not None:
        args += ["--params", str(params)]
    assert aot_main(args) == 0, f"mlvm-aot {' '.join(args)} failed"
    assert so.is_file() and so.with_suffix(".c").is_file() and so.with_suffix(".h").is_file()
    return so


def _check_strict_c99(compiler: str, c_path: Path) -> None:
    """Compile a generated module with STRICT_C99: the .c both as plain C (as
    firmware builds it) and with MLVM_SO_ENTRY (as shared objects are built),
    and its header alone, to show it is self-contained. Any diagnostic fails."""
    if shutil.which(compiler) is None:
        if compiler == "gcc":
            pytest.fail("gcc is not on PATH")
        pytest.skip(f"{compiler} is not on PATH (`make test` installs it)")
    header_only = c_path.with_name(f"{c_path.stem}_header_{compiler}.c")
    header_only.write_text(f'#include "{c_path.with_suffix(".h").name}"\n')
    units = [
        (c_path, [], "plain"),
        (c_path, ["-DMLVM_SO_ENTRY"], "so"),
        (header_only, [], "header"),
    ]
    for src, defines, tag in units:
        obj = c_path.with_name(f"{c_path.stem}_{compiler}_{tag}.o")
        cmd = [
            compiler, *STRICT_C99, *defines, "-I", str(INCLUDE_DIR), "-c", str(src),
            "-o", str(obj),
        ]
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
        assert res.stderr.strip() == "", f"{' '.join(cmd)} printed diagnostics:\n{res.stderr}"
        assert obj.is_file() and obj.stat().st_size > 0, f"{obj} was not written"


@pytest.fixture(scope="session")
def aot_build() -> Callable[[Path, Path, Path | None], Path]:
    """`aot_build(mlir, out_dir, params)` runs `mlvm-aot build` and returns the .so."""
    return _aot_build


@pytest.fixture(scope="session")
def strict_c99() -> Callable[[str, Path], None]:
    """`strict_c99(compiler, c_path)` asserts the generated C compiles cleanly."""
    return _check_strict_c99
