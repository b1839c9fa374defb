"""mlvm-plan-memory's placement and lower bound on random lifetimes, against
rules written out here pair by pair: no two buffers live at one op share a
byte, every buffer sits at the lowest offset free of those placed before it
in at least one of the orders tried, and the lower bound is the most bytes
live at any op."""

from __future__ import annotations

import random

import pytest

from mlvm.analysis.storage import Interval
from mlvm.passes.plan_memory import _ORDERS, _align, lower_bound, peak, place


def _random_intervals(rng: random.Random) -> list[Interval]:
    n, horizon = rng.randint(0, 50), rng.randint(1, 120)
    out = []
    for _ in range(n):
        start = rng.randint(0, horizon)
        length = rng.randint(0, 3) if rng.random() < 0.7 else rng.randint(0, horizon)
        size = rng.choice([0, 1, 4, 64, 100, 4096, rng.randint(1, 5000)])
        out.append(Interval(object(), start, start + length, size))
    return out


def _live_together(a: Interval, b: Interval) -> bool:
    return a.start <= b.end and b.start <= a.end


def _lowest_free(iv: Interval, placed: dict[Interval, int], alignment: int) -> int:
    """The lowest offset where iv fits among `placed` (brute force over
    candidate offsets: 0 and every placed buffer's end)."""
    size = _align(iv.size, alignment)
    for off in sorted({0, *(o + _align(p.size, alignment) for p, o in placed.items())}):
        if all(off + size <= o or o + _align(p.size, alignment) <= off
               for p, o in placed.items() if _live_together(iv, p)):
            return off
    raise AssertionError("no offset")


@pytest.mark.parametrize("seed", range(40))
def test_placement_and_bound(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(10):
        ivs = _random_intervals(rng)
        alignment = rng.choice([1, 16, 64])
        offsets = place(ivs, alignment)
        assert set(offsets) == set(ivs)
        for i, a in enumerate(ivs):
            for b in ivs[i + 1:]:
                if a.size and b.size and _live_together(a, b):
                    oa, ob = offsets[a], offsets[b]
                    assert oa + a.size <= ob or ob + b.size <= oa, (a, b)
        # the plan is one of the greedy orders', each buffer at its lowest gap
        greedy = []
        for key in _ORDERS:
            placed: dict[Interval, int] = {}
            for iv in sorted(ivs, key=key):
                placed[iv] = _lowest_free(iv, placed, alignment)
            greedy.append(placed)
        assert offsets in greedy
        assert peak(offsets) == min(peak(g) for g in greedy)
        points = {iv.start for iv in ivs}
        want = max((sum(_align(iv.size, alignment) for iv in ivs if iv.start <= t <= iv.end)
                    for t in points), default=0)
        assert lower_bound(ivs, alignment) == want
        assert peak(offsets) >= lower_bound(ivs, 1)
