"""Eager mode: single ops on numpy arrays, run by the C runtime's kernels.

    from mlvm import eager
    y = eager.add(a, b)                         # numpy in, numpy out
    loss, grad = eager.softmax_xent(labels, logits)
    m = eager.matmul(a, b, transpose_rhs=True)

Each call copies its operands into tensors of a per-thread VM, runs one
`mlvm_exec` (the same kernel call generated code makes) and copies the
results out. For experiments and for testing kernels one at a time.

`VM` is the raw machine itself: handles, `exec`, `batch`, zero-copy views
and the bytes consumed. By default the runtime is built with `MLVM_CHECKS`,
so misuse raises `EagerError` carrying the runtime's status code; pass
`checks=False` to run the unchecked release build.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from math import prod
from typing import TYPE_CHECKING, Any

import cffi
import numpy as np

from mlvm.dialect.elements import ELEMS
from mlvm.dialect.shapes import LAYER_NORM_EPS
from mlvm.runtime import runtime_shared

if TYPE_CHECKING:
    from mlvm.loader import Module

_CDEF = """
typedef struct mlvm_allocator mlvm_allocator_t;
typedef struct mlvm_vm mlvm_vm_t;
typedef int32_t mlvm_handle_t;
typedef struct mlvm_shape {
    int32_t refs; int32_t rank; size_t size; const mlvm_allocator_t *alloc;
    int64_t dims[];
} mlvm_shape_t;
typedef struct mlvm_opts {
    float f; int32_t axis; uint32_t axes; uint32_t flags; mlvm_handle_t aux;
    int32_t ints[16];
} mlvm_opts_t;
typedef struct mlvm_oparg {
    int32_t op; mlvm_handle_t dst, lhs, rhs; mlvm_opts_t opts;
} mlvm_oparg_t;

const mlvm_allocator_t *mlvm_allocator_std(void);
mlvm_vm_t *mlvm_vm_new(const mlvm_allocator_t *alloc);
void mlvm_vm_free(mlvm_vm_t *vm);
size_t mlvm_vm_consumed(const mlvm_vm_t *vm);
int32_t mlvm_vm_tensor_count(const mlvm_vm_t *vm);
int mlvm_vm_reserve(mlvm_vm_t *vm, int32_t n);

mlvm_shape_t *mlvm_shape_new(const mlvm_allocator_t *alloc, int32_t rank, const int64_t *dims);
void mlvm_shape_decref(mlvm_shape_t *s);
mlvm_shape_t *mlvm_vm_shape_new(mlvm_vm_t *vm, int32_t rank, const int64_t *dims);

mlvm_handle_t mlvm_tensor_new(mlvm_vm_t *vm, int dtype, mlvm_shape_t *shape);
int mlvm_tensor_free(mlvm_vm_t *vm, mlvm_handle_t t);
int mlvm_tensor_info(const mlvm_vm_t *vm, mlvm_handle_t t, int *dtype, const mlvm_shape_t **shape);
int mlvm_tensor_data(const mlvm_vm_t *vm, mlvm_handle_t t, void **data);
int mlvm_tensor_read(const mlvm_vm_t *vm, mlvm_handle_t t, size_t offset, void *dst, size_t nbytes);
int mlvm_tensor_write(mlvm_vm_t *vm, mlvm_handle_t t, size_t offset, const void *src, size_t nbytes);

int mlvm_exec(mlvm_vm_t *vm, int op, const mlvm_opts_t *opts,
              mlvm_handle_t dst, mlvm_handle_t lhs, mlvm_handle_t rhs);
int mlvm_batch(mlvm_vm_t *vm, size_t n, const mlvm_oparg_t *ops, size_t *failed);
const char *mlvm_op_name(int32_t op);
int mlvm_vm_launch(mlvm_vm_t *vm, void *inst, const char *fn, const mlvm_handle_t *in,
                   mlvm_handle_t *out);
int mlvm_vm_try_launch(mlvm_vm_t *vm, void *inst, const char *fn, const mlvm_handle_t *in,
                       mlvm_handle_t *out);
int32_t mlvm_op_arity(int32_t op);
"""

_ffi = cffi.FFI()
_ffi.cdef(_CDEF)

NONE = -1
"""The handle of no tensor (`MLVM_NONE`)."""

F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)
_DTYPE_CODES = {e.dtype: e.code for e in ELEMS.values()}
_CODE_DTYPES = {e.code: e.dtype for e in ELEMS.values()}

STATUS_NAMES = {
    0: "OK", 1: "SUSPENDED", -1: "ERR_INVALID", -2: "ERR_SHAPE", -3: "ERR_BOUNDS",
    -4: "ERR_NOMEM", -5: "ERR_IMPORT", -6: "ERR_CHECK", -7: "ERR_BUSY",
}
ERR_BUSY = -7

TRANSPOSE_LHS = 1
TRANSPOSE_RHS = 2
GELU_TANH = 1
POOL_AVG = 1

# Layout of mlvm_opts_t.ints (exec.h).
OPTS_INTS = 16
SLICE_START, SLICE_STRIDE = 0, 8
WIN_SH, WIN_SW, WIN_PT, WIN_PL, WIN_PB, WIN_PR = range(6)
CONV_DH, CONV_DW, CONV_GROUPS = 6, 7, 8
POOL_KH, POOL_KW = 6, 7


class EagerError(RuntimeError):
    """A runtime call returned an error status."""

    def __init__(self, what: str, status: int) -> None:
        self.status = status
        self.status_name = STATUS_NAMES.get(status, str(status))
        super().__init__(f"{what}: MLVM_{self.status_name} ({status})")


class _Runtime:
    """One loaded build of the runtime and its op table."""

    def __init__(self, checks: bool) -> None:
        self.checks = checks
        self.lib: Any = _ffi.dlopen(str(runtime_shared(checks)))
        self.ops: dict[str, int] = {}
        self.arity: dict[str, int] = {}
        i = 0
        while (name := self.lib.mlvm_op_name(i)) != _ffi.NULL:
            op = _ffi.string(name).decode()
            self.ops[op] = i
            self.arity[op] = int(self.lib.mlvm_op_arity(i))
            i += 1


@cache
def runtime(checks: bool = True) -> _Runtime:
    """The runtime built with (or without) MLVM_CHECKS, loaded once."""
    return _Runtime(checks)


def op_names(checks: bool = True) -> list[str]:
    """Every op the eager runtime runs, in the order of its C table."""
    return list(runtime(checks).ops)


def _as_input(x: Any) -> np.ndarray:
    """x as a contiguous array of an mlvm element type. Python numbers and
    lists convert (floats to f32, ints and bools to i32); numpy arrays of
    other dtypes are refused rather than silently converted."""
    a = np.asarray(x)
    if not isinstance(x, np.ndarray | np.generic):
        a = a.astype(F32 if a.dtype.kind in "fc" else I32)
    if a.dtype not in _DTYPE_CODES:
        raise TypeError(f"mlvm.eager: dtype {a.dtype} is not an mlvm element type")
    # (np.ascontiguousarray would turn a 0-d array into a 1-d one.)
    return a if a.flags.c_contiguous else a.copy(order="C")


class VM:
    """A runtime VM: tensors as integer handles, ops run by `exec`.

    Closed (every tensor and shape released) by `close()`, at the end of a
    `with` block, or when collected.
    """

    def __init__(self, checks: bool = True) -> None:
        self._rt = runtime(checks)
        self._lib = self._rt.lib
        self._alloc = self._lib.mlvm_allocator_std()
        self._vm = self._lib.mlvm_vm_new(self._alloc)
        if self._vm == _ffi.NULL:
            raise MemoryError("mlvm_vm_new")

    # -- lifetime --------------------------------------------------------
    def close(self) -> None:
        if getattr(self, "_vm", None) is not None:
            self._lib.mlvm_vm_free(self._vm)
            self._vm = None

    def __enter__(self) -> VM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    @property
    def checks(self) -> bool:
        return self._rt.checks

    @property
    def consumed(self) -> int:
        """Bytes the VM holds (`mlvm_vm_consumed`)."""
        return int(self._lib.mlvm_vm_consumed(self._vm))

    @property
    def consumed_mib(self) -> float:
        """`consumed` in MiB."""
        return self.consumed / (1 << 20)

    @property
    def tensor_count(self) -> int:
        return int(self._lib.mlvm_vm_tensor_count(self._vm))

    def _check(self, status: int, what: str) -> None:
        if status < 0:
            raise EagerError(what, status)

    # -- programs ----------------------------------------------------------
    def launch(self, module: Module, fn: str, inputs: Sequence[int],
               outputs: Sequence[int] | None = None, *, wait: bool = True) -> tuple[int, ...]:
        """Runs export `fn` of a loaded module on this VM's tensors
        (`mlvm_vm_launch`): `inputs` are handles of the declared dtypes and
        shapes; `outputs` are handles to write, or NONE (or omitted) for new
        tensors. Returns the output handles. The VM provides the arena;
        the module's instance (its state included) is the module's own.
        Launches on one VM run one at a time: with `wait=False` a launch
        while another runs raises `EagerError` with status ERR_BUSY."""
        from mlvm.loader import _ffi as module_ffi

        info = module[fn].info
        if len(inputs) != len(info.inputs):
            raise ValueError(f"{fn} takes {len(info.inputs)} inputs, got {len(inputs)}")
        outs = list(outputs) if outputs is not None else [NONE] * len(info.outputs)
        if len(outs) != len(info.outputs):
            raise ValueError(f"{fn} has {len(info.outputs)} outputs, got {len(outs)} handles")
        # The instance lives in the module's .so, the VM in the runtime's:
        # one C ABI, two cffi views of it.
        inst = _ffi.cast("void *", int(module_ffi.cast("uintptr_t", module._instance)))
        ins = _ffi.new("mlvm_handle_t[]", [int(h) for h in inputs] or [NONE])
        out = _ffi.new("mlvm_handle_t[]", [int(h) for h in outs] or [NONE])
        entry = self._lib.mlvm_vm_launch if wait else self._lib.mlvm_vm_try_launch
        self._check(entry(self._vm, inst, fn.encode(), ins, out), f"launch {fn}")
        return tuple(int(out[j]) for j in range(len(info.outputs)))

    # -- tensors ---------------------------------------------------------
    def tensor(self, value: Any = None, *, shape: Sequence[int] | None = None,
               dtype: Any = F32) -> int:
        """A new tensor: a copy of `value`, or uninitialised of `shape`/`dtype`."""
        if value is not None:
            a = _as_input(value)
            shape, dt = a.shape, a.dtype
        else:
            if shape is None:
                raise TypeError("mlvm.eager: tensor() needs a value or a shape")
            dt = np.dtype(dtype)
            if dt not in _DTYPE_CODES:
                raise TypeError(f"mlvm.eager: dtype {dt} is not an mlvm element type")
        dims = [int(d) for d in shape]
        s = self._lib.mlvm_shape_new(self._alloc, len(dims), _ffi.new("int64_t[]", dims or [0]))
        if s == _ffi.NULL:
            raise EagerError(f"mlvm_shape_new({tuple(dims)})", -1 if self.checks else -4)
        try:
            t = int(self._lib.mlvm_tensor_new(self._vm, _DTYPE_CODES[dt], s))
        finally:
            self._lib.mlvm_shape_decref(s)  # the tensor keeps its own reference
        self._check(t, f"mlvm_tensor_new({tuple(dims)}, {dt})")
        if value is not None:
            self.write(t, a)
        return t

    def free(self, t: int) -> None:
        self._check(self._lib.mlvm_tensor_free(self._vm, t), f"mlvm_tensor_free({t})")

    def info(self, t: int) -> tuple[tuple[int, ...], np.dtype[Any]]:
        """(shape, dtype) of a tensor, as the runtime records them."""
        dt = _ffi.new("int *")
        sp = _ffi.new("const mlvm_shape_t **")
        self._check(self._lib.mlvm_tensor_info(self._vm, t, dt, sp), f"mlvm_tensor_info({t})")
        s = sp[0]
        return tuple(int(s.dims[i]) for i in range(s.rank)), _CODE_DTYPES[dt[0]]

    def write(self, t: int, value: Any) -> None:
        """Copies `value` into the tensor (the bytes must fit exactly with checks)."""
        a = _as_input(value)
        self._check(
            self._lib.mlvm_tensor_write(self._vm, t, 0, _ffi.from_buffer(a), a.nbytes),
            f"mlvm_tensor_write({t})",
        )

    def read(self, t: int) -> np.ndarray:
        """A copy of the tensor's contents."""
        shape, dt = self.info(t)
        out = np.empty(shape, dt)
        self._check(
            self._lib.mlvm_tensor_read(self._vm, t, 0, _ffi.from_buffer(out), out.nbytes),
            f"mlvm_tensor_read({t})",
        )
        return out

    def view(self, t: int) -> np.ndarray:
        """The tensor's bytes as a numpy array, without a copy (valid while the
        tensor lives and the VM is open)."""
        shape, dt = self.info(t)
        p = _ffi.new("void **")
        self._check(self._lib.mlvm_tensor_data(self._vm, t, p), f"mlvm_tensor_data({t})")
        n = prod(shape) * dt.itemsize
        if n == 0:
            return np.empty(shape, dt)
        return np.frombuffer(_ffi.buffer(p[0], n), dtype=dt).reshape(shape)

    # -- ops -------------------------------------------------------------
    def _opts(self, o: Any, f: float = 0.0, axis: int = 0, axes: Iterable[int] = (),
              transpose_lhs: bool = False, transpose_rhs: bool = False, flags: int = 0,
              aux: int = NONE, ints: Mapping[int, int] | Sequence[int] = ()) -> None:
        o.f = f
        o.axis = axis
        mask = 0
        for a in axes:
            mask |= 1 << int(a)
        o.axes = mask
        o.flags = (flags | (TRANSPOSE_LHS if transpose_lhs else 0)
                   | (TRANSPOSE_RHS if transpose_rhs else 0))
        o.aux = aux
        items = ints.items() if isinstance(ints, Mapping) else enumerate(ints)
        for i, v in items:
            if not 0 <= i < OPTS_INTS:
                raise ValueError(f"mlvm.eager: ints[{i}] is outside the {OPTS_INTS} entries")
            o.ints[i] = int(v)

    def op(self, name: str) -> int:
        try:
            return self._rt.ops[name]
        except KeyError:
            raise ValueError(f"mlvm.eager: no op '{name}' (ops: {', '.join(self._rt.ops)})") from None

    def exec(self, op: str, dst: int, lhs: int = NONE, rhs: int = NONE, **opts: Any) -> None:
        """`mlvm_exec`: options are f, axis, axes, transpose_lhs, transpose_rhs,
        flags, aux and ints (a sequence, or a mapping of index to value)."""
        o = _ffi.new("mlvm_opts_t *")
        self._opts(o, **opts)
        st = self._lib.mlvm_exec(self._vm, self.op(op), o, dst, lhs, rhs)
        self._check(st, f"mlvm_exec({op}, dst={dst}, lhs={lhs}, rhs={rhs})")

    def batch(self, ops: Sequence[tuple[Any, ...]]) -> None:
        """`mlvm_batch` over (op, dst, lhs, rhs[, opts dict]) tuples."""
        arr = _ffi.new("mlvm_oparg_t[]", builtins.max(len(ops), 1))
        for i, item in enumerate(ops):
            name, dst, lhs, rhs, *rest = item
            arr[i].op = self.op(name)
            arr[i].dst, arr[i].lhs, arr[i].rhs = dst, lhs, rhs
            self._opts(arr[i].opts, **(rest[0] if rest else {}))
        failed = _ffi.new("size_t *")
        st = self._lib.mlvm_batch(self._vm, len(ops), arr, failed)
        if st < 0:
            raise EagerError(f"mlvm_batch: op {failed[0]} ({ops[failed[0]][0]})", st)


# --------------------------------------------------------------------------
# One op on numpy arrays
# --------------------------------------------------------------------------

_local = threading.local()


def default_vm(checks: bool = True) -> VM:
    """This thread's VM for the one-op functions below."""
    key = "checked" if checks else "release"
    vm = getattr(_local, key, None)
    if vm is None:
        vm = VM(checks)
        setattr(_local, key, vm)
    return vm


def run(op: str, inputs: Sequence[Any], outputs: Sequence[tuple[Sequence[int], Any]],
        checks: bool = True, **opts: Any) -> list[np.ndarray]:
    """Runs `op` on copies of `inputs` into fresh tensors of the given
    (shape, dtype) `outputs`; a third input or a second output goes in as
    `aux`."""
    vm = default_vm(checks)
    handles: list[int] = []
    try:
        ins = [vm.tensor(x) for x in inputs]
        handles += ins
        outs = [vm.tensor(shape=s, dtype=d) for s, d in outputs]
        handles += outs
        if len(outs) > 1:
            opts["aux"] = outs[1]
        elif len(ins) > 2:
            opts["aux"] = ins[2]
        operands = ins + [NONE] * (2 - len(ins))
        vm.exec(op, outs[0], operands[0], operands[1], **opts)
        return [vm.read(t) for t in outs]
    finally:
        for t in handles:
            vm.free(t)


def _one(op: str, inputs: Sequence[Any], shape: Sequence[int], dtype: Any,
         checks: bool, **opts: Any) -> np.ndarray:
    return run(op, inputs, [(shape, dtype)], checks, **opts)[0]


def _binary(op: str, a: Any, b: Any, checks: bool) -> np.ndarray:
    a, b = _as_input(a), _as_input(b)
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        shape = a.shape  # the runtime reports the mismatch
    dt = F32 if op in ("eq", "cmpl") else a.dtype
    return _one(op, [a, b], shape, dt, checks)


def add(a: Any, b: Any, checks: bool = True) -> np.ndarray:
    return _binary("add", a, b, checks)


def sub(a: Any, b: Any, checks: bool = True) -> np.ndarray:
    return _binary("sub", a, b, checks)


def mul(a: Any, b: Any, checks: bool = True) -> np.ndarray:
    return _binary("mul", a, b, checks)


def div(a: Any, b: Any, checks: bool = True) -> np.ndarray:
    return _binary("div", a, b, checks)


def max(a: Any, b: Any, checks: bool = True) -> np.ndarray:  # noqa: A001
    return _binary("max", a, b, checks)


def min(a: Any, b: Any, checks: bool = True) -> np.ndarray:  # noqa: A001
    return _binary("min", a, b, checks)


def eq(a: Any, b: Any, checks: bool = True) -> np.ndarray:
    return _binary("eq", a, b, checks)


def cmpl(a: Any, b: Any, checks: bool = True) -> np.ndarray:
    """`a > b` as f32 1.0 / 0.0."""
    return _binary("cmpl", a, b, checks)


def _unary(op: str, a: Any, checks: bool, **opts: Any) -> np.ndarray:
    a = _as_input(a)
    return _one(op, [a], a.shape, F32, checks, **opts)


def neg(a: Any, checks: bool = True) -> np.ndarray:
    return _unary("neg", a, checks)


def exp(a: Any, checks: bool = True) -> np.ndarray:
    return _unary("exp", a, checks)


def log(a: Any, checks: bool = True) -> np.ndarray:
    return _unary("log", a, checks)


def sqrt(a: Any, checks: bool = True) -> np.ndarray:
    return _unary("sqrt", a, checks)


def tanh(a: Any, checks: bool = True) -> np.ndarray:
    return _unary("tanh", a, checks)


def sigmoid(a: Any, checks: bool = True) -> np.ndarray:
    return _unary("sigmoid", a, checks)


def relu(a: Any, checks: bool = True) -> np.ndarray:
    return _unary("relu", a, checks)


def erf(a: Any, checks: bool = True) -> np.ndarray:
    """erf of each element (`mlvm_erff`, mlvm/vmath.h)."""
    return _unary("erf", a, checks)


def abs(a: Any, checks: bool = True) -> np.ndarray:
    """`fabsf` of each element."""
    return _unary("abs", a, checks)


def floor(a: Any, checks: bool = True) -> np.ndarray:
    """`floorf` of each element."""
    return _unary("floor", a, checks)


def ceil(a: Any, checks: bool = True) -> np.ndarray:
    """`ceilf` of each element."""
    return _unary("ceil", a, checks)


def sin(a: Any, checks: bool = True) -> np.ndarray:
    """`sinf` of each element."""
    return _unary("sin", a, checks)


def cos(a: Any, checks: bool = True) -> np.ndarray:
    """`cosf` of each element."""
    return _unary("cos", a, checks)


def rsqrt(a: Any, eps: float = 0.0, checks: bool = True) -> np.ndarray:
    """`1 / sqrt(a + eps)`."""
    return _unary("rsqrt", a, checks, f=eps)


def matmul(a: Any, b: Any, transpose_lhs: bool = False, transpose_rhs: bool = False,
           checks: bool = True) -> np.ndarray:
    """`a @ b` with optional transposes of the last two dims (rank 2, or rank
    >= 3 with broadcast batch dims)."""
    a, b = _as_input(a), _as_input(b)
    sa, sb = a.shape, b.shape
    try:
        m = sa[-1] if transpose_lhs else sa[-2]
        n = sb[-2] if transpose_rhs else sb[-1]
        shape = (*np.broadcast_shapes(sa[:-2], sb[:-2]), m, n)
    except (IndexError, ValueError):
        shape = (0, 0)  # the runtime reports the mismatch
    return _one("matmul", [a, b], shape, F32, checks,
                transpose_lhs=transpose_lhs, transpose_rhs=transpose_rhs)


def _norm_axes(axes: Iterable[int], rank: int) -> list[int]:
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"mlvm.eager: axis {a} is out of range for rank {rank}")
        out.append(a % rank)
    return sorted(set(out))


def reduce(a: Any, kind: str, axes: Iterable[int], keepdims: bool = False,
           checks: bool = True) -> np.ndarray:
    """`kind` ("sum", "max", "mean") over `axes`."""
    a = _as_input(a)
    ax = _norm_axes(axes, a.ndim)
    if keepdims:
        shape = tuple(1 if i in ax else d for i, d in enumerate(a.shape))
    else:
        shape = tuple(d for i, d in enumerate(a.shape) if i not in ax)
    return _one(f"reduce_{kind}", [a], shape, F32, checks, axes=ax)


def argmax(a: Any, axis: int, keepdims: bool = False, checks: bool = True) -> np.ndarray:
    """Index (i32) of the first maximum along `axis`."""
    a = _as_input(a)
    (ax,) = _norm_axes([axis], a.ndim)
    shape = list(a.shape)
    if keepdims:
        shape[ax] = 1
    else:
        del shape[ax]
    return _one("argmax", [a], shape, I32, checks, axis=ax)


def softmax_xent(labels: Any, logits: Any, checks: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(loss per row, grad = softmax(logits) - labels) over the last axis."""
    y, x = _as_input(labels), _as_input(logits)
    loss, grad = run("softmax_xent", [y, x], [(x.shape[:-1], F32), (x.shape, F32)], checks)
    return loss, grad


def cast(a: Any, dtype: Any, checks: bool = True) -> np.ndarray:
    """Element type conversion; f32 -> i32 truncates toward zero."""
    a = _as_input(a)
    return _one("cast", [a], a.shape, np.dtype(dtype), checks)


def _resolve(shape: Sequence[int], size: int) -> tuple[int, ...]:
    dims = [int(d) for d in shape]
    if dims.count(-1) == 1:
        known = prod(d for d in dims if d != -1)
        dims[dims.index(-1)] = size // known if known else 0
    return tuple(dims)


def reshape(a: Any, shape: Sequence[int], checks: bool = True) -> np.ndarray:
    """Same elements, new shape (one dim may be -1)."""
    a = _as_input(a)
    return _one("reshape", [a], _resolve(shape, a.size), a.dtype, checks)


def broadcast_to(a: Any, shape: Sequence[int], checks: bool = True) -> np.ndarray:
    a = _as_input(a)
    return _one("broadcast_to", [a], tuple(shape), a.dtype, checks)


def fill(shape: Sequence[int], value: float, dtype: Any = F32, checks: bool = True) -> np.ndarray:
    """A tensor of `shape` holding `value` (truncated for int32)."""
    return _one("fill", [], tuple(shape), np.dtype(dtype), checks, f=value)


# -- neural-network ops (the mlvm dialect's nn ops) -------------------------


def transpose(a: Any, perm: Sequence[int] | None = None, checks: bool = True) -> np.ndarray:
    """numpy's transpose: result dim d is operand dim perm[d] (default: reversed)."""
    a = _as_input(a)
    p = [int(v) for v in (perm if perm is not None else range(a.ndim - 1, -1, -1))]
    try:
        shape = tuple(a.shape[v] for v in p)
    except IndexError:
        shape = a.shape  # the runtime reports the bad perm
    return _one("transpose", [a], shape, a.dtype, checks, ints=p)


def slice(a: Any, start: Sequence[int], sizes: Sequence[int],  # noqa: A001
          stride: Sequence[int] | None = None, checks: bool = True) -> np.ndarray:
    """result[i] = a[start + i * stride] per dim, of the given sizes; stride
    defaults to 1 and may be negative."""
    a = _as_input(a)
    ints = {SLICE_START + d: int(v) for d, v in enumerate(start)}
    ints.update({SLICE_STRIDE + d: int(v) for d, v in enumerate(stride or ())})
    return _one("slice", [a], tuple(sizes), a.dtype, checks, ints=ints)


def concat(xs: Sequence[Any], axis: int = 0, checks: bool = True) -> np.ndarray:
    """The arrays joined along `axis` (pairwise, as the runtime's concat is
    binary; each step is a copy, so the bits are those of one concat)."""
    arrays = [_as_input(x) for x in xs]
    if not arrays:
        raise ValueError("mlvm.eager: concat needs at least one array")
    vm = default_vm(checks)
    handles = [vm.tensor(x) for x in arrays]
    try:
        acc, shape = handles[0], list(arrays[0].shape)
        ax = axis + len(shape) if axis < 0 else axis
        if len(arrays) == 1:
            out = vm.tensor(shape=shape, dtype=arrays[0].dtype)
            handles.append(out)
            vm.exec("reshape", out, acc)
            return vm.read(out)
        for x, h in zip(arrays[1:], handles[1:]):
            if 0 <= ax < len(shape) and x.ndim == len(shape):
                shape[ax] += x.shape[ax]
            out = vm.tensor(shape=shape, dtype=arrays[0].dtype)
            handles.append(out)
            vm.exec("concat", out, acc, h, axis=axis)
            acc = out
        return vm.read(acc)
    finally:
        for t in handles:
            vm.free(t)


def softmax(a: Any, axis: int = -1, checks: bool = True) -> np.ndarray:
    """exp(a - max) / sum(exp(a - max)) along `axis`."""
    a = _as_input(a)
    return _one("softmax", [a], a.shape, F32, checks, axis=axis)


def layer_norm(x: Any, gamma: Any = None, beta: Any = None, axes: Iterable[int] = (-1,),
               eps: float = LAYER_NORM_EPS, checks: bool = True) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) over `axes`, then * gamma + beta when both
    are given (their shape: x's dims at `axes`)."""
    x = _as_input(x)
    ax = _norm_axes(axes, x.ndim)
    inputs = [x] if gamma is None and beta is None else [x, gamma, beta]
    # The C API reads +0.0 as "the default eps"; -0.0 is an eps of exactly 0.
    return _one("layer_norm", inputs, x.shape, F32, checks, axes=ax, f=eps if eps != 0 else -0.0)


def gelu(a: Any, approximate: str = "none", checks: bool = True) -> np.ndarray:
    """GELU: approximate "none" (erf) or "tanh"."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"mlvm.eager: approximate '{approximate}' is not 'none' or 'tanh'")
    return _unary("gelu", a, checks, flags=GELU_TANH if approximate == "tanh" else 0)


def _window_out(n: int, pads: int, span: int, stride: int) -> int:
    return builtins.max((n + pads - span) // builtins.max(stride, 1) + 1, 0)


def _window_ints(strides: Sequence[int], padding: Sequence[int]) -> dict[int, int]:
    sh, sw = strides
    pt, pl, pb, pr = padding
    return {WIN_SH: sh, WIN_SW: sw, WIN_PT: pt, WIN_PL: pl, WIN_PB: pb, WIN_PR: pr}


def conv2d(x: Any, w: Any, bias: Any = None, strides: Sequence[int] = (1, 1),
           padding: Sequence[int] = (0, 0, 0, 0), dilations: Sequence[int] = (1, 1),
           groups: int = 1, checks: bool = True) -> np.ndarray:
    """2-D convolution of x (NCHW) by w (OIHW, I = C / groups), optional bias
    (O); padding is [top, left, bottom, right]."""
    x, w = _as_input(x), _as_input(w)
    ints = _window_ints(strides, padding)
    ints.update({CONV_DH: dilations[0], CONV_DW: dilations[1], CONV_GROUPS: groups})
    if x.ndim == 4 and w.ndim == 4:
        shape: tuple[int, ...] = (
            x.shape[0], w.shape[0],
            _window_out(x.shape[2], padding[0] + padding[2],
                        dilations[0] * (w.shape[2] - 1) + 1, strides[0]),
            _window_out(x.shape[3], padding[1] + padding[3],
                        dilations[1] * (w.shape[3] - 1) + 1, strides[1]))
    else:
        shape = (0, 0, 0, 0)  # the runtime reports the ranks
    inputs = [x, w] if bias is None else [x, w, bias]
    return _one("conv2d", inputs, shape, F32, checks, ints=ints)


def pool2d(x: Any, kind: str, window: Sequence[int], strides: Sequence[int] = (1, 1),
           padding: Sequence[int] = (0, 0, 0, 0), checks: bool = True) -> np.ndarray:
    """Max or average ("max", "avg") over windows of x (NCHW); padded
    positions are left out."""
    if kind not in ("max", "avg"):
        raise ValueError(f"mlvm.eager: pool kind '{kind}' is not 'max' or 'avg'")
    x = _as_input(x)
    ints = _window_ints(strides, padding)
    ints.update({POOL_KH: window[0], POOL_KW: window[1]})
    if x.ndim == 4:
        shape: tuple[int, ...] = (
            x.shape[0], x.shape[1],
            _window_out(x.shape[2], padding[0] + padding[2], window[0], strides[0]),
            _window_out(x.shape[3], padding[1] + padding[3], window[1], strides[1]))
    else:
        shape = (0, 0, 0, 0)  # the runtime reports the rank
    return _one("pool2d", [x], shape, F32, checks, ints=ints,
                flags=POOL_AVG if kind == "avg" else 0)


__all__ = [
    "VM", "EagerError", "NONE", "default_vm", "run", "op_names", "runtime",
    "add", "sub", "mul", "div", "max", "min", "eq", "cmpl",
    "neg", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "rsqrt",
    "matmul", "reduce", "argmax", "softmax_xent", "cast", "reshape", "broadcast_to", "fill",
    "transpose", "slice", "concat", "softmax", "layer_norm", "gelu", "conv2d", "pool2d",
]
