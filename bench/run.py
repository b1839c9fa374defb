"""`make bench`: mlvm next to numpy and onnxruntime, single-threaded, one run.

    python bench/run.py [--quick] [--clock cpu|wall] [--no-readme]

For each model — a no-op (call overhead), the sample MLP at batch 1 and 8,
the MLP-Mixer sample at batch 1 and 8, and square matmuls of 128 to 1024 —
it times, side by side:

  mlvm-py     the compiled module called from Python (`mlvm.compile`, cffi);
  mlvm-C      the same generated C called from a small C harness (no Python);
  numpy       a numpy implementation, OpenBLAS as numpy's wheel selects it;
  numpy-SKX   the same with OPENBLAS_CORETYPE=SkylakeX (AVX-512 kernels);
  onnxruntime the same model as an ONNX graph built with onnx.helper.

Every runner is checked against the numpy result before it is timed. One
thread everywhere: OPENBLAS_NUM_THREADS=1, onnxruntime with one intra-op
and one inter-op thread, and the process (children included) pinned to one
CPU. Times are medians over batches of calls; by default they are the
thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which time slices given to
other processes on a shared machine do not inflate (`--clock wall` for the
wall clock).

Prints a table with the ratios mlvm/onnxruntime and mlvm/numpy, the targets
met or missed, writes bench/results/<date>.json and latest.json, a bar chart
(<date>.png, latest.png), and the table into bench/README.md.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
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

RUNNERS = ("mlvm-py", "mlvm-C", "numpy", "numpy-SKX", "onnxruntime")
MATMUL_SIZES = (128, 256, 512, 1024)

# Targets: (label, model, runner, against, op, limit): runner / against
# (or runner's time in microseconds when `against` is None) `op` limit.
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


# --------------------------------------------------------------------------
# Models: MLIR text, parameters, inputs, numpy implementation
# --------------------------------------------------------------------------


@dataclass
class Model:
    name: str
    label: str
    mlir: str
    params: dict[str, Any]
    inputs: list[Any]
    numpy_fn: Callable[..., Any]
    onnx: Callable[[], Any]
    results: dict[str, float] = field(default_factory=dict)


def mlp_text(batch: int) -> str:
    text = (ROOT / "samples" / "mlp" / "mlp.mlir").read_text()
    return re.sub(r"tensor<1x(784|256|10)xf32>", rf"tensor<{batch}x\1xf32>", text)


def make_models(quick: bool) -> list[Model]:
    """Every model with its data; deterministic, so a child process that
    times numpy rebuilds exactly the same inputs."""
    import numpy as np

    import gen_params
    import mixer as mx
    import onnx_models as om

    g = np.random.default_rng(0)
    models: list[Model] = []
    x0 = np.zeros((1,), np.float32)
    models.append(Model(
        "noop", "no-op", "func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {\n"
        "  func.return %x : tensor<1xf32>\n}\n", {}, [x0], lambda x: x, om.noop))
    mp = gen_params.make_params(0)

    def mlp_np(x: Any) -> Any:
        h = np.maximum(x @ mp["w1"] + mp["b1"], 0)
        h = np.maximum(h @ mp["w2"] + mp["b2"], 0)
        return h @ mp["w3"] + mp["b3"]

    for b in (1, 8):
        x = g.standard_normal((b, 784)).astype(np.float32)
        models.append(Model(f"mlp-b{b}", f"MLP B={b}", mlp_text(b), mp, [x], mlp_np,
                            lambda b=b: om.mlp(mp, b)))
    xp = mx.make_params(0)
    for b in (1, 8):
        x = g.random((b, mx.IMAGE, mx.IMAGE, mx.CHANNELS_IN), dtype=np.float32)
        models.append(Model(f"mixer-b{b}", f"MLP-Mixer B={b}", mx.mlir_text(b), xp, [x],
                            lambda x: mx.forward(xp, x), lambda b=b: om.mixer(xp, b)))
    for n in MATMUL_SIZES if not quick else MATMUL_SIZES[:3]:
        a = g.random((n, n), dtype=np.float32)
        bm = g.random((n, n), dtype=np.float32)
        t = f"tensor<{n}x{n}xf32>"
        text = (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
                f'  %0 = "mlvm.matmul"(%a, %b) : ({t}, {t}) -> {t}\n'
                f"  func.return %0 : {t}\n}}\n")
        models.append(Model(f"matmul-{n}", f"matmul {n}^3", text, {}, [a, bm], np.matmul,
                            lambda n=n: om.matmul(n)))
    return models


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------


def clock_fn(kind: str) -> Callable[[], float]:
    return time.thread_time if kind == "cpu" else time.perf_counter


def measure(fn: Callable[[], object], clock: Callable[[], float], batches: int,
            min_batch_s: float) -> float:
    """Median seconds per call over `batches` batches of calls."""
    fn()
    fn()
    n = 1
    while True:
        t = clock()
        for _ in range(n):
            fn()
        dt = clock() - t
        if dt >= min_batch_s or n >= 1 << 22:
            break
        n = max(n * 2, int(n * min_batch_s / max(dt, 1e-9) * 1.2))
    times = []
    for _ in range(batches):
        t = clock()
        for _ in range(n):
            fn()
        times.append((clock() - t) / n)
    return statistics.median(times)


def close(got: Any, want: Any) -> float:
    """max |got - want| relative to max(1, max |want|)."""
    import numpy as np

    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.max(np.abs(got - want), initial=0.0) / max(1.0, float(np.max(np.abs(want), initial=0.0))))


TOL = 1e-4


# --------------------------------------------------------------------------
# numpy, in a child process per OpenBLAS core type
# --------------------------------------------------------------------------


def numpy_child(args: argparse.Namespace) -> int:
    import numpy as np

    out = {}
    for m in make_models(args.quick):
        fn = m.numpy_fn
        ins = m.inputs
        out[m.name] = measure(lambda: fn(*ins), clock_fn(args.clock), args.batches, args.min_batch)
        np.asarray(fn(*ins))
    cfg = ""
    try:
        import threadpoolctl

        info = threadpoolctl.threadpool_info()
        cfg = "; ".join(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} "
                        f"threads={i.get('num_threads')}" for i in info)
    except Exception:  # noqa: BLE001
        pass
    print(json.dumps({"times": out, "blas": cfg}))
    return 0


def run_numpy(args: argparse.Namespace, coretype: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    cmd = [sys.executable, str(Path(__file__).resolve()), "--numpy-child", "--clock", args.clock,
           "--batches", str(args.batches), "--min-batch", str(args.min_batch)]
    if args.quick:
        cmd.append("--quick")
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------
# The C harness
# --------------------------------------------------------------------------


def build_harness(m: Model, tmp: Path) -> Path:
    import numpy as np

    from mlvm.codegen.cc import INCLUDE_DIR, cflags, compiler, runtime_library
    from mlvm.pipeline import write_c

    d = tmp / m.name
    d.mkdir(parents=True, exist_ok=True)
    (d / "model.mlir").write_text(m.mlir)
    params = None
    if m.params:
        params = d / "params.npz"
        np.savez(params, **m.params)
    write_c(d / "model.mlir", d / "model.c", params)
    exe = d / "harness"
    cmd = [compiler(), *cflags(), "-DMLVM_SO_ENTRY", "-I", str(INCLUDE_DIR), "-I", str(d),
           str(d / "model.c"), str(BENCH / "harness.c"), str(runtime_library()), "-lm",
           "-o", str(exe)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe


def run_harness(exe: Path, py_seconds: float, args: argparse.Namespace) -> float:
    calls = max(1, int(args.min_batch / max(py_seconds, 1e-8)))
    res = subprocess.run([str(exe), str(args.batches), str(calls), args.clock],
                         capture_output=True, text=True, check=True)
    ns = [float(v) for v in res.stdout.split()]
    return statistics.median(ns) * 1e-9


# --------------------------------------------------------------------------
# Machine description, table, chart, README
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
    from mlvm.codegen.cc import cflags, compiler

    cc = subprocess.run([compiler(), "--version"], capture_output=True, text=True).stdout.splitlines()
    flags = ""
    try:
        text = Path("/proc/cpuinfo").read_text()
        have = set(re.search(r"^flags\s*:(.*)$", text, re.M).group(1).split())  # type: ignore[union-attr]
        fam = re.search(r"^cpu family\s*:\s*(\d+)", text, re.M)
        mod = re.search(r"^model\s*:\s*(\d+)", text, re.M)
        simd = [f for f in ("avx512f", "avx2", "fma") if f in have]
        flags = (f"family {fam.group(1) if fam else '?'} model {mod.group(1) if mod else '?'}, "
                 + "/".join(simd))
    except (OSError, AttributeError):
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


def fmt_ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a / b:.2f}"


def table(models: list[Model]) -> list[str]:
    head = ["model", "mlvm-py us", "mlvm-C us", "numpy us", "numpy-SKX us", "onnxruntime us",
            "mlvm/ort", "mlvm/numpy", "mlvm/numpy-SKX"]
    rows = [head, ["---"] * len(head)]
    for m in models:
        r = m.results
        rows.append([m.label] + [fmt_us(r.get(k)) for k in RUNNERS] + [
            fmt_ratio(r.get("mlvm-py"), r.get("onnxruntime")),
            fmt_ratio(r.get("mlvm-py"), r.get("numpy")),
            fmt_ratio(r.get("mlvm-py"), r.get("numpy-SKX")),
        ])
    return ["| " + " | ".join(row) + " |" for row in rows]


def check_targets(models: list[Model]) -> list[dict[str, Any]]:
    by = {m.name: m.results for m in models}
    out = []
    for label, model, runner, against, op, limit in TARGETS:
        r = by.get(model, {})
        if runner not in r or (against is not None and against not in r):
            continue
        value = r[runner] / r[against] if against is not None else r[runner] * 1e6
        met = value <= limit if op == "<=" else value >= limit
        out.append({"target": label, "value": value, "limit": limit, "met": met,
                    "unit": "x" if against is not None else "us"})
    return out


def chart(models: list[Model], path: Path, title: str) -> None:
    """Two panels: latencies (log scale), and each runner relative to onnxruntime."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (ax, rel) = plt.subplots(2, 1, figsize=(12, 8.5), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 2]})
    width = 0.16
    xs = np.arange(len(models))
    colors = ["#1f77b4", "#6baed6", "#ff7f0e", "#fdae6b", "#2ca02c"]
    for k, (runner, color) in enumerate(zip(RUNNERS, colors)):
        vals = np.array([m.results.get(runner, np.nan) for m in models])
        ort = np.array([m.results.get("onnxruntime", np.nan) for m in models])
        ax.bar(xs + (k - 2) * width, vals * 1e6, width, label=runner, color=color)
        rel.bar(xs + (k - 2) * width, vals / ort, width, color=color)
    ax.set_yscale("log")
    ax.set_ylabel("median latency per call (us, log scale)")
    ax.set_title(title, fontsize=9)
    ax.legend(ncol=5, fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3)
    rel.axhline(1.0, color="black", lw=0.8)
    rel.set_ylim(0, 2.0)
    rel.set_ylabel("time / onnxruntime time (lower is faster)")
    rel.grid(axis="y", alpha=0.3)
    rel.set_xticks(xs, [m.label for m in models], rotation=20, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def update_readme(lines: list[str]) -> None:
    readme = BENCH / "README.md"
    if not readme.exists():
        return
    text = readme.read_text()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if begin not in text or end not in text:
        return
    pre, rest = text.split(begin, 1)
    _, post = rest.split(end, 1)
    readme.write_text(pre + begin + "\n" + "\n".join(lines) + "\n" + end + post)


# --------------------------------------------------------------------------


def pin() -> str:
    """Pin this process (and its children) to one CPU, the last one."""
    if hasattr(os, "sched_setaffinity"):
        cpu = max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"cpu {cpu} (sched_setaffinity, as taskset -c {cpu})"
    return "not pinned"


def main() -> int:
    ap = argparse.ArgumentParser(description="mlvm next to numpy and onnxruntime")
    ap.add_argument("--quick", action="store_true", help="fewer batches, no 1024^3 matmul")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--batches", type=int, default=15)
    ap.add_argument("--min-batch", type=float, default=0.005, help="seconds per batch of calls")
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite bench/README.md")
    ap.add_argument("--numpy-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.batches = min(args.batches, 7)
        args.min_batch = min(args.min_batch, 0.002)
    if args.numpy_child:
        return numpy_child(args)

    import numpy as np
    import onnxruntime as ort

    import mlvm

    pinned = pin()
    clock = clock_fn(args.clock)
    models = make_models(args.quick)
    tmp = Path(tempfile.mkdtemp(prefix="mlvm-bench-"))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL

    print(f"mlvm bench: one thread, {pinned}, clock: {args.clock}", flush=True)
    print("numpy (default OpenBLAS core, then OPENBLAS_CORETYPE=SkylakeX) ...", flush=True)
    np_default = run_numpy(args, None)
    np_skx = run_numpy(args, "SkylakeX")
    compile_s: dict[str, float] = {}
    for m in models:
        print(f"  {m.label} ...", flush=True)
        want = np.asarray(m.numpy_fn(*m.inputs))
        path = tmp / f"{m.name}.mlir"
        path.write_text(m.mlir)
        t = time.perf_counter()
        mod = mlvm.compile(path, params=m.params or None)
        compile_s[m.name] = time.perf_counter() - t
        f = mod.main
        ins = m.inputs
        err = close(f(*ins), want)
        assert err <= TOL, f"{m.name}: mlvm differs from numpy by {err:.2e}"
        m.results["mlvm-py"] = measure(lambda: f(*ins), clock, args.batches, args.min_batch)
        exe = build_harness(m, tmp)
        m.results["mlvm-C"] = run_harness(exe, m.results["mlvm-py"], args)
        m.results["numpy"] = np_default["times"][m.name]
        m.results["numpy-SKX"] = np_skx["times"][m.name]
        sess = ort.InferenceSession(m.onnx().SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        feed = dict(zip(names, ins))
        err = close(sess.run(None, feed)[0], want)
        assert err <= TOL, f"{m.name}: onnxruntime differs from numpy by {err:.2e}"
        m.results["onnxruntime"] = measure(lambda: sess.run(None, feed), clock, args.batches,
                                           args.min_batch)

    info = machine()
    info["blas"] = np_default.get("blas", "")
    info["pinned"] = pinned
    stamp = datetime.datetime.now().strftime("%Y-%m-%d")
    command = "make bench" if not args.quick else "python bench/run.py --quick"
    lines = table(models)
    targets = check_targets(models)
    print()
    print("\n".join(lines))
    print()
    for t in targets:
        unit = "x" if t["unit"] == "x" else " us"
        print(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {t['value']:.3f}{unit}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {
        "command": command,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "clock": args.clock,
        "machine": info,
        "compile_s": compile_s,
        "results_us": {m.name: {k: v * 1e6 for k, v in m.results.items()} for m in models},
        "targets": targets,
    }
    # A --quick run is a smoke test: it does not replace the recorded results.
    prefix = "quick-" if args.quick else ""
    stamp = prefix + stamp
    latest = f"{prefix}latest"
    for name in (f"{stamp}.json", f"{latest}.json"):
        (RESULTS / name).write_text(json.dumps(out, indent=2) + "\n")
    title = (f"{command}: median latency, one thread, {args.clock} clock\n{info['cpu']}; "
             f"{info['cc']}; onnxruntime {info.get('onnxruntime', '?')}; numpy {info['numpy']}")
    chart(models, RESULTS / f"{stamp}.png", title)
    shutil.copyfile(RESULTS / f"{stamp}.png", RESULTS / f"{latest}.png")
    if not args.no_readme and not args.quick:
        md = [
            f"Machine: {info['cpu']}, {info['cpus']} CPUs, {info['os']}; {info['cc']}, "
            f"`{info['cflags']}`; Python {info['python']}, numpy {info['numpy']} "
            f"({info['blas']}), onnxruntime {info.get('onnxruntime', '?')}. "
            f"Pinned to {pinned}; clock: {args.clock}. Date: {out['date']}. Command: `{command}`.",
            "",
            *lines,
            "",
            *[f"- {'met' if t['met'] else '**missed**'}: {t['target']} — measured "
              f"{t['value']:.3f}{'x' if t['unit'] == 'x' else ' us'}" for t in targets],
        ]
        update_readme(md)
    print(f"\nwrote {RESULTS / (stamp + '.json')}, {latest}.json, {latest}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
