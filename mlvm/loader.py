"""Loading a module .so through cffi (ABI mode): numpy in, numpy out.

The loader reads everything from the module descriptor the .so exports
(`mlvm_so_module`): no side file. Arguments are checked here, at the
boundary, so the generated code can run unchecked.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cffi
import numpy as np

MODULE_MAGIC = 0x4D4C564D
ABI_VERSION = 2
ARENA_ALIGN = 64
MAX_RANK = 8
MAX_BYTES = 1 << 40  # the compiler's default limit on any one buffer
MAX_ENTRIES = 1 << 16  # exports, imports, queues, tensors of one entry

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
    int32_t suspends; int32_t pad_;
    void (*direct)(void);
} mlvm_export_t;
typedef struct {
    const char *name; int32_t num_args; int32_t num_results;
    const mlvm_tensor_desc_t *args; const mlvm_tensor_desc_t *results;
} mlvm_import_desc_t;
typedef struct { const char *name; mlvm_tensor_desc_t elem; } mlvm_queue_desc_t;
typedef struct {
    uint32_t magic; uint32_t abi_version; const char *name;
    int32_t num_exports; int32_t num_imports;
    const mlvm_export_t *exports; const mlvm_import_desc_t *imports;
    size_t arena_bytes;
    int32_t num_queues; int32_t pad_;
    const mlvm_queue_desc_t *queues;
} mlvm_module_t;
typedef int (*mlvm_native_fn)(void *user, void *const *args, void *const *results);
typedef struct { const char *name; mlvm_native_fn fn; void *user; } mlvm_native_t;
typedef struct {
    const char *name; size_t elem_bytes; uint32_t capacity; unsigned char *storage;
    uint32_t head; uint32_t tail;
} mlvm_queue_t;
typedef struct {
    const mlvm_module_t *module; const mlvm_native_t *const *imports; mlvm_queue_t *const *queues;
} mlvm_instance_t;
const mlvm_module_t *mlvm_so_module(void);
int mlvm_queue_init(mlvm_queue_t *q, const char *name, size_t elem_bytes,
                    uint32_t capacity, void *storage);
int mlvm_queue_push(mlvm_queue_t *q, const void *elem);
int mlvm_queue_pop(mlvm_queue_t *q, void *elem);
uint32_t mlvm_queue_size(const mlvm_queue_t *q);
"""

_ffi = cffi.FFI()
_ffi.cdef(_CDEF)

_DTYPES = {1: np.dtype(np.float32), 2: np.dtype(np.int32)}
_from_buffer = _ffi.from_buffer
# numpy's flag bits (ndarray.flags.num): the fast path tests both at once.
_C_CONTIGUOUS, _ALIGNED = 0x0001, 0x0100

OK, SUSPENDED = 0, 1
ERR_IMPORT = -5
STATUS_NAMES = {
    0: "OK", 1: "SUSPENDED", -1: "ERR_INVALID", -2: "ERR_SHAPE", -3: "ERR_BOUNDS",
    -4: "ERR_NOMEM", -5: "ERR_IMPORT", -6: "ERR_CHECK",
}


class _WouldBlock:
    def __repr__(self) -> str:
        return "mlvm.WOULD_BLOCK"


WOULD_BLOCK = _WouldBlock()
"""What a Python native function returns to make the call suspend and retry."""


class MlvmCallError(RuntimeError):
    """A call into generated code returned an error status."""


class _Errors(threading.local):
    """The exception a native function raised, per thread: a foreign call and
    the callbacks it makes run on one thread, so one thread's failure is never
    reported by another thread's call."""

    error: BaseException | None = None


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


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
    return _ffi.string(p).decode("utf-8", "replace")


def _count(n: int, what: str) -> int:
    if not 0 <= n <= MAX_ENTRIES:
        raise DescriptorError(f"{what} count {n} is out of range")
    return int(n)


def _spec(d: Any) -> TensorSpec:
    name = _name(d.name, "a tensor")
    if not 0 <= d.rank <= MAX_RANK or (d.rank > 0 and d.dims == _ffi.NULL):
        raise DescriptorError(f"tensor '{name}' has rank {d.rank}")
    shape = tuple(int(d.dims[k]) for k in range(d.rank))
    dtype = _DTYPES.get(int(d.dtype))
    if dtype is None:
        raise DescriptorError(f"tensor '{name}' has unknown dtype code {d.dtype}")
    if any(n < 0 for n in shape) or math.prod(shape) * dtype.itemsize > MAX_BYTES:
        raise DescriptorError(f"tensor '{name}' has shape {shape}")
    return TensorSpec(name, shape, dtype)


def _specs(descs: Any, n: int) -> tuple[TensorSpec, ...]:
    if n > 0 and descs == _ffi.NULL:
        raise DescriptorError(f"{n} tensors are described by a NULL table")
    return tuple(_spec(descs[i]) for i in range(_count(n, "tensor")))


def _unique(names: Sequence[str], what: str) -> None:
    """Names the loader finds things by: two alike would alias one object."""
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise DescriptorError(f"two {what}s are named '{n}'")
        seen.add(n)


def _convert(x: Any, spec: TensorSpec, what: str) -> np.ndarray:
    """`x` as an array of `spec` (C-contiguous), refusing what would change values
    silently: another shape, an unsafe dtype cast of an array, or Python numbers
    that overflow the element type (1e40 -> inf) or are not integers for ints."""
    if isinstance(x, np.ndarray):
        if x.dtype != spec.dtype and not np.can_cast(x.dtype, spec.dtype, "safe"):
            raise ValueError(f"{what} must have dtype {spec.dtype}, got {x.dtype}")
        a = np.ascontiguousarray(x, dtype=spec.dtype)
    else:
        raw = np.asarray(x)
        if raw.dtype.kind not in "biuf":
            raise ValueError(f"{what} must be numbers of dtype {spec.dtype}, got {raw.dtype}")
        with np.errstate(all="ignore"):
            a = np.ascontiguousarray(raw, dtype=spec.dtype)
            back = a.astype(np.float64) if raw.dtype.kind == "f" else a.astype(raw.dtype)
        if spec.dtype.kind == "f":
            lost = np.isfinite(raw) & ~np.isfinite(a)
        else:
            lost = back != raw
        if np.any(lost):
            raise ValueError(f"{what}: values do not fit in {spec.dtype}")
    if a.shape != spec.shape:
        raise ValueError(f"{what} must have shape {spec.shape}, got {a.shape}")
    return a


def _aligned_empty(nbytes: int) -> tuple[np.ndarray, Any]:
    """A byte buffer aligned to ARENA_ALIGN, and a cffi pointer to it."""
    raw = np.empty(max(nbytes, 1) + ARENA_ALIGN, dtype=np.uint8)
    shift = (-raw.ctypes.data) % ARENA_ALIGN
    buf = raw[shift : shift + max(nbytes, 1)]
    return buf, _ffi.cast("void *", buf.ctypes.data)


def _view(ptr: Any, spec: TensorSpec) -> np.ndarray:
    """A numpy view of a C buffer described by `spec` (no copy)."""
    buf = _ffi.buffer(_ffi.cast("char *", ptr), spec.nbytes)
    return np.frombuffer(buf, dtype=spec.dtype).reshape(spec.shape)


class Queue:
    """A runtime queue of a module, fed and drained from numpy."""

    def __init__(self, lib: Any, spec: TensorSpec, capacity: int) -> None:
        self.spec = spec
        self._lib = lib
        if not isinstance(capacity, int) or not 1 <= capacity < 1 << 31:
            raise ValueError(f"queue_capacity must be an integer in 1..2^31-1, got {capacity!r}")
        self._name = _ffi.new("char[]", spec.name.encode())
        self._storage = np.empty(max(capacity, 1) * spec.nbytes, dtype=np.uint8)
        self.ptr = _ffi.new("mlvm_queue_t *")
        st = lib.mlvm_queue_init(
            self.ptr, self._name, spec.nbytes, capacity,
            _ffi.cast("void *", self._storage.ctypes.data),
        )
        if st != OK:
            raise ValueError(f"queue '{spec.name}': capacity must be positive")

    def push(self, x: Any) -> bool:
        """Appends a copy of x; False when the queue is full. x must have the
        element's shape, and a dtype that converts without changing values."""
        a = _convert(x, self.spec, f"queue '{self.spec.name}' element")
        return bool(self._lib.mlvm_queue_push(self.ptr, _ffi.cast("void *", a.ctypes.data)) == OK)

    def pop(self) -> np.ndarray | None:
        """The oldest element, or None when the queue is empty."""
        out = np.empty(self.spec.shape, dtype=self.spec.dtype)
        if self._lib.mlvm_queue_pop(self.ptr, _ffi.cast("void *", out.ctypes.data)) != OK:
            return None
        return out

    def __len__(self) -> int:
        return int(self._lib.mlvm_queue_size(self.ptr))


class Call:
    """A suspendable call: `begin` ran it up to its first suspension."""

    def __init__(self, fn: Function, args: Sequence[Any]) -> None:
        self._fn = fn
        self._ins = [fn._check(i, x) for i, x in enumerate(args)]
        self.outputs = [np.empty(s.shape, dtype=s.dtype) for s in fn.info.outputs]
        self._arena_buf, self._arena = _aligned_empty(fn.info.arena_bytes)
        self._state = _ffi.new("char[]", max(fn._call_bytes, 1))
        self._hdr = _ffi.cast("mlvm_call_header_t *", self._state)
        ins = _ffi.new("void *[]", [_ffi.cast("void *", a.ctypes.data) for a in self._ins] or [_ffi.NULL])
        outs = _ffi.new("void *[]", [_ffi.cast("void *", a.ctypes.data) for a in self.outputs] or [_ffi.NULL])
        self.code: int = fn._owner._checked(
            fn._begin(self._state, fn._owner._instance, self._arena, ins, outs)
        )

    @property
    def status(self) -> str:
        return STATUS_NAMES.get(self.code, str(self.code))

    @property
    def done(self) -> bool:
        return self.code != SUSPENDED

    def resume(self) -> str:
        """Runs the call on to its next suspension or its end; the status name."""
        if self.code == SUSPENDED:
            self.code = self._fn._owner._checked(self._fn._resume(self._state))
        return self.status

    @property
    def resume_point(self) -> int:
        return int(self._hdr.pc)

    def check_message(self) -> str | None:
        """For a call that ended in ERR_CHECK: where the check is and its worst element."""
        chk = self._hdr.check
        if self.code != -6 or chk.where == _ffi.NULL:
            return None
        return (
            f"{_ffi.string(chk.where).decode()} failed: worst element at flat index "
            f"{int(chk.index)}: got {float(chk.got):.9g}, want {float(chk.want):.9g}"
        )

    def result(self) -> Any:
        """The outputs of a call that ended with OK (an error otherwise)."""
        if self.code != OK:
            msg = self.check_message() or f"call is {self.status}"
            raise MlvmCallError(f"{self._fn.info.name}: {msg}")
        return self.outputs[0] if len(self.outputs) == 1 else tuple(self.outputs)


class Function:
    """One exported function: `f(*arrays)` returns an array or a tuple."""

    def __init__(self, owner: Module, export: Any) -> None:
        self._owner = owner
        self._call = export.call
        self._begin = export.begin
        self._resume = export.resume
        self._call_bytes = int(export.call_bytes)
        self.info = FunctionInfo(
            _name(export.name, "an export"),
            _specs(export.inputs, export.num_inputs),
            _specs(export.outputs, export.num_outputs),
            int(export.arena_bytes),
            bool(export.suspends),
        )
        self._local = threading.local()
        n_in, n_out = len(self.info.inputs), len(self.info.outputs)
        self._n_in, self._n_out = n_in, n_out
        self._in_specs = [(s.dtype, s.shape) for s in self.info.inputs]
        self._out_specs = [(s.dtype, s.shape) for s in self.info.outputs]
        suspends = self.info.suspends or export.direct == _ffi.NULL
        # The typed entry, called with one pointer per tensor: no arrays to fill.
        arity = ", ".join(["void *"] * (1 + n_in + n_out))
        self._one_shot = None if suspends else _ffi.cast(f"int (*)({arity})", export.direct)
        if self._one_shot is not None:
            fast = self._make_fast()
            self.__class__ = type("Function", (Function,), {"__call__": fast})

    def _arena(self) -> Any:
        ptr = getattr(self._local, "arena", None)
        if ptr is None:
            buf, ptr = _aligned_empty(self.info.arena_bytes)
            self._local.buf, self._local.arena = buf, ptr
        return ptr

    def _check(self, i: int, x: Any) -> np.ndarray:
        spec = self.info.inputs[i]
        what = f"{self.info.name}: input {i} ('{spec.name}')"
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

    def begin(self, *args: Any) -> Call:
        """Starts a call that may suspend; drive it with `resume()`."""
        self._arity(args)
        return Call(self, args)

    def __call__(self, *args: Any) -> Any:
        # One-shot functions get a class whose __call__ is `_make_fast`'s code.
        self._arity(args)
        return self._run_to_end(args)

    def _make_fast(self) -> Callable[..., Any]:
        """The hot path of one-shot calls, written out for this signature.

        Like `dataclasses` and `namedtuple`, it is generated source: one
        chained test per input (the precise error comes from `_check` only
        when it fails), one `np.empty` per output and one foreign call, with
        every constant bound as a default argument. No user string reaches
        the source: names are positional (`x0`, `o0`, ...).
        """
        ins = [f"x{i}" for i in range(self._n_in)]
        outs = [f"o{j}" for j in range(self._n_out)]
        lines = [
            "def fast(self, *args):",
            f"    if len(args) != {len(ins)}: self._arity(args)",
        ]
        if ins:
            lines.append(f"    {', '.join(ins)}, = args")
        for i, x in enumerate(ins):
            lines.append(
                f"    if type({x}) is not ndarray or {x}.dtype != d{i} or {x}.shape != s{i} "
                f"or {x}.flags.num & CA != CA: check({i}, {x})"
            )
        if self.info.arena_bytes > 0:  # else the entry never touches its arena
            lines.append("    arena = getattr(local, 'arena', None) or arena_of()")
        else:
            lines.append("    arena = NULL")
        for j, o in enumerate(outs):
            lines.append(f"    {o} = empty(os{j}, od{j})")
        ptrs = ", ".join(f"fb({v})" for v in ins + outs)
        lines.append(f"    status = fn(arena{', ' if ptrs else ''}{ptrs})")
        # One-shot entries exist only for functions without native imports, so
        # no callback can have failed when the status is OK.
        lines.append("    if status != 0: failed(status)")
        ret = outs[0] if len(outs) == 1 else f"({', '.join(outs)}{',' if outs else ''})"
        lines.append(f"    return {ret}")
        env: dict[str, Any] = {
            "ndarray": np.ndarray, "empty": np.empty, "fb": _from_buffer, "fn": self._one_shot,
            "local": self._local, "arena_of": self._arena, "check": self._check,
            "owner": self._owner, "failed": self._failed, "NULL": _ffi.NULL,
            "CA": _C_CONTIGUOUS | _ALIGNED,
        }
        for i, (dtype, shape) in enumerate(self._in_specs):
            env[f"d{i}"], env[f"s{i}"] = dtype, shape
        for j, (dtype, shape) in enumerate(self._out_specs):
            env[f"od{j}"], env[f"os{j}"] = dtype, shape
        exec("\n".join(lines), env)  # noqa: S102 - generated from the signature only
        fast: Callable[..., Any] = env["fast"]
        return fast

    def _failed(self, status: int) -> None:
        self._owner._checked(status)
        raise MlvmCallError(
            f"{self.info.name}: call returned {STATUS_NAMES.get(status, status)}"
        )

    def _run_to_end(self, args: Sequence[Any]) -> Any:
        """begin, then resume while the call makes progress (yields)."""
        call = self.begin(*args)
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
    (`mlvm.call_c`) to Python callables: they receive numpy views of the
    arguments and return the results (or `WOULD_BLOCK`). Every import must
    be given: a missing one fails here, naming it. Each queue of the module
    gets a runtime queue of `queue_capacity` elements (`m.queues[name]`).
    """

    def __init__(
        self,
        path: str | Path,
        imports: Mapping[str, Callable[..., Any]] | None = None,
        queue_capacity: int = 16,
    ) -> None:
        self.path = Path(path)
        self._errors = _Errors()
        try:
            # An absolute path: dlopen searches the library path for a bare name.
            self._lib = _ffi.dlopen(str(self.path.resolve()))
        except OSError as e:
            raise ValueError(f"{self.path}: cannot load shared object: {e}") from None
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
            self._bind(imports or {}, queue_capacity)
            functions = [Function(self, desc.exports[i]) for i in range(desc.num_exports)]
            _unique([f.info.name for f in functions], "export")
        except DescriptorError as e:
            raise ValueError(f"{self.path}: damaged module descriptor: {e}") from None
        self._functions = {f.info.name: f for f in functions}

    @staticmethod
    def _check_descriptor(desc: Any) -> None:
        for n, table, what in ((desc.num_exports, desc.exports, "export"),
                               (desc.num_imports, desc.imports, "import"),
                               (desc.num_queues, desc.queues, "queue")):
            if _count(n, what) > 0 and table == _ffi.NULL:
                raise DescriptorError(f"{n} {what}s in a NULL table")
        if not 0 <= desc.arena_bytes <= MAX_BYTES:
            raise DescriptorError(f"arena of {desc.arena_bytes} bytes")
        for i in range(desc.num_exports):
            e = desc.exports[i]
            if e.begin == _ffi.NULL or e.resume == _ffi.NULL:
                raise DescriptorError(f"export {i} has no begin/resume entry")
            if not 0 <= e.arena_bytes <= MAX_BYTES or not 0 < e.call_bytes <= MAX_BYTES:
                raise DescriptorError(f"export {i} needs {e.arena_bytes} / {e.call_bytes} bytes")

    def _bind(self, imports: Mapping[str, Callable[..., Any]], capacity: int) -> None:
        desc = self._desc
        self.import_specs: dict[str, tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]] = {}
        self._natives: list[Any] = []  # keeps callbacks and names alive
        slots = _ffi.new("mlvm_native_t *[]", max(desc.num_imports, 1))
        _unique([_name(desc.imports[i].name, "an import") for i in range(desc.num_imports)],
                 "import")
        _unique([_name(desc.queues[i].name, "a queue") for i in range(desc.num_queues)], "queue")
        for i in range(desc.num_imports):
            d = desc.imports[i]
            name = _ffi.string(d.name).decode()
            specs = (_specs(d.args, d.num_args), _specs(d.results, d.num_results))
            self.import_specs[name] = specs
            fn = imports.get(name)
            if fn is None:
                raise ValueError(f"{self.path}: missing import '{name}' (pass imports={{...}})")
            native = _ffi.new("mlvm_native_t *")
            cname = _ffi.new("char[]", name.encode())
            cb = self._callback(name, fn, *specs)
            native.name, native.fn = cname, cb
            slots[i] = native
            self._natives += [native, cname, cb]
        self.queues: dict[str, Queue] = {}
        qslots = _ffi.new("mlvm_queue_t *[]", max(desc.num_queues, 1))
        for i in range(desc.num_queues):
            spec = _spec(desc.queues[i].elem)
            q = Queue(self._lib, spec, capacity)
            self.queues[spec.name] = q
            self._natives.append(q)  # alive as long as the instance points at it
            qslots[i] = q.ptr
        self._instance = _ffi.new("mlvm_instance_t *")
        self._instance.module = desc
        self._instance.imports = slots
        self._instance.queues = qslots
        self._slots = (slots, qslots)

    def _callback(
        self,
        name: str,
        fn: Callable[..., Any],
        args: tuple[TensorSpec, ...],
        results: tuple[TensorSpec, ...],
    ) -> Any:
        errors = self._errors

        def on_error(exc_type: Any, exc: BaseException, tb: Any) -> None:
            errors.error = exc

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
                raise ValueError(f"native '{name}' returned {len(outs)} results, expected {len(results)}")
            for k, (o, s) in enumerate(zip(outs, results, strict=True)):
                _view(r[k], s)[...] = _convert(o, s, f"native '{name}' result {k}")
            return OK

        return native

    def _checked(self, status: int) -> int:
        """Re-raises an exception a Python native function raised during a call
        on this thread."""
        err = self._errors.error
        if err is not None:
            self._errors.error = None
            raise MlvmCallError(f"a native function failed: {err!r}") from err
        return int(status)

    @property
    def functions(self) -> dict[str, FunctionInfo]:
        return {name: f.info for name, f in self._functions.items()}

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


def load(
    path: str | Path,
    imports: Mapping[str, Callable[..., Any]] | None = None,
    queue_capacity: int = 16,
) -> Module:
    return Module(path, imports, queue_capacity)
