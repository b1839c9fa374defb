"""Models run on an emulated Cortex-M (qemu's mps2-an386, a Cortex-M4F, and
mps2-an385, a Cortex-M3 without FPU) through the project's own harness
(embedded/cortex_m: startup, linker script, semihosting), with the runtime
files a module links and nothing else but newlib's libm.

Each model is compiled once to C by `mlvm-aot compile`, built for the board
with arm-none-eabi-gcc -O2 and run under qemu; its outputs are compared
with the same model built for this host by `mlvm.compile`. Tolerance: the
host's vector kernels and the M-profile's portable ones sum in different
orders (and with or without FMA), so outputs agree within 1e-5 of the
largest output magnitude plus 1e-4 relative, not bit for bit. The stack
the call used (painted at reset, measured after) is reported and stays
under the `<M>_STACK_BYTES` its header states for the core.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import mlvm

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from embedded.cortex_m import harness  # noqa: E402
from embedded.cortex_m.models import cnn28  # noqa: E402

sys.path.append(str(ROOT / "bench"))  # after ROOT: bench/embedded.py is not the package
import onnx_models  # noqa: E402

pytestmark = pytest.mark.skipif(harness.available() is not None,
                                reason=f"{harness.available()} (make test installs them)")


def aot(*args: str) -> None:
    """mlvm-aot; compiles as docs/embedded.md says to for a microcontroller
    (--no-winograd: its workspaces and transformed weights are for hosts)."""
    exe = Path(sys.executable).parent / "mlvm-aot"
    extra = ["--no-winograd"] if args[:1] == ("compile",) else []
    res = subprocess.run([str(exe), *args, *extra], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, mlvm.Module]]:
    """name -> (generated C, host module)."""
    d = tmp_path_factory.mktemp("mcu")
    out: dict[str, tuple[Path, mlvm.Module]] = {}
    subprocess.run([sys.executable, str(ROOT / "samples/mlp/gen_params.py"), str(d)], check=True,
                   stdout=subprocess.DEVNULL)
    aot("compile", str(ROOT / "samples/mlp/mlp.mlir"), "-o", str(d / "mlp.c"), "--params", str(d / "mlp.npz"))
    out["mlp"] = (d / "mlp.c", mlvm.compile(ROOT / "samples/mlp/mlp.mlir", params=d / "mlp.npz"))
    subprocess.run([sys.executable, str(ROOT / "samples/onnx_resnet/make_model.py"), str(d / "resnet8.onnx")],
                   check=True, stdout=subprocess.DEVNULL)
    aot("compile", str(d / "resnet8.onnx"), "-o", str(d / "resnet8.c"))
    out["resnet8"] = (d / "resnet8.c", mlvm.compile(d / "resnet8.onnx"))
    # Single rows against a transposed operand (read in place, one dot
    # product per output) and a plain one whose width is not a multiple of 4.
    (d / "rows.mlir").write_text(
        "func.func @main(%x: tensor<1x37xf32>, %w: tensor<13x37xf32>, %v: tensor<13x7xf32>)"
        " -> tensor<1x7xf32> {\n"
        '  %h = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<1x37xf32>, tensor<13x37xf32>)'
        " -> tensor<1x13xf32>\n"
        '  %y = "mlvm.matmul"(%h, %v) : (tensor<1x13xf32>, tensor<13x7xf32>) -> tensor<1x7xf32>\n'
        "  func.return %y : tensor<1x7xf32>\n}\n"
    )
    aot("compile", str(d / "rows.mlir"), "-o", str(d / "rows.c"))
    out["rows"] = (d / "rows.c", mlvm.compile(d / "rows.mlir"))
    # A weight large enough to be stored in panels (512 x 520: sixteen
    # columns a pass across 16 full panels and a padded one, 8 alone).
    (d / "panels.mlir").write_text(
        "func.func @main(%x: tensor<1x512xf32>) -> tensor<1x520xf32> {\n"
        '  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<512x520xf32>\n'
        '  %y = "mlvm.matmul"(%x, %w) : (tensor<1x512xf32>, tensor<512x520xf32>) -> tensor<1x520xf32>\n'
        "  func.return %y : tensor<1x520xf32>\n}\n"
    )
    np.savez(d / "panels.npz", w=np.random.default_rng(5).standard_normal((512, 520)).astype(np.float32))
    aot("compile", str(d / "panels.mlir"), "-o", str(d / "panels.c"), "--params", str(d / "panels.npz"))
    # (the matmul's last field: panels 32 wide)
    assert re.search(r"mlvm_matmul_t \w+ = \{1, 520, 512, [^}]*, 32\};", (d / "panels.c").read_text())
    out["panels"] = (d / "panels.c", mlvm.compile(d / "panels.mlir", params=d / "panels.npz"))
    # A 28x28 CNN as PyTorch exports it (strided convs, ReLU, Gemm transB).
    cnn28(d / "cnn28.onnx")
    aot("compile", str(d / "cnn28.onnx"), "-o", str(d / "cnn28.c"))
    out["cnn28"] = (d / "cnn28.c", mlvm.compile(d / "cnn28.onnx"))
    # Without workspaces: the in-place sums (mlvm_conv2d_direct4_clamp_f32,
    # all groups of 4k channels; the DS-CNN's depthwise layers through
    # mlvm_conv2d_direct1_f32's one-channel pass).
    aot("compile", str(d / "cnn28.onnx"), "-o", str(d / "cnn28_nows.c"), "--no-workspaces")
    out["cnn28-nows"] = (d / "cnn28_nows.c", out["cnn28"][1])
    # MLPerf-Tiny-shaped models of the benchmark (depthwise-separable, and
    # the anomaly-detection autoencoder's dense layers with batch norm).
    for name, build in (("dscnn", onnx_models.dscnn), ("mobilenet", onnx_models.mobilenet_v1),
                        ("autoencoder", onnx_models.autoencoder)):
        onnx.save(build(1), d / f"{name}.onnx")
        aot("compile", str(d / f"{name}.onnx"), "-o", str(d / f"{name}.c"))
        out[name] = (d / f"{name}.c", mlvm.compile(d / f"{name}.onnx"))
    aot("compile", str(d / "dscnn.onnx"), "-o", str(d / "dscnn_nows.c"), "--no-workspaces")
    out["dscnn-nows"] = (d / "dscnn_nows.c", out["dscnn"][1])
    # The same DS-CNN, ResNet-8 and MobileNet quantized by onnxruntime (QDQ,
    # per-channel weights; bench/int8.py): the int8 GEMM's chunks of
    # positions in halfwords, the depthwise taps (strided ones too),
    # requantization, the f32 tail.
    path = list(sys.path)
    import int8  # (bench/int8.py puts its own folders first on the path)
    sys.path[:] = path
    for name, build in (("dscnn", onnx_models.dscnn), ("resnet8", onnx_models.resnet8),
                        ("mobilenet", onnx_models.mobilenet_v1)):
        onnx.save(build(1), d / f"{name}_f.onnx")
        q = int8.quantized(d / f"{name}_f.onnx")
        aot("compile", str(q), "-o", str(d / f"{name}_int8.c"))
        out[f"{name}-int8"] = (d / f"{name}_int8.c", mlvm.compile(q))
    # The int8 convolution's paths (SMLAD tiles, tap pairs of odd and even
    # depthwise windows, the VCVTR
    # requantization on the M4): f32 in, quantized, convolved, dequantized
    # (exact) out.
    (d / "qconv.mlir").write_text(QCONV_MLIR)
    g = np.random.default_rng(3)
    mult = (g.integers(1, 400, 12) * 1e-4).astype(np.float32)
    mult[3], mult[5] = np.nan, np.inf
    np.savez(d / "qconv.npz", w1=g.integers(-128, 128, (12, 5, 3, 3)).astype(np.int8),
             b1=g.integers(-3000, 3000, 12).astype(np.int32), m1=mult,
             w2=g.integers(0, 256, (12, 1, 3, 3)).astype(np.uint8),
             zw2=g.integers(0, 256, 12).astype(np.uint8),
             w3=g.integers(-128, 128, (6, 12, 1, 1)).astype(np.int8),
             zw3=g.integers(-5, 5, 6).astype(np.int8),
             w4=g.integers(-128, 128, (8, 1, 5, 3)).astype(np.int8),
             w5=g.integers(-128, 128, (12, 1, 2, 2)).astype(np.int8))
    aot("compile", str(d / "qconv.mlir"), "-o", str(d / "qconv.c"), "--params", str(d / "qconv.npz"))
    out["qconv"] = (d / "qconv.c", mlvm.compile(d / "qconv.mlir", params=d / "qconv.npz"))
    (d / "quant.mlir").write_text(QUANT_MLIR)
    aot("compile", str(d / "quant.mlir"), "-o", str(d / "quant.c"))
    out["quant"] = (d / "quant.c", mlvm.compile(d / "quant.mlir"))
    (d / "qadd.mlir").write_text(QADD_MLIR)
    aot("compile", str(d / "qadd.mlir"), "-o", str(d / "qadd.c"))
    out["qadd"] = (d / "qadd.c", mlvm.compile(d / "qadd.mlir"))
    return out


# Quantization's rounding (half to even, VCVTR on a hardware-float core,
# nearbyintf elsewhere) and saturation, dequantized exactly (scale 1).
QUANT_MLIR = """
func.func @main(%x: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %s = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %zu = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %zi = "mlvm.constant"() <{value = dense<-2> : tensor<i8>}> : () -> tensor<i8>
  %zh = "mlvm.constant"() <{value = dense<-7> : tensor<i16>}> : () -> tensor<i16>
  %zw = "mlvm.constant"() <{value = dense<5> : tensor<ui16>}> : () -> tensor<ui16>
  %qu = "mlvm.quantize"(%x, %s, %zu) : (tensor<32xf32>, tensor<f32>, tensor<ui8>) -> tensor<32xui8>
  %qi = "mlvm.quantize"(%x, %s, %zi) : (tensor<32xf32>, tensor<f32>, tensor<i8>) -> tensor<32xi8>
  %qh = "mlvm.quantize"(%x, %s, %zh) : (tensor<32xf32>, tensor<f32>, tensor<i16>) -> tensor<32xi16>
  %qw = "mlvm.quantize"(%x, %s, %zw) : (tensor<32xf32>, tensor<f32>, tensor<ui16>) -> tensor<32xui16>
  %du = "mlvm.dequantize"(%qu, %s, %zu) : (tensor<32xui8>, tensor<f32>, tensor<ui8>) -> tensor<32xf32>
  %di = "mlvm.dequantize"(%qi, %s, %zi) : (tensor<32xi8>, tensor<f32>, tensor<i8>) -> tensor<32xf32>
  %dh = "mlvm.dequantize"(%qh, %s, %zh) : (tensor<32xi16>, tensor<f32>, tensor<i16>) -> tensor<32xf32>
  %dw = "mlvm.dequantize"(%qw, %s, %zw) : (tensor<32xui16>, tensor<f32>, tensor<ui16>) -> tensor<32xf32>
  func.return %du, %di, %dh, %dw : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
}
"""
ROUNDING = np.array(
    [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.4999998, 0.49999997, 124.5, 125.5, -126.5, 251.5,
     252.5, 1000.5, 65529.5, -32761.5, 32766.5, 32767.5, -32768.5, 8388607.5, 8388608.0,
     16777215.0, 1e10, -1e10, np.inf, -np.inf, np.nan, -0.0, 1e-40, -1e-40, 0.0, 7.0],
    np.float32)


QCONV_MLIR = """
func.func @main(%x: tensor<1x5x9x7xf32>, %y: tensor<1x1x11x6xf32>) -> (tensor<1x6x9x7xf32>, tensor<1x8x4x2xf32>, tensor<1x12x8x6xf32>) {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %zx = "mlvm.constant"() <{value = dense<131> : tensor<ui8>}> : () -> tensor<ui8>
  %zi = "mlvm.constant"() <{value = dense<-3> : tensor<i8>}> : () -> tensor<i8>
  %z0 = "mlvm.constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
  %m = "mlvm.constant"() <{value = dense<0.0123> : tensor<f32>}> : () -> tensor<f32>
  %w1 = "mlvm.param"() <{name = "w1"}> : () -> tensor<12x5x3x3xi8>
  %b1 = "mlvm.param"() <{name = "b1"}> : () -> tensor<12xi32>
  %m1 = "mlvm.param"() <{name = "m1"}> : () -> tensor<12xf32>
  %w2 = "mlvm.param"() <{name = "w2"}> : () -> tensor<12x1x3x3xui8>
  %zw2 = "mlvm.param"() <{name = "zw2"}> : () -> tensor<12xui8>
  %w3 = "mlvm.param"() <{name = "w3"}> : () -> tensor<6x12x1x1xi8>
  %zw3 = "mlvm.param"() <{name = "zw3"}> : () -> tensor<6xi8>
  %w4 = "mlvm.param"() <{name = "w4"}> : () -> tensor<8x1x5x3xi8>
  %w5 = "mlvm.param"() <{name = "w5"}> : () -> tensor<12x1x2x2xi8>
  %xq = "mlvm.quantize"(%x, %s, %zx) : (tensor<1x5x9x7xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x5x9x7xui8>
  %c1 = "mlvm.qconv2d_requant"(%xq, %w1, %zx, %z0, %m1, %zx, %b1) <{padding = array<i64: 1, 1, 1, 1>, relu = 1 : i64}> : (tensor<1x5x9x7xui8>, tensor<12x5x3x3xi8>, tensor<ui8>, tensor<i8>, tensor<12xf32>, tensor<ui8>, tensor<12xi32>) -> tensor<1x12x9x7xui8>
  %zu = "mlvm.constant"() <{value = dense<7> : tensor<ui8>}> : () -> tensor<ui8>
  %c2 = "mlvm.qconv2d_requant"(%c1, %w2, %zx, %zw2, %m, %zu) <{padding = array<i64: 1, 1, 1, 1>, groups = 12 : i64}> : (tensor<1x12x9x7xui8>, tensor<12x1x3x3xui8>, tensor<ui8>, tensor<12xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x12x9x7xui8>
  %c3 = "mlvm.qconv2d_requant"(%c2, %w3, %zu, %zw3, %m, %zi) : (tensor<1x12x9x7xui8>, tensor<6x12x1x1xi8>, tensor<ui8>, tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x6x9x7xi8>
  %o1 = "mlvm.dequantize"(%c3, %s, %zi) : (tensor<1x6x9x7xi8>, tensor<f32>, tensor<i8>) -> tensor<1x6x9x7xf32>
  %yq = "mlvm.quantize"(%y, %s, %zi) : (tensor<1x1x11x6xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x11x6xi8>
  %c4 = "mlvm.qconv2d_requant"(%yq, %w4, %zi, %z0, %m, %zi) <{strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}> : (tensor<1x1x11x6xi8>, tensor<8x1x5x3xi8>, tensor<i8>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x8x4x2xi8>
  %o2 = "mlvm.dequantize"(%c4, %s, %zi) : (tensor<1x8x4x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8x4x2xf32>
  %c5 = "mlvm.qconv2d_requant"(%c1, %w5, %zx, %z0, %m, %zu) <{groups = 12 : i64}> : (tensor<1x12x9x7xui8>, tensor<12x1x2x2xi8>, tensor<ui8>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x12x8x6xui8>
  %o3 = "mlvm.dequantize"(%c5, %s, %zu) : (tensor<1x12x8x6xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x12x8x6xf32>
  func.return %o1, %o2, %o3 : tensor<1x6x9x7xf32>, tensor<1x8x4x2xf32>, tensor<1x12x8x6xf32>
}
"""

# mlvm.qadd's layouts on the core (VFMA and VCVTR on the M4, the double
# fused multiply-add on the M3): both operands whole (u8), b one value per
# row of 7 (i8 out), a single value (taken second), b a row over every
# row, and a zero output scale (the degenerate path); scales whose ratios
# make ties. Dequantized with scale 1: the integers themselves.
QADD_MLIR = """
func.func @main(%x: tensor<6x7xf32>, %r: tensor<6x1xf32>, %v: tensor<7xf32>) -> (tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>) {
  %one = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %s = "mlvm.constant"() <{value = dense<0.0625> : tensor<f32>}> : () -> tensor<f32>
  %s2 = "mlvm.constant"() <{value = dense<0.125> : tensor<f32>}> : () -> tensor<f32>
  %s3 = "mlvm.constant"() <{value = dense<0.0371> : tensor<f32>}> : () -> tensor<f32>
  %s0 = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %zu = "mlvm.constant"() <{value = dense<131> : tensor<ui8>}> : () -> tensor<ui8>
  %zv = "mlvm.constant"() <{value = dense<7> : tensor<ui8>}> : () -> tensor<ui8>
  %zi = "mlvm.constant"() <{value = dense<-3> : tensor<i8>}> : () -> tensor<i8>
  %xu = "mlvm.quantize"(%x, %s, %zu) : (tensor<6x7xf32>, tensor<f32>, tensor<ui8>) -> tensor<6x7xui8>
  %xi = "mlvm.quantize"(%x, %s3, %zi) : (tensor<6x7xf32>, tensor<f32>, tensor<i8>) -> tensor<6x7xi8>
  %ri = "mlvm.quantize"(%r, %s, %zi) : (tensor<6x1xf32>, tensor<f32>, tensor<i8>) -> tensor<6x1xi8>
  %vu = "mlvm.quantize"(%v, %s2, %zv) : (tensor<7xf32>, tensor<f32>, tensor<ui8>) -> tensor<7xui8>
  %one_u = "mlvm.constant"() <{value = dense<[77]> : tensor<1xui8>}> : () -> tensor<1xui8>
  %q0 = "mlvm.qadd"(%xu, %s, %zu, %xu, %s2, %zv, %s2, %zv) : (tensor<6x7xui8>, tensor<f32>, tensor<ui8>, tensor<6x7xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<6x7xui8>
  %q1 = "mlvm.qadd"(%xi, %s3, %zi, %ri, %s, %zi, %s3, %zi) : (tensor<6x7xi8>, tensor<f32>, tensor<i8>, tensor<6x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<6x7xi8>
  %q2 = "mlvm.qadd"(%one_u, %s2, %zv, %xu, %s, %zu, %s, %zu) : (tensor<1xui8>, tensor<f32>, tensor<ui8>, tensor<6x7xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<6x7xui8>
  %q3 = "mlvm.qadd"(%xu, %s, %zu, %vu, %s2, %zv, %s, %zu) : (tensor<6x7xui8>, tensor<f32>, tensor<ui8>, tensor<7xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<6x7xui8>
  %q4 = "mlvm.qadd"(%xi, %s3, %zi, %xi, %s3, %zi, %s0, %zi) : (tensor<6x7xi8>, tensor<f32>, tensor<i8>, tensor<6x7xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<6x7xi8>
  %z0 = "mlvm.constant"() <{value = dense<0> : tensor<ui8>}> : () -> tensor<ui8>
  %z0i = "mlvm.constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
  %o0 = "mlvm.dequantize"(%q0, %one, %z0) : (tensor<6x7xui8>, tensor<f32>, tensor<ui8>) -> tensor<6x7xf32>
  %o1 = "mlvm.dequantize"(%q1, %one, %z0i) : (tensor<6x7xi8>, tensor<f32>, tensor<i8>) -> tensor<6x7xf32>
  %o2 = "mlvm.dequantize"(%q2, %one, %z0) : (tensor<6x7xui8>, tensor<f32>, tensor<ui8>) -> tensor<6x7xf32>
  %o3 = "mlvm.dequantize"(%q3, %one, %z0) : (tensor<6x7xui8>, tensor<f32>, tensor<ui8>) -> tensor<6x7xf32>
  %o4 = "mlvm.dequantize"(%q4, %one, %z0i) : (tensor<6x7xi8>, tensor<f32>, tensor<i8>) -> tensor<6x7xf32>
  func.return %o0, %o1, %o2, %o3, %o4 : tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>, tensor<6x7xf32>
}
"""

CASES = [("mlp", "m4"), ("resnet8", "m4"), ("mlp", "m3"), ("rows", "m4"), ("panels", "m4"), ("panels", "m3"), ("cnn28", "m4"),
         ("cnn28", "m3"), ("cnn28-nows", "m4"), ("dscnn", "m4"), ("dscnn-nows", "m4"),
         ("mobilenet", "m4"), ("autoencoder", "m4"), ("autoencoder", "m3"), ("qconv", "m4"),
         ("qconv", "m3"), ("dscnn-int8", "m4"), ("resnet8-int8", "m4"),
         ("mobilenet-int8", "m4"), ("qadd", "m4"), ("qadd", "m3")]


@pytest.mark.parametrize("name,board", CASES, ids=[f"{n}-{b}" for n, b in CASES])
def test_model_on_emulated_cortex_m(models: dict[str, tuple[Path, mlvm.Module]], name: str,
                                    board: str) -> None:
    c_file, host = models[name]
    info = host.functions["main"]
    g = np.random.default_rng(7)
    inputs = [g.standard_normal(s.shape).astype(s.dtype) for s in info.inputs]
    res = harness.run(c_file, info, inputs, board)
    want = host.main(*inputs)
    want = list(want) if isinstance(want, tuple) else [want]
    for got, w in zip(res.outputs, want, strict=True):
        if name in ("qconv", "qadd"):  # integers (dequantized exactly): the same bits
            assert np.array_equal(got, w), (got, w)
            continue
        scale = float(np.max(np.abs(w)))
        assert np.all(np.abs(got - w) <= 1e-5 * scale + 1e-4 * np.abs(w)), (got, w)
    print(f"{name} on {board}: stack {res.stack_bytes} B (call {res.stack_call} B, stated "
          f"{res.stack_stated} B), text {res.text_bytes} B, bss {res.bss_bytes} B")
    assert 0 < res.stack_bytes <= 32 * 1024
    # the header states a bound for this core, and the call stayed under it
    # (harness.run raises if it did not)
    assert res.stack_stated is not None and 0 < res.stack_call <= res.stack_stated


def _functions(models: dict[str, tuple[Path, mlvm.Module]], name: str) -> set[str]:
    """The function symbols of the model's M4 firmware."""
    c_file, host = models[name]
    info = host.functions["main"]
    elf = harness.firmware(c_file, info, [np.zeros(s.shape, s.dtype) for s in info.inputs], "m4")
    table = subprocess.run(["arm-none-eabi-readelf", "-sW", str(elf)], capture_output=True,
                           text=True, check=True).stdout
    return {p[7] for p in (line.split() for line in table.splitlines())
            if len(p) >= 8 and p[3] == "FUNC"}


def test_groups_of_four_channels_link_no_one_channel_pass(
        models: dict[str, tuple[Path, mlvm.Module]]) -> None:
    """Without workspaces the CNN's two convolutions (8 and 16 channels,
    each with a ReLU) are loop nests of the module's own (nn.taps_convs):
    its firmware links no convolution of the runtime, while the DS-CNN
    keeps the one-channel pass: its depthwise layers, one channel per
    group, call mlvm_conv2d_direct1_f32. The CNN links no GEMM,
    so its ReLUs and its dense layer's bias are the entries' own loops (no
    epilogue function linked) and its dense layer of ten outputs takes the
    narrow single row (no sixteen-wide code); the DS-CNN's 1x1
    convolutions link the GEMM, which links the epilogue functions and the
    wide rows: it passes those functions and takes the wide row."""
    cnn, dscnn = _functions(models, "cnn28-nows"), _functions(models, "dscnn-nows")
    assert {"mlvm_matmul_row4_bias_f32", "row_core4"} <= cnn
    assert not cnn & {"one_channel", "four_channels", "mlvm_conv2d_direct4_clamp_f32", "mlvm_valid_span",
                      "mlvm_epilogue_clamp_f32", "mlvm_epilogue_bias_f32", "row_core"}, sorted(cnn)
    assert {"mlvm_conv2d_direct1_f32", "one_channel", "row_core"} <= dscnn
    assert not dscnn & {"mlvm_conv2d_direct1_clamp_f32", "row_core4"}, sorted(dscnn)


def test_convolutions_with_a_workspace_link_the_direct_path_alone(
        models: dict[str, tuple[Path, mlvm.Module]]) -> None:
    """With workspaces the CNN's convolutions call mlvm_conv2d_direct_ws_f32,
    the padded copy and the GEMM at tap offsets: no in-place sums, no
    window packing, no strided GEMM in the firmware."""
    cnn = _functions(models, "cnn28")
    assert {"mlvm_conv2d_direct_ws_f32", "direct_all", "gemm_blocked_at"} <= cnn
    assert not cnn & {"mlvm_conv2d_f32", "four_channels", "one_channel", "pack_window",
                      "gemm_blocked_strided", "mlvm_conv2d_epilogue_f32"}, sorted(cnn)
    # the GEMM links the wide single row and the epilogue functions: its
    # dense layer takes those, not the narrow entry or its own bias loop
    assert {"row_core", "mlvm_epilogue_bias_f32"} <= cnn
    assert not cnn & {"row_core4", "mlvm_matmul_row4_bias_f32", "mlvm_matmul_row_bias_f32",
                      "mlvm_conv2d_direct4_clamp_f32"}, sorted(cnn)


def test_pointwise_convolutions_link_their_gemm_alone(
        models: dict[str, tuple[Path, mlvm.Module]]) -> None:
    """The DS-CNN's 1x1 convolutions call mlvm_conv2d_pointwise_f32, the
    GEMM reading x in place: the general entry and its other paths (the
    window packing, the rows without a GEMM) are not in the firmware, nor
    any kernel its other layers do not take."""
    dscnn = _functions(models, "dscnn")
    assert {"mlvm_conv2d_pointwise_f32", "gemm_blocked_strided", "mlvm_conv2d_direct1_f32"} <= dscnn
    # its depthwise layers (no workspace) the one-channel pass alone, its
    # stem (IHWO, with a workspace) the channel-vector kernel at offsets
    assert not dscnn & {"mlvm_conv2d_f32", "mlvm_conv2d_epilogue_f32", "conv_all", "pack_window",
                        "four_channels", "cvec_strided", "ihwo_loops"}, sorted(dscnn)


@pytest.mark.parametrize("board", ["m4", "m3"])
def test_quantize_rounds_as_the_host(models: dict[str, tuple[Path, mlvm.Module]], board: str) -> None:
    """Ties to even, the saturation bounds, NaN to the zero point, values
    past 2^23 and infinities, for u8, i8, i16 and u16 with zero points
    other than 0: the same integers on the M4 (VCVTR, QADD, USAT / SSAT)
    and the M3 (soft float, nearbyintf) as on the host."""
    c_file, host = models["quant"]
    got = harness.run(c_file, host.functions["main"], [ROUNDING], board).outputs
    for g, w in zip(got, host.main(ROUNDING), strict=True):
        assert np.array_equal(g, w), (g, w)


def _kernel_test(name: str, board: str, tmp_path: Path, flags: tuple[str, ...] = ()) -> tuple[str, int]:
    """Runs tests/runtime_c/kernels/<name>.c on the board (harness.kernel_test):
    its kernel path and number of cases, once it exited 0 with no failure."""
    code, text = harness.kernel_test(ROOT / f"tests/runtime_c/kernels/{name}.c", board, tmp_path, flags)
    m = re.search(rf"^{name}\[(\w+)\]: (\d+) cases, (\d+) failures$", text, re.M)
    assert code == 0 and m is not None and m.group(3) == "0", text[-2000:]
    return m.group(1), int(m.group(2))


@pytest.mark.parametrize("board", ["m4", "m3", "m4-soft"])
def test_int8_convolution_paths_on_the_core(board: str, tmp_path: Path) -> None:
    """The host's int8 convolution test (tests/runtime_c/kernels/qconv_paths.c:
    every edge of the tiles, chunks, strides, groups, zero points, against
    an int64 loop) on the core itself: the M4's SMLAD path (with VCVTR's
    requantization, or without an FPU), the M3's portable C."""
    path, cases = _kernel_test("qconv_paths", board, tmp_path)
    assert path == ("portable" if board == "m3" else "dsp")
    assert cases >= 500


def test_f32_kernel_paths_on_the_m4(tmp_path: Path) -> None:
    """The host's f32 kernel test (tests/runtime_c/kernels/kernel_paths.c:
    matmuls across the tiles' edges and the M4's VLDM tile, convolutions
    over strides, dilations, groups and padding, the depthwise passes,
    pooling, softmax, against float64 loops) on the M4 itself, in its small
    mode (shapes that fit the board's heap; the large ones run on the host;
    on the M3, whose doubles are soft float, it takes 100 s: the host's
    "scalar" path runs the same C there)."""
    _, cases = _kernel_test("kernel_paths", "m4", tmp_path, ("-DMLVM_TEST_SMALL",))
    assert cases >= 1000

def test_a_wrong_output_is_caught(models: dict[str, tuple[Path, mlvm.Module]], tmp_path: Path) -> None:
    """The harness reports what the firmware computed: a module built from
    other weights gives other outputs (so the comparison above can fail)."""
    c_file, host = models["mlp"]
    other = tmp_path / "mlp.c"
    other.write_text(c_file.read_text().replace("0x3", "0x2", 1))
    other.with_suffix(".h").write_text(c_file.with_suffix(".h").read_text())
    x = np.ones((1, 784), np.float32)
    got = harness.run(other, host.functions["main"], [x], "m4").outputs[0]
    assert not np.allclose(got, host.main(x), rtol=1e-4)


def test_instruction_counts_are_exact(models: dict[str, tuple[Path, mlvm.Module]]) -> None:
    """One inference's guest instructions, counted by the harness's qemu
    plugin: the same on every run, and at least one per multiply-add."""
    c_file, host = models["mlp"]
    info = host.functions["main"]
    x = [np.ones((1, 784), np.float32)]
    first = harness.run(c_file, info, x, "m4", count=True)
    again = harness.run(c_file, info, x, "m4", count=True)
    assert first.instructions is not None and first.instructions == again.instructions
    macs = 784 * 256 + 256 * 256 + 256 * 10
    assert macs < first.instructions < 100 * macs, first.instructions
    print(f"mlp on m4: {first.instructions} instructions per inference "
          f"({first.instructions / macs:.1f} per multiply-add)")


def test_profile_adds_up_to_the_count(models: dict[str, tuple[Path, mlvm.Module]]) -> None:
    """harness.profile: one inference's instructions per function, which
    add up to the exact count; the int8 convolution's functions lead."""
    c_file, host = models["qconv"]
    info = host.functions["main"]
    g = np.random.default_rng(7)
    inputs = [g.standard_normal(s.shape).astype(s.dtype) for s in info.inputs]
    prof = harness.profile(c_file, info, inputs, "m4")
    total = harness.run(c_file, info, inputs, "m4", count=True).instructions
    assert sum(prof.values()) == total
    assert next(iter(prof)).startswith("q_"), prof


@pytest.mark.parametrize("extra", [["-fno-omit-frame-pointer"], ["-fno-omit-frame-pointer", "-fPIC"],
                                   ["-fno-omit-frame-pointer", "-fPIC", "-Os"],
                                   ["-fno-omit-frame-pointer", "-Og"]])
@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m7", "cortex-m55"])
def test_runtime_builds_with_a_frame_pointer(core: str, extra: list[str], tmp_path: Path) -> None:
    """The inline assembly of the FPU and DSP kernels leaves the compiler
    registers enough when r7 is kept as the frame pointer
    (-fno-omit-frame-pointer, as firmware built for stack traces has it),
    and r9 too (position-independent code), at -O2, -Os and -Og: with all
    of them in the operands, gcc stops with "impossible constraints"
    (matmul.c's 4 x 4 tile inlined into its caller did; q_halves' asm with
    eight registers did on the M55 at -Og)."""
    from mlvm.codegen.mcu import RUNTIME_FILES
    res = subprocess.run(
        ["arm-none-eabi-gcc", *harness.CORES[core], *harness.CFLAGS, *extra,
         "-I", str(harness.INCLUDE_DIR), "-c", *map(str, RUNTIME_FILES)],
        capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, f"{core} {extra}: {res.stderr[-3000:]}"


@pytest.mark.parametrize("core", list(harness.CORES))
def test_builds_for_every_core(core: str, models: dict[str, tuple[Path, mlvm.Module]],
                               tmp_path: Path) -> None:
    """docs/embedded.md's flags for each core: a module and the runtime
    files it links compile without a warning; the CPU features the kernels
    look for are what the core has (FMA for the scalar kernel, DSP for the
    int8 pairs)."""
    flags = harness.CORES[core]
    c_file, _ = models["rows"]
    harness.runtime_archive(flags)  # the runtime files, compiled with -Werror (cached per core)
    res = subprocess.run(
        ["arm-none-eabi-gcc", *flags, *harness.CFLAGS, "-I", str(harness.INCLUDE_DIR),
         "-I", str(c_file.parent), "-c", str(c_file)],
        capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, f"{core}: {res.stderr}"
    macros = subprocess.run(["arm-none-eabi-gcc", *flags, "-dM", "-E", "-"], input="",
                            capture_output=True, text=True, check=True).stdout
    fpu = "-mfloat-abi=hard" in flags
    assert ("__ARM_FEATURE_FMA" in macros) == fpu
    assert ("__ARM_FEATURE_DSP" in macros) == (core not in ("cortex-m0plus", "cortex-m3"))
