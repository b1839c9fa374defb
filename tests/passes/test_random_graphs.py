"""Random graphs through every on/off combination of the passes.

Hypothesis draws a few hundred small programs (elementwise trees with
broadcasting, matmuls, reductions, reshapes, broadcasts, several results).
All of them go into one module, compiled once per pass combination; the
memory-plan validator runs on every function of every build. Each build
must agree with the numpy reference interpreter, and builds that differ
only in fusion and in-place must agree bit for bit (those passes move data,
they never change arithmetic).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import mlvm
from mlvm import reference
from mlvm.pipeline import CompileOptions, parse_file

from harness import lowered

N_GRAPHS = 400  # drawn; duplicates are dropped, at least 200 must remain
DIMS = (1, 2, 3, 5, 7)
BINARY = ("add", "sub", "mul", "max", "min", "div")
UNARY = ("neg", "exp", "tanh", "sigmoid", "relu")


def ttype(shape: tuple[int, ...]) -> str:
    dims = "x".join(map(str, shape))
    return f"tensor<{dims}{'x' if dims else ''}f32>"


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


@dataclass
class Graph:
    inputs: list[tuple[int, ...]]
    lines: list[str] = field(default_factory=list)
    values: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    results: list[str] = field(default_factory=list)

    def text(self, name: str) -> str:
        args = ", ".join(f"%a{i}: {ttype(s)}" for i, s in enumerate(self.inputs))
        types = dict(self.values)
        rtypes = ", ".join(ttype(types[r]) for r in self.results)
        body = "\n".join(f"  {line}" for line in self.lines)
        rets = ", ".join(self.results)
        return (
            f"func.func @{name}({args}) -> ({rtypes}) {{\n{body}\n"
            f"  func.return {rets} : {rtypes}\n}}\n"
        )


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    base = tuple(draw(st.lists(st.sampled_from(DIMS), min_size=1, max_size=3)))
    n_in = draw(st.integers(1, 3))
    inputs = []
    for _ in range(n_in):
        keep = draw(st.lists(st.booleans(), min_size=len(base), max_size=len(base)))
        shape = tuple(d if k else 1 for d, k in zip(base, keep))
        drop = draw(st.integers(0, len(shape)))
        inputs.append(shape[drop:])
    g = Graph(inputs, values=[(f"%a{i}", s) for i, s in enumerate(inputs)])
    for i in range(draw(st.integers(1, 9))):
        v = f"%v{i}"
        kind = draw(st.sampled_from(("binary", "binary", "unary", "unary", "matmul",
                                     "reduce", "reshape", "broadcast")))
        x, sx = draw(st.sampled_from(g.values))
        if kind == "binary":
            cands = [(y, sy) for y, sy in g.values if broadcast(sx, sy) is not None]
            y, sy = draw(st.sampled_from(cands))
            out = broadcast(sx, sy)
            assert out is not None
            op = draw(st.sampled_from(BINARY))
            g.lines.append(f'{v} = "mlvm.{op}"({x}, {y}) : ({ttype(sx)}, {ttype(sy)}) -> {ttype(out)}')
        elif kind == "unary":
            op, out = draw(st.sampled_from(UNARY)), sx
            g.lines.append(f'{v} = "mlvm.{op}"({x}) : ({ttype(sx)}) -> {ttype(out)}')
        elif kind == "matmul":
            if len(sx) != 2:
                continue
            n = draw(st.sampled_from(DIMS))
            w = f"%w{i}"
            g.lines.append(f'{w} = "mlvm.rng_normal"() <{{seed = {i} : i64}}> : () -> {ttype((sx[1], n))}')
            out = (sx[0], n)
            g.lines.append(f'{v} = "mlvm.matmul"({x}, {w}) : ({ttype(sx)}, {ttype((sx[1], n))}) -> {ttype(out)}')
        elif kind == "reduce":
            if not sx:
                continue
            axes = sorted(set(draw(st.lists(st.integers(0, len(sx) - 1), min_size=1, max_size=len(sx)))))
            red = draw(st.sampled_from(("sum", "max", "mean")))
            out = tuple(1 if a in axes else d for a, d in enumerate(sx))
            ax = ", ".join(map(str, axes))
            g.lines.append(
                f'{v} = "mlvm.reduce"({x}) <{{kind = "{red}", axes = array<i64: {ax}>, '
                f'keepdims = true}}> : ({ttype(sx)}) -> {ttype(out)}'
            )
        elif kind == "reshape":
            out = (int(np.prod(sx)),)
            g.lines.append(f'{v} = "mlvm.reshape"({x}) : ({ttype(sx)}) -> {ttype(out)}')
        else:
            out = broadcast(sx, base)
            if out is None:
                continue
            g.lines.append(f'{v} = "mlvm.broadcast_to"({x}) : ({ttype(sx)}) -> {ttype(out)}')
        g.values.append((v, out))
    computed = [v for v, _ in g.values[n_in:]] or [g.values[0][0]]
    g.results = draw(st.lists(st.sampled_from(computed), min_size=1, max_size=2, unique=True))
    return g


def draw_graphs(n: int) -> list[Graph]:
    out: list[Graph] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(graphs())
    def collect(g: Graph) -> None:
        out.append(g)

    collect()
    unique = {g.text("g"): g for g in out}
    return list(unique.values())


COMBOS = list(itertools.product((True, False), repeat=3))


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Graph], list[list[np.ndarray]]]:
    graphs_ = draw_graphs(N_GRAPHS)
    assert len(graphs_) >= 200
    path = tmp_path_factory.mktemp("graphs") / "graphs.mlir"
    path.write_text("\n".join(g.text(f"g{i}") for i, g in enumerate(graphs_)))
    rng = np.random.default_rng(0)
    inputs = [[rng.uniform(-2, 2, s).astype(np.float32) for s in g.inputs] for g in graphs_]
    return path, graphs_, inputs


@pytest.fixture(scope="module")
def expected(suite: tuple[Path, list[Graph], list[list[np.ndarray]]]) -> list[list[np.ndarray]]:
    path, graphs_, inputs = suite
    module, _ = parse_file(path)
    return [reference.run(module, f"g{i}", inputs[i]) for i in range(len(graphs_))]


def run_all(module: mlvm.Module, n: int, inputs: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    outs = []
    for i in range(n):
        r = module[f"g{i}"](*inputs[i])
        outs.append(list(r) if isinstance(r, tuple) else [r])
    return outs


@pytest.mark.parametrize("canon", (True, False), ids=("canon", "nocanon"))
def test_pass_combinations(
    canon: bool,
    suite: tuple[Path, list[Graph], list[list[np.ndarray]]],
    expected: list[list[np.ndarray]],
) -> None:
    path, graphs_, inputs = suite
    parsed, _ = parse_file(path)
    base_opts = CompileOptions(canonicalize=canon, fuse=False, inplace=False)
    base_ir = lowered(parsed, base_opts)
    base = run_all(mlvm.compile(path, options=base_opts), len(graphs_), inputs)
    builds = {(False, False): base}
    for fuse, inplace in [(True, True), (True, False), (False, True)]:
        opts = CompileOptions(canonicalize=canon, fuse=fuse, inplace=inplace)
        # (every function is lowered, so the memory-plan validator sees all
        # of them;) a graph these passes leave as the base lowers it is the
        # same C, its outputs the base's: only the others are compiled again
        ir = lowered(parsed, opts)
        other = [i for i in range(len(graphs_)) if ir[f"g{i}"] != base_ir[f"g{i}"]]
        outs = [list(b) for b in base]
        if other:
            sub = path.with_name(f"graphs-{canon}-{fuse}-{inplace}.mlir")
            sub.write_text("\n".join(graphs_[i].text(f"g{i}") for i in other))
            module = mlvm.compile(sub, options=opts)
            for i in other:
                r = module[f"g{i}"](*inputs[i])
                outs[i] = list(r) if isinstance(r, tuple) else [r]
        builds[(fuse, inplace)] = outs
    for key, outs in builds.items():
        for i, (got, want) in enumerate(zip(outs, expected, strict=True)):
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(
                    g, w, rtol=1e-4, atol=1e-5, equal_nan=True,
                    err_msg=f"graph g{i} {key}:\n{graphs_[i].text('g')}",
                )
            for g, b in zip(got, base[i], strict=True):
                assert np.array_equal(g.view(np.uint32), b.view(np.uint32)), (
                    f"graph g{i}: fuse/inplace {key} changed bits\n{graphs_[i].text('g')}"
                )
