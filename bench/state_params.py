"""Module state and external parameters, measured (results: bench/README.md).

    python bench/state_params.py [--mb 100]

1. samples/mnist_train: training steps per second at batch 32 with the
   parameters sent through numpy on every call (@train_step) against
   the weights and momentum kept in the module (@sgd_step with momentum 0,
   the same update), called once per step and once per epoch (`scan`), all
   from Python, measured alternately; and the @sgd_step C entry alone,
   timed in a C loop.
2. A model with --mb MB of weights (four square f32 matmuls): `mlvm-aot
   build` time and .so size with the weights in the code (a linked blob)
   and with --external-params, and the time mlvm.load takes to map and
   check the parameter file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "samples" / "mnist_train"))

import mlvm  # noqa: E402
from mlvm.codegen.cc import INCLUDE_DIR, runtime_sources  # noqa: E402
from mlvm.codegen.cc import host_cpu_flags  # noqa: E402

C_LOOP = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>
#include "ts.h"
static unsigned char arena[TS_ARENA_BYTES] MLVM_ALIGNED(64);
static unsigned char st[TS_STATE_BYTES] MLVM_ALIGNED(64);
static float x[32 * 64], y[32 * 10], out;
int main(void)
{
    mlvm_instance_t inst;
    const char *miss;
    float lr = 0.5f, mu = 0.0f, best = 1e30f;
    int i, r, n = 20000;
    mlvm_instance_init(&inst, &ts_module, NULL, NULL, 0, NULL, NULL, 0, &miss);
    mlvm_instance_bind_state(&inst, st, sizeof st);
    for (i = 0; i < 32 * 64; ++i) x[i] = (float)(i % 17) / 17.0f;
    for (i = 0; i < 32; ++i) y[i * 10 + i % 10] = 1.0f;
    for (r = 0; r < 5; ++r) {
        struct timespec a, b;
        float us;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (i = 0; i < n; ++i) ts_sgd_step(&inst, arena, x, y, &lr, &mu, &out);
        clock_gettime(CLOCK_MONOTONIC, &b);
        us = (float)(((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n / 1e3);
        if (us < best) best = us;
    }
    printf("%.2f\n", best);
    return 0;
}
"""


def mnist(tmp: Path) -> None:
    import train as t

    module = t.compile_module()
    rt, call, scan = t.steps_per_second(module, steps=1760)
    np.savez(tmp / "init.npz", **t.init_archive())
    subprocess.run([sys.executable, "-m", "mlvm", "compile", str(t.MLIR), "--params",
                    str(tmp / "init.npz"), "-o", str(tmp / "ts.c"), "-q"], check=True)
    (tmp / "loop.c").write_text(C_LOOP)
    subprocess.run(["cc", "-O3", "-march=native", "-std=c99", "-I", str(INCLUDE_DIR), "-I", str(tmp),
                    str(tmp / "loop.c"), str(tmp / "ts.c"), *map(str, runtime_sources()), "-lm",
                    "-o", str(tmp / "loop")], check=True)
    c_us = float(subprocess.run([str(tmp / "loop")], capture_output=True, text=True, check=True).stdout)
    print(f"mnist_train, batch {t.BATCH}: round trip {rt:.0f} steps/s; state in the module: a call "
          f"per step {call:.0f} steps/s ({call / rt:.2f}x), a call per epoch (scan) {scan:.0f} steps/s "
          f"({scan / rt:.2f}x); @sgd_step from C: {c_us:.2f} us ({1e6 / c_us:.0f} steps/s)")


def big_model(tmp: Path, mb: int) -> None:
    n = int((mb * 1e6 / 4 / 4) ** 0.5)
    lines = [f"func.func @main(%x: tensor<1x{n}xf32>) -> tensor<1x{n}xf32> {{"]
    prev, params = "%x", {}
    for i in range(4):
        params[f"w{i}"] = (np.random.default_rng(i).standard_normal((n, n)) * 0.01).astype(np.float32)
        lines.append(f'  %w{i} = "mlvm.param"() <{{name = "w{i}"}}> : () -> tensor<{n}x{n}xf32>')
        lines.append(f'  %h{i} = "mlvm.matmul"({prev}, %w{i}) : (tensor<1x{n}xf32>, '
                     f"tensor<{n}x{n}xf32>) -> tensor<1x{n}xf32>")
        prev = f"%h{i}"
    lines.append(f"  func.return {prev} : tensor<1x{n}xf32>\n}}")
    (tmp / "big.mlir").write_text("\n".join(lines) + "\n")
    np.savez(tmp / "big.npz", **params)
    weights = sum(a.nbytes for a in params.values())
    base = [sys.executable, "-m", "mlvm", "build", str(tmp / "big.mlir"), "--params", str(tmp / "big.npz"), "-q"]
    # Warm the runtime cache so both builds compile only the module.
    subprocess.run([*base, "-o", str(tmp / "warm.so")], check=True)
    times = {}
    for name, extra in (("in the code", []), ("external", ["--external-params", str(tmp / "big.mlvmp")])):
        t0 = time.perf_counter()
        subprocess.run([*base, *extra, "-o", str(tmp / f"{len(times)}.so")], check=True)
        times[name] = (time.perf_counter() - t0, (tmp / f"{len(times)}.so").stat().st_size)
    t0 = time.perf_counter()
    m = mlvm.load(tmp / "1.so", params=tmp / "big.mlvmp")
    load = time.perf_counter() - t0
    x = np.ones((1, n), np.float32)
    same = np.array_equal(m.main(x), mlvm.load(tmp / "0.so").main(x))
    print(f"{weights / 1e6:.0f} MB of weights: " + "; ".join(
        f"{k}: build {v[0]:.1f} s, .so {v[1] / 1e6:.1f} MB" for k, v in times.items())
        + f"; mlvm.load with the parameter file {load:.2f} s; same outputs: {same}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100, help="weights of the big model, in MB")
    args = ap.parse_args()
    flags = host_cpu_flags()
    print(f"host: {'avx512f' if 'avx512f' in flags else 'avx2' if 'avx2' in flags else 'x86-64'}")
    with tempfile.TemporaryDirectory() as d:
        mnist(Path(d))
        big_model(Path(d), args.mb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
