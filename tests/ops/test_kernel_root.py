"""mlvm.fused's kernel root: a fused loop or epilogue ending in exp,
sigmoid, erf or GELU is written twice in the C, the op by its array kernel
after the rest where the runtime has the vector forms (MLVM_VECTOR_MATH),
else inside the loop. Both forms are built here (the host's flags, and
MLVM_PORTABLE_KERNELS, which turns the vector forms off) and give the
unfused module's bits, and the reference's values within the kernels'
bounds (random shapes with 1 and odd primes, broadcasting, NaN and inf)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm import reference
from mlvm.codegen.cc import DEFAULT_CFLAGS, compiler
from mlvm.pipeline import CompileOptions, compile_to_c, parse_file

PORTABLE = " ".join([*DEFAULT_CFLAGS, "-DMLVM_PORTABLE_KERNELS"])


def _t(*shape: int) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _module(m: int, k: int, n: int, c: int, hw: int) -> str:
    """Functions whose fused trees end in a kernel root: after a matmul
    (with a bias, with a ReLU, alone), after a conv2d (with a bias, with a
    ReLU), in plain loops (a chain, a broadcast operand)."""
    mm, bias, x, w = _t(m, n), _t(n), _t(m, k), _t(k, n)
    img, cw, ob = _t(2, c, hw, hw), _t(3, c, 3, 3), _t(3)
    out = _t(2, 3, hw, hw)
    return f"""
func.func @dense_gelu(%x: {x}, %w: {w}, %b: {bias}) -> ({mm}, {mm}) {{
  %m = "mlvm.matmul"(%x, %w) : ({x}, {w}) -> {mm}
  %a = "mlvm.add"(%m, %b) : ({mm}, {bias}) -> {mm}
  %g = "mlvm.gelu"(%a) : ({mm}) -> {mm}
  %m2 = "mlvm.matmul"(%x, %w) : ({x}, {w}) -> {mm}
  %a2 = "mlvm.add"(%m2, %b) : ({mm}, {bias}) -> {mm}
  %t = "mlvm.gelu"(%a2) <{{approximate = "tanh"}}> : ({mm}) -> {mm}
  func.return %g, %t : {mm}, {mm}
}}
func.func @dense_relu_exp(%x: {x}, %w: {w}) -> ({mm}, {mm}) {{
  %m = "mlvm.matmul"(%x, %w) : ({x}, {w}) -> {mm}
  %r = "mlvm.relu"(%m) : ({mm}) -> {mm}
  %e = "mlvm.exp"(%r) : ({mm}) -> {mm}
  %m2 = "mlvm.matmul"(%x, %w) : ({x}, {w}) -> {mm}
  %s = "mlvm.sigmoid"(%m2) : ({mm}) -> {mm}
  func.return %e, %s : {mm}, {mm}
}}
func.func @conv_sigmoid(%x: {img}, %w: {cw}, %b: {ob}) -> {out} {{
  %c = "mlvm.conv2d"(%x, %w, %b) <{{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}}> : ({img}, {cw}, {ob}) -> {out}
  %s = "mlvm.sigmoid"(%c) : ({out}) -> {out}
  func.return %s : {out}
}}
func.func @conv_relu_sigmoid(%x: {img}, %w: {cw}) -> {out} {{
  %c = "mlvm.conv2d"(%x, %w) <{{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}}> : ({img}, {cw}) -> {out}
  %r = "mlvm.relu"(%c) : ({out}) -> {out}
  %s = "mlvm.sigmoid"(%r) : ({out}) -> {out}
  func.return %s : {out}
}}
func.func @loops(%x: {mm}, %y: {mm}, %b: {bias}) -> ({mm}, {mm}, {mm}) {{
  %n = "mlvm.neg"(%x) : ({mm}) -> {mm}
  %e = "mlvm.exp"(%n) : ({mm}) -> {mm}
  %s = "mlvm.sigmoid"(%e) : ({mm}) -> {mm}
  %a = "mlvm.sub"(%x, %b) : ({mm}, {bias}) -> {mm}
  %r = "mlvm.erf"(%a) : ({mm}) -> {mm}
  %d = "mlvm.mul"(%y, %y) : ({mm}, {mm}) -> {mm}
  %g = "mlvm.gelu"(%d) : ({mm}) -> {mm}
  func.return %s, %r, %g : {mm}, {mm}, {mm}
}}
"""


SHAPES = [(1, 1, 1, 1, 1), (7, 13, 31, 2, 5), (64, 32, 96, 3, 9), (3, 5, 17, 1, 4)]


def _inputs(g: np.random.Generator, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    xs = [(g.standard_normal(s) * 3).astype(np.float32) for s in shapes]
    flat = xs[0].reshape(-1)
    edge = np.array([np.nan, np.inf, -np.inf, -0.0, 100.0, -100.0], np.float32)
    flat[: min(flat.size, edge.size)] = edge[: flat.size]
    return xs


@pytest.mark.parametrize("case", range(len(SHAPES)))
def test_both_forms_give_the_unfused_bits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          case: int) -> None:
    path = tmp_path / "m.mlir"
    path.write_text(_module(*SHAPES[case]))
    module, source = parse_file(path)
    c_text, h_text = compile_to_c(module, tmp_path / "m.c", {}, source, CompileOptions())
    (tmp_path / "m.c").write_text(c_text)
    (tmp_path / "m.h").write_text(h_text)
    # every tree's two forms (the statics' guards are such lines too), its root by the kernel in one
    assert c_text.count("#if MLVM_VECTOR_MATH\n") >= 9, c_text
    roots = re.findall(r"mlvm_(?:exp|sigmoid|erf|gelu_erf|gelu_tanh)_f32\(", c_text)
    assert len(roots) == 9, roots
    include = Path(mlvm.__file__).parent / "runtime_c" / "include"
    for extra in ([], ["-DMLVM_PORTABLE_KERNELS"]):  # neither form leaves a static unused
        subprocess.run([compiler(), *DEFAULT_CFLAGS, *extra, "-Wall", "-Wextra", "-Werror", "-pedantic",
                        "-I", str(include), "-I", str(tmp_path), "-c", str(tmp_path / "m.c"),
                        "-o", str(tmp_path / "m.o")], check=True)
    g = np.random.default_rng(case)
    for flags in (None, PORTABLE):
        if flags is not None:
            monkeypatch.setenv("MLVM_CFLAGS", flags)
        fused = mlvm.compile(path)
        unfused = mlvm.compile(path, options=CompileOptions(fuse=False))
        for name, info in fused.functions.items():
            xs = _inputs(g, [t.shape for t in info.inputs])
            got, want = getattr(fused, name)(*xs), getattr(unfused, name)(*xs)
            got = got if isinstance(got, tuple) else (got,)
            want = want if isinstance(want, tuple) else (want,)
            exact = reference.run(parse_file(path)[0], name, xs)
            for a, b, r in zip(got, want, exact, strict=True):
                np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32), err_msg=name)
                np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-5, err_msg=name)  # exp of a sum: its error grown


def test_module_choices_see_whole_trees(tmp_path: Path) -> None:
    """The module-wide rule for convolutions as loop nests of their own
    (nn.taps_convs, which reads each fused conv's clamp) decides on whole
    trees whichever function comes first: a conv + ReLU + sigmoid's full
    form has a generated epilogue, so no conv of the module takes them."""
    conv = ('  %0 = "mlvm.conv2d"(%x, %w, %b) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}> '
            ": (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>\n"
            '  %1 = "mlvm.relu"(%0) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>\n')
    sig = '  %2 = "mlvm.sigmoid"(%1) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>\n'
    head = ("(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) "
            "-> tensor<1x8x4x4xf32> {\n")
    root = f"func.func @root{head}{conv}{sig}  func.return %2 : tensor<1x8x4x4xf32>\n}}\n"
    relu = f"func.func @relu{head}{conv}  func.return %1 : tensor<1x8x4x4xf32>\n}}\n"
    texts = []
    for k, order in enumerate((root + relu, relu + root)):
        path = tmp_path / f"m{k}.mlir"
        path.write_text(order)
        module, source = parse_file(path)
        texts.append(compile_to_c(module, tmp_path / f"m{k}.c", {}, source,
                                  CompileOptions(workspaces=False))[0])
    assert [t.count("MLVM_SCALAR_CORE") for t in texts] == [0, 0]


def test_f64_trees_stay_whole(tmp_path: Path) -> None:
    """The array kernels are f32: f64 trees ending in exp, sigmoid or erf
    keep the op in the loop, in one form, and give the reference's values."""
    t = "tensor<7x5xf64>"
    path = tmp_path / "m.mlir"
    path.write_text(f"""
func.func @f(%x: {t}, %b: tensor<5xf64>) -> ({t}, {t}, {t}) {{
  %a = "mlvm.add"(%x, %b) : ({t}, tensor<5xf64>) -> {t}
  %r = "mlvm.erf"(%a) : ({t}) -> {t}
  %n = "mlvm.neg"(%x) : ({t}) -> {t}
  %e = "mlvm.exp"(%n) : ({t}) -> {t}
  %m = "mlvm.mul"(%x, %x) : ({t}, {t}) -> {t}
  %s = "mlvm.sigmoid"(%m) : ({t}) -> {t}
  func.return %r, %e, %s : {t}, {t}, {t}
}}
""")
    module, source = parse_file(path)
    c_text = compile_to_c(module, tmp_path / "m.c", {}, source, CompileOptions())[0]
    assert "MLVM_VECTOR_MATH" not in c_text and "_f32(" not in c_text, c_text
    g = np.random.default_rng(7)
    xs = [g.standard_normal((7, 5)) * 3, g.standard_normal(5)]
    for got, want in zip(mlvm.compile(path).f(*xs), reference.run(module, "f", xs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
