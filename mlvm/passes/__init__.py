"""mlvm's passes, one per file; `ALL_PASSES` registers them with mlvm-opt."""

from collections.abc import Callable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


def defined_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The module's functions that have a body (what every pass rewrites),
    listed before any is changed."""
    return [f for f in module.walk() if isinstance(f, func.FuncOp) and not f.is_declaration]


def _plan_memory() -> type[ModulePass]:
    from mlvm.passes.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def _inplace() -> type[ModulePass]:
    from mlvm.passes.inplace import InplacePass

    return InplacePass


def _canonicalize() -> type[ModulePass]:
    from mlvm.passes.canonicalize import CanonicalizePass

    return CanonicalizePass


def _fuse() -> type[ModulePass]:
    from mlvm.passes.fuse import FusePass

    return FusePass


def _pack_weights() -> type[ModulePass]:
    from mlvm.passes.pack_weights import PackWeightsPass

    return PackWeightsPass


def _fuse_qdq() -> type[ModulePass]:
    from mlvm.passes.fuse_qdq import FuseQdqPass

    return FuseQdqPass


def _fuse_gelu() -> type[ModulePass]:
    from mlvm.passes.fuse_gelu import FuseGeluPass

    return FuseGeluPass


def _qmatmul_conv() -> type[ModulePass]:
    from mlvm.passes.qmatmul_conv import QMatmulConvPass

    return QMatmulConvPass


def _sink_constants() -> type[ModulePass]:
    from mlvm.passes.sink_constants import SinkConstantsPass

    return SinkConstantsPass


def _bucket_collectives() -> type[ModulePass]:
    from mlvm.passes.bucket_collectives import BucketCollectivesPass

    return BucketCollectivesPass


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "mlvm-bucket-collectives": _bucket_collectives,
    "mlvm-fuse": _fuse,
    "mlvm-fuse-qdq": _fuse_qdq,
    "mlvm-fuse-gelu": _fuse_gelu,
    "mlvm-canonicalize": _canonicalize,
    "mlvm-inplace": _inplace,
    "mlvm-pack-weights": _pack_weights,
    "mlvm-plan-memory": _plan_memory,
    "mlvm-qmatmul-conv": _qmatmul_conv,
    "mlvm-sink-constants": _sink_constants,
}
