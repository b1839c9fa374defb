"""Bad input to `mlvm-aot` and `mlvm.load`: one clear line, exit 1, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mlvm

BIN = Path(sys.executable).parent
GOOD = """\
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<3x4xf32>
  %0 = "mlvm.matmul"(%x, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
"""


def aot(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "mlvm-aot"), *map(str, args)], capture_output=True, text=True
    )


def expect_error(res: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert res.returncode == 1, res
    err = res.stderr.strip()
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, (f, err)
    return err


@pytest.fixture
def good(tmp_path: Path) -> Path:
    src = tmp_path / "model.mlir"
    src.write_text(GOOD)
    np.savez(tmp_path / "w.npz", w=np.ones((3, 4), np.float32))
    return src


def test_syntax_error(tmp_path: Path) -> None:
    src = tmp_path / "bad.mlir"
    src.write_text("func.func @main(%x: tensor<2xf32> -> tensor<2xf32> {\n}\n")
    expect_error(aot("compile", src, "-o", tmp_path / "o.c"), "bad.mlir:1:", "error:")


def test_unknown_op(tmp_path: Path) -> None:
    src = tmp_path / "bad.mlir"
    src.write_text(GOOD.replace("mlvm.matmul", "mlvm.matmult"))
    expect_error(
        aot("compile", src, "-o", tmp_path / "o.c"),
        "bad.mlir:3:", "unknown op 'mlvm.matmult'",
    )


def test_shape_mismatch(tmp_path: Path) -> None:
    src = tmp_path / "bad.mlir"
    src.write_text(GOOD.replace("tensor<3x4xf32>", "tensor<5x4xf32>"))
    expect_error(
        aot("compile", src, "-o", tmp_path / "o.c"),
        "bad.mlir:3:3: error: mlvm.matmul", "contraction dims differ (3 vs 5)",
    )


def test_missing_param(tmp_path: Path, good: Path) -> None:
    np.savez(tmp_path / "p.npz", v=np.ones((3, 4), np.float32))
    expect_error(
        aot("compile", good, "-o", tmp_path / "o.c", "--params", tmp_path / "p.npz"),
        "model.mlir:2:3: error: mlvm.param", "parameter 'w' is not in the parameter archive",
    )


def test_misshaped_param(tmp_path: Path, good: Path) -> None:
    np.savez(tmp_path / "p.npz", w=np.ones((4, 3), np.float32))
    expect_error(
        aot("compile", good, "-o", tmp_path / "o.c", "--params", tmp_path / "p.npz"),
        "model.mlir:2:3:", "parameter 'w' has shape (4, 3)", "tensor<3x4xf32>",
    )


def test_param_wrong_dtype(tmp_path: Path, good: Path) -> None:
    np.savez(tmp_path / "p.npz", w=np.ones((3, 4), np.float64))
    expect_error(
        aot("compile", good, "-o", tmp_path / "o.c", "--params", tmp_path / "p.npz"),
        "model.mlir:2:3:", "parameter 'w' has dtype float64", "f32",
    )


def test_params_not_npz(tmp_path: Path, good: Path) -> None:
    (tmp_path / "p.npz").write_text("not a zip")
    expect_error(
        aot("compile", good, "-o", tmp_path / "o.c", "--params", tmp_path / "p.npz"),
        "p.npz: error: not a readable .npz archive",
    )


def test_missing_input(tmp_path: Path) -> None:
    expect_error(aot("compile", tmp_path / "nope.mlir", "-o", tmp_path / "o.c"), "nope.mlir: error: no such file")


def test_wrong_output_suffix(tmp_path: Path, good: Path) -> None:
    expect_error(aot("compile", good, "-o", tmp_path / "o.txt"), "must end in .c")
    expect_error(aot("build", good, "-o", tmp_path / "o.c"), "must end in .so")


def test_compile_and_build(tmp_path: Path, good: Path) -> None:
    res = aot("compile", good, "-o", tmp_path / "m.c", "--params", tmp_path / "w.npz")
    assert res.returncode == 0, res.stderr
    header = (tmp_path / "m.h").read_text()
    assert "#define M_ARENA_BYTES 0u" in header
    assert "mlvm_status_t m_main(void *arena_, const float *in_x, float *out0);" in header
    res = aot("build", good, "-o", tmp_path / "m.so", "--params", tmp_path / "w.npz")
    assert res.returncode == 0, res.stderr
    m = mlvm.load(tmp_path / "m.so")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(m.main(x), x @ np.ones((3, 4), np.float32))


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> mlvm.Module:
    d = tmp_path_factory.mktemp("loader")
    (d / "model.mlir").write_text(GOOD)
    return mlvm.compile(d / "model.mlir", params={"w": np.ones((3, 4), np.float32)})


class TestLoaderBoundary:
    def test_functions(self, module: mlvm.Module) -> None:
        info = module.functions["main"]
        assert info.inputs[0].shape == (2, 3) and info.inputs[0].dtype == np.float32
        assert info.outputs[0].shape == (2, 4)
        assert module.arena_bytes == 0

    def test_wrong_dtype(self, module: mlvm.Module) -> None:
        with pytest.raises(ValueError, match=r"input 0 \('x'\) must have dtype float32, got float64"):
            module.main(np.zeros((2, 3)))

    def test_wrong_shape(self, module: mlvm.Module) -> None:
        with pytest.raises(ValueError, match=r"must have shape \(2, 3\), got \(3, 2\)"):
            module.main(np.zeros((3, 2), np.float32))

    def test_not_contiguous(self, module: mlvm.Module) -> None:
        with pytest.raises(ValueError, match="C-contiguous"):
            module.main(np.zeros((3, 2), np.float32).T)

    def test_not_an_array(self, module: mlvm.Module) -> None:
        with pytest.raises(ValueError, match="must be a numpy array, got list"):
            module.main([[0.0] * 3] * 2)

    def test_arity(self, module: mlvm.Module) -> None:
        with pytest.raises(ValueError, match="takes 1 inputs, got 2"):
            module.main(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))

    def test_unknown_export(self, module: mlvm.Module) -> None:
        with pytest.raises(AttributeError, match="no export 'nope'"):
            module.nope  # noqa: B018


def test_load_foreign_so(tmp_path: Path) -> None:
    src = tmp_path / "foreign.c"
    src.write_text("int foreign(void) { return 1; }\n")
    so = tmp_path / "foreign.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    with pytest.raises(ValueError, match="not an mlvm module"):
        mlvm.load(so)


def test_load_missing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="missing.so: no such file"):
        mlvm.load(tmp_path / "missing.so")
