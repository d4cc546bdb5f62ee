"""What the generated registry says about each compiled protocol version
(hand-written runtime module; `mcp_schema.registry` holds the data).

An entry is cheap: naming a version imports nothing. Its ``load`` imports the
version package's tables and returns its `VersionTables`: the definitions the
codec dispatches on, by name. Their objects are read from the package's
``models`` when first asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from mcp_schema.method_table import Definitions, definition

if TYPE_CHECKING:
    from mcp_schema.base import McpModel
    from mcp_schema.method_table import NotificationMethod, RequestMethod

__all__ = ["CompiledVersion", "Era", "VersionTables"]

Era = Literal["handshake", "stateless"]
"""``handshake``: the version is negotiated by ``initialize`` and messages do
not name it. ``stateless``: every request names its version in ``params._meta``."""


@dataclass(frozen=True)
class VersionTables:
    """The definitions of one version package that the codec dispatches on.

    Each ``*_name`` is a definition of ``package`` (one an extension reuses
    from its base is read through the extension's ``models``, which imports
    it); the property without the suffix is its object.
    """

    package: str
    request_name: str
    """``JSONRPCRequest``: a request of a method the version does not know."""
    notification_name: str
    result_name: str
    """``Result``: a result whose method is not known."""
    error_name: str
    """``ERROR_MODEL``: an error object whose code has no model of its own."""
    result_arm_names: Mapping[str, str]
    """Results that may answer a request in place of its complete result, by
    tag. Stateless era: the tag is the result's ``resultType``. Handshake era:
    the tag is a member only that result has (``task``), and a request's
    method lists the arms that may answer it among its ``alternatives``."""
    requests: Mapping[str, RequestMethod]
    notifications: Mapping[str, NotificationMethod]
    error_model_names: Mapping[int, str]
    client_capabilities_name: str | None
    """``ClientCapabilities``: what a client declares it supports (None in
    an extension's tables)."""
    implementation_name: str | None
    """``Implementation``: a client's or server's name and version (None in
    an extension's tables)."""

    @cached_property
    def request(self) -> type[McpModel]:
        return definition(self.package, self.request_name)  # type: ignore[no-any-return]

    @cached_property
    def notification(self) -> type[McpModel]:
        return definition(self.package, self.notification_name)  # type: ignore[no-any-return]

    @cached_property
    def result(self) -> type[McpModel]:
        return definition(self.package, self.result_name)  # type: ignore[no-any-return]

    @cached_property
    def error(self) -> type[McpModel]:
        return definition(self.package, self.error_name)  # type: ignore[no-any-return]

    @cached_property
    def result_arms(self) -> Mapping[str, type[McpModel]]:
        return Definitions(self.package, self.result_arm_names)

    @cached_property
    def error_models(self) -> Mapping[int, type[McpModel]]:
        return Definitions(self.package, self.error_model_names)

    @cached_property
    def client_capabilities(self) -> type[McpModel] | None:
        name = self.client_capabilities_name
        return None if name is None else definition(self.package, name)

    @cached_property
    def implementation(self) -> type[McpModel] | None:
        name = self.implementation_name
        return None if name is None else definition(self.package, name)


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
    """Imports the package's tables and returns them."""
