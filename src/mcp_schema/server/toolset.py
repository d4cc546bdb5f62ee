"""`ToolSet`: a server's tools and which of them are enabled, one set for
every replica (hand-written runtime module).

The tools are the server's code, the same on every replica; what changes at
run time is which are enabled (`ToolSet.enable`, `ToolSet.toggle`). That is
one value of the broker's store (``{"revision": n, "enabled": {name: bool}}``
for the tools changed from their declared state), changed by
compare-and-set, so racing changes through different replicas are each one
transition and none is lost. A change made, its ``tools/list_changed`` goes
through the `mcp_schema.subscription_relay.Relay` to every replica, and each
replica reads the value again (`Refreshing`) before it tells its own listens:
a client that hears of the change and lists again on the same replica sees
it. No request reads the store: ``tools/list`` and ``tools/call`` read the
set this process holds, rebuilt at each change (`ToolSet.listed`).

Without a broker (a handler on stdio, an `Endpoint` built by hand) a change
is this process's alone.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from mcp_schema.broker import MAX_TTL, Broker, BrokerError
from mcp_schema.server.tools import Tool
from mcp_schema.subscriptions import TOOLS, Subscriptions
from mcp_schema.tool_headers import ToolHeaders

__all__ = ["Refreshing", "ToolSet"]

_LOG = logging.getLogger("mcp_schema.server")
_MAX_TRIES = 64  # compare-and-set attempts of one change before it gives up


class ToolSet:
    """The tools by name, in the order they were added (see the module)."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.revision = 0
        """Counts the changes this process applied."""
        self._changed: dict[str, bool] = {}
        self._listed: dict[str, Any] | None = None
        self._enabled: dict[str, Tool] = {}
        self.headers: tuple[ToolHeaders, ...] = ()
        """The ``x-mcp-header`` annotations of the enabled tools that have
        some: what a call's ``Mcp-Param-*`` headers are checked against (an
        attribute, rebuilt at each change: the endpoint reads it per request)."""
        self.broker: Broker | None = None
        self.key = ""
        self.announce: Callable[[], Awaitable[None]] | None = None
        """Publishes ``tools/list_changed`` to every replica (the relay's)."""

    def add(self, tool: Tool) -> None:
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is defined already")
        self.tools[tool.name] = tool
        self._rebuild()

    def bind(self, broker: Broker, key: str, announce: Callable[[], Awaitable[None]]) -> None:
        """Share the set through ``broker``'s value ``key``; ``announce``
        publishes each change."""
        self.broker, self.key, self.announce = broker, key, announce

    def get(self, name: object) -> Tool | None:
        """The enabled tool ``name``, or None."""
        return self._enabled.get(name) if isinstance(name, str) else None

    def enabled(self, name: str) -> bool:
        tool = self.tools.get(name)
        if tool is None:
            raise KeyError(f"no tool named {name!r}")
        return self._changed.get(name, tool.enabled)

    @property
    def listed(self) -> dict[str, Any]:
        """The ``ListToolsResult`` of the enabled tools (built once per change)."""
        if self._listed is None:
            self._listed = {"tools": [t.definition for t in self._enabled.values()]}
        return self._listed

    def _rebuild(self) -> None:
        self._enabled = {n: t for n, t in self.tools.items() if self._changed.get(n, t.enabled)}
        self._listed = None
        self.headers = tuple(t.headers for t in self._enabled.values() if t.headers.headers)

    def _apply(self, stored: bytes | None) -> None:
        """The shared value as read or written. Reads are made one at a time
        (`Refreshing`), and a change announced while one was made is read
        again after it, so the last value applied is the store's."""
        _, changed = _read(stored)
        changed = {n: on for n, on in changed.items() if n in self.tools}
        if changed != self._changed:
            self._changed = changed
            self.revision += 1
            self._rebuild()

    async def load(self) -> None:
        """Read the shared value (at start-up, and at each change announced)."""
        if self.broker is not None:
            self._apply(await self.broker.get(self.key))

    async def enable(self, names: Collection[str] | str, on: bool = True) -> None:
        """Enable (or, ``on=False``, disable) the tools ``names`` on every replica."""
        wanted = {names: on} if isinstance(names, str) else dict.fromkeys(names, on)
        await self._change(lambda changed: {**changed, **wanted})

    async def toggle(self, name: str) -> bool:
        """Enable ``name`` if it is disabled, else disable it; whether it is enabled now."""
        declared = self._declared(name)
        now: list[bool] = []

        def flipped(changed: dict[str, bool]) -> dict[str, bool]:
            now[:] = [not changed.get(name, declared)]
            return {**changed, name: now[0]}

        await self._change(flipped)
        return now[0]

    def _declared(self, name: str) -> bool:
        tool = self.tools.get(name)
        if tool is None:
            raise KeyError(f"no tool named {name!r}")
        return tool.enabled

    async def _change(self, change: Callable[[dict[str, bool]], dict[str, bool]]) -> None:
        """Apply ``change`` to the shared value by compare-and-set (retried on
        what another replica wrote first), then announce it."""
        for name in change({}):
            self._declared(name)  # KeyError before anything is written
        broker = self.broker
        if broker is None:
            self._changed = change(self._changed)
            self.revision += 1
            self._rebuild()
            return
        for _ in range(_MAX_TRIES):
            stored = await broker.get(self.key)
            revision, changed = _read(stored)
            value = json.dumps({"revision": revision + 1, "enabled": change(changed)}).encode()
            if stored is None:
                won = await broker.put_if_absent(self.key, value, MAX_TTL)
            else:
                won = await broker.compare_and_set(self.key, stored, value, MAX_TTL)
            if won:
                self._apply(value)
                if self.announce is not None:
                    await self.announce()
                return
        raise BrokerError("the tool set changed too often to be changed")


def _read(stored: bytes | None) -> tuple[int, dict[str, bool]]:
    """The revision and the changed tools of a stored value (none: nothing changed)."""
    if stored is None:
        return 0, {}
    try:
        value = json.loads(stored)
        revision, enabled = value["revision"], value["enabled"]
        if isinstance(revision, int) and isinstance(enabled, dict):
            return revision, {str(n): bool(on) for n, on in enabled.items()}
    except (ValueError, TypeError, KeyError):
        pass
    _LOG.warning("the stored tool set is not one: read as no change")
    return 0, {}


class Refreshing(Subscriptions):
    """The endpoint's listens, told of a tool list change only once
    ``tools`` has read the shared set again (see the module)."""

    def __init__(self, tools: ToolSet, **options: Any) -> None:
        super().__init__(**options)
        self.toolset = tools
        self._again = False
        self._reading: asyncio.Task[None] | None = None

    def publish(self, method: str, uri: str | None = None) -> int:
        if method != TOOLS or self.toolset.broker is None:
            return super().publish(method, uri)
        self._again = True
        if self._reading is None:
            self._reading = asyncio.ensure_future(self._refresh())
        return 0  # told once read: the count is not known yet

    async def _refresh(self) -> None:
        try:
            while self._again:  # changes announced while it read: once more
                self._again = False
                try:
                    await self.toolset.load()
                except BrokerError as exc:
                    _LOG.warning("the tool set was not read again: %s", exc.message)
                super().publish(TOOLS)
        finally:
            self._reading = None
