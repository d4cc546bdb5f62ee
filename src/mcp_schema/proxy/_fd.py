"""Reading and writing file descriptors for the proxy's processes: the relay's
two directions, the validator's input and its reports."""

from __future__ import annotations

import os
import select

from mcp_schema.errors import clip

CHUNK = 65536
"""The most bytes one read takes."""


def read(fd: int) -> bytes:
    """The next bytes from ``fd`` (b"" at its end, or when it cannot be read)."""
    while True:
        try:
            return os.read(fd, CHUNK)
        except BlockingIOError:  # a descriptor left non-blocking by whoever opened it
            select.select([fd], [], [])
        except OSError:
            return b""


def write(fd: int, data: bytes, *, raising: bool = False) -> bool:
    """Write all of ``data``; False when ``fd`` is closed at the other end."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])
        except OSError:
            if raising:
                raise
            return False
    return True


def say(line: str) -> None:
    """One line of the proxy's own on standard error (never raises)."""
    try:
        os.write(2, (clip(line, 1000) + "\n").encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
