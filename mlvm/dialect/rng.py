"""Counter-based normal samples for `mlvm.rng_normal`.

Element i of a tensor with seed s is a pure function of (s, i): two 53-bit
uniforms from splitmix64 of the counter, then Box-Muller in float64 rounded
once to float32. The compiler evaluates it and embeds the bits, so every
target sees identical values whatever its libm.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def normal(seed: int, shape: Sequence[int]) -> np.ndarray:
    n = prod(shape)
    base = _splitmix64(np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64))[0]
    with np.errstate(over="ignore"):
        ctr = base + np.arange(n, dtype=np.uint64) * np.uint64(2)
    r1 = _splitmix64(ctr) >> np.uint64(11)
    r2 = _splitmix64(ctr + np.uint64(1)) >> np.uint64(11)
    scale = 1.0 / float(1 << 53)
    u1 = (r1.astype(np.float64) + 1.0) * scale  # (0, 1]: log is finite
    u2 = r2.astype(np.float64) * scale
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return z.astype(np.float32).reshape(tuple(shape))
