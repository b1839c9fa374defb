"""mlvm as an `onnx.backend.base.Backend`, so the onnx package's own backend
test suite (`onnx.backend.test.BackendTest`) runs against it unchanged.

A model whose inputs have symbolic dims is compiled when it is first run,
for the shapes of the arrays given (and again for new shapes; compiled
modules are cached by `mlvm.compile`). So is a model that uses the values
of some graph inputs as shapes, axes, scales or exponents, which an
ahead-of-time compiler needs at compile time: those inputs become
constants of the module compiled for the values given (and again for new
values).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

import mlvm
from mlvm.frontend.onnx.importer import UnsupportedModel, import_onnx
from mlvm.loader import Module


def _static(vi: onnx.ValueInfoProto) -> bool:
    tt = vi.type.tensor_type
    return tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim)


def _baked(model: onnx.ModelProto, values: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """The model with these graph inputs made initializers of these values."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = [i for i in m.graph.input if i.name not in values]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    m.graph.initializer.extend(onnx.numpy_helper.from_array(np.asarray(a), n)
                               for n, a in values.items())
    return m


def import_specialized(model: onnx.ModelProto, given: Mapping[str, np.ndarray],
                       bake: Iterable[str] = ()) -> tuple[Any, dict[str, np.ndarray], set[str]]:
    """(module, params, baked inputs): the model imported for the shapes of
    `given` (graph input -> array), with the inputs in `bake`, and any more
    the import needs the values of, made constants of their values."""
    baked = set(bake)
    while True:
        values = {n: given[n] for n in given if n in baked}
        shapes = {n: a.shape for n, a in given.items() if n not in baked}
        try:
            module, params = import_onnx(_baked(model, values), shapes)
            return module, params, baked
        except UnsupportedModel as e:
            new = e.runtime_inputs - baked
            if not new:
                raise
            baked |= new


class MlvmBackendRep(BackendRep):
    """A compiled model: `run(inputs)` takes the graph inputs in order (or by name)."""

    def __init__(self, model: onnx.ModelProto, input_names: Sequence[str],
                 module: Module | None, bake: frozenset[str] = frozenset()) -> None:
        self.model = model
        self.input_names = list(input_names)
        self.module = module
        self.bake = set(bake)  # inputs compiled in as constants of their values
        self._compiled: dict[tuple[object, ...], Module] = {}

    def _module_for(self, args: Sequence[np.ndarray]) -> tuple[Module, list[np.ndarray]]:
        """The module for these arguments, and the arguments it takes."""
        if self.module is not None:
            return self.module, list(args)
        given = dict(zip(self.input_names, args, strict=True))

        def key() -> tuple[object, ...]:  # the shapes, and the values compiled in
            return (tuple(a.shape for a in args),
                    tuple((n, given[n].dtype.str, given[n].tobytes()) for n in self.input_names
                          if n in self.bake))

        m = self._compiled.get(key())
        if m is None:
            module, params, self.bake = import_specialized(self.model, given, self.bake)
            m = self._compiled[key()] = mlvm.compile(module, params)
        return m, [given[n] for n in self.input_names if n not in self.bake]

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, Mapping):
            raw = [inputs[n] for n in self.input_names]
        elif isinstance(inputs, np.ndarray) and len(self.input_names) == 1:
            raw = [inputs]
        else:
            raw = list(inputs)
        args = [np.asarray(a, order="C") for a in raw]  # keeps 0-d arrays 0-d
        module, args = self._module_for(args)
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
        bake: frozenset[str] = frozenset()
        if shapes is not None or all(_static(i) for i in inputs) or not all(
                i.type.HasField("tensor_type") for i in inputs):
            try:
                module, params = import_onnx(model, shapes)  # the error, for a non-tensor input
                compiled = mlvm.compile(module, params)
            except UnsupportedModel as e:
                if not e.runtime_inputs:
                    raise
                bake = e.runtime_inputs  # compiled when run, with their values
        return MlvmBackendRep(model, names, compiled, bake)

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
