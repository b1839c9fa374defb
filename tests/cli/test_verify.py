"""`mlvm-aot verify`: the compiled model against onnxruntime, per output the
largest absolute error and ulp distance, exit 1 past the tolerance."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from mlvm.verify import ulp_distance

AOT = [sys.executable, "-m", "mlvm"]


def save(path: Path, nodes: list[onnx.NodeProto], inputs: dict[str, tuple[int, tuple[int, ...]]],
         outputs: dict[str, int], inits: dict[str, np.ndarray] | None = None,
         opset: int = 17) -> Path:
    g = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info(n, t, list(s)) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(o, t, None) for o, t in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AOT, "verify", *args], capture_output=True, text=True, timeout=300)


def test_a_model_that_agrees(tmp_path: Path) -> None:
    w = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    m = save(tmp_path / "m.onnx", [helper.make_node("MatMul", ["x", "w"], ["y"]),
                                   helper.make_node("ArgMax", ["y"], ["i"], axis=1)],
             {"x": (TensorProto.FLOAT, (5, 4))}, {"y": TensorProto.FLOAT, "i": TensorProto.INT64},
             {"w": w})
    res = verify(str(m), "--seed", "3")
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("y: float32 [5, 3]: max abs error ") and "max ulp distance" in lines[0]
    assert lines[1] == "i: int64 [5, 1]: 0 of 5 elements differ"  # keepdims


def test_a_difference_past_the_tolerance_exits_1(tmp_path: Path) -> None:
    """Resize with align_corners and a fractional scale: onnxruntime floors
    the output length first, the operator's definition (which mlvm follows)
    does not, so they pick other pixels."""
    m = save(tmp_path / "r.onnx",
             [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest",
                               coordinate_transformation_mode="align_corners")],
             {"x": (TensorProto.FLOAT, (1, 1, 5, 1))}, {"y": TensorProto.FLOAT},
             {"s": np.asarray([1, 1, 0.5, 1], np.float32)}, opset=19)
    res = verify(str(m))
    assert res.returncode == 1
    assert res.stdout.rstrip().endswith("-- past the tolerance")


def test_inputs_from_an_archive(tmp_path: Path) -> None:
    m = save(tmp_path / "n.onnx", [helper.make_node("Neg", ["x"], ["y"])],
             {"x": (TensorProto.FLOAT, (3,))}, {"y": TensorProto.FLOAT})
    np.savez(tmp_path / "x.npz", x=np.asarray([1.0, -2.0, np.inf], np.float32))
    res = verify(str(m), "--inputs", str(tmp_path / "x.npz"), "--rtol", "0", "--atol", "0")
    assert res.returncode == 0 and "max ulp distance 0" in res.stdout
    np.savez(tmp_path / "other.npz", z=np.zeros(3, np.float32))
    res = verify(str(m), "--inputs", str(tmp_path / "other.npz"))
    assert res.returncode == 1
    assert res.stderr.strip() == f"{tmp_path / 'other.npz'}: error: no array for input 'x'"


def test_a_model_onnxruntime_refuses_is_one_line(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    src.write_text('func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
                   '  %0 = "mlvm.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n'
                   '  func.return %0 : tensor<2xf32>\n}\n')
    res = verify(str(src))
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert res.stderr.startswith(f"{src}: error: onnxruntime: ")


def test_ulp_distance() -> None:
    one = np.float32(1.0)
    nxt = np.nextafter(one, np.float32(2.0))
    assert ulp_distance(np.asarray([one]), np.asarray([nxt])) == 1
    # across zero: -min_subnormal .. +min_subnormal is 2 steps (through +-0)
    tiny = np.float32(1e-45)
    assert ulp_distance(np.asarray([-tiny]), np.asarray([tiny])) == 2
    assert ulp_distance(np.asarray([np.nan], np.float32), np.asarray([np.nan], np.float32)) == 0
