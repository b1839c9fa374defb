"""mlvm-pack-weights and `mlvm.param`'s `perm`: weights stored transposed at
compile time give the same results as transposed reads at run time (within
the matmul's accumulation bound: the kernel may sum in another order, e.g.
the single-row path for contiguous weights), the emitted matmul reads them
untransposed, and a bad perm or archive shape is a
one-line error (the lit test tests/filecheck/passes/pack_weights.mlir shows
what the pass rewrites and what it must leave alone)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm import reference
from mlvm.dialect.ops import to_wino
from mlvm.pipeline import CompileOptions, compile_to_c, parse_file

LINEAR = """func.func @main(%x: tensor<{m}x{k}xf32>) -> tensor<{m}x{n}xf32> {{
  %w = "mlvm.param"() <{{name = "w"}}> : () -> tensor<{n}x{k}xf32>
  %b = "mlvm.param"() <{{name = "b"}}> : () -> tensor<{n}xf32>
  %0 = "mlvm.matmul"(%x, %w) <{{transpose_rhs = true}}> : (tensor<{m}x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<{m}x{n}xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<{m}x{n}xf32>, tensor<{n}xf32>) -> tensor<{m}x{n}xf32>
  %2 = "mlvm.relu"(%1) : (tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  func.return %2 : tensor<{m}x{n}xf32>
}}
"""


@pytest.mark.parametrize("m,n,k", [(1, 7, 5), (1, 300, 131), (8, 300, 131), (33, 64, 600)])
def test_linear_layer_same_results_packed_or_not(tmp_path: Path, m: int, n: int, k: int) -> None:
    g = np.random.default_rng(m + n + k)
    path = tmp_path / "linear.mlir"
    path.write_text(LINEAR.format(m=m, n=n, k=k))
    params = {"w": g.standard_normal((n, k)).astype(np.float32),
              "b": g.standard_normal(n).astype(np.float32)}
    x = g.standard_normal((m, k)).astype(np.float32)
    packed = mlvm.compile(path, params=params).main(x)
    plain = mlvm.compile(path, params=params, options=CompileOptions(pack_weights=False)).main(x)
    want = np.maximum(x.astype(np.float64) @ params["w"].T.astype(np.float64) + params["b"], 0)
    bound = np.abs(x.astype(np.float64)) @ np.abs(params["w"].T.astype(np.float64)) + np.abs(params["b"])
    for got in (packed, plain):
        assert np.all(np.abs(got - want) <= 1e-5 * bound)


PLAIN = """func.func @main(%x: tensor<{m}x{k}xf32>) -> tensor<{m}x{n}xf32> {{
  %w = "mlvm.param"() <{{name = "w"}}> : () -> tensor<{k}x{n}xf32>
  %0 = "mlvm.matmul"(%x, %w) : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  func.return %0 : tensor<{m}x{n}xf32>
}}
"""


# (layout, m, n, k): large weights stored in panels, PyTorch layout (fused
# with bias and relu) or not, one row (each row path) to several row blocks,
# a ragged last panel
@pytest.mark.parametrize("text,m,n,k", [
    (LINEAR, 1, 1000, 300), (LINEAR, 8, 512, 1024), (LINEAR, 65, 520, 520),
    (PLAIN, 1, 520, 521), (PLAIN, 3, 1000, 300), (PLAIN, 200, 512, 515),
], ids=["linear-1", "linear-8", "linear-65", "plain-1", "plain-3", "plain-200"])
def test_weights_in_panels_same_results(tmp_path: Path, text: str, m: int, n: int, k: int) -> None:
    g = np.random.default_rng(m + n + k)
    path = tmp_path / "mm.mlir"
    path.write_text(text.format(m=m, n=n, k=k))
    linear = text is LINEAR
    w = g.standard_normal((n, k) if linear else (k, n)).astype(np.float32)
    params = {"w": w, "b": g.standard_normal(n).astype(np.float32)} if linear else {"w": w}
    x = g.standard_normal((m, k)).astype(np.float32)
    source, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "a.c", params, str(path))
    assert re.search(rf"mlvm_matmul_t \w+ = \{{{m}, {n}, {k}, {k}, 1, 32, 1, 32\}};", source)
    packed = mlvm.compile(path, params=params).main(x)
    plain = mlvm.compile(path, params=params, options=CompileOptions(pack_weights=False)).main(x)
    wt = (w.T if linear else w).astype(np.float64)
    bias = params["b"].astype(np.float64) if linear else np.zeros(n)
    want, bound = x.astype(np.float64) @ wt + bias, np.abs(x.astype(np.float64)) @ np.abs(wt) + np.abs(bias)
    if linear:
        want = np.maximum(want, 0)
    for got in (packed, plain):
        assert np.all(np.abs(got - want) <= 1e-5 * bound)


def test_panel_param_archive_shape_error(tmp_path: Path) -> None:
    path = tmp_path / "p.mlir"
    path.write_text(
        'func.func @main() -> tensor<2x8x32xf32> {\n'
        '  %0 = "mlvm.param"() <{name = "w", panel = array<i64: 32, 40>, perm = array<i64: 1, 0>}>'
        ' : () -> tensor<2x8x32xf32>\n'
        '  func.return %0 : tensor<2x8x32xf32>\n}\n')
    with pytest.raises(mlvm.MlvmError) as info:
        mlvm.compile(path, params={"w": np.zeros((8, 40), np.float32)})
    msg = str(info.value).strip()
    assert "\n" not in msg and f"{path}:2:" in msg, msg
    assert "(8, 40)" in msg and "transposed by perm [1, 0] in panels [32, 40]" in msg, msg
    # the archive's [40, 8] read back: a param in panels is the padded, tiled matrix
    w = np.arange(320, dtype=np.float32).reshape(40, 8)
    got = mlvm.compile(path, params={"w": w}).main()
    want = np.zeros((8, 64), np.float32)
    want[:, :40] = w.T
    assert np.array_equal(got, want.reshape(8, 2, 32).transpose(1, 0, 2))


def test_emitted_matmul_reads_the_weight_untransposed(tmp_path: Path) -> None:
    path = tmp_path / "linear.mlir"
    path.write_text(LINEAR.format(m=4, n=6, k=5))
    params = {"w": np.zeros((6, 5), np.float32), "b": np.zeros(6, np.float32)}
    packed, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "a.c", params, str(path))
    plain, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "b.c", params, str(path),
                            CompileOptions(pack_weights=False))
    # mlvm_matmul_t {m, n, k, a_rs, a_cs, b_rs, b_cs, b_panel} of the fused matmul
    assert "{4, 6, 5, 5, 1, 6, 1, 0}" in packed, packed
    assert "{4, 6, 5, 5, 1, 1, 5, 0}" in plain, plain


PERM = """func.func @main() -> tensor<{t}xf32> {{
  %0 = "mlvm.param"() <{{name = "w", perm = array<i64: {perm}>}}> : () -> tensor<{t}xf32>
  func.return %0 : tensor<{t}xf32>
}}
"""


def test_param_perm_is_the_archive_transposed(tmp_path: Path) -> None:
    path = tmp_path / "p.mlir"
    path.write_text(PERM.format(t="5x2x3", perm="2, 0, 1"))
    w = np.random.default_rng(3).standard_normal((2, 3, 5)).astype(np.float32)
    got = mlvm.compile(path, params={"w": w}).main()
    assert np.array_equal(got.view(np.uint32), np.transpose(w, (2, 0, 1)).view(np.uint32))


@pytest.mark.parametrize(
    "perm,archive,words",
    [
        ("0, 0", (2, 3), ["perm [0, 0]", "not a permutation", "tensor<3x2xf32>"]),
        ("1, 0, 2", (2, 3), ["perm [1, 0, 2]", "not a permutation"]),
        ("1, 0", (3, 2), ["'w'", "(3, 2)", "tensor<3x2xf32> transposed by perm [1, 0]"]),
    ],
    ids=["repeated", "wrong-rank", "archive-shape"],
)
def test_param_perm_errors(tmp_path: Path, perm: str, archive: tuple[int, int], words: list[str]) -> None:
    path = tmp_path / "p.mlir"
    path.write_text(PERM.format(t="3x2", perm=perm))
    with pytest.raises(mlvm.MlvmError) as info:
        mlvm.compile(path, params={"w": np.zeros(archive, np.float32)})
    msg = str(info.value).strip()
    assert "\n" not in msg and f"{path}:2:" in msg, msg
    for w in words:
        assert w in msg, msg


CONV = """func.func @main(%x: tensor<{n}x{c}x{h}x{w}xf32>) -> tensor<{n}x{o}x{oh}x{ow}xf32> {{
  %w = "mlvm.param"() <{{name = "w"}}> : () -> tensor<{o}x{c}x{k}x{k}xf32>
  %b = "mlvm.param"() <{{name = "b"}}> : () -> tensor<{o}xf32>
  %0 = "mlvm.conv2d"(%x, %w, %b) <{{strides = array<i64: {s}, {s}>, padding = array<i64: {p}, {p}, {p}, {p}>}}> : (tensor<{n}x{c}x{h}x{w}xf32>, tensor<{o}x{c}x{k}x{k}xf32>, tensor<{o}xf32>) -> tensor<{n}x{o}x{oh}x{ow}xf32>
  %1 = "mlvm.relu"(%0) : (tensor<{n}x{o}x{oh}x{ow}xf32>) -> tensor<{n}x{o}x{oh}x{ow}xf32>
  func.return %1 : tensor<{n}x{o}x{oh}x{ow}xf32>
}}
"""


def _conv_f64(x: np.ndarray, w: np.ndarray, s: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """The convolution and the sum of its terms' magnitudes, in float64."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    k = w.shape[2]
    oh, ow = (xp.shape[2] - k) // s + 1, (xp.shape[3] - k) // s + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::s, ::s]
    win = win[:, :, :oh, :ow]
    out = np.einsum("nchwij,ocij->nohw", win, w.astype(np.float64))
    bound = np.einsum("nchwij,ocij->nohw", np.abs(win), np.abs(w.astype(np.float64)))
    return out, bound


# (n, c, h, w, o, k, stride, pad, workspaces): small maps whose weights the
# pass stores [I][H][W][O] (a ragged sliver of channels, a 1x1 without a
# workspace, a stride), each with its bias and fused relu
@pytest.mark.parametrize("n,c,h,w,o,k,s,p,ws", [
    (1, 64, 8, 8, 64, 3, 1, 1, True),
    (2, 16, 3, 4, 37, 3, 2, 1, True),
    (3, 40, 3, 3, 96, 1, 1, 0, False),
    (1, 1, 13, 10, 32, 4, 2, 1, True),
])
def test_small_map_conv_same_results_packed_or_not(tmp_path: Path, n: int, c: int, h: int,
                                                   w: int, o: int, k: int, s: int, p: int,
                                                   ws: bool) -> None:
    g = np.random.default_rng(n + c + o)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    path = tmp_path / "conv.mlir"
    path.write_text(CONV.format(n=n, c=c, h=h, w=w, o=o, k=k, s=s, p=p, oh=oh, ow=ow))
    params = {"w": g.standard_normal((o, c, k, k)).astype(np.float32),
              "b": g.standard_normal(o).astype(np.float32)}
    x = g.standard_normal((n, c, h, w)).astype(np.float32)
    opts = CompileOptions(workspaces=ws, winograd=False)
    packed_c, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "a.c", params, str(path), opts)
    # the IHWO entry of the convolution's kind (with its workspace, or 1x1)
    assert ("mlvm_conv2d_ihwo_ws_f32(" if ws else "mlvm_conv2d_ihwo_pointwise_f32(") in packed_c
    # in panels of 32 channels (the descriptor's w_panel) where o is a multiple of 32 past one panel
    panels = re.search(r"mlvm_conv2d_t \w+ = \{(?:\d+, ){16}32\};", packed_c) is not None
    assert panels == (o % 32 == 0 and o > 32), packed_c
    packed = mlvm.compile(path, params=params, options=opts).main(x)
    plain = mlvm.compile(path, params=params,
                         options=CompileOptions(workspaces=ws, pack_weights=False)).main(x)
    conv, bound = _conv_f64(x, params["w"], s, p)
    want = np.maximum(conv + params["b"].reshape(1, -1, 1, 1), 0)
    for got in (packed, plain):
        assert np.all(np.abs(got - want) <= 1e-5 * (bound + np.abs(params["b"]).reshape(1, -1, 1, 1)))


def test_conv_without_workspace_keeps_oihw(tmp_path: Path) -> None:
    """Without a workspace only a 1x1 stride-1 convolution reads x in place:
    others keep the NCHW kernel (and OIHW weights)."""
    path = tmp_path / "conv.mlir"
    path.write_text(CONV.format(n=1, c=64, h=8, w=8, o=64, k=3, s=1, p=1, oh=8, ow=8))
    params = {"w": np.zeros((64, 64, 3, 3), np.float32), "b": np.zeros(64, np.float32)}
    with_ws, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "a.c", params, str(path),
                              CompileOptions(winograd=False))
    without, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "b.c", params, str(path),
                              CompileOptions(workspaces=False))
    assert "mlvm_conv2d_ihwo_ws_f32(" in with_ws
    assert "mlvm_conv2d_ihwo" not in without and "wino" not in without


RESIDUAL = """func.func @main(%x: tensor<{n}x{c}x{h}x{w}xf32>, %r: tensor<{n}x{o}x{oh}x{ow}xf32>) -> tensor<{n}x{o}x{oh}x{ow}xf32> {{
  %w = "mlvm.param"() <{{name = "w"}}> : () -> tensor<{o}x{cg}x3x3xf32>
  %b = "mlvm.param"() <{{name = "b"}}> : () -> tensor<{o}xf32>
  %0 = "mlvm.conv2d"(%x, %w, %b) <{{padding = array<i64: {pads}>, groups = {g} : i64}}> : (tensor<{n}x{c}x{h}x{w}xf32>, tensor<{o}x{cg}x3x3xf32>, tensor<{o}xf32>) -> tensor<{n}x{o}x{oh}x{ow}xf32>
  %1 = "mlvm.add"(%0, %r) : (tensor<{n}x{o}x{oh}x{ow}xf32>, tensor<{n}x{o}x{oh}x{ow}xf32>) -> tensor<{n}x{o}x{oh}x{ow}xf32>
  %2 = "mlvm.relu"(%1) : (tensor<{n}x{o}x{oh}x{ow}xf32>) -> tensor<{n}x{o}x{oh}x{ow}xf32>
  func.return %2 : tensor<{n}x{o}x{oh}x{ow}xf32>
}}
"""


def _tile_max(bound: np.ndarray, m: int) -> np.ndarray:
    """Each output's bound as the largest of its m x m tile's (F(4x4, 3x3)'s
    error bound, docs/ops.md)."""
    n, o, oh, ow = bound.shape
    th, tw = -(-oh // m), -(-ow // m)
    padded = np.zeros((n, o, th * m, tw * m))
    padded[:, :, :oh, :ow] = bound
    tiles = padded.reshape(n, o, th, m, tw, m).max(axis=(3, 5))
    return np.repeat(np.repeat(tiles, m, axis=2), m, axis=3)[:, :, :oh, :ow]


# (n, c, h, w, o, padding, groups, kernel): 3x3 stride-1 convolutions the
# pass gives Winograd's transformed weights (ResNet-8's stages, an odd map
# with asymmetric padding, "valid", several images, two groups; F(4x4, 3x3)
# from 24x24: 32x32, odd maps of 27x30), with bias, a residual add and
# relu fused after
@pytest.mark.parametrize("n,c,h,w,o,pads,groups,entry", [
    (1, 16, 32, 32, 16, (1, 1, 1, 1), 1, "wino4"),
    (2, 24, 27, 30, 40, (1, 0, 2, 1), 1, "wino4"),
    (3, 32, 16, 16, 32, (1, 1, 1, 1), 1, "wino"),
    (2, 64, 8, 8, 64, (1, 1, 1, 1), 1, "wino"),
    (1, 24, 17, 23, 40, (0, 1, 2, 0), 1, "wino"),
    (2, 48, 20, 9, 33, (0, 0, 0, 0), 1, "wino"),
    (1, 64, 12, 12, 96, (1, 1, 1, 1), 2, "wino"),
    (1, 300, 14, 14, 50, (1, 1, 1, 1), 1, "wino"),
])
def test_winograd_conv_same_results_packed_or_not(tmp_path: Path, n: int, c: int, h: int, w: int,
                                                  o: int, pads: tuple[int, int, int, int],
                                                  groups: int, entry: str) -> None:
    g = np.random.default_rng(n + c + o + h)
    oh, ow = h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2
    cg, og = c // groups, o // groups
    path = tmp_path / "conv.mlir"
    path.write_text(RESIDUAL.format(n=n, c=c, h=h, w=w, o=o, oh=oh, ow=ow, cg=cg, g=groups,
                                    pads=", ".join(map(str, pads))))
    params = {"w": g.standard_normal((o, cg, 3, 3)).astype(np.float32),
              "b": g.standard_normal(o).astype(np.float32)}
    x = g.standard_normal((n, c, h, w)).astype(np.float32)
    r = g.standard_normal((n, o, oh, ow)).astype(np.float32)
    source, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "a.c", params, str(path))
    assert f"mlvm_conv2d_{entry}_f32(" in source
    packed = mlvm.compile(path, params=params).main(x, r)
    direct = mlvm.compile(path, params=params, options=CompileOptions(winograd=False)).main(x, r)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    w64 = params["w"].astype(np.float64)
    conv = np.concatenate([np.einsum("nchwij,ocij->nohw", win[:, k * cg:(k + 1) * cg],
                                     w64[k * og:(k + 1) * og]) for k in range(groups)], axis=1)
    bound = np.concatenate([np.einsum("nchwij,ocij->nohw", np.abs(win[:, k * cg:(k + 1) * cg]),
                                      np.abs(w64[k * og:(k + 1) * og])) for k in range(groups)], axis=1)
    b = params["b"].reshape(1, -1, 1, 1)
    want = np.maximum(conv + b + r, 0)
    if entry == "wino4":
        bound = _tile_max(bound, 4)
    for got in (packed, direct):
        assert np.all(np.abs(got - want) <= 1e-5 * (bound + np.abs(b) + np.abs(r)))


WINO_STORED = """func.func @main(%x: tensor<{n}x{c}x{h}x{h}xf32>) -> tensor<{n}x{o}x{h}x{h}xf32> {{
  %w = "mlvm.param"() <{{name = "w", wino = array<i64: {o}, {c}>}}> : () -> tensor<{planes}x{stored}xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{{padding = array<i64: 1, 1, 1, 1>, w_layout = "{layout}"}}> : (tensor<{n}x{c}x{h}x{h}xf32>, tensor<{planes}x{stored}xf32>) -> tensor<{n}x{o}x{h}x{h}xf32>
  func.return %0 : tensor<{n}x{o}x{h}x{h}xf32>
}}
"""


# (n, c, h, o, layout): Winograd's weights written by hand both ways, each
# plane [O, C] and in its GEMM's panels [ceil(O / 24), C, 24] (one panel,
# ragged ones, two contraction slices; F(2x2) and F(4x4)): the compiler
# stores the archive's weights in either layout and the kernel reads each
# to the same bits (the descriptor's w_panel set for the second only)
@pytest.mark.parametrize("n,c,h,o,layout", [
    (1, 8, 6, 24, "wino23"), (2, 300, 9, 50, "wino23"), (1, 40, 13, 73, "wino43"),
])
def test_winograd_panels_same_bits_as_plain(tmp_path: Path, n: int, c: int, h: int, o: int,
                                            layout: str) -> None:
    g = np.random.default_rng(c + o)
    planes = 16 if layout == "wino23" else 36
    params = {"w": g.standard_normal((o, c, 3, 3)).astype(np.float32)}
    x = g.standard_normal((n, c, h, h)).astype(np.float32)
    outs, sources = [], []
    for stored in (f"{o}x{c}", f"{-(-o // 24)}x{c}x24"):
        path = tmp_path / f"w{len(outs)}.mlir"
        path.write_text(WINO_STORED.format(n=n, c=c, h=h, o=o, planes=planes, stored=stored, layout=layout))
        opts = CompileOptions(pack_weights=False)
        sources.append(compile_to_c(*parse_file(path)[:1], tmp_path / f"w{len(outs)}.c", params, str(path),
                                    opts)[0])
        outs.append(mlvm.compile(path, params=params, options=opts).main(x))
    descriptor = r"mlvm_conv2d_t \w+ = \{(?:\d+, ){16}%d\};"
    assert re.search(descriptor % 0, sources[0]) and re.search(descriptor % 24, sources[1])
    assert outs[0].tobytes() == outs[1].tobytes()
    # the numpy reference reads the panels back (from_apanels) to the same weights
    refs = [reference.run(parse_file(tmp_path / f"w{i}.mlir")[0], "main", [x], params)[0] for i in (0, 1)]
    np.testing.assert_array_equal(refs[0], refs[1])
    np.testing.assert_allclose(refs[1], outs[1], rtol=1e-4, atol=1e-4)


QCONV = """func.func @main(%x: tensor<{n}x{c}x{h}x{w}xui8>) -> (tensor<{n}x{o}x{oh}x{ow}xi32>, tensor<{n}x{o}x{oh}x{ow}xui8>) {{
  %w = "mlvm.param"() <{{name = "w"}}> : () -> tensor<{o}x{cg}x{k}x{k}xi8>
  %zx = "mlvm.param"() <{{name = "zx"}}> : () -> tensor<ui8>
  %zw = "mlvm.param"() <{{name = "zw"}}> : () -> tensor<{o}xi8>
  %m = "mlvm.param"() <{{name = "m"}}> : () -> tensor<{o}xf32>
  %zy = "mlvm.param"() <{{name = "zy"}}> : () -> tensor<ui8>
  %b = "mlvm.param"() <{{name = "b"}}> : () -> tensor<{o}xi32>
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) <{{strides = array<i64: {s}, {s}>, padding = array<i64: {p}, {p}, {p}, {p}>, groups = {g} : i64}}> : (tensor<{n}x{c}x{h}x{w}xui8>, tensor<{o}x{cg}x{k}x{k}xi8>, tensor<ui8>, tensor<{o}xi8>) -> tensor<{n}x{o}x{oh}x{ow}xi32>
  %1 = "mlvm.qconv2d_requant"(%x, %w, %zx, %zw, %m, %zy, %b) <{{strides = array<i64: {s}, {s}>, padding = array<i64: {p}, {p}, {p}, {p}>, groups = {g} : i64, relu = 1 : i64}}> : (tensor<{n}x{c}x{h}x{w}xui8>, tensor<{o}x{cg}x{k}x{k}xi8>, tensor<ui8>, tensor<{o}xi8>, tensor<{o}xf32>, tensor<ui8>, tensor<{o}xi32>) -> tensor<{n}x{o}x{oh}x{ow}xui8>
  func.return %0, %1 : tensor<{n}x{o}x{oh}x{ow}xi32>, tensor<{n}x{o}x{oh}x{ow}xui8>
}}
"""


# (n, c, h, w, o, k, stride, pad, groups): int8 convolutions whose i8
# weights the pass stores in lanes: input channels in whole quads and not,
# one and two input channels (lanes of taps), groups, 1x1, a stride, odd
# sizes; every result the same as from OIHW weights and as the reference
@pytest.mark.parametrize("n,c,h,w,o,k,s,p,g", [
    (1, 16, 9, 9, 16, 3, 1, 1, 1), (2, 5, 7, 11, 13, 3, 2, 1, 1), (1, 1, 13, 10, 8, 4, 2, 1, 1),
    (1, 2, 6, 5, 7, 3, 1, 0, 1), (1, 12, 5, 7, 10, 1, 1, 0, 2), (3, 3, 5, 5, 4, 5, 1, 2, 1),
])
def test_int8_conv_weights_in_lanes_same_results(tmp_path: Path, n: int, c: int, h: int, w: int,
                                                 o: int, k: int, s: int, p: int, g: int) -> None:
    from mlvm import reference

    rng = np.random.default_rng(n + c + o + k)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    path = tmp_path / "qconv.mlir"
    path.write_text(QCONV.format(n=n, c=c, h=h, w=w, o=o, cg=c // g, k=k, s=s, p=p, g=g, oh=oh, ow=ow))
    params = {"w": rng.integers(-128, 128, (o, c // g, k, k)).astype(np.int8),
              "zx": np.array(rng.integers(0, 256), np.uint8),
              "zw": rng.integers(-3, 4, o).astype(np.int8),
              "m": (rng.random(o) * 1e-3).astype(np.float32),
              "zy": np.array(rng.integers(0, 256), np.uint8),
              "b": rng.integers(-5000, 5000, o).astype(np.int32)}
    x = rng.integers(0, 256, (n, c, h, w)).astype(np.uint8)
    packed_c, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "a.c", params, str(path))
    # the descriptor's last flag (w_lanes) is set on both convolutions: one
    # descriptor without weight sums for cores without vectors (both share
    # it), one each with its own sums for the others (and w_pairs 0: full
    # range weights)
    assert len(re.findall(r"mlvm_qconv2d_t \w+ = \{[^}]*, 1, NULL, 0\};", packed_c)) == 1, packed_c
    assert len(re.findall(r"mlvm_qconv2d_t \w+ = \{[^}]*, 1, \w+__s\d+, 0\};", packed_c)) >= 1, packed_c
    packed = mlvm.compile(path, params=params).main(x)
    plain = mlvm.compile(path, params=params, options=CompileOptions(pack_weights=False)).main(x)
    want = reference.run(parse_file(path)[0], "main", [x], params)
    for got in (packed, plain):
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def test_int8_conv_without_workspace_keeps_oihw(tmp_path: Path) -> None:
    """Without workspaces mlvm.qconv2d runs the plain kernel, which reads
    OIHW weights; a weight it shares with a requantizing convolution (which
    always has a workspace) stays OIHW for both."""
    from mlvm import reference

    path = tmp_path / "qconv.mlir"
    path.write_text(QCONV.format(n=1, c=8, h=6, w=6, o=8, cg=8, k=3, s=1, p=1, g=1, oh=6, ow=6))
    rng = np.random.default_rng(2)
    params = {"w": rng.integers(-128, 128, (8, 8, 3, 3)).astype(np.int8),
              "zx": np.array(3, np.uint8), "zw": np.zeros(8, np.int8),
              "m": np.full(8, 1e-3, np.float32), "zy": np.array(9, np.uint8),
              "b": np.zeros(8, np.int32)}
    opts = CompileOptions(workspaces=False)
    source, _ = compile_to_c(*parse_file(path)[:1], tmp_path / "a.c", params, str(path), opts)
    assert "mlvm_qconv2d_8(" in source and not re.search(r"mlvm_qconv2d_t \w+ = \{[^}]*, 1, \w+, [01]\};", source)
    x = rng.integers(0, 256, (1, 8, 6, 6)).astype(np.uint8)
    got = mlvm.compile(path, params=params, options=opts).main(x)
    for a, b in zip(got, reference.run(parse_file(path)[0], "main", [x], params)):
        assert np.array_equal(a, b)


def test_winograd_layout_written_by_hand_gets_its_workspace(tmp_path: Path) -> None:
    """A module that states w_layout = "wino23" itself (its weights an
    input, [16, O, C]) runs under --no-workspaces too: the kernel has no
    path without its workspace, so the memory plan gives it one anyway."""
    path = tmp_path / "wino.mlir"
    path.write_text(
        'func.func @main(%x: tensor<2x8x9x9xf32>, %u: tensor<16x8x8xf32>) -> tensor<2x8x9x9xf32> {\n'
        '  %0 = "mlvm.conv2d"(%x, %u) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : '
        "(tensor<2x8x9x9xf32>, tensor<16x8x8xf32>) -> tensor<2x8x9x9xf32>\n"
        "  func.return %0 : tensor<2x8x9x9xf32>\n}\n")
    g = np.random.default_rng(5)
    x = g.standard_normal((2, 8, 9, 9)).astype(np.float32)
    w = g.standard_normal((8, 8, 3, 3)).astype(np.float32)
    u = to_wino(w, 2)
    want, bound = _conv_f64(x, w, 1, 1)
    for ws in (True, False):
        got = mlvm.compile(path, options=CompileOptions(workspaces=ws)).main(x, u)
        assert np.all(np.abs(got - want) <= 1e-5 * bound + 1e-6), ws
