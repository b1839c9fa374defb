"""The Python entry points: `mlvm.compile` and `mlvm.load`."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from mlvm.codegen.names import c_ident
from mlvm.codegen.cc import (
    build_lock, build_shared, cache_dir, cflags, compiler, fingerprint, module_cflags,
)
from mlvm.diagnostics import read_source_bytes, verify_module
from mlvm.loader import Module
from mlvm.pipeline import (
    CompileOptions,
    InputShapes,
    check_params,
    load_params,
    load_source,
    lower,
    merge_params,
    write_with_blob,
)

_PKG = Path(__file__).resolve().parent


@cache
def _compiler_fingerprint() -> str:
    files = sorted(p for p in _PKG.rglob("*") if p.suffix in (".py", ".j2", ".c", ".h"))
    return fingerprint(*(f.read_bytes() for f in files))


def _params_digest(params: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for k in sorted(params):
        a = np.ascontiguousarray(params[k])
        h.update(k.encode() + b"\0" + str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def compile(
    source: str | Path | ModuleOp,
    params: str | Path | dict[str, np.ndarray] | None = None,
    *,
    options: CompileOptions | None = None,
    imports: Mapping[str, Callable[..., Any]] | None = None,
    queue_capacity: int = 16,
    input_shapes: InputShapes | None = None,
) -> Module:
    """Compile a model (.mlir or .onnx path, or xDSL ModuleOp) to a cached .so and load it.

    `options` turns passes on and off (`CompileOptions(fuse=False)`, ...);
    `imports` and `queue_capacity` are passed to `load`; `input_shapes`
    fixes the unknown dims of an ONNX model's inputs (`{"x": (1, 3, 224, 224)}`).
    """
    options = options or CompileOptions()
    module: ModuleOp | None = None
    if isinstance(source, ModuleOp):
        module = source.clone()
        name = "<module>"
        verify_module(module, name, options.max_bytes)
        text: str | bytes = str(module)
    else:
        # The cache is looked up before the source is parsed: the key covers
        # the file's bytes (an ONNX model's own weights included).
        name = str(source)
        text = read_source_bytes(source)
    given = check_params(params) if isinstance(params, dict) else load_params(params, options.max_bytes)
    key = fingerprint(
        text, _params_digest(given), _compiler_fingerprint(), compiler(), *cflags(), "|", *module_cflags(),
        repr(options), repr(sorted((input_shapes or {}).items())),
    )
    so = cache_dir() / "modules" / f"{key}.so"
    if not so.exists():
        with build_lock(so):
            if not so.exists():
                _build(source, so, options, given, input_shapes, module, name)
    return Module(so, imports, queue_capacity, max_bytes=options.max_bytes, origin=name)


def _build(
    source: str | Path | ModuleOp, so: Path, options: CompileOptions, given: dict[str, np.ndarray],
    input_shapes: InputShapes | None, module: ModuleOp | None, name: str,
) -> None:
    own: dict[str, np.ndarray] = {}
    if not isinstance(source, ModuleOp):
        module, name, own = load_source(source, options, input_shapes)
    assert module is not None
    param_arrays = merge_params(own, given, name)
    so.parent.mkdir(parents=True, exist_ok=True)
    # Sources go to a private directory so concurrent builds never share files.
    with tempfile.TemporaryDirectory(dir=so.parent) as tmp:
        stem = "module" if isinstance(source, ModuleOp) else c_ident(Path(source).stem, "m")
        c_path = Path(tmp) / f"{stem}.c"
        lower(module, options, name)
        # the header stays in this directory: no stack bound to state
        asm = write_with_blob(module, c_path, param_arrays, name, options, stack=False)
        build_shared(c_path, so, asm=asm, comm=options.comm)


def load(
    path: str | Path,
    imports: Mapping[str, Callable[..., Any]] | None = None,
    queue_capacity: int = 16,
    *,
    max_bytes: int = 1 << 40,
    params: str | Path | None = None,
) -> Module:
    """Load a .so built by `mlvm-aot build` (or `mlvm.compile`), binding its
    native imports to Python callables and giving each queue a capacity;
    descriptors declaring buffers over `max_bytes` are refused. `params` is
    the parameter file (.mlvmp) of a module built with `--external-params`:
    mapped read-only and checked whole (size, version, checksum, each
    weight's dtype and shape) before any call."""
    return Module(path, imports, queue_capacity, max_bytes=max_bytes, params=params)
