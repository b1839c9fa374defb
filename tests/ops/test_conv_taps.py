"""Convolutions as loop nests of their own on cores without vectors
(nn.taps_convs, nn.conv2d_taps_function): which modules take them, and
their results on this host's scalar kernel path (the Cortex-M kernels,
MLVM_PORTABLE_KERNELS with MLVM_SCALAR_KERNELS), where they are compiled:
exact on integer data against the reference, and on random data the same
bits as the runtime's shared pass (mlvm_conv2d_direct4_clamp_f32), which
the module calls where the rule is turned off. tests/mcu runs them on the
emulated Cortex-M4 (the 28x28 CNN)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm import reference
from mlvm.dialect import nn
from mlvm.pipeline import CompileOptions, compile_to_c, lower, parse_file

SCALAR = "-std=c99 -O2 -fno-math-errno -fPIC -DMLVM_PORTABLE_KERNELS -DMLVM_SCALAR_KERNELS"


def _conv(i: int, x: str, tx: str, c: int, o: int, k: tuple[int, int], s: tuple[int, int],
          p: tuple[int, int, int, int], d: tuple[int, int], groups: int, bias: bool,
          hw: tuple[int, int], n: int) -> tuple[str, str, str]:
    """(argument declarations, ops, result type) of conv i on x."""
    oh = (hw[0] + p[0] + p[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (hw[1] + p[1] + p[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    tw, tr = f"tensor<{o}x{c // groups}x{k[0]}x{k[1]}xf32>", f"tensor<{n}x{o}x{oh}x{ow}xf32>"
    args = f"%w{i}: {tw}" + (f", %b{i}: tensor<{o}xf32>" if bias else "")
    operands = f"{x}, %w{i}" + (f", %b{i}" if bias else "")
    types = f"{tx}, {tw}" + (f", tensor<{o}xf32>" if bias else "")
    op = (f'  %c{i} = "mlvm.conv2d"({operands}) <{{strides = array<i64: {s[0]}, {s[1]}>, '
          f"padding = array<i64: {p[0]}, {p[1]}, {p[2]}, {p[3]}>, dilations = array<i64: {d[0]}, {d[1]}>, "
          f"groups = {groups} : i64}}> : ({types}) -> {tr}\n")
    return args, op, tr


def _activation(i: int, kind: str, v: str, t: str) -> tuple[str, str]:
    """(ops, result) of conv i's activation on v."""
    if kind == "none":
        return "", v
    if kind == "relu":
        return f'  %r{i} = "mlvm.relu"({v}) : ({t}) -> {t}\n', f"%r{i}"
    return (f'  %lo{i} = "mlvm.constant"() <{{value = dense<-1.5> : tensor<f32>}}> : () -> tensor<f32>\n'
            f'  %hi{i} = "mlvm.constant"() <{{value = dense<2.0> : tensor<f32>}}> : () -> tensor<f32>\n'
            f'  %m{i} = "mlvm.max"({v}, %lo{i}) : ({t}, tensor<f32>) -> {t}\n'
            f'  %r{i} = "mlvm.min"(%m{i}, %hi{i}) : ({t}, tensor<f32>) -> {t}\n'), f"%r{i}"


def _module(n: int, c: int, hw: tuple[int, int], convs: int, o: int = 8, k: tuple[int, int] = (3, 3),
            s: tuple[int, int] = (2, 2), p: tuple[int, int, int, int] = (1, 1, 1, 1),
            d: tuple[int, int] = (1, 1), groups: int = 1, bias: bool = True,
            kind: str = "relu") -> str:
    """`convs` convolutions of the same options on x, each with its
    activation, each a result."""
    tx = f"tensor<{n}x{c}x{hw[0]}x{hw[1]}xf32>"
    args, ops, results, tr = [f"%x: {tx}"], "", [], ""
    for i in range(convs):
        a, op, tr = _conv(i, "%x", tx, c, o, k, s, p, d, groups, bias, hw, n)
        acts, v = _activation(i, kind, f"%c{i}", tr)
        args.append(a)
        ops += op + acts
        results.append(v)
    types = ", ".join([tr] * convs)
    return (f"func.func @main({', '.join(args)}) -> ({types}) {{\n{ops}"
            f"  func.return {', '.join(results)} : {types}\n}}\n")


def _inputs(g: np.random.Generator, path: Path, ints: bool) -> list[np.ndarray]:
    f = mlvm.compile(path, options=CompileOptions(workspaces=False)).functions["main"]
    return [(g.integers(-4, 5, size=t.shape) if ints else g.standard_normal(t.shape)).astype(np.float32)
            for t in f.inputs]


def _taps(path: Path) -> bool:
    """The rule on the module as the pipeline lowers it without workspaces."""
    module, source = parse_file(path)
    lower(module, CompileOptions(workspaces=False), source)
    return nn.taps_convs(module)


@pytest.mark.parametrize("convs,want", [(1, True), (3, True), (4, False)])
def test_few_convolutions_take_loop_nests(tmp_path: Path, convs: int, want: bool) -> None:
    path = tmp_path / "m.mlir"
    path.write_text(_module(1, 3, (9, 9), convs))
    assert _taps(path) is want
    module, source = parse_file(path)
    c_text = compile_to_c(module, tmp_path / "m.c", {}, source, CompileOptions(workspaces=False))[0]
    assert ("#ifdef MLVM_SCALAR_CORE" in c_text) is want
    assert "mlvm_conv2d_direct4_clamp_f32" in c_text or convs > 1  # the other cores' call stays


def test_other_modules_keep_the_shared_pass(tmp_path: Path) -> None:
    path = tmp_path / "m.mlir"
    # a group of 6 output channels: the mixed entry links the shared pass anyway
    path.write_text(_module(1, 4, (9, 9), 1, o=12, groups=2))
    assert not _taps(path)
    # a result added after the conv: a generated epilogue, not a clamp
    text = _module(1, 3, (9, 9), 2, kind="none")
    t = text.split("-> (")[1].split(",")[0]
    text = text.replace("  func.return %c0, %c1",
                        f'  %e = "mlvm.tanh"(%c0) : ({t}) -> {t}\n  func.return %e, %c1')
    path.write_text(text)
    assert not _taps(path)


CASES = [  # n, c, hw, o, k, s, p, d, groups, bias, kind
    (1, 1, (28, 28), 8, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, True, "relu"),
    (2, 3, (7, 11), 4, (3, 2), (1, 3), (2, 0, 1, 2), (1, 1), 1, False, "none"),
    (1, 4, (13, 9), 8, (3, 3), (1, 1), (1, 1, 1, 1), (2, 2), 2, True, "clip"),
    (1, 2, (5, 5), 4, (5, 5), (3, 3), (4, 4, 4, 4), (1, 1), 1, True, "relu"),
    (1, 5, (10, 4), 12, (10, 4), (2, 2), (4, 1, 5, 1), (1, 1), 1, True, "none"),
    (1, 3, (6, 17), 4, (1, 5), (2, 1), (0, 3, 0, 0), (1, 2), 1, False, "clip"),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_loop_nests_on_the_scalar_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: int) -> None:
    n, c, hw, o, k, s, p, d, groups, bias, kind = CASES[case]
    monkeypatch.setenv("MLVM_CFLAGS", SCALAR)
    path = tmp_path / "m.mlir"
    path.write_text(_module(n, c, hw, 1, o, k, s, p, d, groups, bias, kind))
    assert _taps(path)
    opts = CompileOptions(workspaces=False)
    g = np.random.default_rng(case)
    # integer data: every sum exact, the reference's bits
    ints = _inputs(g, path, True)
    want = reference.run(parse_file(path)[0], "main", ints)[0]
    got = mlvm.compile(path, options=opts).main(*ints)
    assert got.tobytes() == want.tobytes()
    # random data: the runtime's shared pass's bits (the rule turned off)
    x = _inputs(g, path, False)
    got = mlvm.compile(path, options=opts).main(*x)
    monkeypatch.setattr(nn, "TAPS_CONVS_MAX", 0)
    assert not _taps(path)
    shared = mlvm.compile(path, options=opts).main(*x)
    assert got.tobytes() == shared.tobytes()
    np.testing.assert_allclose(got, reference.run(parse_file(path)[0], "main", x)[0], rtol=1e-5, atol=1e-5)
