"""Where each SSA value of a function lives, and for how long.

A value's bytes are one of: a caller-owned input, a caller-owned output, a
compile-time constant, a global's bytes in the instance's state, or a buffer
in the arena. Views (`reshape`) and ops marked in place by `mlvm-inplace`
alias an operand's storage.

State is used in place where that cannot change a result: a
`mlvm.global_load` names the state bytes when no store to that global comes
while its value is still read, and a value stored to a global is computed
straight into the global's bytes when nothing reads the old value after it
is written (an elementwise op may read it at the same element, as in
`w = w - lr * g`). Functions that suspend copy instead: another call on the
instance may run while they wait.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from mlvm.dialect.base import MlvmOp
from mlvm.dialect.elements import elem_of_type
from mlvm.dialect.state import GlobalLoadOp, GlobalStoreOp


def nbytes(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, TensorType)
    e = elem_of_type(t.element_type)
    assert e is not None
    return e.size * prod(t.get_shape())


def _aliased(v: SSAValue) -> SSAValue:
    """The operand whose bytes v reuses (a view's, an in-place op's), or v."""
    owner = v.owner
    if isinstance(owner, MlvmOp) and v is owner.results[0]:
        k = owner.alias_operand()
        if k is not None:
            return owner.operands[k]
    return v


class Roots:
    """The value that owns the bytes each value of one function names
    (through views and in-place ops), each alias chain walked once: answers
    are remembered (path compression), so a chain of n in-place ops costs
    O(n) in all rather than per query. `alias` records an in-place decision
    taken after some answers were given."""

    def __init__(self) -> None:
        self._up: dict[SSAValue, SSAValue] = {}  # a value nearer the root; the root itself

    def __call__(self, v: SSAValue) -> SSAValue:
        path: list[SSAValue] = []
        while True:
            up = self._up.get(v)
            if up is None:
                up = self._up[v] = _aliased(v)
            if up is v:
                break
            path.append(v)
            v = up
        for p in path:
            self._up[p] = v
        return v

    def alias(self, v: SSAValue, onto: SSAValue) -> None:
        """v, a root so far, now names onto's bytes."""
        self._up[v] = onto


@dataclass(frozen=True)
class Storage:
    kind: str  # "input" | "output" | "data" | "state" | "arena"
    index: int = -1  # input/output position
    name: str = ""  # the global, for "state"


@dataclass(eq=False)
class Interval:
    value: SSAValue | MlvmOp  # a buffer, or the workspace of an op
    start: int  # index of the defining op
    end: int  # index of the last op that reads it (or an alias of it)
    size: int


@dataclass
class FunctionStorage:
    func: func.FuncOp
    storage: dict[SSAValue, Storage]
    intervals: list[Interval]
    roots: Roots = field(default_factory=Roots)

    def of(self, v: SSAValue) -> Storage:
        return self.storage[self.roots(v)]


def last_reads(ops: list[Operation], roots: Roots | None = None) -> dict[SSAValue, int]:
    """For each storage root, the index of the last op reading it or an alias."""
    find = roots if roots is not None else Roots()
    last: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for operand in op.operands:
            last[find(operand)] = i
    return last


def _state_ops(ops: list[Operation]) -> list[tuple[int, GlobalLoadOp | GlobalStoreOp, str]]:
    return [
        (i, op, op.global_.string_value())
        for i, op in enumerate(ops)
        if isinstance(op, GlobalLoadOp | GlobalStoreOp)
    ]


@dataclass
class _Scan:
    """What the state rules read of a function's ops, gathered once."""

    ops: list[Operation]
    index: dict[Operation, int]
    last: dict[SSAValue, int]
    accesses: list[tuple[int, GlobalLoadOp | GlobalStoreOp, str]]
    suspends: bool
    roots: Roots


def _scan(ops: list[Operation], roots: Roots) -> _Scan:
    return _Scan(
        ops, {op: i for i, op in enumerate(ops)}, last_reads(ops, roots), _state_ops(ops),
        any(isinstance(op, MlvmOp) and op.SUSPENDS for op in ops), roots,
    )


def state_views(f: func.FuncOp, roots: Roots | None = None) -> set[SSAValue]:
    """Results of `mlvm.global_load` that name the state bytes themselves:
    no store to the global comes while they are read, and the function does
    not suspend. Depends only on reads (nothing writes over a view)."""
    return _views(_scan(list(f.body.block.ops), roots if roots is not None else Roots()))


def _views(sc: _Scan) -> set[SSAValue]:
    if sc.suspends:
        return set()
    views: set[SSAValue] = set()
    for i, op, g in sc.accesses:
        if not isinstance(op, GlobalLoadOp):
            continue
        end = sc.last.get(op.result, i)
        if not any(
            isinstance(s, GlobalStoreOp) and name == g and i < j < end
            for j, s, name in sc.accesses
        ):
            views.add(op.result)
    return views


def _reads_only_elementwise(op: MlvmOp, view: SSAValue, roots: Roots) -> bool:
    """Whether op may write result 0 over `view`'s bytes while reading them:
    each of its operands on those bytes is read at the element it writes."""
    hits = [k for k, v in enumerate(op.operands) if roots(v) is view]
    return bool(hits) and all(op.can_run_inplace(k) for k in hits)


def _state_placements(
    sc: _Scan, views: set[SSAValue], taken: dict[SSAValue, Storage]
) -> dict[SSAValue, Storage]:
    """Values computed straight into the global they are stored to."""
    if sc.suspends:
        return {}
    ops, index, last, accesses, root_of = sc.ops, sc.index, sc.last, sc.accesses, sc.roots
    placed: dict[SSAValue, Storage] = {}
    globals_placed: set[str] = set()
    for s, store, g in accesses:
        if not isinstance(store, GlobalStoreOp) or g in globals_placed:
            continue
        r = root_of(store.value)
        if isinstance(r, BlockArgument) or r in taken or r in placed or r in views:
            continue
        owner = r.owner
        if not isinstance(owner, MlvmOp) or owner.IS_DATA or isinstance(owner, GlobalLoadOp):
            continue
        d = index[owner]
        ok = True
        for j, other, name in accesses:
            if name != g or other is store:
                continue
            if isinstance(other, GlobalLoadOp):
                if d < j < s:  # would read the new value before the store
                    ok = False
                elif other.result in views and j < d:
                    end = last.get(other.result, j)
                    if end > d or (end == d and not (
                        r is owner.results[0] and _reads_only_elementwise(owner, other.result, root_of)
                    )):
                        ok = False
            elif d < j < last.get(r, s):  # another store while r is still read
                ok = False
        # Nothing may write over r's bytes (in place) once they are stored.
        if any(
            "mlvm.inplace" in op.attributes and root_of(op.results[0]) is r
            for op in ops[s + 1 :]
        ):
            ok = False
        if ok:
            placed[r] = Storage("state", name=g)
            globals_placed.add(g)
    return placed


def _return_op(f: func.FuncOp) -> func.ReturnOp:
    last = f.body.block.last_op
    assert isinstance(last, func.ReturnOp)
    return last


def analyze(f: func.FuncOp, workspaces: bool = True) -> FunctionStorage:
    """Storage of every value; with `workspaces`, the kernels' scratch too."""
    block = f.body.block
    ret = _return_op(f)
    root_of = Roots()
    storage: dict[SSAValue, Storage] = {}
    for i, arg in enumerate(block.args):
        storage[arg] = Storage("input", i)
    # A returned value is computed straight into the caller's output buffer;
    # through a reshape too, since an alias has the same bytes.
    for j, v in enumerate(ret.operands):
        r = root_of(v)
        if r not in storage and not isinstance(r, BlockArgument):
            owner = r.owner
            if isinstance(owner, MlvmOp) and not owner.IS_DATA:
                storage[r] = Storage("output", j)

    sc = _scan(list(block.ops), root_of)
    views = _views(sc)
    for v in views:
        owner = v.owner
        assert isinstance(owner, GlobalLoadOp)
        storage[v] = Storage("state", name=owner.global_.string_value())
    storage.update(_state_placements(sc, views, storage))

    index = sc.index
    intervals: dict[SSAValue, Interval] = {}
    for op in block.ops:
        if not isinstance(op, MlvmOp):
            continue
        for r in op.results:
            if root_of(r) is not r or r in storage:
                continue
            if op.IS_DATA:
                storage[r] = Storage("data")
                continue
            storage[r] = Storage("arena")
            intervals[r] = Interval(r, index[op], index[op], nbytes(r))
    scratch = [
        Interval(op, index[op], index[op], ws)
        for op in block.ops
        if isinstance(op, MlvmOp) and (workspaces or op.workspace_required())
        and (ws := op.workspace_bytes()) > 0
    ]
    for op in block.ops:
        for operand in op.operands:
            iv = intervals.get(root_of(operand))
            if iv is not None:
                iv.end = max(iv.end, index[op])
    return FunctionStorage(f, storage, list(intervals.values()) + scratch, root_of)
