"""Many imported ONNX models as one mlvm module, so a test module builds once."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

from mlvm.dialect.ops import ParamOp


class Merged:
    """Functions `c0`, `c1`, ... (one per added model) and their parameters,
    renamed `c<k>/<name>` so that models cannot clash."""

    def __init__(self) -> None:
        self.module = ModuleOp([])
        self.params: dict[str, np.ndarray] = {}

    def add(self, imported: ModuleOp, params: dict[str, np.ndarray]) -> str:
        k = len(self.module.body.block.ops)
        f = imported.body.block.first_op
        assert isinstance(f, FuncOp)
        f.sym_name = StringAttr(f"c{k}")
        for op in f.walk():
            if isinstance(op, ParamOp):
                op.properties["name"] = StringAttr(f"c{k}/{op.param_name.data}")
        self.params.update({f"c{k}/{n}": a for n, a in params.items()})
        f.detach()
        self.module.body.block.add_op(f)
        return f"c{k}"
