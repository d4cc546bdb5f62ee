"""``subscriptions/listen`` (2026-07-28), whatever the transport: the open
listens of a server and what reaches them (hand-written runtime module).

The rules are the specification's
[Subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)
and [Cancellation](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation)
pages. `Subscriptions` is the registry; `Subscriptions.open` turns a
``subscriptions/listen`` request (its id and its ``notifications`` filter)
into a `Listen`, whose frames a transport writes as it takes them
(`Listen.take`):

1. ``notifications/subscriptions/acknowledged`` first, with the part of
   the client's `Filter` the server honors (``supported``: what it can
   send at all; the rest is left out of the acknowledgement, and never
   sent).
2. Then the changes published (`Subscriptions.publish` and its four
   spellings) since the listen was opened, those its filter asks for and
   no other: a change published before `open` never reaches it. Between
   two takes, changes coalesce: each notification (a list changed, a URI
   updated) is sent once, in the order it was first published, however
   often it was published meanwhile. What a reader gets therefore depends
   only on what was published between its takes.
3. Every frame carries ``io.modelcontextprotocol/subscriptionId`` (the
   listen request's id) in ``_meta``.

Task status (``notifications/tasks``, the Tasks extension's ``taskIds``
member of the filter) is published with its payload, the detailed task
(`Subscriptions.task_changed`): it reaches only the listens of the task's
principal that name the task, and coalesces to the latest status. Which
listen may ask for it at all is `mcp_schema.tasks.notifications`' rule.

How it ends: the client cancels (`Listen.abandon`: the HTTP stream closed,
or on stdio its ``notifications/cancelled``), and nothing more is sent; the
server ends it gracefully (`Listen.close`: what is pending, then the
``complete`` result of the listen request); or the server tears it down
(`Listen.cancel`: ``notifications/cancelled`` naming the listen request,
what was pending dropped). A listen whose pending notifications would grow
beyond ``max_queued`` is torn down so (its reader fell behind; the client
may listen again and refetch).

Bounded: at most ``max_listens`` open listens, ``max_listens_per_key`` per
caller (one more: -31429, `mcp_schema.shares`, nothing changes),
``max_uris`` resource URIs and ``max_task_ids`` task ids in one filter
(-32602), ``max_queued`` pending notifications per listen. Sans-IO, one
thread (one event loop) at a time. Across replicas,
`mcp_schema.subscription_relay` carries publications through a broker.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from mcp_schema._args import check, strings
from mcp_schema.codec import encode
from mcp_schema.errors import InvalidParamsError
from mcp_schema.shares import Share
from mcp_schema.versions import TASKS_EXTENSION

__all__ = [
    "LISTEN",
    "LIST_CHANGED",
    "MAX_LISTENS",
    "MAX_QUEUED",
    "MAX_TASK_IDS",
    "MAX_URIS",
    "NOTIFICATIONS",
    "RESOURCE_UPDATED",
    "SUBSCRIPTION_ID_KEY",
    "TASKS",
    "Change",
    "Filter",
    "Listen",
    "Subscriptions",
    "checked_change",
    "listened",
    "supported_by",
]

LISTEN = "subscriptions/listen"

SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
"""The ``_meta`` key naming the listen request of a frame on its stream."""

TOOLS = "notifications/tools/list_changed"
PROMPTS = "notifications/prompts/list_changed"
RESOURCES = "notifications/resources/list_changed"
RESOURCE_UPDATED = "notifications/resources/updated"
TASKS = "notifications/tasks"

LIST_CHANGED: Mapping[str, str] = {
    "toolsListChanged": TOOLS,
    "promptsListChanged": PROMPTS,
    "resourcesListChanged": RESOURCES,
}
"""Each boolean member of a ``SubscriptionFilter``, and the notification it asks for."""

NOTIFICATIONS = frozenset([*LIST_CHANGED.values(), RESOURCE_UPDATED, TASKS])
"""Every notification a listen may carry."""

MAX_LISTENS = 1024
"""Open listens a `Subscriptions` holds by default."""

MAX_QUEUED = 256
"""Pending notifications of one listen, by default, before it is torn down."""

MAX_URIS = 256
"""Resource URIs one filter may name, by default."""

MAX_TASK_IDS = 256
"""Task ids one filter may name, by default."""

_ACK = "notifications/subscriptions/acknowledged"
_FELL_BEHIND = "the subscription's reader fell behind"

Change = tuple[str, "str | None"]
"""A published change: the notification's method, and the URI of a resource
updated (the id of a task whose status changed)."""


@dataclass(frozen=True)
class Filter:
    """What a listen asks for (``SubscriptionFilter``): list changes,
    updates of some resource URIs, the status of some tasks (each in the
    client's order, without repeats)."""

    tools_list_changed: bool = False
    prompts_list_changed: bool = False
    resources_list_changed: bool = False
    resource_subscriptions: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        value: BaseModel | Mapping[str, Any],
        *,
        max_uris: int = MAX_URIS,
        max_task_ids: int = MAX_TASK_IDS,
    ) -> Filter:
        """The filter of a ``SubscriptionFilter`` (model, or mapping of wire
        names); -32602 for a member of the wrong type, too many URIs or task ids."""
        check(value, (BaseModel, Mapping), "notifications")
        check(max_uris, int, "max_uris")
        check(max_task_ids, int, "max_task_ids")
        wire: Any = (
            value.model_dump(mode="json", by_alias=True, exclude_none=True)
            if isinstance(value, BaseModel)
            else value
        )
        flags = {}
        for name in LIST_CHANGED:
            flag = wire.get(name, False)
            if not isinstance(flag, bool):
                raise InvalidParamsError(f"notifications.{name} must be a boolean")
            flags[name] = flag
        return cls(
            flags["toolsListChanged"],
            flags["promptsListChanged"],
            flags["resourcesListChanged"],
            _names(wire, "resourceSubscriptions", max_uris),
            _names(wire, "taskIds", max_task_ids),
        )

    def _lists(self) -> list[str]:
        """The wire names of the list changes it asks for."""
        flags = (self.tools_list_changed, self.prompts_list_changed, self.resources_list_changed)
        return [name for name, flag in zip(LIST_CHANGED, flags, strict=True) if flag]

    def methods(self) -> frozenset[str]:
        """The notifications it asks for."""
        asked = {LIST_CHANGED[name] for name in self._lists()}
        asked |= {RESOURCE_UPDATED} if self.resource_subscriptions else set()
        return frozenset(asked | ({TASKS} if self.task_ids else set()))

    def honored(self, supported: Collection[str]) -> Filter:
        """What of it a server that sends only ``supported`` honors."""
        return Filter(
            self.tools_list_changed and TOOLS in supported,
            self.prompts_list_changed and PROMPTS in supported,
            self.resources_list_changed and RESOURCES in supported,
            self.resource_subscriptions if RESOURCE_UPDATED in supported else (),
            self.task_ids if TASKS in supported else (),
        )

    def wants(self, change: Change) -> bool:
        method, uri = change
        if method == RESOURCE_UPDATED:
            return uri in self.resource_subscriptions
        if method == TASKS:
            return uri in self.task_ids
        return method in self.methods()

    def to_wire(self) -> dict[str, Any]:
        """The ``SubscriptionFilter`` JSON: what it asks for, and nothing else."""
        wire: dict[str, Any] = dict.fromkeys(self._lists(), True)
        if self.resource_subscriptions:
            wire["resourceSubscriptions"] = list(self.resource_subscriptions)
        if self.task_ids:
            wire["taskIds"] = list(self.task_ids)
        return wire


def _names(wire: Mapping[str, Any], name: str, most: int) -> tuple[str, ...]:
    """The strings of member ``name`` of a filter (at most ``most``), without repeats."""
    names = wire.get(name, [])
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise InvalidParamsError(f"notifications.{name} must be strings")
    if len(names) > most:
        raise InvalidParamsError(f"notifications.{name}: at most {most}")
    return tuple(dict.fromkeys(names))


def supported_by(capabilities: BaseModel | Mapping[str, Any] | None) -> frozenset[str]:
    """The notifications a server declaring ``capabilities`` sends: a list's
    change when it declares ``listChanged`` for it, resource updates when
    ``resources.subscribe``, task status when the Tasks extension."""
    check(capabilities, (BaseModel, Mapping), "capabilities", none=True)
    wire: Any = (
        capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(capabilities, BaseModel)
        else capabilities or {}
    )

    def declares(name: str, flag: str) -> bool:
        member = wire.get(name)
        return isinstance(member, Mapping) and member.get(flag) is True

    lists = (("tools", TOOLS), ("prompts", PROMPTS), ("resources", RESOURCES))
    found = {method for name, method in lists if declares(name, "listChanged")}
    found |= {RESOURCE_UPDATED} if declares("resources", "subscribe") else set()
    extensions = wire.get("extensions")
    tasks = isinstance(extensions, Mapping) and isinstance(extensions.get(TASKS_EXTENSION), Mapping)
    return frozenset(found | ({TASKS} if tasks else set()))


def listened(message: BaseModel) -> BaseModel | Mapping[str, Any]:
    """The ``notifications`` filter a ``subscriptions/listen`` request
    model asks for (none: an empty one, which asks for nothing)."""
    check(message, BaseModel, "message")
    asked = getattr(getattr(message, "params", None), "notifications", None)
    return asked if isinstance(asked, (BaseModel, Mapping)) else {}


def checked_change(method: str, uri: str | None = None) -> Change:
    """The change of notification ``method`` (``uri``: of the resource
    updated, and only then); ``ValueError`` for another."""
    check(method, str, "method")
    check(uri, str, "uri", none=True)
    if method == TASKS:  # it needs the task's principal and its status
        raise ValueError("a task's status is published by task_changed")
    if method not in NOTIFICATIONS:
        raise ValueError(f"a listen carries no {method!r}")
    if (method == RESOURCE_UPDATED) != isinstance(uri, str):
        raise ValueError("a uri is the resource updated's, and only its")
    return (method, uri)


class Listen:
    """One open ``subscriptions/listen``: its ``id`` (the request's, which
    every frame carries), the ``filter`` honored and the ``principal`` whose
    tasks it may hear of. A transport sets
    `on_ready`, takes frames (`take`) whenever it fires, and stops at
    `done`."""

    def __init__(
        self,
        request_id: str | int,
        honored: Filter,
        max_queued: int,
        gone: Callable[[Listen], None],
        principal: str = "",
    ) -> None:
        self.id = request_id
        self.filter = honored
        self.principal = principal
        self.on_ready: Callable[[], None] | None = None
        """Called (with no argument) when there is something new to take."""
        self._max_queued = max_queued
        self._gone = gone
        # insertion-ordered (first publication first); each change's params, the latest
        self._pending: dict[Change, Mapping[str, Any] | None] = {}
        self._ack: bytes | None = self._notification(_ACK, {"notifications": honored.to_wire()})
        self._last: bytes | None = None  # the closing frame
        self._last_method: str | None = None  # its method (None: the complete result)
        self.ended = False
        """No change reaches it any more (closed, cancelled or abandoned)."""

    def _meta(self) -> dict[str, Any]:
        return {SUBSCRIPTION_ID_KEY: self.id}

    def _notification(self, method: str, params: dict[str, Any]) -> bytes:
        return encode(
            {"jsonrpc": "2.0", "method": method, "params": {"_meta": self._meta(), **params}}
        )

    def _ready(self) -> None:
        if self.on_ready is not None:
            self.on_ready()

    def publish(self, change: Change, params: Mapping[str, Any] | None = None) -> None:
        """Queue ``change`` (its notification's ``params``, replacing those
        still pending) if the filter asks for it (what the registry calls)."""
        if self.ended or not self.filter.wants(change):
            return
        if change in self._pending:
            if params is not None:
                self._pending[change] = params
            return
        if len(self._pending) >= self._max_queued:
            self.cancel(_FELL_BEHIND)
            return
        was_idle = not self._pending and self._ack is None
        self._pending[change] = params
        if was_idle:
            self._ready()

    def take(self) -> list[bytes]:
        """The frames to write now, in order; empties what waited."""
        return [frame for frame, _ in self.take_sent()]

    def take_sent(self) -> list[tuple[bytes, str | None]]:
        """`take`, each frame with its method (None for the listen request's
        ``complete`` result), for a transport that routes by it."""
        pending, self._pending = self._pending, {}
        frames: list[tuple[bytes, str | None]] = [] if self._ack is None else [(self._ack, _ACK)]
        for (method, uri), params in pending.items():
            given = {"uri": uri} if params is None and uri is not None else params
            frames.append((self._notification(method, dict(given or {})), method))
        if self._last is not None:
            frames.append((self._last, self._last_method))
        self._ack = self._last = None
        return frames

    @property
    def done(self) -> bool:
        """Ended, and every frame taken: the transport ends the stream."""
        return self.ended and self._ack is None and self._last is None and not self._pending

    def _end(self, last: bytes | None, method: str | None = None) -> bool:
        if self.ended:
            return False
        self.ended = True
        self._last, self._last_method = last, method
        self._gone(self)
        self._ready()
        return True

    def close(self) -> None:
        """End gracefully: what is pending, then the listen request's
        ``complete`` result. Idempotent."""
        result = {"resultType": "complete", "_meta": self._meta()}
        self._end(encode({"jsonrpc": "2.0", "id": self.id, "result": result}))

    def cancel(self, reason: str | None = None) -> None:
        """Tear down: ``notifications/cancelled`` naming the listen request
        (what was pending is dropped). Idempotent."""
        check(reason, str, "reason", none=True)
        params: dict[str, Any] = {"requestId": self.id}
        if reason is not None:
            params["reason"] = reason
        frame = self._notification("notifications/cancelled", params)  # a raise changes nothing
        if not self.ended:
            self._pending.clear()
        self._end(frame, "notifications/cancelled")

    def abandon(self) -> None:
        """The client cancelled: nothing more is sent (what waited is dropped). Idempotent."""
        if self._end(None):
            self._ack = None
            self._pending.clear()


class Subscriptions:
    """The open listens of a server (see the module).

    * ``supported``: the notifications the server sends (`supported_by` its
      capabilities; default every one).
    * ``max_listens``, ``max_queued``, ``max_uris``, ``max_task_ids``: the bounds;
      ``max_listens_per_key``: per caller (`Subscriptions.open`'s ``key``; a tenth).
    """

    def __init__(
        self,
        *,
        supported: Collection[str] = NOTIFICATIONS,
        max_listens: int = MAX_LISTENS,
        max_queued: int = MAX_QUEUED,
        max_uris: int = MAX_URIS,
        max_task_ids: int = MAX_TASK_IDS,
        max_listens_per_key: int | None = None,
    ) -> None:
        for name, size in (
            ("max_listens", max_listens),
            ("max_queued", max_queued),
            ("max_uris", max_uris),
            ("max_task_ids", max_task_ids),
        ):
            check(size, int, name)
            if size < 1:
                raise ValueError(f"{name} must be positive, not {size}")
        unknown = set(strings(supported, "supported") or ()) - NOTIFICATIONS
        if unknown:
            raise ValueError(f"supported names no listen notification: {sorted(unknown)}")
        self.supported = frozenset(supported)
        self.max_listens, self.max_queued = max_listens, max_queued
        self.max_uris, self.max_task_ids = max_uris, max_task_ids
        self._open: dict[Listen, str | None] = {}  # by identity, each with its caller's key
        self.share = Share("open subscriptions", total=max_listens, per_key=max_listens_per_key)

    def __len__(self) -> int:
        return len(self._open)

    def filter_of(self, notifications: BaseModel | Mapping[str, Any]) -> Filter:
        """The `Filter` of ``notifications`` within this registry's bounds (-32602 beyond)."""
        return Filter.of(notifications, max_uris=self.max_uris, max_task_ids=self.max_task_ids)

    def open(
        self,
        request_id: str | int,
        notifications: BaseModel | Mapping[str, Any] | Filter,
        *,
        principal: str = "",
        key: str | None = None,
    ) -> Listen:
        """A new listen for the request ``request_id`` asking for
        ``notifications`` (a ``SubscriptionFilter``, or its `filter_of`), its
        acknowledgement queued; it hears of ``principal``'s tasks only, and
        counts in the share of ``key`` (the caller's: `mcp_schema.shares`).
        -31429 when ``key``'s share or the registry is full, -32602 for a bad filter."""
        check(request_id, (str, int), "request_id")
        check(principal, str, "principal")
        check(key, str, "key", none=True)
        asked = (
            notifications if isinstance(notifications, Filter) else self.filter_of(notifications)
        )
        self.share.take(key)
        honored = asked.honored(self.supported)
        listen = Listen(request_id, honored, self.max_queued, self._forget, principal)
        self._open[listen] = key
        return listen

    def _forget(self, listen: Listen) -> None:
        if listen in self._open:
            self.share.release(self._open.pop(listen))

    def publish(self, method: str, uri: str | None = None) -> int:
        """Send notification ``method`` (``uri``: of the resource updated) to
        every open listen asking for it; how many asked."""
        change = checked_change(method, uri)
        reached = [listen for listen in self._open if listen.filter.wants(change)]
        for listen in reached:
            listen.publish(change)
        return len(reached)

    def task_changed(self, principal: str, task: Mapping[str, Any]) -> int:
        """Send ``notifications/tasks`` with ``task`` (a ``DetailedTask``, of
        ``principal``) to every open listen of ``principal`` naming it; how many."""
        check(principal, str, "principal")
        check(task, Mapping, "task")
        task_id = task.get("taskId")
        check(task_id, str, "task.taskId")
        change = (TASKS, task_id)
        reached = [
            listen
            for listen in self._open
            if listen.principal == principal and listen.filter.wants(change)
        ]
        for listen in reached:
            listen.publish(change, task)
        return len(reached)

    def tools_list_changed(self) -> int:
        return self.publish(TOOLS)

    def prompts_list_changed(self) -> int:
        return self.publish(PROMPTS)

    def resources_list_changed(self) -> int:
        return self.publish(RESOURCES)

    def resource_updated(self, uri: str) -> int:
        return self.publish(RESOURCE_UPDATED, uri)

    def close(self) -> None:
        """End every listen gracefully (the server is shutting down)."""
        for listen in _snapshot(self._open):
            listen.close()

    def cancel(self, reason: str | None = None) -> None:
        """Tear every listen down (``notifications/cancelled``)."""
        for listen in _snapshot(self._open):
            listen.cancel(reason)


def _snapshot(listens: Iterable[Listen]) -> list[Listen]:
    return list(listens)  # ending one removes it from what is iterated
