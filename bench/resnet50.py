"""ResNet-50 from ONNX: import + C generation time, build time, peak memory,
and batch-1 time side by side with onnxruntime (one thread).

The model is the onnx package's `light_resnet50.onnx` (the ResNet-50
architecture of the backend suite's real models, 25.6 M parameters) with
its weights replaced by seeded He-initialised ones (the light file's
weights are placeholders) and BatchNormalization statistics near 1, so
activations stay in range through all 50 layers. Both runtimes get the
same file. Times are the best of 5 rounds of calls, mlvm and onnxruntime
interleaved per round; outputs are compared first.

    python bench/resnet50.py [--calls N]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

import mlvm

import zoo  # bench/zoo.py: the light models with seeded weights


def model_file(d: Path) -> Path:
    """The light model with seeded weights (bench/zoo.py's, shared by both)."""
    path, _, _ = zoo.model_file(zoo.LIGHT / "light_resnet50.onnx", d)
    return path


def timed_child(code: str) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of a fresh Python running `code`."""
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code + "\nimport resource\n"
                          "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
                         check=True, capture_output=True, text=True)
    return time.perf_counter() - t, int(out.stdout.split()[-1]) * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=10)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="mlvm-resnet50-")  # removed at exit, even on an error
    d = Path(tmp.name)
    path = model_file(d)
    params = sum(int(np.prod(t.dims)) for t in onnx.load(path).graph.initializer)
    imp_s, imp_rss = timed_child(
        f"from mlvm.cli import aot_main; aot_main(['compile', {str(path)!r}, '-o', {str(d / 'r.c')!r}])")
    os.environ["MLVM_CACHE_DIR"] = str(d / "cache")  # a cold build
    t = time.perf_counter()
    m = mlvm.compile(path)
    build_s = time.perf_counter() - t
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    got, want = m.main(x), sess.run(None, {name: x})[0]
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    fns = {"mlvm": lambda: m.main(x), "ort": lambda: sess.run(None, {name: x})}
    best = {k: float("inf") for k in fns}
    for _ in range(5):
        for k, fn in fns.items():
            t = time.perf_counter()
            for _ in range(args.calls):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t) / args.calls * 1e3)
    kp = ctypes.CDLL(str(m.path)).mlvm_kernel_path
    kp.restype = ctypes.c_char_p
    print(f"ResNet-50 ({params / 1e6:.1f} M parameters), kernel path {kp().decode()}, one thread")
    print("| import + C (mlvm-aot compile) | peak RSS | mlvm.compile (C, cc, link) | "
          "mlvm B=1 | onnxruntime B=1 | mlvm / onnxruntime | max rel. error |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {imp_s:.1f} s | {imp_rss / 2**20:.0f} MiB | {build_s:.1f} s | {best['mlvm']:.1f} ms | "
          f"{best['ort']:.1f} ms | {best['mlvm'] / best['ort']:.2f}x | {err:.1e} |")


if __name__ == "__main__":
    main()
