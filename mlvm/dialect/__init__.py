"""The `mlvm` dialect: one Dialect object, `Mlvm`."""

from xdsl.ir import Dialect

from mlvm.dialect.base import MlvmOp
from mlvm.dialect.control import CONTROL_OPS
from mlvm.dialect.fused import FusedOp, FusedYieldOp
from mlvm.dialect.index import INDEX_OPS
from mlvm.dialect.logic import LOGIC_OPS
from mlvm.dialect.quant import QUANT_OPS
from mlvm.dialect.ops import MLVM_OPS
from mlvm.dialect.nn import NN_OPS
from mlvm.dialect.collective import COLLECTIVE_OPS
from mlvm.dialect.state import STATE_OPS

Mlvm = Dialect("mlvm", [*MLVM_OPS, *LOGIC_OPS, *INDEX_OPS, *QUANT_OPS, *CONTROL_OPS, FusedOp, FusedYieldOp, *NN_OPS, *STATE_OPS, *COLLECTIVE_OPS], [])

__all__ = ["Mlvm", "MlvmOp", "MLVM_OPS"]
