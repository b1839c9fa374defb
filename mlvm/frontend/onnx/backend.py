"""mlvm as an `onnx.backend.base.Backend`, so the onnx package's own backend
test suite (`onnx.backend.test.BackendTest`) runs against it unchanged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

import mlvm
from mlvm.frontend.onnx.importer import import_onnx
from mlvm.loader import Module


class MlvmBackendRep(BackendRep):
    """A compiled model: `run(inputs)` takes the graph inputs in order (or by name)."""

    def __init__(self, module: Module, input_names: Sequence[str]) -> None:
        self.module = module
        self.input_names = list(input_names)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, Mapping):
            args = [inputs[n] for n in self.input_names]
        elif isinstance(inputs, np.ndarray) and len(self.input_names) == 1:
            args = [inputs]
        else:
            args = list(inputs)
        out = self.module.main(*(np.ascontiguousarray(a) for a in args))
        return tuple(out) if isinstance(out, tuple) else (out,)


class MlvmBackend(Backend):
    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> MlvmBackendRep:
        super().prepare(model, device, **kwargs)
        module, params = import_onnx(model, kwargs.get("input_shapes"))
        inits = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in inits]
        return MlvmBackendRep(mlvm.compile(module, params), names)

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
