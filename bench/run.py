"""`make bench`: compile time and MLP latency, mlvm next to numpy, one run.

Prints a table and writes bench/results/latest.json. Run single-threaded:
numpy's BLAS is pinned to one thread below.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import mlvm  # noqa: E402
from mlvm.pipeline import write_c  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "mlp"


def median_time(fn: Callable[[], object], repeat: int = 200) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="mlvm-bench-"))
    subprocess.run([sys.executable, str(SAMPLE / "gen_params.py"), str(tmp)], check=True,
                   stdout=subprocess.DEVNULL)
    params_path = tmp / "mlp.npz"
    params = dict(np.load(params_path))
    n_params = sum(a.size for a in params.values())

    t = time.perf_counter()
    write_c(SAMPLE / "mlp.mlir", tmp / "mlp.c", params_path)
    compile_s = time.perf_counter() - t

    m = mlvm.compile(SAMPLE / "mlp.mlir", params=params)
    x = np.random.default_rng(0).standard_normal((1, 784)).astype(np.float32)
    w1, b1, w2, b2, w3, b3 = (params[k] for k in ("w1", "b1", "w2", "b2", "w3", "b3"))

    def numpy_mlp() -> np.ndarray:
        h = np.maximum(x @ w1 + b1, 0)
        h = np.maximum(h @ w2 + b2, 0)
        return h @ w3 + b3

    t_mlvm = median_time(lambda: m.main(x))
    t_np = median_time(numpy_mlp)
    rows = {
        "compile_python_s": compile_s,
        "mlp_params": n_params,
        "mlp_b1_mlvm_us": t_mlvm * 1e6,
        "mlp_b1_numpy_us": t_np * 1e6,
        "mlp_b1_ratio_mlvm_over_numpy": t_mlvm / t_np,
    }
    for k, v in rows.items():
        print(f"{k:32s} {v:12.3f}" if isinstance(v, float) else f"{k:32s} {v:12d}")
    out = {
        "command": "make bench",
        "machine": {"cpu": platform.processor() or platform.machine(), "python": platform.python_version()},
        "results": rows,
    }
    (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "results" / "latest.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
