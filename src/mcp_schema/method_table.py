"""Entries of the generated method tables (hand-written runtime module).

Each version package's ``methods.py`` maps method names to these records, so
the codec can dispatch on ``method`` without knowing any version by heart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mcp_schema.base import McpModel

Sender = Literal["client", "server", "both"]


@dataclass(frozen=True)
class RequestMethod:
    """A request method: its classes and the results that may answer it."""

    method: str
    sender: Sender
    request: type[McpModel]
    params: type[McpModel] | None
    result: Any
    """The complete result: a model class, or (Tasks ``tasks/get``) a union of
    them, ready for ``pydantic.TypeAdapter``."""
    alternatives: tuple[type[McpModel], ...]
    """Results that may answer instead (input-required, task created)."""


@dataclass(frozen=True)
class NotificationMethod:
    method: str
    sender: Sender
    notification: type[McpModel]
    params: type[McpModel] | None


@dataclass(frozen=True)
class InputRequestMethod:
    """A request a server embeds in an input-required result (2026-07-28)."""

    method: str
    request: type[McpModel]
    params: type[McpModel] | None
