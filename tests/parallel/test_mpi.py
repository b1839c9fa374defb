"""The MPI communicator under `mpirun` (Open MPI, installed by `make
sysdeps`): the same program and checks as the in-process tests, each rank a
process, and the data-parallel sample."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlvm.cli import aot_main

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from test_collectives import _program, _same, expected  # noqa: E402

ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def mpirun(n: int, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("mpirun")
    assert exe is not None, "mpirun not found: `make sysdeps` installs Open MPI (openmpi-bin)"
    return subprocess.run([exe, "-n", str(n), "--oversubscribe", sys.executable, *args],
                          capture_output=True, text=True, env=ENV, timeout=timeout)


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_under_mpirun(tmp_path: Path, n: int) -> None:
    src = tmp_path / f"coll{n}.mlir"
    src.write_text(_program(n))
    so = tmp_path / f"coll{n}.so"
    assert aot_main(["build", str(src), "-o", str(so), "--comm", "mpi", "-q"]) == 0
    run = mpirun(n, str(HERE / "mpi_ranks.py"), str(so), str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    names = set()
    for r in range(n):
        with np.load(tmp_path / f"rank{r}.npz") as got:
            for key in got.files:
                name, k = key.rsplit(":", 1)
                names.add(name)
                want = expected(name, n)[r][int(k)]
                assert _same(got[key], want), (key, r)
    assert {"ar_mean_f32_2", "rs_min_i32_1", "ag_f32_1", "bc_i32_0", "info"} <= names


def test_data_parallel_sample_under_mpirun() -> None:
    run = mpirun(2, str(ROOT / "samples" / "data_parallel" / "train.py"), "--mpi", "--steps", "60")
    assert run.returncode == 0, run.stdout + run.stderr
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("max |w_parallel - w_serial| = ")
    assert float(last.rsplit("=", 1)[1]) <= 1e-5
