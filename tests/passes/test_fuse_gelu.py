"""mlvm-fuse-gelu: GELU's erf form written out as ops (PyTorch's export)
becomes one mlvm.gelu, whose results stay within the chain's accuracy of
the exact GELU; with the pass off the chain is computed as written. The lit
test tests/filecheck/passes/fuse_gelu.mlir shows which spellings are fused
and which are left alone."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import mlvm
from mlvm.cli import aot_main
from mlvm.pipeline import CompileOptions, compile_to_c, parse_file

CHAIN = """func.func @{name}(%x: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{
  %s2 = "mlvm.constant"() <{{value = dense<1.41421354> : tensor<f32>}}> : () -> tensor<f32>
  %one = "mlvm.constant"() <{{value = dense<1.0> : tensor<f32>}}> : () -> tensor<f32>
  %half = "mlvm.constant"() <{{value = dense<0.5> : tensor<f32>}}> : () -> tensor<f32>
  %d = "mlvm.div"(%x, %s2) : (tensor<{shape}xf32>, tensor<f32>) -> tensor<{shape}xf32>
  %e = "mlvm.erf"(%d) : (tensor<{shape}xf32>) -> tensor<{shape}xf32>
  %s = "mlvm.add"(%e, %one) : (tensor<{shape}xf32>, tensor<f32>) -> tensor<{shape}xf32>
  %m = "mlvm.mul"(%x, %s) : (tensor<{shape}xf32>, tensor<{shape}xf32>) -> tensor<{shape}xf32>
  %y = "mlvm.mul"(%m, %half) : (tensor<{shape}xf32>, tensor<f32>) -> tensor<{shape}xf32>
  func.return %y : tensor<{shape}xf32>
}}
"""
SHAPES = {"one": (1,), "odd": (1031,), "mat": (3, 17)}
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-38, 1e38, -1e38, 5.0, -5.0,
                  -10.0, 0.5, -0.5, 6.0, -6.0], np.float32)


def _exact(x: np.ndarray) -> np.ndarray:
    """GELU in float64; -inf gives NaN (-inf times 1 + erf = 0), as the chain does."""
    flat = [0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) if math.isfinite(v) else
            (v if v > 0 or math.isnan(v) else math.nan) for v in x.astype(np.float64).ravel()]
    return np.array(flat, np.float64).reshape(x.shape)


def _check(got: np.ndarray, x: np.ndarray) -> None:
    """Within 4 ulp of the exact GELU, or 2^-22 |x| where 1 + erf cancels."""
    want = _exact(x)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = np.isfinite(want)
    assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)].astype(np.float32))
    err = np.abs(got[fin].astype(np.float64) - want[fin])
    bound = np.maximum(4 * np.spacing(np.abs(want[fin]).astype(np.float32)).astype(np.float64),
                       2.0 ** -22 * np.abs(x[fin].astype(np.float64)))
    assert np.all(err <= bound), (err - bound).max()


def test_chain_becomes_one_gelu_within_the_chains_accuracy(tmp_path: Path) -> None:
    src = tmp_path / "chain.mlir"
    src.write_text("\n".join(CHAIN.format(name=n, shape="x".join(map(str, s))) for n, s in SHAPES.items()))
    fused_c = compile_to_c(parse_file(src)[0], tmp_path / "a.c", {}, str(src))[0]
    plain_c = compile_to_c(parse_file(src)[0], tmp_path / "b.c", {}, str(src),
                           options=CompileOptions(fuse_gelu=False))[0]
    assert fused_c.count("mlvm_gelu_erf_f32(") == 3 and "mlvm_erff" not in fused_c
    assert "mlvm_gelu_erf" not in plain_c and "mlvm_erff" in plain_c
    fused = mlvm.compile(src)
    plain = mlvm.compile(src, options=CompileOptions(fuse_gelu=False))
    g = np.random.default_rng(7)
    for name, shape in SHAPES.items():
        x = (4 * g.standard_normal(shape)).astype(np.float32)
        if name == "odd":
            x[: EDGES.size] = EDGES
        for m in (fused, plain):
            _check(getattr(m, name)(x), x)
    # near the largest float the chain's x (1 + erf) overflows; h + h erf does not
    big = np.full(SHAPES["odd"], 3.4e38, np.float32)
    assert np.all(fused.odd(big) == big) and np.all(np.isinf(plain.odd(big)))


def test_pytorch_export_runs_as_one_kernel(tmp_path: Path) -> None:
    """The ONNX graph torch.onnx.export writes for nn.GELU(): the importer's
    ops reach the pass in a form it fuses (kept by --no-fuse-gelu), and the
    results are within GELU's accuracy and 2^-21 |x| of onnxruntime's."""
    const = [helper.make_tensor(n, TensorProto.FLOAT, [], [v])
             for n, v in (("s2", math.sqrt(2.0)), ("one", 1.0), ("half", 0.5))]
    nodes = [helper.make_node("Div", ["x", "s2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["s"]), helper.make_node("Mul", ["x", "s"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    graph = helper.make_graph(nodes, "gelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 67])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 67])], const)
    path = tmp_path / "gelu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    c_path, plain_path = tmp_path / "gelu.c", tmp_path / "plain.c"
    assert aot_main(["compile", str(path), "-o", str(c_path)]) == 0
    assert "mlvm_gelu_erf_f32(" in c_path.read_text()
    assert aot_main(["compile", str(path), "-o", str(plain_path), "--no-fuse-gelu"]) == 0
    assert "mlvm_gelu_erf" not in plain_path.read_text() and "mlvm_erff(" in plain_path.read_text()
    x = (3 * np.random.default_rng(3).standard_normal((5, 67))).astype(np.float32)
    got = mlvm.compile(path).main(x)
    _check(got, x)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    want = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert np.all(np.abs(got - want) <= 2.0 ** -21 * np.maximum(np.abs(x), 1e-30))
