"""ONNX Conv over 3-D inputs ([N, C, D, H, W]) as 2-D convolutions.

A 3-D convolution is the sum over the kernel's depth taps t of 2-D
convolutions: output depth z reads input depth z * stride + t * dilation
(after the depth pads). The input is padded in depth and transposed to
[N, D, C, H, W] once; each tap takes a strided slice of depths, seen as
N * D_out images, and convolves it with the weights' slice [:, :, t] on
mlvm.conv2d (height and width pads, strides, dilations and groups as they
are), bias in the first tap only. The sums come back as [N, O, D_out, H_out,
W_out]. The same products as the operator, summed in another order."""

from __future__ import annotations

from typing import Any

from mlvm.dialect.index import PadOp
from mlvm.dialect.nn import TransposeOp
from mlvm.dialect.ops import AddOp
from mlvm.frontend.onnx.importer import Const, Importer, NodeError, Tensor, Unsupported, Value
from mlvm.frontend.onnx.ops import _emit_conv, _spatial_attrs, binary, reshape, slice_value

MAX_DEPTH_TAPS = 256
"""Deepest kernel taken (one mlvm.conv2d per depth tap)."""


def conv_3d(imp: Importer, x: Value, w: Value, b: Value | None, attrs: dict[str, Any]) -> Value:
    n, c, d, h, wd = imp.shape(x)
    ws = imp.shape(w)
    if len(ws) != 5:
        raise NodeError(f"W of shape {list(ws)} for a 3-D input")
    o, _, kd, kh, kw = ws
    if min(kd, kh, kw) < 1:
        raise NodeError(f"W of shape {list(ws)}: an empty kernel")
    if kd > MAX_DEPTH_TAPS:  # one 2-D convolution each
        raise Unsupported(f"a kernel {kd} deep")
    strides, dilations, pads = _spatial_attrs(attrs, (d, h, wd), (kd, kh, kw))
    groups = int(attrs.get("group", 1))
    sizes = []
    for size, k, s, dl, p0, p1 in zip((d, h, wd), (kd, kh, kw), strides, dilations, pads[:3], pads[3:],
                                      strict=True):
        span = size + p0 + p1 - ((k - 1) * dl + 1)
        if span < 0:
            raise NodeError(f"the kernel ({k} with dilation {dl}) is larger than the padded input ({size})")
        sizes.append(span // s + 1)
    od, oh, ow = sizes
    elem = imp.elem(x)
    if pads[0] or pads[3]:
        d += pads[0] + pads[3]
        x = Tensor(imp.emit(PadOp, [imp.t(x)], (n, c, d, h, wd), elem,
                            pads=[0, 0, pads[0], 0, 0, 0, 0, pads[3], 0, 0], mode="constant", value=0.0))
    xt = Tensor(imp.emit(TransposeOp, [imp.t(x)], (n, d, c, h, wd), elem, perm=[0, 2, 1, 3, 4]))
    props = dict(strides=strides[1:], padding=[pads[1], pads[2], pads[4], pads[5]],
                 dilations=dilations[1:], groups=groups)
    acc: Value | None = None
    for t in range(kd):
        first = t * dilations[0]
        xs = slice_value(imp, xt, [first], [first + (od - 1) * strides[0] + 1], [1], [strides[0]])
        wt = (Const(w.array[:, :, t].copy()) if isinstance(w, Const) else
              reshape(imp, slice_value(imp, w, [t], [t + 1], [2], [1]), (ws[0], ws[1], kh, kw)))
        y = _emit_conv(imp, reshape(imp, xs, (n * od, c, h, wd)), wt, b if t == 0 else None, props,
                       (n * od, o, oh, ow), False)
        acc = y if acc is None else binary(imp, AddOp, acc, y)
    assert acc is not None
    y5 = reshape(imp, acc, (n, od, o, oh, ow))
    return Tensor(imp.emit(TransposeOp, [imp.t(y5)], (n, o, od, oh, ow), imp.elem(acc), perm=[0, 2, 1, 3, 4]))
