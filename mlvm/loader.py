"""Loading a module .so through cffi (ABI mode): numpy in, numpy out.

The loader reads everything from the module descriptor the .so exports
(`mlvm_so_module`): no side file. Arguments are checked here, at the
boundary, so the generated code can run unchecked.
"""

from __future__ import annotations

import functools
import math
import mmap
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import cffi
import numpy as np

from mlvm.dialect.elements import ELEMS

MODULE_MAGIC = 0x4D4C564D
ABI_VERSION = 3
ARENA_ALIGN = 64
MAX_RANK = 8  # the compiler's limit (mlvm.dialect.shapes.MAX_RANK) and the runtime's
MAX_BYTES = 1 << 40  # the compiler's default limit on any one buffer
MAX_ENTRIES = 1 << 16  # exports, imports, queues, tensors of one entry
MAX_NAME = 1 << 16  # bytes of one name
MAX_CALL_BYTES = 1 << 24  # a call state: a header, a resume point and pointers

_CDEF = """
typedef struct {
    const char *name; int32_t dtype; int32_t rank; const int64_t *dims;
} mlvm_tensor_desc_t;
typedef struct { const char *where; int64_t index; float got; float want; } mlvm_check_report_t;
typedef struct {
    int32_t pc; int32_t status; const void *inst; unsigned char *arena;
    mlvm_check_report_t check;
} mlvm_call_header_t;
typedef int (*mlvm_entry_fn)(void *arena, void *const *inputs, void *const *outputs);
typedef int (*mlvm_begin_fn)(void *call, const void *inst, void *arena,
                             void *const *inputs, void *const *outputs);
typedef int (*mlvm_resume_fn)(void *call);
typedef struct {
    const char *name; int32_t num_inputs; int32_t num_outputs;
    const mlvm_tensor_desc_t *inputs; const mlvm_tensor_desc_t *outputs;
    size_t arena_bytes; mlvm_entry_fn call;
    size_t call_bytes; mlvm_begin_fn begin; mlvm_resume_fn resume;
    int32_t suspends; int32_t takes_instance;
    void (*direct)(void);
} mlvm_export_t;
typedef struct {
    const char *name; int32_t num_args; int32_t num_results;
    const mlvm_tensor_desc_t *args; const mlvm_tensor_desc_t *results;
} mlvm_import_desc_t;
typedef struct { const char *name; mlvm_tensor_desc_t elem; } mlvm_queue_desc_t;
typedef struct {
    mlvm_tensor_desc_t tensor; size_t offset; size_t bytes; const void *init;
} mlvm_global_desc_t;
typedef struct {
    uint32_t magic; uint32_t abi_version; const char *name;
    int32_t num_exports; int32_t num_imports;
    const mlvm_export_t *exports; const mlvm_import_desc_t *imports;
    size_t arena_bytes;
    int32_t num_queues; int32_t num_globals;
    const mlvm_queue_desc_t *queues;
    size_t state_bytes; const mlvm_global_desc_t *globals;
    int32_t num_params; int32_t pad_; const mlvm_tensor_desc_t *params;
} mlvm_module_t;
typedef int (*mlvm_native_fn)(void *user, void *const *args, void *const *results);
typedef struct { const char *name; mlvm_native_fn fn; void *user; } mlvm_native_t;
typedef struct {
    const char *name; size_t elem_bytes; uint32_t capacity; unsigned char *storage;
    uint32_t head; uint32_t tail;
} mlvm_queue_t;
typedef struct {
    const mlvm_module_t *module; const mlvm_native_t *const *imports; mlvm_queue_t *const *queues;
    unsigned char *state; const void *const *params; void *comm;
} mlvm_instance_t;
int mlvm_call_drive(mlvm_resume_fn resume, void *call, size_t max_resumes, int (*idle)(void));
int mlvm_call_steps(const mlvm_export_t *fn, const void *inst, void *call, void *arena,
                    size_t steps, void *const *inputs, const size_t *in_strides,
                    void *const *outputs, const size_t *out_strides, void **ptrs, size_t *done);
int sched_yield(void);
size_t mlvm_mpi_comm_bytes(void);
int mlvm_mpi_world_init(void *comm_storage);
int mlvm_mpi_finalize(void);
size_t mlvm_shm_world_bytes(void);
size_t mlvm_shm_comm_bytes(void);
int mlvm_shm_world_init(void *w, int32_t size);
int mlvm_shm_comm_init(void *c, void *w, int32_t rank);
void mlvm_shm_world_poison(void *w);
typedef struct {
    mlvm_native_t native; const mlvm_instance_t *target; const mlvm_export_t *fn;
    void *arena; void *call; const void *owner; int32_t running; int32_t pad_;
} mlvm_link_t;
void mlvm_link_reset(mlvm_link_t *link);
int mlvm_link_call(void *user, void *const *args, void *const *results);
int mlvm_instance_bind_params(mlvm_instance_t *inst, const void *blob, size_t blob_bytes,
                              const void **slots, const char **what);
int mlvm_instance_bind_state(mlvm_instance_t *inst, void *state, size_t bytes);
int mlvm_instance_reset_state(mlvm_instance_t *inst);
const mlvm_module_t *mlvm_so_module(void);
int mlvm_queue_init(mlvm_queue_t *q, const char *name, size_t elem_bytes,
                    uint32_t capacity, void *storage);
int mlvm_queue_push(mlvm_queue_t *q, const void *elem);
int mlvm_queue_pop(mlvm_queue_t *q, void *elem);
uint32_t mlvm_queue_size(const mlvm_queue_t *q);
"""

_ffi = cffi.FFI()
_ffi.cdef(_CDEF)

_DTYPES = {e.code: e.dtype for e in ELEMS.values()}
_from_buffer = _ffi.from_buffer
# numpy's flag bits (ndarray.flags.num): the fast path tests them at once.
# ALIGNED means the data pointer is a multiple of the dtype's alignment.
_C_CONTIGUOUS, _ALIGNED, _WRITEABLE = 0x0001, 0x0100, 0x0400
_HEADER_BYTES = _ffi.sizeof("mlvm_call_header_t")

OK, SUSPENDED = 0, 1
ERR_IMPORT = -5
ERR_CHECK = -6
STATUS_NAMES = {
    0: "OK", 1: "SUSPENDED", -1: "ERR_INVALID", -2: "ERR_SHAPE", -3: "ERR_BOUNDS",
    -4: "ERR_NOMEM", -5: "ERR_IMPORT", -6: "ERR_CHECK", -7: "ERR_BUSY",
}


class _WouldBlock:
    def __repr__(self) -> str:
        return "mlvm.WOULD_BLOCK"


WOULD_BLOCK = _WouldBlock()
"""What a Python native function returns to make the call suspend and retry."""


class MlvmCallError(RuntimeError):
    """A call into generated code returned an error status."""


class _Frame:
    """One foreign call (a begin or a resume) in progress: where the Python
    natives it makes put their failure."""

    __slots__ = ("native", "error")

    def __init__(self) -> None:
        self.native = ""
        self.error: BaseException | None = None

    def reraise(self, function: str) -> None:
        """Raises what a Python native raised during this foreign call, if anything."""
        err = self.error
        if err is None:
            return
        if not isinstance(err, Exception):
            raise err  # KeyboardInterrupt, SystemExit: not the call's failure
        raise MlvmCallError(
            f"{function}: native {self.native!r} failed: "
            f"{type(err).__name__}: {_one_line(str(err))}"
        ) from err


class _Running(threading.local):
    """The innermost foreign call on this thread. Natives run synchronously
    inside the foreign call that makes them, on its thread, so this is the call
    a native serves, even when calls nest (a native calling another function)
    or interleave (begin/resume of many calls on one thread)."""

    frame: _Frame | None = None


_running = _Running()


def _foreign(entry: Any, *args: Any) -> tuple[int, _Frame]:
    """`entry(*args)` (a begin or a resume) as the call its natives serve: its
    status, and the frame holding what a Python native raised during it."""
    frame = _Frame()
    outer = _running.frame
    _running.frame = frame
    try:
        status = int(entry(*args))
    finally:
        _running.frame = outer
    return status, frame


def _check_text(hdr: Any, code: int) -> str | None:
    """For a call whose header says it ended in ERR_CHECK: where the check is
    and its worst element."""
    chk = hdr.check
    if code != ERR_CHECK or chk.where == _ffi.NULL:
        return None
    return (
        f"{_ffi.string(chk.where, MAX_NAME).decode('utf-8', 'replace')} failed: worst element "
        f"at flat index {int(chk.index)}: got {float(chk.got):.9g}, want {float(chk.want):.9g}"
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    arena_bytes: int
    suspends: bool = False


class DescriptorError(ValueError):
    """A module descriptor that no mlvm compiler writes (a foreign or damaged .so)."""


def _name(p: Any, what: str) -> str:
    if p == _ffi.NULL:
        raise DescriptorError(f"{what} has no name")
    # Bounded: a damaged name without its NUL must not read on indefinitely.
    raw = _ffi.string(p, MAX_NAME + 1)
    if len(raw) > MAX_NAME:
        raise DescriptorError(f"{what} has a name longer than {MAX_NAME} bytes")
    return raw.decode("utf-8", "replace")


def _count(n: int, what: str) -> int:
    if not 0 <= n <= MAX_ENTRIES:
        raise DescriptorError(f"{what} count {n} is out of range")
    return int(n)


def _spec(d: Any, limit: int) -> TensorSpec:
    name = _name(d.name, "a tensor")
    if not 0 <= d.rank <= MAX_RANK or (d.rank > 0 and d.dims == _ffi.NULL):
        raise DescriptorError(f"tensor {name!r} has rank {d.rank}")
    shape = tuple(int(d.dims[k]) for k in range(d.rank))
    dtype = _DTYPES.get(int(d.dtype))
    if dtype is None:
        raise DescriptorError(f"tensor {name!r} has unknown dtype code {d.dtype}")
    # Python integers: the product cannot overflow, whatever the dims.
    if any(n < 0 for n in shape) or math.prod(shape) * dtype.itemsize > limit:
        raise DescriptorError(f"tensor {name!r} has shape {shape}")
    return TensorSpec(name, shape, dtype)


def _specs(descs: Any, n: int, limit: int) -> tuple[TensorSpec, ...]:
    if n > 0 and descs == _ffi.NULL:
        raise DescriptorError(f"{n} tensors are described by a NULL table")
    return tuple(_spec(descs[i], limit) for i in range(_count(n, "tensor")))


def _signature(fn: str, args: Sequence[TensorSpec], results: Sequence[TensorSpec]) -> str:
    """`f(arg0: float32 (4,), ...) -> float32 (4,)`: what a native receives and returns."""
    def one(t: TensorSpec) -> str:
        return f"{t.dtype} {t.shape}"

    outs = ", ".join(one(t) for t in results) or "None"
    if len(results) > 1:
        outs = f"({outs})"
    return f"{fn}({', '.join(f'{t.name}: {one(t)}' for t in args)}) -> {outs}"


def _unique(names: Sequence[str], what: str) -> None:
    """Names the loader finds things by: two alike would alias one object."""
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise DescriptorError(f"two {what}s are named {n!r}")
        seen.add(n)


def _convert(x: Any, spec: TensorSpec, what: str) -> np.ndarray:
    """`x` as a C-contiguous array of `spec`, refusing what would change values
    silently: another shape (no reshape, no broadcast), an array of another
    dtype unless every value converts exactly, integers that do not fit, and
    floats that overflow (1e40 -> inf). Python (and numpy scalar) floats may
    round to a narrower float type, as a float literal does in C."""
    if isinstance(x, np.ndarray):
        a = x
        if x.dtype != spec.dtype:
            if not np.can_cast(x.dtype, spec.dtype, "safe"):
                raise ValueError(f"{what} must have dtype {spec.dtype}, got {x.dtype}")
            a = x.astype(spec.dtype)
            # numpy calls int64 -> float64 safe, yet 2**53 + 1 does not survive it.
            if x.dtype.kind in "iu" and spec.dtype.kind == "f":
                with np.errstate(all="ignore"):
                    exact = np.array_equal(a.astype(x.dtype), x)
                if not exact:
                    raise ValueError(f"{what}: values do not fit in {spec.dtype}")
    else:
        raw = np.asarray(x)
        if raw.dtype.kind not in "biuf":
            raise ValueError(f"{what} must be numbers of dtype {spec.dtype}, got {raw.dtype}")
        with np.errstate(all="ignore"):
            a = raw.astype(spec.dtype)
            if raw.dtype.kind == "f" and spec.dtype.kind == "f":
                lost = np.isfinite(raw) & ~np.isfinite(a)
            else:  # NaN never equals its cast back, so it is refused for ints
                lost = a.astype(raw.dtype) != raw
        if np.any(lost):
            raise ValueError(f"{what}: values do not fit in {spec.dtype}")
    if a.shape != spec.shape:
        raise ValueError(f"{what} must have shape {spec.shape}, got {a.shape}")
    # Not ascontiguousarray: it turns a 0-d array into shape (1,).
    return np.asarray(a, order="C")


# A one-shot call's outputs come from a per-thread pool of recycled
# buffers, each with its C pointer made once: a fresh large allocation is
# fresh pages from the kernel (glibc maps blocks over 128 KiB), and faulting
# them in costs more than a fast kernel spends computing them; for a small
# one, np.empty and ffi.from_buffer were about a third of a no-op call's
# time from Python. The caller gets a view of the pooled array (a new object
# each call, so that what it sets on it, its shape or flags, or a weakref to
# it, stays its own), which holds the array as its base until dropped.
POOL_MIN_BYTES = 64 * 1024
POOL_SIZE = 2
# A slot not filled yet: held elsewhere too, so never taken for free.
_EMPTY_SLOT = np.empty(0, np.uint8)


class _OutputPool:
    """POOL_SIZE buffers for one output, handed out again (as new views) once
    nothing else holds them.

    A buffer is free when the pool's own list is its only holder: the caller
    dropped the view it got (and every view of that, since views keep their
    base). Per thread, so no two threads ever take the same free buffer.
    `ptrs[i]` points at `bufs[i]` (a cast, which holds no reference to it).
    Small outputs' buffers are made at once; large ones' when first needed
    (`take`). The generated fast path tests the slots itself; when both are
    held, a small output is a new array (np.empty) and a large one comes
    from `take`.
    """

    __slots__ = ("bufs", "dtype", "large", "ptrs", "shape")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
        self.shape, self.dtype = shape, dtype
        self.large = dtype.itemsize * math.prod(shape) >= POOL_MIN_BYTES
        self.bufs: list[np.ndarray] = [_EMPTY_SLOT] * POOL_SIZE
        self.ptrs: list[Any] = [_ffi.NULL] * POOL_SIZE
        if not self.large:
            for i in range(POOL_SIZE):
                self._fill(i)

    def _fill(self, i: int) -> None:
        b = _aligned_array(self.shape, self.dtype)
        self.bufs[i], self.ptrs[i] = b, _ffi.cast("void *", b.ctypes.data)

    def take(self) -> tuple[np.ndarray, Any]:
        """A view of a free buffer and its pointer (of a new array when none
        is free)."""
        bufs = self.bufs
        for i in range(POOL_SIZE):
            if bufs[i] is _EMPTY_SLOT:
                self._fill(i)
            # held by the list and getrefcount's argument (not enumerate:
            # its reused tuple holds the last buffer too)
            if sys.getrefcount(bufs[i]) == 2:
                return bufs[i].view(), self.ptrs[i]
        if self.large:
            b = _aligned_array(self.shape, self.dtype)
            return b, _ffi.cast("void *", b.ctypes.data)
        b = np.empty(self.shape, self.dtype)
        return b, _from_buffer(b)


class _Owner(np.ndarray):  # type: ignore[type-arg]
    """The memory of an aligned result: numpy's (not zero-filled, huge pages
    where the system gives them), of another type than the result, so that
    numpy stops there when it names a view's base."""


def _aligned_array(shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """An uninitialised array whose data starts on an ARENA_ALIGN line (numpy's
    own start 16 bytes into one: a kernel's vector stores then straddle two
    lines, which made a 1024^3 matmul from Python 1.5-4 % slower). It lies
    in a larger _Owner, so numpy's views of it still name it as their base
    (the pool counts its holders by that)."""
    nbytes = max(1, math.prod(shape) * dtype.itemsize)
    raw = _Owner((nbytes + ARENA_ALIGN,), np.uint8)
    return np.ndarray(shape, dtype, buffer=raw, offset=(-raw.ctypes.data) % ARENA_ALIGN)


def _aligned_empty(nbytes: int) -> tuple[np.ndarray, Any]:
    """A byte buffer aligned to ARENA_ALIGN, and a cffi pointer to it."""
    buf = _aligned_array((max(nbytes, 1),), np.dtype(np.uint8))
    return buf, _ffi.cast("void *", buf.ctypes.data)


@functools.cache
def _sched_yield() -> Any:
    """The C library's sched_yield, for waits that give the core away (NULL
    where there is none)."""
    try:
        return _ffi.dlopen(None).sched_yield
    except (OSError, AttributeError):
        return _ffi.NULL


def _view(ptr: Any, spec: TensorSpec) -> np.ndarray:
    """A numpy view of a C buffer described by `spec` (no copy)."""
    buf = _ffi.buffer(_ffi.cast("char *", ptr), spec.nbytes)
    return np.frombuffer(buf, dtype=spec.dtype).reshape(spec.shape)


class Queue:
    """A runtime queue of a module, fed and drained from numpy.

    The runtime queue is single-producer / single-consumer; `push` and `pop`
    from Python take a lock, so Python threads may share one side of it."""

    def __init__(self, lib: Any, spec: TensorSpec, capacity: int, limit: int = MAX_BYTES) -> None:
        self.spec = spec
        self._lib = lib
        self._lock = threading.Lock()
        if isinstance(capacity, bool) or not isinstance(capacity, int) or not 1 <= capacity < 1 << 31:
            raise ValueError(f"queue_capacity must be an integer in 1..2^31-1, got {capacity!r}")
        if spec.nbytes == 0 or capacity * spec.nbytes > limit:
            raise ValueError(
                f"queue {spec.name!r}: {capacity} elements of {spec.nbytes} bytes "
                f"(the storage must hold 1 to {limit} bytes)"
            )
        self._name = _ffi.new("char[]", spec.name.encode())
        self._storage = np.empty(capacity * spec.nbytes, dtype=np.uint8)
        self.ptr = _ffi.new("mlvm_queue_t *")
        st = lib.mlvm_queue_init(
            self.ptr, self._name, spec.nbytes, capacity,
            _ffi.cast("void *", self._storage.ctypes.data),
        )
        if st != OK:
            raise ValueError(f"queue {spec.name!r}: the runtime refused it ({STATUS_NAMES.get(st, st)})")

    def push(self, x: Any) -> bool:
        """Appends a copy of x; False when the queue is full. x must have the
        element's shape, and a dtype that converts without changing values."""
        a = _convert(x, self.spec, f"queue {self.spec.name!r} element")
        with self._lock:
            return bool(self._lib.mlvm_queue_push(self.ptr, _ffi.cast("void *", a.ctypes.data)) == OK)

    def pop(self) -> np.ndarray | None:
        """The oldest element, or None when the queue is empty."""
        out = np.empty(self.spec.shape, dtype=self.spec.dtype)
        with self._lock:
            if self._lib.mlvm_queue_pop(self.ptr, _ffi.cast("void *", out.ctypes.data)) != OK:
                return None
        return out

    def __len__(self) -> int:
        return int(self._lib.mlvm_queue_size(self.ptr))


class State(MutableMapping[str, np.ndarray]):
    """The module's state (`mlvm.global`s) by name, with copy semantics:
    `m.state["w"]` returns a copy; `m.state["w"] = x` copies x in (same shape,
    a dtype that converts exactly). Not to be used while a call that uses the
    state runs on another thread. Globals cannot be added or deleted."""

    def __init__(self, owner: Module) -> None:
        self._owner = owner

    def _view(self, name: str) -> tuple[np.ndarray, TensorSpec]:
        entry = self._owner._globals.get(name)
        if entry is None:
            known = ", ".join(self._owner._globals) or "none"
            raise KeyError(f"module '{self._owner.name}' has no global {name!r} (globals: {known})")
        spec, offset = entry
        buf = self._owner._state_buf[offset : offset + spec.nbytes]
        return buf.view(spec.dtype).reshape(spec.shape), spec

    def __getitem__(self, name: str) -> np.ndarray:
        return self._view(name)[0].copy()

    def __setitem__(self, name: str, value: Any) -> None:
        view, spec = self._view(name)
        view[...] = _convert(value, spec, f"global {name!r}")

    def __delitem__(self, name: str) -> None:
        raise TypeError("globals of a compiled module cannot be deleted")

    def __iter__(self) -> Iterator[str]:
        return iter(self._owner._globals)

    def __len__(self) -> int:
        return len(self._owner._globals)

    @property
    def specs(self) -> dict[str, TensorSpec]:
        """Each global's name, shape and dtype."""
        return {n: spec for n, (spec, _) in self._owner._globals.items()}

    def save(self, path: str | Path) -> None:
        """Writes every global to an `.npz` archive."""
        arrays: dict[str, Any] = {n: self[n] for n in self}
        np.savez(path, **arrays)

    def load(self, path: str | Path) -> None:
        """Reads globals from an `.npz` archive (no pickles): every global it
        names must exist; all are checked before any is written."""
        with np.load(path, allow_pickle=False) as archive:
            values = {n: archive[n] for n in archive.files}
        conv = {}
        for n, v in values.items():
            view, spec = self._view(n)
            conv[n] = (view, _convert(v, spec, f"global {n!r} in {path}"))
        for view, c in conv.values():
            view[...] = c

    def __repr__(self) -> str:
        return f"<mlvm state {', '.join(f'{n}: {s.dtype} {s.shape}' for n, s in self.specs.items())}>"


class Call:
    """A suspendable call: `begin` ran it up to its first suspension.

    One thread at a time may resume it; resuming it from inside itself (from
    one of its own natives) or from two threads at once is refused."""

    def __init__(self, fn: Function, args: Sequence[Any]) -> None:
        self._fn = fn
        self._ins = [fn._check(i, x) for i, x in enumerate(args)]
        # Private: the generated code writes here until the call ends, so the
        # arrays must be the ones it was given, alive as long as the call.
        self._outs = [np.empty(s.shape, dtype=s.dtype) for s in fn.info.outputs]
        self._arena_buf: np.ndarray | None
        self._arena_buf, self._arena = fn._take_arena()
        # int64 words: the state holds pointers and 64-bit integers.
        self._state = _ffi.new("int64_t[]", -(-fn._call_bytes // 8))
        self._hdr = _ffi.cast("mlvm_call_header_t *", self._state)
        self._busy = threading.Lock()
        ins = _ffi.new("void *[]", [_ffi.cast("void *", a.ctypes.data) for a in self._ins] or [_ffi.NULL])
        outs = _ffi.new("void *[]", [_ffi.cast("void *", a.ctypes.data) for a in self._outs] or [_ffi.NULL])
        with self._busy:
            self.code, frame = _foreign(fn._begin, self._state, fn._owner._instance, self._arena, ins, outs)
        self._settle()
        frame.reraise(fn.info.name)

    def _settle(self) -> None:
        """Once the call has ended, its arena goes back to the function's pool."""
        if self.code != SUSPENDED and self._arena_buf is not None:
            self._fn._give_arena(self._arena_buf, self._arena)
            self._arena_buf = self._arena = None

    @property
    def outputs(self) -> tuple[np.ndarray, ...]:
        return tuple(self._outs)

    @property
    def status(self) -> str:
        return STATUS_NAMES.get(self.code, str(self.code))

    @property
    def done(self) -> bool:
        return self.code != SUSPENDED

    def resume(self) -> str:
        """Runs the call on to its next suspension or its end; the status name."""
        if self.code != SUSPENDED:
            return self.status
        if not self._busy.acquire(blocking=False):
            raise MlvmCallError(f"{self._fn.info.name}: the call is already running")
        try:
            self.code, frame = _foreign(self._fn._resume, self._state)
            self._settle()
        finally:
            self._busy.release()
        frame.reraise(self._fn.info.name)
        return self.status

    def __del__(self) -> None:
        # Dropped while suspended inside a link to another module's export:
        # free the link for the next call (its own state is simply dropped).
        if getattr(self, "code", OK) == SUSPENDED and getattr(self, "_fn", None) is not None:
            self._fn._owner._abandon(self)

    def _owns(self, ptr: int) -> bool:
        """Whether ptr points into this call's arena or outputs."""
        if self._arena is not None and self._arena_buf is not None:
            base = int(_ffi.cast("uintptr_t", self._arena))
            if base <= ptr < base + max(self._arena_buf.size, 1):
                return True
        return any(o.ctypes.data == ptr for o in self._outs)

    def drive(self) -> str:
        """Resumes the call in C until it ends, without the interpreter lock
        between tries: for a rank waiting on its peers. Not for calls that
        wait on Python natives or queues fed from Python (they would spin)."""
        if self.code != SUSPENDED:
            return self.status
        if not self._busy.acquire(blocking=False):
            raise MlvmCallError(f"{self._fn.info.name}: the call is already running")
        try:
            lib = self._fn._owner._lib
            self.code, frame = _foreign(lib.mlvm_call_drive, self._fn._resume, self._state, 0,
                                        _sched_yield())
            self._settle()
        finally:
            self._busy.release()
        frame.reraise(self._fn.info.name)
        return self.status

    @property
    def resume_point(self) -> int:
        return int(self._hdr.pc)

    def check_message(self) -> str | None:
        """For a call that ended in ERR_CHECK: where the check is and its worst element."""
        return _check_text(self._hdr, self.code)

    def result(self) -> Any:
        """The outputs of a call that ended with OK (an error otherwise)."""
        if self.code != OK:
            msg = self.check_message() or f"call is {self.status}"
            raise MlvmCallError(f"{self._fn.info.name}: {msg}")
        return self._outs[0] if len(self._outs) == 1 else tuple(self._outs)


_MISSING = object()


class Function:
    """One exported function: `f(*arrays)` returns an array or a tuple.

    Inputs may also be given by name (`f(x=...)`), and `out=` (an array, or a
    tuple for several results) makes the call write into the caller's arrays
    instead of allocating new ones.
    """

    def __init__(self, owner: Module, export: Any) -> None:
        self._owner = owner
        self._export = export  # the descriptor entry: a context links to it
        self._begin = export.begin
        self._resume = export.resume
        self._call_bytes = int(export.call_bytes)
        limit = owner._max_bytes
        self.info = FunctionInfo(
            _name(export.name, "an export"),
            _specs(export.inputs, export.num_inputs, limit),
            _specs(export.outputs, export.num_outputs, limit),
            int(export.arena_bytes),
            bool(export.suspends),
        )
        self._local = threading.local()
        self._arena_pool: list[tuple[np.ndarray, Any]] = []
        n_in, n_out = len(self.info.inputs), len(self.info.outputs)
        self._n_in, self._n_out = n_in, n_out
        self._in_specs = [(s.dtype, s.shape) for s in self.info.inputs]
        self._out_specs = [(s.dtype, s.shape) for s in self.info.outputs]
        suspends = self.info.suspends or export.direct == _ffi.NULL
        # The typed entry, called with one pointer per tensor: no arrays to fill
        # (and the instance first, for functions that use the module state).
        self._lead: tuple[Any, ...] = (owner._instance,) if export.takes_instance else ()
        arity = ", ".join(["void *"] * (len(self._lead) + 1 + n_in + n_out))
        self._one_shot = None if suspends else _ffi.cast(f"int (*)({arity})", export.direct)
        if self._one_shot is not None:
            fast = self._make_fast()
            self.__class__ = type("Function", (Function,), {"__call__": fast})

    # Arenas of ended suspendable calls, reused by the next ones: a fresh
    # large buffer per call would be fresh pages from the kernel each time.
    _POOLED_ARENAS = 4

    def _take_arena(self) -> tuple[np.ndarray, Any]:
        try:
            return self._arena_pool.pop()
        except IndexError:
            return _aligned_empty(self.info.arena_bytes)

    def _give_arena(self, buf: np.ndarray, ptr: Any) -> None:
        if len(self._arena_pool) < self._POOLED_ARENAS:
            self._arena_pool.append((buf, ptr))

    def _arena(self) -> Any:
        ptr = getattr(self._local, "arena", None)
        if ptr is None:
            buf, ptr = _aligned_empty(self.info.arena_bytes)
            self._local.buf, self._local.arena = buf, ptr
        return ptr

    def _check(self, i: int, x: Any) -> np.ndarray:
        spec = self.info.inputs[i]
        what = f"{self.info.name}: input {i} ({spec.name!r})"
        if not isinstance(x, np.ndarray):
            raise ValueError(f"{what} must be a numpy array, got {type(x).__name__}")
        if x.dtype != spec.dtype:
            raise ValueError(f"{what} must have dtype {spec.dtype}, got {x.dtype}")
        if x.shape != spec.shape:
            raise ValueError(f"{what} must have shape {spec.shape}, got {x.shape}")
        if not x.flags.c_contiguous:
            raise ValueError(
                f"{what} must be C-contiguous (use numpy.ascontiguousarray)"
            )
        if not x.flags.aligned:
            raise ValueError(
                f"{what} is not aligned to its element size (use numpy.array(x) to copy it)"
            )
        return x

    def _arity(self, args: Sequence[Any]) -> None:
        if len(args) != self._n_in:
            raise ValueError(
                f"{self.info.name} takes {self._n_in} inputs, got {len(args)}"
            )

    def begin(self, *args: Any, **inputs: Any) -> Call:
        """Starts a call that may suspend; drive it with `resume()`. Inputs by
        position or by name."""
        if inputs:
            args = self._by_name(args, inputs)
        self._arity(args)
        return Call(self, args)

    def __call__(self, *args: Any, out: Any = None, **kw: Any) -> Any:
        # One-shot functions get a class whose __call__ is `_make_fast`'s code
        # (inputs by name and out= included): this one runs calls that may
        # suspend, to their end.
        if kw:
            args = self._by_name(args, kw)
        self._arity(args)
        if out is None:
            return self._run_to_end(args)
        outs = self._check_out(out, args)
        got = self._run_to_end(args)  # then copied into the caller's arrays
        for o, g in zip(outs, got if isinstance(got, tuple) else (got,), strict=True):
            o[...] = g
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _inputs(self, given: tuple[Any, ...], kw: Mapping[str, Any]) -> tuple[Any, ...]:
        """The fast path's inputs in order: its positional parameters (those
        not given hold _MISSING, always the last ones), any further ones,
        and those by name; an error if they do not make the inputs."""
        n = len(given)
        while n > 0 and given[n - 1] is _MISSING:
            n -= 1
        args = given[:n]
        if kw:
            args = self._by_name(args, kw)
        self._arity(args)
        return args

    def _by_name(self, args: Sequence[Any], inputs: Mapping[str, Any]) -> tuple[Any, ...]:
        """Positional and named inputs as one tuple in the function's order."""
        names = [s.name for s in self.info.inputs]
        out: list[Any] = list(args) + [_MISSING] * max(0, len(names) - len(args))
        for key, value in inputs.items():
            if key not in names:
                raise TypeError(f"{self.info.name} has no input {key!r} (inputs: {', '.join(names)})")
            k = names.index(key)
            if k < len(args):
                raise TypeError(f"{self.info.name}: input {key!r} is given twice")
            out[k] = value
        missing = [names[k] for k, v in enumerate(out) if v is _MISSING]
        if missing:
            raise TypeError(f"{self.info.name}: missing input {missing[0]!r}")
        return tuple(out)

    def scan(self, *args: Any, **inputs: Any) -> Any:
        """Calls the function once per step, in order, without coming back to
        Python in between: a training loop over an epoch's batches is one call.

        Each input (by position or by name) is either of its declared shape,
        the same array at every step, or has one more leading axis, the
        steps: step k takes `x[k]`. Stepped inputs agree on the number of
        steps; at least one input is stepped. What the module keeps in its
        state (`mlvm.global`) carries from step to step, as over separate
        calls. Returns each output stacked over the steps (`[steps, *shape]`;
        a tuple for several). A step that fails raises `MlvmCallError` naming
        the step; the steps before it have run (and updated the state).
        """
        if inputs:
            args = self._by_name(args, inputs)
        self._arity(args)
        steps: int | None = None
        stepped: list[bool] = []
        for i, x in enumerate(args):
            spec = self.info.inputs[i]
            if isinstance(x, np.ndarray) and x.ndim == len(spec.shape) + 1:
                what = f"{self.info.name}.scan: input {i} ({spec.name!r})"
                if x.shape[1:] != spec.shape or x.dtype != spec.dtype:
                    raise ValueError(
                        f"{what} must be {spec.dtype} {spec.shape} or steps of it, "
                        f"got {x.dtype} {x.shape}"
                    )
                if x.flags.num & (_C_CONTIGUOUS | _ALIGNED) != _C_CONTIGUOUS | _ALIGNED:
                    raise ValueError(f"{what} must be C-contiguous and aligned")
                if steps is not None and x.shape[0] != steps:
                    raise ValueError(f"{what} has {x.shape[0]} steps, an earlier input {steps}")
                steps = x.shape[0]
                stepped.append(True)
            else:
                self._check(i, x)
                stepped.append(False)
        if steps is None:
            raise ValueError(
                f"{self.info.name}.scan: no input has a leading axis of steps "
                f"(inputs: {', '.join(f'{s.name} {s.shape}' for s in self.info.inputs)})"
            )
        outs = [np.empty((steps, *shape), dtype) for dtype, shape in self._out_specs]
        if steps > 0:
            self._scan_into(args, stepped, steps, outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _scan_into(self, args: Sequence[Any], stepped: Sequence[bool], steps: int, outs: list[np.ndarray]) -> None:
        """The steps of `scan`: runtime loops (`mlvm_call_steps`) in modules
        without natives and queues, a step that yields resumed from here in
        between; one call per step from here otherwise (natives, queues,
        collectives)."""
        owner = self._owner
        run = getattr(owner._lib, "mlvm_call_steps", None)
        alone = owner._desc.num_imports == 0 and owner._desc.num_queues == 0
        if run is None or not alone or owner._instance.comm != _ffi.NULL:
            for k in range(steps):
                try:
                    got = self._run_to_end([a[k] if s else a for a, s in zip(args, stepped, strict=True)])
                except MlvmCallError as e:
                    detail = str(e).removeprefix(f"{self.info.name}: ")
                    raise MlvmCallError(f"{self.info.name}: step {k} of {steps}: {detail}") from e
                for o, g in zip(outs, got if isinstance(got, tuple) else (got,), strict=True):
                    o[k] = g
            return
        bases = [_ffi.cast("char *", _from_buffer(a)) for a in (*args, *outs)]
        strides = [a[0].nbytes if s else 0 for a, s in zip(args, stepped, strict=True)]
        strides += [o[0].nbytes for o in outs]
        n_in = self._n_in
        in_strides = _ffi.new("size_t[]", strides[:n_in] or [0])
        out_strides = _ffi.new("size_t[]", strides[n_in:] or [0])
        ptrs = _ffi.new("void *[]", max(len(bases), 1))
        call = _ffi.new("int64_t[]", -(-self._call_bytes // 8))
        hdr = _ffi.cast("mlvm_call_header_t *", call)
        done = _ffi.new("size_t *")
        arena = self._arena() if self.info.arena_bytes > 0 else _ffi.NULL
        k = 0
        while k < steps:
            at = [b + k * st for b, st in zip(bases, strides, strict=True)]
            ins = _ffi.new("void *[]", at[:n_in] or [_ffi.NULL])
            out_ptrs = _ffi.new("void *[]", at[n_in:] or [_ffi.NULL])
            status = run(_ffi.addressof(self._export), self._owner._instance, call, arena, steps - k,
                         ins, in_strides, out_ptrs, out_strides, ptrs, done)
            k += int(done[0])
            if status == OK:
                return
            last = -2
            while status == SUSPENDED:  # step k yielded: it goes on from here
                if hdr.pc == last:  # no progress: nothing here could unblock it
                    raise MlvmCallError(f"{self.info.name}: step {k} of {steps} makes no progress")
                last = int(hdr.pc)
                status = int(self._resume(call))
            if status != OK:
                detail = _check_text(hdr, status) or f"call is {STATUS_NAMES.get(status, status)}"
                raise MlvmCallError(f"{self.info.name}: step {k} of {steps}: {detail}")
            k += 1

    def _check_out(self, out: Any, args: Sequence[Any]) -> list[np.ndarray]:
        outs = list(out) if isinstance(out, tuple | list) else [out]
        if len(outs) != self._n_out:
            raise ValueError(f"{self.info.name}: out= needs {self._n_out} arrays, got {len(outs)}")
        for j, (o, spec) in enumerate(zip(outs, self.info.outputs, strict=True)):
            what = f"{self.info.name}: out[{j}] ({spec.name!r})"
            if not isinstance(o, np.ndarray):
                raise ValueError(f"{what} must be a numpy array, got {type(o).__name__}")
            if o.dtype != spec.dtype or o.shape != spec.shape:
                raise ValueError(f"{what} must be {spec.dtype} {spec.shape}, got {o.dtype} {o.shape}")
            if o.flags.num & (_C_CONTIGUOUS | _ALIGNED) != _C_CONTIGUOUS | _ALIGNED or not o.flags.writeable:
                raise ValueError(f"{what} must be C-contiguous, aligned and writeable")
            others = [a for a in (*args, *outs[:j]) if isinstance(a, np.ndarray)]
            if any(np.may_share_memory(o, a) for a in others):
                raise ValueError(f"{what} must not overlap an input or another output")
        return outs

    def _make_fast(self) -> Callable[..., Any]:
        """The hot path of one-shot calls, written out for this signature.

        Like `dataclasses` and `namedtuple`, it is generated source: inputs
        as positional parameters (inputs by name or missing go through
        `_inputs`), one chained test per input (the precise error comes from
        `_check` only when it fails), one recycled buffer and its pointer per
        output (see `_OutputPool`), or with `out=` one chained test per
        caller array (`_check_out` for the error), and one foreign call, with
        every constant a global of its own. No user string reaches the
        source: names are positional (`x0`, `o0`, ...).
        """
        ins = [f"x{i}" for i in range(self._n_in)]
        outs = [f"o{j}" for j in range(self._n_out)]
        # Inputs as positional-only parameters (no tuple to unpack; a name
        # given by keyword lands in kw, whatever it is): positions left out
        # hold M, anything else (by name, too many, too few) goes through
        # `inputs`, which puts them in order or raises.
        params = "".join(f"{x}=M, " for x in ins)
        lines = [f"def fast(self, {params}/, *more, out=None, **kw):"]
        got = f"({', '.join(ins)}{',' if ins else ''})"
        last = f" or {ins[-1]} is M" if ins else ""
        lines.append(f"    if kw or more{last}:")
        lines.append(f"        {', '.join(ins) + ', = ' if ins else ''}inputs({got} + more, kw)")
        for i, x in enumerate(ins):
            # One mask test covers contiguity and alignment (ALIGNED flag);
            # numpy's dtypes of its own types are one object each (`is`
            # first; an unpickled array's is another, equal one).
            lines.append(
                f"    if type({x}) is not ndarray or ({x}.dtype is not d{i} and {x}.dtype != d{i}) "
                f"or {x}.shape != s{i} "
                f"or {x}.flags.num & CA != CA: check({i}, {x})"
            )
        if self.info.arena_bytes > 0:  # else the entry never touches its arena
            lines.append("    arena = getattr(local, 'arena', None) or arena_of()")
        else:
            lines.append("    arena = NULL")
        lines.append("    if out is None:")
        if outs:
            lines.append("        pools = getattr(local, 'pools', None) or new_pools()")
        for j, o in enumerate(outs):
            # the pool's slots tested here (the list and getrefcount's
            # argument hold a free one); none free: a new array for a small
            # output, take() for a large one (its slots may be unfilled)
            dtype, shape = self._out_specs[j]
            small = np.dtype(dtype).itemsize * math.prod(shape) < POOL_MIN_BYTES
            lines.append(f"        p = pools[{j}]; b = p.bufs")
            lines.extend(
                f"        {'if' if i == 0 else 'elif'} refs(b[{i}]) == 2: "
                f"{o}, q{j} = b[{i}].view(), p.ptrs[{i}]"
                for i in range(POOL_SIZE)
            )
            lines.append(
                f"        else: {o} = empty(os{j}, od{j}); q{j} = fb({o})" if small
                else f"        else: {o}, q{j} = p.take()"
            )
        if not outs:
            lines.append("        pass")
        lines.append("    else:")
        lines.extend(f"        {line}" for line in self._out_lines(ins, outs))
        lines.extend(f"        q{j} = fb({o})" for j, o in enumerate(outs))
        ptrs = ", ".join([f"fb({v})" for v in ins] + [f"q{j}" for j in range(len(outs))])
        lead = "inst, " if self._lead else ""
        lines.append(f"    status = fn({lead}arena{', ' if ptrs else ''}{ptrs})")
        # One-shot entries exist only for functions without native imports:
        # there is no Python error to collect, only the status.
        lines.append("    if status != 0: failed(status)")
        ret = outs[0] if len(outs) == 1 else f"({', '.join(outs)}{',' if outs else ''})"
        lines.append(f"    return {ret}")
        env: dict[str, Any] = {
            "ndarray": np.ndarray, "empty": np.empty, "fb": _from_buffer, "fn": self._one_shot,
            "local": self._local, "arena_of": self._arena, "check": self._check,
            "failed": self._failed, "NULL": _ffi.NULL, "CA": _C_CONTIGUOUS | _ALIGNED,
            "CAW": _C_CONTIGUOUS | _ALIGNED | _WRITEABLE, "TL": (tuple, list),
            "msm": np.may_share_memory, "check_out": self._check_out,
            "new_pools": self._new_pools, "inst": self._lead[0] if self._lead else None,
            "refs": sys.getrefcount, "M": _MISSING, "inputs": self._inputs,
        }
        for i, (dtype, shape) in enumerate(self._in_specs):
            env[f"d{i}"], env[f"s{i}"] = dtype, shape
        for j, (dtype, shape) in enumerate(self._out_specs):
            env[f"od{j}"], env[f"os{j}"] = dtype, shape
        exec("\n".join(lines), env)  # noqa: S102 - generated from the signature only
        fast: Callable[..., Any] = env["fast"]
        return fast

    def _out_lines(self, ins: list[str], outs: list[str]) -> list[str]:
        """`_make_fast`'s lines that take the caller's arrays from `out`: one
        chained test per array (the error from `_check_out` when it fails),
        the same rules as `_check_out`'s."""
        args = f"({', '.join(ins)}{',' if ins else ''})"
        if len(outs) == 1:
            lines = [f"{outs[0]} = out[0] if type(out) in TL and len(out) == 1 else out"]
        else:
            lines = [f"if type(out) not in TL or len(out) != {len(outs)}: check_out(out, {args})"]
            if outs:
                lines.append(f"{', '.join(outs)}, = out")
        for j, o in enumerate(outs):
            others = " or ".join(f"msm({o}, {v})" for v in [*ins, *outs[:j]])
            lines.append(
                f"if type({o}) is not ndarray or {o}.dtype != od{j} or {o}.shape != os{j} "
                f"or {o}.flags.num & CAW != CAW{' or ' + others if others else ''}: "
                f"check_out(out, {args})"
            )
        return lines

    def _new_pools(self) -> list[_OutputPool]:
        """This thread's output pools (one per output)."""
        pools = [_OutputPool(shape, np.dtype(dtype)) for dtype, shape in self._out_specs]
        self._local.pools = pools
        return pools

    def _failed(self, status: int) -> None:
        raise MlvmCallError(
            f"{self.info.name}: call returned {STATUS_NAMES.get(status, status)}"
        )

    def _run_to_end(self, args: Sequence[Any]) -> Any:
        """begin, then resume while the call makes progress (yields)."""
        call = self.begin(*args)
        if not call.done and self._owner._instance.comm != _ffi.NULL:
            call.drive()  # waiting for peers at a collective: they are other threads or processes
        last = -2
        while not call.done:
            if call.resume_point == last:
                raise MlvmCallError(
                    f"{self.info.name}: the call waits on a queue or native function; "
                    "use begin() / resume()"
                )
            last = call.resume_point
            call.resume()
        return call.result()

    def __repr__(self) -> str:
        return f"<mlvm function {self.info.name}>"


class Module:
    """A loaded module; exports are attributes (`m.main`) and items (`m['main']`).

    `imports` maps the names of native functions the module calls
    (`mlvm.call_c`) to Python callables. Every import must be given: a
    missing one fails here, naming it. A native receives read-only copies
    of its arguments, which it may keep (the arguments themselves live in
    the call's arena, reused once the native returns); copying is cheap next
    to a Python call. It returns its results (a tuple when there are
    several) or `WOULD_BLOCK`. Each result must have exactly the declared
    shape (no reshape, no broadcast) and a dtype that converts without
    changing values: arrays of the declared dtype or of one that converts
    exactly (float16 into float32), Python numbers that fit (floats may round
    to float32, not overflow; ints must be exact). Anything else fails the
    call. A native's exception ends the call that made it, and only that
    one: it is raised, as the cause of an `MlvmCallError`, from the `begin`
    or `resume` (or the one-shot call) that ran the native, whatever the
    other threads are doing.

    Each queue of the module gets a runtime queue of `queue_capacity`
    elements (`m.queues[name]`). The module keeps its queues and natives
    alive as long as it lives, whatever happens to the `queues` dict.

    The descriptor is read from the .so and checked: names unique, counts,
    ranks, dims, dtypes and sizes within what a compiler writes, no tensor,
    arena or queue over `max_bytes`. Loading a .so runs its code: the
    checks catch a damaged or foreign build, not a malicious one.
    """

    # What the instance's communicator lives in, once one is bound
    # (mlvm.parallel): the instance points into it.
    _comm_keep: Any = None

    def __init__(
        self,
        path: str | Path,
        imports: Mapping[str, Callable[..., Any]] | None = None,
        queue_capacity: int = 16,
        *,
        max_bytes: int = MAX_BYTES,
        origin: str | None = None,
        params: str | Path | None = None,
    ) -> None:
        self.path = Path(path)
        # What messages name once the file is open: the user's model when the
        # module was compiled from one (not the cached .so), else the .so.
        self._where = origin or str(self.path)
        self._max_bytes = max_bytes
        if not self.path.is_file():
            what = "is not a file" if self.path.exists() else "no such file"
            raise ValueError(f"{self.path}: {what}")
        try:
            # An absolute path: dlopen searches the library path for a bare name.
            self._lib = _ffi.dlopen(str(self.path.resolve()))
        except OSError as e:
            raise ValueError(f"{self.path}: cannot load shared object: {_one_line(str(e))}") from None
        try:
            get = self._lib.mlvm_so_module
        except AttributeError:
            raise ValueError(
                f"{self.path}: not an mlvm module (no mlvm_so_module symbol); "
                "build it with `mlvm-aot build`"
            ) from None
        desc = get()
        if desc == _ffi.NULL or desc.magic != MODULE_MAGIC:
            raise ValueError(f"{self.path}: not an mlvm module (bad descriptor magic)")
        if desc.abi_version != ABI_VERSION:
            raise ValueError(
                f"{self.path}: built for mlvm ABI {desc.abi_version}, this loader "
                f"reads ABI {ABI_VERSION}; rebuild it"
            )
        self._desc = desc
        try:
            self._check_descriptor(desc)
            self.name = _name(desc.name, "the module")
            self.arena_bytes = int(desc.arena_bytes)
            # Filled by _bind; functions that use state hold a pointer to it.
            self._instance = _ffi.new("mlvm_instance_t *")
            functions = [Function(self, desc.exports[i]) for i in range(desc.num_exports)]
            _unique([f.info.name for f in functions], "export")
            self._bind(imports if imports is not None else {}, queue_capacity)
            self.state = State(self)
            self._bind_params(params)
        except DescriptorError as e:
            raise ValueError(f"{self.path}: damaged module descriptor: {e}") from None
        self._functions = {f.info.name: f for f in functions}

    def _check_descriptor(self, desc: Any) -> None:
        limit = self._max_bytes
        for n, table, what in ((desc.num_exports, desc.exports, "export"),
                               (desc.num_imports, desc.imports, "import"),
                               (desc.num_queues, desc.queues, "queue"),
                               (desc.num_globals, desc.globals, "global")):
            if _count(n, what) > 0 and table == _ffi.NULL:
                raise DescriptorError(f"{n} {what}s in a NULL table")
        if not 0 <= desc.arena_bytes <= limit:
            raise DescriptorError(f"arena of {desc.arena_bytes} bytes")
        if not 0 <= desc.state_bytes <= limit:
            raise DescriptorError(f"state of {desc.state_bytes} bytes")
        for i in range(desc.num_exports):
            e = desc.exports[i]
            if e.begin == _ffi.NULL or e.resume == _ffi.NULL:
                raise DescriptorError(f"export {i} has no begin/resume entry")
            if not 0 <= e.arena_bytes <= limit:
                raise DescriptorError(f"export {i} needs an arena of {e.arena_bytes} bytes")
            # The loader reads the header of every call state it allocates.
            if not _HEADER_BYTES <= e.call_bytes <= MAX_CALL_BYTES:
                raise DescriptorError(f"export {i} has a call state of {e.call_bytes} bytes")
            if _count(e.num_inputs, "input") + _count(e.num_outputs, "output") > MAX_ENTRIES:
                raise DescriptorError(f"export {i} has {e.num_inputs + e.num_outputs} tensors")

    def _bind(self, imports: Mapping[str, Callable[..., Any]], capacity: int) -> None:
        desc, limit = self._desc, self._max_bytes
        if not isinstance(imports, Mapping):
            raise ValueError(
                f"{self._where}: imports must map names to callables, got {type(imports).__name__}"
            )
        names = [_name(desc.imports[i].name, "an import") for i in range(desc.num_imports)]
        _unique(names, "import")
        # Keyed by the queue's own name (its element's name is informative only).
        queue_names = [_name(desc.queues[i].name, "a queue") for i in range(desc.num_queues)]
        _unique(queue_names, "queue")
        queue_specs = [replace(_spec(desc.queues[i].elem, limit), name=n)
                       for i, n in enumerate(queue_names)]
        self.import_specs: dict[str, tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]] = {}
        alive: list[Any] = []  # everything the instance points at
        self._links: list[Any] = []
        slots = _ffi.new("mlvm_native_t *[]", max(len(names), 1))
        for i, name in enumerate(names):
            d = desc.imports[i]
            specs = (_specs(d.args, d.num_args, limit), _specs(d.results, d.num_results, limit))
            self.import_specs[name] = specs
            fn = imports.get(name)
            if isinstance(fn, Function):  # an export of an earlier module
                link = self._link(name, fn, specs)
                slots[i] = _ffi.addressof(link, "native")
                alive.append(link)
                continue
            if fn is None:
                raise ValueError(
                    f"{self._where}: missing import {name!r}: pass imports={{{name!r}: f}} with "
                    f"{_signature('f', *specs)}"
                )
            if not callable(fn):
                raise ValueError(f"{self._where}: import {name!r} is a {type(fn).__name__}, not a callable")
            native = _ffi.new("mlvm_native_t *")
            cname = _ffi.new("char[]", name.encode())
            cb = self._callback(name, fn, *specs)
            native.name, native.fn = cname, cb
            slots[i] = native
            alive += [native, cname, cb]
        self.queues: dict[str, Queue] = {}
        qslots = _ffi.new("mlvm_queue_t *[]", max(len(queue_specs), 1))
        for i, spec in enumerate(queue_specs):
            try:
                q = Queue(self._lib, spec, capacity, limit)
            except ValueError as e:
                raise ValueError(f"{self._where}: {e}") from None
            self.queues[spec.name] = q
            alive.append(q)
            qslots[i] = q.ptr
        self._instance.module = desc
        self._instance.imports = slots
        self._instance.queues = qslots
        # The module state: one aligned buffer, owned here, set to the
        # globals' initial values (the runtime checks the descriptor).
        self._globals: dict[str, tuple[TensorSpec, int]] = {}
        for i in range(desc.num_globals):
            g = desc.globals[i]
            spec = _spec(g.tensor, limit)
            if not (0 <= g.offset and spec.nbytes <= g.bytes and g.offset + g.bytes <= desc.state_bytes):
                raise DescriptorError(f"global {spec.name!r} lies outside the state")
            self._globals[spec.name] = (spec, int(g.offset))
        _unique(list(self._globals), "global")
        self._state_buf, state_ptr = _aligned_empty(int(desc.state_bytes))
        if desc.num_globals > 0:
            status = self._lib.mlvm_instance_bind_state(self._instance, state_ptr, int(desc.state_bytes))
            if status != OK:
                raise DescriptorError(f"state not bound: {STATUS_NAMES.get(status, status)}")
        # A tuple, apart from the user's `queues` dict: the instance holds raw
        # pointers into these, so they live exactly as long as the module.
        self._natives = (slots, qslots, *alive)

    def _link(self, name: str, fn: Function,
              specs: tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]) -> Any:
        """A C link: this module's import `name` calls `fn` (an export of an
        earlier module) directly, with an arena and call state of its own."""
        want = [(s.dtype, s.shape) for s in (*specs[0], *specs[1])]
        got = [(s.dtype, s.shape) for s in (*fn.info.inputs, *fn.info.outputs)]
        if len(specs[0]) != len(fn.info.inputs) or want != got:
            raise ValueError(
                f"{self._where}: import {name!r} is {_signature(name, *specs)}, but "
                f"{fn._owner._where} exports {_signature(fn.info.name, fn.info.inputs, fn.info.outputs)}"
            )
        link = _ffi.new("mlvm_link_t *")
        arena_buf, link.arena = _aligned_empty(fn.info.arena_bytes)
        call_buf, link.call = _aligned_empty(fn._call_bytes)
        cname = _ffi.new("char[]", name.encode())
        link.native.name = cname
        link.native.fn = self._lib.mlvm_link_call
        link.native.user = link
        link.target = fn._owner._instance
        link.fn = _ffi.addressof(fn._export)
        # The link holds raw pointers into all of these, and into fn's module.
        self._links.append((link, arena_buf, call_buf, cname, fn._owner))
        return link

    def _abandon(self, call: Call) -> None:
        """Frees the links a dropped suspended call holds."""
        for link, *_ in getattr(self, "_links", []):
            if link.running and call._owns(int(_ffi.cast("uintptr_t", link.owner))):
                self._lib.mlvm_link_reset(link)

    def _bind_params(self, path: str | Path | None) -> None:
        """Maps the parameter file of a module built with external
        parameters (read-only, shared with other processes) and binds it; the
        runtime checks it whole before anything reads a weight."""
        desc = self._desc
        if desc.num_params == 0:
            if path is not None:
                raise ValueError(f"{self._where}: the module keeps its weights in its code; "
                                 f"it takes no parameter file ({path})")
            return
        if path is None:
            raise ValueError(f"{self._where}: built with external parameters: pass "
                             "params='weights.mlvmp' (written by --external-params)")
        p = Path(path)
        try:
            with p.open("rb") as f:
                size = os.fstat(f.fileno()).st_size
                mapped = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ) if size else b""
        except OSError as e:
            raise ValueError(f"{p}: cannot read the parameter file: {e.strerror or e}") from None
        slots = _ffi.new("const void *[]", int(desc.num_params))
        what = _ffi.new("const char **")
        # mmap's pages are aligned; from_buffer of a read-only map needs the flag.
        buf = _ffi.from_buffer("char[]", mapped, require_writable=False) if size else _ffi.NULL
        status = self._lib.mlvm_instance_bind_params(self._instance, buf, size, slots, what)
        if status != OK:
            culprit = _ffi.string(what[0], MAX_NAME).decode("utf-8", "replace") if what[0] != _ffi.NULL else "?"
            why = {
                -1: f"damaged or not a parameter file (bad {culprit})",
                -5: f"has no weight {culprit!r} the module needs",
                -2: f"weight {culprit!r} has another dtype or shape than the module's",
            }.get(status, STATUS_NAMES.get(status, str(status)))
            raise ValueError(f"{p}: {why}")
        self._params = (mapped, buf, slots)

    def _callback(
        self,
        name: str,
        fn: Callable[..., Any],
        args: tuple[TensorSpec, ...],
        results: tuple[TensorSpec, ...],
    ) -> Any:
        def on_error(exc_type: Any, exc: BaseException, tb: Any) -> None:
            frame = _running.frame
            if frame is None:  # called outside any begin/resume: nobody to tell
                sys.unraisablehook(cast(Any, SimpleNamespace(
                    exc_type=exc_type, exc_value=exc, exc_traceback=tb, object=None,
                    err_msg=f"Exception ignored in native {name!r} called outside a call",
                )))
            elif frame.error is None:  # the first failure ends the call
                frame.native, frame.error = name, exc

        @_ffi.callback("int(void *, void *const *, void *const *)", error=ERR_IMPORT, onerror=on_error)
        def native(user: Any, a: Any, r: Any) -> int:
            # Copies, not views: the arguments live in the call's arena, which
            # is reused or freed after the call, and a native may keep them.
            ins = [_view(a[k], s).copy() for k, s in enumerate(args)]
            for v in ins:
                v.flags.writeable = False
            out = fn(*ins)
            if out is WOULD_BLOCK:
                return SUSPENDED
            outs = [] if out is None else list(out) if isinstance(out, tuple | list) else [out]
            if len(outs) != len(results):
                raise ValueError(f"native {name!r} returned {len(outs)} results, expected {len(results)}")
            # Converted first, written after: a failure leaves no half-written results.
            conv = [_convert(o, s, f"native {name!r} result {k}")
                    for k, (o, s) in enumerate(zip(outs, results, strict=True))]
            for k, (c, s) in enumerate(zip(conv, results, strict=True)):
                _view(r[k], s)[...] = c
            return OK

        return native

    @property
    def functions(self) -> dict[str, FunctionInfo]:
        return {name: f.info for name, f in self._functions.items()}

    def reset_state(self) -> None:
        """Sets every global back to its initial value (as in a fresh load)."""
        if self._globals:
            self._lib.mlvm_instance_reset_state(self._instance)

    def __getitem__(self, name: str) -> Function:
        return self._functions[name]

    def __getattr__(self, name: str) -> Function:
        funcs = self.__dict__.get("_functions")
        if funcs is not None and name in funcs:
            return funcs[name]
        raise AttributeError(f"module '{self.__dict__.get('name')}' has no export '{name}'")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._functions))

    def __repr__(self) -> str:
        return f"<mlvm module {self.name} exports={list(self._functions)}>"


class _Resolver(Mapping[str, Any]):
    """A context's imports for its next module: the exports of the modules
    before it (the latest first; "name" or "module.name"), then natives."""

    def __init__(self, earlier: Sequence[Module], natives: Mapping[str, Callable[..., Any]]) -> None:
        self._earlier = list(earlier)
        self._natives = natives

    def __getitem__(self, name: str) -> Any:
        for m in reversed(self._earlier):
            qualified = name.split(".", 1)
            if len(qualified) == 2 and qualified[0] == m.name and qualified[1] in m._functions:
                return m._functions[qualified[1]]
            if name in m._functions:
                return m._functions[name]
        return self._natives[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._natives)

    def __len__(self) -> int:
        return len(self._natives)


class Context:
    """Modules instantiated in order, each importing the exports of the
    modules before it (IREE's context model): a module's `mlvm.call_c`
    "f" (or "a.f", naming module `a`) binds to the latest earlier module's
    export `f`, else to `imports[f]` (a Python native). Exports are called
    directly from C, with their own arena and call state; signatures are
    checked when the module is instantiated (an error names both sides).

    `modules` are paths of shared objects (loaded here) or loaded `Module`s
    (taken as they are). `params` maps a shared object's stem to its
    parameter file, for modules built with external parameters.
    """

    def __init__(
        self,
        modules: Sequence[str | Path | Module],
        imports: Mapping[str, Callable[..., Any]] | None = None,
        queue_capacity: int = 16,
        *,
        params: Mapping[str, str | Path] | None = None,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.modules: list[Module] = []
        for m in modules:
            if not isinstance(m, Module):
                resolver = _Resolver(self.modules, imports or {})
                stem = Path(m).stem
                m = Module(m, resolver, queue_capacity, max_bytes=max_bytes,
                           params=(params or {}).get(stem))
            self.modules.append(m)

    def __getitem__(self, name: str) -> Module:
        for m in reversed(self.modules):
            if m.name == name:
                return m
        raise KeyError(f"no module {name!r} in the context ({', '.join(m.name for m in self.modules)})")

    def __repr__(self) -> str:
        return f"<mlvm context {[m.name for m in self.modules]}>"


def load(
    path: str | Path,
    imports: Mapping[str, Callable[..., Any]] | None = None,
    queue_capacity: int = 16,
    *,
    max_bytes: int = MAX_BYTES,
    params: str | Path | None = None,
) -> Module:
    """Loads a module built by `mlvm-aot build` (or `mlvm.compile`); `params`
    is the parameter file of a module built with `--external-params`."""
    return Module(path, imports, queue_capacity, max_bytes=max_bytes, params=params)
