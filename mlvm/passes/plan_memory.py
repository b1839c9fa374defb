"""Give every arena-resident value of each function an offset in one arena.

Liveness is taken over the whole function (a value lives from its defining
op to its last reader, aliases included). Buffers are placed greedily, each
at the lowest offset that no simultaneously live buffer occupies, in a few
orders (largest first, largest lifetime x size first, program order,
latest death first); the smallest arena wins. The plan is checked by `validate` before it is written
into the IR:

  * each mlvm op gets `mlvm.offsets = array<i64: ...>`, one per result
    (-1 where the result is not in the arena), and an op whose kernel needs
    scratch (`workspace_bytes`) gets `mlvm.workspace = N : i64`, its
    offset: the workspace is a buffer that lives while the op runs;
  * each function gets `mlvm.arena_bytes = N : i64` and
    `mlvm.arena_lower_bound = L : i64`, the most bytes live at any one op.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from mlvm.analysis.storage import Interval, analyze
from mlvm.dialect.base import MlvmOp
from mlvm.passes import defined_functions


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _overlap_in_time(a: Interval, b: Interval) -> bool:
    return a.start <= b.end and b.start <= a.end


def _conflicts(intervals: list[Interval]) -> dict[int, list[Interval]]:
    """For each buffer (by id), the buffers live at some op it is live at:
    one sweep in start order over a heap of the live ones by end, so the
    cost is the number of such pairs, not every pair."""
    out: dict[int, list[Interval]] = {id(iv): [] for iv in intervals}
    live: list[tuple[int, int, Interval]] = []  # (end, tie-break, buffer)
    for k, iv in enumerate(sorted(intervals, key=lambda iv: iv.start)):
        while live and live[0][0] < iv.start:
            heapq.heappop(live)
        for _, _, o in live:
            out[id(iv)].append(o)
            out[id(o)].append(iv)
        heapq.heappush(live, (iv.end, k, iv))
    return out


def _place_in_order(order: list[Interval], alignment: int,
                    conflicts: dict[int, list[Interval]]) -> dict[Interval, int]:
    """Each buffer, in `order`, at the lowest gap free for its whole lifetime
    (among the buffers placed before it, those it `conflicts` with)."""
    offsets: dict[Interval, int] = {}
    for iv in order:
        size = _align(iv.size, alignment)
        busy = sorted(
            (offsets[o], offsets[o] + _align(o.size, alignment))
            for o in conflicts[id(iv)]
            if o in offsets
        )
        off = 0
        for lo, hi in busy:
            if off + size <= lo:
                break
            off = max(off, hi)
        offsets[iv] = off
    return offsets


def peak(offsets: dict[Interval, int]) -> int:
    return max((off + iv.size for iv, off in offsets.items()), default=0)


# Orders tried; the smallest arena wins (ties: the first).
_ORDERS = (
    lambda iv: (-iv.size, iv.start),  # largest first (TFLite's greedy by size)
    lambda iv: (-(iv.end - iv.start) * iv.size, iv.start),  # largest area first
    lambda iv: (iv.start, -iv.size),  # program order
    lambda iv: (-iv.end, -iv.size),  # latest death first (backward passes)
)


def place(intervals: list[Interval], alignment: int) -> dict[Interval, int]:
    """Offsets for every buffer: the best of a few greedy placements."""
    best: dict[Interval, int] = {}
    conflicts = _conflicts(intervals)
    for key in _ORDERS:
        cand = _place_in_order(sorted(intervals, key=key), alignment, conflicts)
        if not best or peak(cand) < peak(best):
            best = cand
    return best


def lower_bound(intervals: list[Interval], alignment: int) -> int:
    """Max over program points of the bytes live there: no plan can beat it.
    One sweep: a buffer counts from its start to its end, inclusive (the
    ends of a point are taken off after the point is counted)."""
    events = sorted(
        ev for iv in intervals
        for ev in ((iv.start, 0, _align(iv.size, alignment)), (iv.end, 1, -_align(iv.size, alignment)))
    )
    live = best = 0
    for _, kind, delta in events:
        live += delta
        if kind == 0:
            best = max(best, live)
    return best


def validate(offsets: dict[Interval, int]) -> None:
    """Reject any plan in which two simultaneously live buffers share bytes."""
    items = sorted(offsets.items(), key=lambda kv: kv[1])
    for i, (a, oa) in enumerate(items):
        for b, ob in items[i + 1 :]:
            if ob >= oa + a.size:
                break
            if b.size > 0 and _overlap_in_time(a, b):  # an empty buffer has no bytes
                raise PassFailedException(
                    f"memory plan overlaps: buffers at [{oa}, {oa + a.size}) and "
                    f"[{ob}, {ob + b.size}) are live together"
                )


MAX_ARENA_BYTES = 1 << 48
"""Largest arena a function may need (offsets are i64; tensors are bounded
by --max-bytes before this pass, a kernel's workspace is not)."""


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    name = "mlvm-plan-memory"

    alignment: int = 64
    # Scratch for the kernels that can use it (conv2d's padded input copy);
    # without it they take their slower paths and the arena is smaller.
    workspaces: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alignment <= 0 or self.alignment & (self.alignment - 1):
            raise PassFailedException(
                f"mlvm-plan-memory: alignment {self.alignment} is not a power of two"
            )
        for f in defined_functions(op):
            self._plan(f)

    def _plan(self, f: func.FuncOp) -> None:
        fs = analyze(f, self.workspaces)
        offsets = place(fs.intervals, self.alignment)
        validate(offsets)
        need = peak(offsets)
        if need > MAX_ARENA_BYTES:  # kernel workspaces are not bounded by --max-bytes
            raise PassFailedException(
                f"mlvm-plan-memory: @{f.sym_name.data} needs an arena of {need} bytes "
                f"(more than {MAX_ARENA_BYTES})")
        by_value = {iv.value: off for iv, off in offsets.items()}
        for o in f.body.block.ops:
            if isinstance(o, MlvmOp) and o.results:
                o.attributes["mlvm.offsets"] = DenseArrayBase.from_list(
                    i64, [by_value.get(r, -1) for r in o.results]
                )
            if isinstance(o, MlvmOp) and o in by_value:
                o.attributes["mlvm.workspace"] = IntegerAttr(by_value[o], i64)
        total = _align(peak(offsets), self.alignment)
        f.attributes["mlvm.arena_bytes"] = IntegerAttr(total, i64)
        f.attributes["mlvm.arena_lower_bound"] = IntegerAttr(
            lower_bound(fs.intervals, self.alignment), i64
        )
