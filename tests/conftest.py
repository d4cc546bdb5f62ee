"""Tests with a target of their own run only when their marker is asked for
(``-m cluster``, ``-m chaos``, ``-m dist``), never in ``make test``, ``make test-fast`` or
the matrix, whatever else their ``-m`` selects:

- ``cluster`` starts redis-server, three uvicorn replicas and nginx
  (``make test-cluster``);
- ``chaos`` starts the same and breaks it, fault after fault, under load
  (``make chaos``);
- ``dist`` builds what is shipped and uses it as a user would: the wheel in
  a fresh venv, the docs site in Chromium (``make test-dist``).

``.ci/run`` runs the three targets after the gate.

Hypothesis runs without its wall-clock checks (the deadline and the
too-slow health check): on a shared 2-core machine they measure the load,
not the code, and fail at random; speed is measured by ``make bench``, as
ratios in one run."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

OWN_TARGET = ("cluster", "chaos", "dist")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    asked = config.getoption("markexpr") or ""
    held = [marker for marker in OWN_TARGET if marker not in asked]
    kept = [item for item in items if not any(item.get_closest_marker(m) for m in held)]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
