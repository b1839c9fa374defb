"""Many small numeric cases, one compiled module.

A `Suite` collects cases. Each case is one `func.func` in generic MLIR form
(the header names the function `@FUNC`; the suite renames it `@case_N`),
its numpy inputs, and optionally an independent expectation computed by the
test itself (usually in float64). All cases of a suite go into one `.mlir`
file that is parsed once and compiled once with `mlvm.compile` (which caches
the `.so` by content), so a test module costs one C build, not one per case.

A suite may be compiled under several pass pipelines (`variants`, see
`VARIANTS`), e.g. the default one and plain kernel calls, so that one case
checks both the kernels and the fused / folded / in-place code.

For case N the suite gives:

* `suite.compiled(case)`  - the outputs of the generated C;
* `suite.reference(case)` - the outputs of `mlvm.reference.run` on the same
  parsed module, i.e. of each op's own numpy `reference`;
* `suite.check(case)`     - compares the C with the reference, and both with
  the test's independent expectation, under the case's tolerance.

Tolerances:

* `EXACT` - same shape, dtype and values (`np.array_equal`, NaN equal NaN):
  for ops where the C performs the same single IEEE operation as numpy.
* `BITS`  - the same 32-bit words (signed zeros and NaN payloads included):
  for data that is only copied (constant, fill).
* `Rel(r)` - `|got - want| <= r * |want|` (plus the smallest normal f32 to
  allow flushing to zero), the same non-finite values at the same places:
  for libm functions. Integer outputs of such a case are compared exactly.
* `Bound(value, err)`, returned by an expectation - `|got - value| <= err`
  element by element. `sum_bound(value, scale)` builds the bound
  `1e-5 * scale` used for accumulations (sums, means, matmuls, softmax
  cross-entropy), where `scale` is the float64 sum of the absolute values
  of the terms accumulated. The C and the op's reference must both lie
  within the bound of the float64 value, and within twice the bound of
  each other.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import mlvm
from mlvm import reference
from mlvm.dialect.elements import ELEMS, elem_for_dtype, to_bytes
from mlvm.pipeline import lower, parse_file

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
TINY = float(np.finfo(np.float32).tiny)

# Dimensions every shape generator draws from: unit dims and odd primes.
DIMS = (1, 1, 2, 3, 5, 7, 13, 31)

# --------------------------------------------------------------------------
# MLIR text
# --------------------------------------------------------------------------

_ELEM = {e.dtype: e.name for e in ELEMS.values()}


def ttype(shape: Sequence[int], dtype: Any = F32) -> str:
    """`tensor<3x4xf32>` for a shape and a numpy dtype (or an element name)."""
    elem = dtype if isinstance(dtype, str) else _ELEM[np.dtype(dtype)]
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}{'x' if dims else ''}{elem}>"


def type_of(x: np.ndarray | tuple[Sequence[int], Any]) -> str:
    if isinstance(x, np.ndarray | np.generic):
        return ttype(x.shape, x.dtype)
    shape, dtype = x
    return ttype(shape, dtype)


def f32_attr(v: float) -> str:
    """An f32 property value, exact (hex bits for NaN and infinities)."""
    f = np.float32(v)
    if not np.isfinite(f):
        return f"0x{int(np.array(f).view(np.uint32)):08X} : f32"
    return f"{float(f):.9e} : f32"


def i64_attr(v: int) -> str:
    return f"{int(v)} : i64"


def bool_attr(v: bool) -> str:
    return "true" if v else "false"


def array_attr(vals: Sequence[int]) -> str:
    return "array<i64" + (": " + ", ".join(str(int(v)) for v in vals) if len(vals) else "") + ">"


def str_attr(s: str) -> str:
    return '"' + s + '"'


def dense_attr(arr: np.ndarray) -> str:
    """`dense<"0x...">` holding the exact little-endian bytes of `arr`."""
    a = np.array(arr, order="C")  # keeps rank 0
    data = to_bytes(elem_for_dtype(a.dtype), a).hex().upper()  # type: ignore[arg-type]
    return f'dense<"0x{data}"> : {ttype(a.shape, a.dtype)}'


def generic_op(
    op: str,
    results: str,
    operands: Sequence[str],
    operand_types: Sequence[str],
    result_types: Sequence[str],
    props: Mapping[str, str] | None = None,
) -> str:
    """One op in generic form: `%r = "mlvm.x"(%a) <{...}> : (...) -> ...`."""
    p = ""
    if props:
        p = " <{" + ", ".join(f"{k} = {v}" for k, v in props.items()) + "}>"
    res = f"({', '.join(result_types)})" if len(result_types) != 1 else result_types[0]
    lhs = f"{results} = " if result_types else ""
    return (
        f'{lhs}"{op}"({", ".join(operands)}){p} : '
        f"({', '.join(operand_types)}) -> {res}"
    )


def op_func(
    op: str,
    inputs: Sequence[np.ndarray | tuple[Sequence[int], Any]],
    results: Sequence[tuple[Sequence[int], Any]],
    props: Mapping[str, str] | None = None,
) -> str:
    """`func.func @FUNC` that applies one op to its arguments and returns its results."""
    in_types = [type_of(x) for x in inputs]
    out_types = [type_of(r) for r in results]
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(in_types))
    names = [f"%r#{i}" for i in range(len(out_types))] if len(out_types) > 1 else ["%r"]
    res = f"%r:{len(out_types)}" if len(out_types) > 1 else "%r"
    body = generic_op(
        op, res, [f"%a{i}" for i in range(len(in_types))], in_types, out_types, props
    )
    ret_types = ", ".join(out_types)
    return (
        f"func.func @FUNC({args}) -> ({ret_types}) {{\n"
        f"  {body}\n"
        f"  func.return {', '.join(names)} : {ret_types}\n"
        f"}}"
    )


# --------------------------------------------------------------------------
# Tolerances
# --------------------------------------------------------------------------


def _same_layout(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert isinstance(got, np.ndarray), f"{what}: not an array: {got!r}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"


def _worst(got: np.ndarray, want: np.ndarray, bad: np.ndarray) -> str:
    idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    return (
        f"{int(bad.sum())} of {bad.size} elements differ; first at {idx}: "
        f"got {got[idx]!r}, want {want[idx]!r}"
    )


class Tolerance:
    def check(self, got: np.ndarray, want: np.ndarray, what: str) -> None:
        raise NotImplementedError


class _Exact(Tolerance):
    def check(self, got: np.ndarray, want: np.ndarray, what: str) -> None:
        _same_layout(got, want, what)
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
        floats = got.dtype.kind == "f" or got.dtype == ELEMS["bf16"].dtype
        if not np.array_equal(got, want, equal_nan=floats):
            bad = got != want
            if floats:
                bad &= ~(np.isnan(got) & np.isnan(want))
            raise AssertionError(f"{what}: not equal: {_worst(got, want, bad)}")

    def __repr__(self) -> str:
        return "EXACT"


class _Bits(Tolerance):
    def check(self, got: np.ndarray, want: np.ndarray, what: str) -> None:
        _same_layout(got, want, what)
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
        g, w = got.view(np.uint32), want.view(np.uint32)
        if not np.array_equal(g, w):
            raise AssertionError(f"{what}: bits differ: {_worst(g, w, g != w)}")

    def __repr__(self) -> str:
        return "BITS"


@dataclass(frozen=True)
class Rel(Tolerance):
    rtol: float = 1e-5

    def check(self, got: np.ndarray, want: np.ndarray, what: str) -> None:
        if np.asarray(want).dtype.kind in "iu":
            EXACT.check(got, np.asarray(want), what)  # integers are exact
            return
        _same_layout(got, want, what)
        assert got.dtype == F32, f"{what}: dtype {got.dtype} is not float32"
        g, w = got.astype(np.float64), np.asarray(want, dtype=np.float64)
        fin = np.isfinite(w)
        bad = ~fin & ~((g == w) | (np.isnan(g) & np.isnan(w)))
        with np.errstate(invalid="ignore"):
            bad |= fin & ~(np.abs(g - w) <= self.rtol * np.abs(w) + TINY)
        if bad.any():
            raise AssertionError(f"{what}: beyond rtol {self.rtol}: {_worst(g, w, bad)}")


EXACT = _Exact()
BITS = _Bits()
REL = Rel(1e-5)


@dataclass
class Bound:
    """An expected value with an absolute error bound per element."""

    value: np.ndarray
    err: np.ndarray

    def check(self, got: np.ndarray, what: str, factor: float = 1.0) -> None:
        v = np.asarray(self.value, dtype=np.float64)
        _same_layout(got, v, what)
        assert got.dtype == F32, f"{what}: dtype {got.dtype} is not float32"
        g = got.astype(np.float64)
        e = np.broadcast_to(np.asarray(self.err, dtype=np.float64), v.shape)
        fin = np.isfinite(v)
        bad = ~fin & ~((g == v) | (np.isnan(g) & np.isnan(v)))
        with np.errstate(invalid="ignore"):
            bad |= fin & ~(np.abs(g - v) <= factor * e)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
            raise AssertionError(
                f"{what}: {int(bad.sum())} of {bad.size} elements outside the bound; "
                f"first at {idx}: got {g[idx]!r}, want {v[idx]!r} +- {factor * e[idx]!r} "
                f"(error {abs(g[idx] - v[idx])!r})"
            )


def sum_bound(value: np.ndarray, scale: np.ndarray, k: float = 1e-5) -> Bound:
    """|got - value| <= k * scale (+ the smallest normal f32, for underflow)."""
    return Bound(np.asarray(value, np.float64), k * np.asarray(scale, np.float64) + TINY)


# --------------------------------------------------------------------------
# Suites
# --------------------------------------------------------------------------

Expectation = Callable[..., Sequence[Any]]


@dataclass
class Case:
    id: str
    body: str
    inputs: list[np.ndarray]
    expect: Expectation | None = None
    tol: Tolerance = EXACT
    group: str = "main"
    name: str = ""

    def __repr__(self) -> str:
        return f"<case {self.name} {self.id}>"


@dataclass
class _Built:
    path: Path | None
    module: Any  # mlvm.Module, None when every case is `shared`
    parsed: Any  # xDSL ModuleOp
    # Cases the default pipeline lowers to the same IR: their C is the same
    # code, so the default build runs them (see Suite._compile).
    shared: frozenset[str] = frozenset()


# Pass pipelines a suite can be compiled with: the default one, and plain
# kernel calls (no folding, no fusion, no in-place reuse).
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "plain": {"canonicalize": False, "fuse": False, "inplace": False},
    # kernels without arena scratch (conv2d's windows gathered per block)
    "no-workspaces": {"workspaces": False},
}

# The generated C of two conformance suites (the ONNX node suite, 1,477
# functions in 5.5 MB of C, and resize, whose build was 15 CPU-s) is
# compiled without optimisation: they check what the importer builds, and
# gcc -O3 took most of their time. The op suites, the element types' among them
# (narrow types, the undefined-behaviour edges), build at the default -O3,
# and the runtime every suite links is always built with the default flags.
LARGE_MODULE_CFLAGS = "-O0"


@contextmanager
def module_cflags(flags: str) -> Iterator[None]:
    """`mlvm.compile` inside adds `flags` to the generated module's own
    compile (MLVM_MODULE_CFLAGS, after what the environment already has),
    not to the runtime's."""
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        if flags:
            mp.setenv("MLVM_MODULE_CFLAGS", f"{os.environ.get('MLVM_MODULE_CFLAGS', '')} {flags}".strip())
        yield


@dataclass
class Suite:
    """Cases compiled together. Cases in another `group` go to another module.

    Each case runs under every name in `variants` (keys of `VARIANTS`): one
    module per (group, variant).
    """

    name: str
    params: dict[str, np.ndarray] = field(default_factory=dict)
    variants: tuple[str, ...] = ("default",)
    cases: list[Case] = field(default_factory=list)
    _built: dict[tuple[str, str], _Built] = field(default_factory=dict)
    _parsed: dict[str, Any] = field(default_factory=dict)
    _failed: dict[tuple[str, str], Exception] = field(default_factory=dict)

    def add(
        self,
        id: str,
        body: str,
        inputs: Sequence[np.ndarray] = (),
        expect: Expectation | None = None,
        tol: Tolerance = EXACT,
        group: str = "main",
    ) -> Case:
        assert "@FUNC(" in body, "the case's function must be named @FUNC"
        assert not self._built, "cases must be added before the suite is built"
        case = Case(id, body, [np.array(x, order="C") for x in inputs], expect, tol, group)
        case.name = f"case_{len(self.cases)}"
        self.cases.append(case)
        return case

    @property
    def ids(self) -> list[str]:
        seen: dict[str, int] = {}
        out = []
        for c in self.cases:
            n = seen.get(c.id, 0)
            seen[c.id] = n + 1
            out.append(c.id if n == 0 else f"{c.id}~{n}")
        return out

    def params_list(self) -> list[Any]:
        """`pytest.param(case, variant)` for every case and variant, with ids."""
        import pytest

        return [
            pytest.param(c, v, id=i if len(self.variants) == 1 else f"{i}@{v}")
            for v in self.variants
            for c, i in zip(self.cases, self.ids)
        ]

    def text(self, group: str = "main", only: frozenset[str] | None = None) -> str:
        """The group's module (`only`: just the cases of these names)."""
        funcs = [
            c.body.replace("@FUNC(", f"@{c.name}(") for c in self.cases
            if c.group == group and (only is None or c.name in only)
        ]
        inner = "\n".join("  " + line for f in funcs for line in f.splitlines())
        return "builtin.module {\n" + inner + "\n}\n"

    def path(self, group: str = "main", only: frozenset[str] | None = None) -> Path:
        """The group's module as a .mlir file (written once, named by content)."""
        text = self.text(group, only)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        d = Path(tempfile.gettempdir()) / "mlvm-op-tests"
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"{self.name}-{group}-{digest}.mlir"
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            tmp.replace(path)
        return path

    def build(self, group: str = "main", variant: str = "default") -> _Built:
        """Parse and compile one group's module (once per process and variant).

        A module that fails to compile fails every case of it with the same
        error, without compiling it again.
        """
        failed = self._failed.get((group, variant))
        if failed is not None:
            raise failed
        built = self._built.get((group, variant))
        if built is None:
            try:
                built = self._compile(group, variant)
            except Exception as e:
                self._failed[(group, variant)] = e
                raise
        return built

    def _compile(self, group: str, variant: str) -> _Built:
        parsed = self.parsed(group)
        shared: frozenset[str] = frozenset()
        only: frozenset[str] | None = None
        if variant != "default" and "default" in self.variants:
            # Most cases lower to the same IR under both pipelines (a single
            # op has nothing to fuse): only the others get a module of their
            # own, so the C compiler sees each distinct function once.
            mine = _lowered(parsed, variant)
            same = {n for n, f in _lowered(parsed, "default").items() if mine.get(n) == f}
            names = frozenset(c.name for c in self.cases if c.group == group)
            shared, only = frozenset(same & names), frozenset(names - same)
            if not only:
                return self._built.setdefault((group, variant), _Built(None, None, parsed, shared))
            # lowering a function never depends on the others (checked)
            sub, _ = parse_file(self.path(group, only))
            assert _lowered(sub, variant) == {n: mine[n] for n in only}, "cases lower together"
        path = self.path(group, only)
        kw = VARIANTS[variant]
        if kw:
            options = mlvm.CompileOptions(**kw)
            module = mlvm.compile(path, params=self.params or None, options=options)
        else:
            module = mlvm.compile(path, params=self.params or None)
        built = self._built[(group, variant)] = _Built(path, module, parsed, shared)
        return built

    def parsed(self, group: str = "main") -> Any:
        """The group's module parsed and verified (for the op references)."""
        if group not in self._parsed:
            self._parsed[group], _ = parse_file(self.path(group))
        return self._parsed[group]

    def compiled(self, case: Case, variant: str = "default") -> list[np.ndarray]:
        built = self.build(case.group, variant)
        if case.name in built.shared:
            built = self.build(case.group, "default")
        out = built.module[case.name](*case.inputs)
        return list(out) if isinstance(out, tuple) else [out]

    def reference(self, case: Case) -> list[np.ndarray]:
        parsed = self.parsed(case.group)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # e.g. the mean of nothing
            out = reference.run(parsed, case.name, case.inputs, self.params)
        return [np.asarray(x) for x in out]

    def expected(self, case: Case) -> list[Any] | None:
        if case.expect is None:
            return None
        with np.errstate(all="ignore"):
            out = case.expect(*[x.copy() for x in case.inputs])
        return list(out) if isinstance(out, list | tuple) else [out]

    def check(self, case: Case, variant: str = "default") -> list[np.ndarray]:
        """Compare C, op reference and independent expectation; return the C outputs."""
        got = self.compiled(case, variant)
        ref = self.reference(case)
        exp = self.expected(case)
        assert len(got) == len(ref), f"{len(got)} outputs, reference has {len(ref)}"
        if exp is not None:
            assert len(exp) == len(got), f"{len(got)} outputs, expectation has {len(exp)}"
        for i, (g, r) in enumerate(zip(got, ref)):
            e = exp[i] if exp is not None else None
            if isinstance(e, Bound):
                e.check(g, f"output {i}: C vs float64")
                e.check(r, f"output {i}: op reference vs float64")
                Bound(r.astype(np.float64), e.err).check(g, f"output {i}: C vs op reference", 2.0)
                continue
            case.tol.check(g, r, f"output {i}: C vs op reference")
            if e is not None:
                e = np.asarray(e)
                if case.tol is not EXACT and case.tol is not BITS:
                    case.tol.check(g, e, f"output {i}: C vs independent")
                    case.tol.check(r, e, f"output {i}: op reference vs independent")
                else:
                    e = e.astype(g.dtype) if e.dtype != g.dtype and e.dtype.kind == g.dtype.kind == "f" else e
                    case.tol.check(g, e, f"output {i}: C vs independent")
        return got


def lowered(parsed: Any, options: mlvm.CompileOptions) -> dict[str, str]:
    """Each function of a parsed module as the pipeline of `options` lowers
    it: the input to C emission, so equal text is the same C (up to the
    numbering of the module's statics)."""
    module = parsed.clone()
    lower(module, options, "<lowered>")
    return {f.sym_name.data: str(f) for f in module.ops}


def _lowered(parsed: Any, variant: str) -> dict[str, str]:
    return lowered(parsed, mlvm.CompileOptions(**VARIANTS[variant]))


# --------------------------------------------------------------------------
# Random data
# --------------------------------------------------------------------------


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_shape(g: np.random.Generator, rank: int, dims: Sequence[int] = DIMS) -> tuple[int, ...]:
    return tuple(int(g.choice(dims)) for _ in range(rank))


def f32_data(g: np.random.Generator, shape: Sequence[int], lo: float = -4.0, hi: float = 4.0) -> np.ndarray:
    return np.asarray(g.uniform(lo, hi, size=tuple(shape)), dtype=np.float32)


def i32_data(g: np.random.Generator, shape: Sequence[int], lo: int = -(2**31), hi: int = 2**31 - 1) -> np.ndarray:
    return np.asarray(g.integers(lo, hi, size=tuple(shape), endpoint=True, dtype=np.int64), dtype=np.int32)


def round_f32(x: np.ndarray) -> np.ndarray:
    """A float64 result rounded once to float32."""
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def wrap_i32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of exact int64 integers to int32."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + 2**31) % 2**32 - 2**31).astype(np.int32)
