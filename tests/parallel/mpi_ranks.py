"""Run under mpirun by test_mpi.py: every collective of the test program on
this process's rank, inputs from `inputs(fn, rank)`, results to OUT/rank<r>.npz."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import mlvm
import mlvm.parallel

sys.path.insert(0, str(Path(__file__).parent))
from test_collectives import inputs_for  # noqa: E402


def main() -> int:
    so, out = Path(sys.argv[1]), Path(sys.argv[2])
    m = mlvm.load(so)
    rank, size = mlvm.parallel.mpi_world(m)
    results: dict[str, np.ndarray] = {}
    for name in sorted(m.functions):
        if name in ("send", "recv"):
            continue
        got = m[name](*inputs_for(name, size, rank))
        for k, g in enumerate(got if isinstance(got, tuple) else (got,)):
            results[f"{name}:{k}"] = g
    np.savez(out / f"rank{rank}.npz", **results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
