"""Generated modules and the runtime files they use build for a Cortex-M4."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlvm.codegen.cc import INCLUDE_DIR
from mlvm.codegen.mcu import RUNTIME_FILES

ROOT = Path(__file__).resolve().parents[2]
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
       "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-ffreestanding"]

pytestmark = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                                reason="arm-none-eabi-gcc not installed (make test installs it)")


def compile_model(src: Path, out: Path, *extra: str) -> Path:
    aot = Path(sys.executable).parent / "mlvm-aot"
    res = subprocess.run([str(aot), "compile", str(src), "-o", str(out), *extra],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return out


@pytest.mark.parametrize("runtime_file", RUNTIME_FILES, ids=lambda p: p.name)
def test_runtime_file_builds(runtime_file: Path) -> None:
    subprocess.run([*ARM, "-I", str(INCLUDE_DIR), "-c", str(runtime_file), "-o", "/dev/null"], check=True)


@pytest.mark.parametrize(
    "model", ["samples/streaming/stream.mlir", "tests/coroutines/model.mlir"], ids=lambda m: Path(m).stem
)
def test_module_builds(model: str, tmp_path: Path) -> None:
    c = compile_model(ROOT / model, tmp_path / "model.c", "--arena", "static")
    subprocess.run([*ARM, "-I", str(INCLUDE_DIR), "-I", str(tmp_path), "-c", str(c), "-o", "/dev/null"],
                   check=True)


def test_mlp_builds(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "samples/mlp/gen_params.py"), str(tmp_path)], check=True,
                   stdout=subprocess.DEVNULL)
    c = compile_model(ROOT / "samples/mlp/mlp.mlir", tmp_path / "mlp.c", "--params", str(tmp_path / "mlp.npz"))
    subprocess.run([*ARM, "-I", str(INCLUDE_DIR), "-I", str(tmp_path), "-c", str(c), "-o", str(tmp_path / "mlp.o")],
                   check=True)
    size = subprocess.run(["arm-none-eabi-size", str(tmp_path / "mlp.o")], capture_output=True, text=True)
    assert size.returncode == 0
    text, data = (int(v) for v in size.stdout.splitlines()[1].split()[:2])
    assert text >= 4 * 269322  # the weights are in flash (.rodata counts as text)
