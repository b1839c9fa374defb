"""mlvm's passes, one per file; `ALL_PASSES` registers them with mlvm-opt."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def _plan_memory() -> type[ModulePass]:
    from mlvm.passes.plan_memory import PlanMemoryPass

    return PlanMemoryPass


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "mlvm-plan-memory": _plan_memory,
}
