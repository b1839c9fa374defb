"""mlvm's passes, one per file; `ALL_PASSES` registers them with mlvm-opt."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def _plan_memory() -> type[ModulePass]:
    from mlvm.passes.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def _inplace() -> type[ModulePass]:
    from mlvm.passes.inplace import InplacePass

    return InplacePass


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "mlvm-inplace": _inplace,
    "mlvm-plan-memory": _plan_memory,
}
