"""mlvm-fuse's reduction tails through the whole pipeline: an elementwise
tree ending in an f32 sum, mean or max over its last axes gives the bits
the unfused ops give (the runtime's row functions), for rows shorter than,
equal to and longer than the eight lanes and than a chunk, with NaN, -0.0
(zeros of both signs, whose max depends on the order) and infinities, from f32 and from dequantized 8-bit inputs; and the tree's
value takes no arena."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm.dialect.fused import FusedOp
from mlvm.pipeline import CompileOptions, lower, make_context, parse_file, parse_module

# (rows, row shape) pairs, more rows than a chunk holds (TAIL_CHUNK): rows
# of 1, 7, 8, 9, 16, 125 (5 x 25), 131 and 600 elements, over one reduced
# axis or two, the last chunk whole or not.
SHAPES = [((600,), (1,)), ((80,), (7,)), ((70,), (8,)), ((60,), (9,)), ((4, 10), (16,)),
          ((2, 5), (5, 25)), ((5,), (131,)), ((3,), (600,))]
KINDS = ("sum", "mean", "max", "min")


def ttype(shape: tuple[int, ...], e: str = "f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{e}>"


def functions() -> list[tuple[str, str, tuple[int, ...], bool]]:
    """(name, text, input shape, 8-bit input) of each case."""
    out = []
    for i, (rows, row) in enumerate(SHAPES):
        shape = rows + row
        axes = ", ".join(str(len(rows) + k) for k in range(len(row)))
        kept = rows + (1,) * len(row)
        for kind in KINDS:
            for q in (False, True):
                name = f"f{i}_{kind}_{'q' if q else 'f'}"
                t, r = ttype(shape), ttype(kept)
                if q:  # a dequantized u8 map (scale and zero point constants)
                    head = [f'  %s = "mlvm.constant"() <{{value = dense<0.03125> : tensor<f32>}}> : () -> tensor<f32>',
                            f'  %z = "mlvm.constant"() <{{value = dense<7> : tensor<ui8>}}> : () -> tensor<ui8>',
                            f'  %v = "mlvm.dequantize"(%x, %s, %z) : ({ttype(shape, "ui8")}, tensor<f32>, tensor<ui8>) -> {t}']
                    arg = ttype(shape, "ui8")
                else:  # a tree of two ops with a scalar operand
                    head = [f'  %k = "mlvm.constant"() <{{value = dense<1.5> : tensor<f32>}}> : () -> tensor<f32>',
                            f'  %m = "mlvm.mul"(%x, %k) : ({t}, tensor<f32>) -> {t}',
                            f'  %v = "mlvm.add"(%m, %x) : ({t}, {t}) -> {t}']
                    arg = t
                text = "\n".join([
                    f"func.func @{name}(%x: {arg}) -> {r} {{", *head,
                    f'  %y = "mlvm.reduce"(%v) <{{kind = "{kind}", axes = array<i64: {axes}>, keepdims = true}}>'
                    f" : ({t}) -> {r}",
                    f"  func.return %y : {r}", "}"])
                out.append((name, text, shape, q))
    return out


# More forms, each (name, text, input shape, input dtype): no kept dims
# (keepdims false, negative axes), unit dims among the reduced and kept
# axes, an f16 input cast to f32.
EXTRA: list[tuple[str, str, tuple[int, ...], type]] = [
    ("nokeep", """func.func @nokeep(%x: tensor<2x5x5x25xf32>) -> tensor<2x5xf32> {
  %e = "mlvm.exp"(%x) : (tensor<2x5x5x25xf32>) -> tensor<2x5x5x25xf32>
  %y = "mlvm.reduce"(%e) <{kind = "mean", axes = array<i64: -1, -2>}> : (tensor<2x5x5x25xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}""", (2, 5, 5, 25), np.float32),
    ("units", """func.func @units(%x: tensor<600x1x8x1xf32>) -> tensor<600x1x1x1xf32> {
  %e = "mlvm.neg"(%x) : (tensor<600x1x8x1xf32>) -> tensor<600x1x8x1xf32>
  %y = "mlvm.reduce"(%e) <{kind = "max", axes = array<i64: 1, 2, 3>, keepdims = true}> : (tensor<600x1x8x1xf32>) -> tensor<600x1x1x1xf32>
  func.return %y : tensor<600x1x1x1xf32>
}""", (600, 1, 8, 1), np.float32),
    ("half", """func.func @half(%x: tensor<1x40x5x5xf16>) -> tensor<1x40x1x1xf32> {
  %c = "mlvm.cast"(%x) : (tensor<1x40x5x5xf16>) -> tensor<1x40x5x5xf32>
  %r = "mlvm.relu"(%c) : (tensor<1x40x5x5xf32>) -> tensor<1x40x5x5xf32>
  %y = "mlvm.reduce"(%r) <{kind = "sum", axes = array<i64: 2, 3>, keepdims = true}> : (tensor<1x40x5x5xf32>) -> tensor<1x40x1x1xf32>
  func.return %y : tensor<1x40x1x1xf32>
}""", (1, 40, 5, 5), np.float16),
]


def random_trees(count: int = 24) -> list[tuple[str, str]]:
    """(name, text) of seeded random trees of 1 to 6 elementwise ops over
    two inputs of shape [R, N] and a scalar constant, each ending in a sum,
    mean or max over its last axis: every elementwise op the fusion takes,
    through the tail."""
    g = np.random.default_rng(5)
    binary = ("add", "sub", "mul", "div", "max", "min", "eq", "cmpl")
    unary = ("neg", "exp", "tanh", "sigmoid", "relu", "abs", "sqrt", "log", "erf")
    out = []
    for k in range(count):
        rows, n = (int(g.choice([70, 130, 600])), int(g.choice([1, 5, 8, 9, 16, 33])))
        t = ttype((rows, n))
        vals = ["%x", "%y", "%k"]
        lines = [f"func.func @t{k}(%x: {t}, %y: {t}) -> {ttype((rows, 1))} {{",
                 '  %k = "mlvm.constant"() <{value = dense<0.75> : tensor<f32>}> : () -> tensor<f32>']
        for j in range(int(g.integers(1, 7))):
            full = [v for v in vals if v != "%k"]
            if g.random() < 0.5:
                op = str(g.choice(binary))
                a, b = str(g.choice(full)), str(g.choice(vals))
                tb = "tensor<f32>" if b == "%k" else t
                lines.append(f'  %v{j} = "mlvm.{op}"({a}, {b}) : ({t}, {tb}) -> {t}')
            else:
                op = str(g.choice(unary))
                lines.append(f'  %v{j} = "mlvm.{op}"({g.choice(full)}) : ({t}) -> {t}')
            vals.append(f"%v{j}")
        kind = str(g.choice(KINDS))
        lines += [f'  %r = "mlvm.reduce"({vals[-1]}) <{{kind = "{kind}", axes = array<i64: 1>, keepdims = true}}>'
                  f" : ({t}) -> {ttype((rows, 1))}", f"  func.return %r : {ttype((rows, 1))}", "}"]
        out.append((f"t{k}", "\n".join(lines)))
    return out


def test_random_trees_give_the_unfused_bits(tmp_path: Path) -> None:
    """Random trees ending in a reduction, most of them fused with it as
    the tail: the same bits fused and unfused, on inputs with NaN,
    infinities and -0.0."""
    trees = random_trees()
    path = tmp_path / "trees.mlir"
    path.write_text("\n".join(text for _, text in trees) + "\n")
    module, _ = parse_file(path)
    lower(module, CompileOptions(), str(path))
    assert sum(1 for op in module.walk() if isinstance(op, FusedOp) and op.tail() is not None) >= len(trees) // 2
    fused = mlvm.compile(path)
    plain = mlvm.compile(path, options=CompileOptions(fuse=False))
    for name, text in trees:
        rows, n = (int(d) for d in text.split("tensor<", 1)[1].split("xf32")[0].split("x"))
        for seed in range(3):
            x, y = inputs((rows, n), False, seed), inputs((rows, n), False, seed + 10)
            got, want = fused[name](x, y), plain[name](x, y)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (name, seed, text)


def inputs(shape: tuple[int, ...], q: bool, seed: int) -> np.ndarray:
    g = np.random.default_rng(seed)
    if q:
        return g.integers(0, 256, shape).astype(np.uint8)
    if seed == 3:  # zeros of both signs and below them: a max's order shows in its sign
        return g.choice(np.array([-0.0, 0.0, -1.0], np.float32), shape)
    x = (g.standard_normal(shape) * 3).astype(np.float32)
    flat = x.reshape(-1)
    specials = np.array([np.nan, -0.0, np.inf, -np.inf, 0.0], np.float32)
    picks = g.choice(flat.size, size=min(flat.size, 3), replace=False)
    flat[picks] = g.choice(specials, size=picks.size)
    return x


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuse_tail") / "tails.mlir"
    path.write_text("\n".join([*(text for _, text, _, _ in functions()), *(t for _, t, _, _ in EXTRA)]) + "\n")
    return path


def test_every_case_is_fused_with_its_reduction(source: Path) -> None:
    module, _ = parse_file(source)
    lower(module, CompileOptions(), str(source))
    tails = [op for op in module.walk() if isinstance(op, FusedOp) and op.tail() is not None]
    assert len(tails) == len(functions()) + len(EXTRA)


@pytest.mark.parametrize("workspaces", (True, False), ids=("workspaces", "no-workspaces"))
def test_fused_tails_give_the_unfused_bits(source: Path, workspaces: bool) -> None:
    """(Without kernel workspaces too: a tail's chunk is required.)"""
    fused = mlvm.compile(source, options=CompileOptions(workspaces=workspaces))
    plain = mlvm.compile(source, options=CompileOptions(fuse=False, workspaces=workspaces))
    cases: list[tuple[str, tuple[int, ...], bool, type]] = [
        (name, shape, q, np.uint8 if q else np.float32) for name, _, shape, q in functions()]
    cases += [(name, shape, False, dtype) for name, _, shape, dtype in EXTRA]
    for name, shape, q, dtype in cases:
        for seed in range(3 if q else 4):
            x: np.ndarray = inputs(shape, q, seed).astype(dtype)
            got, want = fused[name](x), plain[name](x)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (name, seed, got, want)


def test_the_tree_takes_no_arena() -> None:
    """A dequantized 64 x 125 map into a mean: the fused module's arena is
    the mean's 256 bytes and a chunk of 4 rows (2,000 bytes) where the
    unfused one also holds the 32,000-byte f32 map."""
    text = """\
func.func @gap(%x: tensor<1x64x25x5xui8>) -> tensor<1x64x1x1xf32> {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %v = "mlvm.dequantize"(%x, %s, %z) : (tensor<1x64x25x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x64x25x5xf32>
  %y = "mlvm.reduce"(%v) <{kind = "mean", axes = array<i64: 2, 3>, keepdims = true}> : (tensor<1x64x25x5xf32>) -> tensor<1x64x1x1xf32>
  func.return %y : tensor<1x64x1x1xf32>
}
"""
    arenas = []
    for fuse in (True, False):
        module = parse_module(make_context(), text, "gap.mlir")
        lower(module, CompileOptions(fuse=fuse), "gap")
        f = next(iter(module.ops))
        arenas.append(f.attributes["mlvm.arena_bytes"].value.data)  # type: ignore[attr-defined]
    assert arenas[0] <= 256 + 2000 + 128 and arenas[1] >= 32000, arenas
