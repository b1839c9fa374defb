"""One module instance per core, cooperating through collectives.

    ranks = mlvm.parallel.Group("step.so", workers=4)       # 4 instances, one world
    outs = ranks.run("train_step", [args_rank0, args_rank1, ...])
    mlvm.parallel.run("step.so", workers=4, fn="main", inputs=[...])  # one-off
    rank, size = mlvm.parallel.mpi_world(m)  # under mpirun: this process is one rank

Each rank is its own instance of the module (its own state), bound to a
shared-memory communicator (`mlvm/comm.h`); `run` drives every rank's call
on its own thread, pinned to a core when there are enough. A collective
that waits for its peers suspends the rank's call, which its thread
resumes. `reference_run` is the numpy oracle: each rank's interpreter on a
thread, exchanging arrays.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from mlvm.dialect.collective import COMM_KEY
from mlvm.loader import Module, _aligned_empty, _ffi


class Group:
    """`workers` instances of one module in one shared-memory world.

    `modules[r]` is rank r's instance (its `state` is rank r's). Instances
    keep their state across `run` calls.
    """

    def __init__(
        self,
        module: str | Path | Module,
        workers: int,
        *,
        imports: Mapping[str, Callable[..., Any]] | None = None,
        params: str | Path | None = None,
        pin: bool = True,
    ) -> None:
        path = module.path if isinstance(module, Module) else Path(module)
        if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 16:
            raise ValueError(f"workers must be an int from 1 to 16, got {workers!r}")
        self.workers = workers
        self.modules = [Module(path, imports, params=params) for _ in range(workers)]
        lib = self.modules[0]._lib
        self._world_buf, self._world = _aligned_empty(int(lib.mlvm_shm_world_bytes()))
        if lib.mlvm_shm_world_init(self._world, workers) != 0:
            raise ValueError(f"cannot make a world of {workers} ranks")
        for r, m in enumerate(self.modules):
            buf, ptr = _aligned_empty(int(lib.mlvm_shm_comm_bytes()))
            lib.mlvm_shm_comm_init(ptr, self._world, r)
            m._instance.comm = ptr
            m._comm_keep = buf
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self._cpus = cpus if pin and len(cpus) >= workers else []
        self._threads: list[threading.Thread] = []
        self._jobs: list[queue.SimpleQueue[Any]] = []
        self._done: list[queue.SimpleQueue[Any]] = []
        self._closed = False
        self._broken: str | None = None

    def run(self, fn: str | Sequence[str], inputs: Sequence[Sequence[Any]]) -> list[Any]:
        """Rank r runs `fn(*inputs[r])` (or `fn[r]`, one export per rank, for
        pipelines of send / recv); the results in rank order (each as the
        function returns it: an array or a tuple)."""
        if len(inputs) != self.workers:
            raise ValueError(f"inputs must hold {self.workers} argument lists, got {len(inputs)}")
        names = [fn] * self.workers if isinstance(fn, str) else list(fn)
        if len(names) != self.workers:
            raise ValueError(f"fn must name one export or {self.workers}, got {len(names)}")
        if self._closed:
            raise ValueError("the group is closed")
        if self._broken is not None:
            raise RuntimeError(f"a rank failed in an earlier run ({self._broken}); "
                               "its world is unusable: make a new Group")
        # Every rank's arguments are checked before any rank starts: a rank
        # that fails alone leaves its peers waiting at their first collective.
        for r in range(self.workers):
            fn_ = self.modules[r][names[r]]
            args = tuple(inputs[r])
            try:
                fn_._arity(args)
                for i, x in enumerate(args):
                    fn_._check(i, x)
            except (TypeError, ValueError) as e:
                raise ValueError(f"rank {r}: {e}") from None
        self._start()
        for r in range(1, self.workers):
            self._jobs[r].put((names[r], tuple(inputs[r])))
        # Rank 0 runs on the calling thread: one hand-off fewer per call.
        first = self._call(0, names[0], tuple(inputs[0]))
        outs = [first, *(self._done[r].get() for r in range(1, self.workers))]
        for r, (ok, value) in enumerate(outs):
            if not ok:
                raise RuntimeError(f"rank {r}: {value}") from value
        return [value for _, value in outs]

    # Each rank's thread lives as long as the group: a call costs a hand-off,
    # not a thread.
    def _start(self) -> None:
        if self._threads or self.workers == 1:
            return
        self._jobs = [queue.SimpleQueue() for _ in range(self.workers)]
        self._done = [queue.SimpleQueue() for _ in range(self.workers)]
        self._threads = [threading.Thread(target=self._rank, args=(r,), daemon=True)
                         for r in range(1, self.workers)]
        for t in self._threads:
            t.start()

    def _rank(self, r: int) -> None:
        if self._cpus:
            os.sched_setaffinity(0, {self._cpus[r]})
        while True:
            job = self._jobs[r].get()
            if job is None:
                return
            self._done[r].put(self._call(r, *job))

    def _call(self, r: int, name: str, args: tuple[Any, ...]) -> tuple[bool, Any]:
        try:
            call = self.modules[r][name].begin(*args)
            call.drive()
            return True, call.result()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            # The others would wait for this rank forever: their collectives
            # fail instead, and the world is not used again.
            self._broken = f"rank {r}: {e}"
            self.modules[0]._lib.mlvm_shm_world_poison(self._world)
            return False, e

    def close(self) -> None:
        """Stops the ranks' threads (the modules stay usable one by one)."""
        self._closed = True
        for q in getattr(self, "_jobs", []):
            q.put(None)
        for t in self._threads:
            t.join()
        self._threads = []

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_threads", None):
            self.close()


def mpi_world(module: Module) -> tuple[int, int]:
    """Binds `module` (built with `--comm mpi` / `CompileOptions(comm="mpi")`)
    to MPI_COMM_WORLD, initialising MPI if needed: under `mpirun -n N`, each
    process is one rank. Returns (rank, size); MPI is finalised at exit."""
    lib = module._lib
    nbytes = int(lib.mlvm_mpi_comm_bytes())
    if nbytes == 0:
        raise ValueError(f"{module._where}: built without MPI; build it with --comm mpi "
                         "(CompileOptions(comm=\"mpi\"))")
    buf, ptr = _aligned_empty(nbytes)
    if lib.mlvm_mpi_world_init(ptr) != 0:
        raise RuntimeError("MPI could not be initialised")
    module._instance.comm = ptr
    module._comm_keep = buf
    atexit.register(lib.mlvm_mpi_finalize)
    info = _ffi.cast("struct { void *ops; int32_t rank; int32_t size; } *", ptr)
    return int(info.rank), int(info.size)


def run(module: str | Path | Module, workers: int, fn: str = "main",
        inputs: Sequence[Sequence[Any]] | None = None, **kw: Any) -> list[Any]:
    """A one-off `Group(module, workers).run(fn, inputs)` (fresh state)."""
    with Group(module, workers, **kw) as group:
        return group.run(fn, inputs if inputs is not None else [()] * workers)


class _ThreadView:
    """A rank's world for the numpy reference: ranks on threads."""

    def __init__(self, rank: int, shared: _Shared) -> None:
        self.rank = rank
        self.size = shared.size
        self._shared = shared

    def exchange(self, value: np.ndarray) -> list[np.ndarray]:
        s = self._shared
        s.board[self.rank] = np.array(value, copy=True)
        s.barrier.wait()
        out = [a.copy() for a in s.board]
        s.barrier.wait()
        return out

    def send(self, peer: int, tag: int, value: np.ndarray) -> None:
        self._shared.mail[(self.rank, peer)].put((tag, np.array(value, copy=True)))

    def recv(self, peer: int, tag: int) -> np.ndarray:
        got_tag, value = self._shared.mail[(peer, self.rank)].get(timeout=60)
        if got_tag != tag:
            raise ValueError(f"rank {self.rank}: expected tag {tag} from rank {peer}, got {got_tag}")
        arr: np.ndarray = value
        return arr


class _Shared:
    def __init__(self, size: int) -> None:
        self.size = size
        self.barrier = threading.Barrier(size)
        self.board: list[np.ndarray] = [np.zeros(0)] * size
        self.mail: dict[tuple[int, int], queue.Queue[tuple[int, np.ndarray]]] = {
            (a, b): queue.Queue() for a in range(size) for b in range(size)
        }


def reference_run(module: ModuleOp, fn: str, inputs: Sequence[Sequence[np.ndarray]],
                  params: Mapping[str, Any] | None = None) -> list[list[np.ndarray]]:
    """Each rank's results of `fn` by the op references (mlvm.reference),
    ranks on threads exchanging arrays: the oracle of `run`."""
    from mlvm import reference

    shared = _Shared(len(inputs))
    results: list[list[np.ndarray]] = [[] for _ in inputs]
    errors: list[BaseException | None] = [None] * len(inputs)

    def rank(r: int) -> None:
        try:
            p = {**(params or {}), COMM_KEY: _ThreadView(r, shared)}
            results[r] = reference.run(module, fn, list(inputs[r]), p)
        except BaseException as e:  # noqa: BLE001 - raised below
            errors[r] = e
            shared.barrier.abort()

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r, e in enumerate(errors):
        if e is not None and not isinstance(e, threading.BrokenBarrierError):
            raise RuntimeError(f"rank {r}: {e}") from e
    return results


__all__ = ["Group", "run", "reference_run", "mpi_world"]
