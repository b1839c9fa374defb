"""`make bench`: mlvm next to numpy and onnxruntime, single-threaded, one run.

    python bench/run.py [--quick] [--clock cpu|wall] [--stat min|median] [--models REGEX]
                        [--batches ROUNDS] [--min-batch SECONDS] [--no-readme]

Models: a no-op (call overhead); the sample MLP at batch 1 and 8, with its
weights [in, out] (MLIR) and in PyTorch layout [out, in] (ONNX Gemm
transB=1); the MLP-Mixer sample at batch 1 and 8; square matmuls of 128 to
1024; Linear layers relu(x @ W.T + b) with W [1024, 1024] at M = 1, 8, 64,
512, in PyTorch layout and pre-transposed; and, at batch 1 and 8, a
ResNet-8 for CIFAR, a DS-CNN keyword spotter, a MobileNet v1 0.25 at 96x96
and a transformer encoder block (bench/onnx_models.py builds them). The
models that exist as ONNX graphs are compiled by mlvm from the same graph
onnxruntime runs. Each is timed, side by side:

  mlvm-py     the compiled module called from Python (`mlvm.compile`, cffi);
  mlvm-C      the same model's generated C called from bench/harness.c (no Python);
  numpy       a numpy implementation (where there is one: not for the CNNs),
              OpenBLAS as numpy's wheel selects it;
  numpy-SKX   the same with OPENBLAS_CORETYPE=SkylakeX (AVX-512 kernels), run
              only on a CPU with avx512f (elsewhere OpenBLAS dies with SIGILL);
  numpy-HSW   the same with OPENBLAS_CORETYPE=Haswell (AVX2 kernels), on a CPU
              with avx2: the peer of mlvm's AVX2 path, which an AVX-512 host
              runs with MLVM_CFLAGS="-std=c99 -O3 -march=haswell -fPIC";
  onnxruntime the ONNX graph, one intra-op and one inter-op thread.

Every runner is checked before it is timed, against the numpy result where
there is one, else against onnxruntime's. One thread everywhere:
OPENBLAS_NUM_THREADS=1, onnxruntime with one intra-op and one inter-op
thread, and the process (children included) pinned to one CPU. The
runners of a model (and of the variants timed with it: the two Linear
layouts) take turns: in each of `--batches` rounds every runner times one
batch of about `--min-batch` seconds of calls, in an order that rotates,
so that a busy spell of a shared machine falls on all of them alike; the
C harness and the numpy children serve their batches over a pipe. A
runner's time is the median of its rounds (`--stat min`: the fastest);
a ratio of two runners (mlvm/ort, and the targets) is the median over
rounds of the ratio of their two batches of the round, timed back to back,
which a slow spell of a shared machine disturbs much less than it does
either time. Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which time
slices given to other processes do not inflate (`--clock wall` for the
wall clock). All rounds are kept in the JSON.

A model mlvm cannot compile (an ONNX op or attribute the importer rejects)
stays in the table as "not supported" with the error; the other runners
still time it.

Prints a table with the ratios mlvm/onnxruntime and mlvm/numpy and the
matmul / conv kernel path the mlvm runtime was built with, the targets met
or missed, writes bench/results/<date>.json and latest.json, a chart
(<date>.png, latest.png), and the table into bench/README.md.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import ctypes  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
sys.path.insert(0, str(ROOT / "samples" / "mlp"))
sys.path.insert(0, str(ROOT / "samples" / "mlp_mixer"))
sys.path.insert(0, str(BENCH))

ALL_RUNNERS = ("mlvm-py", "mlvm-C", "numpy", "numpy-SKX", "numpy-HSW", "onnxruntime")
# OpenBLAS forced to one core type: (coretype, the CPU flag its kernels need).
CORE_RUNNERS = {"numpy-SKX": ("SkylakeX", "avx512f"), "numpy-HSW": ("Haswell", "avx2")}
MATMUL_SIZES = (128, 256, 512, 1024)
LINEAR_M = (1, 8, 64, 512)
LINEAR_N = 1024
BATCHES = (1, 8)

# Targets on one model: (label, model, runner, against, op, limit): runner /
# against (or runner's time in microseconds when `against` is None) `op` limit.
TARGETS = [
    ("MLP-Mixer B=1 <= 0.75x onnxruntime", "mixer-b1", "mlvm-py", "onnxruntime", "<=", 0.75),
    ("MLP-Mixer B=8 <= 0.8x onnxruntime", "mixer-b8", "mlvm-py", "onnxruntime", "<=", 0.8),
    ("MLP B=1 <= 0.5x onnxruntime", "mlp-b1", "mlvm-py", "onnxruntime", "<=", 0.5),
    ("no-op from Python <= 1.5 us", "noop", "mlvm-py", None, "<=", 1.5),
    ("no-op from the C harness <= 50 ns", "noop", "mlvm-C", None, "<=", 0.05),
    ("512^3 matmul speed >= 0.9x numpy, OPENBLAS_CORETYPE=SkylakeX (numpy time / mlvm time)",
     "matmul-512", "numpy-SKX", "mlvm-py", ">=", 0.9),
    ("512^3 matmul speed >= 0.9x numpy, default core (numpy time / mlvm time)",
     "matmul-512", "numpy", "mlvm-py", ">=", 0.9),
]
# The vector-math rows (kind "math"): each <= onnxruntime's time.
MATH_LIMIT = 1.0


def _softmax_np(x: Any) -> Any:
    import numpy as np

    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _log_softmax_np(x: Any) -> Any:
    import numpy as np

    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _np_fn(name: str) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        import numpy as np

        return np.exp(x) if name == "exp" else np.tanh(x) if name == "tanh" else 1 / (1 + np.exp(-x))

    return fn


# numpy versions (none for erf: numpy has no vector erf)
MATH_NUMPY: dict[str, Callable[[Any], Any]] = {
    "softmax": _softmax_np, "log-softmax": _log_softmax_np, "exp": _np_fn("exp"),
    "sigmoid": _np_fn("sigmoid"), "tanh": _np_fn("tanh")}

# Targets of mlvm's AVX2 path (kernel path "avx2"), against OpenBLAS's AVX2
# kernels on the same host.
AVX2_TARGETS = [
    (f"AVX2 path: {n}^3 matmul speed >= 0.95x OpenBLAS Haswell (numpy-HSW time / mlvm time)",
     f"matmul-{n}", "numpy-HSW", "mlvm-py", ">=", 0.95)
    for n in (256, 512, 1024)
] + [
    ("AVX2 path: Linear M=1 speed >= 0.95x OpenBLAS Haswell (numpy-HSW time / mlvm time)",
     "linear-pt-m1", "numpy-HSW", "mlvm-py", ">=", 0.95),
]
# Targets over the bench models (kind "model": every row but the no-op, the
# square matmuls and the pre-transposed Linear variants), mlvm from Python.
EVERY_MODEL_LIMIT = 1.0  # each model's mlvm / onnxruntime
GEOMEAN_LIMIT = 0.8  # geometric mean of mlvm / onnxruntime over the models
LINEAR_TOLERANCE = 0.05  # Linear, PyTorch layout / pre-transposed, within 1 +- this


# --------------------------------------------------------------------------
# The host
# --------------------------------------------------------------------------


def core_unavailable(runner: str) -> str | None:
    """Why a numpy runner with a forced OpenBLAS core type cannot run here,
    or None when it can."""
    from mlvm.codegen.cc import host_cpu_flags

    coretype, flag = CORE_RUNNERS[runner]
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"not an x86-64 CPU ({platform.machine()})"
    if flag not in host_cpu_flags():
        return (f"the CPU has no {flag} in /proc/cpuinfo: OpenBLAS's {coretype} "
                "kernels would die with SIGILL")
    return None


def no_avx512() -> bool:
    """Whether this is an x86-64 host without AVX-512 (its default build
    takes the AVX2 kernels, or the portable ones)."""
    from mlvm.codegen.cc import host_cpu_flags

    return platform.machine() in ("x86_64", "AMD64") and "avx512f" not in host_cpu_flags()


# --------------------------------------------------------------------------
# Models: mlvm source (MLIR text and parameters, or the ONNX graph),
# inputs, numpy implementation, ONNX graph
# --------------------------------------------------------------------------


@dataclass
class Model:
    name: str
    label: str
    onnx: Callable[[], Any]  # the ONNX graph (onnxruntime; mlvm too when mlir is None)
    inputs: list[Any]
    mlir: str | None = None  # mlvm's own source, when the model is not compiled from ONNX
    params: dict[str, Any] = field(default_factory=dict)
    numpy_fn: Callable[..., Any] | None = None
    # "micro": no-op, square matmuls; "model": counts in the bench-model
    # targets; "variant": a comparison variant of a model (not counted);
    # "math": one vector-math op, its own target.
    kind: str = "model"
    group: str | None = None  # models of one group are timed side by side (variants)
    results: dict[str, float] = field(default_factory=dict)  # seconds per call (--stat)
    samples: dict[str, list[float]] = field(default_factory=dict)  # one per round
    error: str | None = None  # why mlvm could not compile (or got wrong) this model
    notes: list[str] = field(default_factory=list)  # other runners that could not run
    same_c_as: dict[str, str] = field(default_factory=dict)  # other model of the group: verdict


def mlp_text(batch: int) -> str:
    text = (ROOT / "samples" / "mlp" / "mlp.mlir").read_text()
    return re.sub(r"tensor<1x(784|256|10)xf32>", rf"tensor<{batch}x\1xf32>", text)


def rng_for(name: str) -> Any:
    """A generator of the inputs of model `name`, the same in every process
    and whichever models a run selects."""
    import numpy as np

    return np.random.default_rng(zlib.crc32(name.encode()))


def make_models(quick: bool, select: str | None = None) -> list[Model]:
    """Every model with its data; deterministic, so a child process that
    times numpy rebuilds exactly the same inputs. Quick runs keep the first
    size of each family (batch 1, M = 1, matmuls to 256^3)."""
    import numpy as np

    import gen_params
    import mixer as mx
    import onnx_models as om

    batches = BATCHES[:1] if quick else BATCHES
    models: list[Model] = []
    x0 = np.zeros((1,), np.float32)
    models.append(Model("noop", "no-op", om.noop, [x0], kind="micro",
                        mlir="func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {\n"
                             "  func.return %x : tensor<1xf32>\n}\n", numpy_fn=lambda x: x))
    mp = gen_params.make_params(0)
    mpt = {k: np.ascontiguousarray(v.T) if k.startswith("w") else v for k, v in mp.items()}

    def mlp_np(x: Any) -> Any:
        h = np.maximum(x @ mp["w1"] + mp["b1"], 0)
        h = np.maximum(h @ mp["w2"] + mp["b2"], 0)
        return h @ mp["w3"] + mp["b3"]

    def mlp_pt_np(x: Any) -> Any:
        h = np.maximum(x @ mpt["w1"].T + mpt["b1"], 0)
        h = np.maximum(h @ mpt["w2"].T + mpt["b2"], 0)
        return h @ mpt["w3"].T + mpt["b3"]

    for b in batches:
        name = f"mlp-b{b}"
        x = rng_for(name).standard_normal((b, 784)).astype(np.float32)
        models.append(Model(name, f"MLP B={b}", lambda b=b: om.mlp(mp, b), [x], mlp_text(b), mp,
                            mlp_np))
    for b in batches:
        name = f"mlp-pt-b{b}"
        x = rng_for(name).standard_normal((b, 784)).astype(np.float32)
        models.append(Model(name, f"MLP W[out,in] B={b}", lambda b=b: om.mlp_pytorch(mpt, b), [x],
                            numpy_fn=mlp_pt_np))
    xp = mx.make_params(0)
    for b in batches:
        name = f"mixer-b{b}"
        x = rng_for(name).random((b, mx.IMAGE, mx.IMAGE, mx.CHANNELS_IN), dtype=np.float32)
        models.append(Model(name, f"MLP-Mixer B={b}", lambda b=b: om.mixer(xp, b), [x],
                            mx.mlir_text(b), xp, lambda x: mx.forward(xp, x)))
    for n in MATMUL_SIZES if not quick else MATMUL_SIZES[:2]:
        name = f"matmul-{n}"
        g = rng_for(name)
        a = g.random((n, n), dtype=np.float32)
        bm = g.random((n, n), dtype=np.float32)
        t = f"tensor<{n}x{n}xf32>"
        text = (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
                f'  %0 = "mlvm.matmul"(%a, %b) : ({t}, {t}) -> {t}\n'
                f"  func.return %0 : {t}\n}}\n")
        models.append(Model(name, f"matmul {n}^3", lambda n=n: om.matmul(n), [a, bm], text,
                            numpy_fn=np.matmul, kind="micro"))
    g = rng_for("linear-weights")
    w = (g.standard_normal((LINEAR_N, LINEAR_N)) / np.sqrt(LINEAR_N)).astype(np.float32)
    bias = g.normal(0, 0.1, LINEAR_N).astype(np.float32)
    wt = np.ascontiguousarray(w.T)
    for m in LINEAR_M if not quick else LINEAR_M[:1]:
        x = rng_for(f"linear-m{m}").standard_normal((m, LINEAR_N)).astype(np.float32)
        models.append(Model(f"linear-pt-m{m}", f"Linear W[out,in] M={m}",
                            lambda m=m: om.linear(w, bias, m, pytorch=True), [x],
                            numpy_fn=lambda x: np.maximum(x @ w.T + bias, 0),
                            group=f"linear-m{m}"))
        models.append(Model(f"linear-t-m{m}", f"Linear W[in,out] M={m}",
                            lambda m=m: om.linear(wt, bias, m, pytorch=False), [x],
                            numpy_fn=lambda x: np.maximum(x @ wt + bias, 0), kind="variant",
                            group=f"linear-m{m}"))
    cnns = (("resnet8", "ResNet-8", om.resnet8, (3, 32, 32)),
            ("dscnn", "DS-CNN", om.dscnn, om.DSCNN_INPUT),
            ("mobilenet", "MobileNet-v1-0.25", om.mobilenet_v1, om.MOBILENET_INPUT))
    for key, label, build, shape in cnns:
        for b in batches:
            name = f"{key}-b{b}"
            x = rng_for(name).standard_normal((b, *shape)).astype(np.float32)
            models.append(Model(name, f"{label} B={b}", lambda build=build, b=b: build(b), [x]))
    for op in om.MATH_OPS if not quick else om.MATH_OPS[:1]:
        name = f"math-{op}"
        x = rng_for(name).standard_normal(om.MATH_SHAPE).astype(np.float32) * 4.0
        models.append(Model(name, f"{op} {om.MATH_SHAPE[0]}x{om.MATH_SHAPE[1]}",
                            lambda op=op: om.vector_math(op), [x], numpy_fn=MATH_NUMPY.get(op),
                            kind="math"))
    tp = om.transformer_params()
    for b in batches:
        name = f"transformer-b{b}"
        x = rng_for(name).standard_normal((b, om.SEQ, om.D_MODEL)).astype(np.float32)
        models.append(Model(name, f"Transformer S={om.SEQ} B={b}",
                            lambda b=b: om.transformer(tp, b), [x],
                            numpy_fn=lambda x: om.transformer_numpy(tp, x)))
    if select:
        models = [m for m in models if re.search(select, m.name)]
    return models


# --------------------------------------------------------------------------
# Timing: the runners of one model take turns, one batch of calls each
# --------------------------------------------------------------------------

# A runner times one batch: batch(n) makes one untimed call, then n timed
# calls, and returns the seconds per call.
Batch = Callable[[int], float]


def clock_fn(kind: str) -> Callable[[], float]:
    return time.thread_time if kind == "cpu" else time.perf_counter


def in_process(fn: Callable[[], object], clock: Callable[[], float]) -> Batch:
    def batch(n: int) -> float:
        fn()
        t = clock()
        for _ in range(n):
            fn()
        return (clock() - t) / n

    return batch


def calls_per_batch(batch: Batch, min_batch_s: float) -> int:
    """Calls that take about `min_batch_s` (at least one)."""
    t = min(batch(1) for _ in range(3))
    n = max(1, min(1 << 22, int(min_batch_s / max(t, 1e-9))))
    if n > 1:  # once more, on a batch long enough for the clock
        t = batch(n)
        n = max(1, min(1 << 22, int(min_batch_s / max(t, 1e-9))))
    return n


class RunnerFailed(Exception):
    pass


def interleaved(runners: dict[Any, Batch], rounds: int, min_batch_s: float,
                failed: dict[Any, str]) -> dict[Any, list[float]]:
    """Seconds per call of each runner, one sample per round. In each round
    every runner times one batch, in an order that rotates from round to
    round, so that a slow spell of a shared machine falls on all of them
    alike. A runner that fails is dropped (its reason in `failed`)."""
    live = dict(runners)
    calls: dict[Any, int] = {}
    for name, batch in list(live.items()):
        try:
            calls[name] = calls_per_batch(batch, min_batch_s)
        except RunnerFailed as e:
            failed[name] = str(e)
            del live[name]
    samples: dict[Any, list[float]] = {name: [] for name in live}
    order = list(live)
    for r in range(rounds):
        k = r % len(order) if order else 0
        for name in order[k:] + order[:k]:
            if name not in live:
                continue
            try:
                samples[name].append(live[name](calls[name]))
            except RunnerFailed as e:
                failed[name] = str(e)
                del live[name]
                del samples[name]
    return samples


def close(got: Any, want: Any) -> float:
    """max |got - want| relative to max(1, max |want|)."""
    import numpy as np

    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.max(np.abs(got - want), initial=0.0) / max(1.0, float(np.max(np.abs(want), initial=0.0))))


TOL = 1e-4


class Server:
    """A child process that times batches on request: one number (or line)
    in, the seconds per call out (the C harness's --serve mode, the numpy
    child). It inherits the CPU pin; it waits on a pipe while others run."""

    def __init__(self, what: str, cmd: list[str], env: dict[str, str] | None = None,
                 scale: float = 1.0) -> None:
        self.what = what
        self.scale = scale
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.hello = self._line()

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RunnerFailed(self._death())
        return line.strip()

    def _death(self) -> str:
        rc = self.proc.wait()
        err = (self.proc.stderr.read() if self.proc.stderr else "").strip().splitlines()
        why = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
        if rc == -4:
            why += " (SIGILL: an instruction this CPU does not have)"
        return f"{self.what} died ({why})" + (f": {err[-1]}" if err else "")

    def ask(self, request: str) -> float:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(request + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RunnerFailed(self._death()) from None
        return float(self._line()) * self.scale

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


# --------------------------------------------------------------------------
# numpy, in a child process per OpenBLAS core type
# --------------------------------------------------------------------------


def numpy_child(args: argparse.Namespace) -> int:
    """Serves batches of numpy calls: prints a JSON line (BLAS configuration,
    models), then for each "NAME N" line read prints the seconds per call."""
    import numpy as np

    models = {m.name: m for m in make_models(args.quick, args.models) if m.numpy_fn is not None}
    for m in models.values():  # every model once, before the first time
        np.asarray(m.numpy_fn(*m.inputs))  # type: ignore[misc]
    cfg = ""
    try:
        import threadpoolctl

        info = threadpoolctl.threadpool_info()
        cfg = "; ".join(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} "
                        f"threads={i.get('num_threads')}" for i in info)
    except Exception:  # noqa: BLE001
        pass
    print(json.dumps({"blas": cfg, "models": list(models)}), flush=True)
    clock = clock_fn(args.clock)
    for line in sys.stdin:
        name, n = line.split()
        m = models[name]
        fn, ins = m.numpy_fn, m.inputs
        assert fn is not None
        print(repr(in_process(lambda: fn(*ins), clock)(int(n))), flush=True)
    return 0


class NumpyRunner:
    """A numpy child process with OpenBLAS's default core or `coretype`."""

    def __init__(self, args: argparse.Namespace, coretype: str | None) -> None:
        env = dict(os.environ)
        env.pop("OPENBLAS_CORETYPE", None)
        if coretype:
            env["OPENBLAS_CORETYPE"] = coretype
        cmd = [sys.executable, str(Path(__file__).resolve()), "--numpy-child",
               "--clock", args.clock]
        if args.quick:
            cmd.append("--quick")
        if args.models:
            cmd += ["--models", args.models]
        what = "numpy child" + (f" (OPENBLAS_CORETYPE={coretype})" if coretype else "")
        self.server = Server(what, cmd, env)
        hello = json.loads(self.server.hello)
        self.blas: str = hello["blas"]
        self.models: set[str] = set(hello["models"])

    def batch(self, name: str) -> Batch:
        return lambda n: self.server.ask(f"{name} {n}")


# --------------------------------------------------------------------------
# mlvm: the Python module and the C harness
# --------------------------------------------------------------------------


def source_of(m: Model, d: Path, graph: Any) -> tuple[Path, Path | None]:
    """mlvm's input for `m` in directory d: (model file, parameter archive)."""
    import numpy as np

    d.mkdir(parents=True, exist_ok=True)
    if m.mlir is None:
        path = d / "model.onnx"
        if not path.exists():
            path.write_bytes(graph.SerializeToString())
        return path, None
    path = d / "model.mlir"
    path.write_text(m.mlir)
    params = None
    if m.params:
        params = d / "params.npz"
        np.savez(params, **m.params)
    return path, params


def build_harness(src: Path, params: Path | None, d: Path) -> Path:
    """bench/harness.c linked with the model's C, as `mlvm-aot compile` writes it."""
    from mlvm.codegen.cc import INCLUDE_DIR, cflags, compiler, runtime_library
    from mlvm.pipeline import write_c

    for old in d.glob("model.*"):  # files of an earlier build (weights beside the C, say)
        if old.suffix not in (".onnx", ".mlir", ".npz"):
            old.unlink()
    write_c(src, d / "model.c", params)
    # Whatever else the compiler wrote beside the C (weights as assembler
    # source with their binary, found through the include path) is linked too.
    extra = [str(f) for f in sorted(d.glob("model*.s")) + sorted(d.glob("model*.S"))]
    exe = d / "harness"
    cmd = [compiler(), *cflags(), "-DMLVM_SO_ENTRY", "-I", str(INCLUDE_DIR), "-I", str(d),
           f"-Wa,-I,{d}", str(d / "model.c"), *extra, str(BENCH / "harness.c"),
           str(runtime_library()), "-lm", "-o", str(exe)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"C harness build failed: {res.stderr.strip()[-400:]}")
    return exe


def harness_kernel_path(exe: Path) -> str:
    res = subprocess.run([str(exe), "--kernel-path"], capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 and res.stdout.strip() else "unknown"


def module_kernel_path(so: Path) -> str:
    """mlvm_kernel_path() of a module .so (the runtime is linked into it)."""
    try:
        lib = ctypes.CDLL(str(so))
        fn = lib.mlvm_kernel_path
    except (OSError, AttributeError):
        return "unknown"
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    return (fn() or b"unknown").decode()


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# --------------------------------------------------------------------------
# Machine description, table, targets, chart, README
# --------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import numpy as np

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from mlvm.codegen.cc import cflags, compiler, host_cpu_flags

    cc = subprocess.run([compiler(), "--version"], capture_output=True, text=True).stdout.splitlines()
    flags = ""
    try:
        text = Path("/proc/cpuinfo").read_text()
        have = host_cpu_flags()
        fam = re.search(r"^cpu family\s*:\s*(\d+)", text, re.M)
        mod = re.search(r"^model\s*:\s*(\d+)", text, re.M)
        simd: list[str] = [f for f in ("avx512f", "avx2", "fma") if f in have] or ["no avx2"]
        flags = (f"family {fam.group(1) if fam else '?'} model {mod.group(1) if mod else '?'}, "
                 + "/".join(simd))
    except OSError:
        pass
    info: dict[str, Any] = {
        "cpu": cpu + (f" ({flags})" if flags else ""),
        "cpus": os.cpu_count(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cc": cc[0] if cc else compiler(),
        "cflags": " ".join(cflags()),
    }
    try:
        import onnxruntime

        info["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    return info


def fmt_us(s: float | None) -> str:
    if s is None:
        return "-"
    us = s * 1e6
    return f"{us:.3f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:,.0f}"


def ratio(ma: Model, ra: str, mb: Model | None = None, rb: str = "onnxruntime") -> float | None:
    """Time of runner ra on model ma / time of runner rb on model mb (ma when
    None): the median over rounds of the ratio of the two batches of a
    round, timed back to back (robust to slow spells of a shared machine),
    or the ratio of the reported times when the rounds do not pair up."""
    mb = mb or ma
    a, b = ma.samples.get(ra), mb.samples.get(rb)
    if a and b and len(a) == len(b):
        return statistics.median(x / y for x, y in zip(a, b))
    if ra in ma.results and rb in mb.results:
        return ma.results[ra] / mb.results[rb]
    return None


def fmt_ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def short_error(error: str) -> str:
    """The table cell of an mlvm failure: "not supported", "wrong result", ..."""
    return error.split(":", 1)[0]


def table(models: list[Model], runners: tuple[str, ...], kernels: str) -> list[str]:
    """The markdown table; the mlvm columns name the kernel path they ran."""
    others = [r for r in runners if not r.startswith("mlvm")]
    head = (["model", f"mlvm-py us ({kernels})", f"mlvm-C us ({kernels})"]
            + [f"{r} us" for r in others] + ["mlvm/ort"]
            + [f"mlvm/{r}" for r in others if r != "onnxruntime"])
    rows = [head, ["---"] * len(head)]
    for m in models:
        r = m.results
        mlvm = ([short_error(m.error)] * 2 if m.error
                else [fmt_us(r.get("mlvm-py")), fmt_us(r.get("mlvm-C"))])
        rows.append([m.label] + mlvm + [fmt_us(r.get(k)) for k in others]
                    + [fmt_ratio(ratio(m, "mlvm-py"))]
                    + [fmt_ratio(ratio(m, "mlvm-py", m, k)) for k in others if k != "onnxruntime"])
    return ["| " + " | ".join(row) + " |" for row in rows]


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def check_targets(models: list[Model], skipped: dict[str, str], kernel: str) -> list[dict[str, Any]]:
    """Each target: met / missed with the measured value, or skipped with why."""
    by = {m.name: m for m in models}
    out: list[dict[str, Any]] = []
    for label, model, runner, against, op, limit in TARGETS + (AVX2_TARGETS if kernel == "avx2" else []):
        if model not in by:
            continue
        if runner in skipped or against in skipped:
            why = skipped.get(runner) or skipped.get(str(against))
            out.append({"target": label, "skipped": f"{runner if runner in skipped else against} "
                                                    f"not run: {why}"})
            continue
        r = by[model].results
        if runner not in r or (against is not None and against not in r):
            out.append({"target": label, "skipped": by[model].error or "not measured"})
            continue
        value = (ratio(by[model], runner, by[model], against) or math.nan if against is not None
                 else r[runner] * 1e6)
        met = value <= limit if op == "<=" else value >= limit
        out.append({"target": label, "value": value, "limit": limit, "met": met,
                    "unit": "x" if against is not None else "us"})

    for m in (m for m in models if m.kind == "math"):
        label = f"{m.label} <= {MATH_LIMIT}x onnxruntime"
        v = ratio(m, "mlvm-py")
        if v is None:
            out.append({"target": label, "skipped": m.error or "not measured"})
            continue
        out.append({"target": label, "value": v, "limit": MATH_LIMIT, "met": v <= MATH_LIMIT,
                    "unit": "x"})
    bench = [m for m in models if m.kind == "model"]
    if bench:
        ratios = {m.label: v for m in bench if (v := ratio(m, "mlvm-py")) is not None}
        failed = [m.label for m in bench if m.label not in ratios]
        over = [f"{k} {v:.2f}x" for k, v in ratios.items() if v > EVERY_MODEL_LIMIT]
        worst = max(ratios, key=lambda k: ratios[k]) if ratios else None
        note = []
        if over:
            note.append("over: " + ", ".join(over))
        if failed:
            note.append("no mlvm time: " + ", ".join(failed))
        out.append({"target": f"every bench model <= {EVERY_MODEL_LIMIT}x onnxruntime "
                              f"({len(bench)} models)",
                    "value": ratios[worst] if worst else float("nan"), "limit": EVERY_MODEL_LIMIT,
                    "met": not over and not failed, "unit": "x",
                    "note": "; ".join(([f"worst {worst}"] if worst else []) + note)})
        if ratios:
            gm = geomean(list(ratios.values()))
            out.append({"target": f"geometric mean over the bench models <= {GEOMEAN_LIMIT}x "
                                  "onnxruntime",
                        "value": gm, "limit": GEOMEAN_LIMIT, "met": gm <= GEOMEAN_LIMIT and not failed,
                        "unit": "x",
                        "note": f"over {len(ratios)} models"
                                + (f"; without {', '.join(failed)}" if failed else "")})
    for m in LINEAR_M:
        pt, t = by.get(f"linear-pt-m{m}"), by.get(f"linear-t-m{m}")
        if pt is None or t is None:
            continue
        label = (f"Linear M={m}: PyTorch layout within +-{LINEAR_TOLERANCE:.0%} of pre-transposed "
                 "(time W[out,in] / time W[in,out])")
        if "mlvm-py" not in pt.results or "mlvm-py" not in t.results:
            out.append({"target": label, "skipped": pt.error or t.error or "not measured"})
            continue
        v = ratio(pt, "mlvm-py", t, "mlvm-py") or math.nan
        out.append({"target": label, "value": v, "limit": LINEAR_TOLERANCE,
                    "met": abs(v - 1.0) <= LINEAR_TOLERANCE, "unit": "x",
                    "note": pt.same_c_as.get(t.name, "")})
    return out


def target_line(t: dict[str, Any], md: bool) -> str:
    if "skipped" in t:
        return (f"- skipped: {t['target']} — {t['skipped']}" if md
                else f"  [skipped] {t['target']}: {t['skipped']}")
    unit = "x" if t["unit"] == "x" else " us"
    note = f" ({t['note']})" if t.get("note") else ""
    value = f"{t['value']:.3f}{unit}" if math.isfinite(t["value"]) else "n/a"
    if md:
        return f"- {'met' if t['met'] else '**missed**'}: {t['target']} — measured {value}{note}"
    return f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {value}{note}"


def chart(models: list[Model], runners: tuple[str, ...], path: Path, title: str) -> None:
    """Two panels: each runner's time relative to onnxruntime's (the common
    scale of all models), and the latencies (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    colors = {"mlvm-py": "#1f77b4", "mlvm-C": "#6baed6", "numpy": "#ff7f0e",
              "numpy-SKX": "#fdae6b", "numpy-HSW": "#c49c94", "onnxruntime": "#2ca02c"}
    n = len(models)
    fig, (rel, ax) = plt.subplots(2, 1, figsize=(max(12.0, 0.62 * n), 10), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 2]})
    width = 0.8 / len(runners)
    xs = np.arange(n)
    for k, runner in enumerate(runners):
        vals = np.array([m.results.get(runner, np.nan) for m in models])
        off = xs + (k - (len(runners) - 1) / 2) * width
        rel_t = np.array([r if (r := ratio(m, runner)) is not None else np.nan for m in models])
        rel.bar(off, rel_t, width, label=runner, color=colors[runner])
        ax.bar(off, vals * 1e6, width, label=runner, color=colors[runner])
    for i, m in enumerate(models):
        if m.error:
            rel.text(i, 0.001, "mlvm: " + short_error(m.error),
                     rotation=90, ha="center", va="bottom", fontsize=7, color="red")
    bench = [r for m in models if m.kind == "model" and (r := ratio(m, "mlvm-py")) is not None]
    rel.axhline(1.0, color="black", lw=0.8)
    if bench:
        rel.axhline(geomean(bench), color="#1f77b4", lw=0.8, ls="--",
                    label=f"mlvm-py geomean over bench models ({geomean(bench):.2f})")
    rel.axhline(GEOMEAN_LIMIT, color="red", lw=0.6, ls=":", label=f"target {GEOMEAN_LIMIT}")
    rel.set_yscale("log")
    rel.set_ylim(5e-4, 30)
    ticks = [0.001, 0.01, 0.1, 0.25, 0.5, 0.8, 1, 1.5, 2, 4, 8, 16]
    rel.set_yticks(ticks, [f"{t:g}" for t in ticks])
    rel.minorticks_off()
    rel.set_ylabel("time / onnxruntime time (log; lower is faster)")
    rel.set_title(title, fontsize=9, pad=22)
    rel.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    rel.grid(axis="y", alpha=0.3)
    ax.set_yscale("log")
    ax.set_ylabel("latency per call (us, log)")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.set_xticks(xs, [m.label for m in models], rotation=35, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def update_readme(lines: list[str], section: str = "") -> None:
    from readme import write_readme

    write_readme(f"bench-{section}" if section else "bench", "\n".join(lines) + "\n", missing_ok=True)


# --------------------------------------------------------------------------


def pin() -> str:
    """Pin this process (and its children) to one CPU, the last one."""
    if hasattr(os, "sched_setaffinity"):
        cpu = max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"cpu {cpu} (sched_setaffinity, as taskset -c {cpu})"
    return "not pinned"


class Prepared:
    """One model checked and ready to time: its runners, and the C harness
    process to end afterwards."""

    def __init__(self, m: Model) -> None:
        self.m = m
        self.runners: dict[str, Batch] = {}
        self.harness: Server | None = None
        self.keep: list[Any] = []  # what the runners call must outlive them


def prepare(m: Model, args: argparse.Namespace, tmp: Path, so_opts: Any,
            numpy_runners: dict[str, NumpyRunner], kernels: dict[str, str],
            compile_s: dict[str, float]) -> Prepared:
    """Check every runner of one model against the reference."""
    import numpy as np
    import onnxruntime as ort

    import mlvm

    out = Prepared(m)
    clock = clock_fn(args.clock)
    ins = m.inputs
    graph = m.onnx()
    sess = ort.InferenceSession(graph.SerializeToString(), so_opts,
                                providers=["CPUExecutionProvider"])
    feed = dict(zip([i.name for i in sess.get_inputs()], ins))
    got_ort = sess.run(None, feed)[0]
    if m.numpy_fn is not None:
        want, ref = np.asarray(m.numpy_fn(*ins)), "numpy"
        err = close(got_ort, want)
        assert err <= TOL, f"{m.name}: onnxruntime differs from numpy by {err:.2e}"
    else:
        want, ref = got_ort, "onnxruntime"
    out.keep.append(sess)
    out.runners["onnxruntime"] = in_process(lambda: sess.run(None, feed), clock)
    for name, nr in numpy_runners.items():
        if m.name in nr.models:
            out.runners[name] = nr.batch(m.name)

    d = tmp / m.name
    src, params = source_of(m, d, graph)
    t = time.perf_counter()
    mod = None
    try:
        mod = mlvm.compile(src, params=params)
    except mlvm.MlvmError as e:
        m.error = f"not supported: {first_line(e).replace(f'{src}: ', '')}"
    except Exception as e:  # noqa: BLE001 - a compiler bug: reported, and the run goes on
        m.error = f"compile failed: {type(e).__name__}: {first_line(e)}"
    if mod is not None:
        compile_s[m.name] = time.perf_counter() - t
        kernels.setdefault("module", module_kernel_path(mod.path))
        err = close(mod.main(*ins), want)
        if err > TOL:
            m.error = f"wrong result: differs from {ref} by {err:.2e}"
    if m.error:
        print(f"    mlvm: {m.error}", flush=True)
        return out
    assert mod is not None
    f = mod.main
    out.keep.append(mod)
    out.runners["mlvm-py"] = in_process(lambda: f(*ins), clock)
    try:
        exe = build_harness(src, params, d)
        kernels.setdefault("harness", harness_kernel_path(exe))
        harness = Server("C harness", [str(exe), "--serve", args.clock], scale=1e-9)
    except Exception as e:  # noqa: BLE001 - one model's C, not the whole run
        m.notes.append(f"mlvm-C not run: {first_line(e)}")
        print(f"    {m.notes[-1]}", flush=True)
        return out
    out.harness = harness
    out.runners["mlvm-C"] = lambda n: harness.ask(str(n))
    return out


def bench_group(group: list[Model], args: argparse.Namespace, tmp: Path, so_opts: Any,
                numpy_runners: dict[str, NumpyRunner], skipped: dict[str, str],
                kernels: dict[str, str], compile_s: dict[str, float]) -> None:
    """Check, then time side by side, the runners of the models of a group
    (one model, or variants compared with each other: their batches take
    turns too)."""
    ready: list[Prepared] = []
    try:
        for m in group:
            print(f"  {m.label} ...", flush=True)
            ready.append(prepare(m, args, tmp, so_opts, numpy_runners, kernels, compile_s))
        runners = {(p.m.name, r): b for p in ready for r, b in p.runners.items()}
        failed: dict[tuple[str, str], str] = {}
        samples = interleaved(runners, args.batches, args.min_batch, failed)
    finally:
        for p in ready:
            if p.harness is not None:
                p.harness.close()
    by = {m.name: m for m in group}
    for a in group:  # do variants compile to the same C (but for the header comment)?
        for b in group:
            ca, cb = tmp / a.name / "model.c", tmp / b.name / "model.c"
            if a is not b and ca.exists() and cb.exists():
                same = (ca.read_text().split("\n", 1)[-1] == cb.read_text().split("\n", 1)[-1])
                a.same_c_as[b.name] = ("mlvm writes the same C for both" if same
                                       else "mlvm writes different C")
    for (model, name), why in failed.items():
        print(f"    {model}, {name}: {why}", flush=True)
        if name in numpy_runners:  # a dead child: no more numpy from it in this run
            skipped.setdefault(name, why)
            del numpy_runners[name]
        else:
            by[model].notes.append(f"{name} not timed: {why}")
    for (model, name), ss in samples.items():
        by[model].samples[name] = ss
        by[model].results[name] = min(ss) if args.stat == "min" else statistics.median(ss)


def main() -> int:
    ap = argparse.ArgumentParser(description="mlvm next to numpy and onnxruntime")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: fewer batches, batch 1 / M=1 only, matmuls to 256^3")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--batches", type=int, default=21,
                    help="rounds: timed batches per runner and model")
    ap.add_argument("--min-batch", type=float, default=0.01, help="seconds per batch of calls")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="the time reported for a runner: the median of its rounds (default) "
                         "or the fastest")
    ap.add_argument("--models", metavar="REGEX",
                    help="only the models whose name matches (e.g. 'resnet|dscnn'); "
                         "implies --no-readme")
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite bench/README.md")
    ap.add_argument("--section", metavar="NAME", default="",
                    help="write the table between bench/README.md's <!-- bench-NAME:begin/end --> "
                         "markers and the results as NAME-<date>.json (make bench-avx2: avx2; "
                         "by default avx2-host on an x86-64 host without AVX-512, else none)")
    ap.add_argument("--keep-build", action="store_true",
                    help="keep the generated C and the harnesses (for perf) instead of deleting "
                         "them at the end")
    ap.add_argument("--numpy-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.batches = min(args.batches, 5)
        args.min_batch = min(args.min_batch, 0.002)
    if args.numpy_child:
        return numpy_child(args)
    target = f"make bench{'-' + args.section if args.section else ''}"
    if not args.section and not os.environ.get("MLVM_CFLAGS") and no_avx512():
        # make bench where the kernels' path is AVX2: a table of its own, so
        # that an AVX-512 host's stays beside it
        args.section = "avx2-host"

    import onnxruntime as ort

    pinned = pin()
    started = time.perf_counter()
    models = make_models(args.quick, args.models)
    if not models:
        names = ", ".join(m.name for m in make_models(args.quick))
        print(f"bench: no model matches --models {args.models!r}; the models: {names}",
              file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="mlvm-bench-"))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL

    skipped: dict[str, str] = {}
    timing = (f"{args.stat} of {args.batches} rounds of {args.min_batch * 1e3:g} ms batches per "
              f"runner, the runners of a model taking turns")
    print(f"mlvm bench: one thread, {pinned}, clock: {args.clock}; {timing}", flush=True)
    numpy_runners: dict[str, NumpyRunner] = {}
    for name in CORE_RUNNERS:
        why = core_unavailable(name)
        if why is not None:
            print(f"{name}: not run: {why}", flush=True)
            skipped[name] = why
    blas = ""
    for name, coretype in (("numpy", None), *((n, c) for n, (c, _) in CORE_RUNNERS.items())):
        if name in skipped:
            continue
        try:
            numpy_runners[name] = NumpyRunner(args, coretype)
            blas = blas or numpy_runners[name].blas
        except RunnerFailed as e:
            print(f"{name}: not run: {e}", flush=True)
            skipped[name] = str(e)

    compile_s: dict[str, float] = {}
    kernels: dict[str, str] = {}
    try:
        groups: list[list[Model]] = []
        for m in models:
            if m.group and groups and groups[-1][0].group == m.group:
                groups[-1].append(m)
            else:
                groups.append([m])
        for group in groups:
            bench_group(group, args, tmp, so, numpy_runners, skipped, kernels, compile_s)
    finally:
        for nr in numpy_runners.values():
            nr.server.close()
    # A runner that died part way keeps its column for the models it timed.
    runners = tuple(r for r in ALL_RUNNERS
                    if r not in skipped or any(r in m.results for m in models))
    kernel = kernels.get("module") or kernels.get("harness") or "unknown"
    if kernels.get("harness", kernel) != kernel:
        kernel = f"{kernels['module']} (py) / {kernels['harness']} (C)"

    info = machine()
    info["blas"] = blas
    info["pinned"] = pinned
    info["mlvm_kernel_path"] = kernel
    stamp = datetime.datetime.now().strftime("%Y-%m-%d")
    command = (target
               if not args.quick and not args.models
               else "python bench/run.py" + (" --quick" if args.quick else "")
               + (f" --models '{args.models}'" if args.models else ""))
    lines = table(models, runners, kernel)
    notes = [f"- {r} not run: {w}" for r, w in skipped.items()]
    notes += [f"- mlvm, {m.label}: {m.error}" for m in models if m.error]
    notes += [f"- {m.label}: {n}" for m in models for n in m.notes]
    targets = check_targets(models, skipped, kernel)
    print()
    print(f"mlvm kernel path: {kernel}")
    print("\n".join(lines))
    if notes:
        print("\n".join(notes))
    print()
    for t in targets:
        print(target_line(t, md=False))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {
        "command": command,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "clock": args.clock,
        "stat": args.stat,
        "rounds": args.batches,
        "min_batch_s": args.min_batch,
        "machine": info,
        "runners": list(runners),
        "skipped_runners": skipped,
        "compile_s": compile_s,
        "results_us": {m.name: {k: v * 1e6 for k, v in m.results.items()} for m in models},
        "median_us": {m.name: {k: statistics.median(vs) * 1e6 for k, vs in m.samples.items()}
                      for m in models},
        "samples_us": {m.name: {k: [round(v * 1e6, 4) for v in vs] for k, vs in m.samples.items()}
                       for m in models},
        "errors": {m.name: m.error for m in models if m.error},
        "targets": targets,
    }
    # A --quick or --models run is a smoke test: it does not replace the recorded results.
    partial = args.quick or bool(args.models)
    prefix = "quick-" if partial else f"{args.section}-" if args.section else ""
    stamp = prefix + stamp
    latest = f"{prefix}latest"
    for name in (f"{stamp}.json", f"{latest}.json"):
        (RESULTS / name).write_text(json.dumps(out, indent=2) + "\n")
    title = (f"{command}: latency ({args.stat} of {args.batches} rounds), one thread, "
             f"{args.clock} clock, mlvm kernels: {kernel}\n"
             f"{info['cpu']}; {info['cc']}; onnxruntime {info.get('onnxruntime', '?')}; "
             f"numpy {info['numpy']}")
    chart(models, runners, RESULTS / f"{stamp}.png", title)
    shutil.copyfile(RESULTS / f"{stamp}.png", RESULTS / f"{latest}.png")
    if not args.no_readme and not partial:
        md = [
            f"Machine: {info['cpu']}, {info['cpus']} CPUs, {info['os']}; {info['cc']}, "
            f"`{info['cflags']}`; mlvm kernel path: **{kernel}**; Python {info['python']}, "
            f"numpy {info['numpy']} ({info['blas']}), onnxruntime {info.get('onnxruntime', '?')}. "
            f"Pinned to {pinned}; clock: {args.clock}; times: {timing}. Date: {out['date']}. "
            f"Command: `{command}`.",
            "",
            *lines,
            "",
            *notes,
            *([""] if notes else []),
            *[target_line(t, md=True) for t in targets],
        ]
        update_readme(md, args.section)
    if args.keep_build:
        print(f"\nthe generated C and harnesses are in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nwrote {RESULTS / (stamp + '.json')}, {latest}.json, {latest}.png "
          f"({time.perf_counter() - started:.0f} s)")
    # Unsupported models are a result; wrong results and compiler failures are bugs.
    return 1 if any(m.error and not m.error.startswith("not supported") for m in models) else 0


if __name__ == "__main__":
    sys.exit(main())
