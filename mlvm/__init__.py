"""mlvm: an ahead-of-time compiler from ML programs to plain C.

    import mlvm
    m = mlvm.compile("model.mlir", params="w.npz")  # builds and loads a .so (cached)
    y = m.main(x)
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from mlvm.api import compile, load
    from mlvm.diagnostics import MlvmError
    from mlvm.loader import (
        WOULD_BLOCK,
        Call,
        Context,
        FunctionInfo,
        MlvmCallError,
        Module,
        Queue,
        TensorSpec,
    )
    from mlvm.pipeline import CompileOptions

__version__ = "0.1.0"

# The public names, imported on first use: the command-line tools start
# without the loader (cffi) or the pass pipeline when they do not need them.
_HOME = {
    "compile": "mlvm.api",
    "load": "mlvm.api",
    "MlvmError": "mlvm.diagnostics",
    "WOULD_BLOCK": "mlvm.loader",
    "Call": "mlvm.loader",
    "Context": "mlvm.loader",
    "FunctionInfo": "mlvm.loader",
    "MlvmCallError": "mlvm.loader",
    "Module": "mlvm.loader",
    "Queue": "mlvm.loader",
    "TensorSpec": "mlvm.loader",
    "CompileOptions": "mlvm.pipeline",
}

__all__ = [
    "compile",
    "CompileOptions",
    "load",
    "MlvmError",
    "MlvmCallError",
    "WOULD_BLOCK",
    "Call",
    "Context",
    "Queue",
    "Module",
    "FunctionInfo",
    "TensorSpec",
    "__version__",
]


if not _typing.TYPE_CHECKING:  # type checkers see the imports above, and no catch-all

    def __getattr__(name: str) -> object:
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module 'mlvm' has no attribute {name!r}")
        value = getattr(_importlib.import_module(home), name)
        globals()[name] = value  # once: later lookups find it directly
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_HOME))
