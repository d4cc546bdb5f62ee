"""Extensions in a session, and the hook through which the Tasks extension
joins a `ServerSession` (``tasks=``).

The session knows an extension by its identifier: whether capabilities
declare it (`declares_extension`), and the -32021 a request needing it gets
from a client that did not (`missing_extension`). What the Tasks extension
adds is its own: which requests it serves, which calls a handler may answer
with a task, the record of a new task, and what of a request only its store
can judge (`TaskHook`, which `mcp_schema.tasks.TaskServer` implements). The
session's part (`TaskCalls`) gates the extension's requests, keeps the tasks
a handler starts until the driver stores them (`PendingTask`), and hands the
driver what the hook set aside.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from mcp_schema._codec.route import IdKey, id_key
from mcp_schema.capabilities import ASKED_CAPABILITY
from mcp_schema.errors import MissingRequiredClientCapabilityError
from mcp_schema.session.events import CapabilityError, RequestReceived
from mcp_schema.session.peer import Peer
from mcp_schema.versions import TASKS_EXTENSION, extensions_of

__all__ = [
    "PendingTask",
    "TaskCalls",
    "TaskHook",
    "declares_extension",
    "missing_extension",
]


def declares_extension(capabilities: BaseModel | Mapping[str, Any] | None, name: str) -> bool:
    """Whether ``capabilities`` (model or wire mapping) declare the extension ``name``."""
    if capabilities is None:
        return False
    if isinstance(capabilities, Mapping):
        extensions = capabilities.get("extensions")
    else:
        extensions = getattr(capabilities, "extensions", None)
    return isinstance(extensions, Mapping) and extensions.get(name) is not None


@functools.cache
def _has_extension(version: str, extension: str) -> bool:
    """Whether ``version`` (one the session read) has the compiled ``extension``
    (a hook's): asked of every request, so the answer is kept (a few versions,
    a few hooks' extensions)."""
    return extension in extensions_of(version)


def missing_extension(what: str, name: str) -> MissingRequiredClientCapabilityError:
    """The -32021 for ``what`` (a method, a tool) asked by a client that did not
    declare the extension ``name``."""
    return MissingRequiredClientCapabilityError(
        f"Missing required client capability: {what} needs the {name} extension",
        required_capabilities={"extensions": {name: {}}},
    )


@runtime_checkable
class TaskHook(Protocol):
    """What a `ServerSession` given ``tasks=`` asks of the Tasks extension."""

    extension: str
    """The extension's identifier, which the session declares."""
    requests: frozenset[str]
    """The extension's own requests (``tasks/get``...): the driver answers
    them; the session refuses them (-32021) from a client that did not
    declare the extension on the request."""
    supported: frozenset[str]
    """The requests a handler may answer with a task."""

    def set_aside(
        self, value: dict[str, Any], version: str
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``value`` (a request as received, in ``version``) as the session is
        to read it, and what the extension set aside of it to judge later
        (empty: nothing)."""
        ...

    def new(
        self,
        method: str,
        version: str,
        principal: str,
        *,
        askable: Collection[str],
        ttl_ms: int | Literal["default"] | None,
        poll_interval_ms: int | None,
        status_message: str | None,
    ) -> Any:
        """The record of a new task running a call of ``method``."""
        ...


@dataclass(frozen=True, eq=False)
class PendingTask:
    """A call a handler answers with a task (`ServerSession.run_as_task`),
    waiting to be stored: its request, the new record, the work to start."""

    request: RequestReceived
    record: Any
    """The hook's record of the task (a `mcp_schema.tasks.TaskRecord`)."""
    work: Callable[..., Any]
    """An async function of a `mcp_schema.tasks.TaskContext`."""


class TaskCalls(Peer):
    """The session's part of the Tasks extension (a part of `ServerSession`)."""

    tasks: TaskHook | None
    principal: str | None
    _pending_tasks: list[PendingTask]
    _unread: dict[IdKey, dict[str, Any]]
    """Of each request in flight, what the hook set aside (`unread_answers`)."""
    _aside: dict[str, Any]
    """What the frame being read set aside, until its request is accepted."""

    def _set_aside(self, value: dict[str, Any], version: str) -> dict[str, Any]:
        if self.tasks is None:
            return value
        self._aside = {}  # what an earlier frame set aside went with its refusal
        if self._served_in(version):
            value, self._aside = self.tasks.set_aside(value, version)
        return value

    def _served_in(self, version: str) -> bool:
        assert self.tasks is not None
        return _has_extension(version, self.tasks.extension)

    def _gate(self, method: str, request: RequestReceived) -> None:
        """-32021 for the extension's own ``method`` from a client that did
        not declare the extension on ``request``."""
        hook = self.tasks
        if hook is not None and method in hook.requests:
            if not declares_extension(request.context.client_capabilities, hook.extension):
                raise missing_extension(method, hook.extension)

    def unread_answers(self, request: RequestReceived) -> dict[str, Any]:
        """The answers of the ``tasks/update`` ``request`` that are no input
        response (as sent, by key), set aside when it was read; emptied by the call."""
        return self._unread.pop(id_key(request.id), {})

    def accepts_task(self, request: RequestReceived) -> bool:
        """Whether ``request`` may be answered with a task: the session has
        ``tasks``, the method is one the extension runs as a task, and the
        client declared the extension on this very request."""
        hook = self.tasks
        return (
            hook is not None
            and request.method in hook.supported
            and self._served_in(request.version)
            and declares_extension(request.context.client_capabilities, hook.extension)
        )

    def require_task(self, request: RequestReceived) -> bool:
        """For a call the server only runs as a task: whether it may
        (`accepts_task`); if not, ``request`` is answered with the
        extension's -32021 naming the capability it needs."""
        if self.accepts_task(request):
            return True
        extension = TASKS_EXTENSION if self.tasks is None else self.tasks.extension
        self.fail(request, missing_extension(request.method, extension))
        return False

    def run_as_task(
        self,
        request: RequestReceived,
        work: Callable[..., Any],
        *,
        ttl_ms: int | Literal["default"] | None = "default",
        poll_interval_ms: int | None = None,
        status_message: str | None = None,
    ) -> Any:
        """Answer ``request`` with a task running ``work`` (an async function
        of a `mcp_schema.tasks.TaskContext` returning the call's result): the
        new task's record (a `mcp_schema.tasks.TaskRecord`), not stored yet.
        The driver stores it, then sends the ``CreateTaskResult`` and starts
        ``work`` (`mcp_schema.tasks.TaskServer.flush`). ``ttl_ms`` and
        ``poll_interval_ms`` default to the ``tasks`` rules'.

        `CapabilityError` unless `accepts_task` (check it first; a server
        that needs a task answers with `require_task`)."""
        if not callable(work):
            raise TypeError(f"work must be an async function, not {type(work).__name__}")
        if not self.accepts_task(request):
            raise CapabilityError(
                "this call cannot be answered with a task (no tasks rules, a method the "
                f"extension does not run as a task, or a client that did not declare "
                f"{TASKS_EXTENSION}): check session.accepts_task(request) first"
            )
        self._state.answerable(request)  # UnknownRequestError when it is not in flight
        assert self.tasks is not None  # accepts_task said so
        askable = [m for m in ASKED_CAPABILITY if request.can_ask(m)]
        record = self.tasks.new(
            request.method,
            request.version,
            self.principal or "",
            askable=askable,
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms,
            status_message=status_message,
        )
        self._pending_tasks.append(PendingTask(request, record, work))
        return record

    @property
    def has_pending_tasks(self) -> bool:
        """Whether the handler started a task since `pending_tasks` was last
        called (what its driver then stores, by that call)."""
        return bool(self._pending_tasks)

    def pending_tasks(self) -> list[PendingTask]:
        """The tasks started since the last call, to store (the driver's);
        emptied by the call."""
        pending, self._pending_tasks = self._pending_tasks, []
        return pending
