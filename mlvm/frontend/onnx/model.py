"""Reading an untrusted `.onnx` file: protobuf, external data, sizes.

A model file may be hostile. Nothing here follows a path out of the model's
folder, reads past a file's end, or allocates more than the size limit; every
failure is one `MlvmError` line naming the file.
"""

from __future__ import annotations

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper

from mlvm.diagnostics import MlvmError

# ONNX element types an initializer may hold, as numpy dtypes (little-endian).
NP_OF_ONNX: dict[int, np.dtype] = {
    onnx.TensorProto.FLOAT: np.dtype("<f4"),
    onnx.TensorProto.DOUBLE: np.dtype("<f8"),
    onnx.TensorProto.FLOAT16: np.dtype("<f2"),
    onnx.TensorProto.INT8: np.dtype("i1"),
    onnx.TensorProto.UINT8: np.dtype("u1"),
    onnx.TensorProto.INT16: np.dtype("<i2"),
    onnx.TensorProto.UINT16: np.dtype("<u2"),
    onnx.TensorProto.INT32: np.dtype("<i4"),
    onnx.TensorProto.UINT32: np.dtype("<u4"),
    onnx.TensorProto.INT64: np.dtype("<i8"),
    onnx.TensorProto.UINT64: np.dtype("<u8"),
    onnx.TensorProto.BOOL: np.dtype("?"),
    onnx.TensorProto.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
}


def onnx_type_name(elem_type: int) -> str:
    try:
        return str(onnx.TensorProto.DataType.Name(elem_type)).lower()
    except ValueError:
        return f"type {elem_type}"


def load_model(path: Path, max_bytes: int) -> onnx.ModelProto:
    """The ModelProto of `path`, external data not yet read (see `tensor_array`)."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise MlvmError(f"{path}: error: {e.strerror or e}") from None
    if size > max_bytes:
        raise MlvmError(f"{path}: error: {size} bytes is more than the limit of {max_bytes}")
    try:
        model = onnx.load_model(str(path), load_external_data=False)
    except (DecodeError, ValueError, RuntimeError, OSError) as e:
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise MlvmError(f"{path}: error: not a readable ONNX model ({why})") from None
    if not model.HasField("graph"):
        raise MlvmError(f"{path}: error: not an ONNX model (no graph)")
    bad = _not_text(model.graph, 0)
    if bad is not None:
        raise MlvmError(f"{path}: error: a name in the model is not UTF-8 text ({bad!r:.60})")
    return model


def _not_text(g: onnx.GraphProto, depth: int) -> bytes | None:
    """A name of the graph (or of a graph in its nodes' attributes) that the
    protobuf parser left as bytes, because it is not UTF-8; None if all are text."""
    if depth > 32:
        return None  # the importer refuses graphs nested this deep
    names = [*(v.name for v in (*g.input, *g.output, *g.value_info)), *(t.name for t in g.initializer)]
    for n in g.node:
        names += [*n.input, *n.output, n.name, n.op_type, n.domain]
        for a in n.attribute:
            for sub in (*([a.g] if a.HasField("g") else []), *a.graphs):
                bad = _not_text(sub, depth + 1)
                if bad is not None:
                    return bad
    return next((s for s in names if isinstance(s, bytes)), None)


def tensor_array(t: onnx.TensorProto, model_path: Path, max_bytes: int) -> np.ndarray:
    """The array of an initializer or constant, bit-exact, sizes checked first."""
    what = f"{model_path}: error: tensor '{t.name}'"
    dtype = NP_OF_ONNX.get(t.data_type)
    if dtype is None:
        raise MlvmError(f"{what} has unsupported element type {onnx_type_name(t.data_type)}")
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise MlvmError(f"{what} has a negative dim {dims}")
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes > max_bytes:
        raise MlvmError(f"{what} needs {nbytes} bytes, more than the limit of {max_bytes}")
    if t.data_location == onnx.TensorProto.EXTERNAL:
        raw = _external_bytes(t, model_path, nbytes)
        return np.frombuffer(raw, dtype=dtype).reshape(dims).copy()
    try:
        arr = numpy_helper.to_array(t)
    except (ValueError, TypeError) as e:
        raise MlvmError(f"{what} cannot be read ({str(e).strip().splitlines()[0]})") from None
    if arr.size != math.prod(dims):
        raise MlvmError(f"{what} holds {arr.size} values for dims {dims}")
    return arr.astype(dtype, copy=False).reshape(dims)


def _external_bytes(t: onnx.TensorProto, model_path: Path, nbytes: int) -> bytes:
    info = {e.key: e.value for e in t.external_data}
    what = f"{model_path}: error: tensor '{t.name}'"
    loc = info.get("location", "")
    rel = Path(loc)
    if not loc or rel.is_absolute() or ".." in rel.parts:
        raise MlvmError(f"{what}: external data location '{loc}' must be a relative path "
                        "inside the model's folder")
    base = model_path.resolve().parent
    file = (base / rel).resolve()
    if base not in file.parents or not file.is_file():
        raise MlvmError(f"{what}: external data file '{loc}' not found in the model's folder")
    try:
        offset = int(info.get("offset", "0"))
        length = int(info.get("length", str(nbytes)))
    except ValueError:
        raise MlvmError(f"{what}: external data offset/length are not integers") from None
    size = file.stat().st_size
    if offset < 0 or length != nbytes or offset + length > size:
        raise MlvmError(
            f"{what}: external data [{offset}, {offset + length}) does not hold the "
            f"{nbytes} bytes of the tensor within '{loc}' ({size} bytes)"
        )
    with file.open("rb") as fh:
        fh.seek(offset)
        return fh.read(length)
