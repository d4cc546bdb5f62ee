"""Validators are built on first use, once, whichever thread asks first.

Pydantic builds a deferred model's validator when it is first used, and not
every 2.x release makes that safe from two threads at once; the codec's own
caches would also build twice. Every builder of the codec goes through
`built_once`: one lock for all of them (a build may need another), and no
lock at all once the value exists.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from typing_extensions import ParamSpec

P = ParamSpec("P")
R = TypeVar("R")

_LOCK = threading.RLock()


class Built(Generic[P, R]):
    """``build`` cached by its (positional, hashable) arguments, built under
    the codec's lock; ``len()`` counts what was built."""

    def __init__(self, build: Callable[P, R]) -> None:
        self._build = build
        self._results: dict[Any, R] = {}
        functools.update_wrapper(self, build)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        assert not kwargs, "built_once caches by positional arguments only"
        try:
            return self._results[args]
        except KeyError:
            pass
        with _LOCK:
            if args not in self._results:
                self._results[args] = self._build(*args)  # type: ignore[call-arg]
            return self._results[args]

    def __len__(self) -> int:
        return len(self._results)


def built_once(build: Callable[P, R]) -> Built[P, R]:
    return Built(build)
