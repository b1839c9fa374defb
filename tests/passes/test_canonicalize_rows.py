"""mlvm-canonicalize's ElementwiseInRows: ONNX MatMul over a batch ([b, s, k]
by [k, n], which the importer folds into a matmul of [b * s, n]) followed by
a bias, an activation and a residual add: those ops move onto the product's
rows, so that the GEMM applies them in its epilogue (no pass over the
output of its own), and the results stay the same model's. The lit test
tests/filecheck/passes/canonicalize.mlir shows what moves and what stays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlvm
from mlvm.frontend.onnx import import_onnx
from mlvm.pipeline import CompileOptions, compile_to_c


def _model(b: int, s: int, k: int, n: int, seed: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """relu(x @ W + bias) + r, then scaled per row: as exporters write a
    Linear layer on a [b, s, k] input."""
    g = np.random.default_rng(seed)
    w = (g.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    bias = g.standard_normal(n).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["p"]),
        helper.make_node("Add", ["p", "bias"], ["y"]),
        helper.make_node("Relu", ["y"], ["a"]),
        helper.make_node("Add", ["a", "r"], ["z"]),
        helper.make_node("Mul", ["z", "scale"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes, "rows",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [b, s, k]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [b, s, n]),
         helper.make_tensor_value_info("scale", TensorProto.FLOAT, [b, s, 1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [b, s, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, {"w": w, "bias": bias}


# (b, s, k, n): a batch of one, odd primes, a row of one, a wide product
SIZES = [(1, 7, 5, 3), (3, 5, 7, 11), (2, 1, 13, 17), (4, 9, 64, 40)]


@pytest.mark.parametrize("b,s,k,n", SIZES, ids=["b1", "primes", "s1", "wide"])
def test_linear_over_a_batch_runs_in_the_gemm_epilogue(tmp_path: Path, b: int, s: int, k: int, n: int) -> None:
    model, p = _model(b, s, k, n, seed=b * 100 + n)
    path = tmp_path / "rows.onnx"
    onnx.save(model, path)
    module, params = import_onnx(path)
    c = compile_to_c(module, tmp_path / "rows.c", params, str(path), CompileOptions())[0]
    # one GEMM with its epilogue: no kernel call for the adds, no loop after
    assert c.count("mlvm_matmul_epilogue_f32(") == 1, c
    assert "mlvm_add_f32(" not in c
    m = mlvm.compile(path)
    g = np.random.default_rng(b + s + k + n)
    x = g.standard_normal((b, s, k)).astype(np.float32)
    r = g.standard_normal((b, s, n)).astype(np.float32)
    scale = g.standard_normal((b, s, 1)).astype(np.float32)
    got = m.main(x, r, scale)
    x64 = x.astype(np.float64)
    want = (np.maximum(x64 @ p["w"] + p["bias"], 0.0) + r) * scale
    bound = 1e-5 * ((np.abs(x64) @ np.abs(p["w"].astype(np.float64)) + np.abs(p["bias"]) + np.abs(r))
                    * np.abs(scale)) + 1e-30
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= bound)
