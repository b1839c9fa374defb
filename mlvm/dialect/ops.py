"""The mlvm ops: definition, shape rule, numpy reference and C lowering.

Each class is the single entry for its op. Property names and types follow
the dialect contract: integers are i64, floats f32, flags bool, lists
`array<i64>`, names and kinds strings.
"""

from __future__ import annotations

import math

from collections.abc import Callable, Mapping, Sequence
from math import prod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect import rng
from mlvm.dialect.elements import ALL, ELEMS, FLOATS, NUMERIC, Elem, elem_for_dtype, from_bytes
from mlvm.dialect.base import (
    DTYPES,
    MlvmOp,
    elem_name,
    result_dtype,
    result_shape,
    type_str,
)
from mlvm.dialect.shapes import (
    Shape,
    broadcast_shapes,
    broadcast_strides,
    can_broadcast_to,
    contiguous_strides,
    normalize_axis,
)

from mlvm.codegen.lowering import (
    c_float,
    c_literal,
    elem,
    elementwise_loop,
    loop_nest,
    output_shared,
    value_shape,
)

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

F32Attr = FloatAttr  # property values are checked to be f32 in the verifiers
TensorT = TensorType[Attribute]


def _f32_prop(op: MlvmOp, name: str) -> float:
    attr = op.properties.get(name)
    if attr is None:  # an optional property left out: its declared default
        attr = op.get_irdl_definition().properties[name].default_value
    if attr is None:
        raise VerifyException(f"{op.name}: missing property '{name}'")
    if not isinstance(attr, FloatAttr) or not isinstance(attr.type, Float32Type):
        raise VerifyException(f"{op.name}: property '{name}' must be an f32 float")
    return float(np.float32(attr.value.data))


def exact_prop(op: MlvmOp, name: str, e: Elem, wraps: bool = False) -> float:
    """An f32 property that must hold a value of element type e exactly:
    an integer for integer and bool types, within the type's range unless
    the op wraps it."""
    v = _f32_prop(op, name)
    if e.is_int or e.kind == "b":
        if not np.isfinite(v) or v != int(v):
            raise VerifyException(f"{op.name}: {name} {v} is not an integer but the result is {e.name}")
        if not wraps and not e.min <= v <= e.max:
            raise VerifyException(f"{op.name}: {name} {v} does not fit in {e.name}")
    return v


def _bool_prop(op: MlvmOp, name: str) -> bool:
    attr = op.properties.get(name)
    if attr is None:
        return False
    return bool(attr.value.data) if isinstance(attr, IntegerAttr) else False


def _int_prop(op: MlvmOp, name: str) -> int:
    attr = op.properties.get(name)
    assert isinstance(attr, IntegerAttr)
    return int(attr.value.data)


def _array_prop(op: MlvmOp, name: str) -> tuple[int, ...]:
    attr = op.properties.get(name)
    assert isinstance(attr, DenseArrayBase)
    return tuple(int(v) for v in attr.get_values())


# --------------------------------------------------------------------------
# Data: constant, param, rng_normal, fill
# --------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(MlvmOp):
    name = "mlvm.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    IS_DATA: ClassVar[bool] = True

    def verify_(self) -> None:
        t = self.tensor(self.result, "result")
        vt = self.value.type
        if not isinstance(vt, TensorType) or vt != t:
            raise VerifyException(
                f"{self.name}: value type {type_str(vt)} does not match result type "
                f"{type_str(t)}"
            )

    def data(self) -> np.ndarray:
        e = self.elem_entry(self.result, "result")
        flat = from_bytes(e, self.value.data.data)
        shape = result_shape(self)
        if flat.size == 1 and prod(shape) != 1:
            return np.full(shape, flat[0], dtype=e.dtype)
        return flat.reshape(shape)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [self.data()]


@irdl_op_definition
class ParamOp(MlvmOp):
    """A weight read from the parameter archive given at compile time.

    With `perm`, the value is the archive's array transposed by perm (result
    dim i is the archive's dim perm[i]): the compiler stores weights in the
    layout their kernel reads (see the mlvm-pack-weights pass), while the
    archive keeps the layout the model was written with. With `panel` =
    [width, columns] as well, that (transposed) [..., N] array is stored in
    panels: [ceil(N / width), ..., width], column j of row k at [j / width,
    k, j % width], zero past column N (a rank-2 matmul's `rhs_panel` reads
    a [K, N] one so, a conv2d with `w_layout = "ihwo"` a [C, KH, KW, O] one).
    With `lanes` = [I, KH, KW] instead, an i8 [O, I, KH, KW] convolution
    weight is stored [O, 4 k] in the lanes the int8 convolution kernel reads
    (`to_qlanes`; an int8 convolution's `w_lanes` reads it so). With `wino`
    = [O, C] instead, an f32 [O, C, 3, 3] convolution weight is stored
    transformed for Winograd's F(2x2, 3x3) as [16, O, C], or F(4x4, 3x3) as
    [36, O, C] (`to_wino`; a conv2d with `w_layout = "wino23"` or "wino43"
    reads it so), or each plane in its GEMM's panels as [16 or 36,
    ceil(O / 24), C, 24] (`to_apanels`; the conv2d's descriptor then says
    w_panel = 24). With `view`, the archive's array has that shape and the
    same elements as the archive shape the rest describes, into which it is
    reshaped first (row-major): an [N, K] Linear weight read as an [N, K, 1,
    1] convolution weight.
    """

    name = "mlvm.param"
    param_name = prop_def(StringAttr, prop_name="name")
    perm = opt_prop_def(DenseArrayBase.constr(i64))
    panel = opt_prop_def(DenseArrayBase.constr(i64))
    lanes = opt_prop_def(DenseArrayBase.constr(i64))
    wino = opt_prop_def(DenseArrayBase.constr(i64))
    view = opt_prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    IS_DATA: ClassVar[bool] = True

    def wino_dims(self) -> tuple[int, int, int] | None:
        """The verified (m, O, C) of a 3x3 weight stored for Winograd's
        F(m x m, 3x3), or None."""
        if self.wino is None:
            return None
        vals = _array_prop(self, "wino")
        shape = tuple(self.shape_of(self.result, "result"))
        ok = len(vals) == 2 and min(vals) > 0 and self.panel is None and self.lanes is None
        ok = ok and elem_name(self.tensor(self.result, "result").element_type) == "f32"
        planes = (shape[1:] == tuple(vals) if len(shape) == 3 else
                  len(shape) == 4 and shape[1:] == (a_panel_count(vals[0]), vals[1], A_PANEL))
        if not ok or not planes or shape[0] not in WINO_PLANES:
            raise VerifyException(
                f"{self.name}: wino [{', '.join(map(str, vals))}] does not describe "
                f"{type_str(self.result.type)}: [O, C] stores an f32 [O, C, 3, 3] weight as "
                f"[16, O, C] or [36, O, C], without panels or lanes (or each plane in its GEMM's "
                f"panels: [16 or 36, ceil(O / {A_PANEL}), C, {A_PANEL}])"
            )
        return WINO_PLANES[shape[0]], vals[0], vals[1]

    def wino_panels(self) -> bool:
        """Whether a Winograd weight's planes are in their GEMM's panels."""
        return self.wino_dims() is not None and len(self.shape_of(self.result, "result")) == 4

    def layout_key(self) -> tuple[object, ...]:
        """What makes two reads of one archive array store the same data."""
        return (self.permutation(), self.panels(), self.lane_dims(), self.wino_dims(),
                self.wino_panels(), self.view_shape())

    def view_shape(self) -> tuple[int, ...] | None:
        """The verified shape of the archive's array where `view` gives one."""
        if self.view is None:
            return None
        vals = _array_prop(self, "view")
        shape = self.archive_shape()
        if not vals or min(vals) < 0 or prod(vals) != prod(shape):
            raise VerifyException(
                f"{self.name}: view [{', '.join(map(str, vals))}] does not hold the "
                f"{prod(shape)} elements of the archive shape {list(shape)}"
            )
        return vals

    def array_shape(self) -> tuple[int, ...]:
        """The shape the archive's array must have."""
        return self.view_shape() or self.archive_shape()

    def lane_dims(self) -> tuple[int, int, int] | None:
        """The verified [I, KH, KW] of a convolution weight stored in lanes, or None."""
        if self.lanes is None:
            return None
        vals = _array_prop(self, "lanes")
        shape = self.shape_of(self.result, "result")
        ok = len(vals) == 3 and min(vals) > 0 and self.panel is None and len(shape) == 2
        ok = ok and elem_name(self.tensor(self.result, "result").element_type) == "i8"
        if not ok or shape[1] != 4 * qconv_lane_count(*vals):
            raise VerifyException(
                f"{self.name}: lanes [{', '.join(map(str, vals))}] does not describe "
                f"{type_str(self.result.type)}: [I, KH, KW] stores an i8 [O, I, KH, KW] weight as "
                f"[O, 4 k] (k = {qconv_lane_count(*vals) if len(vals) == 3 and min(vals) > 0 else '?'}), "
                "without panels"
            )
        return vals[0], vals[1], vals[2]

    def panels(self) -> tuple[int, int] | None:
        """The verified (width, columns) of a weight stored in panels, or None."""
        if self.panel is None:
            return None
        vals = _array_prop(self, "panel")
        shape = self.shape_of(self.result, "result")
        ok = len(vals) == 2 and len(shape) >= 3 and vals[0] >= PANEL_MULTIPLE
        if ok:
            width, cols = vals
            ok = width % PANEL_MULTIPLE == 0 and cols > 0 and shape[-1] == width
            ok = ok and shape[0] == -(-cols // width)
        if not ok:
            raise VerifyException(
                f"{self.name}: panel [{', '.join(map(str, vals))}] does not describe "
                f"{type_str(self.result.type)}: [width, columns] with width a multiple of "
                f"{PANEL_MULTIPLE} stores a [..., columns] array as [ceil(columns / width), ..., width]"
            )
        return vals[0], vals[1]

    def logical_shape(self) -> tuple[int, ...]:
        """The shape before panels: the archive's, transposed by perm."""
        shape = tuple(self.shape_of(self.result, "result"))
        wino = self.wino_dims()
        if wino is not None:
            return (*wino[1:], 3, 3)
        lanes = self.lane_dims()
        if lanes is not None:
            return (shape[0], *lanes)
        pan = self.panels()
        return shape if pan is None else (*shape[1:-1], pan[1])

    def permutation(self) -> tuple[int, ...] | None:
        """The verified perm, or None for the archive's own layout."""
        if self.perm is None:
            return None
        perm = _array_prop(self, "perm")
        rank = len(self.logical_shape())
        if sorted(perm) != list(range(rank)):
            raise VerifyException(
                f"{self.name}: perm [{', '.join(map(str, perm))}] is not a permutation of the {rank} dims "
                f"of {type_str(self.result.type)}"
            )
        return perm

    def archive_shape(self) -> tuple[int, ...]:
        """The shape the parameter has in the archive."""
        shape = self.logical_shape()
        perm = self.permutation()
        if perm is None:
            return shape
        out = [0] * len(shape)
        for i, p in enumerate(perm):
            out[p] = shape[i]
        return tuple(out)

    def stored(self, arr: np.ndarray) -> np.ndarray:
        """The archive's array `arr` in the layout this op gives it."""
        if self.view is not None:
            arr = arr.reshape(self.archive_shape())
        perm = self.permutation()
        out = arr if perm is None else np.ascontiguousarray(np.transpose(arr, perm))
        if self.lane_dims() is not None:
            return to_qlanes(out)
        wino = self.wino_dims()
        if wino is not None:
            u = to_wino(out, wino[0])
            return np.stack([to_apanels(plane) for plane in u]) if self.wino_panels() else u
        pan = self.panels()
        return out if pan is None else to_panels(out, pan[0])

    def verify_(self) -> None:
        self.tensor(self.result, "result")
        self.panels()
        self.lane_dims()
        self.wino_dims()
        self.permutation()
        self.view_shape()

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [self.stored(params[self.param_name.data])]


# Panel widths are multiples of the widest sliver of any matmul kernel.
PANEL_MULTIPLE = 32
# Weights of at least this many elements are stored in panels: from there
# the kernels pack a strided b on every call (MLVM_MM_PACK_ABOVE), or read
# it across a page per row.
PANEL_MIN_ELEMENTS = 512 * 512
# Smaller weights from 128 x 128 up, where every product that reads them
# has 2 to 64 rows (a Linear layer's batch): in place their tiles read
# rows n floats apart in short slices (a few L1 sets where that is a
# multiple of 512 bytes), in panels contiguous slivers (8 x 256 x 784 and
# 8 x 256 x 256 0.88x the time with AVX2, 0.93x with AVX-512, 8 x 128 x
# 128 0.95x). One row is slower so (1.1-1.2x: its vector kernels stream
# b's rows); from 32 rows about the same (0.93x-1.0x), from 65 not chosen.
PANEL_FEW_ROWS_MIN_ELEMENTS = 128 * 128
PANEL_FEW_ROWS = range(2, 65)


def matmul_prefers_panels(k: int, n: int, rows: Sequence[int] = ()) -> bool:
    """Whether a constant [k, n] rhs of products of `rows` rows each (the
    lhs's) is read faster stored in panels: a large one, or a smaller one
    of a few rows' products, padded by at most 1/16 (a 1024 x 1024 weight
    5-30 % faster, from one row to 512, on both AVX-512 and AVX2)."""
    padded = -(-n // PANEL_MULTIPLE) * PANEL_MULTIPLE
    few_rows = bool(rows) and all(m in PANEL_FEW_ROWS for m in rows)
    large = k * n >= PANEL_MIN_ELEMENTS or (few_rows and k * n >= PANEL_FEW_ROWS_MIN_ELEMENTS)
    return large and 16 * (padded - n) <= n


def to_panels(b: np.ndarray, width: int) -> np.ndarray:
    """An [..., N] array as [ceil(N / width), ..., width] panels, zero-padded
    (a [K, N] matrix as [ceil(N / width), K, width])."""
    n = b.shape[-1]
    np_ = -(-n // width)
    padded = np.zeros((*b.shape[:-1], np_ * width), dtype=b.dtype)
    padded[..., :n] = b
    return np.ascontiguousarray(np.moveaxis(padded.reshape(*b.shape[:-1], np_, width), -2, 0))


# A GEMM's [M, K] left operand in panels (kernels_nn.h's MLVM_CONV_A_PANEL
# and MLVM_CONV_A_PANEL_K; Winograd's weight planes): per slice of 256
# columns, panels of 24 rows.
A_PANEL, A_PANEL_K = 24, 256


def a_panel_count(m: int) -> int:
    """Panels of A_PANEL rows that m rows take (the last zero-padded)."""
    return -(-m // A_PANEL)


def to_apanels(a: np.ndarray) -> np.ndarray:
    """An [M, K] matrix as its GEMM's panels: [ceil(M / 24), K, 24]
    holding, slice after slice of 256 columns, each panel's [kc][24] (kc the
    slice's width), zero past M (mlvm_conv2d_a_panel_index)."""
    m, k = a.shape
    p = a_panel_count(m)
    padded = np.zeros((p * A_PANEL, k), dtype=a.dtype)
    padded[:m] = a
    parts = [padded[:, k0:k0 + A_PANEL_K].reshape(p, A_PANEL, -1).transpose(0, 2, 1).reshape(-1)
             for k0 in range(0, k, A_PANEL_K)]
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=a.dtype)
    return np.ascontiguousarray(flat.reshape(p, k, A_PANEL))


def from_apanels(u: np.ndarray, m: int) -> np.ndarray:
    """The [m, K] matrix `to_apanels` stored as u."""
    p, k, _ = u.shape
    flat = u.reshape(-1)
    out = np.empty((p * A_PANEL, k), dtype=u.dtype)
    pos = 0
    for k0 in range(0, k, A_PANEL_K):
        kc = min(A_PANEL_K, k - k0)
        panels = flat[pos:pos + p * kc * A_PANEL].reshape(p, kc, A_PANEL)
        out[:, k0:k0 + kc] = panels.transpose(0, 2, 1).reshape(-1, kc)
        pos += p * kc * A_PANEL
    return np.ascontiguousarray(out[:m])


def from_panels(p: np.ndarray, cols: int) -> np.ndarray:
    """The [..., cols] array `to_panels` stored as `p`."""
    whole = np.moveaxis(p, 0, -2)
    flat = whole.reshape(*whole.shape[:-2], whole.shape[-2] * whole.shape[-1])
    return np.ascontiguousarray(flat[..., :cols])


# Winograd's F(m x m, 3x3) (conv_wino.c): U = G g G^T of each 3x3 kernel g,
# G of m = 2 and m = 4 (interpolation points 0, +-1, +-2).
WINO_G = {
    2: np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]]),
    4: np.array([[1 / 4, 0.0, 0.0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                 [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0.0, 0.0, 1.0]]),
}
# planes of a transformed weight -> m
WINO_PLANES = {(m + 2) * (m + 2): m for m in WINO_G}


def to_wino(w: np.ndarray, m: int) -> np.ndarray:
    """An f32 [O, C, 3, 3] weight as [(m + 2)^2, O, C]: plane (m + 2) i + j
    holds element (i, j) of G g G^T, computed in float64 and rounded once."""
    o, c = w.shape[:2]
    g = WINO_G[m]
    u = np.einsum("ia,ocab,jb->ijoc", g, w.astype(np.float64), g)
    return np.ascontiguousarray(u.reshape(-1, o, c).astype(np.float32))


def from_wino(u: np.ndarray) -> np.ndarray:
    """The [O, C, 3, 3] weight `to_wino` stored as u (G has full column
    rank: its left inverse recovers g, to the rounding of u)."""
    planes, o, c = u.shape
    k = WINO_PLANES[planes] + 2
    gp = np.linalg.pinv(WINO_G[k - 2])
    w = np.einsum("ai,ijoc,bj->ocab", gp, u.astype(np.float64).reshape(k, k, o, c), gp)
    return np.ascontiguousarray(w.astype(np.float32))


def qconv_lane_count(cg: int, kh: int, kw: int) -> int:
    """k, the lanes of four bytes per output channel of an int8 convolution
    weight [O, cg, kh, kw] in lanes (kernels.h's w_lanes): four input
    channels per lane, or for one or two, four consecutive taps."""
    return -(-(cg * kh * kw) // 4) if cg < 3 else -(-cg // 4) * kh * kw


def to_qlanes(w: np.ndarray) -> np.ndarray:
    """An [O, I, KH, KW] weight as [O, 4 k] lanes (kernels.h's w_lanes):
    for I >= 3 lane (q KH + i) KW + j holds channels 4q .. 4q + 3 at (i, j),
    zero past I; for I < 3 each row is w[o] flattened, zero-padded."""
    o, cg, kh, kw = w.shape
    k = qconv_lane_count(cg, kh, kw)
    if cg < 3:
        out = np.zeros((o, 4 * k), w.dtype)
        out[:, : cg * kh * kw] = w.reshape(o, -1)
        return out
    q = -(-cg // 4)
    padded = np.zeros((o, 4 * q, kh, kw), w.dtype)
    padded[:, :cg] = w
    return np.ascontiguousarray(padded.reshape(o, q, 4, kh, kw).transpose(0, 1, 3, 4, 2).reshape(o, 4 * k))


def from_qlanes(lanes: np.ndarray, cg: int, kh: int, kw: int) -> np.ndarray:
    """The [O, cg, kh, kw] weight that `to_qlanes` stored as lanes."""
    o = lanes.shape[0]
    if cg < 3:
        return np.ascontiguousarray(lanes[:, : cg * kh * kw].reshape(o, cg, kh, kw))
    q = -(-cg // 4)
    w = lanes.reshape(o, q, kh, kw, 4).transpose(0, 1, 4, 2, 3).reshape(o, 4 * q, kh, kw)
    return np.ascontiguousarray(w[:, :cg])


@irdl_op_definition
class RngNormalOp(MlvmOp):
    """Standard normal samples, a pure function of `seed` and the shape.

    The compiler computes them (see `rng.py`) and embeds the bits, so every
    target gets the same values.
    """

    name = "mlvm.rng_normal"
    seed = prop_def(IntegerAttr.constr(type=i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    IS_DATA: ClassVar[bool] = True

    def verify_(self) -> None:
        self.expect_elem(self.result, "result", ("f32",))

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [rng.normal(_int_prop(self, "seed"), result_shape(self))]


@irdl_op_definition
class FillOp(MlvmOp):
    name = "mlvm.fill"
    value = prop_def(FloatAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        exact_prop(self, "value", self.elem_entry(self.result, "result"))

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        e = self.elem_entry(self.result, "result")
        v = _f32_prop(self, "value")
        return [np.full(result_shape(self), int(v) if e.is_int else v, dtype=e.dtype)]

    def lower(self, cg: Lowering) -> None:
        e = self.elem_entry(self.result, "result")
        v = _f32_prop(self, "value")
        n = prod(result_shape(self))
        if e.name in ("f32", "i32"):
            lit = cg.flt(v) if e.name == "f32" else str(int(v))
            cg.stmt(f"mlvm_fill_{e.name}({n}, {lit}, {cg.ptr(self.result)});")
            return
        lit = c_literal(e, v)
        elementwise_loop(cg, self.result, [], lambda names: ([], lit))


# --------------------------------------------------------------------------
# Elementwise ops: one scalar expression per element type
# --------------------------------------------------------------------------


def c_template(templates: Mapping[str, str], e: Elem) -> str | None:
    """An op's C template for element type e: by name, then by kind
    ("f" float, "i" signed, "u" unsigned falling back to "i", "b" bool)."""
    for key in (e.name, e.kind, "i" if e.kind == "u" else ""):
        tpl = templates.get(key)
        if tpl is not None:
            return tpl
    return None


def c_format(tpl: str, e: Elem, args: Sequence[str]) -> str:
    """Fill a template: {0}.. the operands, {T} the compute type, {U} the
    unsigned type integers wrap in, {N} the scalar.h helper suffix, {F} the
    float suffix of math functions and literals ("f" for float, "" for double)."""
    name = "f32" if e.compute == "float" else e.name
    return tpl.format(*args, T=e.compute, U=e.wide_unsigned, N=name,
                      F="f" if e.compute == "float" else "")


def np_compute(fn: Callable[..., Any], inputs: Sequence[np.ndarray], out: np.dtype) -> np.ndarray:
    """fn over the inputs in their compute type (f16 / bf16 widened to f32),
    the result converted to `out` (rounded to nearest even)."""
    with np.errstate(all="ignore"):
        wide = [x.astype(np.float32) if x.dtype in HALF_DTYPES else x for x in inputs]
        return np.asarray(fn(*wide)).astype(out)


HALF_DTYPES = (ELEMS["f16"].dtype, ELEMS["bf16"].dtype)


def wrap_to(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Python ints wrapped (two's complement) into an integer dtype."""
    info = np.iinfo(dtype)
    span = 1 << (8 * dtype.itemsize)
    flat = [(int(v) - info.min) % span + info.min for v in np.asarray(values).reshape(-1)]
    return np.array(flat, dtype=dtype).reshape(np.shape(values))


def int_binary(fn: Callable[[int, int], int]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A numpy reference from an exact rule on Python ints (wrapped back)."""

    def apply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        vals = np.array([fn(int(x), int(y)) for x, y in zip(a.reshape(-1), b.reshape(-1))],
                        dtype=object)
        return wrap_to(vals.reshape(a.shape), a.dtype)

    return apply


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_aware_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's true division for floats; truncation (x / 0 = 0, wrapping) for ints."""
    if np.asarray(a).dtype.kind in "iu":
        return int_binary(_trunc_div)(a, b)
    return np.divide(a, b)


class ElementwiseOp(MlvmOp):
    """An op computed element by element from broadcast operands.

    `C_EXPR` maps element types (see `c_template`) to a C expression of the
    operands' compute values; element types listed in `KERNELS` call the
    runtime's vectorised kernel `mlvm_<op>_<elem>` instead of a generated
    loop.
    """

    C_EXPR: ClassVar[dict[str, str]]
    KERNELS: ClassVar[tuple[str, ...]] = ()
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = (0, 1)

    def compute_elem(self) -> Elem:
        """The element type the expression computes in (operand 0's)."""
        return self.elem_entry(self.operands[0], self.OPERAND_NAMES[0])

    def scalar_expr(self, args: Sequence[str]) -> str:
        e = self.compute_elem()
        tpl = c_template(self.C_EXPR, e)
        assert tpl is not None, (self.name, e.name)
        return c_format(tpl, e, args)

    def kernel_call(self, cg: Lowering) -> bool:
        """Emit the runtime kernel's call when there is one; whether it did."""
        return False

    def lower(self, cg: Lowering) -> None:
        if self.kernel_call(cg):
            return
        elementwise_loop(cg, self.results[0], list(self.operands),
                         lambda names: ([], self.scalar_expr(names)), restrict=not output_shared(cg, self))

    def broadcast_operands(self) -> tuple[int, ...]:
        """The shape every operand broadcasts to (an error names them all)."""
        shape: tuple[int, ...] | None = ()
        for v, name in zip(self.operands, self.OPERAND_NAMES, strict=True):
            shape = None if shape is None else broadcast_shapes(shape, self.shape_of(v, name))
        if shape is None:
            desc = ", ".join(f"{n} {type_str(v.type)}" for v, n in zip(self.operands, self.OPERAND_NAMES, strict=True))
            raise VerifyException(f"{self.name}: {desc} do not broadcast")
        return shape


class BinaryOp(ElementwiseOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("lhs", "rhs")

    ELEMS: ClassVar[tuple[str, ...]] = NUMERIC
    KERNELS: ClassVar[tuple[str, ...]] = ("f32", "i32")
    # Comparisons: the result is f32 1.0 / 0.0 or i1.
    COMPARE: ClassVar[bool] = False

    def verify_(self) -> None:
        ea = self.expect_elem(self.lhs, "lhs", self.ELEMS)
        eb = self.expect_elem(self.rhs, "rhs", self.ELEMS)
        if ea != eb:
            raise VerifyException(
                f"{self.name}: operand element types differ: lhs "
                f"{type_str(self.lhs.type)}, rhs {type_str(self.rhs.type)}"
            )
        sa, sb = self.shape_of(self.lhs, "lhs"), self.shape_of(self.rhs, "rhs")
        out = broadcast_shapes(sa, sb)
        if out is None:
            raise VerifyException(
                f"{self.name}: operands lhs {type_str(self.lhs.type)} and rhs "
                f"{type_str(self.rhs.type)} do not broadcast"
            )
        if self.COMPARE:
            self.expect_elem(self.result, "result", ("f32", "i1"))
            self.expect_result(0, out, self.elem_of(self.result, "result"))
        else:
            self.expect_result(0, out, ea)

    # The numpy function the C mirrors, operation for operation.
    NP_FN: ClassVar[Callable[..., Any]]

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [np_compute(self.NP_FN, inputs, result_dtype(self))]

    def kernel_call(self, cg: Lowering) -> bool:
        elem = self.elem_of(self.lhs, "lhs")
        if elem not in self.KERNELS or (self.COMPARE and self.elem_of(self.result, "result") != "f32"):
            return False
        out = result_shape(self)
        it = cg.iter(
            out,
            [
                broadcast_strides(self.shape_of(self.lhs, "lhs"), out),
                broadcast_strides(self.shape_of(self.rhs, "rhs"), out),
            ],
        )
        kernel = self.name.split(".")[1]
        cg.stmt(
            f"mlvm_{kernel}_{elem}({it}, {cg.ptr(self.lhs)}, {cg.ptr(self.rhs)}, "
            f"{cg.ptr(self.result)});"
        )
        return True

    def can_run_inplace(self, k: int) -> bool:
        return super().can_run_inplace(k) and not self.COMPARE


_WRAP = "(({T})(({U}){0} {op} ({U}){1}))"  # integer + - * wrap (two's complement)


@irdl_op_definition
class AddOp(BinaryOp):
    name = "mlvm.add"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.add)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "({0} + {1})", "i": _WRAP.replace("{op}", "+")}


@irdl_op_definition
class SubOp(BinaryOp):
    name = "mlvm.sub"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.subtract)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "({0} - {1})", "i": _WRAP.replace("{op}", "-")}


@irdl_op_definition
class MulOp(BinaryOp):
    name = "mlvm.mul"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.multiply)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "({0} * {1})", "i": _WRAP.replace("{op}", "*")}


@irdl_op_definition
class DivOp(BinaryOp):
    """Floats: IEEE division. Integers: truncating; x / 0 = 0 and
    INT_MIN / -1 = INT_MIN (mlvm/scalar.h): nothing traps."""

    name = "mlvm.div"
    KERNELS: ClassVar[tuple[str, ...]] = ("f32",)
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(int_aware_div)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "({0} / {1})", "i": "mlvm_scalar_div_{N}({0}, {1})"}


@irdl_op_definition
class PowOp(BinaryOp):
    """lhs raised to rhs (floats): C's pow / powf, so pow(x, 0) = 1 for any x,
    a negative base with a non-integer exponent is NaN (numpy.power's rules)."""

    name = "mlvm.pow"
    ELEMS: ClassVar[tuple[str, ...]] = FLOATS
    KERNELS: ClassVar[tuple[str, ...]] = ()
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.power)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "pow{F}({0}, {1})"}


@irdl_op_definition
class MaxOp(BinaryOp):
    name = "mlvm.max"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.maximum)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "(({0} > {1} || {0} != {0}) ? {0} : {1})", "i": "({0} > {1} ? {0} : {1})"}


@irdl_op_definition
class MinOp(BinaryOp):
    name = "mlvm.min"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.minimum)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "(({0} < {1} || {0} != {0}) ? {0} : {1})", "i": "({0} < {1} ? {0} : {1})"}


class CompareOp(BinaryOp):
    """`lhs <op> rhs` per element: f32 1.0 / 0.0 or i1 (the result type says
    which). NaN compares unequal to everything, as in C and numpy."""

    ELEMS: ClassVar[tuple[str, ...]] = ALL
    KERNELS: ClassVar[tuple[str, ...]] = ()
    COMPARE: ClassVar[bool] = True
    C_OP: ClassVar[str]

    def scalar_expr(self, args: Sequence[str]) -> str:
        cond = f"({args[0]} {self.C_OP} {args[1]})"
        if self.elem_of(self.result, "result") == "i1":
            return f"(uint8_t){cond}"
        return f"({cond} ? 1.0f : 0.0f)"


@irdl_op_definition
class EqOp(CompareOp):
    name = "mlvm.eq"
    KERNELS: ClassVar[tuple[str, ...]] = ("f32", "i32")
    C_OP: ClassVar[str] = "=="
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.equal)


@irdl_op_definition
class CmplOp(CompareOp):
    """`lhs > rhs` (the contract's name; `mlvm.gt` is the same op)."""

    name = "mlvm.cmpl"
    KERNELS: ClassVar[tuple[str, ...]] = ("f32", "i32")
    C_OP: ClassVar[str] = ">"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.greater)


# --------------------------------------------------------------------------
# Elementwise unary ops
# --------------------------------------------------------------------------


class UnaryOp(ElementwiseOp):
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = (0,)
    ELEMS: ClassVar[tuple[str, ...]] = FLOATS
    KERNELS: ClassVar[tuple[str, ...]] = ("f32",)
    # Its f32 kernel (vexp.h's vector form, the same bits) is faster than
    # its scalar form in a loop the C compiler vectorises: the loop took
    # 1.12-1.36x the time (exp, sigmoid, erf, GELU in either form; AVX2 and
    # AVX-512, from C, against a bias add in a pass of its own and the
    # kernel). tanh's scalar form is the faster one. mlvm.fused's kernel
    # root.
    KERNEL_FASTER: ClassVar[bool] = False

    def verify_(self) -> None:
        e = self.expect_elem(self.operand, "operand", self.ELEMS)
        self.expect_result(0, self.shape_of(self.operand, "operand"), e)

    def kernel_faster(self) -> bool:
        """Whether its f32 kernel, where it runs a vector at a time
        (MLVM_VECTOR_MATH), is faster than its scalar form as the last op
        of a fused loop or epilogue: mlvm.fused then runs it after them."""
        return self.KERNEL_FASTER and self.elem_of(self.result, "result") == "f32"

    def kernel_name(self) -> str:
        """Its f32 array kernel: (n, a, out), out may equal a."""
        return f"mlvm_{self.name.split('.')[1]}_f32"

    NP_FN: ClassVar[Callable[..., Any]]

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [np_compute(self.NP_FN, inputs, result_dtype(self))]

    def kernel_call(self, cg: Lowering) -> bool:
        if self.elem_of(self.operand, "operand") not in self.KERNELS:
            return False
        n = prod(result_shape(self))
        cg.stmt(f"{self.kernel_name()}({n}, {cg.ptr(self.operand)}, {cg.ptr(self.result)});")
        return True


@irdl_op_definition
class NegOp(UnaryOp):
    name = "mlvm.neg"
    ELEMS: ClassVar[tuple[str, ...]] = NUMERIC
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.negative)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "(-{0})", "i": "(({T})(0u - ({U}){0}))"}


@irdl_op_definition
class ExpOp(UnaryOp):
    name = "mlvm.exp"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.exp)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "mlvm_expf({0})", "f64": "exp({0})"}
    KERNEL_FASTER: ClassVar[bool] = True


@irdl_op_definition
class LogOp(UnaryOp):
    name = "mlvm.log"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.log)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "log{F}({0})"}


@irdl_op_definition
class SqrtOp(UnaryOp):
    name = "mlvm.sqrt"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.sqrt)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "sqrt{F}({0})"}


@irdl_op_definition
class TanhOp(UnaryOp):
    name = "mlvm.tanh"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.tanh)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "mlvm_tanhf({0})", "f64": "tanh({0})"}


_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def _erf(a: np.ndarray) -> np.ndarray:
    """erf in float64 (rounded once to f32 by the caller; the f32 kernel,
    mlvm_erff, is within 2.5 ulp)."""
    return _erf64(np.asarray(a, np.float64))


@irdl_op_definition
class ErfOp(UnaryOp):
    name = "mlvm.erf"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(_erf)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "mlvm_erff({0})", "f64": "erf({0})"}
    KERNEL_FASTER: ClassVar[bool] = True


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x|; for signed integers |INT_MIN| wraps to INT_MIN, as in numpy."""

    name = "mlvm.abs"
    ELEMS: ClassVar[tuple[str, ...]] = NUMERIC
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.abs)
    C_EXPR: ClassVar[dict[str, str]] = {
        "f": "fabs{F}({0})", "i": "({0} < 0 ? ({T})(0u - ({U}){0}) : {0})", "u": "{0}",
    }


@irdl_op_definition
class FloorOp(UnaryOp):
    name = "mlvm.floor"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.floor)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "floor{F}({0})"}


@irdl_op_definition
class CeilOp(UnaryOp):
    name = "mlvm.ceil"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.ceil)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "ceil{F}({0})"}


@irdl_op_definition
class SinOp(UnaryOp):
    name = "mlvm.sin"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.sin)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "sin{F}({0})"}


@irdl_op_definition
class CosOp(UnaryOp):
    name = "mlvm.cos"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.cos)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "cos{F}({0})"}


def _sigmoid(a: np.ndarray) -> np.ndarray:
    one = a.dtype.type(1)
    return one / (one + np.exp(-a))


@irdl_op_definition
class SigmoidOp(UnaryOp):
    name = "mlvm.sigmoid"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(_sigmoid)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "mlvm_sigmoidf({0})", "f64": "(1.0 / (1.0 + exp(-{0})))"}
    KERNEL_FASTER: ClassVar[bool] = True


def _relu(a: np.ndarray) -> np.ndarray:
    # NaN passes through, as in numpy.maximum(a, 0).
    return np.maximum(a, a.dtype.type(0))


@irdl_op_definition
class ReluOp(UnaryOp):
    name = "mlvm.relu"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(_relu)
    C_EXPR: ClassVar[dict[str, str]] = {"f": "({0} < 0.0{F} ? 0.0{F} : {0})"}


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """`1 / sqrt(a + eps)`."""

    name = "mlvm.rsqrt"
    ELEMS: ClassVar[tuple[str, ...]] = ("f32",)
    eps = opt_prop_def(FloatAttr, FloatAttr(0.0, Float32Type()))

    def verify_(self) -> None:
        super().verify_()
        _f32_prop(self, "eps")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        eps = np.float32(_f32_prop(self, "eps"))
        with np.errstate(all="ignore"):
            return [(np.float32(1) / np.sqrt(inputs[0] + eps)).astype(np.float32)]

    def scalar_expr(self, args: Sequence[str]) -> str:
        eps = c_float(_f32_prop(self, "eps"))
        return f"(1.0f / sqrtf({args[0]} + {eps}))"

    def lower(self, cg: Lowering) -> None:
        n = prod(result_shape(self))
        eps = cg.flt(_f32_prop(self, "eps"))
        cg.stmt(
            f"mlvm_rsqrt_f32({n}, {eps}, {cg.ptr(self.operand)}, {cg.ptr(self.result)});"
        )


# --------------------------------------------------------------------------
# matmul
# --------------------------------------------------------------------------


@irdl_op_definition
class MatmulOp(MlvmOp):
    """`lhs @ rhs` with optional transposes of the last two dims.

    Rank 2, or rank >= 3 on both sides with numpy-broadcast batch dims.
    With `rhs_panel` = width, a rank-2 product reads a constant rhs stored in
    panels (see `mlvm.param`'s `panel`): rhs [ceil(n / width), k, width], n
    from the result.
    """

    name = "mlvm.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_lhs = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    transpose_rhs = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    rhs_panel = opt_prop_def(IntegerAttr.constr(type=i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("lhs", "rhs")

    def panel_width(self) -> int:
        """The width of the rhs's panels, or 0 for a rhs with strides."""
        return 0 if self.rhs_panel is None else _int_prop(self, "rhs_panel")

    def dims(self) -> tuple[Shape, int, int, int]:
        """(batch shape, m, n, k), verifying the operand shapes."""
        self.expect_elem(self.lhs, "lhs", ("f32",))
        self.expect_elem(self.rhs, "rhs", ("f32",))
        sa, sb = self.shape_of(self.lhs, "lhs"), self.shape_of(self.rhs, "rhs")
        ta, tb = _bool_prop(self, "transpose_lhs"), _bool_prop(self, "transpose_rhs")
        desc = f"lhs {type_str(self.lhs.type)} and rhs {type_str(self.rhs.type)}"
        if self.rhs_panel is not None:
            return self._panel_dims(sa, sb, desc)
        if len(sa) < 2 or len(sb) < 2 or (len(sa) == 2) != (len(sb) == 2):
            raise VerifyException(
                f"{self.name}: {desc} must both be rank 2, or both rank >= 3 "
                "with batch dims"
            )
        m, ka = (sa[-1], sa[-2]) if ta else (sa[-2], sa[-1])
        kb, n = (sb[-1], sb[-2]) if tb else (sb[-2], sb[-1])
        if ka != kb:
            raise VerifyException(
                f"{self.name}: contraction dims differ ({ka} vs {kb}) for {desc}"
                f" (transpose_lhs={str(ta).lower()}, transpose_rhs={str(tb).lower()})"
            )
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        if batch is None:
            raise VerifyException(f"{self.name}: batch dims of {desc} do not broadcast")
        return batch, m, n, ka

    def _panel_dims(self, sa: Shape, sb: Shape, desc: str) -> tuple[Shape, int, int, int]:
        width = self.panel_width()
        sr = self.shape_of(self.result, "result")
        if len(sa) != 2 or len(sr) != 2 or _bool_prop(self, "transpose_rhs"):
            raise VerifyException(
                f"{self.name}: rhs_panel needs a rank-2 product without transpose_rhs ({desc})")
        m, k = (sa[1], sa[0]) if _bool_prop(self, "transpose_lhs") else (sa[0], sa[1])
        n = sr[1]
        if width < PANEL_MULTIPLE or width % PANEL_MULTIPLE or tuple(sb) != (-(-n // width), k, width):
            raise VerifyException(
                f"{self.name}: rhs_panel {width} needs rhs [{-(-n // max(width, 1))}, {k}, {width}] "
                f"(a [{k}, {n}] matrix in panels, width a multiple of {PANEL_MULTIPLE}); {desc}"
            )
        return (), m, n, k

    def verify_(self) -> None:
        batch, m, n, _ = self.dims()
        self.expect_result(0, (*batch, m, n), "f32")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        a, b = inputs
        if _bool_prop(self, "transpose_lhs"):
            a = np.swapaxes(a, -1, -2)
        if _bool_prop(self, "transpose_rhs"):
            b = np.swapaxes(b, -1, -2)
        if self.rhs_panel is not None:
            b = from_panels(b, self.dims()[2])
        return [np.matmul(a, b).astype(np.float32)]

    def strides(self) -> tuple[int, int, int, int]:
        """Element strides (a_rs, a_cs, b_rs, b_cs) of a(i, k) and b(k, j)
        (within a panel for a rhs in panels)."""
        _, m, n, k = self.dims()
        ta, tb = _bool_prop(self, "transpose_lhs"), _bool_prop(self, "transpose_rhs")
        a_rs, a_cs = (1, m) if ta else (k, 1)
        b_rs, b_cs = (1, k) if tb else (n, 1)
        if self.rhs_panel is not None:
            b_rs, b_cs = self.panel_width(), 1
        return a_rs, a_cs, b_rs, b_cs

    def workspace_bytes(self) -> int:
        """matmul.c's slab for a rhs in memory (mlvm_matmul_workspace)."""
        if self.rhs_panel is not None:
            return 0
        _, m, n, k = self.dims()
        _, _, b_rs, b_cs = self.strides()
        return matmul_workspace_bytes(m, n, k, b_rs, b_cs)

    def descriptor(self, cg: Lowering) -> str:
        """The `mlvm_matmul_t` of one product (of a batch's)."""
        _, m, n, k = self.dims()
        a_rs, a_cs, b_rs, b_cs = self.strides()
        return cg.const_struct(
            "mlvm_matmul_t", f"{m}, {n}, {k}, {a_rs}, {a_cs}, {b_rs}, {b_cs}, {self.panel_width()}"
        )

    def lower(self, cg: Lowering) -> None:
        batch, m, n, k = self.dims()
        sa, sb = self.shape_of(self.lhs, "lhs"), self.shape_of(self.rhs, "rhs")
        mat_a, mat_b = sa[-1] * sa[-2], sb[-1] * sb[-2]
        bs_a = tuple(s * mat_a for s in broadcast_strides(sa[:-2], batch))
        bs_b = tuple(s * mat_b for s in broadcast_strides(sb[:-2], batch)) if batch else ()
        p = self.descriptor(cg)
        if m == 1 and prod(batch) == 1:  # one row: no blocked GEMM linked on cores without vectors
            cg.stmt(f"{row_entry(cg.narrow_rows(), False)}({p}, {cg.ptr(self.lhs)}, {cg.ptr(self.rhs)}, "
                    f"{cg.ptr(self.result)}, NULL, NULL);")
            return
        it = cg.iter(batch if batch else (1,), [bs_a or (0,), bs_b or (0,)])
        ws = cg.workspace(self)
        args = f"{p}, {it}, {cg.ptr(self.lhs)}, {cg.ptr(self.rhs)}, {cg.ptr(self.result)}"
        cg.stmt(f"mlvm_matmul_f32({args});" if ws is None else f"mlvm_matmul_ws_f32({args}, {ws});")


# matmul.c's slab (gemm.h's MLVM_MM_SLAB_*): a rhs in memory (not in panels)
# that more than one of the GEMM's row blocks reads is packed into it once
# per column block and contraction slice, where each row block would pack
# it again; where that pays: a transposed or large rhs, or rows a multiple
# of 1 KiB apart.
MATMUL_SLAB_M, MATMUL_SLAB_K, MATMUL_SLAB_N, MATMUL_SLAB_KN = 192, 256, 256, 512 * 512


def matmul_workspace_bytes(m: int, n: int, k: int, b_rs: int, b_cs: int) -> int:
    """mlvm_matmul_workspace's bytes for one product of a rhs in memory
    (b(k, j) at k * b_rs + j * b_cs)."""
    pays = b_cs != 1 or k * n >= MATMUL_SLAB_KN or b_rs % 256 == 0
    if m <= MATMUL_SLAB_M or n <= 0 or k <= 0 or not pays:
        return 0
    return 4 * min(k, MATMUL_SLAB_K) * min(-(-n // PANEL_MULTIPLE) * PANEL_MULTIPLE, MATMUL_SLAB_N)


# The single-row entries' widest pass (matmul.c's row_passes).
ROW_WIDE = 16


def single_row_n(op: MatmulOp) -> int | None:
    """n of a product the compiler calls a single-row entry for (m = 1 and
    no batch: MatmulOp.lower, and a fused head's FusedOp lowering), else None."""
    batch, m, n, _ = op.dims()
    return n if m == 1 and prod(batch) == 1 else None


def rows_narrow(module: Operation) -> bool:
    """Whether the module has single-row products and all of them are
    narrower than ROW_WIDE: every one then calls the narrow entries
    (mlvm_matmul_row4_*: blocks of four on cores without vectors, no
    sixteen-wide code), otherwise every one the wide ones, so that a
    firmware links one kind of passes."""
    ns = [n for op in module.walk() if isinstance(op, MatmulOp) and (n := single_row_n(op)) is not None]
    return bool(ns) and max(ns) < ROW_WIDE


def row_entry(narrow: bool, bias: bool) -> str:
    """The single-row entry: narrow (rows_narrow) or wide, with a Linear
    layer's bias (mlvm_bias_t) or an epilogue function (or NULL)."""
    return f"mlvm_matmul_row{'4' if narrow else ''}{'_bias' if bias else ''}_f32"


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------

REDUCE_KINDS = ("sum", "max", "mean", "min", "prod")
REDUCE_KERNELS = ("sum", "max", "mean", "min")  # f32 kernels in the runtime
REDUCE_NP_FNS: dict[str, Callable[..., Any]] = {"sum": np.sum, "max": np.max, "mean": np.mean,
                                                "min": np.min}


def reduce_loop(
    cg: Lowering,
    operand: SSAValue,
    result: SSAValue,
    axes: Sequence[int],
    init: str,
    step: Callable[[str, str], list[str]],
    final: Callable[[str], str],
    acc_type: str,
    locals_: Sequence[str] = (),
) -> None:
    """A generated reduction: for each kept position, `acc = init`, then
    `step(acc, v)` statements over the reduced positions (row-major, `r` the
    flat index among them), then `out = final(acc)` rounded and stored.
    `locals_` declares more variables beside `acc`."""
    shape = value_shape(operand)
    if prod(shape) == 0 and prod(value_shape(result)) == 0:
        return
    src, dst = elem(operand), elem(result)
    strides = contiguous_strides(shape)
    kept = [d for d in range(len(shape)) if d not in axes]
    idx = {d: f"i{d}" for d in range(len(shape))}
    at = " + ".join(f"{idx[d]} * {strides[d]}" for d in range(len(shape)) if shape[d] > 1) or "0"
    lines = ["{", f"    const {src.ctype} *in = {cg.ptr(operand)};",
             f"    {dst.ctype} *out = {cg.ptr(result)};", "    mlvm_index_t o = 0, r;"]
    if shape:
        lines.append(f"    mlvm_index_t {', '.join(idx.values())};")
    lines.append("    (void)r;")
    outer_open, outer_close, pad = loop_nest([(idx[d], shape[d]) for d in kept])
    inner_open, inner_close, inner = loop_nest([(idx[d], shape[d]) for d in axes], pad)
    lines += outer_open
    lines += [f"{pad}{acc_type} acc = {init};", *(pad + x for x in locals_), f"{pad}r = 0;"]
    lines += inner_open
    lines.append(f"{inner}const {src.compute} v = {src.load.format(f'in[{at}]')};")
    lines += [inner + x for x in step("acc", "v")]
    lines.append(f"{inner}++r;")
    lines += inner_close
    lines.append(f"{pad}out[o++] = {dst.store.format(final('acc'))};")
    lines += outer_close
    lines.append("}")
    cg.stmt("\n    ".join(lines))


def _np_reduce(kind: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """numpy's reduction in the compute type: integers wrap in their own
    type, f16 / bf16 accumulate in f32; an integer mean truncates."""
    e = elem_for_dtype(x.dtype)
    assert e is not None
    w = x.astype(np.float32) if e.stored_as_bits else x
    with np.errstate(all="ignore"):
        if kind in ("max", "min"):
            out = (np.max if kind == "max" else np.min)(w, axis=axes, keepdims=True)
        elif kind in ("sum", "prod") or not e.is_int:
            fns: dict[str, Callable[..., Any]] = {"sum": np.sum, "prod": np.prod, "mean": np.mean}
            fn = fns[kind]
            out = fn(w, axis=axes, keepdims=True, dtype=w.dtype)
        else:  # integer mean: the wrapped sum, divided with truncation
            total = np.sum(w, axis=axes, keepdims=True, dtype=w.dtype)
            count = max(1, prod(x.shape[a] for a in axes))
            # (past the type's max the wrapped sum is smaller than the count: 0)
            out = int_aware_div(total, np.asarray(count, dtype=x.dtype)) if count <= e.max else total * 0
    return np.asarray(out).astype(x.dtype)


@irdl_op_definition
class ReduceOp(MlvmOp):
    name = "mlvm.reduce"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = opt_prop_def(BoolAttr, IntegerAttr.from_bool(False))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def norm_axes(self) -> tuple[int, ...]:
        rank = len(self.shape_of(self.operand, "operand"))
        seen: list[int] = []
        for a in _array_prop(self, "axes"):
            na = normalize_axis(a, rank)
            if na is None:
                raise VerifyException(
                    f"{self.name}: axis {a} is out of range for operand "
                    f"{type_str(self.operand.type)}"
                )
            if na in seen:
                raise VerifyException(f"{self.name}: axis {a} is repeated in axes")
            seen.append(na)
        return tuple(sorted(seen))

    def kept_shape(self) -> Shape:
        """The result shape with reduced axes kept as 1."""
        axes = self.norm_axes()
        shape = self.shape_of(self.operand, "operand")
        return tuple(1 if i in axes else d for i, d in enumerate(shape))

    def verify_(self) -> None:
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(
                f"{self.name}: kind '{self.kind.data}' is not one of "
                + ", ".join(REDUCE_KINDS)
            )
        elem = self.expect_elem(self.operand, "operand", NUMERIC)
        axes = self.norm_axes()
        kept = self.kept_shape()
        shape = self.shape_of(self.operand, "operand")
        empty = [a for a in axes if shape[a] == 0]
        if empty and self.kind.data in ("max", "min"):
            raise VerifyException(
                f"{self.name}: kind '{self.kind.data}' over axis {empty[0]} of size 0 "
                f"of operand {type_str(self.operand.type)} has no value"
            )
        if _bool_prop(self, "keepdims"):
            want = kept
        else:
            want = tuple(d for i, d in enumerate(kept) if i not in axes)
        self.expect_result(0, want, elem)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        if self.elem_of(self.operand, "operand") == "f32" and self.kind.data in REDUCE_KERNELS:
            out = REDUCE_NP_FNS[self.kind.data](inputs[0], axis=self.norm_axes(), keepdims=True)
            return [np.asarray(out, dtype=np.float32).reshape(result_shape(self))]
        return [_np_reduce(self.kind.data, inputs[0], self.norm_axes()).reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        axes = self.norm_axes()
        kind = self.kind.data
        e = self.elem_entry(self.operand, "operand")
        if e.name == "f32" and kind in REDUCE_KERNELS:
            kept = self.kept_shape()
            out_strides = tuple(
                0 if i in axes else s for i, s in enumerate(contiguous_strides(kept))
            )
            it = cg.iter(shape, [contiguous_strides(shape), out_strides])
            out_n = prod(kept)
            count = prod(shape[i] for i in axes)
            cg.stmt(
                f"mlvm_reduce_{kind}_f32({it}, {cg.ptr(self.operand)}, "
                f"{cg.ptr(self.result)}, {out_n}, {count});"
            )
            return
        self._lower_loop(cg, e, kind, axes, prod(shape[i] for i in axes))

    def _lower_loop(self, cg: Lowering, e: Elem, kind: str, axes: Sequence[int], count: int) -> None:
        T = e.compute
        if e.is_float:
            big = "HUGE_VAL" if T == "double" else "HUGE_VALF"
            inits = {"sum": c_literal(e, 0.0), "mean": c_literal(e, 0.0),
                     "prod": c_literal(e, 1.0), "max": f"(-{big})", "min": big}
            steps = {"sum": "{a} = {a} + {v};", "mean": "{a} = {a} + {v};", "prod": "{a} = {a} * {v};",
                     "max": "{a} = ({v} > {a} || {v} != {v}) ? {v} : {a};",
                     "min": "{a} = ({v} < {a} || {v} != {v}) ? {v} : {a};"}
            mean = f"({{0}} / ({T}){count})"
        else:
            U = e.wide_unsigned
            inits = {"sum": "0", "mean": "0", "prod": "1", "max": c_literal(e, e.min),
                     "min": c_literal(e, e.max)}
            steps = {"sum": f"{{a}} = ({T})(({U}){{a}} + ({U}){{v}});",
                     "mean": f"{{a}} = ({T})(({U}){{a}} + ({U}){{v}});",
                     "prod": f"{{a}} = ({T})(({U}){{a}} * ({U}){{v}});",
                     "max": "{a} = {v} > {a} ? {v} : {a};", "min": "{a} = {v} < {a} ? {v} : {a};"}
            mean = f"mlvm_scalar_div_{e.name}({{0}}, ({T}){count})" if count <= e.max else "({0} * 0)"
        reduce_loop(
            cg, self.operand, self.result, axes, inits[kind],
            lambda a, v: [steps[kind].format(a=a, v=v)],
            lambda a: mean.format(a) if kind == "mean" else a, T,
        )


class ArgExtremumOp(MlvmOp):
    """Index (i32 or i64) of the first extremum along `axis`."""

    operand = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)
    BETTER: ClassVar[str]
    NP_FN: ClassVar[Callable[..., Any]]

    def norm_axis(self) -> int:
        shape = self.shape_of(self.operand, "operand")
        a = normalize_axis(_int_prop(self, "axis"), len(shape))
        if a is None:
            raise VerifyException(
                f"{self.name}: axis {_int_prop(self, 'axis')} is out of range for "
                f"operand {type_str(self.operand.type)}"
            )
        return a

    def verify_(self) -> None:
        self.expect_elem(self.operand, "operand", NUMERIC)
        shape = self.shape_of(self.operand, "operand")
        ax = self.norm_axis()
        if shape[ax] == 0:
            raise VerifyException(
                f"{self.name}: axis {ax} of operand {type_str(self.operand.type)} has "
                "size 0: there is no extremum"
            )
        dropped = shape[:ax] + shape[ax + 1 :]
        kept = shape[:ax] + (1,) + shape[ax + 1 :]
        out = self.expect_elem(self.result, "result", ("i32", "i64"))
        if self.shape_of(self.result, "result") == kept:
            self.expect_result(0, kept, out)
        else:
            self.expect_result(0, dropped, out)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        x = inputs[0].astype(np.float32) if inputs[0].dtype in HALF_DTYPES else inputs[0]
        out = type(self).NP_FN(x, axis=self.norm_axis())
        return [out.astype(result_dtype(self)).reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.operand, "operand")
        ax = self.norm_axis()
        e = self.elem_entry(self.operand, "operand")
        if self.BETTER == ">" and e.name == "f32" and self.elem_of(self.result, "result") == "i32":
            outer, inner = prod(shape[:ax]), prod(shape[ax + 1 :])
            cg.stmt(
                f"mlvm_argmax_f32({outer}, {shape[ax]}, {inner}, {cg.ptr(self.operand)}, "
                f"{cg.ptr(self.result)});"
            )
            return
        # best starts at the first element; a NaN, once met, is kept.
        nan = " || v != v" if e.is_float else ""
        done = "best == best && " if e.is_float else ""
        reduce_loop(
            cg, self.operand, self.result, [ax], "0",
            lambda a, v: [f"if (r == 0 || ({done}({v} {self.BETTER} best{nan}))) {{ best = {v}; {a} = r; }}"],
            lambda a: a, "mlvm_index_t", [f"{e.compute} best = 0;"],
        )


@irdl_op_definition
class ArgmaxOp(ArgExtremumOp):
    """The first maximum; a NaN counts as maximal (the first NaN wins), as
    numpy.argmax."""

    name = "mlvm.argmax"
    BETTER: ClassVar[str] = ">"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.argmax)


@irdl_op_definition
class ArgminOp(ArgExtremumOp):
    """The first minimum; a NaN counts as minimal (the first NaN wins), as
    numpy.argmin."""

    name = "mlvm.argmin"
    BETTER: ClassVar[str] = "<"
    NP_FN: ClassVar[Callable[..., Any]] = staticmethod(np.argmin)


# --------------------------------------------------------------------------
# Loss
# --------------------------------------------------------------------------


def softmax_xent_reference(
    labels: np.ndarray, logits: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row cross-entropy of softmax(logits) against labels, and its grad."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=-1, keepdims=True)
    log_sm = shifted - np.log(s)
    loss = -(labels * log_sm).sum(axis=-1)
    grad = e / s - labels
    return loss.astype(np.float32), grad.astype(np.float32)


@irdl_op_definition
class SoftmaxXentOp(MlvmOp):
    """Softmax cross-entropy over the last axis: loss per row, grad = softmax - labels."""

    name = "mlvm.softmax_xent"
    labels = operand_def(TensorType)
    logits = operand_def(TensorType)
    loss = result_def(TensorType)
    grad = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("labels", "logits")

    def verify_(self) -> None:
        self.expect_elem(self.labels, "labels", ("f32",))
        self.expect_elem(self.logits, "logits", ("f32",))
        sl, sg = self.shape_of(self.labels, "labels"), self.shape_of(self.logits, "logits")
        if sl != sg or len(sl) < 1:
            raise VerifyException(
                f"{self.name}: labels {type_str(self.labels.type)} and logits "
                f"{type_str(self.logits.type)} must have the same shape, rank >= 1"
            )
        self.expect_result(0, sl[:-1], "f32", "loss")
        self.expect_result(1, sl, "f32", "grad")

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        loss, grad = softmax_xent_reference(inputs[0], inputs[1])
        return [loss, grad]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.logits, "logits")
        rows, cols = prod(shape[:-1]), shape[-1]
        cg.stmt(
            f"mlvm_softmax_xent_f32({rows}, {cols}, {cg.ptr(self.labels)}, "
            f"{cg.ptr(self.logits)}, {cg.ptr(self.loss)}, {cg.ptr(self.grad)});"
        )


# --------------------------------------------------------------------------
# Data movement and types
# --------------------------------------------------------------------------


def cast_expr(src: Elem, dst: Elem, x: str) -> str:
    """C converting a compute value of src to one of dst (see CastOp)."""
    if src == dst:
        return x
    if dst.kind == "b":
        return f"(uint8_t)({x} != 0)"
    if src.kind == "b":
        return f"({dst.compute}){x}"
    if src.is_float and dst.is_int:
        return f"mlvm_{'f64' if src.name == 'f64' else 'f32'}_to_{dst.name}({x})"
    if dst.stored_as_bits and (src.name == "f64" or (src.is_int and src.bits > 16)):
        # Round once, from the exact value (through float it would round twice).
        return dst.load.format(f"mlvm_f64_to_{dst.name}((double){x})")
    return f"({dst.compute}){x}"


def cast_reference(x: np.ndarray, dst: Elem) -> np.ndarray:
    """numpy's conversion, with the cases numpy leaves to the platform
    defined as the C does: float -> integer truncates toward zero and
    saturates, NaN -> 0; to bool is `!= 0`."""
    if dst.kind == "b":
        return x != 0
    src = elem_for_dtype(x.dtype)
    assert src is not None
    if src.is_float and dst.is_int:
        with np.errstate(all="ignore"):
            w = np.trunc(x.astype(np.float64))
            out = np.zeros(x.shape, dtype=dst.dtype)
            lo, hi = dst.min, dst.max
            fin = ~np.isnan(w)
            low, high = fin & (w <= lo), fin & (w >= float(hi) + 1.0)
            mid = fin & ~low & ~high
            out[low], out[high] = lo, hi
            # Exact for every |w| < 2**63 (a float64 integer converts exactly).
            if dst.kind == "u" and dst.bits == 64:
                out[mid] = w[mid].astype(np.uint64)
            else:
                out[mid] = w[mid].astype(np.int64).astype(dst.dtype)
            return out
    with np.errstate(all="ignore"):
        if dst.stored_as_bits and src.is_int:
            return x.astype(np.float64).astype(dst.dtype)
        return x.astype(dst.dtype)


@irdl_op_definition
class CastOp(ElementwiseOp):
    """Element type conversion between any two element types.

    Float -> integer truncates toward zero and saturates to the integer's
    range, NaN -> 0. Integer -> integer wraps (two's complement). Any ->
    i1 is `x != 0` (NaN is true); i1 -> any is 0 / 1. Narrower floats
    round to nearest even (from double directly, not through float).
    """

    name = "mlvm.cast"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = (0,)
    KERNELS: ClassVar[tuple[str, ...]] = ("f32:i32", "i32:f32")

    def verify_(self) -> None:
        self.elem_of(self.operand, "operand")
        shape = self.shape_of(self.operand, "operand")
        self.expect_result(0, shape, self.elem_of(self.result, "result"))

    def scalar_expr(self, args: Sequence[str]) -> str:
        src = self.elem_entry(self.operand, "operand")
        return cast_expr(src, self.elem_entry(self.result, "result"), args[0])

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [cast_reference(inputs[0], self.elem_entry(self.result, "result"))]

    def kernel_call(self, cg: Lowering) -> bool:
        src = self.elem_of(self.operand, "operand")
        dst = self.elem_of(self.result, "result")
        src_p, dst_p = cg.ptr(self.operand), cg.ptr(self.result)
        if src == dst:
            cg.stmt(f"mlvm_copy({cg.nbytes(self.result)}, {src_p}, {dst_p});")
            return True
        if f"{src}:{dst}" not in self.KERNELS:
            return False
        cg.stmt(f"mlvm_cast_{src}_{dst}({prod(result_shape(self))}, {src_p}, {dst_p});")
        return True


@irdl_op_definition
class ReshapeOp(MlvmOp):
    """Same elements, new shape (the result type): no data moves."""

    name = "mlvm.reshape"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def verify_(self) -> None:
        elem = self.elem_of(self.operand, "operand")
        n_in = prod(self.shape_of(self.operand, "operand"))
        n_out = prod(self.shape_of(self.result, "result"))
        if n_in != n_out or self.elem_of(self.result, "result") != elem:
            raise VerifyException(
                f"{self.name}: cannot reshape operand {type_str(self.operand.type)} "
                f"({n_in} elements) to {type_str(self.result.type)} ({n_out} elements)"
            )

    def alias_operand(self) -> int | None:
        return 0

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [inputs[0].reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        pass  # the result shares the operand's storage


@irdl_op_definition
class BroadcastToOp(MlvmOp):
    name = "mlvm.broadcast_to"
    operand = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("operand",)

    def verify_(self) -> None:
        elem = self.elem_of(self.operand, "operand")
        src = self.shape_of(self.operand, "operand")
        dst = self.shape_of(self.result, "result")
        if not can_broadcast_to(src, dst) or self.elem_of(self.result, "result") != elem:
            raise VerifyException(
                f"{self.name}: operand {type_str(self.operand.type)} does not "
                f"broadcast to {type_str(self.result.type)}"
            )

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [np.broadcast_to(inputs[0], result_shape(self)).copy()]

    def lower(self, cg: Lowering) -> None:
        dst = result_shape(self)
        it = cg.iter(dst, [broadcast_strides(self.shape_of(self.operand, "operand"), dst)])
        bits = 8 * self.elem_entry(self.result, "result").size
        cg.stmt(f"mlvm_broadcast_b{bits}({it}, {cg.ptr(self.operand)}, {cg.ptr(self.result)});")


MLVM_OPS: list[type[MlvmOp]] = [
    ConstantOp,
    ParamOp,
    RngNormalOp,
    FillOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    PowOp,
    MaxOp,
    MinOp,
    EqOp,
    CmplOp,
    NegOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    TanhOp,
    SigmoidOp,
    ReluOp,
    ErfOp,
    AbsOp,
    FloorOp,
    CeilOp,
    SinOp,
    CosOp,
    MatmulOp,
    ReduceOp,
    ArgmaxOp,
    ArgminOp,
    SoftmaxXentOp,
    CastOp,
    ReshapeOp,
    BroadcastToOp,
]

__all__ = ["MLVM_OPS", "DTYPES", "IntegerType", "elem_name"]
