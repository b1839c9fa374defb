"""mlvm as an `onnx.backend.base.Backend`, so the onnx package's own backend
test suite (`onnx.backend.test.BackendTest`) runs against it unchanged.

A model whose inputs have symbolic dims is compiled when it is first run,
for the shapes of the arrays given (and again for new shapes; compiled
modules are cached by `mlvm.compile`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

import mlvm
from mlvm.frontend.onnx.importer import import_onnx
from mlvm.loader import Module


def _static(vi: onnx.ValueInfoProto) -> bool:
    tt = vi.type.tensor_type
    return tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim)


class MlvmBackendRep(BackendRep):
    """A compiled model: `run(inputs)` takes the graph inputs in order (or by name)."""

    def __init__(self, model: onnx.ModelProto, input_names: Sequence[str],
                 module: Module | None) -> None:
        self.model = model
        self.input_names = list(input_names)
        self.module = module
        self._by_shapes: dict[tuple[tuple[int, ...], ...], Module] = {}

    def _module_for(self, args: Sequence[np.ndarray]) -> Module:
        if self.module is not None:
            return self.module
        key = tuple(a.shape for a in args)
        m = self._by_shapes.get(key)
        if m is None:
            shapes = dict(zip(self.input_names, key, strict=True))
            module, params = import_onnx(self.model, shapes)
            m = self._by_shapes[key] = mlvm.compile(module, params)
        return m

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, Mapping):
            raw = [inputs[n] for n in self.input_names]
        elif isinstance(inputs, np.ndarray) and len(self.input_names) == 1:
            raw = [inputs]
        else:
            raw = list(inputs)
        args = [np.asarray(a, order="C") for a in raw]  # keeps 0-d arrays 0-d
        module = self._module_for(args)
        specs = module.functions["main"].inputs
        if len(args) == len(specs):
            # Like onnxruntime, take an input whose element count matches the
            # declared shape (the suite feeds (1,) for some scalars).
            args = [a.reshape(s.shape) if a.shape != s.shape and a.size == math.prod(s.shape)
                    else a for a, s in zip(args, specs, strict=True)]
        out = module.main(*args)
        return tuple(out) if isinstance(out, tuple) else (out,)


class MlvmBackend(Backend):
    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> MlvmBackendRep:
        super().prepare(model, device, **kwargs)
        inits = {t.name for t in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in inits]
        names = [i.name for i in inputs]
        shapes = kwargs.get("input_shapes")
        compiled = None
        if shapes is not None or all(_static(i) for i in inputs) or not all(
                i.type.HasField("tensor_type") for i in inputs):
            module, params = import_onnx(model, shapes)  # the error, for a non-tensor input
            compiled = mlvm.compile(module, params)
        return MlvmBackendRep(model, names, compiled)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU


prepare = MlvmBackend.prepare
run_model = MlvmBackend.run_model
supports_device = MlvmBackend.supports_device
