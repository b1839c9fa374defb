"""int8 against f32, side by side in one run (one thread): for each model,
mlvm f32, mlvm int8 (the mlvm-fuse-qdq integer path), onnxruntime f32 and
onnxruntime int8, best of 5 rounds of calls, the four interleaved per round.

Models: the CNN of tests/frontend/onnx/test_qdq.py (16 channels, 16x16),
and the ResNet-8 and DS-CNN of `make bench` (bench/onnx_models.py), each
quantized by onnxruntime's static quantizer after its own pre-processing
(quant_pre_process, which folds BatchNormalization into the convolutions):
QDQ, per-channel s8 weights, u8 activations, 8 seeded calibration inputs.
Checks first that mlvm's int8 output equals onnxruntime's bit for bit.

    python bench/int8.py [--calls N]
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "frontend" / "onnx"))
sys.path.insert(0, str(ROOT / "bench"))

import mlvm  # noqa: E402
import onnx_models  # noqa: E402
from onnxruntime.quantization import QuantFormat, QuantType, quantize_static  # noqa: E402
from onnxruntime.quantization.shape_inference import quant_pre_process  # noqa: E402
from test_qdq import Calibration, cnn  # noqa: E402


def quantized(f32: Path) -> Path:
    model = onnx.load(f32)
    inp = model.graph.input[0]
    shape = tuple(d.dim_value for d in inp.type.tensor_type.shape.dim)
    pre, out = f32.with_suffix(".pre.onnx"), f32.with_suffix(".qdq.onnx")
    quant_pre_process(str(f32), str(pre), skip_symbolic_shape=True)
    quantize_static(str(pre), str(out), Calibration(inp.name, shape), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return out


def models(d: Path) -> dict[str, Path]:
    out = {"small CNN 16x16": cnn(d / "cnn.onnx")}
    for name, make in (("ResNet-8 B=1", onnx_models.resnet8), ("DS-CNN B=1", onnx_models.dscnn)):
        path = d / f"{name.split()[0].lower()}.onnx"
        onnx.save(make(1), path)
        out[name] = path
    return out


def best_us(fns: dict[str, Callable[[], object]], calls: int) -> dict[str, float]:
    best = {k: float("inf") for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(5):
        for k, fn in fns.items():
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t) / calls * 1e6)
    return best


def qkernel_path(m: mlvm.Module) -> str:
    fn = ctypes.CDLL(str(m.path)).mlvm_qkernel_path
    fn.restype = ctypes.c_char_p
    return fn().decode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="mlvm-int8-")  # removed at exit, even on an error
    d = Path(tmp.name)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    print("| model | mlvm f32 | mlvm int8 | onnxruntime f32 | onnxruntime int8 | "
          "mlvm int8 / mlvm f32 | mlvm int8 / onnxruntime int8 |")
    print("|---|---|---|---|---|---|---|")
    path = "?"
    for name, f32 in models(d).items():
        qdq = quantized(f32)
        inp = ort.InferenceSession(str(f32), so, providers=["CPUExecutionProvider"]).get_inputs()[0]
        x = np.random.default_rng(0).standard_normal(inp.shape).astype(np.float32)
        mf, mq = mlvm.compile(f32), mlvm.compile(qdq)
        of = ort.InferenceSession(str(f32), so, providers=["CPUExecutionProvider"])
        oq = ort.InferenceSession(str(qdq), so, providers=["CPUExecutionProvider"])
        if not np.array_equal(mq.main(x), oq.run(None, {inp.name: x})[0]):
            raise SystemExit(f"{name}: mlvm int8 differs from onnxruntime int8")
        path = qkernel_path(mq)
        t = best_us({"mf": lambda: mf.main(x), "mq": lambda: mq.main(x),
                     "of": lambda: of.run(None, {inp.name: x}),
                     "oq": lambda: oq.run(None, {inp.name: x})}, args.calls)
        print(f"| {name} | {t['mf']:.1f} us | {t['mq']:.1f} us | {t['of']:.1f} us | {t['oq']:.1f} us | "
              f"{t['mq'] / t['mf']:.2f}x | {t['mq'] / t['oq']:.2f}x |")
    print(f"\nint8 kernel path: {path}; outputs bit-identical to onnxruntime int8")


if __name__ == "__main__":
    main()
