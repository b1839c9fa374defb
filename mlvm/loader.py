"""Loading a module .so through cffi (ABI mode): numpy in, numpy out.

The loader reads everything from the module descriptor the .so exports
(`mlvm_so_module`): no side file. Arguments are checked here, at the
boundary, so the generated code can run unchecked.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cffi
import numpy as np

MODULE_MAGIC = 0x4D4C564D
ABI_VERSION = 1
ARENA_ALIGN = 64

_CDEF = """
typedef struct {
    const char *name; int32_t dtype; int32_t rank; const int64_t *dims;
} mlvm_tensor_desc_t;
typedef int (*mlvm_entry_fn)(void *arena, void *const *inputs, void *const *outputs);
typedef struct {
    const char *name; int32_t num_inputs; int32_t num_outputs;
    const mlvm_tensor_desc_t *inputs; const mlvm_tensor_desc_t *outputs;
    size_t arena_bytes; mlvm_entry_fn call;
} mlvm_export_t;
typedef struct {
    uint32_t magic; uint32_t abi_version; const char *name;
    int32_t num_exports; int32_t num_imports;
    const mlvm_export_t *exports; const char *const *imports;
    size_t arena_bytes;
} mlvm_module_t;
const mlvm_module_t *mlvm_so_module(void);
"""

_ffi = cffi.FFI()
_ffi.cdef(_CDEF)

_DTYPES = {1: np.dtype(np.float32), 2: np.dtype(np.int32)}

STATUS_NAMES = {
    0: "OK", 1: "SUSPENDED", -1: "ERR_INVALID", -2: "ERR_SHAPE", -3: "ERR_BOUNDS",
    -4: "ERR_NOMEM", -5: "ERR_IMPORT", -6: "ERR_CHECK",
}


class MlvmCallError(RuntimeError):
    """A call into generated code returned an error status."""


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    arena_bytes: int


def _specs(descs: Any, n: int) -> tuple[TensorSpec, ...]:
    out = []
    for i in range(n):
        d = descs[i]
        shape = tuple(int(d.dims[k]) for k in range(d.rank))
        out.append(TensorSpec(_ffi.string(d.name).decode(), shape, _DTYPES[d.dtype]))
    return tuple(out)


def _aligned_empty(nbytes: int) -> tuple[np.ndarray, Any]:
    """A byte buffer aligned to ARENA_ALIGN, and a cffi pointer to it."""
    raw = np.empty(max(nbytes, 1) + ARENA_ALIGN, dtype=np.uint8)
    shift = (-raw.ctypes.data) % ARENA_ALIGN
    buf = raw[shift : shift + max(nbytes, 1)]
    return buf, _ffi.cast("void *", buf.ctypes.data)


class Function:
    """One exported function: `f(*arrays)` returns an array or a tuple."""

    def __init__(self, owner: Module, export: Any) -> None:
        self._owner = owner
        self._call = export.call
        self.info = FunctionInfo(
            _ffi.string(export.name).decode(),
            _specs(export.inputs, export.num_inputs),
            _specs(export.outputs, export.num_outputs),
            int(export.arena_bytes),
        )
        self._local = threading.local()
        n_in, n_out = len(self.info.inputs), len(self.info.outputs)
        self._n_in, self._n_out = n_in, n_out

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
        return x

    def __call__(self, *args: Any) -> Any:
        if len(args) != self._n_in:
            raise ValueError(
                f"{self.info.name} takes {self._n_in} inputs, got {len(args)}"
            )
        ins = [self._check(i, x) for i, x in enumerate(args)]
        outs = [np.empty(s.shape, dtype=s.dtype) for s in self.info.outputs]
        in_ptrs = _ffi.new("void *[]", [_ffi.cast("void *", a.ctypes.data) for a in ins] or [_ffi.NULL])
        out_ptrs = _ffi.new("void *[]", [_ffi.cast("void *", a.ctypes.data) for a in outs] or [_ffi.NULL])
        status = self._call(self._arena(), in_ptrs, out_ptrs)
        if status != 0:
            raise MlvmCallError(
                f"{self.info.name}: call returned {STATUS_NAMES.get(status, status)}"
            )
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __repr__(self) -> str:
        return f"<mlvm function {self.info.name}>"


class Module:
    """A loaded module; exports are attributes (`m.main`) and items (`m['main']`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._lib = _ffi.dlopen(str(self.path))
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
        self.name = _ffi.string(desc.name).decode()
        self.arena_bytes = int(desc.arena_bytes)
        self._functions = {
            f.info.name: f
            for f in (Function(self, desc.exports[i]) for i in range(desc.num_exports))
        }

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


def load(path: str | Path) -> Module:
    return Module(path)
