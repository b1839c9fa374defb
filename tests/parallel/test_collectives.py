"""Collectives in-process: every collective x kind x dtype x ranks in
{1, 2, 3, 4}, against numpy (and bit for bit against the multi-rank
reference), plus errors and the dialect's verifier."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

import mlvm
import mlvm.parallel as par
from mlvm.diagnostics import MlvmError
from mlvm.pipeline import parse_file

KINDS = {"f32": ["sum", "max", "min", "mean"], "i32": ["sum", "max", "min"]}
SHAPES = [(1,), (7, 3), (1031,)]  # one element, odd, and several chunks of 16


def _t(shape: tuple[int, ...], elem: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{elem}>"


def _program(n: int) -> str:
    """Every collective, for a world of n ranks."""
    fns = []
    for elem, kinds in KINDS.items():
        for kind in kinds:
            for k, shape in enumerate(SHAPES):
                t = _t(shape, elem)
                fns.append(
                    f"func.func @ar_{kind}_{elem}_{k}(%x: {t}) -> {t} {{\n"
                    f'  %y = "mlvm.all_reduce"(%x) <{{kind = "{kind}"}}> : ({t}) -> {t}\n'
                    f"  func.return %y : {t}\n}}"
                )
            for axis in (0, 1):
                a, r = (5 * n, 3) if axis == 0 else (2, 3 * n), (5, 3) if axis == 0 else (2, 3)
                fns.append(
                    f"func.func @rs_{kind}_{elem}_{axis}(%x: {_t(a, elem)}) -> {_t(r, elem)} {{\n"
                    f'  %y = "mlvm.reduce_scatter"(%x) <{{kind = "{kind}", axis = {axis} : i64}}> '
                    f": ({_t(a, elem)}) -> {_t(r, elem)}\n  func.return %y : {_t(r, elem)}\n}}"
                )
        for axis in (0, 1):
            a, r = (4, 3), (4 * n, 3) if axis == 0 else (4, 3 * n)
            fns.append(
                f"func.func @ag_{elem}_{axis}(%x: {_t(a, elem)}) -> {_t(r, elem)} {{\n"
                f'  %y = "mlvm.all_gather"(%x) <{{axis = {axis} : i64}}> : ({_t(a, elem)}) -> {_t(r, elem)}\n'
                f"  func.return %y : {_t(r, elem)}\n}}"
            )
        for root in sorted({0, n - 1}):
            t = _t((6,), elem)
            fns.append(
                f"func.func @bc_{elem}_{root}(%x: {t}) -> {t} {{\n"
                f'  %y = "mlvm.broadcast"(%x) <{{root = {root} : i64}}> : ({t}) -> {t}\n'
                f"  func.return %y : {t}\n}}"
            )
    fns.append(
        "func.func @info() -> (tensor<i32>, tensor<i32>) {\n"
        '  "mlvm.barrier"() : () -> ()\n'
        '  %r = "mlvm.rank"() : () -> tensor<i32>\n'
        '  %w = "mlvm.world_size"() : () -> tensor<i32>\n'
        '  "mlvm.barrier"() : () -> ()\n'
        "  func.return %r, %w : tensor<i32>, tensor<i32>\n}"
    )
    if n == 2:
        fns.append(
            "func.func @send(%x: tensor<5xf32>) {\n"
            '  "mlvm.send"(%x) <{peer = 1 : i64, tag = 7 : i64}> : (tensor<5xf32>) -> ()\n'
            '  "mlvm.send"(%x) <{peer = 1 : i64, tag = 8 : i64}> : (tensor<5xf32>) -> ()\n'
            "  func.return\n}\n"
            "func.func @recv() -> (tensor<5xf32>, tensor<5xf32>) {\n"
            '  %a = "mlvm.recv"() <{peer = 0 : i64, tag = 7 : i64}> : () -> tensor<5xf32>\n'
            '  %b = "mlvm.recv"() <{peer = 0 : i64, tag = 8 : i64}> : () -> tensor<5xf32>\n'
            "  func.return %a, %b : tensor<5xf32>, tensor<5xf32>\n}"
        )
    return "\n\n".join(fns) + "\n"


@cache
def _source(n: int, tmp: str) -> Path:
    path = Path(tmp) / f"coll{n}.mlir"
    path.write_text(_program(n))
    return path


@pytest.fixture(scope="module")
def groups(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, par.Group]]:
    tmp = tmp_path_factory.mktemp("coll")
    out = {}
    for n in (1, 2, 3, 4):
        src = _source(n, str(tmp))
        out[n] = (src, par.Group(mlvm.compile(src), n, pin=False))
    return out


def _inputs(n: int, shape: tuple[int, ...], elem: str, seed: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    if elem == "f32":
        arrs = [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]
        if arrs[0].size > 2:
            arrs[0].flat[1] = np.nan  # NaN propagates through max / min / sum
    else:
        arrs = [rng.integers(-(2**31), 2**31 - 1, shape, dtype=np.int64).astype(np.int32) for _ in range(n)]
    return [[a] for a in arrs]


def inputs_for(name: str, n: int, rank: int) -> list[np.ndarray]:
    """Rank `rank`'s arguments of export `name` of `_program(n)` (also used
    by mpi_ranks.py, so both sides of an MPI run agree)."""
    seed = sum(name.encode()) * 31 + rank
    parts = name.split("_")
    if name == "info":
        return []
    elem = "i32" if "i32" in parts else "f32"
    if parts[0] == "ar":
        shape = SHAPES[int(parts[3])]
    elif parts[0] == "rs":
        shape = (5 * n, 3) if parts[3] == "0" else (2, 3 * n)
    elif parts[0] == "ag":
        shape = (4, 3)
    else:
        shape = (6,)
    return [_one(shape, elem, seed)]


def _one(shape: tuple[int, ...], elem: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if elem == "f32":
        return rng.standard_normal(shape).astype(np.float32)
    return rng.integers(-(2**31), 2**31 - 1, shape, dtype=np.int64).astype(np.int32)


def expected(name: str, n: int) -> list[list[np.ndarray]]:
    """Every rank's results of export `name` on `inputs_for`, by numpy."""
    ins = [inputs_for(name, n, r) for r in range(n)]
    parts = name.split("_")
    if name == "info":
        return [[np.array(r, np.int32), np.array(n, np.int32)] for r in range(n)]
    if parts[0] == "ar":
        total = _fold(parts[1], [i[0] for i in ins])
        return [[total] for _ in range(n)]
    if parts[0] == "rs":
        total = _fold(parts[1], [i[0] for i in ins])
        return [[p] for p in np.split(total, n, axis=int(parts[3]))]
    if parts[0] == "ag":
        whole = np.concatenate([i[0] for i in ins], axis=int(parts[2]))
        return [[whole] for _ in range(n)]
    root = int(parts[2])
    return [[ins[root][0]] for _ in range(n)]


def _fold(kind: str, arrs: list[np.ndarray]) -> np.ndarray:
    acc = arrs[0].copy()
    for a in arrs[1:]:
        with np.errstate(over="ignore", invalid="ignore"):
            acc = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}[kind](acc, a).astype(acc.dtype)
    return (acc / np.float32(len(arrs))).astype(np.float32) if kind == "mean" else acc


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("elem", ["f32", "i32"])
def test_all_reduce(groups: dict[int, tuple[Path, par.Group]], n: int, elem: str) -> None:
    src, group = groups[n]
    module, _ = parse_file(src)
    for kind in KINDS[elem]:
        for k, shape in enumerate(SHAPES):
            ins = _inputs(n, shape, elem, seed=k)
            fn = f"ar_{kind}_{elem}_{k}"
            got = group.run(fn, ins)
            want = _fold(kind, [i[0] for i in ins])
            ref = par.reference_run(module, fn, ins)
            for r in range(n):
                assert _same(got[r], want), (fn, r)
                assert _same(got[r], ref[r][0]), (fn, r)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("elem", ["f32", "i32"])
def test_reduce_scatter_all_gather_broadcast(
    groups: dict[int, tuple[Path, par.Group]], n: int, elem: str
) -> None:
    src, group = groups[n]
    for axis in (0, 1):
        shape = (5 * n, 3) if axis == 0 else (2, 3 * n)
        for kind in KINDS[elem]:
            ins = _inputs(n, shape, elem, seed=axis)
            got = group.run(f"rs_{kind}_{elem}_{axis}", ins)
            total = _fold(kind, [i[0] for i in ins])
            parts = np.split(total, n, axis=axis)
            for r in range(n):
                assert _same(got[r], parts[r]), (kind, axis, r)
        ins = _inputs(n, (4, 3), elem, seed=9)
        got = group.run(f"ag_{elem}_{axis}", ins)
        want = np.concatenate([i[0] for i in ins], axis=axis)
        assert all(_same(g, want) for g in got)
    for root in sorted({0, n - 1}):
        ins = _inputs(n, (6,), elem, seed=root)
        got = group.run(f"bc_{elem}_{root}", ins)
        assert all(_same(g, ins[root][0]) for g in got)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_rank_world_size_barrier(groups: dict[int, tuple[Path, par.Group]], n: int) -> None:
    _, group = groups[n]
    got = group.run("info", [()] * n)
    assert [(int(r), int(w)) for r, w in got] == [(r, n) for r in range(n)]


def test_send_recv(groups: dict[int, tuple[Path, par.Group]]) -> None:
    src, group = groups[2]
    x = np.arange(5, dtype=np.float32)
    got = group.run(["send", "recv"], [(x,), ()])
    assert got[0] == () or got[0] is None or len(got[0]) == 0
    assert _same(got[1][0], x) and _same(got[1][1], x)
    module, _ = parse_file(src)
    # The reference sends between the ranks' threads too.
    shared_ins = [[x], []]
    import threading

    out: dict[str, list[np.ndarray]] = {}

    def run(name: str, r: int, view: par._ThreadView) -> None:
        from mlvm import reference
        from mlvm.dialect.collective import COMM_KEY

        out[name] = reference.run(module, name, shared_ins[r], {COMM_KEY: view})

    shared = par._Shared(2)
    ts = [threading.Thread(target=run, args=(nm, r, par._ThreadView(r, shared)))
          for r, nm in enumerate(["send", "recv"])]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert _same(out["recv"][0], x)


def test_many_calls_in_a_row_stay_in_step(groups: dict[int, tuple[Path, par.Group]]) -> None:
    _, group = groups[3]
    for k in range(20):
        ins = _inputs(3, (1031,), "f32", seed=100 + k)
        got = group.run("ar_sum_f32_2", ins)
        want = _fold("sum", [i[0] for i in ins])
        assert all(_same(g, want) for g in got)


# Past the staging slots: one pass over the ranks' own buffers (12 KiB), and
# results large enough to be streamed past the caches (odd sizes: ragged
# chunks and tails).
LARGE = [(3001,), (1_100_003,)]


@pytest.mark.parametrize("n", [2, 3])
def test_large_all_reduce(tmp_path: Path, n: int) -> None:
    fns = []
    for elem, kinds in KINDS.items():
        for kind in kinds:
            for k, shape in enumerate(LARGE):
                t = _t(shape, elem)
                fns.append(f"func.func @ar_{kind}_{elem}_{k}(%x: {t}) -> {t} {{\n"
                           f'  %y = "mlvm.all_reduce"(%x) <{{kind = "{kind}"}}> : ({t}) -> {t}\n'
                           f"  func.return %y : {t}\n}}")
    src = tmp_path / "large.mlir"
    src.write_text("\n\n".join(fns) + "\n")
    group = par.Group(mlvm.compile(src), n, pin=False)
    for elem, kinds in KINDS.items():
        for kind in kinds:
            for k, shape in enumerate(LARGE):
                ins = _inputs(n, shape, elem, seed=k)
                fn = f"ar_{kind}_{elem}_{k}"
                want = _fold(kind, [i[0] for i in ins])
                for r, got in enumerate(group.run(fn, ins)):
                    assert _same(got, want), (fn, r)


def test_a_world_of_another_size_is_refused(tmp_path: Path) -> None:
    src = _source(2, str(tmp_path))
    group = par.Group(mlvm.compile(src), 3, pin=False)
    ins = _inputs(3, (4, 3), "f32", seed=0)
    with pytest.raises(RuntimeError, match="ERR_SHAPE"):
        group.run("ag_f32_0", ins)


def test_without_a_communicator_the_call_is_refused(tmp_path: Path) -> None:
    m = mlvm.compile(_source(1, str(tmp_path)))
    with pytest.raises(mlvm.MlvmCallError, match="ERR_INVALID"):
        m.ar_sum_f32_0(np.ones(1, np.float32))


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ('%y = "mlvm.all_reduce"(%x) <{kind = "prod"}> : (tensor<4xf32>) -> tensor<4xf32>',
         "kind must be one of sum, max, min, mean"),
        ('%y = "mlvm.all_gather"(%x) <{axis = 0 : i64}> : (tensor<4xf32>) -> tensor<6xf32>',
         "is not operand tensor<4xf32> times a world size along axis 0"),
        ('%y = "mlvm.all_gather"(%x) <{axis = 2 : i64}> : (tensor<4xf32>) -> tensor<8xf32>',
         "axis 2 is out of range for rank 1"),
        ('%y = "mlvm.reduce_scatter"(%x) <{kind = "sum", axis = 0 : i64}> : (tensor<4xf32>) -> tensor<3xf32>',
         "is not result tensor<3xf32> times a world size"),
        ('%y = "mlvm.broadcast"(%x) <{root = -1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>',
         "root must be >= 0"),
        ('%y = "mlvm.all_reduce"(%x) <{kind = "sum"}> : (tensor<4xf32>) -> tensor<4xi32>',
         "does not match the expected tensor<4xf32>"),
        ('%y = "mlvm.rank"() : () -> tensor<2xi32>', "does not match the expected tensor<i32>"),
    ],
)
def test_invalid_collectives_are_refused(tmp_path: Path, body: str, match: str) -> None:
    src = tmp_path / "bad.mlir"
    src.write_text(
        "func.func @f(%x: tensor<4xf32>) {\n  " + body + "\n  func.return\n}\n"
    )
    with pytest.raises(MlvmError, match=match) as info:
        mlvm.compile(src)
    assert str(info.value).startswith(f"{src}:2:3: error:")


def test_mean_of_integers_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "bad.mlir"
    src.write_text(
        "func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {\n"
        '  %y = "mlvm.all_reduce"(%x) <{kind = "mean"}> : (tensor<4xi32>) -> tensor<4xi32>\n'
        "  func.return %y : tensor<4xi32>\n}\n"
    )
    with pytest.raises(MlvmError, match='kind "mean" needs f32'):
        mlvm.compile(src)


def test_a_failing_rank_does_not_hang_the_others(tmp_path: Path) -> None:
    src = tmp_path / "ar.mlir"
    src.write_text(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        '  %y = "mlvm.all_reduce"(%x) <{kind = "sum"}> : (tensor<4xf32>) -> tensor<4xf32>\n'
        "  func.return %y : tensor<4xf32>\n}\n"
        "func.func @g(%x: tensor<4xf32>) -> tensor<8xf32> {\n"
        '  %y = "mlvm.all_gather"(%x) <{axis = 0 : i64}> : (tensor<4xf32>) -> tensor<8xf32>\n'
        "  func.return %y : tensor<8xf32>\n}\n"
    )
    ones = np.ones(4, np.float32)
    with par.Group(mlvm.compile(src), 2, pin=False) as group:
        # Checked before any rank starts: nothing waits, the group goes on.
        with pytest.raises(ValueError, match=r"rank 1: f: input 0 \('x'\) must have shape \(4,\)"):
            group.run("f", [(ones,), (np.ones(5, np.float32),)])
        assert all(_same(g, 2 * ones) for g in group.run("f", [(ones,), (ones,)]))
    # A rank that fails inside (here: a world of the wrong size for one rank's
    # export) poisons the world: its peers fail instead of waiting forever.
    with par.Group(mlvm.compile(src), 3, pin=False) as group:
        with pytest.raises(RuntimeError, match="ERR_SHAPE|ERR_INVALID"):
            group.run(["g", "f", "f"], [(ones,)] * 3)
        with pytest.raises(RuntimeError, match="make a new Group"):
            group.run("f", [(ones,)] * 3)
