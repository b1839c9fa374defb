"""int8 against f32 on one small CNN, side by side in one run (one thread).

The CNN of tests/frontend/onnx/test_qdq.py (3x3 conv, strided 3x3 conv,
depthwise 3x3, pooling, matmul; 16 channels, 16x16 input), quantized by
onnxruntime's static quantizer (QDQ, per-channel, u8 activations):
mlvm f32, mlvm int8 (the mlvm-fuse-qdq integer path), onnxruntime f32 and
onnxruntime int8. Best of 5 rounds of 300 calls each.

    python bench/int8.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "frontend" / "onnx"))

import mlvm  # noqa: E402
from onnxruntime.quantization import QuantFormat, QuantType, quantize_static  # noqa: E402
from test_qdq import Calibration, cnn  # noqa: E402


def best_us(fn, n: int = 300) -> float:  # noqa: ANN001
    fn()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def main() -> None:
    d = Path(tempfile.mkdtemp())
    f32 = cnn(d / "f32.onnx")
    qdq = d / "qdq.onnx"
    quantize_static(str(f32), str(qdq), Calibration(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    mf, mq = mlvm.compile(f32), mlvm.compile(qdq)
    of = ort.InferenceSession(str(f32), so, providers=["CPUExecutionProvider"])
    oq = ort.InferenceSession(str(qdq), so, providers=["CPUExecutionProvider"])
    rows = {
        "mlvm f32": best_us(lambda: mf.main(x)),
        "mlvm int8": best_us(lambda: mq.main(x)),
        "onnxruntime f32": best_us(lambda: of.run(None, {"x": x})),
        "onnxruntime int8": best_us(lambda: oq.run(None, {"x": x})),
    }
    for k, v in rows.items():
        print(f"{k:18s} {v:9.1f} us")
    print(f"mlvm int8 / mlvm f32: {rows['mlvm int8'] / rows['mlvm f32']:.2f}x time; "
          f"mlvm int8 / onnxruntime int8: {rows['mlvm int8'] / rows['onnxruntime int8']:.2f}x")


if __name__ == "__main__":
    main()
