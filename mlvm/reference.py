"""A numpy interpreter of mlvm functions, built from each op's `reference`.

It is the oracle tests compare generated C against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from mlvm.dialect.base import MlvmOp


def _find(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise KeyError(f"no function @{name}")


def run(
    module: ModuleOp,
    name: str,
    inputs: Sequence[np.ndarray],
    params: Mapping[str, np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Results of function @name on `inputs`, computed by the op references."""
    f = _find(module, name)
    env: dict[SSAValue, np.ndarray] = dict(zip(f.body.block.args, inputs, strict=True))
    for op in f.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return [env[v] for v in op.operands]
        if not isinstance(op, MlvmOp):
            raise NotImplementedError(op.name)
        outs = op.reference([env[v] for v in op.operands], params or {})
        env.update(zip(op.results, outs, strict=True))
    raise AssertionError("function without return")


def run_file(
    path: str | Path,
    name: str,
    inputs: Sequence[np.ndarray],
    params: Mapping[str, np.ndarray] | None = None,
) -> list[np.ndarray]:
    from mlvm.pipeline import parse_file

    module, _ = parse_file(path)
    return run(module, name, inputs, params)
