"""Scheduling for `pytest -n 2 --dist loadgroup` (the README's `make test`).

A module whose tests share one build per process (a `Suite` of op cases
compiled into one module, a module-scoped fixture that compiles or imports
something) would otherwise be built once by each worker that runs any of
its tests: its tests are grouped so that one worker builds it and the other
goes on with different tests.
"""

from __future__ import annotations

import pytest

from harness import Suite


def _shares_a_build(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    if module is not None and any(isinstance(v, Suite) for v in vars(module).values()):
        return True
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope in ("module", "session")
               for defs in info.name2fixturedefs.values() for d in defs
               if d.func.__module__ == getattr(module, "__name__", None))


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _shares_a_build(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
