"""ONNX ConvTranspose (1-D and 2-D) as a convolution.

A transposed convolution with stride s is a stride-1 convolution of the
input with s - 1 zeros inserted between its elements, padded by
(k - 1) d - pad_begin before and (k - 1) d - pad_end + output_padding
after (negative amounts crop), with the kernel flipped and its input and
output channels swapped within each group. The zeros come from a reshape
to [n, c, h, 1, w, 1], a constant pad of the unit dims to s and a reshape
back; the weights, constants of the model, are rearranged here once. So
the operator runs on mlvm.conv2d's kernels, bias included."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from mlvm.dialect.index import PadOp
from mlvm.frontend.onnx.importer import Const, Importer, NodeError, RunTimeInput, Tensor, Unsupported, Value
from mlvm.frontend.onnx.ops import _emit_conv, _to_2d, converter, reshape


def _ints(attrs: dict[str, Any], key: str, default: list[int], squeeze: bool,
          unit: int) -> list[int]:
    v = [int(a) for a in attrs.get(key, default)]
    return [unit] + v if squeeze and key in attrs else v


def _pads(attrs: dict[str, Any], in_hw: tuple[int, int], k: list[int], s: list[int],
          d: list[int], op: list[int], squeeze: bool) -> list[int]:
    """[top, left, bottom, right]: the pads attribute, or what auto_pad or
    output_shape ask for (the amount split as the operator defines)."""
    auto = str(attrs.get("auto_pad", "NOTSET"))
    out_shape = [int(v) for v in attrs.get("output_shape", [])]
    if auto == "VALID":
        return [0, 0, 0, 0]
    if out_shape or auto in ("SAME_UPPER", "SAME_LOWER"):
        if squeeze and out_shape:
            out_shape = [1] + out_shape
        if not out_shape:
            out_shape = [in_hw[i] * s[i] for i in range(2)]
        if len(out_shape) != 2:
            raise NodeError(f"output_shape {out_shape} needs one size per spatial dim")
        total = [s[i] * (in_hw[i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - out_shape[i]
                 for i in range(2)]
        if auto == "SAME_UPPER":
            return [total[0] // 2, total[1] // 2, total[0] - total[0] // 2, total[1] - total[1] // 2]
        return [total[0] - total[0] // 2, total[1] - total[1] // 2, total[0] // 2, total[1] // 2]
    if auto != "NOTSET":
        raise Unsupported(f"auto_pad '{auto}'")
    p = [int(v) for v in attrs.get("pads", [0, 0, 0, 0] if not squeeze else [0, 0])]
    if squeeze:
        p = [0, p[0], 0, p[1]] if len(p) == 2 else p
    if len(p) != 4:
        raise NodeError(f"pads {p} needs a begin and an end per spatial dim")
    return p


@converter("ConvTranspose")
def _conv_transpose(imp: Importer, node: onnx.NodeProto, ins: list[Value | None],
                    attrs: dict[str, Any]) -> list[Value]:
    if len(ins) < 2 or ins[0] is None or ins[1] is None:
        raise NodeError("needs X and W")
    x, w, b = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    if not isinstance(w, Const):
        raise RunTimeInput("ConvTranspose weights", w)
    if imp.elem(x) != "f32":
        raise Unsupported(f"ConvTranspose of {imp.elem(x)}")
    x4, squeeze = _to_2d(imp, x)
    wa = w.array.astype(np.float32)
    if squeeze:
        wa = wa[:, :, None, :]
    n, c, h, wd = imp.shape(x4)
    groups = int(attrs.get("group", 1))
    if wa.ndim != 4 or wa.shape[0] != c or c % groups:
        raise NodeError(f"W {list(w.array.shape)} does not match {c} input channels in "
                        f"{groups} groups")
    k = [int(v) for v in wa.shape[2:]]
    s = _ints(attrs, "strides", [1, 1], squeeze, 1)
    d = _ints(attrs, "dilations", [1, 1], squeeze, 1)
    op = _ints(attrs, "output_padding", [0, 0], squeeze, 0)
    if len(s) != 2 or len(d) != 2 or len(op) != 2 or min(s + d) < 1:
        raise NodeError("strides, dilations and output_padding need one value >= 1 per spatial "
                        "dim (output_padding >= 0)")
    pads = _pads(attrs, (h, wd), k, s, d, op, squeeze)
    up: Value = x4
    if s != [1, 1]:  # s - 1 zeros after every element
        up = reshape(imp, x4, (n, c, h, 1, wd, 1))
        zeros = [0, 0, 0, 0, 0, 0, 0, 0, 0, s[0] - 1, 0, s[1] - 1]
        up = Tensor(imp.emit(PadOp, [imp.t(up)], (n, c, h, s[0], wd, s[1]), "f32", pads=zeros,
                             mode="constant", value=0.0))
        up = reshape(imp, up, (n, c, h * s[0], wd * s[1]))
    # around it: the kernel's reach less the pads; the zeros past the last
    # element cropped; output_padding more at the end
    reach = [(k[i] - 1) * d[i] for i in range(2)]
    around = [reach[0] - pads[0], reach[1] - pads[1],
              reach[0] - pads[2] + op[0] - (s[0] - 1), reach[1] - pads[3] + op[1] - (s[1] - 1)]
    hp = h * s[0] + around[0] + around[2]
    wp = wd * s[1] + around[1] + around[3]
    oh, ow = hp - reach[0], wp - reach[1]
    if oh < 1 or ow < 1:
        raise NodeError(f"the output would be {oh} x {ow}")
    og = wa.shape[1]
    # W [c, og, kh, kw] -> [groups * og, c / groups, kh, kw], flipped
    wg = wa.reshape(groups, c // groups, og, k[0], k[1]).transpose(0, 2, 1, 3, 4)
    wc = np.ascontiguousarray(wg.reshape(groups * og, c // groups, k[0], k[1])[:, :, ::-1, ::-1])
    props = dict(strides=[1, 1], padding=[max(v, 0) for v in around], dilations=d, groups=groups)
    if min(around) < 0:  # crops first, then the conv pads what is left
        crop = [min(v, 0) for v in around]
        up = Tensor(imp.emit(PadOp, [imp.t(up)], (n, c, h * s[0] + crop[0] + crop[2],
                                                  wd * s[1] + crop[1] + crop[3]), "f32",
                             pads=[0, 0, crop[0], crop[1], 0, 0, crop[2], crop[3]],
                             mode="constant", value=0.0))
    return [_emit_conv(imp, up, Const(wc), b, props, (n, groups * og, oh, ow), squeeze)]
