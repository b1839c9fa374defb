"""The element types: one table that the verifier, the numpy references, the
C emitter, the runtime's dtype codes and the loader all read.

Signless integers are signed two's complement; `ui*` are unsigned. `i1` is
bool, one byte holding 0 or 1. f16 and bf16 are storage types: C code
loads them into a float, computes in f32 and rounds to nearest even on
store. The codes are `mlvm_dtype_t` in mlvm/module.h (tested to agree).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute


@dataclass(frozen=True)
class Elem:
    name: str            # the element type as MLIR prints it: "f32", "ui8"
    code: int            # mlvm_dtype_t
    dtype: np.dtype      # the numpy dtype of stored values
    ctype: str           # the C type of stored values
    kind: str            # "f" float, "i" signed, "u" unsigned, "b" bool
    compute: str         # the C type values are computed in
    load: str = "{0}"    # stored value -> compute value (a C expression)
    store: str = "{0}"   # compute value -> stored value

    @property
    def enum(self) -> str:
        return f"MLVM_{self.name.upper()}"

    @property
    def bits(self) -> int:
        return 1 if self.kind == "b" else 8 * self.dtype.itemsize

    @property
    def size(self) -> int:
        return self.dtype.itemsize

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def stored_as_bits(self) -> bool:
        """f16 / bf16: the C type holds the bits, values are computed in f32."""
        return self.compute != self.ctype

    def round(self, expr: str) -> str:
        """A compute-type value rounded to this type (f16, bf16), as C."""
        return self.load.format(self.store.format(expr)) if self.stored_as_bits else expr

    @property
    def np_compute(self) -> np.dtype:
        """The numpy dtype references compute in (f32 for f16 and bf16)."""
        return np.dtype(np.float32) if self.stored_as_bits else self.dtype

    @property
    def wide_unsigned(self) -> str:
        """The unsigned C type integer arithmetic wraps in (no signed overflow,
        no promotion to int)."""
        return "uint64_t" if self.bits == 64 else "uint32_t"

    @property
    def min(self) -> int:
        return int(np.iinfo(self.dtype).min) if self.is_int else 0

    @property
    def max(self) -> int:
        return int(np.iinfo(self.dtype).max) if self.is_int else 1


def _e(name: str, code: int, dtype: Any, ctype: str, kind: str, **kw: str) -> Elem:
    return Elem(name, code, np.dtype(dtype), ctype, kind, kw.pop("compute", ctype), **kw)


ELEMS: dict[str, Elem] = {
    e.name: e
    for e in (
        _e("f32", 1, np.float32, "float", "f"),
        _e("i32", 2, np.int32, "int32_t", "i"),
        _e("i1", 3, np.bool_, "uint8_t", "b"),
        _e("i8", 4, np.int8, "int8_t", "i"),
        _e("i16", 5, np.int16, "int16_t", "i"),
        _e("i64", 6, np.int64, "int64_t", "i"),
        _e("ui8", 7, np.uint8, "uint8_t", "u"),
        _e("ui16", 8, np.uint16, "uint16_t", "u"),
        _e("ui32", 9, np.uint32, "uint32_t", "u"),
        _e("ui64", 10, np.uint64, "uint64_t", "u"),
        _e("f16", 11, np.float16, "uint16_t", "f", compute="float",
           load="mlvm_f16_to_f32({0})", store="mlvm_f32_to_f16({0})"),
        _e("bf16", 12, ml_dtypes.bfloat16, "uint16_t", "f", compute="float",
           load="mlvm_bf16_to_f32({0})", store="mlvm_f32_to_bf16({0})"),
        _e("f64", 13, np.float64, "double", "f"),
    )
}
BY_CODE: dict[int, Elem] = {e.code: e for e in ELEMS.values()}

# Groups ops declare what they accept.
FLOATS = ("f16", "bf16", "f32", "f64")
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("ui8", "ui16", "ui32", "ui64")
INTS = SIGNED + UNSIGNED
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("i1",)


def elem_of_type(t: Attribute) -> Elem | None:
    """The table entry of an xDSL element type, None for types mlvm lacks."""
    if isinstance(t, Float32Type):
        return ELEMS["f32"]
    if isinstance(t, Float16Type):
        return ELEMS["f16"]
    if isinstance(t, BFloat16Type):
        return ELEMS["bf16"]
    if isinstance(t, Float64Type):
        return ELEMS["f64"]
    if isinstance(t, IntegerType):
        width = t.width.data
        sign = t.signedness.data
        if width == 1 and sign == Signedness.SIGNLESS:
            return ELEMS["i1"]
        if width in (8, 16, 32, 64):
            if sign == Signedness.SIGNLESS:
                return ELEMS[f"i{width}"]
            if sign == Signedness.UNSIGNED:
                return ELEMS[f"ui{width}"]
    return None


def xdsl_type(name: str) -> Attribute:
    """The xDSL element type of a table entry."""
    e = ELEMS[name]
    if e.kind == "f":
        return {"f16": Float16Type(), "bf16": BFloat16Type(), "f32": Float32Type(),
                "f64": Float64Type()}[name]
    if e.kind == "u":
        return IntegerType(e.bits, Signedness.UNSIGNED)
    return IntegerType(e.bits)


def elem_for_dtype(dtype: np.dtype) -> Elem | None:
    """The table entry that stores numpy arrays of `dtype`, if any."""
    for e in ELEMS.values():
        if e.dtype == dtype:
            return e
    return None


def from_bytes(e: Elem, raw: bytes) -> np.ndarray:
    """Stored little-endian bytes as a flat array (i1: any non-zero byte is true)."""
    if e.kind == "b":
        return np.frombuffer(raw, dtype=np.uint8) != 0
    return np.frombuffer(raw, dtype=e.dtype.newbyteorder("<")).astype(e.dtype)


def to_bytes(e: Elem, arr: np.ndarray) -> bytes:
    """An array's elements as stored: little-endian, i1 as 0 / 1 bytes."""
    a = np.ascontiguousarray(arr, dtype=e.dtype)
    if e.kind == "b":
        return a.view(np.uint8).tobytes()
    return a.astype(e.dtype.newbyteorder("<"), copy=False).tobytes()
