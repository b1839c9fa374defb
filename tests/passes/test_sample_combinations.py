"""The samples under every on/off combination of the passes.

Each build must agree with the numpy reference interpreter; builds that
differ only in fusion and in-place must agree bit for bit.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import mlvm
from mlvm import reference
from mlvm.dialect.state import state_key
from mlvm.pipeline import CompileOptions, parse_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples" / "mlp"))
from gen_params import make_params  # noqa: E402

COMBOS = list(itertools.product((True, False), repeat=3))  # canonicalize, fuse, inplace


def mlp_case() -> tuple[Path, dict[str, np.ndarray], str, list[np.ndarray]]:
    rng = np.random.default_rng(1)
    return ROOT / "samples/mlp/mlp.mlir", make_params(), "main", [
        rng.standard_normal((1, 784)).astype(np.float32)
    ]


def train_case() -> tuple[Path, dict[str, np.ndarray], str, list[np.ndarray]]:
    rng = np.random.default_rng(2)
    params = [
        (rng.standard_normal((64, 32)) * 0.2).astype(np.float32),
        (rng.standard_normal(32) * 0.1).astype(np.float32),
        (rng.standard_normal((32, 10)) * 0.2).astype(np.float32),
        (rng.standard_normal(10) * 0.1).astype(np.float32),
    ]
    x = rng.uniform(0, 1, (32, 64)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    archive = dict(zip(("w1", "b1", "w2", "b2"), params))
    return ROOT / "samples/mnist_train/train_step.mlir", archive, "train_step", [*params, x, y]


def sgd_case() -> tuple[Path, dict[str, np.ndarray], str, list[np.ndarray]]:
    """The step with its weights and velocities in the module state."""
    path, archive, _, inputs = train_case()
    lr, mu = np.array(0.05, np.float32), np.array(0.9, np.float32)
    return path, archive, "sgd_step", [*inputs[4:], lr, mu]


@pytest.mark.parametrize("case", [mlp_case, train_case, sgd_case], ids=("mlp", "train_step", "sgd_step"))
def test_sample_under_every_combination(case: object) -> None:
    path, params, fn, inputs = case()  # type: ignore[operator]
    module, _ = parse_file(path)
    # Twice: the second call starts from the state the first one left.
    ref_state = dict(params)
    want = reference.run(module, fn, inputs, ref_state)
    want = reference.run(module, fn, inputs, ref_state)
    want += [ref_state[k] for k in sorted(ref_state) if k.startswith(state_key(""))]
    outs = {}
    for canon, fuse, inplace in COMBOS:
        opts = CompileOptions(canonicalize=canon, fuse=fuse, inplace=inplace)
        m = mlvm.compile(path, params=params, options=opts)
        m.reset_state()
        m[fn](*inputs)
        got = m[fn](*inputs)
        got = list(got) if isinstance(got, tuple) else [got]
        got += [m.state[k.removeprefix(state_key(""))] for k in sorted(ref_state)
                if k.startswith(state_key(""))]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=str((canon, fuse, inplace)))
        outs[(canon, fuse, inplace)] = got
    for (canon, fuse, inplace), got in outs.items():
        base = outs[(canon, False, False)]
        for g, b in zip(got, base, strict=True):
            assert np.array_equal(g.view(np.uint32), b.view(np.uint32)), (canon, fuse, inplace)
