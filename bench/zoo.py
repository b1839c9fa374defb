"""Real model architectures from ONNX, side by side with onnxruntime.

The models are the onnx package's "light" copies of the ONNX model zoo's
classic networks (AlexNet, DenseNet-121, Inception v1 and v2, ResNet-50,
ShuffleNet, SqueezeNet, VGG-19, ZFNet-512), as their exporters wrote them:
their weights are ConstantOfShape placeholders, which this script replaces
with seeded values (He-initialised convolution and dense weights,
BatchNormalization statistics near 1), so that activations stay in range.
mlvm and onnxruntime get the same file, batch 1, one thread (pin the process
to one CPU with `taskset -c 1`). Each model's output is compared with
onnxruntime's before it is timed; times are the median over rounds in which
the two runtimes take turns (`--rounds`, each a batch of calls of about
`--batch-ms`), the ratio the median of the rounds' ratios.

    taskset -c 1 python bench/zoo.py [--models REGEX] [--rounds N]
    taskset -c 1 python bench/zoo.py --layers resnet50   # its convolutions one by one
    taskset -c 1 python bench/zoo.py --int8   # each quantized, against onnxruntime int8
    taskset -c 1 python bench/zoo.py --int8 --activations s8   # s8 activations (quantize_static's default)
"""

from __future__ import annotations

import argparse
import ctypes
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

import mlvm
from mlvm.codegen.cc import runtime_library

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"

# ConstantOfShape placeholders and the BatchNormalization statistics that the
# files take as graph inputs get values by the input slot that consumes them.
_BN_SLOTS = {1: "scale", 2: "shift", 3: "shift", 4: "var"}


def _consumers(m: onnx.ModelProto) -> dict[str, tuple[str, int]]:
    """Each value's first consumer (op type, input slot), seen through
    Unsqueeze (DenseNet and Inception v2 scale channels by Unsqueeze + Mul)."""
    first: dict[str, tuple[str, int]] = {}
    for n in m.graph.node:
        for i, name in enumerate(n.input):
            first.setdefault(name, (n.op_type, i))
    through = {n.input[0]: n.output[0] for n in m.graph.node if n.op_type == "Unsqueeze"}
    out = {}
    for name in first:
        seen = name
        while seen in through:
            seen = through[seen]
        out[name] = first.get(seen, first[name])
    return out


def _value(shape: tuple[int, ...], use: tuple[str, int], rng: np.random.Generator) -> np.ndarray:
    op, slot = use
    if len(shape) >= 2:  # convolution / dense weights: He initialisation
        return rng.standard_normal(shape) * np.sqrt(2.0 / int(np.prod(shape[1:])))
    kind = _BN_SLOTS.get(slot) if op == "BatchNormalization" else ("scale" if op == "Mul" else "shift")
    if kind == "var":
        return 1.0 + 0.1 * rng.random(shape)
    if kind == "scale":
        return 0.5 + 0.1 * rng.random(shape)
    return 0.05 * rng.standard_normal(shape)


def model_file(light: Path, out_dir: Path) -> tuple[Path, str, tuple[int, ...]]:
    """A copy of a light model with seeded weights as initializers; its path,
    data input name and shape."""
    m = onnx.load(light)
    rng = np.random.default_rng(0)
    shapes = {t.name: tuple(int(v) for v in numpy_helper.to_array(t).reshape(-1))
              for t in m.graph.initializer}
    use = _consumers(m)
    weights, nodes = [], []
    for n in m.graph.node:
        value = next((a.t for a in n.attribute if a.name == "value"), None)
        if n.op_type == "ConstantOfShape" and value is not None and value.data_type == onnx.TensorProto.FLOAT:
            name = n.output[0]
            weights.append(numpy_helper.from_array(
                _value(shapes[n.input[0]], use[name], rng).astype(np.float32), name))
        else:
            nodes.append(n)
    data = next(i for i in m.graph.input if len(i.type.tensor_type.shape.dim) == 4)
    for inp in m.graph.input:  # statistics fed as graph inputs by the backend suite
        if inp is data or inp.name in shapes:
            continue
        shape = tuple(d.dim_value for d in inp.type.tensor_type.shape.dim)
        weights.append(numpy_helper.from_array(
            _value(shape, use[inp.name], rng).astype(np.float32), inp.name))
    used = {i for n in nodes for i in n.input}
    kept = [t for t in m.graph.initializer if t.name in used]  # the shapes that stay
    g = onnx.helper.make_graph(nodes, light.stem, [data], list(m.graph.output), weights + kept)
    out = onnx.helper.make_model(g, opset_imports=list(m.opset_import))
    out.ir_version = max(m.ir_version, 4)  # initializers that are not graph inputs
    path = out_dir / f"{light.stem.removeprefix('light_')}.onnx"
    onnx.save(out, path)
    dims = tuple(d.dim_value for d in data.type.tensor_type.shape.dim)
    return path, data.name, dims


def _batch(fn: Callable[[], object], calls: int) -> float:
    t = time.thread_time()
    for _ in range(calls):
        fn()
    return (time.thread_time() - t) / calls


def measure(path: Path, data: str, shape: tuple[int, ...], rounds: int, batch_ms: float,
            int8: bool = False) -> dict[str, object]:
    row: dict[str, object] = {"params": sum(int(np.prod(t.dims)) for t in onnx.load(path).graph.initializer)}
    t = time.perf_counter()
    try:
        m = mlvm.compile(path)
    except mlvm.MlvmError as e:
        row["error"] = str(e).splitlines()[0]
        return row
    row["compile_s"] = time.perf_counter() - t
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    got, want = m.main(x), sess.run(None, {data: x})[0]
    row["rel_err"] = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    if int8:  # quantized outputs: how many differ from onnxruntime's, over three inputs
        xs = [np.random.default_rng(seed).standard_normal(shape).astype(np.float32) for seed in (1, 2, 3)]
        row["differ"] = sum(int(np.sum(m.main(v) != sess.run(None, {data: v})[0])) for v in xs)
        row["outputs"] = 3 * int(want.size)
    row.update(_timed(m, sess, data, x, rounds, batch_ms))
    return row


def _timed(m: Any, sess: ort.InferenceSession, data: str, x: np.ndarray, rounds: int,
           batch_ms: float) -> dict[str, object]:
    """Medians of the two runtimes taking turns, their ratio, the kernel path."""
    fns = {"mlvm": lambda: m.main(x), "ort": lambda: sess.run(None, {data: x})}
    calls = max(1, int(batch_ms * 1e-3 / _batch(fns["ort"], 1)))
    times: dict[str, list[float]] = {k: [] for k in fns}
    for r in range(rounds):
        for k in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            times[k].append(_batch(fns[k], calls))
    kp = ctypes.CDLL(str(m.path)).mlvm_kernel_path
    kp.restype = ctypes.c_char_p
    return {"mlvm_ms": statistics.median(times["mlvm"]) * 1e3, "ort_ms": statistics.median(times["ort"]) * 1e3,
            "ratio": statistics.median(a / b for a, b in zip(times["mlvm"], times["ort"])),
            "path": kp().decode()}


def quantized_file(path: Path, activations: str = "u8") -> Path:
    """The model quantized by onnxruntime's static quantizer as bench/int8.py
    does (QDQ, per-channel s8 weights, u8 or s8 activations, 8 seeded
    calibration inputs), after moving it to opset 13 (per-channel
    DequantizeLinear)."""
    from onnx import version_converter
    from onnxruntime.quantization import QuantType

    from int8 import quantized

    m = onnx.load(path)
    if m.opset_import[0].version < 13:
        onnx.save(version_converter.convert_version(m, 13), path)
    return quantized(path, QuantType.QInt8 if activations == "s8" else QuantType.QUInt8)


def conv_layers(path: Path) -> Counter[tuple[Any, ...]]:
    """The model's convolutions, by (input C, H, W), weight shape, strides,
    pads, groups, bias: how many of each."""
    m = onnx.shape_inference.infer_shapes(onnx.load(path))
    shapes = {v.name: tuple(d.dim_value for d in v.type.tensor_type.shape.dim)
              for v in list(m.graph.value_info) + list(m.graph.input)}
    inits = {t.name: tuple(t.dims) for t in m.graph.initializer}
    out: Counter[tuple[Any, ...]] = Counter()
    for n in m.graph.node:
        if n.op_type != "Conv":
            continue
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        out[(shapes[n.input[0]][1:], inits[n.input[1]], tuple(a.get("strides", (1, 1))),
             tuple(a.get("pads", (0, 0, 0, 0))), int(a.get("group", 1)), len(n.input) > 2)] += 1
    return out


def layer_model(key: tuple[Any, ...], d: Path) -> Path:
    """One convolution + ReLU of `key` (conv_layers), seeded weights."""
    (c, h, w), ws, st, pd, grp, bias = key
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(
        (rng.standard_normal(ws) * np.sqrt(2.0 / int(np.prod(ws[1:])))).astype(np.float32), "w")]
    if bias:
        inits.append(numpy_helper.from_array((0.05 * rng.standard_normal(ws[0])).astype(np.float32), "b"))
    nodes = [onnx.helper.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["t"],
                                   strides=list(st), pads=list(pd), group=grp, kernel_shape=list(ws[2:])),
             onnx.helper.make_node("Relu", ["t"], ["y"])]
    g = onnx.helper.make_graph(nodes, "layer", [onnx.helper.make_tensor_value_info(
        "x", onnx.TensorProto.FLOAT, [1, c, h, w])], [onnx.helper.make_tensor_value_info(
            "y", onnx.TensorProto.FLOAT, None)], inits)
    path = d / ("conv_" + "_".join(str(v) for v in (c, h, w, *ws, *st, *pd, grp, int(bias))) + ".onnx")
    onnx.save(onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 13)]), path)
    return path


def layers(light: Path, rounds: int, batch_ms: float) -> None:
    """Each distinct convolution of a model alone against onnxruntime, and
    the ones that cost the most time over onnxruntime's (times the number
    of layers of that shape): where to look first."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlvm-zoo-layers-") as tmp:
        path, _, _ = model_file(light, Path(tmp))
        for key, count in conv_layers(path).items():
            row = measure(layer_model(key, Path(tmp)), "x", (1, *key[0]), rounds, batch_ms)
            if "error" in row:
                print(f"{key}: not supported: {row['error']}", flush=True)
                continue
            rows.append((float(row["mlvm_ms"]) * count, float(row["ort_ms"]) * count,  # type: ignore[arg-type]
                         float(row["ratio"]), count, key))  # type: ignore[arg-type]
            print(f"{key} x{count}: {row['ratio']:.2f}x", flush=True)
    tm, to = sum(r[0] for r in rows), sum(r[1] for r in rows)
    print(f"\nall convolutions, each counted as often as it occurs: mlvm {tm:.2f} ms, "
          f"onnxruntime {to:.2f} ms, {tm / to:.3f}x\n"
          "| ms over onnxruntime | mlvm / onnxruntime | layers | (C, H, W), weight, strides, pads, groups, bias |\n"
          "|---|---|---|---|")
    for r in sorted(rows, key=lambda r: r[1] - r[0])[:15]:
        print(f"| {r[0] - r[1]:+.3f} | {r[2]:.2f}x | {r[3]} | {r[4]} |")


def _selected(models: str, out_dir: Path) -> Iterator[tuple[str, Path, str, tuple[int, ...]]]:
    """(name, file, data input, its shape) of each light model whose name
    matches the regular expression `models`, written to out_dir."""
    for light in sorted(LIGHT.glob("light_*.onnx")):
        name = light.stem.removeprefix("light_")
        if re.search(models, name) is not None:
            yield (name, *model_file(light, out_dir))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=".", help="regular expression over the model names")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch-ms", type=float, default=200.0)
    ap.add_argument("--layers", metavar="MODEL",
                    help="time each distinct convolution of MODEL (e.g. resnet50) alone instead")
    ap.add_argument("--int8", action="store_true",
                    help="each model quantized (QDQ, --activations) against onnxruntime's int8")
    ap.add_argument("--activations", choices=("u8", "s8"), default="u8",
                    help="with --int8: the activations' type (s8 is quantize_static's default)")
    args = ap.parse_args()
    if args.activations != "u8" and not args.int8:
        ap.error("--activations needs --int8")
    if args.int8:
        int8_table(args)
        return
    if args.layers:
        layers(LIGHT / f"light_{args.layers}.onnx", args.rounds, min(args.batch_ms, 50.0))
        return
    runtime_library()  # built once up front, so that no model's compile time includes it
    print("| model | parameters | mlvm.compile s | mlvm ms | onnxruntime ms | mlvm / onnxruntime | max rel. error |")
    print("|---|---|---|---|---|---|---|")
    ratios, kernel_path = [], "?"
    with tempfile.TemporaryDirectory(prefix="mlvm-zoo-") as tmp:
        for name, path, data, shape in _selected(args.models, Path(tmp)):
            row = measure(path, data, shape, args.rounds, args.batch_ms)
            params = f"{int(row['params']) / 1e6:.1f} M"  # type: ignore[call-overload]
            if "error" in row:
                print(f"| {name} | {params} | not supported: {row['error']} | | | | |", flush=True)
                continue
            ratios.append(float(row["ratio"]))  # type: ignore[arg-type]
            kernel_path = str(row["path"])
            print(f"| {name} | {params} | {row['compile_s']:.1f} | {row['mlvm_ms']:.2f} | {row['ort_ms']:.2f} | "
                  f"{row['ratio']:.2f}x | {row['rel_err']:.1e} |", flush=True)
    _summary(ratios, kernel_path, "")


def _summary(ratios: list[float], kernel_path: str, what: str) -> None:
    """The table's last line: the geometric mean of the ratios measured."""
    if ratios:
        print(f"\ngeometric mean mlvm / onnxruntime{what}: {float(np.exp(np.mean(np.log(ratios)))):.3f}x "
              f"over {len(ratios)} models; kernel path {kernel_path}")


def int8_table(args: argparse.Namespace) -> None:
    """Each model quantized, mlvm against onnxruntime's int8 execution: the
    outputs that differ over three inputs, and the times."""
    runtime_library()
    print(f"{args.activations} activations, per-channel s8 weights\n")
    print("| model | quantize s | mlvm.compile s | mlvm int8 ms | onnxruntime int8 ms | mlvm / onnxruntime | "
          "outputs differing |")
    print("|---|---|---|---|---|---|---|")
    ratios, kernel_path = [], "?"
    with tempfile.TemporaryDirectory(prefix="mlvm-zoo-int8-") as tmp:
        for name, path, data, shape in _selected(args.models, Path(tmp)):
            t = time.perf_counter()
            q = quantized_file(path, args.activations)
            tq = time.perf_counter() - t
            row = measure(q, data, shape, args.rounds, args.batch_ms, int8=True)
            if "error" in row:
                print(f"| {name} | {tq:.1f} | not supported: {row['error']} | | | | |", flush=True)
                continue
            ratios.append(float(row["ratio"]))  # type: ignore[arg-type]
            kernel_path = str(row["path"])
            print(f"| {name} | {tq:.1f} | {row['compile_s']:.1f} | {row['mlvm_ms']:.2f} | {row['ort_ms']:.2f} | "
                  f"{row['ratio']:.2f}x | {row['differ']} of {row['outputs']} |", flush=True)
    _summary(ratios, kernel_path, " (int8)")


if __name__ == "__main__":
    main()
