"""External parameters (--external-params): the weights in a parameter file
apart from the code, bound at instance creation and checked there."""

from __future__ import annotations

import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm import reference
from mlvm.cli import aot_main
from mlvm.codegen.params_file import ALIGN, ENTRY_BYTES, HEADER_BYTES, MAGIC, VERSION
from mlvm.pipeline import parse_file

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "samples" / "mlp" / "mlp.mlir"
sys.path.insert(0, str(MLP.parent))
from gen_params import make_params  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
import c_build  # noqa: E402


@dataclass(frozen=True)
class Built:
    so: Path
    c: Path
    files: dict[int, Path]  # seed -> parameter file
    archives: dict[int, Path]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    out = tmp_path_factory.mktemp("external")
    files, archives = {}, {}
    for seed in (0, 5):
        archives[seed] = out / f"mlp{seed}.npz"
        np.savez(archives[seed], **make_params(seed))
        files[seed] = out / f"mlp{seed}.mlvmp"
    so = out / "mlp.so"
    assert aot_main(["build", str(MLP), "-o", str(so), "--keep-c", "-q", "--params",
                     str(archives[0]), "--external-params", str(files[0])]) == 0
    # The other weights: compiling again writes another file (and the same C).
    assert aot_main(["compile", str(MLP), "-o", str(out / "again.c"), "-q", "--params",
                     str(archives[5]), "--external-params", str(files[5])]) == 0
    return Built(so, so.with_suffix(".c"), files, archives)


def _want(archive: Path, x: np.ndarray) -> np.ndarray:
    module, _ = parse_file(MLP)
    with np.load(archive) as npz:
        return reference.run(module, "main", [x], {k: npz[k] for k in npz.files})[0]


def test_one_module_runs_with_any_weights_of_its_shapes(built: Built) -> None:
    x = np.random.default_rng(1).standard_normal((1, 784)).astype(np.float32)
    outs = []
    for seed, path in built.files.items():
        m = mlvm.load(built.so, params=path)
        got = m.main(x)
        np.testing.assert_allclose(got, _want(built.archives[seed], x), rtol=1e-4, atol=1e-5)
        outs.append(got)
    assert not np.array_equal(outs[0], outs[1])
    again = (built.c.parent / "again.c").read_text().replace("again", "mlp").replace("AGAIN", "MLP")
    assert again == built.c.read_text()  # the C does not depend on the weights


def test_code_does_not_hold_the_weights(built: Built) -> None:
    params = make_params(0)
    weights = sum(a.nbytes for a in params.values())
    assert built.files[0].stat().st_size >= weights
    so = built.so.read_bytes()
    assert len(so) < weights  # the runtime's code, not the weights
    for name, a in params.items():  # no run of any weight's bytes in the library
        raw = np.ascontiguousarray(a).tobytes()
        mid = len(raw) // 2
        assert raw[mid : mid + 64] not in so, name
    assert len(built.c.read_text()) < 64_000  # no weight in the C text either


def test_file_layout(built: Built) -> None:
    raw = built.files[0].read_bytes()
    magic, version, count, table, data, total, _crc = struct.unpack_from("<8sIIQQQI", raw)
    assert (magic, version, table, total) == (MAGIC, VERSION, HEADER_BYTES, len(raw))
    assert count == 6 and data % ALIGN == 0
    for k in range(count):
        entry = struct.unpack_from("<QIIII8qQQ", raw, HEADER_BYTES + k * ENTRY_BYTES)
        name = raw[entry[0] : entry[0] + entry[1]].decode()
        dtype, rank, dims, offset, nbytes = entry[2], entry[3], entry[5:13], entry[13], entry[14]
        assert dtype == 1 and offset % ALIGN == 0 and offset >= data
        arr = np.frombuffer(raw, "<f4", count=nbytes // 4, offset=offset).reshape(dims[:rank])
        base = name.split("@")[0]
        want = make_params(0)[base]
        if "@perm=" in name:
            want = np.transpose(want, [int(p) for p in name.split("=")[1].split(",")])
        assert np.array_equal(arr, want), name


def _damaged(raw: bytes, tmp: Path, how: str) -> Path:
    b = bytearray(raw)
    if how == "checksum":
        b[-1] ^= 1
    elif how == "version":
        b[8] = 9
    elif how == "magic":
        b[0:8] = b"NOTMLVMP"
    elif how == "truncated":
        b = b[: len(b) // 2]
    elif how == "extended":
        b += bytes(64)
    elif how == "empty":
        b = bytearray()
    elif how == "table":  # an entry pointing past the end, checksum recomputed
        import zlib

        off = HEADER_BYTES + 88
        struct.pack_into("<Q", b, off, len(b))
        struct.pack_into("<I", b, 40, zlib.crc32(bytes(b[HEADER_BYTES:])))
    path = tmp / f"{how}.mlvmp"
    path.write_bytes(bytes(b))
    return path


@pytest.mark.parametrize(
    ("how", "match"),
    [
        ("checksum", r"damaged or not a parameter file \(bad checksum\)"),
        ("version", r"\(bad version\)"),
        ("magic", r"\(bad magic\)"),
        ("truncated", r"\(bad size\)"),
        ("extended", r"\(bad size\)"),
        ("empty", r"\(bad size\)"),
        ("table", r"\(bad table\)"),
    ],
)
def test_damaged_files_are_refused(built: Built, tmp_path: Path, how: str, match: str) -> None:
    path = _damaged(built.files[0].read_bytes(), tmp_path, how)
    with pytest.raises(ValueError, match=match) as info:
        mlvm.load(built.so, params=path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_weights_of_another_model_are_refused(built: Built, tmp_path: Path) -> None:
    src = tmp_path / "other.mlir"
    src.write_text(
        'func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
        '  %w = "mlvm.param"() <{name = "other"}> : () -> tensor<4xf32>\n'
        '  %y = "mlvm.add"(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n'
        "  func.return %y : tensor<4xf32>\n}\n"
    )
    np.savez(tmp_path / "o.npz", other=np.ones(4, np.float32))
    other = tmp_path / "other.mlvmp"
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "o.c"), "-q", "--params",
                     str(tmp_path / "o.npz"), "--external-params", str(other)]) == 0
    with pytest.raises(ValueError, match=r"has no weight 'w1' the module needs"):
        mlvm.load(built.so, params=other)
    with pytest.raises(ValueError, match=r"pass params='weights.mlvmp'"):
        mlvm.load(built.so)
    with pytest.raises(ValueError, match=r"no such file|cannot read"):
        mlvm.load(built.so, params=tmp_path / "missing.mlvmp")


def test_shape_mismatch_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    text = (
        'func.func @main(%x: tensor<Nxf32>) -> tensor<Nxf32> {\n'
        '  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<Nxf32>\n'
        '  %y = "mlvm.add"(%x, %w) : (tensor<Nxf32>, tensor<Nxf32>) -> tensor<Nxf32>\n'
        "  func.return %y : tensor<Nxf32>\n}\n"
    )
    for n in (4, 5):
        src.write_text(text.replace("N", str(n)))
        np.savez(tmp_path / "w.npz", w=np.ones(n, np.float32))
        args = [str(src), "-q", "--params", str(tmp_path / "w.npz"),
                "--external-params", str(tmp_path / f"w{n}.mlvmp")]
        if n == 4:
            assert aot_main(["build", *args, "-o", str(tmp_path / "m.so")]) == 0
        else:
            assert aot_main(["compile", *args, "-o", str(tmp_path / "m5.c")]) == 0
    m = mlvm.load(tmp_path / "m.so", params=tmp_path / "w4.mlvmp")
    assert np.array_equal(m.main(np.zeros(4, np.float32)), np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"weight 'w' has another dtype or shape"):
        mlvm.load(tmp_path / "m.so", params=tmp_path / "w5.mlvmp")


def test_params_for_a_module_without_them_are_refused(tmp_path: Path) -> None:
    np.savez(tmp_path / "p.npz", **make_params(0))
    so = tmp_path / "plain.so"
    assert aot_main(["build", str(MLP), "-o", str(so), "-q", "--params", str(tmp_path / "p.npz")]) == 0
    with pytest.raises(ValueError, match="takes no parameter file"):
        mlvm.load(so, params=tmp_path / "p.npz")


def test_suffix_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "p.npz", **make_params(0))
    assert aot_main(["compile", str(MLP), "-o", str(tmp_path / "m.c"), "--params",
                     str(tmp_path / "p.npz"), "--external-params", str(tmp_path / "w.bin")]) == 1
    assert "a parameter file must end in .mlvmp" in capsys.readouterr().err


HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mlp.h"

/* Each damaged file in a buffer of exactly its size: ASan reports any read
 * outside it. argv: the good file, then damaged ones. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long size;
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = aligned_alloc(64, ((size_t)size + 63) / 64 * 64 + 64);
    *n = fread(buf, 1, (size_t)size, f);
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; ++i) {
        mlvm_instance_t inst;
        const void *slots[MLP_NUM_PARAMS];
        const char *what = "", *missing = NULL;
        size_t n = 0;
        unsigned char *buf = slurp(argv[i], &n);
        unsigned char *exact;
        mlvm_status_t st;
        if (buf == NULL) return 2;
        /* The file at the very end of an allocation: nothing after it. */
        exact = malloc(n > 0 ? n : 1);
        memcpy(exact, buf, n);
        mlvm_instance_init(&inst, &mlp_module, NULL, NULL, 0, NULL, NULL, 0, &missing);
        st = mlvm_instance_bind_params(&inst, n % 64 == 0 && ((size_t)exact % 64) == 0 ? exact : buf,
                                       n, slots, &what);
        printf("%s %d %s\n", argv[i], (int)st, st == MLVM_OK ? "ok" : what);
        free(exact);
        free(buf);
    }
    return 0;
}
"""


def test_c_binding_reads_nothing_out_of_bounds(built: Built, tmp_path: Path) -> None:
    harness = tmp_path / "bind.c"
    harness.write_text(HARNESS)
    exe = c_build.build([harness, built.c], c_build.SANITIZE, tmp_path / "bind", [built.c.parent],
                        own=["-std=c11"])
    raw = built.files[0].read_bytes()
    hows = ["checksum", "version", "magic", "truncated", "extended", "empty", "table"]
    paths = [built.files[0], *(_damaged(raw, tmp_path, h) for h in hows)]
    run = subprocess.run([str(exe), *map(str, paths)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].endswith(" 0 ok")
    for how, line in zip(hows, lines[1:], strict=True):
        want = "size" if how in ("truncated", "extended", "empty") else how
        assert line.endswith(f" -1 {want}"), line


def test_safetensors_are_a_parameter_source(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    params = make_params(3)
    save_file(params, str(tmp_path / "w.safetensors"))
    m = mlvm.compile(MLP, params=tmp_path / "w.safetensors")
    x = np.ones((1, 784), np.float32)
    np.savez(tmp_path / "w.npz", **params)
    np.testing.assert_allclose(m.main(x), _want(tmp_path / "w.npz", x), rtol=1e-4, atol=1e-5)
    (tmp_path / "bad.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(mlvm.MlvmError, match=r"bad.safetensors: error: not a readable .safetensors"):
        mlvm.compile(MLP, params=tmp_path / "bad.safetensors")


# (input channels, output channels, map, the weight's key in the file): a
# small-map convolution's weights [I][H][W][O] (48 channels), in panels of
# 32 channels (64); a 3x3 one's transformed for Winograd's F(2x2, 3x3)
# ([16, O, C]), with 50 outputs each plane in its GEMM's panels
@pytest.mark.parametrize("c,o,hw,key", [(32, 48, 6, b"w@perm=1,2,3,0"),
                                        (32, 64, 6, b"w@perm=1,2,3,0@panel=32,64"),
                                        (24, 32, 16, b"w@wino2=32,24"),
                                        (24, 50, 16, b"w@wino2=50,24@apanel=24")],
                         ids=["ihwo", "ihwo-panels", "wino", "wino-panels"])
def test_conv_weights_stored_for_their_kernel(tmp_path: Path, c: int, o: int, hw: int,
                                              key: bytes) -> None:
    """A convolution's weights go into the file in the layout its kernel
    reads, and the module run with that file equals the reference on the
    archive's OIHW weights."""
    tx, tw, to = (f"tensor<1x{c}x{hw}x{hw}xf32>", f"tensor<{o}x{c}x3x3xf32>",
                  f"tensor<1x{o}x{hw}x{hw}xf32>")
    src = tmp_path / "conv.mlir"
    src.write_text(
        f"func.func @main(%x: {tx}) -> {to} {{\n"
        f'  %w = "mlvm.param"() <{{name = "w"}}> : () -> {tw}\n'
        f'  %0 = "mlvm.conv2d"(%x, %w) <{{padding = array<i64: 1, 1, 1, 1>}}> : ({tx}, {tw}) -> {to}\n'
        f"  func.return %0 : {to}\n}}\n"
    )
    g = np.random.default_rng(7)
    w = g.standard_normal((o, c, 3, 3)).astype(np.float32)
    np.savez(tmp_path / "w.npz", w=w)
    so, pfile = tmp_path / "conv.so", tmp_path / "conv.mlvmp"
    assert aot_main(["build", str(src), "-o", str(so), "-q", "--params", str(tmp_path / "w.npz"),
                     "--external-params", str(pfile)]) == 0
    assert key in pfile.read_bytes()
    x = g.standard_normal((1, c, hw, hw)).astype(np.float32)
    module, _ = parse_file(src)
    want = reference.run(module, "main", [x], {"w": w})[0]
    got = mlvm.load(so, params=pfile).main(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_matmul_weights_in_panels_in_the_file(tmp_path: Path) -> None:
    """A large PyTorch-layout weight goes into the file transposed and in
    panels (`w@perm=1,0@panel=32,520`, padded to 544 columns), and the module
    run with that file equals the reference on the archive's [out, in]."""
    src = tmp_path / "linear.mlir"
    src.write_text(
        'func.func @main(%x: tensor<3x600xf32>) -> tensor<3x520xf32> {\n'
        '  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<520x600xf32>\n'
        '  %0 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : '
        "(tensor<3x600xf32>, tensor<520x600xf32>) -> tensor<3x520xf32>\n"
        "  func.return %0 : tensor<3x520xf32>\n}\n"
    )
    g = np.random.default_rng(8)
    w = g.standard_normal((520, 600)).astype(np.float32)
    np.savez(tmp_path / "w.npz", w=w)
    so, pfile = tmp_path / "linear.so", tmp_path / "linear.mlvmp"
    assert aot_main(["build", str(src), "-o", str(so), "-q", "--params", str(tmp_path / "w.npz"),
                     "--external-params", str(pfile)]) == 0
    assert b"w@perm=1,0@panel=32,520" in pfile.read_bytes()
    assert pfile.stat().st_size >= 17 * 600 * 32 * 4
    x = g.standard_normal((3, 600)).astype(np.float32)
    got = mlvm.load(so, params=pfile).main(x)
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-5, atol=1e-4)


def test_int8_weights_in_lanes_in_the_file(tmp_path: Path) -> None:
    """Weights of every byte size go into the file (an i8 convolution weight
    in its kernel's lanes, `w@lanes=5,3,3`; a u8 zero point, an i32 bias, an
    f32 multiplier), and the module run with that file equals the
    reference on the archive's arrays."""
    src = tmp_path / "qconv.mlir"
    src.write_text(
        'func.func @main(%x: tensor<1x5x7x7xui8>) -> tensor<1x8x7x7xui8> {\n'
        '  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<8x5x3x3xi8>\n'
        '  %zx = "mlvm.param"() <{name = "zx"}> : () -> tensor<ui8>\n'
        '  %zw = "mlvm.param"() <{name = "zw"}> : () -> tensor<i8>\n'
        '  %m = "mlvm.param"() <{name = "m"}> : () -> tensor<8xf32>\n'
        '  %zy = "mlvm.param"() <{name = "zy"}> : () -> tensor<ui8>\n'
        '  %b = "mlvm.param"() <{name = "b"}> : () -> tensor<8xi32>\n'
        '  %0 = "mlvm.qconv2d_requant"(%x, %w, %zx, %zw, %m, %zy, %b) <{padding = array<i64: 1, 1, 1, 1>}>'
        " : (tensor<1x5x7x7xui8>, tensor<8x5x3x3xi8>, tensor<ui8>, tensor<i8>, tensor<8xf32>, tensor<ui8>,"
        " tensor<8xi32>) -> tensor<1x8x7x7xui8>\n"
        "  func.return %0 : tensor<1x8x7x7xui8>\n}\n"
    )
    g = np.random.default_rng(9)
    params = {"w": g.integers(-128, 128, (8, 5, 3, 3)).astype(np.int8), "zx": np.array(7, np.uint8),
              "zw": np.array(0, np.int8), "m": (g.random(8) * 1e-3).astype(np.float32),
              "zy": np.array(11, np.uint8), "b": g.integers(-3000, 3000, 8).astype(np.int32)}
    np.savez(tmp_path / "p.npz", **params)
    so, pfile = tmp_path / "qconv.so", tmp_path / "qconv.mlvmp"
    assert aot_main(["build", str(src), "-o", str(so), "-q", "--params", str(tmp_path / "p.npz"),
                     "--external-params", str(pfile)]) == 0
    assert b"w@lanes=5,3,3" in pfile.read_bytes()
    x = g.integers(0, 256, (1, 5, 7, 7)).astype(np.uint8)
    module, _ = parse_file(src)
    want = reference.run(module, "main", [x], params)[0]
    got = mlvm.load(so, params=pfile).main(x)
    assert got.dtype == np.uint8 and np.array_equal(got, want)


def test_linear_weight_viewed_as_a_convolution_in_the_file(tmp_path: Path) -> None:
    """A [K, N] archive array read as an [N, K, 1, 1] convolution weight
    (`view` and `perm`, as mlvm-fuse-qdq writes a Linear layer) is stored in
    the kernel's lanes under a key that names the view, and the module run
    with that file equals the reference on the archive's array."""
    src = tmp_path / "linear.mlir"
    src.write_text(
        'func.func @main(%x: tensor<1x40x1x1xui8>) -> tensor<1x24x1x1xui8> {\n'
        '  %w = "mlvm.param"() <{name = "w", view = array<i64: 40, 24>, perm = array<i64: 1, 0, 2, 3>}>'
        " : () -> tensor<24x40x1x1xi8>\n"
        '  %zx = "mlvm.constant"() <{value = dense<9> : tensor<ui8>}> : () -> tensor<ui8>\n'
        '  %zw = "mlvm.constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>\n'
        '  %m = "mlvm.constant"() <{value = dense<0.002> : tensor<f32>}> : () -> tensor<f32>\n'
        '  %zy = "mlvm.constant"() <{value = dense<5> : tensor<ui8>}> : () -> tensor<ui8>\n'
        '  %0 = "mlvm.qconv2d_requant"(%x, %w, %zx, %zw, %m, %zy)'
        " : (tensor<1x40x1x1xui8>, tensor<24x40x1x1xi8>, tensor<ui8>, tensor<i8>, tensor<f32>, tensor<ui8>)"
        " -> tensor<1x24x1x1xui8>\n"
        "  func.return %0 : tensor<1x24x1x1xui8>\n}\n"
    )
    g = np.random.default_rng(10)
    params = {"w": g.integers(-128, 128, (40, 24)).astype(np.int8)}
    np.savez(tmp_path / "p.npz", **params)
    so, pfile = tmp_path / "linear.so", tmp_path / "linear.mlvmp"
    assert aot_main(["build", str(src), "-o", str(so), "-q", "--params", str(tmp_path / "p.npz"),
                     "--external-params", str(pfile)]) == 0
    assert b"w@view=40,24@perm=1,0,2,3@lanes=40,1,1" in pfile.read_bytes()
    x = g.integers(0, 256, (1, 40, 1, 1)).astype(np.uint8)
    module, _ = parse_file(src)
    want = reference.run(module, "main", [x], params)[0]
    dot = (x.reshape(40).astype(np.int64) - 9) @ params["w"].astype(np.int64)
    assert np.array_equal(want.reshape(24), np.clip(np.rint(dot.astype(np.float32) * np.float32(0.002)) + 5, 0, 255))
    got = mlvm.load(so, params=pfile).main(x)
    assert got.dtype == np.uint8 and np.array_equal(got, want)
    bad = tmp_path / "bad.npz"
    np.savez(bad, w=params["w"].T.copy())
    assert aot_main(["build", str(src), "-o", str(tmp_path / "bad.so"), "-q", "--params", str(bad)]) == 1
