"""What the ``*_refusals`` and ``*_hostile`` test files of each unit build
hostile input from and check it with: a 2026-07-28 ``tools/call`` with its
``_meta``, a message as JSON bytes, the bound on an error's text
(`bounded`) and the check that a cost grows linearly (`costs_linearly`)."""

from __future__ import annotations

import copy
import gc
import json
import time
from collections.abc import Callable
from typing import Any

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
}


def call(
    meta: dict[str, Any] | None = None, *, rid: int | str = 1, **params: Any
) -> dict[str, Any]:
    """A ``tools/call`` of tool "t" (``params`` added to or over its own), with
    a ``_meta`` of its own: the caller may change it."""
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"_meta": copy.deepcopy(META) if meta is None else meta, "name": "t", **params},
    }


def raw(message: Any) -> bytes:
    return json.dumps(message).encode()


MAX_ERROR_TEXT = 1024
"""The longest error message any hostile input may cost, in characters."""


def bounded(error: BaseException) -> None:
    """``error`` says what went wrong in at most `MAX_ERROR_TEXT` characters."""
    assert len(str(error)) <= MAX_ERROR_TEXT, f"{len(str(error))} characters: {str(error)[:200]}"


def costs_linearly(run: Callable[[Any], object], small: Any, large: Any) -> None:
    """``run(large)``, on input 8 times the size of ``small``, takes at most
    4 * 8 times the processor time of ``run(small)`` (1 ms besides, the
    timer's floor): generous for a linear cost (the machine is shared: the
    best of three, garbage collection off), and far below a quadratic one's 64."""
    best = [float("inf"), float("inf")]
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(3):
            for i, value in enumerate((small, large)):
                started = time.process_time()
                run(value)
                best[i] = min(best[i], time.process_time() - started)
    finally:
        if collecting:
            gc.enable()
    assert best[1] <= 32 * best[0] + 0.001, best
