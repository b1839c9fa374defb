"""The onnx package's backend suite as a regression guard.

- Every node case listed in passing_node_cases.txt (written by `make
  conformance`) must still pass: all are imported into one module, built
  once, and checked against the suite's expected outputs at its tolerances.
- Every real model of the suite (light form) passes through the
  `onnx.backend.base.Backend`, run by the suite's own runner.
"""

from __future__ import annotations

import unittest
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.backend.test
import pytest
from onnx import numpy_helper
from onnx.backend.test.loader import load_model_tests
import mlvm
from mlvm.frontend.onnx import backend, import_onnx

from harness import LARGE_MODULE_CFLAGS, module_cflags

from .merge import Merged

PASSING = [
    n.removesuffix("_cpu")
    for n in Path(__file__).with_name("passing_node_cases.txt").read_text().split()
]
REAL = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
        "shufflenet", "squeezenet", "vgg19", "zfnet512"]


def _array(t: Any) -> np.ndarray:
    return numpy_helper.to_array(t) if isinstance(t, onnx.TensorProto) else np.asarray(t)


def _node_cases() -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {t.name: t for t in load_model_tests(kind="node")}


@pytest.fixture(scope="module")
def suite() -> tuple[mlvm.Module, dict[str, Any]]:
    cases = _node_cases()
    merged = Merged()
    for name in PASSING:
        case = cases[name]
        inputs, _ = case.data_sets[0]
        model = case.model
        inits = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in inits]
        given = {n: np.asarray(_array(a)) for n, a in zip(names, inputs, strict=False)}
        # inputs used as shapes / axes / scales are constants, as the
        # backend makes them (for these values)
        module, params, baked = backend.import_specialized(model, given)
        merged.add(module, params)
        BAKED[name] = [names.index(n) for n in baked]
    with module_cflags(LARGE_MODULE_CFLAGS):
        return mlvm.compile(merged.module, merged.params), cases


BAKED: dict[str, list[int]] = {}  # case -> positions of the inputs compiled in


def test_passing_list_is_not_empty() -> None:
    assert len(PASSING) >= 250


@pytest.mark.parametrize("k", range(len(PASSING)), ids=PASSING)
def test_node_case_still_passes(suite: tuple[mlvm.Module, dict[str, Any]], k: int) -> None:
    m, cases = suite
    case = cases[PASSING[k]]
    fn = m[f"c{k}"]
    first = [np.asarray(_array(a)) for a in case.data_sets[0][0]]
    for inputs, outputs in case.data_sets:
        args = [np.asarray(_array(a), order="C") for a in inputs]
        for j in BAKED[PASSING[k]]:  # compiled in: the same values in every data set
            assert np.array_equal(args[j], first[j])
        args = [a for j, a in enumerate(args) if j not in BAKED[PASSING[k]]]
        specs = fn.info.inputs
        args = [a.reshape(s.shape) if a.shape != s.shape and a.size == int(np.prod(s.shape))
                else a for a, s in zip(args, specs, strict=True)]
        got = fn(*args)
        got = list(got) if isinstance(got, tuple) else [got]
        for g, w in zip(got, outputs, strict=True):
            want = _array(w)
            assert g.dtype == want.dtype
            rtol = case.rtol
            if want.dtype.name == "bfloat16":  # as the suite's runner: two bf16 ulps
                rtol, g, want = max(rtol, 2**-6), g.astype(np.float32), want.astype(np.float32)
            np.testing.assert_allclose(g, want.reshape(g.shape) if want.size == g.size else want,
                                       rtol=rtol, atol=case.atol)


@pytest.fixture(scope="module")
def real_suite() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bt = onnx.backend.test.BackendTest(backend, __name__)
    return bt.test_cases["OnnxBackendRealModelTest"]


@pytest.mark.parametrize("model", REAL)
def test_real_model_passes_the_suite(real_suite: Any, model: str) -> None:
    result = unittest.TestResult()
    real_suite(f"test_{model}_cpu").run(result)
    problems = result.errors + result.failures
    assert not problems and not result.skipped, (problems or result.skipped)[0][1]


def test_inputs_used_as_axes_are_compiled_in_per_value() -> None:
    """An input the import needs the value of (here ReduceSum's axes) is a
    constant of the module the backend compiles when run, for that value;
    another value compiles another module."""
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)], "r",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, None])])
    rep = backend.prepare(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    for axis in (1, 2, 1):
        (y,) = rep.run([x, np.array([axis], np.int64)])
        np.testing.assert_allclose(y, x.sum(axis), rtol=1e-6)
    assert rep.bake == {"axes"} and len(rep._compiled) == 2
