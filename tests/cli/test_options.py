"""Compile options: memory report and plot, static arena, passes off."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mlvm

import c_build

BIN = Path(sys.executable).parent
MODEL = """\
func.func @main(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = "mlvm.exp"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = "mlvm.neg"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %2 = "mlvm.mul"(%0, %1) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %3 = "mlvm.tanh"(%2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %4 = "mlvm.add"(%3, %0) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %4 : tensor<3x5xf32>
}
"""

HARNESS = r"""
#include <stdio.h>
#include "model.h"
int main(void)
{
    float x[15], y[15];
    int i;
    for (i = 0; i < 15; ++i)
        x[i] = (float)i / 7.0f - 1.0f;
    if (model_main(NULL, x, y) != MLVM_OK)
        return 1;
    for (i = 0; i < 15; ++i)
        printf("%.9g\n", y[i]);
    return 0;
}
"""


def reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x)
    return np.tanh(e * -x) + e


def aot(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "mlvm-aot"), *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    src = tmp_path / "model.mlir"
    src.write_text(MODEL)
    return src


def test_memory_report_and_plot(tmp_path: Path, model: Path) -> None:
    res = aot("compile", model, "-o", tmp_path / "model.c", "--no-fuse",
              "--memory-report", tmp_path / "r.json", "--memory-plot", tmp_path / "r.svg")
    assert res.returncode == 0, res.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    (fr,) = report["functions"]
    assert fr["function"] == "main"
    assert fr["lower_bound_bytes"] <= fr["arena_bytes"] <= 1.05 * fr["lower_bound_bytes"]
    # neg, mul, tanh and add all run in the output buffer; only exp, read
    # again by the add, needs the arena.
    assert fr["arena_bytes"] == 64
    assert fr["intermediate_bytes"] == 4 * 60
    header = (tmp_path / "model.h").read_text()
    assert f"#define MODEL_ARENA_BYTES {fr['arena_bytes']}u" in header
    svg = (tmp_path / "r.svg").read_text()
    assert svg.count("<rect") == 1 + len(fr["buffers"])
    assert "lower bound" in svg


def arena_bytes(tmp_path: Path, model: Path, *flags: str) -> int:
    r = tmp_path / "r.json"
    res = aot("compile", model, "-o", tmp_path / "model.c", "--memory-report", r, *flags)
    assert res.returncode == 0, res.stderr
    return int(json.loads(r.read_text())["functions"][0]["arena_bytes"])


def test_each_pass_saves_memory(tmp_path: Path, model: Path) -> None:
    # Fused, the whole function is one loop writing the output: no arena.
    assert arena_bytes(tmp_path, model) == 0
    assert arena_bytes(tmp_path, model, "--no-fuse") == 64
    assert arena_bytes(tmp_path, model, "--no-fuse", "--no-inplace") == 192


FLAGS = [[], ["--no-fuse"], ["--no-inplace"], ["--no-canonicalize"],
         ["--no-fuse", "--no-inplace", "--no-canonicalize"], ["--alignment", "4"]]


@pytest.mark.parametrize("flags", FLAGS, ids=str)
def test_numerics_unchanged_by_options(tmp_path: Path, model: Path, flags: list[str]) -> None:
    res = aot("build", model, "-o", tmp_path / "model.so", *flags)
    assert res.returncode == 0, res.stderr
    x = np.linspace(-2, 2, 15, dtype=np.float32).reshape(3, 5)
    np.testing.assert_allclose(mlvm.load(tmp_path / "model.so").main(x), reference(x), rtol=1e-6)


def test_static_arena_from_c(tmp_path: Path, model: Path) -> None:
    """The one-shot entry called from plain C, with the static arena (NULL)."""
    res = aot("compile", model, "-o", tmp_path / "model.c", "--arena", "static")
    assert res.returncode == 0, res.stderr
    (tmp_path / "main.c").write_text(HARNESS)
    exe = c_build.build([tmp_path / "main.c", tmp_path / "model.c"], ["-O2"], tmp_path / "harness",
                        [tmp_path])
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    got = np.array([float(v) for v in out.split()], dtype=np.float32)
    x = (np.arange(15, dtype=np.float32) / np.float32(7) - np.float32(1))
    np.testing.assert_allclose(got, reference(x), rtol=1e-6)


CONV = """\
func.func @main(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x9x9xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x9x9xf32>
  %1 = "mlvm.relu"(%0) : (tensor<1x8x9x9xf32>) -> tensor<1x8x9x9xf32>
  func.return %1 : tensor<1x8x9x9xf32>
}
"""


def test_no_workspaces(tmp_path: Path) -> None:
    """--no-workspaces: conv2d without its arena scratch (a smaller arena, the
    memory report lists no workspace), and the same results."""
    src = tmp_path / "conv.mlir"
    src.write_text(CONV)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 4, 9, 9)).astype(np.float32)
    w = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    got = {}
    for flags in ([], ["--no-workspaces"]):
        r = tmp_path / "r.json"
        res = aot("build", src, "-o", tmp_path / "conv.so", "--memory-report", r, *flags)
        assert res.returncode == 0, res.stderr
        (fr,) = json.loads(r.read_text())["functions"]
        names = [b["value"] for b in fr["buffers"]]
        assert any(n.startswith("workspace of ") for n in names) == (flags == [])
        got[bool(flags)] = (fr["arena_bytes"], mlvm.load(tmp_path / "conv.so").main(x, w))
    assert got[True][0] < got[False][0]
    np.testing.assert_array_equal(got[True][1], got[False][1])
