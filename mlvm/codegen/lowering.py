"""The interface ops lower through: C expressions for values, static tables."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from math import prod
from typing import TYPE_CHECKING, Protocol

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Operation, SSAValue

from mlvm.dialect.elements import ELEMS, Elem, elem_of_type

if TYPE_CHECKING:
    from mlvm.dialect.base import MlvmOp
from mlvm.dialect.shapes import (
    MAX_RANK,
    broadcast_strides,
    collapse,
    contiguous_strides,
)


C_TYPES = {n: e.ctype for n, e in ELEMS.items()}
"""The C type stored elements of each mlvm element type have."""


def c_float(x: float) -> str:
    """An exact C literal for an f32 value (hex float; macros for inf/nan)."""
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "HUGE_VALF" if x > 0 else "(-HUGE_VALF)"
    return f"{float(x).hex()}f" if x != 0 else ("-0.0f" if math.copysign(1, x) < 0 else "0.0f")


def c_literal(e: Elem, x: float | int | bool) -> str:
    """An exact C literal of x in e's compute type (floats rounded to e first)."""
    if e.kind == "f":
        v = float(np.array(x, dtype=e.dtype).astype(np.float64))
        if e.compute == "double":
            if math.isnan(v):
                return "((double)NAN)"
            if math.isinf(v):
                return "HUGE_VAL" if v > 0 else "(-HUGE_VAL)"
            return v.hex() if v != 0 else ("-0.0" if math.copysign(1, v) < 0 else "0.0")
        return c_float(v)
    v = int(x)
    if e.kind == "b":
        return "1" if v else "0"
    if e.kind == "u":
        return f"{v}u" if e.bits <= 32 else f"{v}ull"
    if e.bits == 64:
        return "(-9223372036854775807ll - 1)" if v == -(2**63) else f"{v}ll"
    return "(-2147483647 - 1)" if v == -(2**31) else str(v)


def output_shared(cg: Lowering, op: MlvmOp) -> bool:
    """Whether an operand of op addresses its result's bytes during the op's
    loop (in place over an operand, or over a global the loop also reads);
    if not, the output is `restrict` and the C compiler vectorises without
    run-time overlap checks."""
    out = cg.ptr(op.results[0])
    return op.alias_operand() is not None or any(cg.ptr(v) == out for v in op.operands)


def loop_nest(dims: Sequence[tuple[str, int]], pad: str = "    ") -> tuple[list[str], list[str], str]:
    """C `for` loops over (index name, count) pairs, outermost first: the
    opening lines, the closing lines and the innermost indentation."""
    opening: list[str] = []
    closing: list[str] = []
    for name, n in dims:
        opening.append(f"{pad}for ({name} = 0; {name} < {n}; ++{name}) {{")
        closing.insert(0, f"{pad}}}")
        pad += "    "
    return opening, closing, pad


def elementwise_loop(
    cg: Lowering,
    result: SSAValue,
    operands: Sequence[SSAValue],
    body: Callable[[list[str]], tuple[list[str], str]],
    restrict: bool = True,
) -> None:
    """One loop nest computing `result` element by element.

    Operands broadcast to the result. Each is loaded and widened to its
    compute type (`a0`, `a1`, ...); `body(names)` returns statements and
    the result's value as an expression of its compute type, which the
    loop rounds and stores. `restrict` says no operand shares the result's
    bytes (the C compiler then vectorises without overlap checks).
    """
    out_shape = value_shape(result)
    strides = [contiguous_strides(out_shape)] + [
        broadcast_strides(value_shape(v), out_shape) for v in operands
    ]
    shape, cstrides = collapse(out_shape, strides)
    if prod(shape) == 0:
        return
    out_e = elem(result)
    lines = ["{"]
    for k, v in enumerate(operands):
        lines.append(f"    const {elem(v).ctype} *in{k} = {cg.ptr(v)};")
    lines.append(f"    {out_e.ctype} *{'restrict ' if restrict else ''}out = {cg.ptr(result)};")
    idx = [f"i{d}" for d in range(len(shape))]
    if idx:
        lines.append(f"    mlvm_index_t {', '.join(idx)};")
    opening, closing, pad = loop_nest(list(zip(idx, shape)))
    # Each operand is loaded in the innermost loop its index depends on, so
    # that a broadcast value (a per-channel scale, a zero point) is a loop
    # invariant the C compiler need not prove: with a branch in the body (a
    # saturating cast), GCC vectorises only loops whose loads do not alias
    # the uint8_t stores.
    loads: list[list[str]] = [[] for _ in range(len(shape) + 1)]
    names = []
    for k, v in enumerate(operands):
        e = elem(v)
        load = e.load.format(f"in{k}[{_at(idx, cstrides[k + 1])}]")
        depth = max((d + 1 for d, st in enumerate(cstrides[k + 1]) if st != 0), default=0)
        loads[depth].append(f"{'    ' * (depth + 1)}const {e.compute} a{k} = {load};")
        names.append(f"a{k}")
    lines += loads[0]
    for d, line in enumerate(opening):
        lines += [line, *loads[d + 1]]
    stmts, value = body(names)
    lines += [pad + s for s in stmts]
    lines.append(f"{pad}out[{_at(idx, cstrides[0])}] = {out_e.store.format(value)};")
    lines += closing
    lines.append("}")
    cg.stmt("\n    ".join(lines))


def elem(v: SSAValue) -> Elem:
    """The element type of a tensor value."""
    t = v.type
    assert isinstance(t, TensorType)
    e = elem_of_type(t.element_type)
    assert e is not None
    return e


def value_shape(v: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor value."""
    t = v.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _at(idx: Sequence[str], stride: Sequence[int]) -> str:
    terms = [f"{i} * {s}" if s != 1 else i for i, s in zip(idx, stride, strict=True) if s != 0]
    return " + ".join(terms) or "0"


def state_expr(ctype: str, offset: int) -> str:
    """A global's bytes, as the C of a function that uses state names them."""
    return f"(({ctype} *)(state + {offset}))"


# Stands for a static function's own name while its text is compared ('@'
# cannot appear in the generated C).
_SELF = "@self@"


class StaticTable:
    """Static const definitions shared by a translation unit, de-duplicated."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.defs: list[str] = []
        self._by_text: dict[tuple[str, str], str] = {}

    def _define(self, key: tuple[str, str], make: Callable[[str], str], guard: str = "") -> str:
        """The name of the definition `make(name)` (one per key), under the
        preprocessor condition `guard` if one is given."""
        name = self._by_text.get(key)
        if name is None:
            name = f"{self.prefix}{len(self.defs)}"
            text = make(name)
            self.defs.append(f"#if {guard}\n{text}\n#endif" if guard else text)
            self._by_text[key] = name
        return name

    def add(self, ctype: str, init: str, guard: str = "") -> str:
        """A static const struct (one of the same text is shared), defined
        under the preprocessor condition `guard` if one is given."""
        return self._define((ctype + guard, init),
                            lambda name: f"static const {ctype} {name} = {{{init}}};", guard)

    def add_array(self, ctype: str, items: Sequence[str], guard: str = "") -> str:
        """A static const array of `items` (one of the same text is shared),
        defined under the preprocessor condition `guard` if one is given."""
        init = ", ".join(items)
        return self._define(
            (f"{ctype}[]{guard}", init),
            lambda name: f"static const {ctype} {name}[{max(1, len(items))}] = {{{init or '0'}}};", guard)

    def add_function(self, make: Callable[[str], str], guard: str = "") -> str:
        """A file-scope static function: `make(name)` returns its definition.
        Functions of the same text are one (e.g. the bias + ReLU epilogue of
        every layer of an MLP): less code, and less for the compiler."""
        text = make(_SELF)
        return self._define((guard, text), lambda name: text.replace(_SELF, name), guard)


class Tables(Protocol):
    """Module-level tables of imports, queues and globals, filled while lowering."""

    def import_index(self, op: Operation) -> int: ...
    def queue_index(self, op: Operation) -> int: ...
    def global_offset(self, op: Operation) -> int: ...
    def narrow_rows(self) -> bool: ...
    def own_loops(self) -> bool: ...
    def taps_convs(self) -> bool: ...
    def data_of(self, v: SSAValue) -> np.ndarray | None: ...


class Lowering:
    """What an op's `lower` sees: pointers for its values, a place for statements.

    Ops that suspend use `resume_point` / `label` / `suspend` / `fail`: the
    function is then emitted as a coroutine whose state is `call` (a struct
    beginning with an `mlvm_call_header_t hdr`).
    """

    def __init__(
        self,
        statics: StaticTable,
        ptr: Callable[[SSAValue], str],
        tables: Tables | None = None,
        source: str = "<input>",
    ) -> None:
        self.statics = statics
        # the preprocessor condition the statements written now are under
        # (mlvm.fused's kernel root): statics they define get it too, so
        # that none is left unused
        self.guard = ""
        self._ptr = ptr
        self._tables = tables
        self._source = source
        self.lines: list[str] = []
        self.points = 0

    # -- coroutines --------------------------------------------------------
    def resume_point(self) -> int:
        self.points += 1
        return self.points

    def label(self, k: int) -> str:
        return f"mlvm_resume_{k}: ;"

    def suspend(self, k: int) -> str:
        return (
            f"{{ call->hdr.pc = {k}; call->hdr.status = MLVM_SUSPENDED; "
            "return MLVM_SUSPENDED; }"
        )

    def fail(self, status: str) -> str:
        return f"{{ call->hdr.pc = -1; call->hdr.status = {status}; return {status}; }}"

    def instance(self) -> str:
        return "call->hdr.inst"

    def call_header(self) -> str:
        return "call->hdr"

    def where(self, op: Operation) -> str:
        """A C string naming the op's source location, for reports."""
        from mlvm.codegen.names import c_string
        from mlvm.diagnostics import where

        return c_string(f"{where(op, self._source)}: {op.name}")

    def import_index(self, op: Operation) -> int:
        assert self._tables is not None
        return self._tables.import_index(op)

    def queue_index(self, op: Operation) -> int:
        assert self._tables is not None
        return self._tables.queue_index(op)

    def narrow_rows(self) -> bool:
        """Whether the module's single-row products call the narrow entries
        (nn.own_loop_epilogues and ops.rows_narrow); False where no module
        is at hand."""
        return self._tables is not None and self._tables.narrow_rows()

    def own_loops(self) -> bool:
        """Whether the module's activations and Linear biases go through the
        entries that apply them in their own loop (nn.own_loop_epilogues);
        False where no module is at hand."""
        return self._tables is not None and self._tables.own_loops()

    def taps_convs(self) -> bool:
        """Whether the module's in-place four-channel convolutions are loop
        nests of their own on cores without vectors (nn.taps_convs); False
        where no module is at hand."""
        return self._tables is not None and self._tables.taps_convs()

    def data_of(self, v: SSAValue) -> np.ndarray | None:
        """v's value where the compiler knows it (a constant, a parameter
        built into the module); None where no module is at hand."""
        return None if self._tables is None else self._tables.data_of(v)

    def state_ptr(self, op: Operation) -> str:
        """The bytes of the global a mlvm.global_load / global_store names."""
        from mlvm.dialect.base import elem_name

        from mlvm.dialect.state import GlobalAccessOp

        assert self._tables is not None and isinstance(op, GlobalAccessOp)
        v = op.data()
        assert isinstance(v.type, TensorType)
        e = elem_name(v.type.element_type)
        assert e is not None
        return state_expr(C_TYPES[e], self._tables.global_offset(op))

    def nbytes(self, v: SSAValue) -> int:
        from mlvm.analysis.storage import nbytes

        return nbytes(v)

    def ptr(self, v: SSAValue) -> str:
        return self._ptr(v)

    def workspace(self, op: Operation) -> str | None:
        """The op's planned scratch in the arena (mlvm.workspace), if any."""
        attr = op.attributes.get("mlvm.workspace")
        if not isinstance(attr, IntegerAttr):
            return None
        return f"((void *)(arena + {int(attr.value.data)}))"

    def stmt(self, text: str) -> None:
        self.lines.append(text)

    def flt(self, x: float) -> str:
        return c_float(x)

    def _within(self, guard: str) -> str:
        """`guard` and the one code is being written under (self.guard)."""
        if self.guard and guard:
            return f"({self.guard}) && ({guard})"
        return self.guard or guard

    def const_struct(self, ctype: str, init: str, guard: str = "") -> str:
        return "&" + self.statics.add(ctype, init, self._within(guard))

    def static_array(self, ctype: str, items: Sequence[str], guard: str = "") -> str:
        """Name of a file-scope static const array of `items` (under the
        preprocessor condition `guard`, if given)."""
        return self.statics.add_array(ctype, items, self._within(guard))

    def function(self, make: Callable[[str], str]) -> str:
        """Name of a new file-scope static function defined by `make(name)`."""
        return self.statics.add_function(make, self.guard)

    def iter(self, shape: Sequence[int], strides: Sequence[Sequence[int]]) -> str:
        """A static mlvm_iter_t over `shape` for up to two operands."""
        assert 1 <= len(strides) <= 2
        cshape, cstrides = collapse(shape, strides)
        assert len(cshape) <= MAX_RANK
        rows = [list(s) for s in cstrides] + [[0] * len(cshape)] * (2 - len(cstrides))

        def arr(vals: Sequence[int]) -> str:
            return "{" + ", ".join(str(v) for v in vals) + "}"

        init = f"{len(cshape)}, {arr(cshape)}, {{{arr(rows[0])}, {arr(rows[1])}}}"
        return self.const_struct("mlvm_iter_t", init)
