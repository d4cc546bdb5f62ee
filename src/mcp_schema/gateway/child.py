"""`Child`: one stdio MCP server process behind the gateway (asyncio), framed
as the stdio proxy frames it: one JSON message per line, each line split by
the proxy's `mcp_schema.proxy.LineSplitter` (an over-long line is never held
whole: it comes out as an `mcp_schema.proxy.OverlongLine`).

The child inherits the gateway's environment and standard error. It is
stopped the way MCP's stdio transport says: its standard input closed, then
after `mcp_schema.proxy.GRACE_SECONDS` SIGTERM, then SIGKILL; it is always
reaped."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

from mcp_schema.errors import quote
from mcp_schema.proxy.lines import Line, LineSplitter
from mcp_schema.proxy.relay import GRACE_SECONDS

__all__ = ["Child", "ChildError"]

_CHUNK = 65536


class ChildError(Exception):
    """The command could not be started."""


class Child:
    """The process of ``command``: `start` it, `send` it frames, each line it
    writes goes to ``on_line`` (in order), its end to ``on_exit`` (once); both
    may be replaced while it runs (a probe's child is handed on)."""

    def __init__(
        self,
        command: Sequence[str],
        on_line: Callable[[Line], None],
        on_exit: Callable[[], None],
        *,
        max_line_bytes: int,
    ) -> None:
        self.command = list(command)
        self.on_line, self.on_exit = on_line, on_exit
        self._splitter = LineSplitter(max_line_bytes)
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self.alive = False

    async def start(self) -> None:
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=_CHUNK,
            )
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise ChildError(f"cannot start {quote(self.command[0])}: {reason}") from None
        self.alive = True
        self._reader = asyncio.ensure_future(self._read())

    def send(self, frame: bytes) -> bool:
        """Write ``frame`` as one line; False when the child is gone."""
        proc = self._proc
        if not self.alive or proc is None or proc.stdin is None or proc.stdin.is_closing():
            return False
        proc.stdin.write(frame + b"\n")
        return True

    async def _read(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        try:
            while chunk := await proc.stdout.read(_CHUNK):
                for line in self._splitter.feed(chunk):
                    self.on_line(line)
        except (OSError, ValueError):
            pass  # its output broke: it is over as if it ended
        finally:
            self._splitter.discard()
            self.alive = False
            self.on_exit()

    async def close(self) -> None:
        """Stop the child (its input closed, then SIGTERM, then SIGKILL) and reap it."""
        proc = self._proc
        if proc is None:
            return
        self.alive = False
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        for step in (None, proc.terminate, proc.kill):
            if step is not None:
                with contextlib.suppress(ProcessLookupError):
                    step()
            try:
                await asyncio.wait_for(proc.wait(), GRACE_SECONDS)
                break
            except asyncio.TimeoutError:
                continue
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
