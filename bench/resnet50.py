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
from onnx import numpy_helper

import mlvm


def _value(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if len(shape) >= 2:  # conv / dense weights: He initialisation
        return rng.standard_normal(shape) * np.sqrt(2.0 / int(np.prod(shape[1:])))
    if name.endswith("_riv_0") or "var" in name:  # BatchNormalization variance
        return 1.0 + 0.1 * rng.random(shape)
    if name.endswith("_s_0"):  # BatchNormalization scale
        return 0.5 + 0.1 * rng.random(shape)
    return 0.05 * rng.standard_normal(shape)  # biases and means


def model_file(d: Path) -> Path:
    """The light model's weights are ConstantOfShape nodes (of shapes kept
    as initializers) and its BatchNormalization statistics graph inputs:
    each becomes an initializer of seeded values."""
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
    m = onnx.load(light)
    rng = np.random.default_rng(0)
    shapes = {t.name: tuple(int(v) for v in numpy_helper.to_array(t).reshape(-1))
              for t in m.graph.initializer}
    weights, nodes = [], []
    for n in m.graph.node:
        value = next((a.t for a in n.attribute if a.name == "value"), None)
        if n.op_type == "ConstantOfShape" and value is not None and value.data_type == onnx.TensorProto.FLOAT:
            name = n.output[0]
            weights.append(numpy_helper.from_array(
                _value(name, shapes[n.input[0]], rng).astype(np.float32), name))
        else:
            nodes.append(n)
    data = m.graph.input[0]
    for inp in m.graph.input[1:]:  # BatchNormalization statistics, fed as inputs by the suite
        if inp.name in shapes:
            continue
        shape = tuple(d.dim_value for d in inp.type.tensor_type.shape.dim)
        weights.append(numpy_helper.from_array(_value(inp.name, shape, rng).astype(np.float32), inp.name))
    used = {i for n in nodes for i in n.input}
    kept = [t for t in m.graph.initializer if t.name in used]  # the shapes of the remaining ones
    g = onnx.helper.make_graph(nodes, "resnet50", [data], list(m.graph.output), weights + kept)
    out = onnx.helper.make_model(g, opset_imports=list(m.opset_import))
    out.ir_version = max(m.ir_version, 4)  # initializers that are not graph inputs
    path = d / "resnet50.onnx"
    onnx.save(out, path)
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
