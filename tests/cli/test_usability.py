"""What a new user meets first at the command line (issue: a new user's first hour)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import mlvm
from mlvm.cli import aot_main, opt_main

BIN = Path(sys.executable).parent
RELU = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "mlvm.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        aot_main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"mlvm-aot {mlvm.__version__}"


def test_no_arguments_print_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert aot_main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: mlvm-aot") and "examples:" in err and "required" not in err


def test_help_explains_output_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        aot_main(["build", "--help"])
    out = capsys.readouterr().out
    assert "OUT.so, a shared object that mlvm.load() reads" in out and "--keep-c" in out


def test_python_dash_m_is_mlvm_aot(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(RELU)
    res = subprocess.run([sys.executable, "-m", "mlvm", "compile", str(src), "-o",
                          str(tmp_path / "m.c")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "m.h").is_file()


def test_build_keeps_the_c_only_when_asked(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(RELU)
    assert aot_main(["build", str(src), "-o", str(tmp_path / "out" / "a.so"), "-q"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.so"]
    assert aot_main(["build", str(src), "-o", str(tmp_path / "out" / "b.so"), "--keep-c", "-q"]) == 0
    assert {"b.c", "b.h", "b.so"} <= {p.name for p in (tmp_path / "out").iterdir()}


def test_progress_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(RELU)
    assert aot_main(["build", str(src), "-o", str(tmp_path / "m.so"), "--verbose"]) == 0
    err = capsys.readouterr().err.splitlines()
    stages = [line.split(":")[1].strip() for line in err if line.startswith("mlvm-aot: ")
              and line.endswith(" s")]
    assert stages == ["parse and verify", "passes", "C emission", "cc"], err
    assert aot_main(["build", str(src), "-o", str(tmp_path / "m.so")]) == 0
    assert capsys.readouterr().err == ""  # not a terminal: quiet


def test_mlvm_opt_lists_mlvm_passes_first_and_its_version(capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per option: no wrapping inside names
    with pytest.raises(SystemExit):
        opt_main(["--help"])
    out = capsys.readouterr().out
    lines = out.splitlines()
    at = next(k for k, line in enumerate(lines) if line.strip().startswith("-p PASSES"))
    passes = " ".join(lines[at:at + 2])  # the option, then its help
    assert "mlvm-canonicalize" in passes and "mlvm-plan-memory" in passes
    assert "dce" not in passes and "cse" not in passes and "--all-passes" in out  # not xDSL's 150
    with pytest.raises(SystemExit):
        opt_main(["--all-passes"])
    listing = capsys.readouterr().out
    assert listing.startswith("mlvm passes: ") and "xDSL passes: " in listing and "cse" in listing
    with pytest.raises(SystemExit):
        opt_main(["--version"])
    assert f"mlvm-opt {mlvm.__version__}" in capsys.readouterr().out


def test_mlvm_opt_c_target_with_params_is_self_contained(tmp_path: Path) -> None:
    import numpy as np

    src = tmp_path / "m.mlir"
    src.write_text("""\
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<2xf32>
  %y = "mlvm.mul"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
""")
    np.savez(tmp_path / "w.npz", w=np.array([2.0, 3.0], np.float32))
    res = subprocess.run([str(BIN / "mlvm-opt"), str(src), "-t", "c", "--params",
                          str(tmp_path / "w.npz")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    c = tmp_path / "out.c"
    c.write_text(res.stdout)
    from mlvm.codegen.cc import INCLUDE_DIR

    cc = subprocess.run(["cc", "-std=c99", "-c", "-I", str(INCLUDE_DIR), str(c), "-o",
                         str(tmp_path / "out.o")], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr


def test_mlvm_opt_reads_onnx_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mlvm-opt takes an .onnx model as mlvm-aot does: the imported module,
    through passes, and `-t c` with the model's own initializers; an input
    of no known kind is a one-line error that says what it reads."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [w])
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    assert opt_main([str(model)]) == 0
    out = capsys.readouterr().out
    assert '"mlvm.matmul"' in out and '"mlvm.relu"' in out
    assert opt_main([str(model), "-p", "mlvm-fuse"]) == 0
    assert "mlvm.fused" in capsys.readouterr().out
    assert opt_main([str(model), "-t", "c"]) == 0
    c = capsys.readouterr().out
    assert "0x3f800000" in c.lower() and "0x40800000" in c.lower()  # w's 1.0 and 4.0, in the C
    bad = tmp_path / "m.txt"
    bad.write_text("x")
    assert opt_main([str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{bad}: error:" in err and ".mlir, .onnx" in err, err
