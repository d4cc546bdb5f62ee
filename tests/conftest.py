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

import faulthandler
import os
from typing import Any

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


# pytest-xdist points a worker's stdout at /dev/null, and that is where
# pytest-timeout's thread method writes the stacks of a hung test before it
# ends the worker: a hang in `make test` would fail without saying where. So
# a worker also has faulthandler write every thread's stack to the stderr it
# shares with the run, a second before pytest-timeout ends it.
_STDERR: list[int] = []


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        _STDERR.append(os.dup(2))  # the run's stderr (capturing is suspended here)


@pytest.hookimpl(optionalhook=True)  # pytest-timeout's hooks
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> None:
    if _STDERR:
        faulthandler.dump_traceback_later(max(settings.timeout - 1, 0.5), file=_STDERR[0])


@pytest.hookimpl(optionalhook=True)
def pytest_timeout_cancel_timer(item: pytest.Item) -> None:
    if _STDERR:
        faulthandler.cancel_dump_traceback_later()
