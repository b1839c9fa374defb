"""Quantized inference: quantize, dequantize, requantize, qmatmul.

The affine scheme of ONNX (and TFLite): a real value r is q with
r = (q - zero_point) * scale. `quantize` and `requantize` round half to
even and saturate to the integer type; scale and zero point broadcast
against the data (a per-channel scale is a tensor shaped to broadcast along
its channel axis). Everything after the integer accumulation is computed
in f32 the way onnxruntime does it (nearbyint(x / scale) + zp, clamped;
acc * multiplier for requantization), so integer results match its own to
the bit; f32 arithmetic is IEEE on every target mlvm builds for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from math import prod
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlvm.dialect.base import MlvmOp, result_dtype, result_shape, type_str
from mlvm.dialect.elements import ELEMS, FLOATS
from mlvm.dialect.nn import ConvWindowOp, _int, align64, conv2d_dims, conv2d_phase_plane, pool2d_dims, pool2d_is_global
from mlvm.dialect.ops import ElementwiseOp, from_qlanes, qconv_lane_count
from mlvm.dialect.shapes import broadcast_shapes

if TYPE_CHECKING:
    from mlvm.codegen.lowering import Lowering

QTYPES = ("i8", "ui8", "i16", "ui16")  # quantized storage types
ACC = "i32"



# Preprocessor conditions of generated data for cores with and without
# vectors (mlvm/kernels.h's MLVM_SCALAR_CORE, MLVM_VECTOR_PICK).
VECTOR_CORE = "!defined(MLVM_SCALAR_CORE)"
SCALAR_CORE = "defined(MLVM_SCALAR_CORE)"

def round_saturate(x: np.ndarray, zp: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """nearbyint(x) + zp in f32, clamped to the integer type; NaN -> zp."""
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        r = np.rint(x.astype(np.float32)) + zp.astype(np.float32)
        r = np.where(np.isnan(r), zp.astype(np.float32), r)
        return np.clip(r, info.min, info.max).astype(dtype)


def fma_f32(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray:
    """a * b + c of f32 values rounded once (IEEE fusedMultiplyAdd), as
    vmath.h's mlvm_fma_exact computes it without the instruction: the
    product exact in f64, the sum rounded to odd (moved one ulp toward the
    exact value where it was inexact and landed on an even f64), then
    rounded to f32, which is then the exact value's rounding."""
    x, y, z = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        p = x * y
        s = p + z
        bb = s - p
        e = (p - (s - bb)) + (z - bb)
        inexact_even = ((e > 0) | (e < 0)) & ((s.view(np.int64) & 1) == 0)
        s = np.where(inexact_even, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
        return s.astype(np.float32)


class QAddLayout(NamedTuple):
    """How mlvm.qadd's operands cover y, read as [outer, mid, inner]: both
    whole (small 0), or the `small` one (1: a, 2: b) the values of y's dims
    of one run (mid), broadcast over those before (outer) and after (inner);
    and whether a is constant along onnxruntime's innermost run (`swap`: a
    single value, or the small operand broadcast over inner), where its
    kernel takes the operands in the other order."""

    small: int
    outer: int
    mid: int
    inner: int
    swap: bool


def qadd_layout(sa: Sequence[int], sb: Sequence[int], sy: Sequence[int]) -> QAddLayout | None:
    """mlvm.qadd's layout of a and b over y, or None where neither has y's
    shape or the other's dims that are not broadcast are not one run."""
    n = prod(sy)
    if tuple(sa) == tuple(sy) and tuple(sb) == tuple(sy):
        return QAddLayout(0, 1, 1, n, prod(sa) == 1)
    if tuple(sa) != tuple(sy) and tuple(sb) != tuple(sy):
        return None
    small_is_a = tuple(sa) != tuple(sy)
    ss = sa if small_is_a else sb
    if len(ss) > len(sy):
        return None
    padded = (1,) * (len(sy) - len(ss)) + tuple(ss)
    if any(d not in (1, y) for d, y in zip(padded, sy)):
        return None
    kept = [i for i, (d, y) in enumerate(zip(padded, sy)) if d == y and y != 1]
    lo, hi = (kept[0], kept[-1] + 1) if kept else (0, 0)
    if any(padded[i] != sy[i] for i in range(lo, hi)):
        return None
    outer, mid, inner = prod(sy[:lo]), prod(sy[lo:hi]), prod(sy[hi:])
    return QAddLayout(1 if small_is_a else 2, outer, mid, inner,
                      prod(sa) == 1 or (small_is_a and inner > 1))


@irdl_op_definition
class QuantizeOp(ElementwiseOp):
    """`x, scale, zero_point -> q`: saturate(nearbyint(x / scale) + zero_point)
    (ONNX QuantizeLinear). x is a float type, scale f32, zero_point and the
    result one of i8, ui8, i16, ui16."""

    name = "mlvm.quantize"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "scale", "zero_point")
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = ()

    def verify_(self) -> None:
        self.expect_elem(self.x, "x", FLOATS)
        self.expect_elem(self.scale, "scale", ("f32",))
        q = self.expect_elem(self.zero_point, "zero_point", QTYPES)
        self.expect_result(0, self.broadcast_operands(), q)

    def scalar_expr(self, args: Sequence[str]) -> str:
        q = self.elem_of(self.result, "result")
        return f"mlvm_quantize_{q}({args[0]} / {args[1]}, {args[2]})"

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        x, s, zp = inputs
        with np.errstate(all="ignore"):
            r = x.astype(np.float32) / s
        return [round_saturate(r, zp, result_dtype(self))]


@irdl_op_definition
class DequantizeOp(ElementwiseOp):
    """`q, scale, zero_point -> x`: (q - zero_point) * scale in f32 (ONNX
    DequantizeLinear). q and zero_point share one integer type (i8, ui8,
    i16, ui16 or i32)."""

    name = "mlvm.dequantize"
    q = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("q", "scale", "zero_point")
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = ()

    def verify_(self) -> None:
        q = self.expect_elem(self.q, "q", (*QTYPES, ACC))
        self.expect_elem(self.scale, "scale", ("f32",))
        self.expect_elem(self.zero_point, "zero_point", (q,))
        self.expect_result(0, self.broadcast_operands(), "f32")

    def scalar_expr(self, args: Sequence[str]) -> str:
        # 8- and 16-bit differences fit in int32 (which vectorises better);
        # an i32 one needs int64
        wide = "int64_t" if self.elem_of(self.q, "q") == ACC else "int32_t"
        return f"((float)(({wide}){args[0]} - ({wide}){args[2]}) * {args[1]})"

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        q, s, zp = inputs
        d = (q.astype(np.int64) - zp.astype(np.int64)).astype(np.float32)
        return [(d * s).astype(np.float32)]


@irdl_op_definition
class RequantizeOp(ElementwiseOp):
    """`acc, multiplier, zero_point -> q`: saturate(nearbyint(acc *
    multiplier) + zero_point), acc i32 and multiplier f32 (the product of
    the input scales over the output scale), as onnxruntime requantizes
    QLinearMatMul / QLinearConv accumulators."""

    name = "mlvm.requantize"
    acc = operand_def(TensorType)
    multiplier = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("acc", "multiplier", "zero_point")
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = ()

    def verify_(self) -> None:
        self.expect_elem(self.acc, "acc", (ACC,))
        self.expect_elem(self.multiplier, "multiplier", ("f32",))
        q = self.expect_elem(self.zero_point, "zero_point", QTYPES)
        self.expect_result(0, self.broadcast_operands(), q)

    def scalar_expr(self, args: Sequence[str]) -> str:
        q = self.elem_of(self.result, "result")
        return f"mlvm_quantize_{q}((float){args[0]} * {args[1]}, {args[2]})"

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        acc, m, zp = inputs
        with np.errstate(all="ignore"):
            r = acc.astype(np.float32) * m
        return [round_saturate(r, zp, result_dtype(self))]


@irdl_op_definition
class QMatmulOp(MlvmOp):
    """`lhs, rhs, lhs_zero_point, rhs_zero_point -> acc` (i32):
    acc[..., m, n] = sum_k (lhs[..., m, k] - lhs_zp) * (rhs[k, n] - rhs_zp[n])
    (ONNX MatMulInteger). lhs and rhs are i8 or ui8; lhs_zero_point is a
    scalar of lhs's type, rhs_zero_point a scalar or one per column of rhs's.
    Leading dims of lhs are batch dims over a shared rank-2 rhs."""

    name = "mlvm.qmatmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_zero_point = operand_def(TensorType)
    rhs_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("lhs", "rhs", "lhs_zero_point", "rhs_zero_point")

    def dims(self) -> tuple[tuple[int, ...], int, int, int]:
        ea = self.expect_elem(self.lhs, "lhs", ("i8", "ui8"))
        eb = self.expect_elem(self.rhs, "rhs", ("i8", "ui8"))
        self.expect_elem(self.lhs_zero_point, "lhs_zero_point", (ea,))
        self.expect_elem(self.rhs_zero_point, "rhs_zero_point", (eb,))
        sa, sb = self.shape_of(self.lhs, "lhs"), self.shape_of(self.rhs, "rhs")
        if len(sa) < 1 or len(sb) != 2:
            raise VerifyException(
                f"{self.name}: lhs {type_str(self.lhs.type)} must have rank >= 1 and rhs "
                f"{type_str(self.rhs.type)} rank 2"
            )
        if sa[-1] != sb[0]:
            raise VerifyException(
                f"{self.name}: contraction dims differ ({sa[-1]} vs {sb[0]}) for lhs "
                f"{type_str(self.lhs.type)} and rhs {type_str(self.rhs.type)}"
            )
        if prod(self.shape_of(self.lhs_zero_point, "lhs_zero_point")) != 1:
            raise VerifyException(f"{self.name}: lhs_zero_point must be a single value")
        zb = self.shape_of(self.rhs_zero_point, "rhs_zero_point")
        if prod(zb) not in (1, sb[1]) or len(zb) > 1 and prod(zb) != 1:
            raise VerifyException(
                f"{self.name}: rhs_zero_point {type_str(self.rhs_zero_point.type)} must be a "
                f"single value or one per column ({sb[1]})"
            )
        batch = sa[:-2] if len(sa) >= 2 else ()
        m = sa[-2] if len(sa) >= 2 else 1
        return batch, m, sb[1], sa[-1]

    def out_shape(self) -> tuple[int, ...]:
        batch, m, n, _ = self.dims()
        sa = self.shape_of(self.lhs, "lhs")
        return (*batch, m, n) if len(sa) >= 2 else (n,)

    def verify_(self) -> None:
        self.expect_result(0, self.out_shape(), ACC)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        a, b, za, zb = inputs
        a64 = a.astype(np.int64) - za.astype(np.int64).reshape(())
        b64 = b.astype(np.int64) - zb.astype(np.int64).reshape(-1)
        out = np.matmul(a64, b64)
        return [(out & 0xFFFFFFFF).astype(np.uint32).view(np.int32).reshape(result_shape(self))]

    def lower(self, cg: Lowering) -> None:
        batch, m, n, k = self.dims()
        rows = prod(batch) * m
        if rows * n == 0:
            return
        sa = self.elem_of(self.lhs, "lhs")[0] == "i"
        sb = self.elem_of(self.rhs, "rhs")[0] == "i"
        per_col = prod(self.shape_of(self.rhs_zero_point, "rhs_zero_point")) > 1
        p = cg.const_struct("mlvm_qmatmul_t", f"{rows}, {n}, {k}, {int(sa)}, {int(sb)}, {int(per_col)}")
        cg.stmt(
            f"mlvm_qmatmul_8({p}, {cg.ptr(self.lhs)}, {cg.ptr(self.rhs)}, {cg.ptr(self.lhs_zero_point)}, "
            f"{cg.ptr(self.rhs_zero_point)}, {cg.ptr(self.result)});"
        )


def qconv2d_reads_lanes(d: Mapping[str, int]) -> bool:
    """Whether the int8 convolution's workspace kernel reads its weights in
    lanes (the GEMM path of qconv_ws.c: 4 or more outputs per group), so
    that the compiler may store them so (kernels.h's w_lanes)."""
    return d["o"] // d["groups"] >= 4


#: vpmaddubsw's reach: two products of bytes of [0, 255] by weights whose
#: positive parts (or negative parts) add up to at most this fit int16.
PAIR_WEIGHT_SUM = 128


def byte_pairs_fit(rows: np.ndarray) -> bool:
    """kernels.h's w_pairs for weights as i8 ([O, taps], any order of each
    row's taps): whether in every row the two greatest positive parts add
    up to at most 128 and the two least negative parts to at least -128, so
    that any two weights of a row times two bytes of [0, 255] sum within
    int16 (255 x 128 = 32,640; 255 x 129 = 32,895 would not). i8 weights
    within [-64, 64] (onnxruntime's `reduce_range` for QInt8 weights)
    always fit."""
    if rows.size == 0:
        return True
    pad = np.zeros((rows.shape[0], max(0, 2 - rows.shape[1])), rows.dtype)
    r = np.concatenate([rows.astype(np.int64), pad], axis=1)
    hi = -np.partition(-np.maximum(r, 0), 1, axis=1)[:, :2].sum(axis=1)
    lo = np.partition(np.minimum(r, 0), 1, axis=1)[:, :2].sum(axis=1)
    return bool(np.all(hi <= PAIR_WEIGHT_SUM) and np.all(lo >= -PAIR_WEIGHT_SUM))


def qconv2d_one_position(d: Mapping[str, int]) -> bool:
    """mlvm_qgemv_applies (qconv_gemv.c): one group, a 1x1 kernel over a 1x1
    map without padding before it (a Linear layer's rows as mlvm-fuse-qdq
    writes them): each output one dot product, no workspace."""
    return (d["groups"] == 1 and d["kh"] == d["kw"] == d["h"] == d["w"] == d["oh"] == d["ow"] == 1
            and d["pt"] == d["pl"] == 0 and d["c"] > 0)


def qconv2d_workspace_bytes(d: Mapping[str, int], lanes: bool = False,
                            requant: bool = False) -> int:
    """mlvm_qconv2d_workspace (qconv_ws.c) for conv2d_dims `d`: tap offsets,
    the padded copy of the input (a group's channels interleaved by four for
    groups of 4 or more output channels; for one or two input channels a
    planar copy and its im2col in lanes of four taps; all channels planar
    for groups of fewer outputs), the
    reordered weights (none when stored in lanes) with a row of ones, their
    zero-point shares, zero points, window sums and the halfwords of 6
    positions that cores with the Arm DSP extension multiply (where AVX2
    widens a block of six rows' weights); for groups of
    fewer outputs, one channel's taps (and for 3x3 depthwise layers of
    stride 1 the DSP path's plane widened to halfwords);
    and the outputs at the copy's row pitch where it differs (int32 sums, or
    with `requant` (mlvm_qconv2d_requant_workspace) bytes; requantized with
    one position per image, 64 bytes it does not read)."""
    if min(d["n"], d["o"], d["oh"], d["ow"]) <= 0:
        return 0
    if requant and qconv2d_one_position(d):
        return 64  # MLVM_QW_ALIGN: qconv_gemv.c needs none (0 would say: no outputs)
    g = d["groups"]
    cg, og = d["c"] // g, d["o"] // g
    hq, wq = conv2d_phase_plane(d)
    plane, phases = hq * wq, d["sh"] * d["sw"]
    n = (d["oh"] - 1) * wq + d["ow"]
    slack, chunk = 256, 64  # MLVM_QW_SLACK, MLVM_QW_CHUNK
    gemm = qconv2d_reads_lanes(d)
    taps = cg * d["kh"] * d["kw"] if gemm and cg < 3 else 0
    if gemm:
        k = qconv_lane_count(cg, d["kh"], d["kw"])
        if taps:  # lanes of four taps: a planar copy and its im2col
            copy = align64(cg * phases * plane + slack) + align64(k * n * 4 + slack)
        else:  # lanes of four channels
            copy = align64(-(-cg // 4) * 4 * phases * plane + slack)
        w_rows = 1 if lanes else d["o"] + 1
        # ... and the DSP path's halfwords of 6 positions (every target; AVX2's 6 widened rows)
        weights = (align64(w_rows * k * 4) + 2 * align64(d["o"] * 4) + align64((n + chunk) * 4)
                   + align64(k * 48))
    else:
        k = cg * d["kh"] * d["kw"]
        copy = align64(d["c"] * phases * plane + slack)
        weights = align64(k * 4)
        if cg == 1 and d["kh"] == d["kw"] == 3 and d["sh"] == d["sw"] == d["dh"] == d["dw"] == 1:
            # the plane in halfwords at an even pitch (q_dw3_shape, q_dw3_pitch)
            weights += align64(hq * (wq + wq % 2) * 2)
    rows = 0 if wq == d["ow"] else align64(og * n * (1 if requant else 4))
    return align64((k + taps) * 8) + copy + weights + rows


class QConvWindowOp(ConvWindowOp):
    """What qconv2d and qconv2d_requant share: the integer sums of (x - x_zp)
    times (w - w_zp[o]) over the windows, and their kernel's descriptor."""

    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "w", "x_zero_point", "w_zero_point")
    # Whether the results are requantized bytes (their workspace's rows too)
    REQUANT: ClassVar[bool] = False
    # [KH, KW]: w is an i8 weight stored [O, 4 k] in the kernel's lanes (set
    # by mlvm-pack-weights on constant weights; see qconv2d_reads_lanes)
    w_lanes = opt_prop_def(DenseArrayBase.constr(i64))

    @property
    def _q(self) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        return self.operands[0], self.operands[1], self.operands[2], self.operands[3]

    def dims(self) -> dict[str, int]:
        x, w, zx, zw_v = self._q
        ex = self.expect_elem(x, "x", ("i8", "ui8"))
        ew = self.expect_elem(w, "w", ("i8", "ui8"))
        self.expect_elem(zx, "x_zero_point", (ex,))
        self.expect_elem(zw_v, "w_zero_point", (ew,))
        d = conv2d_dims(self, x, w, None, self._lanes_shape())
        if self.w_lanes is not None and not qconv2d_reads_lanes(d):
            raise VerifyException(
                f"{self.name}: w_lanes needs 4 or more output channels per group "
                f"({d['o']} in {d['groups']} groups)")
        if prod(self.shape_of(zx, "x_zero_point")) != 1:
            raise VerifyException(f"{self.name}: x_zero_point must be a single value")
        zw = self.shape_of(zw_v, "w_zero_point")
        if not (prod(zw) == 1 and len(zw) <= 1 or zw == (d["o"],)):
            raise VerifyException(
                f"{self.name}: w_zero_point {type_str(zw_v.type)} must be a single "
                f"value or one per output channel ({d['o']})"
            )
        return d

    def _lanes_shape(self) -> tuple[int, ...] | None:
        """The [O, I, KH, KW] of a w stored in lanes (verified), or None."""
        if self.w_lanes is None:
            return None
        x, w = self._q[0], self._q[1]
        vals = tuple(self.w_lanes.get_values())
        sx, sw = self.shape_of(x, "x"), self.shape_of(w, "w")
        groups = _int(self, "groups", 1)
        ok = len(vals) == 2 and min(vals) > 0 and len(sx) == 4 and len(sw) == 2 and groups > 0
        ok = ok and sx[1] % groups == 0 and self.elem_of(w, "w") == "i8"
        if not ok or sw[1] != 4 * qconv_lane_count(sx[1] // groups, vals[0], vals[1]):
            raise VerifyException(
                f"{self.name}: w {type_str(w.type)} is not an i8 weight in lanes for w_lanes "
                f"{list(vals)} and x {type_str(x.type)} (groups {groups}): want [O, 4 k]")
        return (sw[0], sx[1] // groups, vals[0], vals[1])

    def sums(self, inputs: Sequence[np.ndarray]) -> np.ndarray:
        """The int32 sums (wrapping), from the first four inputs."""
        x, w, zx, zw = inputs[:4]
        d = self.dims()
        if self.w_lanes is not None:
            w = from_qlanes(w, d["c"] // d["groups"], d["kh"], d["kw"])
        g, og, cg = d["groups"], d["o"] // d["groups"], d["c"] // d["groups"]
        xi = x.astype(np.int64) - int(zx.reshape(()))
        xp = np.pad(xi, ((0, 0), (0, 0), (d["pt"], d["kh"] * d["dh"] + d["sh"] * d["oh"]),
                         (d["pl"], d["kw"] * d["dw"] + d["sw"] * d["ow"])))
        wi = w.astype(np.int64) - np.broadcast_to(zw.astype(np.int64).reshape(-1), (d["o"],)).reshape(-1, 1, 1, 1)
        acc = np.zeros((d["n"], d["o"], d["oh"], d["ow"]), np.int64)
        for ky in range(d["kh"]):
            for kx in range(d["kw"]):
                y0, x0 = ky * d["dh"], kx * d["dw"]
                patch = xp[:, :, y0: y0 + d["sh"] * d["oh"]: d["sh"], x0: x0 + d["sw"] * d["ow"]: d["sw"]]
                for k in range(g):
                    acc[:, k * og:(k + 1) * og] += np.einsum(
                        "nchw,oc->nohw", patch[:, k * cg:(k + 1) * cg], wi[k * og:(k + 1) * og, :, ky, kx])
        return (acc & 0xFFFFFFFF).astype(np.uint32).view(np.int32)

    def workspace_bytes(self) -> int:
        return qconv2d_workspace_bytes(self.dims(), lanes=self.w_lanes is not None,
                                       requant=self.REQUANT)

    def descriptor(self, cg: Lowering) -> str:
        """A static mlvm_qconv2d_t of the op's sizes and operand types."""
        d = self.dims()
        x, w, _, zw_v = self._q
        fields = [d[k] for k in ("n", "c", "h", "w", "o", "kh", "kw", "oh", "ow", "sh", "sw", "pt", "pl",
                                 "dh", "dw", "groups")]
        flags = [int(self.elem_of(x, "x") == "i8"), int(self.elem_of(w, "w") == "i8"),
                 int(prod(self.shape_of(zw_v, "w_zero_point")) > 1), int(self.w_lanes is not None)]
        init = ", ".join(str(v) for v in fields + flags)
        rows = self._w_rows(cg)
        if rows is None:
            return cg.const_struct("mlvm_qconv2d_t", f"{init}, NULL, 0")
        # cores with vectors: the layer's own descriptor with its sums (and
        # whether its weights take 16-bit pair sums); cores without: the one
        # without, shared by layers of the same sizes. On a Cortex-M4 the
        # sums would cost DS-CNN int8 2.9 KB of flash to save 0.5 % of its
        # instructions.
        sums = (rows.sum(axis=1) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        table = cg.static_array("int32_t", [str(int(v)) for v in sums], VECTOR_CORE)
        pairs = int(byte_pairs_fit(rows))
        vec = cg.const_struct("mlvm_qconv2d_t", f"{init}, {table}, {pairs}", VECTOR_CORE)
        scalar = cg.const_struct("mlvm_qconv2d_t", f"{init}, NULL, 0", SCALAR_CORE)
        return f"MLVM_VECTOR_PICK({vec}, {scalar})"

    def _w_rows(self, cg: Lowering) -> np.ndarray | None:
        """Each output channel's weights as i8 (u8 weights less 128), [O,
        taps] int64, where they are known at compile time (the descriptor's
        w_sums and w_pairs), else None (the kernels sum them per call and
        take the tiles of widened bytes)."""
        w = cg.data_of(self._q[1])
        if w is None:
            return None
        rows = w.reshape(self.dims()["o"], -1).astype(np.int64)  # lanes (already i8) or OIHW
        if w.dtype == np.uint8:
            rows -= 128
        return rows

    def q_args(self, cg: Lowering) -> str:
        return ", ".join(cg.ptr(v) for v in self._q)


@irdl_op_definition
class QConv2dOp(QConvWindowOp):
    """`x, w, x_zero_point, w_zero_point -> acc` (i32): the 2-D convolution of
    (x - x_zp) by (w - w_zp[o]) with the properties of mlvm.conv2d (ONNX
    ConvInteger); padding contributes nothing (it stands for x_zp). x and w
    are i8 or ui8, x_zp one value, w_zp one value or one per output channel."""

    name = "mlvm.qconv2d"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    x_zero_point = operand_def(TensorType)
    w_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        d = self.dims()
        self.expect_result(0, (d["n"], d["o"], d["oh"], d["ow"]), ACC)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        return [self.sums(inputs)]

    def lower(self, cg: Lowering) -> None:
        d = self.dims()
        if d["n"] * d["o"] * d["oh"] * d["ow"] == 0:
            return
        args = f"{self.descriptor(cg)}, {self.q_args(cg)}, {cg.ptr(self.result)}"
        ws = cg.workspace(self)
        if ws is None:
            cg.stmt(f"mlvm_qconv2d_8({args});")
        else:
            cg.stmt(f"mlvm_qconv2d_ws_8({args}, {ws});")


@irdl_op_definition
class QConv2dRequantOp(QConvWindowOp):
    """`x, w, x_zero_point, w_zero_point, multiplier, y_zero_point[, bias] ->
    y`: mlvm.qconv2d's sums plus bias (i32, one per output channel), then
    requantized as mlvm.requantize does (multiplier f32, one value or one
    per output channel; y_zero_point i8 or ui8, the result's type), then
    with `relu` at least y_zero_point: ONNX QLinearConv (+ Relu) in one
    kernel, the sums never stored. Made by mlvm-fuse-qdq."""

    name = "mlvm.qconv2d_requant"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    x_zero_point = operand_def(TensorType)
    w_zero_point = operand_def(TensorType)
    multiplier = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    relu = opt_prop_def(IntegerAttr.constr(type=i64), IntegerAttr(0, i64))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = (
        "x", "w", "x_zero_point", "w_zero_point", "multiplier", "y_zero_point", "bias")
    # The sums live only in the workspace: it is part of the op.
    WORKSPACE_REQUIRED: ClassVar[bool] = True
    REQUANT: ClassVar[bool] = True

    def per_channel(self) -> bool:
        d = self.dims()
        m = self.shape_of(self.multiplier, "multiplier")
        if prod(m) == 1 and len(m) <= 1:
            return False
        if m == (d["o"],):
            return True
        raise VerifyException(
            f"{self.name}: multiplier {type_str(self.multiplier.type)} must be a single value or "
            f"one per output channel ({d['o']})"
        )

    def verify_(self) -> None:
        d = self.dims()
        self.expect_elem(self.multiplier, "multiplier", ("f32",))
        self.per_channel()
        q = self.expect_elem(self.y_zero_point, "y_zero_point", ("i8", "ui8"))
        if prod(self.shape_of(self.y_zero_point, "y_zero_point")) != 1:
            raise VerifyException(f"{self.name}: y_zero_point must be a single value")
        if self.bias is not None:
            self.expect_elem(self.bias, "bias", (ACC,))
            if self.shape_of(self.bias, "bias") != (d["o"],):
                raise VerifyException(
                    f"{self.name}: bias {type_str(self.bias.type)} must hold one value per output "
                    f"channel ({d['o']})"
                )
        if self.relu.value.data not in (0, 1):
            raise VerifyException(f"{self.name}: relu must be 0 or 1")
        self.expect_result(0, (d["n"], d["o"], d["oh"], d["ow"]), q)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        acc = self.sums(inputs)
        m, zy = inputs[4], inputs[5]
        if len(inputs) > 6:
            acc = (acc.astype(np.int64) + inputs[6].astype(np.int64).reshape(1, -1, 1, 1))
            acc = (acc & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        mult = m.reshape(1, -1, 1, 1) if self.per_channel() else m.reshape(())
        with np.errstate(all="ignore"):
            r = acc.astype(np.float32) * mult.astype(np.float32)
        zp = zy.reshape(())
        y = round_saturate(r, zp, result_dtype(self))
        if self.relu.value.data:
            y = np.maximum(y, zp.astype(y.dtype))
        return [y]

    def lower(self, cg: Lowering) -> None:
        d = self.dims()
        if d["n"] * d["o"] * d["oh"] * d["ow"] == 0:
            return
        y_signed = int(self.elem_of(self.result, "result") == "i8")
        rq = cg.const_struct("mlvm_qrequant_t",
                             f"{y_signed}, {int(self.per_channel())}, {self.relu.value.data}")
        bias = cg.ptr(self.bias) if self.bias is not None else "NULL"
        ws = cg.workspace(self)
        assert ws is not None, "the workspace of qconv2d_requant is always planned"
        cg.stmt(f"mlvm_qconv2d_requant_8({self.descriptor(cg)}, {rq}, {self.q_args(cg)}, {bias}, "
                f"{cg.ptr(self.multiplier)}, {cg.ptr(self.y_zero_point)}, {cg.ptr(self.result)}, {ws});")


def _expect_single(op: MlvmOp, *indices: int) -> None:
    """The operands at `indices` (scales, zero points) hold one value each."""
    for i in indices:
        v, what = op.operands[i], op.OPERAND_NAMES[i]
        if prod(op.shape_of(v, what)) != 1:
            raise VerifyException(f"{op.name}: {what} {type_str(v.type)} must be a single value")


@irdl_op_definition
class QAddOp(MlvmOp):
    """`a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
    y_zero_point -> y`: quantize(dequantize(a) + dequantize(b)) (ONNX
    QLinearAdd, as a QDQ model spells it: the residual adds of quantized
    ResNets, a quantized bias), computed as onnxruntime's QLinearAdd kernel
    on x86-64 does: with rx = sx / sy and rw = sw / sy in f32,
    saturate(nearbyint(fma(x, rx, fma(w, rw, zy - fma(rx, zx, rw * zw))))),
    each fma rounded once, NaN and values past int32 the type's minimum (its
    conversion's INT_MIN), (x, w) = (a, b), or (b, a) where a is constant
    along onnxruntime's innermost run (QAddLayout.swap). a, b and y are i8
    or ui8, each with its own type; one of a and b has y's shape, the other
    broadcasts to it over dims of one run (qadd_layout); scales f32 and
    zero points single values. Made by mlvm-fuse-qdq."""

    name = "mlvm.qadd"
    a = operand_def(TensorType)
    a_scale = operand_def(TensorType)
    a_zero_point = operand_def(TensorType)
    b = operand_def(TensorType)
    b_scale = operand_def(TensorType)
    b_zero_point = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = (
        "a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point")
    # element i of y is written after a[i] and b[i] are read (the operand of y's type)
    INPLACE_OPERANDS: ClassVar[tuple[int, ...]] = (0, 3)

    def verify_(self) -> None:
        ops = self.operands
        for i in (0, 3):
            q = self.expect_elem(ops[i], self.OPERAND_NAMES[i], ("i8", "ui8"))
            self.expect_elem(ops[i + 2], self.OPERAND_NAMES[i + 2], (q,))
        y = self.expect_elem(self.y_zero_point, "y_zero_point", ("i8", "ui8"))
        for i in (1, 4, 6):
            self.expect_elem(ops[i], self.OPERAND_NAMES[i], ("f32",))
        _expect_single(self, 1, 2, 4, 5, 6, 7)
        sa, sb = self.shape_of(self.a, "a"), self.shape_of(self.b, "b")
        sy = broadcast_shapes(sa, sb)
        if sy is None or qadd_layout(sa, sb, sy) is None:
            raise VerifyException(
                f"{self.name}: a {type_str(self.a.type)} and b {type_str(self.b.type)} must have one shape, "
                "or one of them broadcast to the other's over dims of one run")
        self.expect_result(0, sy, y)

    def layout(self) -> QAddLayout:
        sy = self.shape_of(self.result, "result")
        found = qadd_layout(self.shape_of(self.a, "a"), self.shape_of(self.b, "b"), sy)
        assert found is not None, "verified"
        return found

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        a, sa, za, b, sb, zb, sy, zy = inputs
        shape = result_shape(self)
        swap = self.layout().swap
        (x, sx, zx), (w, sw, zw) = ((b, sb, zb), (a, sa, za)) if swap else ((a, sa, za), (b, sb, zb))
        with np.errstate(all="ignore"):
            rx = np.float32(sx.reshape(())) / np.float32(sy.reshape(()))
            rw = np.float32(sw.reshape(())) / np.float32(sy.reshape(()))
            fixed = np.float32(zy.reshape(())) - fma_f32(rx, np.float32(zx.reshape(())), rw * np.float32(zw.reshape(())))
            t = fma_f32(np.broadcast_to(w, shape).astype(np.float32), rw, fixed)
            v = fma_f32(np.broadcast_to(x, shape).astype(np.float32), rx, t)
            lo, hi = (-128, 127) if self.elem_of(self.result, "y") == "i8" else (0, 255)
            ok = np.abs(v) < np.float32(2.0**31)  # (False for NaN)
            out = np.where(ok, np.clip(np.rint(np.where(ok, v, 0)), lo, hi), lo)
        return [out.astype(result_dtype(self))]

    def lower(self, cg: Lowering) -> None:
        if prod(self.shape_of(self.result, "result")) == 0:
            return
        lay = self.layout()
        signs = [int(self.elem_of(v, w) == "i8") for v, w in ((self.a, "a"), (self.b, "b"), (self.result, "y"))]
        p = cg.const_struct("mlvm_qadd_t", ", ".join(str(f) for f in (*signs, int(lay.swap), lay.small)))
        args = ", ".join(cg.ptr(v) for v in self.operands)
        cg.stmt(f"mlvm_qadd_8({p}, {lay.outer}u, {lay.mid}u, {lay.inner}u, {args}, {cg.ptr(self.result)});")


@irdl_op_definition
class QAvgPool2dOp(MlvmOp):
    """`x, x_scale, x_zero_point, y_scale, y_zero_point -> y`: the average over
    windows of x (mlvm.pool2d's `window`, `strides`, `padding`; padded
    positions left out of the count) of its dequantized values, x_scale * (x
    - x_zp) in f32, each window summed from 0 in row-major order and divided
    by its count, then quantized as onnxruntime's QLinearAveragePool does:
    saturate(nearbyint(avg / y_scale + y_zp)), rounded half to even (the
    zero point added before the rounding); where one window covers the
    whole map without padding, as its global pool does: the integer sum of
    x - x_zp (wrapping as int32) times x_scale / (y_scale * n) in f32,
    clamped to the output's range less y_zp, rounded half to even, plus
    y_zp. x and y i8 or ui8 of one type, scales f32 and zero points single
    values. Made by mlvm-fuse-qdq."""

    name = "mlvm.qavgpool2d"
    x = operand_def(TensorType)
    x_scale = operand_def(TensorType)
    x_zero_point = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    window = prop_def(DenseArrayBase.constr(i64))
    strides = opt_prop_def(DenseArrayBase.constr(i64), DenseArrayBase.from_list(i64, [1, 1]))
    padding = opt_prop_def(DenseArrayBase.constr(i64), DenseArrayBase.from_list(i64, [0, 0, 0, 0]))
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "x_scale", "x_zero_point", "y_scale", "y_zero_point")

    def dims(self) -> dict[str, int]:
        e = self.expect_elem(self.x, "x", ("i8", "ui8"))
        for v, what in ((self.x_zero_point, "x_zero_point"), (self.y_zero_point, "y_zero_point")):
            self.expect_elem(v, what, (e,))
        for v, what in ((self.x_scale, "x_scale"), (self.y_scale, "y_scale")):
            self.expect_elem(v, what, ("f32",))
        _expect_single(self, 1, 2, 3, 4)
        return pool2d_dims(self, self.x)

    def verify_(self) -> None:
        d = self.dims()
        self.expect_result(0, (d["n"], d["c"], d["oh"], d["ow"]), self.elem_of(self.x, "x"))

    def is_global(self) -> bool:
        """One window the size of the map and no padding: onnxruntime's
        QLinearAveragePool then takes its global pool's integer sums."""
        return pool2d_is_global(self.dims())

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        d = self.dims()
        x, sx, zx, sy, zy = inputs
        if self.is_global():
            info = np.iinfo(x.dtype)
            n = d["h"] * d["w"]
            acc = x.astype(np.int64).reshape(d["n"], d["c"], n).sum(axis=2) - int(zx.reshape(())) * n
            acc = ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)
            z = int(zy.reshape(()))
            with np.errstate(all="ignore"):
                scale = np.float32(sx.reshape(())) / np.float32(np.float32(sy.reshape(())) * np.float32(n))
                f = (acc.astype(np.float32) * scale).astype(np.float32)
                f = np.clip(np.where(np.isnan(f), np.float32(0), f), np.float32(info.min - z), np.float32(info.max - z))
            return [(np.rint(f).astype(np.int64) + z).astype(x.dtype).reshape(d["n"], d["c"], 1, 1)]
        with np.errstate(all="ignore"):
            deq = ((x.astype(np.int64) - zx.astype(np.int64).reshape(())).astype(np.float32)
                   * sx.astype(np.float32).reshape(())).astype(np.float32)
        shape = (d["n"], d["c"], d["oh"], d["ow"])
        acc = np.zeros(shape, np.float32)
        count = np.zeros(shape[2:], np.float32)
        for i in range(d["kh"]):  # row-major: each window's elements in order
            for j in range(d["kw"]):
                rows = np.arange(d["oh"]) * d["sh"] - d["pt"] + i
                cols = np.arange(d["ow"]) * d["sw"] - d["pl"] + j
                inside = ((rows >= 0) & (rows < d["h"]))[:, None] & ((cols >= 0) & (cols < d["w"]))[None, :]
                v = deq[:, :, np.clip(rows, 0, d["h"] - 1)][:, :, :, np.clip(cols, 0, d["w"] - 1)]
                with np.errstate(all="ignore"):
                    acc = np.where(inside, (acc + v).astype(np.float32), acc)
                count = count + inside
        with np.errstate(all="ignore"):
            f = (acc / count).astype(np.float32) / sy.astype(np.float32).reshape(())
            f = (f.astype(np.float32) + np.float32(zy.astype(np.int64).reshape(()))).astype(np.float32)
        return [round_saturate(f, np.zeros((), zy.dtype), result_dtype(self))]

    def lower(self, cg: Lowering) -> None:
        d = self.dims()
        if prod(result_shape(self)) == 0:
            return
        signed = int(self.elem_of(self.x, "x") == "i8")
        args = ", ".join(cg.ptr(v) for v in self.operands)
        if self.is_global():
            cg.stmt(f"mlvm_qavgpool2d_global_8({d['planes']}u, {d['h'] * d['w']}u, {signed}, {args}, "
                    f"{cg.ptr(self.result)});")
            return
        init = ", ".join(str(d[k]) for k in ("planes", "h", "w", "kh", "kw", "oh", "ow", "sh", "sw", "pt", "pl"))
        p = cg.const_struct("mlvm_pool2d_t", init)
        cg.stmt(f"mlvm_qavgpool2d_8({p}, {signed}, {args}, {cg.ptr(self.result)});")


def qsoftmax_table(x_scale: float, n: int, is_signed: bool) -> np.ndarray:
    """onnxruntime's QLinearSoftmax table for rows of n values: by each
    byte's bits, exp((i - 255 + shift) * x_scale) in double (the C
    library's exp, as onnxruntime's), i the byte's rank from the smallest,
    rounded to f32; shift = max(0, logf(FLT_MAX / n) - 5) / x_scale keeps
    the row's sum below FLT_MAX, its log taken in f32 (FLT_MAX / n an f32
    quotient, its log rounded to f32) as onnxruntime's is."""
    a = np.float32(np.finfo(np.float32).max) / np.float32(n)
    shift = max(0.0, float(np.float32(math.log(float(a)))) - 5.0) / float(np.float32(x_scale))
    table = np.zeros(256, np.float32)
    for i in range(256):
        v = math.exp((float(i) - 255.0 + shift) * float(np.float32(x_scale)))
        table[(i - 128) & 0xFF if is_signed else i] = np.float32(v) if v < 3.5e38 else np.float32(np.inf)
    return table


@irdl_op_definition
class QSoftmaxOp(MlvmOp):
    """`x, table, y_scale, y_zero_point -> y`: the softmax of 8-bit x along
    its last axis quantized as onnxruntime's QLinearSoftmax computes it:
    each row's byte values looked up in `table` (f32 [256], by a byte's
    bits: qsoftmax_table of x's scale, exp of each value's distance from 255
    plus a shift), shifted so that the row's largest value takes the
    largest entry, summed in order in f32, and each output
    nearbyint((t / sum) * floor(1 / y_scale)) + y_zero_point, saturated (a
    quotient that is NaN, negative or past 2^30, which onnxruntime converts
    with undefined behaviour, gives the largest value). x and y ui8, or
    both i8. Made by mlvm-fuse-qdq."""

    name = "mlvm.qsoftmax"
    x = operand_def(TensorType)
    table = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    OPERAND_NAMES: ClassVar[tuple[str, ...]] = ("x", "table", "y_scale", "y_zero_point")

    def verify_(self) -> None:
        e = self.expect_elem(self.x, "x", ("i8", "ui8"))
        self.expect_elem(self.y_zero_point, "y_zero_point", (e,))
        self.expect_elem(self.table, "table", ("f32",))
        self.expect_elem(self.y_scale, "y_scale", ("f32",))
        if self.shape_of(self.table, "table") != (256,):
            raise VerifyException(f"{self.name}: table {type_str(self.table.type)} must hold 256 values")
        _expect_single(self, 2, 3)
        shape = self.shape_of(self.x, "x")
        if not shape:
            raise VerifyException(f"{self.name}: x {type_str(self.x.type)} must have rank >= 1")
        self.expect_result(0, shape, e)

    def reference(
        self, inputs: Sequence[np.ndarray], params: Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        x, table, ys, zy = inputs
        signed = x.dtype == np.int8
        n = x.shape[-1] if x.ndim else 1
        rows = x.reshape(-1, n) if x.size else x.reshape(0, max(n, 1))
        out = np.zeros(rows.shape, x.dtype)
        with np.errstate(all="ignore"):
            inv = np.floor(np.float32(1.0) / np.float32(ys.reshape(())))
        z = int(zy.reshape(()))
        for r, row in enumerate(rows):
            if signed:
                idx = ((127 - int(row.max())) + row.astype(np.int64)) & 0xFF
            else:
                idx = 255 - int(row.max()) + row.astype(np.int64)
            t = table[idx]
            total = np.float32(0.0)
            for v in t:
                total = np.float32(total + v)
            with np.errstate(all="ignore"):
                q = np.rint((t / total).astype(np.float32) * inv).astype(np.float32)
            lo, hi = (-128, 127) if signed else (0, 255)
            for j, v in enumerate(q):
                k = int(v) + z if np.isfinite(v) and 0 <= v <= 2**30 else hi
                out[r, j] = min(max(k, lo), hi)
        return [out.reshape(x.shape)]

    def lower(self, cg: Lowering) -> None:
        shape = self.shape_of(self.x, "x")
        if prod(shape) == 0:
            return
        n = shape[-1]
        signed = int(self.elem_of(self.x, "x") == "i8")
        args = ", ".join(cg.ptr(v) for v in self.operands)
        cg.stmt(f"mlvm_qsoftmax_8({prod(shape) // n}u, {n}u, {signed}, {args}, {cg.ptr(self.result)});")


QUANT_OPS: list[type[MlvmOp]] = [QuantizeOp, DequantizeOp, RequantizeOp, QMatmulOp, QConv2dOp,
                                 QConv2dRequantOp, QAddOp, QAvgPool2dOp, QSoftmaxOp]
__all__ = ["QUANT_OPS", "ELEMS"]
