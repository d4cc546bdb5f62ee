"""Entries of the generated method tables (hand-written runtime module).

Each version package's ``methods.py`` maps method names to these records, so
the codec can dispatch on ``method`` without knowing any version by heart.
A record names its definitions (the names they have in the package's
``models`` and ``validation.json``) and the package they live in: the codec
names its target once and validates with either view, and importing a table
imports no model. The properties give the objects, read from
``<package>.models`` on first use; no class is made here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcp_schema._args import check

if TYPE_CHECKING:  # naming a version (the registry) imports no pydantic
    from mcp_schema.base import McpModel

Sender = Literal["client", "server", "both"]

K = TypeVar("K")


def definition(package: str, name: str) -> Any:
    """The class or type alias ``name`` of ``<package>.models``."""
    check(package, str, "package")
    check(name, str, "name")
    return getattr(importlib.import_module(f"{package}.models"), name)


class Definitions(Mapping[K, "type[McpModel]"]):
    """A read-only mapping of keys to the models of ``package`` it names,
    each read from ``<package>.models`` when first looked up."""

    def __init__(self, package: str, names: Mapping[K, str]) -> None:
        self.package = package
        self.names = names
        self._found: dict[K, type[McpModel]] = {}

    def __getitem__(self, key: K) -> type[McpModel]:
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = definition(self.package, self.names[key])
        return found

    def __iter__(self) -> Iterator[K]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"Definitions({self.package!r}, {dict(self.names)!r})"


def lazy_definitions(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """``__getattr__`` (PEP 562) for ``module`` of a version package: each of
    ``names`` (attribute -> definition name) is read from the package's
    ``models`` on first use."""
    check(module, str, "module")
    check(names, Mapping, "names")
    package = module.rpartition(".")[0]

    def __getattr__(attribute: str) -> Any:
        if attribute not in names:
            raise AttributeError(f"module {module!r} has no attribute {attribute!r}")
        return definition(package, names[attribute])

    return __getattr__


@dataclass(frozen=True)
class RequestMethod:
    """A request method: its definitions and the results that may answer it."""

    method: str
    sender: Sender
    package: str
    """Where its definitions live: ``mcp_schema.v2026_07_28``, ``mcp_schema.v2026_07_28.tasks``."""
    request_name: str
    """The whole message (draft-07 schemas: the ``JSONRPC<Name>`` class)."""
    params_name: str | None
    result_name: str
    """The complete result: a class, or (Tasks ``tasks/get``) a union alias."""
    assumed_complete_name: str | None
    """The complete result read with ``assume_complete`` (``resultType``
    optional); None when the result does not require ``resultType``."""
    alternative_names: tuple[str, ...]
    """Results that may answer instead (input-required, task created)."""

    @cached_property
    def request(self) -> type[McpModel]:
        return definition(self.package, self.request_name)  # type: ignore[no-any-return]

    @cached_property
    def params(self) -> type[McpModel] | None:
        return None if self.params_name is None else definition(self.package, self.params_name)

    @cached_property
    def result(self) -> Any:
        """A model class or a union of them, ready for ``pydantic.TypeAdapter``."""
        return definition(self.package, self.result_name)

    @cached_property
    def assumed_complete(self) -> Any:
        if self.assumed_complete_name is None:
            return None
        return definition(self.package, self.assumed_complete_name)

    @cached_property
    def alternatives(self) -> tuple[type[McpModel], ...]:
        return tuple(definition(self.package, name) for name in self.alternative_names)


@dataclass(frozen=True)
class NotificationMethod:
    method: str
    sender: Sender
    package: str
    notification_name: str
    """The whole message (draft-07 schemas: the ``JSONRPC<Name>`` class)."""
    params_name: str | None

    @cached_property
    def notification(self) -> type[McpModel]:
        return definition(self.package, self.notification_name)  # type: ignore[no-any-return]

    @cached_property
    def params(self) -> type[McpModel] | None:
        return None if self.params_name is None else definition(self.package, self.params_name)


@dataclass(frozen=True)
class InputRequestMethod:
    """A request a server embeds in an input-required result (2026-07-28)."""

    method: str
    package: str
    request_name: str
    params_name: str | None

    @cached_property
    def request(self) -> type[McpModel]:
        return definition(self.package, self.request_name)  # type: ignore[no-any-return]

    @cached_property
    def params(self) -> type[McpModel] | None:
        return None if self.params_name is None else definition(self.package, self.params_name)
