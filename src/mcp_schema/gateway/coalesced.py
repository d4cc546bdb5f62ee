"""The gateway's HTTP/1.1 server protocol (`CoalescedHttp`): uvicorn's httptools
one, whose writes of a loop iteration go to the socket together. uvicorn writes
an answer's head when the app starts it and its body when the app sends it, two
sends for one whole answer; on a core shared with the upstream each loopback
send costs more than the gateway's reading of the messages. The bytes and their
order are the same; a write is held until the next write or the end of the
loop iteration, never longer.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["CoalescedHttp"]

_JOINED = 64 << 10
"""Longest write joined to the one held (a longer one is not copied: both go as they are)."""


class CoalescedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol writing through a `_Coalesced` transport."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_Coalesced(transport, asyncio.get_running_loop()))


class _Coalesced(asyncio.Transport):
    """``transport``, its first write of a loop iteration held until the next
    write (then both are one send) or the iteration's end."""

    __slots__ = ("_held", "_loop", "_scheduled", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport, self._loop = transport, loop
        self._held: bytes | None = None
        self._scheduled = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is None:
            self._held = bytes(data)
            if not self._scheduled:
                self._scheduled = True
                self._loop.call_soon(self._flush)
            return
        self._held = None
        if len(data) <= _JOINED:
            self._transport.write(held + data)
        else:
            self._transport.write(held)
            self._transport.write(data)

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def _flush(self) -> None:
        self._scheduled = False
        self._send_held()

    def _send_held(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self._send_held()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def write_eof(self) -> None:
        self._send_held()
        self._transport.write_eof()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + len(self._held or b"")

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()
