"""`mlvm-aot verify model.onnx`: the compiled model next to onnxruntime.

Compiles the model (the cache of `mlvm.compile`), runs it and onnxruntime
(the optional extra `pip install 'mlvm[onnx]'`, one thread) on the same
inputs, seeded random ones or `--inputs x.npz`, and prints per output the
largest absolute error and the largest distance in units in the last
place. Exit 1 when an output is off by more than `--atol` + `--rtol` times
its largest magnitude (integers and booleans: any difference), or its shape
or type differs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from mlvm.diagnostics import MlvmError

HELP = "run an ONNX model compiled and in onnxruntime, compare the outputs"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="model (.onnx)")
    p.add_argument("--inputs", metavar="X.npz",
                   help="the inputs, by graph input name (default: seeded random ones)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--rtol", type=float, default=1e-4,
                   help="tolerance relative to an output's largest magnitude (default 1e-4)")
    p.add_argument("--atol", type=float, default=1e-6, help="absolute tolerance (default 1e-6)")


def random_input(dtype: np.dtype, shape: tuple[int, ...], g: np.random.Generator) -> np.ndarray:
    """Normal floats, small non-negative integers (valid indices and
    shapes in most models), random booleans."""
    if dtype == np.bool_:
        return g.integers(0, 2, size=shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return g.integers(0, 4, size=shape).astype(dtype)
    return g.standard_normal(shape).astype(dtype)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> int:
    """Largest number of representable floats between a and b (NaN with
    NaN 0, NaN with a number the largest int64)."""
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia = a.view(bits).astype(np.int64)
    ib = b.view(bits).astype(np.int64)
    top = np.int64(1) << (8 * a.dtype.itemsize - 1)
    # sign-magnitude to a monotonic integer line
    ia = np.where(ia < 0, -(ia + top), ia)
    ib = np.where(ib < 0, -(ib + top), ib)
    d = np.abs(ia - ib)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    d = np.where(nan_a & nan_b, 0, np.where(nan_a | nan_b, np.iinfo(np.int64).max, d))
    return int(d.max(initial=0))


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    """Prints one line for an output; whether it is within tolerance."""
    if got.shape != want.shape or got.dtype != want.dtype:
        print(f"{name}: shape/type {got.shape} {got.dtype}, onnxruntime {want.shape} {want.dtype}")
        return False
    if not np.issubdtype(got.dtype, np.floating):
        wrong = int(np.count_nonzero(got != want))
        print(f"{name}: {got.dtype} {list(got.shape)}: {wrong} of {got.size} elements differ")
        return wrong == 0
    g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    err = np.where(both_nan | (g == w), 0.0, np.abs(g - w))  # equal infinities agree
    finite = w[np.isfinite(w)]
    scale = float(np.max(np.abs(finite), initial=0.0))
    worst = float(np.max(err, initial=0.0))
    ok = bool(np.all(err <= atol + rtol * scale))
    print(f"{name}: {got.dtype} {list(got.shape)}: max abs error {worst:.3g} "
          f"(largest |output| {scale:.3g}), max ulp distance {ulp_distance(got, want)}"
          f"{'' if ok else ' -- past the tolerance'}")
    return ok


def run(args: argparse.Namespace) -> int:
    try:
        import onnx
        import onnxruntime as ort
    except ImportError:
        raise MlvmError(f"{args.input}: error: verify needs onnx and onnxruntime "
                        "(pip install 'mlvm[onnx]')") from None
    import mlvm

    from mlvm.cli import _input_shapes

    shapes = _input_shapes(args.input_shape)
    m = mlvm.compile(args.input, input_shapes=shapes or None)
    info = m.functions["main"]
    names = [s.name for s in info.inputs]
    if args.inputs is not None:
        from mlvm.pipeline import load_params

        given = load_params(args.inputs)
        missing = [n for n in names if n not in given]
        if missing:
            raise MlvmError(f"{args.inputs}: error: no array for input '{missing[0]}'")
        feeds = {n: np.ascontiguousarray(given[n]) for n in names}
    else:
        g = np.random.default_rng(args.seed)
        feeds = {s.name: random_input(np.dtype(s.dtype), tuple(s.shape), g) for s in info.inputs}
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    try:
        sess = ort.InferenceSession(args.input, so, providers=["CPUExecutionProvider"])
        model = onnx.load(args.input, load_external_data=False)
        want: list[Any] = sess.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - onnxruntime's own refusal, in one line
        raise MlvmError(f"{args.input}: error: onnxruntime: {str(e).strip().splitlines()[0]}") from None
    got = m.main(**feeds)
    got = list(got) if isinstance(got, tuple) else [got]
    outs = [o.name for o in model.graph.output]
    ok = True
    for name, gv, wv in zip(outs, got, want, strict=True):
        ok = compare(name, np.asarray(gv), np.asarray(wv), args.rtol, args.atol) and ok
    return 0 if ok else 1


def main_for(args: argparse.Namespace) -> int:
    """`run` with one-line errors (for the CLI)."""
    try:
        return run(args)
    except MlvmError as e:
        print(str(e).splitlines()[0], file=sys.stderr)
        return 1
