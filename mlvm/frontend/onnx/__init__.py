"""ONNX in: `import_onnx(path)` gives an mlvm module and its parameters."""

# The op handlers first (ops imports the composites and pooling, which
# import ops' own helpers): entered through pooling, the other order would
# find ops half-initialised.
import mlvm.frontend.onnx.ops  # noqa: F401
from mlvm.frontend.onnx.importer import import_onnx

__all__ = ["import_onnx"]
