"""Every kernel path on this host: the kernels built as portable C, with
AVX2 + FMA and with AVX-512 (each where the CPU runs it), and for the host
itself (-march=native, what mlvm builds by default).

* tests/runtime_c/kernels/kernel_paths.c: matmul, conv2d and pooling
  against float64 loops. It names the path it ran, so a build that silently fell back is
  caught. The host's build and the scalar one run again under ASan/UBSan.
* tests/runtime_c/kernels/conv_workspace.c: the workspace conv2d's direct
  path asks for, the same as the compiler plans (conv2d_workspace_bytes).
* tests/runtime_c/kernels/matmul_workspace.c: the workspace a matmul of a
  b in memory asks for, the same as the compiler plans
  (matmul_workspace_bytes).
* tests/runtime_c/kernels/qconv_paths.c: the int8 convolution (workspace
  path and mlvm_qconv2d_8) against an int64 loop, and mlvm_qadd_8 against
  its formula (the C library's fmaf), per int8 path (AVX-512 VNNI with and without VBMI,
  AVX-VNNI, AVX2, portable), also under ASan/UBSan; and the workspace it
  asks for, the same as the compiler plans.
* tests/runtime_c/kernels/vmath_ulp.c: exp, sigmoid, tanh and erf of
  mlvm/vmath.h within their documented ulp bounds over a sweep of f32 bit
  patterns (every 10007th) and the edge values; with and without FMA the
  polynomials round differently, so each path is measured. The exp,
  sigmoid, tanh, erf and gelu (both forms) array kernels give the scalar
  functions' bits.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlvm.codegen.cc import host_cpu_flags

import c_build

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "kernels" / "kernel_paths.c"
VMATH = HERE / "kernels" / "vmath_ulp.c"
WORKSPACE = HERE / "kernels" / "conv_workspace.c"
MM_WORKSPACE = HERE / "kernels" / "matmul_workspace.c"
QCONV = HERE / "kernels" / "qconv_paths.c"
FIELDS = ("n", "c", "h", "w", "o", "kh", "kw", "oh", "ow", "sh", "sw", "pt", "pl", "dh", "dw",
          "groups")
# path: (flags, the /proc/cpuinfo flags the CPU needs to run it)
PATHS = {
    "portable": (["-DMLVM_PORTABLE_KERNELS"], ()),
    # the scalar 4 x 4 kernel of cores without vectors (Cortex-M), on this host
    "scalar": (["-DMLVM_PORTABLE_KERNELS", "-DMLVM_SCALAR_KERNELS"], ()),
    "avx2": (["-mavx2", "-mfma"], ("avx2", "fma")),
    "avx512": (["-mavx512f", "-mfma"], ("avx512f", "fma")),
}
# int8 path: (flags, CPU flags needed)
QPATHS = {
    "portable": (["-DMLVM_PORTABLE_KERNELS"], ()),
    # the kernels of cores without vectors (Cortex-M without the DSP
    # extension), on this host: reported as portable
    "scalar": (["-DMLVM_PORTABLE_KERNELS", "-DMLVM_SCALAR_KERNELS"], ()),
    "avx2": (["-mavx2", "-mfma"], ("avx2", "fma")),
    "avx-vnni": (["-mavx2", "-mfma", "-mavxvnni"], ("avx2", "fma", "avx_vnni")),
    # the same tiles on a core with AVX-512 VNNI (its vpdpbusd of ymm
    # registers), where the CPU has no AVX-VNNI: reported as avx-vnni
    "avx-vnni-on-avx512": (["-mavx2", "-mfma", "-mavx512f", "-mavx512vl", "-mavx512vnni",
                            "-DMLVM_Q_EMULATE_AVXVNNI"], ("avx2", "fma", "avx512vl", "avx512_vnni")),
    "avx512-vnni": (["-mavx512f", "-mavx512bw", "-mavx512vnni", "-mfma"],
                    ("avx512f", "avx512bw", "avx512_vnni", "fma")),
    "avx512-vnni-vbmi": (["-mavx512f", "-mavx512bw", "-mavx512vnni", "-mavx512vbmi", "-mfma"],
                         ("avx512f", "avx512bw", "avx512_vnni", "avx512vbmi", "fma")),
}
# The kernel files each program links (a path's library builds only those:
# the int8 paths' flag sets need no f32 kernels, and the other way round).
_K = {f.stem: f for f in c_build.KERNELS}
F32_KERNELS = [_K[n] for n in ("conv", "conv_cvec", "conv_scalar", "conv_wino", "depthwise", "depthwise_lanes",
                               "elementwise", "matmul", "nn")]
INT8_KERNELS = [_K[n] for n in ("qadd", "qavgpool", "qconv_gemv", "qconv_ws", "qdepthwise_lanes", "qdepthwise_perm",
                                 "qdepthwise_rows3", "qmatmul")]
LINKS = {PROGRAM: F32_KERNELS, VMATH: F32_KERNELS, WORKSPACE: F32_KERNELS, MM_WORKSPACE: F32_KERNELS,
         QCONV: INT8_KERNELS}
QLINE = re.compile(r"^qconv_paths\[([\w-]+)\]: (\d+) cases, (\d+) failures$", re.M)
LINE = re.compile(r"^kernel_paths\[(\w+)\]: (\d+) cases, (\d+) failures$", re.M)


def build_and_run(program: Path, flags: list[str], tmp_path: Path, stdin: str = "",
                  args: tuple[str, ...] = ()) -> str:
    """`program` linked with the kernels built with `flags` (at -O2 unless
    they say otherwise): one build of them per flag set for the whole run."""
    exe = c_build.build([program], ["-O2", *flags], tmp_path / program.stem, files=LINKS[program])
    run = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300, input=stdin)
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    return run.stdout


def run_path(flags: list[str], tmp_path: Path) -> re.Match[str]:
    stdout = build_and_run(PROGRAM, flags, tmp_path)
    m = LINE.search(stdout)
    assert m is not None, stdout
    assert int(m.group(2)) >= 500 and m.group(3) == "0", stdout
    return m


def path_flags(path: str) -> list[str]:
    flags, needs = PATHS[path]
    missing = set(needs) - host_cpu_flags()
    if missing:
        pytest.skip(f"this CPU lacks {', '.join(sorted(missing))}")
    return flags


def reported_name(path: str) -> str:
    """What mlvm_kernel_path() says: the scalar kernels are a variant of the
    portable path."""
    return "portable" if path == "scalar" else path


@pytest.mark.parametrize("path", list(PATHS))
def test_kernel_path(path: str, tmp_path: Path) -> None:
    assert run_path(path_flags(path), tmp_path).group(1) == reported_name(path)


@pytest.mark.parametrize("path", list(PATHS))
def test_vector_math_within_its_ulp_bounds(path: str, tmp_path: Path) -> None:
    stdout = build_and_run(VMATH, path_flags(path), tmp_path)
    lines = re.findall(rf"^vmath_ulp\[{reported_name(path)}\] (\w+): max .* ulp", stdout, re.M)
    assert lines == ["exp", "sigmoid", "tanh", "erf"], stdout
    # the array kernels (AVX-512: sixteen lanes at a time) give the same bits
    assert f"vmath_ulp[{reported_name(path)}] arrays: 0 differ" in stdout, stdout
    # a * b + c rounded once, with the instruction or without (portable, scalar)
    assert f"vmath_ulp[{reported_name(path)}] fma_exact: 0 differ" in stdout, stdout


VMATH_LOOPS = """#include "mlvm/kernels.h"
#include "mlvm/kernels_nn.h"
#define LOOP(fn) void loop_##fn(long n, float *restrict x) { long j; for (j = 0; j < n; ++j) x[j] = fn(x[j]); }
LOOP(mlvm_expf)
LOOP(mlvm_sigmoidf)
LOOP(mlvm_tanhf)
LOOP(mlvm_erff)
LOOP(mlvm_gelu_tanh)
LOOP(mlvm_gelu_erf)
LOOP(sqrtf)
"""


@pytest.mark.parametrize("march", ["haswell", "skylake-avx512"])
def test_vector_math_loops_vectorise(march: str, tmp_path: Path) -> None:
    """Generated elementwise loops and the runtime's call the vector math
    inline: with the flags mlvm builds with, gcc must vectorise a loop over
    each function for AVX2 as for AVX-512 (a float ?: in them had kept the
    AVX2 loops scalar, 1.8x slower on the MLP-Mixer), and over sqrtf (errno
    had kept it scalar everywhere)."""
    from mlvm.codegen.cc import DEFAULT_CFLAGS, INCLUDE_DIR

    src = tmp_path / "loops.c"
    src.write_text(VMATH_LOOPS)
    flags = [f"-march={march}" if f == "-march=native" else f for f in DEFAULT_CFLAGS]
    res = subprocess.run(["gcc", *flags, "-I", str(INCLUDE_DIR), "-fopt-info-vec-optimized", "-c",
                          str(src), "-o", str(tmp_path / "loops.o")],
                         capture_output=True, text=True, check=True)
    lines = {int(m) for m in re.findall(r"loops\.c:(\d+):\d+: optimized: loop vectorized", res.stderr)}
    assert lines == set(range(4, 11)), res.stderr


@pytest.mark.parametrize("path", ["host", "scalar"])
def test_kernel_path_under_sanitizers(path: str, tmp_path: Path) -> None:
    """Exact-size tensors and workspaces through the f32 kernels (the GEMM,
    the direct and channels-in-lanes convolutions, both depthwise kernels
    and their masked / transposed loads and stores), on the host's own path
    and the scalar one: no read or write out of bounds, no undefined
    arithmetic; -march=native builds the best path the CPU has."""
    base = ["-march=native"] if path == "host" else path_flags(path)
    m = run_path([*base, *c_build.SANITIZE], tmp_path)
    assert m.group(1) == (best_host_path() if path == "host" else reported_name(path))


def best_host_path() -> str:
    """The path -march=native must build: the best the CPU has (checked by
    the sanitized host run above, which is that build)."""
    have = host_cpu_flags()
    return "avx512" if {"avx512f", "fma"} <= have else "avx2" if {"avx2", "fma"} <= have else "portable"


def test_column_blocks(tmp_path: Path) -> None:
    """The blocked GEMM with column blocks of a few tiles (4 KiB of out
    per block, at least one sliver: as narrow as one for 32 rows or more):
    every ragged block edge of the matmul and convolution cases, on the
    host's path."""
    run_path(["-march=native", "-DMLVM_MM_NC_BYTES=4096", "-DMLVM_MM_NC_MIN=1"], tmp_path)


def test_winograd_blocks(tmp_path: Path) -> None:
    """Winograd's convolution with blocks of a few tile rows (at least 7
    tiles: two rows of 4, one of 10, ...), so that blocks end mid-image and
    span images: every case's block edges, on the host's path."""
    run_path(["-march=native", "-DMLVM_WINO_BLOCK_BYTES=1", "-DMLVM_WINO_MIN_TILES=7"], tmp_path)


def test_cvec_slices(tmp_path: Path) -> None:
    """The channels-in-lanes convolution summing its taps in slices of 7
    (AVX-512 takes one slice, AVX2 128 taps): every case's slice edges,
    each tile going on from its sums of the slice before, on the host's
    path (and AVX2's on an AVX-512 host)."""
    run_path(["-march=native", "-DMLVM_CV_KC=7"], tmp_path)
    if best_host_path() == "avx512":
        run_path(["-march=haswell", "-DMLVM_CV_KC=5"], tmp_path)


def test_conv_workspace_is_what_the_compiler_plans(tmp_path: Path) -> None:
    """The arena holds the workspace the kernel will use (the direct one's,
    Winograd's), and the compiler calls mlvm_conv2d_direct_f32 where cores
    without vectors sum in place: each rule in C and its copy in the
    compiler agree on random and edge shapes."""
    from mlvm.dialect.nn import conv2d_sums_in_place, conv2d_wino_workspace_bytes, conv2d_workspace_bytes

    rng = np.random.default_rng(7)
    cases = []
    for t in range(400):
        groups = int(rng.choice([1, 1, 2, 3]))
        c = groups * int(rng.integers(1, 9))
        o = groups * int(rng.integers(1, 12))
        kh, kw = (int(v) for v in rng.integers(1, 6, 2))
        sh, sw, dh, dw = (int(v) for v in rng.integers(1, 4, 4))
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        pads = [int(v) for v in rng.integers(0, 3, 4)]
        if t % 5 == 1:  # many channels: Winograd's blocks of a few tile rows
            groups, c, o = 1, int(rng.integers(100, 700)), int(rng.integers(100, 700))
        if t % 7 == 0:
            kh = kw = sh = sw = dh = dw = 1
            pads = [0, 0, 0, 0]
        oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1) // sh + 1
        ow = (w + pads[1] + pads[3] - dw * (kw - 1) - 1) // sw + 1
        if oh < 1 or ow < 1:
            continue
        cases.append(dict(n=int(rng.integers(1, 3)), c=c, h=h, w=w, o=o, kh=kh, kw=kw, oh=oh,
                          ow=ow, sh=sh, sw=sw, pt=pads[0], pl=pads[1], dh=dh, dw=dw,
                          groups=groups))
    stdin = "".join(" ".join(str(d[f]) for f in FIELDS) + "\n" for d in cases)
    got = [tuple(int(v) for v in line.split())
           for line in build_and_run(WORKSPACE, [], tmp_path, stdin).splitlines()]
    want = [(conv2d_workspace_bytes(d), int(conv2d_sums_in_place(d)), conv2d_wino_workspace_bytes(d),
             conv2d_wino_workspace_bytes(d, 4)) for d in cases]
    assert got == want
    assert sum(1 for v in want if v[0] > 0) > 100 and any(v[0] == 0 for v in want)
    assert {v[1] for v in want} == {0, 1}
    assert len({v[2] for v in want}) > 100 and len({v[3] for v in want}) > 100  # Winograd's blocks


def test_matmul_workspace_is_what_the_compiler_plans(tmp_path: Path) -> None:
    """The arena holds the slab matmul.c packs a b in memory into: the rule
    in C and its copy in the compiler agree on random and edge sizes and
    strides (the row block's 192 rows, one slice or sliver, b transposed,
    large or rows 1 KiB apart, panels)."""
    from mlvm.dialect.ops import matmul_workspace_bytes

    rng = np.random.default_rng(11)
    cases = [(192, 64, 64, 1, 64, 0), (193, 1, 1, 1, 1, 0), (193, 256, 256, 256, 1, 0),
             (193, 257, 257, 257, 1, 0), (193, 257, 257, 1, 257, 0), (1000, 33, 1000, 33, 1, 0),
             (300, 512, 512, 512, 1, 0), (300, 511, 513, 511, 1, 0), (300, 1000, 300, 1000, 1, 0),
             (500, 500, 500, 1, 500, 32), (1, 4096, 4096, 4096, 1, 0), (0, 5, 5, 5, 1, 0)]
    for _ in range(400):
        m, n, k = (int(v) for v in rng.integers(1, 700, 3))
        if rng.random() < 0.2:
            n = 256 * int(rng.integers(1, 4))
        tb = rng.random() < 0.3
        cases.append((m, n, k, 1 if tb else n, k if tb else 1, 32 if rng.random() < 0.1 else 0))
    stdin = "".join(" ".join(str(v) for v in c) + "\n" for c in cases)
    got = [int(v) for v in build_and_run(MM_WORKSPACE, [], tmp_path, stdin).split()]
    want = [0 if panel else matmul_workspace_bytes(m, n, k, b_rs, b_cs)
            for m, n, k, b_rs, b_cs, panel in cases]
    assert got == want
    assert len({v for v in want if v > 0}) > 30 and sum(v == 0 for v in want) > 50


def qpath_flags(path: str) -> list[str]:
    flags, needs = QPATHS[path]
    missing = set(needs) - host_cpu_flags()
    if missing:
        pytest.skip(f"this CPU lacks {', '.join(sorted(missing))}")
    return flags


def qpath_name(path: str) -> str:
    """What mlvm_qkernel_path() says for it (an emulated path, the one it
    stands for)."""
    return "portable" if path == "scalar" else path.removesuffix("-on-avx512")


@pytest.mark.parametrize("path", list(QPATHS))
def test_qconv_path(path: str, tmp_path: Path) -> None:
    m = QLINE.search(build_and_run(QCONV, qpath_flags(path), tmp_path))
    assert m is not None and m.group(1) == qpath_name(path)
    assert int(m.group(2)) >= 500 and m.group(3) == "0"


@pytest.mark.parametrize("path", ["host", *QPATHS])
def test_qconv_under_sanitizers(path: str, tmp_path: Path) -> None:
    """Exact-size workspaces and tensors: no read or write out of bounds,
    no undefined arithmetic, on each int8 path the CPU runs and the host's
    own (-march=native)."""
    base = ["-march=native"] if path == "host" else qpath_flags(path)
    m = QLINE.search(build_and_run(QCONV, [*base, *c_build.SANITIZE], tmp_path))
    assert m is not None and m.group(3) == "0", m
    assert path == "host" or m.group(1) == qpath_name(path)


def test_qconv_workspace_is_what_the_compiler_plans(tmp_path: Path) -> None:
    from mlvm.dialect.quant import qconv2d_workspace_bytes

    rng = np.random.default_rng(11)
    cases = []
    for _ in range(400):
        groups = int(rng.choice([1, 1, 2, 3, 8]))
        c, o = groups * int(rng.integers(1, 9)), groups * int(rng.integers(1, 12))
        kh, kw = (int(v) for v in rng.integers(1, 6, 2))
        sh, sw, dh, dw = (int(v) for v in rng.integers(1, 4, 4))
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        pads = [int(v) for v in rng.integers(0, 3, 4)]
        oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1) // sh + 1
        ow = (w + pads[1] + pads[3] - dw * (kw - 1) - 1) // sw + 1
        if oh < 1 or ow < 1:
            continue
        cases.append(dict(n=int(rng.integers(1, 3)), c=c, h=h, w=w, o=o, kh=kh, kw=kw, oh=oh, ow=ow,
                          sh=sh, sw=sw, pt=pads[0], pl=pads[1], dh=dh, dw=dw, groups=groups,
                          x_signed=int(rng.integers(0, 2)), w_signed=int(rng.integers(0, 4) > 0),
                          zw_per_o=int(rng.integers(0, 2))))
        d = cases[-1]  # weights in lanes: GEMM path, i8 weights
        d["w_lanes"] = int(o // groups >= 4 and d["w_signed"] == 1 and rng.integers(0, 2) == 1)
    for c in (1, 37, 9216):  # one position per image (qconv_gemv.c), one group or two
        for groups in (1, 1 if c == 9216 else c):
            cases.append(dict(n=2, c=c, h=1, w=1, o=groups * 5, kh=1, kw=1, oh=1, ow=1, sh=1, sw=1, pt=0,
                              pl=0, dh=1, dw=1, groups=groups, x_signed=0, w_signed=1, zw_per_o=0,
                              w_lanes=1))
    for h, w in ((25, 5), (1, 1), (2, 7), (9, 64), (6, 65), (3, 130)):  # 3x3 depthwise, stride 1:
        for pads in ((1, 1, 1, 1), (0, 1, 2, 0)):  # the DSP path's widened plane (odd, even wq)
            oh, ow = h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2
            if oh >= 1 and ow >= 1:
                cases.append(dict(n=1, c=4, h=h, w=w, o=4, kh=3, kw=3, oh=oh, ow=ow, sh=1, sw=1,
                                  pt=pads[0], pl=pads[1], dh=1, dw=1, groups=4, x_signed=1,
                                  w_signed=1, zw_per_o=0, w_lanes=0))
    keys = (*FIELDS, "x_signed", "w_signed", "zw_per_o", "w_lanes")
    stdin = "".join(" ".join(str(d[f]) for f in keys) + "\n" for d in cases)
    got = [tuple(int(v) for v in line.split())
           for line in build_and_run(QCONV, [], tmp_path, stdin, ("ws",)).splitlines()]
    want = [(qconv2d_workspace_bytes(d, lanes=bool(d["w_lanes"])),
             qconv2d_workspace_bytes(d, lanes=bool(d["w_lanes"]), requant=True)) for d in cases]
    assert got == want
    # requantized results keep bytes at the copy's pitch: less where there are such rows
    assert all(r <= s for s, r in want) and any(r < s for s, r in want)
    # both paths: GEMM (4 or more outputs per group) and taps
    assert len(cases) > 300 and all(v[1] > 0 for v in want)
    assert {d["o"] // d["groups"] >= 4 for d in cases} == {True, False}
    assert {d["w_lanes"] for d in cases} == {0, 1}
    assert sum(1 for s, r in want if r == 64 < s) >= 3  # the Linear layers need no workspace
    dw3 = [d for d in cases if d["c"] == d["groups"] and (d["kh"], d["kw"], d["sh"], d["sw"], d["dh"],
                                                          d["dw"]) == (3, 3, 1, 1, 1, 1)]
    assert {d["ow"] % 2 for d in dw3} == {0, 1}  # their padded rows (ow + 2) odd and even
