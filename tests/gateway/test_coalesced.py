"""The gateway's server protocol: the writes of one loop iteration go out as one send."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("httptools")

from mcp_schema.gateway.coalesced import _JOINED, _Coalesced


class _Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.sent.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


async def _coalesced() -> tuple[_Coalesced, _Recording]:
    inner = _Recording()
    return _Coalesced(inner, asyncio.get_running_loop()), inner


def test_a_head_and_its_body_are_one_send() -> None:
    async def run() -> list[bytes]:
        outer, inner = await _coalesced()
        outer.write(b"HTTP/1.1 200 OK\r\n\r\n")
        outer.write(b"{}")
        await asyncio.sleep(0)
        return inner.sent

    assert asyncio.run(run()) == [b"HTTP/1.1 200 OK\r\n\r\n{}"]


def test_a_lone_write_goes_at_the_end_of_its_iteration_and_in_order() -> None:
    async def run() -> tuple[list[bytes], list[bytes]]:
        outer, inner = await _coalesced()
        outer.write(b"a")
        outer.write(b"b")
        outer.write(b"c")
        before = list(inner.sent)
        await asyncio.sleep(0)
        return before, inner.sent

    before, after = asyncio.run(run())
    assert before == [b"ab"] and after == [b"ab", b"c"]


def test_close_sends_what_is_held_first_and_a_long_write_is_not_copied() -> None:
    async def run() -> tuple[list[bytes], bool]:
        outer, inner = await _coalesced()
        long = b"x" * (_JOINED + 1)
        outer.write(b"head")
        outer.write(long)
        outer.write(b"last")
        outer.close()
        return inner.sent, inner.closed

    sent, closed = asyncio.run(run())
    assert sent == [b"head", b"x" * (_JOINED + 1), b"last"] and closed
