"""Notifications a server sends, built for one protocol version (hand-written
runtime module).

Each helper takes the session's version and returns that version's
notification model, ready for `mcp_schema.codec.encode`. The class comes from
the version's method table, so a version added to the registry needs no
change here. A version that lacks the notification, or params its schema
refuses, is a ``ValueError``: the calling program's mistake. Members a
version does not define are kept, as decoding keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Union

from pydantic import BaseModel, ValidationError

from mcp_schema._args import check
from mcp_schema._codec.catalog import catalog
from mcp_schema._codec.wire import to_wire
from mcp_schema.base import McpModel
from mcp_schema.context import LoggingLevel
from mcp_schema.errors import quote
from mcp_schema.tables import NotificationMethod
from mcp_schema.versions import protocol, unsupported

__all__ = [
    "cancelled",
    "list_changed",
    "log_message",
    "notification",
    "progress",
    "resource_updated",
]

Listed = Literal["tools", "resources", "prompts"]

if TYPE_CHECKING:
    # Generated for every compiled version: what each builder returns.
    from mcp_schema.registry import (
        CancelledNotification,
        LoggingMessageNotification,
        ProgressNotification,
        PromptListChangedNotification,
        ResourceListChangedNotification,
        ResourceUpdatedNotification,
        ToolListChangedNotification,
    )

    ListChangedNotification = Union[
        ToolListChangedNotification, ResourceListChangedNotification, PromptListChangedNotification
    ]


def _notifications(version: str) -> Mapping[str, NotificationMethod]:
    check(version, str, "version")
    if protocol(version) is None:
        raise unsupported(version)
    return catalog(version, ()).notifications  # the classes `decode` gives


def notification(
    version: str, method: str, params: BaseModel | Mapping[str, Any] | None = None
) -> McpModel:
    """The ``method`` notification of ``version`` with ``params``: a model of
    any version, or a wire mapping (members given ``None`` are left out)."""
    check(method, str, "method")
    check(params, (BaseModel, Mapping), "params", none=True)
    entry = _notifications(version).get(method)
    if entry is None:
        raise ValueError(f"{version} has no notification {quote(method)}")
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if isinstance(params, BaseModel):
        params = to_wire(params)
    elif params is not None and not isinstance(params, Mapping):
        raise TypeError(f"params must be a model or a mapping, not {type(params).__name__}")
    if params is not None:
        message["params"] = {key: value for key, value in params.items() if value is not None}
    try:
        return entry.notification.model_validate(message)
    except ValidationError as exc:
        raise ValueError(f"{version} {quote(method)}: {exc}") from None


def progress(
    version: str,
    token: str | int,
    done: float,
    *,
    total: float | None = None,
    message: str | None = None,
) -> ProgressNotification:
    """``notifications/progress`` for the request that gave ``token``."""
    check(token, (str, int), "token")
    check(done, float, "done")
    check(total, float, "total", none=True)
    check(message, str, "message", none=True)
    params = {"progressToken": token, "progress": done, "total": total, "message": message}
    return notification(version, "notifications/progress", params)  # type: ignore[return-value]


def log_message(
    version: str, level: LoggingLevel, data: Any, *, logger: str | None = None
) -> LoggingMessageNotification:
    """``notifications/message``: a log entry at ``level`` (``"info"``, ``"error"``...)."""
    check(level, str, "level")
    check(logger, str, "logger", none=True)
    params = {"level": level, "data": data, "logger": logger}
    return notification(version, "notifications/message", params)  # type: ignore[return-value]


def list_changed(version: str, listed: Listed) -> ListChangedNotification:
    """``notifications/tools/list_changed`` (or resources, prompts)."""
    check(listed, str, "listed")
    return notification(version, f"notifications/{listed}/list_changed")  # type: ignore[return-value]


def cancelled(
    version: str, request_id: str | int, *, reason: str | None = None
) -> CancelledNotification:
    """``notifications/cancelled`` for the request ``request_id``."""
    check(request_id, (str, int), "request_id")
    check(reason, str, "reason", none=True)
    params = {"requestId": request_id, "reason": reason}
    return notification(version, "notifications/cancelled", params)  # type: ignore[return-value]


def resource_updated(version: str, uri: str) -> ResourceUpdatedNotification:
    """``notifications/resources/updated`` for a subscribed resource."""
    check(uri, str, "uri")
    return notification(version, "notifications/resources/updated", {"uri": uri})  # type: ignore[return-value]
