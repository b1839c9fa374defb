"""Indexing ops: gather, pad, cumsum, iota.

Indices come from data at run time, so the generated code bounds them
itself: an index outside the operand never reads memory (gather gives
zeros there). Everything else is checked by the verifier.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from math import prod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    Float32Type,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlvm.codegen.lowering import c_literal, loop_nest
from mlvm.dialect.base import MlvmOp, result_dtype, result_shape, type_str
from mlvm.dialect.elements import ALL, NUMERIC
from mlvm.dialect.nn import _int, _norm_axis, _str
from mlvm.dialect.ops import _bool_prop, _f32_prop, exact_prop
from mlvm.dialect.shapes import contiguous_strides

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

INDEX_ELEMS = ("i32", "i64")


def _axis_prop(op: MlvmOp, rank: int, what: str, default: int = 0) -> int:
    return _norm_axis(op, _int(op, "axis", default), rank, what)


def _operand_axis(op: MlvmOp, default: int = 0) -> int:
    """The `axis` property, normalised against operand 0 (which must have one)."""
    t = op.operands[0].type
    rank = len(op.shape_of(op.operands[0], "operand"))
    if not rank:
        raise VerifyException(f"{op.name}: operand {type_str(t)} has no axis")
    return _axis_prop(op, rank, f"operand {type_str(t)}", default)


def _in_range(idx: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices with negative ones counted from the end, and where they lie
    in [0, n) (as the generated code bounds them)."""
    i = idx.astype(np.int64)
    i = np.where(i < 0, i + n, i)
    return i, (i >= 0) & (i < n)


def _along_axis_indices(op: MlvmOp) -> tuple[int, ...]:
    """The shape of `indices` of an op reading (or writing) its operand along
    `axis` element by element: the operand's rank, no larger dim off the axis."""
    ax = _operand_axis(op)
    shape = op.shape_of(op.operands[0], "operand")
    indices = op.operands[1]
    ishape = op.shape_of(indices, "indices")
    if len(ishape) != len(shape) or any(a > b for d, (a, b) in enumerate(zip(ishape, shape)) if d != ax):
        raise VerifyException(
            f"{op.name}: indices {type_str(indices.type)} must have the rank of operand "
            f"{type_str(op.operands[0].type)} and no larger dims off the axis")
    return ishape


def _along_axis_at(shape: Sequence[int], ax: int) -> str:
    """C offset of the element at loop indices i0, i1, ... with dim `ax` at `i`."""
    strides = contiguous_strides(shape)
    return " + ".join(f"{'i' if d == ax else f'i{d}'} * {strides[d]}" for d in range(len(shape)))


def _c_index(pad: str, src: str, n: int) -> list[str]:
    """C reading index `i` from src, negative ones counted from the end."""
    return [f"{pad}int64_t i = (int64_t){src};", f"{pad}if (i < 0) i += {n};"]


def _loops(shape: Sequence[int]) -> tuple[list[str], list[str], str]:
    """A loop nest over `shape` with indices i0, i1, ..."""
    return loop_nest([(f"i{d}", n) for d, n in enumerate(shape)])


@irdl_op_definition
class GatherOp(MlvmOp):
    """result[o..., j..., i...] = operand[o..., indices[j...], i...] along
    `axis` (numpy.take, ONNX Gather). Negative indices count from the end;
    an index outside [-n, n) gives zeros (nothing is read)."""

    name = "mlvm.gather"
    operand = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand", "indices")

    def norm_axis(self) -> int:
        return _operand_axis(self)

    def verify_(self) -> None:
        elem = self.expect_elem(self.operand, "operand", ALL)
        self.expect_elem(self.indices, "indices", INDEX_ELEMS)
        ax = self.norm_axis()
        shape = self.shape_of(self.operand, "operand")
        want = shape[:ax] + self.shape_of(self.indices, "indices") + shape[ax + 1:]
        self.expect_result(0, want, elem)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        x, idx = inputs
        ax = self.norm_axis()
        i, ok = _in_range(idx, x.shape[ax])
        out = np.take(x, np.where(ok, i, 0), axis=ax)
        mask = ok.reshape((1,) * ax + ok.shape + (1,) * (x.ndim - ax - 1))
        return [np.where(mask, out, np.zeros((), x.dtype)).astype(result_dtype(self))]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        ax = self.norm_axis()
        outer, n, inner = prod(shape[:ax]), shape[ax], prod(shape[ax + 1:])
        count = prod(self.shape_of(self.indices, "indices"))
        if prod(result_shape(self)) == 0:
            return
        e = self.elem_entry(self.operand, "operand")
        it = self.elem_entry(self.indices, "indices").ctype
        cg.stmt("\n    ".join([
            "{",
            f"    const {e.ctype} *in = {cg.ptr(self.operand)};",
            f"    const {it} *idx = {cg.ptr(self.indices)};",
            f"    {e.ctype} *out = {cg.ptr(self.result)};",
            "    mlvm_index_t o, j, k;",
            f"    for (o = 0; o < {outer}; ++o)",
            f"        for (j = 0; j < {count}; ++j, out += {inner}) {{",
            *_c_index("            ", "idx[j]", n),
            f"            if (i < 0 || i >= {n}) {{",
            f"                for (k = 0; k < {inner}; ++k) out[k] = 0;",
            "                continue;",
            "            }",
            f"            for (k = 0; k < {inner}; ++k) out[k] = in[(o * {n} + i) * {inner} + k];",
            "        }",
            "}",
        ]))


PAD_MODES = ("constant", "edge", "reflect")


@irdl_op_definition
class PadOp(MlvmOp):
    """The operand widened by `pads` = [begin_0, ..., begin_r, end_0, ...,
    end_r] elements per dim (numpy.pad, ONNX Pad). `mode`: "constant"
    (`value`), "edge" (the nearest element), "reflect" (mirrored without
    repeating the edge; needs pads < dim). Negative pads crop."""

    name = "mlvm.pad"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    pads = prop_def(DenseArrayBase.constr(i64))
    mode = opt_prop_def(StringAttr, StringAttr("constant"))
    value = opt_prop_def(FloatAttr, FloatAttr(0.0, Float32Type()))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def params(self) -> tuple[str, list[int], list[int]]:
        shape = self.shape_of(self.operand, "operand")
        attr = self.properties.get("pads")
        assert isinstance(attr, DenseArrayBase)
        pads = [int(v) for v in attr.get_values()]
        r = len(shape)
        if len(pads) != 2 * r:
            raise VerifyException(
                f"{self.name}: pads has {len(pads)} entries; operand "
                f"{type_str(self.operand.type)} needs {2 * r} (begin and end per dim)"
            )
        mode = _str(self, "mode", "constant")
        if mode not in PAD_MODES:
            raise VerifyException(f"{self.name}: mode '{mode}' is not one of {', '.join(PAD_MODES)}")
        begin, end = pads[:r], pads[r:]
        for d in range(r):
            size = shape[d] + begin[d] + end[d]
            if size < 0:
                raise VerifyException(f"{self.name}: pads crop dim {d} below size 0")
            if mode != "constant" and size > 0 and shape[d] == 0:
                raise VerifyException(f"{self.name}: mode '{mode}' cannot pad the empty dim {d}")
            if mode == "reflect" and (max(begin[d], end[d]) >= shape[d] > 0):
                raise VerifyException(
                    f"{self.name}: reflect pads of dim {d} must be smaller than its size {shape[d]}"
                )
        return mode, begin, end

    def verify_(self) -> None:
        elem = self.expect_elem(self.operand, "operand", ALL)
        mode, begin, end = self.params()
        exact_prop(self, "value", self.elem_entry(self.operand, "operand"))
        shape = self.shape_of(self.operand, "operand")
        self.expect_result(0, tuple(s + b + t for s, b, t in zip(shape, begin, end)), elem)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        mode, begin, end = self.params()
        x = inputs[0]
        # Crop first (negative pads), then widen.
        crop = tuple(slice(max(0, -b), x.shape[d] - max(0, -t)) for d, (b, t) in enumerate(zip(begin, end)))
        x = x[crop]
        width = [(max(0, b), max(0, t)) for b, t in zip(begin, end)]
        if mode == "constant":
            v = _f32_prop(self, "value")
            out = np.pad(x, width, mode="constant", constant_values=np.array(v).astype(x.dtype))
        else:
            np_pad: Any = np.pad  # (mode is a str the stubs cannot narrow)
            out = np_pad(x, width, mode=mode) if x.size else np.zeros(result_shape(self), x.dtype)
        return [np.asarray(out, dtype=x.dtype).reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        mode, begin, _ = self.params()
        shape = self.shape_of(self.operand, "operand")
        out = result_shape(self)
        if prod(out) == 0:
            return
        e = self.elem_entry(self.operand, "operand")
        strides = contiguous_strides(shape)
        opening, closing, pad = _loops(out)
        lines = ["{", f"    const {e.ctype} *in = {cg.ptr(self.operand)};",
                 f"    {e.ctype} *out = {cg.ptr(self.result)};", "    mlvm_index_t o = 0;"]
        if out:
            lines.append(f"    mlvm_index_t {', '.join(f'i{d}' for d in range(len(out)))};")
            lines.append(f"    int64_t {', '.join(f's{d}' for d in range(len(out)))};")
        lines += opening
        inside = []
        for d, n in enumerate(shape):
            lines.append(f"{pad}s{d} = (int64_t)i{d} - {begin[d]};")
            if mode == "edge":
                lines.append(f"{pad}s{d} = s{d} < 0 ? 0 : s{d} >= {n} ? {n - 1} : s{d};")
            elif mode == "reflect":
                lines.append(f"{pad}s{d} = s{d} < 0 ? -s{d} : s{d} >= {n} ? {2 * (n - 1)} - s{d} : s{d};")
            else:
                inside.append(f"s{d} >= 0 && s{d} < {n}")
        at = " + ".join(f"s{d} * {strides[d]}" for d in range(len(shape))) or "0"
        if mode == "constant":
            fill = e.store.format(c_literal(e, _f32_prop(self, "value")))
            cond = " && ".join(inside) or "1"
            lines.append(f"{pad}out[o++] = ({cond}) ? in[{at}] : {fill};")
        else:
            lines.append(f"{pad}out[o++] = in[{at}];")
        lines += closing
        lines.append("}")
        cg.stmt("\n    ".join(lines))


@irdl_op_definition
class CumsumOp(MlvmOp):
    """Running sum along `axis` (numpy.cumsum, ONNX CumSum). `exclusive`:
    each element leaves itself out; `reverse`: sums from the end. Integers
    wrap; f16 / bf16 accumulate in f32 and round each output."""

    name = "mlvm.cumsum"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))
    exclusive = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    reverse = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def norm_axis(self) -> int:
        return _operand_axis(self)

    def verify_(self) -> None:
        elem = self.expect_elem(self.operand, "operand", NUMERIC)
        self.norm_axis()
        self.expect_result(0, self.shape_of(self.operand, "operand"), elem)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        x = inputs[0]
        ax = self.norm_axis()
        e = self.elem_entry(self.operand, "operand")
        w = x.astype(np.float32) if e.stored_as_bits else x
        if _bool_prop(self, "reverse"):
            w = np.flip(w, ax)
        with np.errstate(all="ignore"):
            c = np.cumsum(w, axis=ax, dtype=w.dtype)
            if _bool_prop(self, "exclusive"):
                c = c - w if not e.is_float else np.concatenate(
                    [np.zeros_like(np.take(c, [0], axis=ax)), np.take(c, range(c.shape[ax] - 1), axis=ax)],
                    axis=ax)
        if _bool_prop(self, "reverse"):
            c = np.flip(c, ax)
        return [np.ascontiguousarray(c).astype(x.dtype)]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        ax = self.norm_axis()
        outer, n, inner = prod(shape[:ax]), shape[ax], prod(shape[ax + 1:])
        if outer * n * inner == 0:
            return
        e = self.elem_entry(self.operand, "operand")
        T = e.compute
        add = "acc + v" if e.is_float else f"({T})(({e.wide_unsigned})acc + ({e.wide_unsigned})v)"
        rev = _bool_prop(self, "reverse")
        at = f"(o * {n} + {'(' + str(n - 1) + ' - j)' if rev else 'j'}) * {inner} + k"
        body = (["out[p] = " + e.store.format("acc") + ";", f"acc = {add};"]
                if _bool_prop(self, "exclusive") else [f"acc = {add};", "out[p] = " + e.store.format("acc") + ";"])
        cg.stmt("\n    ".join([
            "{",
            f"    const {e.ctype} *in = {cg.ptr(self.operand)};",
            f"    {e.ctype} *out = {cg.ptr(self.result)};",
            "    mlvm_index_t o, j, k;",
            f"    for (o = 0; o < {outer}; ++o)",
            f"        for (k = 0; k < {inner}; ++k) {{",
            f"            {T} acc = 0;",
            f"            for (j = 0; j < {n}; ++j) {{",
            f"                const mlvm_index_t p = {at};",
            f"                const {T} v = {e.load.format('in[p]')};",
            *(f"                {x}" for x in body),
            "            }",
            "        }",
            "}",
        ]))


@irdl_op_definition
class IotaOp(MlvmOp):
    """result[i...] = start + step * i[axis]: the index along one axis
    (ONNX Range is the 1-D case)."""

    name = "mlvm.iota"
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), IntegerAttr(0, i64))
    start = opt_prop_def(FloatAttr, FloatAttr(0.0, Float32Type()))
    step = opt_prop_def(FloatAttr, FloatAttr(1.0, Float32Type()))
    traits = traits_def(Pure())

    def verify_(self) -> None:
        self.expect_elem(self.result, "result", NUMERIC)
        shape = self.shape_of(self.result, "result")
        if not shape:
            raise VerifyException(f"{self.name}: result {type_str(self.result.type)} has no axis")
        _axis_prop(self, len(shape), f"result {type_str(self.result.type)}")
        e = self.elem_entry(self.result, "result")
        for name in ("start", "step"):
            exact_prop(self, name, e, wraps=True)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        shape = result_shape(self)
        ax = _axis_prop(self, len(shape), "result")
        e = self.elem_entry(self.result, "result")
        start, step = _f32_prop(self, "start"), _f32_prop(self, "step")
        i = np.arange(shape[ax])
        if e.is_int:
            line = np.array([int(start) + int(step) * k for k in range(shape[ax])], dtype=object)
            from mlvm.dialect.ops import wrap_to
            v = wrap_to(line, e.dtype)
        else:
            w = np.float32 if e.stored_as_bits else e.dtype
            v = (np.asarray(start, w) + np.asarray(step, w) * i.astype(w)).astype(e.dtype)
        v = v.reshape((1,) * ax + (shape[ax],) + (1,) * (len(shape) - ax - 1))
        return [np.ascontiguousarray(np.broadcast_to(v, shape))]

    def lower(self, cg: Lowering) -> None:
        shape = result_shape(self)
        if prod(shape) == 0:
            return
        ax = _axis_prop(self, len(shape), "result")
        e = self.elem_entry(self.result, "result")
        start, step = _f32_prop(self, "start"), _f32_prop(self, "step")
        if e.is_int:
            val = (f"({e.compute})(({e.wide_unsigned}){c_literal(e, start)} + "
                   f"({e.wide_unsigned}){c_literal(e, step)} * ({e.wide_unsigned})i{ax})")
        else:
            val = f"({c_literal(e, start)} + {c_literal(e, step)} * ({e.compute})i{ax})"
        opening, closing, pad = _loops(shape)
        cg.stmt("\n    ".join([
            "{", f"    {e.ctype} *out = {cg.ptr(self.result)};", "    mlvm_index_t o = 0;",
            f"    mlvm_index_t {', '.join(f'i{d}' for d in range(len(shape)))};",
            *opening, f"{pad}out[o++] = {e.store.format(val)};", *closing, "}",
        ]))


@irdl_op_definition
class GatherElementsOp(MlvmOp):
    """result[i] = operand[i with dim `axis` replaced by indices[i]]
    (numpy.take_along_axis, ONNX GatherElements); indices and result share
    one shape, of the operand's rank. Negative indices count from the end;
    an index outside [-n, n) gives zero (nothing is read)."""

    name = "mlvm.gather_elements"
    operand = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand", "indices")

    def verify_(self) -> None:
        elem = self.expect_elem(self.operand, "operand", ALL)
        self.expect_elem(self.indices, "indices", INDEX_ELEMS)
        ishape = _along_axis_indices(self)
        self.expect_result(0, ishape, elem)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        x, idx = inputs
        ax = _operand_axis(self)
        i, ok = _in_range(idx, x.shape[ax])
        sub = x[tuple(slice(0, d) for d in idx.shape[:ax]) + (slice(None),)
                + tuple(slice(0, d) for d in idx.shape[ax + 1:])]
        out = np.take_along_axis(sub, np.where(ok, i, 0), axis=ax)
        return [np.where(ok, out, np.zeros((), x.dtype)).astype(result_dtype(self))]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        ishape = self.shape_of(self.indices, "indices")
        if prod(ishape) == 0:
            return
        ax = _operand_axis(self)
        e = self.elem_entry(self.operand, "operand")
        it = self.elem_entry(self.indices, "indices").ctype
        at = _along_axis_at(shape, ax)
        opening, closing, pad = _loops(ishape)
        cg.stmt("\n    ".join([
            "{",
            f"    const {e.ctype} *in = {cg.ptr(self.operand)};",
            f"    const {it} *idx = {cg.ptr(self.indices)};",
            f"    {e.ctype} *out = {cg.ptr(self.result)};",
            "    mlvm_index_t o = 0;",
            f"    mlvm_index_t {', '.join(f'i{d}' for d in range(len(ishape)))};",
            *opening,
            *_c_index(pad, "idx[o]", shape[ax]),
            f"{pad}out[o] = (i >= 0 && i < {shape[ax]}) ? in[{at}] : 0;",
            f"{pad}++o;",
            *closing,
            "}",
        ]))


@irdl_op_definition
class OneHotOp(MlvmOp):
    """result[..., k, ...] = on if indices[...] == k else off, the new dim
    (the result type's size, `depth`) at `axis` (ONNX OneHot). Negative
    indices count from the end; others out of range give an all-off row."""

    name = "mlvm.one_hot"
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), IntegerAttr(-1, i64))
    on = opt_prop_def(FloatAttr, FloatAttr(1.0, Float32Type()))
    off = opt_prop_def(FloatAttr, FloatAttr(0.0, Float32Type()))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("indices",)

    def norm_axis(self) -> int:
        return _axis_prop(self, len(self.shape_of(self.result, "result")), f"result {type_str(self.result.type)}",
                          default=-1)

    def verify_(self) -> None:
        self.expect_elem(self.indices, "indices", (*INDEX_ELEMS, "i8", "i16", "ui8", "ui16", "ui32", "ui64"))
        elem = self.expect_elem(self.result, "result", ALL)
        ishape = self.shape_of(self.indices, "indices")
        rshape = self.shape_of(self.result, "result")
        if len(rshape) != len(ishape) + 1:
            raise VerifyException(
                f"{self.name}: result {type_str(self.result.type)} must have one dim more than "
                f"indices {type_str(self.indices.type)}")
        ax = self.norm_axis()
        self.expect_result(0, ishape[:ax] + (rshape[ax],) + ishape[ax:], elem)
        e = self.elem_entry(self.result, "result")
        for name in ("on", "off"):
            exact_prop(self, name, e)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        idx = inputs[0].astype(np.int64)
        ax = self.norm_axis()
        depth = result_shape(self)[ax]
        i = np.where(idx < 0, idx + depth, idx)
        k = np.arange(depth).reshape((1,) * ax + (depth,) + (1,) * (idx.ndim - ax))
        hot = np.expand_dims(i, ax) == k
        dt = result_dtype(self)
        return [np.where(hot, np.array(_f32_prop(self, "on")).astype(dt),
                         np.array(_f32_prop(self, "off")).astype(dt)).astype(dt)]

    def lower(self, cg: Lowering) -> None:
        rshape = result_shape(self)
        if prod(rshape) == 0:
            return
        ax = self.norm_axis()
        depth = rshape[ax]
        e = self.elem_entry(self.result, "result")
        ishape = self.shape_of(self.indices, "indices")
        istr = contiguous_strides(ishape)
        at = " + ".join(f"i{d if d < ax else d + 1} * {istr[d]}" for d in range(len(ishape))) or "0"
        lit = {k: e.store.format(c_literal(e, _f32_prop(self, k))) for k in ("on", "off")}
        it = self.elem_entry(self.indices, "indices").ctype
        opening, closing, pad = _loops(rshape)
        cg.stmt("\n    ".join([
            "{",
            f"    const {it} *idx = {cg.ptr(self.indices)};",
            f"    {e.ctype} *out = {cg.ptr(self.result)};",
            "    mlvm_index_t o = 0;",
            f"    mlvm_index_t {', '.join(f'i{d}' for d in range(len(rshape)))};",
            *opening,
            *_c_index(pad, f"idx[{at}]", depth),
            f"{pad}out[o++] = i == (int64_t)i{ax} ? {lit['on']} : {lit['off']};",
            *closing,
            "}",
        ]))


@irdl_op_definition
class TopkOp(MlvmOp):
    """The k largest (or smallest) elements along `axis` and their indices,
    sorted, ties in index order (ONNX TopK); k is the results' size along
    the axis. NaN comes after every number either way, as in the onnx
    reference (a stable argsort)."""

    name = "mlvm.topk"
    operand = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), IntegerAttr(-1, i64))
    largest = opt_prop_def(BoolAttr, IntegerAttr.from_bool(True))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def norm_axis(self) -> int:
        return _operand_axis(self, default=-1)

    def is_largest(self) -> bool:
        attr = self.properties.get("largest")
        return not isinstance(attr, IntegerAttr) or bool(attr.value.data)

    def verify_(self) -> None:
        elem = self.expect_elem(self.operand, "operand", NUMERIC)
        ax = self.norm_axis()
        shape = self.shape_of(self.operand, "operand")
        k = self.shape_of(self.values, "values")[ax] if len(self.shape_of(self.values, "values")) == len(shape) else -1
        if not 0 <= k <= shape[ax]:
            raise VerifyException(
                f"{self.name}: values {type_str(self.values.type)} must have the rank of operand "
                f"{type_str(self.operand.type)} and at most {shape[ax]} elements along axis {ax}")
        want = shape[:ax] + (k,) + shape[ax + 1:]
        self.expect_result(0, want, elem, "values")
        idx = self.expect_elem(self.indices, "indices", INDEX_ELEMS)
        self.expect_result(1, want, idx, "indices")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        x = inputs[0]
        ax = self.norm_axis()
        k = result_shape(self)[ax]
        n = x.shape[ax]
        sign = -1 if self.is_largest() else 1
        is_float = self.elem_entry(self.operand, "operand").is_float
        moved = np.moveaxis(x, ax, -1)
        flat = moved.reshape(-1, n)

        def key(row: np.ndarray, j: int) -> tuple[int, float, int]:
            v = float(row[j]) if is_float else int(row[j])
            if is_float and math.isnan(v):
                return (1, 0.0, j)  # NaN after every number
            return (0, sign * v, j)

        rows = [sorted(range(n), key=functools.partial(key, row))[:k] for row in flat]
        order = np.array(rows, dtype=np.int64).reshape(moved.shape[:-1] + (k,))
        idx = np.moveaxis(order, -1, ax)
        vals = np.take_along_axis(x, idx, axis=ax)
        return [np.ascontiguousarray(vals), np.ascontiguousarray(idx).astype(result_dtype(self, 1))]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        ax = self.norm_axis()
        k = result_shape(self)[ax]
        outer, n, inner = prod(shape[:ax]), shape[ax], prod(shape[ax + 1:])
        if outer * inner * k == 0:
            return
        e = self.elem_entry(self.operand, "operand")
        it = self.elem_entry(self.indices, "indices").ctype
        op = ">" if self.is_largest() else "<"
        better = f"(v == v && (w != w || v {op} w))" if e.is_float else f"(v {op} w)"
        cg.stmt("\n    ".join([
            "{",
            f"    const {e.ctype} *in = {cg.ptr(self.operand)};",
            f"    {e.ctype} *vals = {cg.ptr(self.values)};",
            f"    {it} *idx = {cg.ptr(self.indices)};",
            "    mlvm_index_t o, q, j, m, count;",
            f"    for (o = 0; o < {outer}; ++o)",
            f"        for (q = 0; q < {inner}; ++q) {{",
            f"            {e.ctype} *vr = vals + o * {k * inner} + q;",
            f"            {it} *ir = idx + o * {k * inner} + q;",
            "            count = 0;",
            f"            for (j = 0; j < {n}; ++j) {{",
            f"                const {e.ctype} raw = in[(o * {n} + j) * {inner} + q];",
            f"                const {e.compute} v = {e.load.format('raw')};",
            f"                if (count == {k}) {{",
            f"                    const {e.compute} w = {e.load.format(f'vr[{k - 1} * {inner}]')};",
            f"                    if (!{better}) continue;",
            "                    --count;",
            "                }",
            "                /* insert after every element at least as good */",
            "                for (m = count; m > 0; --m) {",
            f"                    const {e.compute} w = {e.load.format(f'vr[(m - 1) * {inner}]')};",
            f"                    if (!{better}) break;",
            f"                    vr[m * {inner}] = vr[(m - 1) * {inner}];",
            f"                    ir[m * {inner}] = ir[(m - 1) * {inner}];",
            "                }",
            f"                vr[m * {inner}] = raw;",
            f"                ir[m * {inner}] = ({it})j;",
            "                ++count;",
            "            }",
            "        }",
            "}",
        ]))


SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


@irdl_op_definition
class ScatterElementsOp(MlvmOp):
    """A copy of `operand` with result[i with dim `axis` replaced by
    indices[i]] = updates[i] for every position i of indices (ONNX
    ScatterElements); `reduction` "add" / "mul" / "max" / "min" combines
    with the value there instead. Positions are taken in row-major order (a
    repeated index: the last update wins, or all combine). Negative indices
    count from the end; an index outside [-n, n) writes nothing."""

    name = "mlvm.scatter_elements"
    operand = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))
    reduction = opt_prop_def(StringAttr, StringAttr("none"))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand", "indices", "updates")
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = (0,)

    def kind(self) -> str:
        return _str(self, "reduction", "none")

    def verify_(self) -> None:
        elem = self.expect_elem(self.operand, "operand", ALL)
        self.expect_elem(self.indices, "indices", INDEX_ELEMS)
        self.expect_elem(self.updates, "updates", (elem,))
        ishape = _along_axis_indices(self)
        if self.shape_of(self.updates, "updates") != ishape:
            raise VerifyException(
                f"{self.name}: updates {type_str(self.updates.type)} must have the shape of indices "
                f"{type_str(self.indices.type)}")
        if self.kind() not in SCATTER_REDUCTIONS:
            raise VerifyException(
                f"{self.name}: reduction '{self.kind()}' is not one of {', '.join(SCATTER_REDUCTIONS)}")
        if self.kind() in ("add", "mul", "max", "min") and elem == "i1":
            raise VerifyException(f"{self.name}: reduction '{self.kind()}' on i1")
        self.expect_result(0, self.shape_of(self.operand, "operand"), elem)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        x, idx, upd = inputs
        ax = _operand_axis(self)
        n = x.shape[ax]
        e = self.elem_entry(self.operand, "operand")
        out = x.copy()
        kind = self.kind()
        for pos, i in np.ndenumerate(idx):
            i = int(i) + (n if int(i) < 0 else 0)
            if not 0 <= i < n:
                continue
            dst = list(pos)
            dst[ax] = i
            t = tuple(dst)
            u = upd[pos]
            if kind == "none":
                out[t] = u
                continue
            a = out[t]
            with np.errstate(all="ignore"):
                if e.stored_as_bits:
                    a32, u32 = np.float32(a), np.float32(u)
                    r = {"add": a32 + u32, "mul": a32 * u32,
                         "max": u32 if (u32 > a32 or u32 != u32) else a32,
                         "min": u32 if (u32 < a32 or u32 != u32) else a32}[kind]
                    out[t] = np.array(r).astype(e.dtype)
                else:
                    fn = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[kind]
                    out[t] = fn(np.array(a, dtype=e.dtype), np.array(u, dtype=e.dtype))
        return [out]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        ishape = self.shape_of(self.indices, "indices")
        e = self.elem_entry(self.operand, "operand")
        cg.stmt(f"mlvm_copy({cg.nbytes(self.result)}, {cg.ptr(self.operand)}, {cg.ptr(self.result)});")
        if prod(ishape) == 0:
            return
        ax = _operand_axis(self)
        at = _along_axis_at(shape, ax)
        T = e.compute
        kind = self.kind()
        if kind == "none":
            combine = "u"
        elif e.is_float:
            combine = {"add": "a + u", "mul": "a * u", "max": "(u > a || u != u) ? u : a",
                       "min": "(u < a || u != u) ? u : a"}[kind]
        else:
            U = e.wide_unsigned
            combine = {"add": f"({T})(({U})a + ({U})u)", "mul": f"({T})(({U})a * ({U})u)",
                       "max": "u > a ? u : a", "min": "u < a ? u : a"}[kind]
        it = self.elem_entry(self.indices, "indices").ctype
        opening, closing, pad = _loops(ishape)
        cg.stmt("\n    ".join([
            "{",
            f"    const {it} *idx = {cg.ptr(self.indices)};",
            f"    const {e.ctype} *upd = {cg.ptr(self.updates)};",
            f"    {e.ctype} *out = {cg.ptr(self.result)};",
            "    mlvm_index_t o = 0;",
            f"    mlvm_index_t {', '.join(f'i{d}' for d in range(len(ishape)))};",
            *opening,
            *_c_index(pad, "idx[o]", shape[ax]),
            f"{pad}if (i >= 0 && i < {shape[ax]}) {{",
            f"{pad}    {e.ctype} *p = &out[{at}];",
            f"{pad}    const {T} a = {e.load.format('*p')}, u = {e.load.format('upd[o]')};",
            f"{pad}    (void)a;",
            f"{pad}    *p = {e.store.format(combine)};",
            f"{pad}}}",
            f"{pad}++o;",
            *closing,
            "}",
        ]))


INDEX_OPS: list[type[MlvmOp]] = [ScatterElementsOp, TopkOp, GatherOp, GatherElementsOp, PadOp, CumsumOp, IotaOp, OneHotOp]
