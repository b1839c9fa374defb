"""mlvm-sink-constants through the whole pipeline: moving what depends on
no input changes no result and never grows the arena."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xdsl.dialects import func

import mlvm
from mlvm.passes.sink_constants import SinkConstantsPass
from mlvm.pipeline import CompileOptions, make_context, parse_file, parse_module

# A fill read by an op that could move (the transpose) and by one that
# cannot (the add, which writes its result over the fill where it dies):
# moving the transpose past the add read the sum, not the fill.
SHARED_FILL = """\
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %f = "mlvm.fill"() <{value = 1.0 : f32}> : () -> tensor<4x4xf32>
  %s = "mlvm.transpose"(%f) <{perm = array<i64: 1, 0>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = "mlvm.add"(%x, %f) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = "mlvm.matmul"(%a, %s) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m : tensor<4x4xf32>
}
"""

# A 64x64 fill reduced first and then read by a matmul: moving the
# reduction to its user, the last op, kept the fill alive under both later
# matmuls (arena 32,832 -> 49,152 B).
LATE_READER = """\
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %f = "mlvm.fill"() <{value = 1.0 : f32}> : () -> tensor<64x64xf32>
  %s = "mlvm.reduce"(%f) <{kind = "sum", axes = array<i64: 0, 1>, keepdims = true}> : (tensor<64x64xf32>) -> tensor<1x1xf32>
  %a = "mlvm.matmul"(%x, %f) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = "mlvm.matmul"(%a, %a) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = "mlvm.matmul"(%b, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %d = "mlvm.add"(%c, %s) : (tensor<64x64xf32>, tensor<1x1xf32>) -> tensor<64x64xf32>
  func.return %d : tensor<64x64xf32>
}
"""


def arena(path: Path, sink: bool) -> int:
    """The planned arena of the default pipeline, with or without the pass."""
    module, _ = parse_file(path)
    ctx = make_context()
    for p in CompileOptions().passes():
        if sink or not isinstance(p, SinkConstantsPass):
            p.apply(ctx, module)
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
    return int(f.attributes["mlvm.arena_bytes"].value.data)  # type: ignore[attr-defined]


@pytest.mark.parametrize("src", [SHARED_FILL, LATE_READER], ids=["shared-fill", "late-reader"])
def test_same_results_and_no_larger_arena(src: str, tmp_path: Path) -> None:
    path = tmp_path / "m.mlir"
    path.write_text(src)
    m = mlvm.compile(path)
    plain = mlvm.compile(path, options=CompileOptions(inplace=False, fuse=False, canonicalize=False))
    x = np.random.default_rng(3).standard_normal(m.functions["main"].inputs[0].shape).astype(np.float32)
    got, want = m.main(x), plain.main(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,),
                    strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert arena(path, sink=True) <= arena(path, sink=False)


def test_many_moves_before_one_user_keep_their_order() -> None:
    """Fifty ops moved before one user (positions halved as floats had tied
    past about forty and put uses before their definitions)."""
    negs = "\n".join(f'  %n{i} = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>' for i in range(50))
    args = ", ".join(f"%n{i}" for i in range(50))
    types = ", ".join(["tensor<2xf32>"] * 50)
    src = f"""\
func.func @many(%x: tensor<2xf32>) -> (tensor<100xf32>, tensor<2xf32>) {{
  %f = "mlvm.fill"() <{{value = 1.0 : f32}}> : () -> tensor<2xf32>
{negs}
  %r = "mlvm.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %c = "mlvm.concat"({args}) <{{axis = 0 : i64}}> : ({types}) -> tensor<100xf32>
  func.return %c, %r : tensor<100xf32>, tensor<2xf32>
}}
"""
    module = parse_module(make_context(), src, "many.mlir")
    SinkConstantsPass().apply(make_context(), module)
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
    names = [o.name for o in f.body.block.ops]
    assert names == ["mlvm.relu", "mlvm.fill", *["mlvm.neg"] * 50, "mlvm.concat", "func.return"]
    negs_in_order = [o for o in f.body.block.ops if o.name == "mlvm.neg"]
    assert [n.results[0].name_hint for n in negs_in_order] == [f"n{i}" for i in range(50)]
