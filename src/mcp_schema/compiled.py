"""What the generated registry says about each compiled protocol version
(hand-written runtime module; `mcp_schema.registry` holds the data).

An entry is cheap: naming a version imports nothing. Its ``load`` imports the
version package and returns the package's `VersionTables`, the classes and
tables the codec dispatches on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from mcp_schema.base import McpModel
    from mcp_schema.method_table import NotificationMethod, RequestMethod

__all__ = ["CompiledVersion", "Era", "VersionTables"]

Era = Literal["handshake", "stateless"]
"""``handshake``: the version is negotiated by ``initialize`` and messages do
not name it. ``stateless``: every request names its version in ``params._meta``."""


@dataclass(frozen=True)
class VersionTables:
    """The classes of one version package that the codec dispatches on."""

    request: type[McpModel]
    """``JSONRPCRequest``: a request of a method the version does not know."""
    notification: type[McpModel]
    result: type[McpModel]
    """``Result``: a result whose method is not known."""
    error: type[McpModel]
    """``Error``: an error object whose code has no model of its own."""
    result_arms: Mapping[str, type[McpModel]]
    """Results that may answer a request in place of its complete result, by
    tag. Stateless era: the tag is the result's ``resultType``. Handshake era:
    the tag is a member only that result has (``task``), and a request's
    method lists the arms that may answer it among its ``alternatives``."""
    requests: Mapping[str, RequestMethod]
    notifications: Mapping[str, NotificationMethod]
    error_models: Mapping[int, type[McpModel]]
    client_capabilities: type[McpModel] | None
    """``ClientCapabilities``: what a client declares it supports (None in
    an extension's tables)."""
    implementation: type[McpModel] | None
    """``Implementation``: a client's or server's name and version (None in
    an extension's tables)."""


@dataclass(frozen=True)
class CompiledVersion:
    """One compiled schema: a protocol version, or an extension of one."""

    key: str
    """The pin in ``schema/pins.json``: ``2026-07-28``, ``2026-07-28/tasks``."""
    version: str
    """The protocol version (an extension's: the version it extends)."""
    era: Era
    package: str
    """The import name of the version package."""
    extension: str | None
    """The extension id (``io.modelcontextprotocol/tasks``), None for a version."""
    load: Callable[[], VersionTables]
    """Imports the package and returns its tables."""
