"""The cluster tests start redis-server, three uvicorn replicas and nginx:
they run only when asked for by marker (``make test-cluster``, which is
``pytest -m cluster tests/cluster``), never in ``make test``, ``make
test-fast`` or the matrix, whatever else their ``-m`` selects."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "cluster" in (config.getoption("markexpr") or ""):
        return
    kept = [item for item in items if item.get_closest_marker("cluster") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
