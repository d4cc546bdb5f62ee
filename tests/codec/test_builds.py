"""Lazy builds: whichever thread asks first, a validator is built once."""

from __future__ import annotations

import threading
import time

from mcp_schema._codec.builds import built_once


def test_a_first_build_from_many_threads_runs_once() -> None:
    calls: list[int] = []

    @built_once
    def build(key: int) -> list[int]:
        calls.append(key)
        time.sleep(0.05)  # wide enough for every thread to arrive
        return [key]

    results: list[list[int]] = []
    threads = [threading.Thread(target=lambda: results.append(build(7))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    assert calls == [7]
    assert len(results) == 8 and all(r is results[0] for r in results)
