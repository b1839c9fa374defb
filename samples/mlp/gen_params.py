"""Write the weights of the sample MLP (784-256-256-10, ReLU) to `mlp.npz`.

    python samples/mlp/gen_params.py [OUT_DIR] [--seed N]

The archive holds `w1 b1 w2 b2 w3 b3`, float32, in the layout `mlp.mlir`
reads them: `w` is (fan_in, fan_out) so a layer is `x @ w + b`. Weights are
He-normal (std = sqrt(2 / fan_in)), the usual init in front of a ReLU. The
biases are small random values rather than zeros so that the bias adds
contribute to the output and a wrong broadcast would show up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

SAMPLE_DIR = Path(__file__).resolve().parent

#: Layer widths, input first.
LAYERS: tuple[int, ...] = (784, 256, 256, 10)

#: Standard deviation of the random biases.
BIAS_STD = 0.05

DEFAULT_SEED = 0


def make_params(seed: int = DEFAULT_SEED) -> dict[str, np.ndarray]:
    """The MLP's parameters, a pure function of `seed`."""
    rng = np.random.default_rng(seed)
    params: dict[str, np.ndarray] = {}
    for i, (fan_in, fan_out) in enumerate(zip(LAYERS[:-1], LAYERS[1:]), start=1):
        std = np.sqrt(2.0 / fan_in)
        params[f"w{i}"] = (rng.standard_normal((fan_in, fan_out)) * std).astype(np.float32)
        params[f"b{i}"] = (rng.standard_normal(fan_out) * BIAS_STD).astype(np.float32)
    return params


def write_params(out_dir: str | Path, seed: int = DEFAULT_SEED) -> Path:
    """Write `mlp.npz` into `out_dir` (created if needed) and return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "mlp.npz"
    # numpy's stubs match **kwargs against savez's `allow_pickle: bool`.
    np.savez(path, **make_params(seed))  # type: ignore[arg-type]
    return path


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "out_dir", nargs="?", default=str(SAMPLE_DIR),
        help="directory to write mlp.npz into (default: the sample directory)",
    )
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed")
    args = ap.parse_args(argv)
    path = write_params(args.out_dir, args.seed)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
