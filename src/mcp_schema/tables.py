"""The records of the generated version tables (hand-written runtime module).

`mcp_schema.registry` lists every compiled version as a `CompiledVersion`;
its ``load`` imports the version package's ``tables`` and returns its
`VersionTables`. Each package's ``methods`` maps method names to
`RequestMethod`, `NotificationMethod` and `InputRequestMethod` records, so
the codec dispatches on ``method`` without knowing any version by heart.

A record names its definitions (the names they have in the package's
``models`` and ``validation.json``) and the package they live in: the codec
names its target once and validates with either view, and importing a table
imports no model. Every object a record names is read the one way, by
`definition`, from ``<package>.models`` on first use and then kept: a
record's `Lookup` attributes, the `Definitions` mappings, and the lazy
module attributes (`lazy_definitions`, `lazy_exports`) of the generated
modules. No class is made here.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar, cast, overload

from mcp_schema._args import check, strings

if TYPE_CHECKING:  # naming a version (the registry) imports no pydantic
    from typing_extensions import Self

    from mcp_schema.base import McpModel

__all__ = [
    "CompiledVersion",
    "Definitions",
    "Era",
    "InputRequestMethod",
    "Lookup",
    "NotificationMethod",
    "RequestMethod",
    "Sender",
    "VersionTables",
    "definition",
    "lazy_definitions",
    "lazy_exports",
]

Sender = Literal["client", "server", "both"]
"""Who sends a method, as its schema says."""

Era = Literal["handshake", "stateless"]
"""``handshake``: the version is negotiated by ``initialize`` and messages do
not name it. ``stateless``: every request names its version in ``params._meta``."""

K = TypeVar("K")
T = TypeVar("T")


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


class _Record(Protocol):
    @property
    def package(self) -> str: ...


class Lookup(Generic[T]):
    """A record's attribute that is what its field ``field`` names in the
    record's ``package``: a name gives its definition, None gives None, a
    tuple of names a tuple of definitions and a mapping of names a
    `Definitions`. Read on first use and kept on the record."""

    def __init__(self, field: str) -> None:
        self.field = field
        self.attribute = ""

    def __set_name__(self, owner: type, attribute: str) -> None:
        self.attribute = attribute

    @overload
    def __get__(self, record: None, owner: type) -> Self: ...
    @overload
    def __get__(self, record: _Record, owner: type | None = None) -> T: ...
    def __get__(self, record: _Record | None, owner: type | None = None) -> Self | T:
        if record is None:
            return self
        names = getattr(record, self.field)
        package = record.package
        if names is None:
            found: Any = None
        elif isinstance(names, str):
            found = definition(package, names)
        elif isinstance(names, tuple):
            found = tuple(definition(package, name) for name in names)
        else:
            found = Definitions(package, names)
        # Like functools.cached_property: the instance's own value hides this
        # (non-data) descriptor from then on; a frozen dataclass allows it.
        vars(record)[self.attribute] = found
        return cast(T, found)


def lazy_definitions(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """``__getattr__`` (PEP 562) for ``module`` of a version package: each of
    ``names`` (attribute -> definition name) is read from the package's
    ``models`` on first use."""
    check(module, str, "module")
    check(names, Mapping, "names")
    found = Definitions(module.rpartition(".")[0], names)

    def __getattr__(attribute: str) -> Any:
        if attribute not in names:
            raise AttributeError(f"module {module!r} has no attribute {attribute!r}")
        return found[attribute]

    return __getattr__


def lazy_exports(
    package: str, namespace: dict[str, Any], homes: Mapping[str, str], exported: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` (PEP 562) for a version package: a name
    in ``homes`` is read from the module it maps to, any other public name may
    be a module of the package; what is found is kept in ``namespace`` (the
    package's globals). Importing the package itself creates no class; type
    checkers read its ``TYPE_CHECKING`` imports instead, so a misspelt name is
    still an error."""
    check(package, str, "package")
    check(namespace, dict, "namespace")
    check(homes, Mapping, "homes")
    listed = frozenset(strings(exported, "exported") or ())

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is not None:
            value = getattr(importlib.import_module(f".{home}", package), name)
        elif not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}"):
            value = importlib.import_module(f".{name}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *listed})

    return __getattr__, __dir__


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

    request: ClassVar[Lookup[type[McpModel]]] = Lookup("request_name")
    params: ClassVar[Lookup[type[McpModel] | None]] = Lookup("params_name")
    result: ClassVar[Lookup[Any]] = Lookup("result_name")
    """A model class or a union of them, ready for ``pydantic.TypeAdapter``."""
    assumed_complete: ClassVar[Lookup[Any]] = Lookup("assumed_complete_name")
    alternatives: ClassVar[Lookup[tuple[type[McpModel], ...]]] = Lookup("alternative_names")


@dataclass(frozen=True)
class NotificationMethod:
    method: str
    sender: Sender
    package: str
    notification_name: str
    """The whole message (draft-07 schemas: the ``JSONRPC<Name>`` class)."""
    params_name: str | None

    notification: ClassVar[Lookup[type[McpModel]]] = Lookup("notification_name")
    params: ClassVar[Lookup[type[McpModel] | None]] = Lookup("params_name")


@dataclass(frozen=True)
class InputRequestMethod:
    """A request a server embeds in an input-required result (2026-07-28)."""

    method: str
    package: str
    request_name: str
    params_name: str | None

    request: ClassVar[Lookup[type[McpModel]]] = Lookup("request_name")
    params: ClassVar[Lookup[type[McpModel] | None]] = Lookup("params_name")


@dataclass(frozen=True)
class VersionTables:
    """The definitions of one version package that the codec dispatches on.

    Each ``*_name`` is a definition of ``package`` (one an extension reuses
    from its base is read through the extension's ``models``, which imports
    it); the attribute without the suffix is its object.
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

    request: ClassVar[Lookup[type[McpModel]]] = Lookup("request_name")
    notification: ClassVar[Lookup[type[McpModel]]] = Lookup("notification_name")
    result: ClassVar[Lookup[type[McpModel]]] = Lookup("result_name")
    error: ClassVar[Lookup[type[McpModel]]] = Lookup("error_name")
    result_arms: ClassVar[Lookup[Mapping[str, type[McpModel]]]] = Lookup("result_arm_names")
    error_models: ClassVar[Lookup[Mapping[int, type[McpModel]]]] = Lookup("error_model_names")
    client_capabilities: ClassVar[Lookup[type[McpModel] | None]] = Lookup(
        "client_capabilities_name"
    )
    implementation: ClassVar[Lookup[type[McpModel] | None]] = Lookup("implementation_name")


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
