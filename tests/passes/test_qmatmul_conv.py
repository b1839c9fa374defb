"""mlvm-qmatmul-conv: integer matmuls (and a requantize reading them alone)
computed by the int8 convolution kernels give the same int32 sums and bytes
as mlvm.qmatmul's own kernel and as the reference, for constant and
run-time right-hand sides, one row and many, batch dims, both signs, zero
points of one value and one per column, extreme operands. The lit test
tests/filecheck/passes/qmatmul_conv.mlir shows the rewrite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm import reference
from mlvm.pipeline import CompileOptions, parse_file

T = {"i8": np.int8, "ui8": np.uint8}

# (name, lhs shape, K, N, lhs type, rhs type, rhs constant, zb per column, requantize)
CASES = [
    ("row", (13,), 13, 7, "ui8", "i8", True, False, False),
    ("rows", (5, 17), 17, 31, "ui8", "i8", True, True, False),
    ("batch", (2, 3, 64), 64, 6, "i8", "i8", True, False, False),
    ("runtime", (7, 3), 3, 5, "ui8", "ui8", False, True, False),
    ("one", (1, 1), 1, 1, "i8", "ui8", False, False, False),
    ("requant", (11, 29), 29, 13, "ui8", "i8", True, True, True),
    ("requant_rt", (6, 8), 8, 4, "i8", "i8", False, False, True),
]


def _func(name: str, sa: tuple[int, ...], k: int, n: int, ta: str, tb: str, const: bool, per_col: bool,
          requant: bool) -> str:
    out = (*sa[:-1], n)
    a_t, b_t = f"tensor<{'x'.join(map(str, sa))}x{ta}>", f"tensor<{k}x{n}x{tb}>"
    zb_t = f"tensor<{n}x{tb}>" if per_col else f"tensor<{tb}>"
    acc_t = f"tensor<{'x'.join(map(str, out))}xi32>"
    y_t = f"tensor<{'x'.join(map(str, out))}xui8>"
    args = [f"%a: {a_t}"] + ([] if const else [f"%b: {b_t}"]) + [f"%za: tensor<{ta}>", f"%zb: {zb_t}"]
    body = [f'  %b = "mlvm.param"() <{{name = "{name}_b"}}> : () -> {b_t}'] if const else []
    body.append(f'  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : ({a_t}, {b_t}, tensor<{ta}>, {zb_t}) -> {acc_t}')
    if requant:
        args += [f"%m: tensor<{n}xf32>", "%zy: tensor<ui8>"]
        body.append(f'  %1 = "mlvm.requantize"(%0, %m, %zy) : ({acc_t}, tensor<{n}xf32>, tensor<ui8>) -> {y_t}')
        body.append(f"  func.return %1 : {y_t}")
        ret = y_t
    else:
        body.append(f"  func.return %0 : {acc_t}")
        ret = acc_t
    return f"func.func @{name}({', '.join(args)}) -> {ret} {{\n" + "\n".join(body) + "\n}\n"


def _operands(case: tuple, g: np.random.Generator, extreme: bool) -> list[np.ndarray]:
    name, sa, k, n, ta, tb, const, per_col, requant = case
    info_a, info_b = np.iinfo(T[ta]), np.iinfo(T[tb])
    if extreme:  # every product at its largest magnitude
        a = np.full(sa, info_a.max, T[ta])
        b = np.full((k, n), info_b.min, T[tb])
        za, zb = np.array(info_a.min, T[ta]), np.full((n,) if per_col else (), info_b.max, T[tb])
    else:
        a = g.integers(info_a.min, info_a.max + 1, sa).astype(T[ta])
        b = g.integers(info_b.min, info_b.max + 1, (k, n)).astype(T[tb])
        za = np.array(g.integers(info_a.min, info_a.max + 1), T[ta])
        zb = g.integers(info_b.min, info_b.max + 1, (n,) if per_col else ()).astype(T[tb])
    ins = [a] + ([] if const else [b]) + [za, zb]
    if requant:
        ins += [(g.random(n) * 1e-4).astype(np.float32), np.array(g.integers(0, 256), np.uint8)]
    return ins


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray], list]:
    d = tmp_path_factory.mktemp("qmatmul_conv")
    g = np.random.default_rng(7)
    path = d / "q.mlir"
    path.write_text("".join(_func(*c) for c in CASES))
    params = {f"{c[0]}_b": g.integers(np.iinfo(T[c[5]]).min, np.iinfo(T[c[5]]).max + 1, (c[2], c[3])).astype(T[c[5]])
              for c in CASES if c[6]}
    on = mlvm.compile(path, params=params)
    off = mlvm.compile(path, params=params, options=CompileOptions(qmatmul_conv=False))
    return path, params, [on, off]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("extreme", [False, True], ids=["random", "extreme"])
def test_same_sums_as_qmatmul_and_reference(modules: tuple, case: tuple, extreme: bool) -> None:
    path, params, (on, off) = modules
    name = case[0]
    g = np.random.default_rng(len(name) * 31 + extreme)
    ins = _operands(case, g, extreme)  # (a constant rhs: the archive's)
    want = reference.run(parse_file(path)[0], name, ins, params)[0]
    for mod in (on, off):
        got = mod[name](*ins)
        assert got.dtype == want.dtype and np.array_equal(got, want), name


def test_pass_rewrites_every_qmatmul(modules: tuple) -> None:
    """With the pass no qmatmul kernel is called; without it, each is."""
    from mlvm.pipeline import compile_to_c

    path, params, _ = modules
    with_pass = compile_to_c(parse_file(path)[0], path.with_suffix(".c"), params, str(path))[0]
    without = compile_to_c(parse_file(path)[0], path.with_suffix(".off.c"), params, str(path),
                           CompileOptions(qmatmul_conv=False))[0]
    assert "mlvm_qmatmul_8(" not in with_pass and "mlvm_qconv2d" in with_pass
    assert without.count("mlvm_qmatmul_8(") == len(CASES)


LANES = """func.func @lanes(%a: tensor<6x8xi8>, %za: tensor<i8>, %zb: tensor<i8>) -> tensor<6x4xi32> {
  %b = "mlvm.param"() <{name = "wl", lanes = array<i64: 4, 1, 1>}> : () -> tensor<8x4xi8>
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x8xi8>, tensor<8x4xi8>, tensor<i8>, tensor<i8>) -> tensor<6x4xi32>
  func.return %0 : tensor<6x4xi32>
}
"""


def test_rhs_param_in_another_layout_is_transposed_at_run_time(tmp_path: Path) -> None:
    """A param already stored for another kernel (here in lanes) is not
    re-viewed as the convolution's weight: it is read as declared and
    transposed by an op, the same sums."""
    path = tmp_path / "lanes.mlir"
    path.write_text(LANES)
    g = np.random.default_rng(3)
    params = {"wl": g.integers(-128, 128, (8, 4, 1, 1)).astype(np.int8)}
    ins = [g.integers(-128, 128, (6, 8)).astype(np.int8), np.array(3, np.int8), np.array(-2, np.int8)]
    want = reference.run(parse_file(path)[0], "lanes", ins, params)[0]
    for opts in (CompileOptions(), CompileOptions(qmatmul_conv=False)):
        np.testing.assert_array_equal(mlvm.compile(path, params=params, options=opts).lanes(*ins), want)


def test_cli_flag_keeps_the_portable_kernel(tmp_path: Path) -> None:
    from mlvm.cli import aot_main

    path = tmp_path / "q.mlir"
    path.write_text(_func(*CASES[1]))
    g = np.random.default_rng(4)
    npz = tmp_path / "p.npz"
    np.savez(npz, rows_b=g.integers(-128, 128, (17, 31)).astype(np.int8))
    on, off = tmp_path / "on.c", tmp_path / "off.c"
    assert aot_main(["compile", str(path), "--params", str(npz), "-o", str(on)]) == 0
    assert aot_main(["compile", str(path), "--params", str(npz), "-o", str(off), "--no-qmatmul-conv"]) == 0
    assert "mlvm_qmatmul_8(" not in on.read_text() and "mlvm_qconv2d_ws_8(" in on.read_text()
    assert "mlvm_qmatmul_8(" in off.read_text()


ORDER = """func.func @order(%a: tensor<6x5xui8>, %b: tensor<5x4xi8>, %za: tensor<ui8>, %zb: tensor<i8>, %m: tensor<f32>, %zy: tensor<ui8>) -> (tensor<6x4xui8>, tensor<6x4xi32>) {
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  %1 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  %2 = "mlvm.requantize"(%0, %m, %zy) : (tensor<6x4xi32>, tensor<f32>, tensor<ui8>) -> tensor<6x4xui8>
  func.return %2, %1 : tensor<6x4xui8>, tensor<6x4xi32>
}
"""


def test_shared_rows_come_before_every_product(tmp_path: Path) -> None:
    """Two products of the same rows, the first requantized after the
    second: the shared transpose is made before the first qmatmul, so the
    second (rewritten in place) reads it after it is written."""
    path = tmp_path / "order.mlir"
    path.write_text(ORDER)
    g = np.random.default_rng(5)
    ins = [g.integers(0, 256, (6, 5)).astype(np.uint8), g.integers(-128, 128, (5, 4)).astype(np.int8),
           np.array(7, np.uint8), np.array(-3, np.int8), np.array(0.01, np.float32), np.array(100, np.uint8)]
    want = reference.run(parse_file(path)[0], "order", ins, {})
    got = mlvm.compile(path).order(*ins)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
