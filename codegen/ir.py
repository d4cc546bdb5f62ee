"""The intermediate representation between JSON Schema and the templates.

``build.py`` turns one pinned schema into a :class:`Module`, ``methods.py``
reads its method tables off it, ``passes.py`` folds alias cycles and orders
the definitions, and the renderers (``render.py``, ``dicts.py``,
``strategies.py``, ``registry.py``, ``validation.py``) print the result from
the IR alone: a module carries what its pin says of it, and a
:class:`Registry` holds every module. Every value here is frozen: a step
returns a new module rather than changing the one it was given. Everything a
template needs is decided here (names, order, which union is discriminated
how), so the templates only lay text out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Union

JsonScalar = Union[str, int, float, bool, None]


class BuildError(RuntimeError):
    """A schema or pin the generator refuses, at any step: nothing is written."""


@dataclass(frozen=True)
class Scalar:
    """A JSON primitive, with the constraints JSON Schema puts on it."""

    kind: Literal["str", "int", "number", "bool", "null", "any"]
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None


@dataclass(frozen=True)
class Const:
    """``const`` or ``enum``: one of a fixed set of JSON values."""

    values: tuple[JsonScalar, ...]


@dataclass(frozen=True)
class Ref:
    """A class or alias of the same module (or reused from a base) by name."""

    name: str


@dataclass(frozen=True)
class Array:
    item: TypeExpr
    min_items: int | None = None
    max_items: int | None = None


@dataclass(frozen=True)
class Map:
    """A JSON object used as a dictionary: any keys, values of one type."""

    value: TypeExpr


@dataclass(frozen=True)
class Union_:
    """``anyOf``. ``discriminator`` names a member field whose const tells the
    members apart; ``result_type_tags`` (with it set to ``resultType``) maps each
    member to the ``resultType`` value it answers, ``None`` for the default arm."""

    members: tuple[TypeExpr, ...]
    discriminator: str | None = None
    result_type_tags: tuple[str | None, ...] | None = None
    by_required_key: bool = False
    """Every member requires a member no other one declares: the first arm
    that validates is the one (pydantic's smart mode would validate them all)."""
    by_tag: str | None = None
    """A member every arm requires with one or more allowed strings, shared
    by some arms: only the arms allowing the input's value are tried."""


TypeExpr = Union[Scalar, Const, Ref, Array, Map, Union_]


def refs(t: TypeExpr) -> set[str]:
    """The names a type expression references."""
    if isinstance(t, Ref):
        return {t.name}
    if isinstance(t, Array):
        return refs(t.item)
    if isinstance(t, Map):
        return refs(t.value)
    if isinstance(t, Union_):
        return set().union(*(refs(m) for m in t.members))
    return set()


@dataclass(frozen=True)
class Field:
    py_name: str
    wire_name: str
    type: TypeExpr
    required: bool
    nullable: bool
    format: str | None = None
    preset: JsonScalar | None = None
    """A required member's value when Python code builds the model without it:
    the only value its schema allows, or ``"complete"`` for ``resultType``."""


@dataclass(frozen=True)
class ModelClass:
    name: str
    origin: str  # where it comes from: "Tool" or "Tool.inputSchema"
    docs_url: str
    fields: tuple[Field, ...]
    closed: bool  # additionalProperties: false
    extra_type: TypeExpr | None = None  # additionalProperties: <schema>
    forward: frozenset[str] = frozenset()
    """Names it uses that are defined after it (set by ordering; quoted when printed)."""
    extends: str | None = None
    """The class of the same module it subclasses, for a class the generator
    derives from a schema's own (see ``envelopes.py``, ``assumed_complete.py``).
    ``fields`` still lists every member: the parent's in its order, some
    retyped, then its own; the model prints only those that differ. ``origin``
    then says in words what it adds."""


@dataclass(frozen=True)
class Alias:
    name: str
    docs_url: str
    type: TypeExpr
    recursive: bool = False  # part of a reference cycle: emitted lazily
    origin: str | None = None
    """For an alias the generator derives (``assumed_complete.py``): what it is,
    in words. None for a schema's own."""


Definition = Union[ModelClass, Alias]


@dataclass(frozen=True)
class RequestEntry:
    method: str
    sender: Literal["client", "server", "both"]
    request: str
    """The whole message: the schema's definition, or (draft-07) its ``JSONRPC<Name>``."""
    params: str | None
    results: tuple[str, ...]  # the complete result first, then the alternatives
    assumed_complete: str | None = None
    """The complete result read with ``assume_complete``: ``resultType`` optional
    (None when the result does not require it)."""


@dataclass(frozen=True)
class NotificationEntry:
    method: str
    sender: Literal["client", "server", "both"]
    notification: str
    """The whole message, as ``RequestEntry.request``."""
    params: str | None


@dataclass(frozen=True)
class ErrorCode:
    constant: str
    code: int
    model: str  # the model of the JSON-RPC ``error`` member for this code


@dataclass(frozen=True)
class MethodTables:
    """What ``methods.collect`` reads off a built module."""

    requests: tuple[RequestEntry, ...] = ()
    notifications: tuple[NotificationEntry, ...] = ()
    input_requests: tuple[NotificationEntry, ...] = ()
    error_codes: tuple[ErrorCode, ...] = ()
    error_model: str = "Error"
    """The model of an ``error`` member of a code without a model of its own."""


@dataclass(frozen=True)
class Module:
    key: str
    version: str
    package: str
    sha256: str
    source: str  # "repository @ commit : path"
    definitions: tuple[Definition, ...]
    """Classes and aliases: by name as built, in print order once ordered."""
    imported: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Definitions reused from a base package: name -> module it is imported from."""
    methods: MethodTables = MethodTables()
    base: str | None = None
    """The key of the schema an extension builds on; None for a version."""
    extension: str | None = None
    """An extension's id (``io.modelcontextprotocol/tasks``), from pins.json."""
    era: str | None = None
    """A version's ``handshake`` or ``stateless`` from pins.json (an
    extension's is its base's: see ``registry.era_of``)."""

    @property
    def classes(self) -> tuple[ModelClass, ...]:
        return tuple(d for d in self.definitions if isinstance(d, ModelClass))

    @property
    def aliases(self) -> tuple[Alias, ...]:
        return tuple(d for d in self.definitions if isinstance(d, Alias))

    @property
    def schema_names(self) -> tuple[str, ...]:
        """The schema's own definitions: neither inline objects nor derived ones."""
        return tuple(
            d.name
            for d in self.definitions
            if (d.origin == d.name if isinstance(d, ModelClass) else d.origin is None)
        )

    @property
    def def_count(self) -> int:
        return len(self.schema_names)


@dataclass(frozen=True)
class Registry:
    """Every built module, by pin key in pin order (bases before their
    extensions), and the digest of the ``schema/pins.json`` that lists them."""

    modules: Mapping[str, Module]
    pins_sha256: str

    def base_of(self, module: Module) -> Module | None:
        return None if module.base is None else self.modules[module.base]
