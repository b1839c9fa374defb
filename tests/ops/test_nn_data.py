"""`mlvm.transpose`, `mlvm.slice` and `mlvm.concat` against numpy.

Data movement only, so every case is exact (the same 32-bit values), for
f32 and i32. Shapes are drawn from unit dims and odd primes, ranks 0 to 6;
transposes cover every permutation of rank <= 4 and random ones above,
including sizes larger than the kernel's tiles; slices take negative
strides, unit and empty sizes; concat takes one to four operands, empty
ones, and the same value twice.

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
    I32,
    Suite,
    array_attr,
    f32_data,
    i32_data,
    i64_attr,
    op_func,
    random_shape,
    rng,
    ttype,
)

SUITE = Suite("nn_data", variants=("default", "plain"))


def sid(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "scalar"


def data(g: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return f32_data(g, shape) if dtype == F32 else i32_data(g, shape)


# --------------------------------------------------------------------------
# transpose
# --------------------------------------------------------------------------


def add_transpose(x: np.ndarray, perm: tuple[int, ...], tag: str = "") -> None:
    out = tuple(x.shape[p] for p in perm)
    body = op_func("mlvm.transpose", [x], [(out, x.dtype)], {"perm": array_attr(perm)})

    def expect(a: np.ndarray) -> list[np.ndarray]:
        # out[i] = a[j] with j[perm[d]] = i[d], element by element
        res = np.empty(out, a.dtype)
        for i in np.ndindex(*out):
            j = [0] * a.ndim
            for d, p in enumerate(perm):
                j[p] = i[d]
            res[i] = a[tuple(j)]
        return [res]

    SUITE.add(f"transpose-{sid(x.shape)}-{''.join(map(str, perm))}{tag}", body, [x], expect)


g = rng(31)
for rank in range(0, 5):
    for perm in itertools.permutations(range(rank)):
        shape = random_shape(g, rank)
        add_transpose(data(g, shape, F32 if len(SUITE.cases) % 3 else I32), perm)
for rank in (5, 6):
    for _ in range(4):
        add_transpose(f32_data(g, random_shape(g, rank, (1, 2, 3, 5))), tuple(g.permutation(rank)))
# Larger than the 16 x 16 tiles, ragged edges, and a batch around them.
for shape, perm in [
    ((37, 53), (1, 0)),
    ((64, 128), (1, 0)),
    ((3, 33, 17), (0, 2, 1)),
    ((17, 3, 40), (2, 1, 0)),
    ((2, 8, 4, 8, 4, 3), (0, 1, 3, 2, 4, 5)),  # image patches
    ((5, 19, 7, 23), (3, 0, 1, 2)),
]:
    add_transpose(f32_data(g, shape), perm, "-big")
add_transpose(i32_data(g, (31, 29)), (1, 0), "-big-i32")
# Bytes past whole tiles (SSE2's 16 x 16 byte tiles) and 32-bit ints on
# exact tiles (AVX2's 8 x 8 blocks), as the int8 matmul's transposes
for shape, perm, dt in [
    ((37, 53), (1, 0), np.uint8),
    ((48, 32), (1, 0), np.int8),
    ((3, 33, 40), (0, 2, 1), np.uint8),
    ((17, 3, 40), (2, 1, 0), np.int8),
    ((32, 16), (1, 0), np.int32),
]:
    add_transpose(g.integers(np.iinfo(dt).min, np.iinfo(dt).max + 1, shape).astype(dt), perm,
                  f"-big-{np.dtype(dt).name}")
add_transpose(np.zeros((0, 5), np.float32), (1, 0), "-empty")


# --------------------------------------------------------------------------
# slice
# --------------------------------------------------------------------------


def add_slice(x: np.ndarray, start: tuple[int, ...], stride: tuple[int, ...] | None,
              sizes: tuple[int, ...], tag: str = "") -> None:
    props = {"start": array_attr(start)}
    if stride is not None:
        props["stride"] = array_attr(stride)
    st = stride if stride is not None else (1,) * x.ndim
    body = op_func("mlvm.slice", [x], [(sizes, x.dtype)], props)

    def expect(a: np.ndarray) -> list[np.ndarray]:
        res = np.empty(sizes, a.dtype)
        for i in np.ndindex(*sizes):
            res[i] = a[tuple(s + k * t for s, k, t in zip(start, i, st))]
        return [res]

    SUITE.add(f"slice-{sid(x.shape)}-{_lst(start)}-{_lst(st)}-{sid(sizes)}{tag}", body, [x], expect)


def _lst(v: tuple[int, ...]) -> str:
    return "_".join(map(str, v))


def random_slice(g: np.random.Generator, shape: tuple[int, ...]) -> tuple:
    start, stride, sizes = [], [], []
    for n in shape:
        s = int(g.integers(-3, 4)) or 1
        if s > 0:
            a = int(g.integers(0, n))
            size = int(g.integers(1, (n - 1 - a) // s + 2))
        else:
            a = int(g.integers(0, n))
            size = int(g.integers(1, a // -s + 2))
        start.append(a)
        stride.append(s)
        sizes.append(size)
    return tuple(start), tuple(stride), tuple(sizes)


g = rng(32)
for rank in range(1, 6):
    for k in range(5):
        shape = random_shape(g, rank)
        start, stride, sizes = random_slice(g, shape)
        add_slice(data(g, shape, I32 if k == 0 else F32), start, stride, sizes)
add_slice(f32_data(g, (7, 13)), (2, 0), None, (3, 13), "-rows")  # stride left out
add_slice(f32_data(g, (7, 13)), (0, 12), (1, -1), (7, 13), "-reversed")
add_slice(f32_data(g, (5, 64)), (1, 3), (2, 1), (2, 40), "-inner-contiguous")
add_slice(f32_data(g, (4, 6)), (0, 0), (1, 1), (4, 0), "-empty")
add_slice(f32_data(g, ()), (), (), (), "-scalar")


# --------------------------------------------------------------------------
# concat
# --------------------------------------------------------------------------


def add_concat(xs: list[np.ndarray], axis: int, tag: str = "") -> None:
    ax = axis % xs[0].ndim
    out = list(xs[0].shape)
    out[ax] = sum(x.shape[ax] for x in xs)
    body = op_func("mlvm.concat", xs, [(tuple(out), xs[0].dtype)], {"axis": i64_attr(axis)})

    def expect(*arrs: np.ndarray) -> list[np.ndarray]:
        res = np.empty(out, arrs[0].dtype)
        off = 0
        for a in arrs:
            idx = [slice(None)] * a.ndim
            idx[ax] = slice(off, off + a.shape[ax])
            res[tuple(idx)] = a
            off += a.shape[ax]
        return [res]

    shapes = "+".join(sid(x.shape) for x in xs)
    SUITE.add(f"concat-{shapes}-axis{axis}{tag}", body, xs, expect)


g = rng(33)
for rank in range(1, 5):
    for k in range(4):
        base = random_shape(g, rank)
        axis = int(g.integers(-rank, rank))
        xs = []
        for _ in range(int(g.integers(1, 5))):
            s = list(base)
            s[axis] = int(g.choice((0, 1, 2, 3, 7)))
            xs.append(data(g, tuple(s), I32 if k == 1 else F32))
        add_concat(xs, axis)
x = f32_data(g, (3, 5))
SUITE.add(
    "concat-same-value-twice",
    f"""func.func @FUNC(%a: {ttype((3, 5))}) -> {ttype((3, 10))} {{
  %0 = "mlvm.concat"(%a, %a) <{{axis = 1 : i64}}> : ({ttype((3, 5))}, {ttype((3, 5))}) -> {ttype((3, 10))}
  func.return %0 : {ttype((3, 10))}
}}""",
    [x],
    lambda a: [np.concatenate([a, a], axis=1)],
)
add_concat([f32_data(g, (2, 0, 3)), f32_data(g, (2, 0, 3))], 1, "-all-empty")


@pytest.mark.parametrize("case,variant", SUITE.params_list())
def test_nn_data(case, variant: str) -> None:  # noqa: ANN001
    SUITE.check(case, variant)
