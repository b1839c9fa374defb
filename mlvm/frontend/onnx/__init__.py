"""ONNX in: `import_onnx(path)` gives an mlvm module and its parameters."""

from mlvm.frontend.onnx.importer import import_onnx

__all__ = ["import_onnx"]
