"""mlvm: an ahead-of-time compiler from ML programs to plain C.

    import mlvm
    m = mlvm.compile("model.mlir", params="w.npz")  # builds and loads a .so (cached)
    y = m.main(x)
"""

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
