"""`mlvm.matmul` against a float64 numpy product.

Every transpose combination, rank 2 and batched (rank >= 3 on both sides,
numpy-broadcast batch dims, operands of different ranks), unit dims and odd
primes for m, n, k, a 200 x 200 x 200 product, and products of more rows
than one of the GEMM's row blocks (its workspace).

Tolerance: each output element is compared with the float64 product of the
same f32 inputs, `|err| <= 1e-5 * sum_k |a_ik| * |b_kj|` (the sum of the
absolute values of the accumulated terms). The C and numpy's f32 matmul
(the op's reference) must both meet it, and agree within twice of it.

Every case runs with the default pass pipeline and with plain kernel calls.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import (  # noqa: E402
    F32,
    TINY,
    Bound,
    Suite,
    bool_attr,
    f32_data,
    op_func,
    rng,
    sum_bound,
    ttype,
)

SUITE = Suite("matmul", variants=("default", "plain"))

TRANSPOSES = list(itertools.product((False, True), repeat=2))


def _orient(x: np.ndarray, transposed: bool) -> np.ndarray:
    return np.swapaxes(x, -1, -2) if transposed else x


def expect_matmul(ta: bool, tb: bool):  # noqa: ANN201
    def expect(a: np.ndarray, b: np.ndarray) -> list:  # noqa: ANN001
        a64 = _orient(a.astype(np.float64), ta)
        b64 = _orient(b.astype(np.float64), tb)
        return [sum_bound(a64 @ b64, np.abs(a64) @ np.abs(b64))]

    return expect


def add_matmul(
    tag: str,
    batch_a: tuple[int, ...],
    batch_b: tuple[int, ...],
    m: int,
    k: int,
    n: int,
    ta: bool,
    tb: bool,
    g: np.random.Generator,
    explicit_false: bool = True,
    scale_spread: bool = False,
) -> None:
    a_shape = (*batch_a, *((k, m) if ta else (m, k)))
    b_shape = (*batch_b, *((n, k) if tb else (k, n)))
    a = f32_data(g, a_shape, -1.0, 1.0)
    b = f32_data(g, b_shape, -1.0, 1.0)
    if scale_spread:
        # Terms over six orders of magnitude: cancellation shows in the bound.
        a = (a * 10.0 ** g.uniform(-3, 3, size=a.shape)).astype(np.float32)
    batch = np.broadcast_shapes(batch_a, batch_b)
    props = {}
    if ta or explicit_false:
        props["transpose_lhs"] = bool_attr(ta)
    if tb or explicit_false:
        props["transpose_rhs"] = bool_attr(tb)
    body = op_func("mlvm.matmul", [a, b], [((*batch, m, n), F32)], props)
    t = f"{'T' if ta else 'N'}{'T' if tb else 'N'}"
    SUITE.add(f"{tag}-{t}-m{m}k{k}n{n}", body, [a, b], expect_matmul(ta, tb))


g = rng(7)

# Rank 2: m, k, n from unit dims and odd primes (each kernel path: row-major
# axpy, contiguous dot, strided dot; k = 1; vectors).
MKN_2D = [
    (1, 1, 1),
    (1, 7, 1),
    (3, 5, 7),
    (13, 1, 31),
    (7, 31, 1),
    (1, 13, 5),
    (31, 13, 5),
    (5, 9, 3),
    (2, 17, 3),
    (37, 61, 29),
]
for ta, tb in TRANSPOSES:
    for m, k, n in MKN_2D:
        add_matmul("2d", (), (), m, k, n, ta, tb, g)
    add_matmul("2d-big", (), (), 200, 200, 200, ta, tb, g)
    add_matmul("2d-long-k", (), (), 3, 199, 5, ta, tb, g)
    add_matmul("2d-spread", (), (), 13, 101, 7, ta, tb, g, scale_spread=True)

# More rows than one row block of the GEMM (192): b packed once into the
# matmul's workspace where that pays (b transposed, or its rows 1 KiB
# apart; two or three column blocks of it, two contraction slices).
for ta, tb in TRANSPOSES:
    add_matmul("2d-slab", (), (), 211, 300, 290 if tb else 768, ta, tb, g)

# Transposes left out entirely (their default is false).
add_matmul("2d-default", (), (), 3, 5, 7, False, False, g, explicit_false=False)
add_matmul("2d-default", (), (), 31, 13, 5, False, True, g, explicit_false=False)
add_matmul("2d-default", (), (), 31, 13, 5, True, False, g, explicit_false=False)

# Batched: same batch, broadcast on either side, different ranks.
BATCHES = [
    ((2,), (2,)),
    ((1,), (4,)),
    ((4,), (1,)),
    ((2, 1), (1, 3)),
    ((3, 1), (5,)),
    ((7,), (1, 1)),
    ((2, 3), (3,)),
    ((1, 2, 1), (3, 1, 2)),
]
for i, (ba, bb) in enumerate(BATCHES):
    for ta, tb in TRANSPOSES:
        m, k, n = [(3, 5, 7), (1, 13, 2), (5, 1, 3), (7, 3, 1)][(i + 2 * ta + tb) % 4]
        ida = "x".join(map(str, ba))
        idb = "x".join(map(str, bb))
        add_matmul(f"batch-{ida}-{idb}", ba, bb, m, k, n, ta, tb, g)
# Six batch dims (rank 8) that broadcast alternately and do not merge.
for ta, tb in TRANSPOSES:
    add_matmul("batch-rank8", (2, 1, 3, 1, 2, 1), (1, 2, 1, 3, 1, 2), 3, 4, 2, ta, tb, g)
# Empty contraction (k = 0) gives zeros; empty m or batch give empty results.
add_matmul("2d-empty-k", (), (), 3, 0, 5, False, False, g)
add_matmul("2d-empty-k", (), (), 3, 0, 5, True, True, g)
add_matmul("2d-empty-m", (), (), 0, 5, 3, False, True, g)
add_matmul("batch-empty", (0,), (1,), 2, 3, 4, False, False, g)
add_matmul("batch-big", (3,), (1,), 64, 150, 48, False, True, g)
add_matmul("batch-big", (2, 1), (2,), 40, 173, 33, True, False, g)
add_matmul("batch-slab", (2,), (1,), 197, 261, 33, False, True, g)
add_matmul("batch-slab", (1,), (3,), 193, 7, 256, True, False, g)


# A product followed by elementwise ops on it (bias row, subtracted column,
# relu, max with a full matrix): the epilogue may be computed block by block
# as the product is produced. 1-Lipschitz steps keep the product's bound.
def add_epilogue(
    m: int, k: int, n: int, ta: bool, tb: bool, g: np.random.Generator, group: str = "main"
) -> None:
    a_shape = (k, m) if ta else (m, k)
    b_shape = (n, k) if tb else (k, n)
    a, b = f32_data(g, a_shape, -1, 1), f32_data(g, b_shape, -1, 1)
    bias, col, full = f32_data(g, (n,)), f32_data(g, (m, 1)), f32_data(g, (m, n), -1, 1)
    ta_, tb_, tm = ttype(a_shape), ttype(b_shape), ttype((m, n))
    tbias, tcol = ttype((n,)), ttype((m, 1))
    props = f"transpose_lhs = {bool_attr(ta)}, transpose_rhs = {bool_attr(tb)}"
    body = (
        f"func.func @FUNC(%a: {ta_}, %b: {tb_}, %bias: {tbias}, %col: {tcol}, %full: {tm}) -> {tm} {{\n"
        f'  %m = "mlvm.matmul"(%a, %b) <{{{props}}}> : ({ta_}, {tb_}) -> {tm}\n'
        f'  %0 = "mlvm.add"(%m, %bias) : ({tm}, {tbias}) -> {tm}\n'
        f'  %1 = "mlvm.sub"(%0, %col) : ({tm}, {tcol}) -> {tm}\n'
        f'  %2 = "mlvm.relu"(%1) : ({tm}) -> {tm}\n'
        f'  %3 = "mlvm.max"(%2, %full) : ({tm}, {tm}) -> {tm}\n'
        f"  func.return %3 : {tm}\n}}"
    )

    def expect(a, b, bias, col, full) -> list:  # noqa: ANN001
        a64 = _orient(a.astype(np.float64), ta)
        b64 = _orient(b.astype(np.float64), tb)
        v = np.maximum(np.maximum(a64 @ b64 + bias - col, 0.0), full)
        scale = np.abs(a64) @ np.abs(b64) + np.abs(bias) + np.abs(col)
        return [Bound(v, 1e-5 * scale + TINY)]

    t = f"{'T' if ta else 'N'}{'T' if tb else 'N'}"
    SUITE.add(f"epilogue-{t}-m{m}k{k}n{n}", body, [a, b, bias, col, full], expect, group=group)


for ta, tb in TRANSPOSES:
    for m, k, n in [(1, 1, 1), (3, 5, 7), (300, 13, 37), (5, 3, 4099), (129, 64, 31)]:
        add_epilogue(m, k, n, ta, tb, g)
# Empty products, each compiled apart from the other cases.
add_epilogue(0, 3, 5, False, False, g, "empty-m")
add_epilogue(3, 0, 5, True, False, g, "empty-k")
add_epilogue(3, 5, 0, False, True, g, "empty-n")


# Epilogues whose other operand has the product's type and dies there (the
# result of another matmul, of a cast), and one reading the product twice.
# Integer-valued data: every value is exact.
T43, T35, T42, T25, T45 = (ttype(s) for s in ((4, 3), (3, 5), (4, 2), (2, 5), (4, 5)))
EPILOGUE_OPERANDS = f"""func.func @FUNC(%a: {T43}, %b: {T35}, %c: {T42}, %d: {T25}, %i: {ttype((4, 5), np.int32)}) -> ({T45}, {T45}, {T45}) {{
  %f = "mlvm.matmul"(%c, %d) : ({T42}, {T25}) -> {T45}
  %m = "mlvm.matmul"(%a, %b) : ({T43}, {T35}) -> {T45}
  %0 = "mlvm.add"(%m, %f) : ({T45}, {T45}) -> {T45}
  %1 = "mlvm.relu"(%0) : ({T45}) -> {T45}
  %g = "mlvm.cast"(%i) : ({ttype((4, 5), np.int32)}) -> {T45}
  %n = "mlvm.matmul"(%a, %b) : ({T43}, {T35}) -> {T45}
  %2 = "mlvm.sub"(%g, %n) : ({T45}, {T45}) -> {T45}
  %3 = "mlvm.neg"(%2) : ({T45}) -> {T45}
  %p = "mlvm.matmul"(%c, %d) : ({T42}, {T25}) -> {T45}
  %4 = "mlvm.relu"(%p) : ({T45}) -> {T45}
  %5 = "mlvm.mul"(%4, %p) : ({T45}, {T45}) -> {T45}
  func.return %1, %3, %5 : {T45}, {T45}, {T45}
}}"""


def _epilogue_operands(a, b, c, d, i) -> list:  # noqa: ANN001
    ab = a.astype(np.float64) @ b
    cd = c.astype(np.float64) @ d
    return [
        np.maximum(ab + cd, 0).astype(np.float32),
        (ab - i).astype(np.float32),
        (np.maximum(cd, 0) * cd).astype(np.float32),
    ]


def _small_ints(g: np.random.Generator, shape: tuple[int, ...], dtype=np.float32) -> np.ndarray:  # noqa: ANN001
    return np.asarray(g.integers(-5, 6, size=shape), dtype=dtype)


SUITE.add(
    "epilogue-operands",
    EPILOGUE_OPERANDS,
    [_small_ints(g, (4, 3)), _small_ints(g, (3, 5)), _small_ints(g, (4, 2)), _small_ints(g, (2, 5)),
     _small_ints(g, (4, 5), np.int32)],
    _epilogue_operands,
)


@pytest.mark.parametrize("case,variant", SUITE.params_list())
def test_matmul(case, variant: str) -> None:  # noqa: ANN001
    SUITE.check(case, variant)


def test_matmul_does_not_touch_its_inputs() -> None:
    case = next(c for c in SUITE.cases if c.id.startswith("2d-TT-m3k5n7"))
    before = [x.copy() for x in case.inputs]
    SUITE.compiled(case)
    for x, y in zip(case.inputs, before):
        assert np.array_equal(x, y)
