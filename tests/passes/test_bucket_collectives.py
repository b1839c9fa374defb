"""mlvm-bucket-collectives: the data-parallel step with its five all-reduces
in one bucket gives the same bits as with five, on 2 and 3 ranks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context

import mlvm
import mlvm.parallel as par
from mlvm.dialect.collective import AllReduceOp
from mlvm.pipeline import CompileOptions, parse_file
from mlvm.passes.bucket_collectives import BucketCollectivesPass

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples" / "data_parallel"))
from step import step_source  # noqa: E402


@pytest.mark.parametrize("ranks", [2, 3])
def test_buckets_change_no_bits(tmp_path: Path, ranks: int) -> None:
    local = 6
    src = tmp_path / "step.mlir"
    src.write_text(step_source(local))
    module, _ = parse_file(src)
    BucketCollectivesPass().apply(Context(), module)
    assert sum(isinstance(o, AllReduceOp) for o in module.walk()) == 1
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((64, 32)).astype(np.float32) * 0.1,
              "b1": np.zeros(32, np.float32),
              "w2": rng.standard_normal((32, 10)).astype(np.float32) * 0.1,
              "b2": np.zeros(10, np.float32)}
    lr = np.array(0.5, np.float32)
    states = []
    for bucket in (True, False):
        m = mlvm.compile(src, params=params, options=CompileOptions(bucket_collectives=bucket))
        with par.Group(m, ranks, pin=False) as group:
            data = np.random.default_rng(1)
            losses = []
            for _ in range(5):
                ins = [(data.random((local, 64), np.float32),
                        np.eye(10, dtype=np.float32)[data.integers(0, 10, local)], lr)
                       for _ in range(ranks)]
                losses.append(group.run("step", ins)[0])
            states.append(([group.modules[0].state[k] for k in ("w1", "b1", "w2", "b2")], losses))
    (w_b, l_b), (w_n, l_n) = states
    assert all(a.tobytes() == b.tobytes() for a, b in zip(w_b, w_n, strict=True))
    assert [x.tobytes() for x in l_b] == [x.tobytes() for x in l_n]
