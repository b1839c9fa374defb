"""Store weights in the layout their kernel reads.

A parameter that is only ever read as a transposed matmul operand
(`transpose_rhs` on the rhs, as PyTorch's `nn.Linear` and ONNX `Gemm
transB=1` weights are, or `transpose_lhs` on the lhs) is emitted transposed
once, at compile time: the `mlvm.param` gets a `perm` swapping its last two
dims and the matmuls read it untransposed, so no call repacks a constant.

A large parameter only ever read as the rhs of rank-2 matmuls (after that
transposition), or a smaller one whose products all have a few rows (2 to
64: a batched Linear layer), is stored in panels 32 columns wide (`panel`
on the param, `rhs_panel` on the matmuls; `matmul_prefers_panels`): the
GEMM's slivers, contiguous and zero-padded, read in place where the kernel
would otherwise pack them on every call or read rows far apart.

A parameter only ever read as the weights of conv2d ops that run faster with
the output channels in the vector lanes (`conv2d_prefers_ihwo`: small maps
and long contractions, given the workspace the memory plan gives them) is stored [C][KH][KW][O]
(`perm` [1, 2, 3, 0]) and those convolutions get `w_layout = "ihwo"`; with
more than 32 output channels, a multiple of 32, in panels of 32 channels
(`panel` [32, O] as well: [O / 32][C][KH][KW][32]), so that the kernel's
slivers read their weights in order, from contiguous memory, where rows of
all O channels had put each tap's 128 bytes on a page of its own (a
ResNet-50's 2048-channel weights streamed from memory that way).

A parameter only ever read as the 3x3 weights of stride-1 conv2d ops that
run faster by Winograd's minimal filtering (`conv2d_prefers_wino`, given
their workspace) and agree on its tile (`conv2d_wino_tile`) is stored
transformed (`wino` on the param, `to_wino`): [16, O, C] for F(2x2, 3x3),
`w_layout = "wino23"` on the convolutions (16 multiply-adds per pair of
channels and 2x2 outputs where the direct sums take 36; the weights take
16/9 of the bytes), or [36, O, C] for F(4x4, 3x3) on larger maps,
`w_layout = "wino43"` (36 per 4x4 outputs where the direct sums take 144;
4x the bytes). Where every reader takes panels (`conv2d_wino_panels`: one
group, at least 48 output channels) each plane goes into its GEMM's
panels, [planes, ceil(O / 24), C, 24] (per slice of 256 input channels,
panels of 24 outputs: `to_apanels`; the descriptor's w_panel), so that
each tile reads its rows in order from contiguous memory.

An i8 parameter only ever read as the weights of int8 convolutions whose
kernel reads them in lanes of four bytes (`qconv2d_reads_lanes`, given a
workspace) is stored in those lanes (`lanes` on the param, `to_qlanes`) and
those convolutions get `w_lanes` = [KH, KW]: no call reorders a constant.

Every use must agree, or the weight would be stored twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass

from mlvm.dialect.base import elem_name
from mlvm.dialect.nn import (
    Conv2dOp,
    conv2d_pointwise,
    conv2d_prefers_ihwo,
    conv2d_prefers_wino,
    conv2d_wino_panels,
    conv2d_wino_tile,
)
from mlvm.dialect.ops import (
    A_PANEL,
    PANEL_MULTIPLE,
    MatmulOp,
    ParamOp,
    a_panel_count,
    matmul_prefers_panels,
    qconv_lane_count,
)
from mlvm.dialect.quant import QConvWindowOp, qconv2d_reads_lanes
from mlvm.passes import defined_functions

_FLAG = ("transpose_lhs", "transpose_rhs")
_IHWO = (1, 2, 3, 0)


def _is_transposed_read(use_op: Operation, index: int) -> bool:
    if not isinstance(use_op, MatmulOp):
        return False
    attr = use_op.properties.get(_FLAG[index])
    return isinstance(attr, IntegerAttr) and bool(attr.value.data)


def _is_plain_rhs(use_op: Operation, index: int) -> bool:
    """A rank-2 matmul's untransposed rhs, not yet in panels."""
    return (isinstance(use_op, MatmulOp) and index == 1 and use_op.rhs_panel is None
            and not _is_transposed_read(use_op, 1)
            and len(use_op.shape_of(use_op.lhs, "lhs")) == 2)


def _clear_transpose(op: Operation, index: int) -> None:
    op.properties[_FLAG[index]] = IntegerAttr.from_bool(False)


def _set_ihwo(op: Operation, index: int) -> None:
    op.properties["w_layout"] = StringAttr("ihwo")


def _wino_marker(m: int) -> Callable[[Operation, int], None]:
    def mark(op: Operation, index: int) -> None:
        op.properties["w_layout"] = StringAttr(f"wino{m}3")
    return mark


def _set_panel(op: Operation, index: int) -> None:
    op.properties["rhs_panel"] = IntegerAttr(PANEL_MULTIPLE, i64)


def _lanes_marker(kh: int, kw: int) -> Callable[[Operation, int], None]:
    def mark(op: Operation, index: int) -> None:
        op.properties["w_lanes"] = _ints([kh, kw])
    return mark


def _swap_last_two(seq: Sequence[int]) -> list[int]:
    out = list(seq)
    out[-2], out[-1] = out[-1], out[-2]
    return out


def _ints(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


@dataclass(frozen=True)
class PackWeightsPass(ModulePass):
    name = "mlvm-pack-weights"

    # whether the memory plan gives conv2d its workspace (the IHWO layout
    # pays only with one, except for 1x1 stride-1 convolutions)
    workspaces: bool = True
    # Winograd's minimal filtering where it pays (needs workspaces; its
    # workspace and weights are larger: off for the smallest RAM and flash)
    winograd: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in defined_functions(op):
            for p in [o for o in f.body.block.ops if isinstance(o, ParamOp)]:
                self._pack(p)

    def _conv_wants_ihwo(self, use_op: Operation, index: int) -> bool:
        if not isinstance(use_op, Conv2dOp) or index != 1 or use_op.ihwo():
            return False
        d = use_op.dims()
        return conv2d_prefers_ihwo(d) and (self.workspaces or conv2d_pointwise(d))

    def _conv_wino_tile(self, use_op: Operation, index: int) -> int | None:
        """m of the F(m x m, 3x3) a weight's reader wants, or None."""
        if not (self.winograd and self.workspaces) or not isinstance(use_op, Conv2dOp):
            return None
        if index != 1 or use_op.layout() != "oihw":
            return None
        d = use_op.dims()
        return conv2d_wino_tile(d) if conv2d_prefers_wino(d) else None

    def _qconv_wants_lanes(self, use_op: Operation, index: int) -> bool:
        if not isinstance(use_op, QConvWindowOp) or index != 1 or use_op.w_lanes is not None:
            return False
        return qconv2d_reads_lanes(use_op.dims()) and (self.workspaces or use_op.WORKSPACE_REQUIRED)

    def _pack(self, p: ParamOp) -> None:
        t = p.result.type
        assert isinstance(t, TensorType)
        shape = list(t.get_shape())
        uses = list(p.result.uses)
        if len(shape) < 2 or not uses or p.panel is not None or p.wino is not None or p.lanes is not None:
            return  # none, or stored for its kernel already
        if (len(shape) == 4 and elem_name(t.element_type) == "i8"
                and all(self._qconv_wants_lanes(u.operation, u.index) for u in uses)):
            o, cg, kh, kw = shape
            lanes: dict[str, Attribute] = {} if p.perm is None else {"perm": p.perm}
            lanes["lanes"] = _ints([cg, kh, kw])
            self._replace(p, lanes, [o, 4 * qconv_lane_count(cg, kh, kw)], _lanes_marker(kh, kw))
            return
        base = list(p.permutation() or range(len(shape)))
        if all(_is_transposed_read(u.operation, u.index) for u in uses):
            p = self._replace(p, {"perm": _ints(_swap_last_two(base))}, _swap_last_two(shape),
                              _clear_transpose)
            shape = _swap_last_two(shape)
        elif (len(shape) == 4 and elem_name(t.element_type) == "f32"
              and len(tiles := {self._conv_wino_tile(u.operation, u.index) for u in uses}) == 1
              and (m := tiles.pop()) is not None):
            o, c = shape[:2]
            props: dict[str, Attribute] = {} if p.perm is None else {"perm": p.perm}
            props["wino"] = _ints([o, c])
            panels = all(isinstance(u.operation, Conv2dOp) and conv2d_wino_panels(u.operation.dims())
                         for u in uses)
            planes = [(m + 2) * (m + 2), *([a_panel_count(o), c, A_PANEL] if panels else [o, c])]
            self._replace(p, props, planes, _wino_marker(m))
            return
        elif len(shape) == 4 and all(self._conv_wants_ihwo(u.operation, u.index) for u in uses):
            ihwo = [shape[i] for i in _IHWO]
            props = {"perm": _ints([base[i] for i in _IHWO])}
            o = ihwo[3]
            if o > PANEL_MULTIPLE and o % PANEL_MULTIPLE == 0:  # in panels: no padding
                props["panel"] = _ints([PANEL_MULTIPLE, o])
                ihwo = [o // PANEL_MULTIPLE, *ihwo[:3], PANEL_MULTIPLE]
            self._replace(p, props, ihwo, _set_ihwo)
            return
        if len(shape) != 2 or not all(_is_plain_rhs(u.operation, u.index) for u in uses):
            return
        k, n = shape
        rows = [u.operation.dims()[1] for u in uses if isinstance(u.operation, MatmulOp)]
        if not matmul_prefers_panels(k, n, rows):
            return
        props = {"panel": _ints([PANEL_MULTIPLE, n])}
        if p.perm is not None:
            props["perm"] = p.perm
        self._replace(p, props, [-(-n // PANEL_MULTIPLE), k, PANEL_MULTIPLE], _set_panel)

    @staticmethod
    def _replace(p: ParamOp, layout: dict[str, Attribute], shape: list[int],
                 mark: Callable[[Operation, int], None]) -> ParamOp:
        """p as a param stored in `layout` (perm, panel) with `shape`, its
        readers marked."""
        t = p.result.type
        assert isinstance(t, TensorType)
        props: dict[str, Attribute] = {"name": p.param_name, **layout}
        if p.view is not None:  # the archive's array keeps its shape
            props["view"] = p.view
        packed = ParamOp.create(result_types=[TensorType(t.element_type, shape)],
                                properties=props)
        packed.result.name_hint = p.result.name_hint
        packed.location = p.location  # errors about the archive's array name its line
        p.parent_block().insert_op_before(packed, p)  # type: ignore[union-attr]
        for u in list(p.result.uses):
            user = u.operation
            user.operands[u.index] = packed.result
            mark(user, u.index)
        p.detach()
        p.erase()
        return packed
