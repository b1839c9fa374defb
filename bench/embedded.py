"""Models on an emulated Cortex-M4 (qemu mps2-an386), exact costs.

    python bench/embedded.py        (make bench-embedded)

For each model: its multiply-adds, guest instructions of one inference
(the harness's qemu plugin, exact and the same on every host) and per
multiply-add, the firmware's flash (text: code and weights), the module's
arena, the stack the call used (measured by painting) next to the bound
its header states (`<M>_STACK_BYTES` for the M4), and RAM (arena + the
measured stack). The table goes to stdout and into bench/README.md
(between the embedded markers; --no-readme leaves it alone). The models: the tests' (tests/mcu) sample MLP
784-256-256-10 and the ResNet-8-like CNN of samples/onnx_resnet, a small
28x28 CNN as PyTorch exports it (conv 8 3x3 stride 2, ReLU, conv 16 3x3
stride 2, ReLU, flatten, dense 10; 78,400 multiply-adds), the DS-CNN
and MobileNet-v1-0.25 of `make bench` and MLPerf Tiny's anomaly-detection
autoencoder (640-128x4-8-128x4-640; bench/onnx_models.py), and the
DS-CNN, ResNet-8 and MobileNet quantized to int8 by onnxruntime
(bench/int8.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mlvm  # noqa: E402
from embedded.cortex_m import harness  # noqa: E402
from embedded.cortex_m.models import cnn28  # noqa: E402

sys.path.append(str(ROOT / "bench"))
import int8  # noqa: E402
import onnx  # noqa: E402
import embedded_tables  # noqa: E402
import onnx_models  # noqa: E402


def aot(*args: str) -> None:
    """mlvm-aot as docs/embedded.md says to compile for a microcontroller
    (--no-winograd: its workspaces and transformed weights are for hosts)."""
    extra = ["--no-winograd"] if args[:1] == ("compile",) else []
    subprocess.run([sys.executable, "-m", "mlvm", *args, *extra, "-q"], check=True)


def arena_bytes(c_file: Path) -> int:
    m = re.search(r"_ARENA_BYTES (\d+)u", c_file.with_suffix(".h").read_text())
    return int(m.group(1)) if m else 0


def multiply_adds(path: Path) -> int:
    """Multiply-adds of the matrix products and convolutions of a model (as
    imported, before any pass)."""
    from mlvm.pipeline import load_source

    module, _, _ = load_source(path)
    total = 0
    for op in module.walk():
        if op.name in ("mlvm.conv2d", "mlvm.qconv2d", "mlvm.qconv2d_requant"):
            out = op.results[0].type.get_shape()
            w = op.operands[1].type.get_shape()
            total += int(np.prod(out)) * int(np.prod(w[1:]))
        elif op.name in ("mlvm.matmul", "mlvm.qmatmul"):
            lhs = op.operands[0].type.get_shape()
            ta = op.properties.get("transpose_lhs")
            k = lhs[-2] if ta is not None and bool(ta.value.data) and len(lhs) > 1 else lhs[-1]
            total += int(np.prod(op.results[0].type.get_shape())) * k
    return total




def main() -> int:
    args = embedded_tables.start(__doc__.split("\n\n")[0])
    if args is None:
        return 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        subprocess.run([sys.executable, str(ROOT / "samples/mlp/gen_params.py"), str(d)], check=True,
                       stdout=subprocess.DEVNULL)
        aot("compile", str(ROOT / "samples/mlp/mlp.mlir"), "-o", str(d / "mlp.c"), "--params", str(d / "mlp.npz"))
        subprocess.run([sys.executable, str(ROOT / "samples/onnx_resnet/make_model.py"), str(d / "resnet8.onnx")],
                       check=True, stdout=subprocess.DEVNULL)
        aot("compile", str(d / "resnet8.onnx"), "-o", str(d / "resnet8.c"))
        # without kernel workspaces: conv2d gathers its windows per block
        aot("compile", str(d / "resnet8.onnx"), "-o", str(d / "resnet8_nows.c"), "--no-workspaces")
        cnn28(d / "cnn28.onnx")
        aot("compile", str(d / "cnn28.onnx"), "-o", str(d / "cnn28.c"))
        aot("compile", str(d / "cnn28.onnx"), "-o", str(d / "cnn28_nows.c"), "--no-workspaces")
        cnn = mlvm.compile(d / "cnn28.onnx")
        tiny = {}
        for name, build in (("dscnn", onnx_models.dscnn), ("mobilenet", onnx_models.mobilenet_v1),
                            ("autoencoder", onnx_models.autoencoder)):
            onnx.save(build(1), d / f"{name}.onnx")
            aot("compile", str(d / f"{name}.onnx"), "-o", str(d / f"{name}.c"))
            tiny[name] = mlvm.compile(d / f"{name}.onnx")
        # int8: the same DS-CNN, ResNet-8 and MobileNet quantized by
        # onnxruntime (QDQ, per-channel weights), as bench/int8.py makes them
        int8_models = {"dscnn": onnx_models.dscnn, "resnet8": onnx_models.resnet8,
                       "mobilenet": onnx_models.mobilenet_v1}
        for name, make_f32 in int8_models.items():
            f32 = d / f"{name}_f.onnx"
            onnx.save(make_f32(1), f32)
            q = int8.quantized(f32)
            aot("compile", str(q), "-o", str(d / f"{name}_int8.c"))
            tiny[f"{name} int8"] = mlvm.compile(q)
        resnet = mlvm.compile(d / "resnet8.onnx")
        sources = {"mlp": ROOT / "samples/mlp/mlp.mlir", "cnn28": d / "cnn28.onnx",
                   "cnn28 --no-workspaces": d / "cnn28.onnx", "resnet8": d / "resnet8.onnx",
                   "resnet8 --no-workspaces": d / "resnet8.onnx", "dscnn": d / "dscnn.onnx",
                   "mobilenet": d / "mobilenet.onnx", "autoencoder": d / "autoencoder.onnx",
                   **{f"{name} int8": d / f"{name}_f.onnx" for name in int8_models}}
        hosts = {"mlp": mlvm.compile(ROOT / "samples/mlp/mlp.mlir", params=d / "mlp.npz"),
                 "cnn28": cnn, "cnn28 --no-workspaces": cnn,
                 "resnet8": resnet, "resnet8 --no-workspaces": resnet, **tiny}
        files = {"mlp": "mlp.c", "cnn28": "cnn28.c", "cnn28 --no-workspaces": "cnn28_nows.c",
                 "resnet8": "resnet8.c", "dscnn": "dscnn.c", "mobilenet": "mobilenet.c",
                 "autoencoder": "autoencoder.c",
                 "resnet8 --no-workspaces": "resnet8_nows.c",
                 **{f"{name} int8": f"{name}_int8.c" for name in int8_models}}
        for name, host in hosts.items():
            info = host.functions["main"]
            inputs = [np.random.default_rng(7).standard_normal(s.shape).astype(s.dtype) for s in info.inputs]
            res = harness.run(d / files[name], info, inputs, "m4", count=True)
            assert res.instructions is not None and res.stack_stated is not None
            macs = multiply_adds(sources[name])
            arena = arena_bytes(d / files[name])
            rows.append(f"| {name} | {macs:,} | {res.instructions:,} | {res.instructions / macs:.2f} "
                        f"| {res.text_bytes:,} B | {arena:,} B | {res.stack_call:,} B "
                        f"| {res.stack_stated:,} B | {arena + res.stack_call:,} B |")
    table = "\n".join([
        "| model | multiply-adds | instructions / inference | instructions / MAC | flash (text) "
        "| arena | stack measured | stack stated | RAM |",
        "|---|---|---|---|---|---|---|---|---|", *rows]) + "\n"
    print(table, end="")
    if not args.no_readme:
        embedded_tables.write_readme("embedded", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
