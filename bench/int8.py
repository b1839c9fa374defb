"""int8 against f32, side by side in one run (one thread): for each model,
mlvm f32, mlvm int8 (the mlvm-fuse-qdq integer path), onnxruntime f32 and
onnxruntime int8. In each of `--rounds` rounds every runner times one
batch of calls (about `--batch-ms`) on the thread's CPU clock, in an
order that rotates from round to round; times are the medians over rounds,
and a ratio is the median over rounds of the ratio of the two batches of a
round (which slow spells of a shared machine disturb much less than
either time).

Models: the CNN of tests/frontend/onnx/test_qdq.py (16 channels, 16x16),
and the ResNet-8, DS-CNN and MobileNet-v1-0.25 (96x96, the visual wake
words model) of `make bench` (bench/onnx_models.py), each
quantized by onnxruntime's static quantizer after its own pre-processing
(quant_pre_process, which folds BatchNormalization into the convolutions):
QDQ, per-channel s8 weights, u8 activations, 8 seeded calibration inputs.
Checks first that mlvm's int8 output equals onnxruntime's bit for bit.
The transformer encoder block of `make bench` (S=128, B=1) twice: quantized
statically as those (its matmuls, reshapes, transposes, softmax and adds
in QDQ; bit for bit too), and by onnxruntime's dynamic quantizer (`quantize_dynamic`: its MatMuls as
DynamicQuantizeLinear and MatMulInteger, s8 weights): its f32 parts
(layer norms, softmax, GELU) round apart from onnxruntime's by an ulp, so
the quantized activations may differ; its largest difference from
onnxruntime's int8 output is printed.

    python bench/int8.py [--rounds N] [--batch-ms MS]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
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
from mlvm.frontend.onnx.ort_int8 import onnxruntime_saturates  # noqa: E402
import onnx_models  # noqa: E402
from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static  # noqa: E402
from onnxruntime.quantization.shape_inference import quant_pre_process  # noqa: E402
from test_qdq import Calibration, cnn  # noqa: E402


def quantized(f32: Path, activations: QuantType = QuantType.QUInt8) -> Path:
    """f32 quantized by onnxruntime's static quantizer beside it: QDQ,
    per-channel s8 weights (within [-64, 64] where onnxruntime's own products would
    saturate, mlvm.frontend.onnx.ort_int8), `activations` (u8 unless asked:
    s8 is quantize_static's default), 8 seeded calibration inputs."""
    model = onnx.load(f32)
    inp = model.graph.input[0]
    shape = tuple(d.dim_value for d in inp.type.tensor_type.shape.dim)
    tag = "" if activations == QuantType.QUInt8 else ".s8"
    pre, out = f32.with_suffix(".pre.onnx"), f32.with_suffix(f"{tag}.qdq.onnx")
    quant_pre_process(str(f32), str(pre), skip_symbolic_shape=True)
    quantize_static(str(pre), str(out), Calibration(inp.name, shape), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=activations, weight_type=QuantType.QInt8,
                    reduce_range=onnxruntime_saturates())
    return out


def quantized_dynamic(f32: Path) -> Path:
    """f32 quantized by onnxruntime's dynamic quantizer beside it: s8
    weights (within [-64, 64] where its own products would saturate)."""
    out = f32.with_suffix(".dq.onnx")
    quantize_dynamic(str(f32), str(out), weight_type=QuantType.QInt8, reduce_range=onnxruntime_saturates())
    return out


def models(d: Path) -> dict[str, tuple[Path, bool]]:
    """name: (f32 model, quantized statically: bit-identical outputs)."""
    out = {"small CNN 16x16": (cnn(d / "cnn.onnx"), True)}
    for name, make in (("ResNet-8 B=1", onnx_models.resnet8), ("DS-CNN B=1", onnx_models.dscnn),
                       ("MobileNet-v1-0.25 B=1", onnx_models.mobilenet_v1)):
        path = d / f"{name.split()[0].lower()}.onnx"
        onnx.save(make(1), path)
        out[name] = (path, True)
    path = d / "transformer.onnx"
    onnx.save(onnx_models.transformer(onnx_models.transformer_params(), 1), path)
    out["Transformer S=128 B=1 (static)"] = (path, True)
    out["Transformer S=128 B=1 (dynamic)"] = (path, False)
    return out


def per_call(fn: Callable[[], object], calls: int) -> float:
    t = time.thread_time()
    for _ in range(calls):
        fn()
    return (time.thread_time() - t) / calls


def rounds_us(fns: dict[str, Callable[[], object]], rounds: int, batch_ms: float) -> dict[str, list[float]]:
    """Per runner, its time per call (us) in each round, the runners taking
    turns in a rotating order; batches sized to about batch_ms."""
    calls = {}
    for k, fn in fns.items():
        fn()
        calls[k] = max(1, int(batch_ms * 1e-3 / max(per_call(fn, 20), 1e-7)))
    out: dict[str, list[float]] = {k: [] for k in fns}
    keys = list(fns)
    for r in range(rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            out[k].append(per_call(fns[k], calls[k]) * 1e6)
    return out


def ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def qkernel_path(m: mlvm.Module) -> str:
    fn = ctypes.CDLL(str(m.path)).mlvm_qkernel_path
    fn.restype = ctypes.c_char_p
    return fn().decode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--batch-ms", type=float, default=20.0)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="mlvm-int8-")  # removed at exit, even on an error
    d = Path(tmp.name)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    print("| model | mlvm f32 | mlvm int8 | onnxruntime f32 | onnxruntime int8 | "
          "mlvm int8 / mlvm f32 | mlvm int8 / onnxruntime int8 |")
    print("|---|---|---|---|---|---|---|")
    path = "?"
    notes = []
    for name, (f32, static) in models(d).items():
        qdq = quantized(f32) if static else quantized_dynamic(f32)
        inp = ort.InferenceSession(str(f32), so, providers=["CPUExecutionProvider"]).get_inputs()[0]
        x = np.random.default_rng(0).standard_normal(inp.shape).astype(np.float32)
        mf, mq = mlvm.compile(f32), mlvm.compile(qdq)
        of = ort.InferenceSession(str(f32), so, providers=["CPUExecutionProvider"])
        oq = ort.InferenceSession(str(qdq), so, providers=["CPUExecutionProvider"])
        got, want = mq.main(x), oq.run(None, {inp.name: x})[0]
        if static and not np.array_equal(got, want):
            raise SystemExit(f"{name}: mlvm int8 differs from onnxruntime int8")
        if not static:
            notes.append(f"{name}: largest difference from onnxruntime int8 "
                         f"{float(np.max(np.abs(got - want))):.3g} (outputs up to "
                         f"{float(np.max(np.abs(want))):.3g})")
        path = qkernel_path(mq)
        r = rounds_us({"mf": lambda: mf.main(x), "mq": lambda: mq.main(x),
                       "of": lambda: of.run(None, {inp.name: x}),
                       "oq": lambda: oq.run(None, {inp.name: x})}, args.rounds, args.batch_ms)
        t = {k: statistics.median(v) for k, v in r.items()}
        print(f"| {name} | {t['mf']:.1f} us | {t['mq']:.1f} us | {t['of']:.1f} us | {t['oq']:.1f} us | "
              f"{ratio(r['mq'], r['mf']):.2f}x | {ratio(r['mq'], r['oq']):.2f}x |")
    print(f"\nint8 kernel path: {path}; outputs of the statically quantized models bit-identical "
          "to onnxruntime int8")
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()
