"""The external parameter file (.mlvmp): a module's weights apart from its code.

The byte layout is in `mlvm/params.h` (and docs/c_abi.md); the C runtime
checks a file where an instance binds it. Written in chunks with the
checksum filled in at the end, so a 100 MB file costs about one pass over
the weights.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mlvm.dialect.elements import ELEMS
from mlvm.dialect.ops import A_PANEL

MAGIC = b"MLVMPRMS"
VERSION = 1
HEADER_BYTES = 64
ENTRY_BYTES = 104
ALIGN = 64
MAX_RANK = 8
# mlvm_dtype_t of every element type (the one table of them: elements.py)
DTYPE_CODES = {np.dtype(e.dtype): e.code for e in ELEMS.values()}


def param_key(name: str, perm: Sequence[int] | None, panel: Sequence[int] | None = None,
              lanes: Sequence[int] | None = None, wino: Sequence[int] | None = None,
              wino_panels: bool = False, view: Sequence[int] | None = None) -> str:
    """A weight's name in the file: the archive's name, plus the view of
    its array, the permutation and the panels, lanes or Winograd transform
    the compiler stored it in (see mlvm-pack-weights; `@apanel=24` where the
    transform's planes are in their GEMM's panels)."""
    name = name if view is None else f"{name}@view={','.join(str(v) for v in view)}"
    key = name if perm is None else f"{name}@perm={','.join(str(p) for p in perm)}"
    key = key if panel is None else f"{key}@panel={','.join(str(p) for p in panel)}"
    key = key if lanes is None else f"{key}@lanes={','.join(str(p) for p in lanes)}"
    key = key if wino is None else f"{key}@wino{wino[0]}={','.join(str(p) for p in wino[1:])}"
    return f"{key}@apanel={A_PANEL}" if wino_panels else key


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def write_params_file(path: str | Path, entries: Sequence[tuple[str, np.ndarray]]) -> int:
    """Writes `entries` (key, array) as a parameter file; its size in bytes."""
    names = [k.encode() for k, _ in entries]
    table_end = HEADER_BYTES + ENTRY_BYTES * len(entries)
    name_offsets = []
    pos = table_end
    for n in names:
        name_offsets.append(pos)
        pos += len(n)
    data_offset = _align(pos)
    offsets = []
    pos = data_offset
    arrays = []
    for _, arr in entries:
        # (not ascontiguousarray: it makes a scalar one-dimensional)
        a = np.asarray(arr, dtype=arr.dtype.newbyteorder("<"), order="C")
        if a.dtype not in DTYPE_CODES or a.ndim > MAX_RANK:
            raise ValueError(f"cannot store a {a.dtype} array of rank {a.ndim}")
        arrays.append(a)
        offsets.append(pos)
        pos = _align(pos + a.nbytes)
    total = pos if entries else data_offset
    table = bytearray()
    for (key, _), a, noff, off in zip(entries, arrays, name_offsets, offsets, strict=True):
        dims = list(a.shape) + [0] * (MAX_RANK - a.ndim)
        table += struct.pack("<QIIII8qQQ", noff, len(key.encode()), DTYPE_CODES[a.dtype],
                             a.ndim, 0, *dims, off, a.nbytes)
    body = bytes(table) + b"".join(names)
    p = Path(path)
    crc = 0
    with p.open("wb") as f:
        f.write(bytes(HEADER_BYTES))
        pos = HEADER_BYTES
        for chunk in (body, bytes(data_offset - table_end - len(b"".join(names)))):
            f.write(chunk)
            crc = zlib.crc32(chunk, crc)
            pos += len(chunk)
        for a, off in zip(arrays, offsets, strict=True):
            pad = bytes(off - pos)
            f.write(pad)
            crc = zlib.crc32(pad, crc)
            data = a.reshape(-1).view(np.uint8).data if a.size else memoryview(b"")
            f.write(data)
            crc = zlib.crc32(data, crc)
            pos = off + a.nbytes
        tail = bytes(total - pos)
        f.write(tail)
        crc = zlib.crc32(tail, crc)
        f.seek(0)
        f.write(struct.pack("<8sIIQQQI", MAGIC, VERSION, len(entries), HEADER_BYTES,
                            data_offset, total, crc))
    return total
