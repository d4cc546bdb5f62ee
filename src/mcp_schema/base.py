"""Building blocks of the generated models (hand-written runtime module).

The generated ``v*/models.py`` files are plain pydantic classes written in
terms of the few names below. They exist to make pydantic's behaviour match
JSON Schema exactly and losslessly:

* `McpModel` keeps unknown members (JSON Schema allows them unless it
  says otherwise) and reads wire names only when decoding, so an unknown key
  ``has_more`` is never mistaken for the field ``hasMore``; Python code
  constructs models by attribute name (wire names are accepted too, but type
  checkers know only the attribute names). Renamed members carry
  ``validation_alias=AliasChoices(wire)`` and ``serialization_alias=wire``
  rather than ``alias=wire``, which type checkers would take as the
  ``__init__`` parameter name (the pydantic mypy plugin also reads a plain
  string ``validation_alias`` that way; a one-name ``AliasChoices`` it leaves
  alone, and pydantic reads it exactly like the string).
* `Preset` marks a required member that construction fills in when it is
  left out (``jsonrpc``, a ``method`` or ``type`` with one allowed value, a
  complete result's ``resultType``); decoding still requires it on the wire.
  Construction also leaves out an `Omittable` member given ``None``.
* `Omittable` marks a member that may be absent but not null: absent reads
  as ``None`` and stays absent on output (``exclude_unset``), an explicit
  ``null`` is rejected as the schema demands.
* `Int` and `Number` are strict JSON numbers: no ``"1"`` -> 1 or
  ``true`` -> 1 coercion, ``5.0`` is a valid JSON Schema integer, and a JSON
  ``number`` keeps ``50`` an int (so it is re-encoded as ``50``, not ``50.0``).
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    GetCoreSchemaHandler,
    PlainSerializer,
    Tag,
)
from pydantic.fields import FieldInfo
from pydantic_core import CoreSchema, core_schema
from typing_extensions import Self, is_typeddict

from mcp_schema._exact import find_problem, is_json
from mcp_schema._exact import member as json_member

__all__ = [
    "CLOSED_DICT",
    "DEFAULT_RESULT_TAG",
    "MAX_EXACT_INTEGRAL_FLOAT",
    "OPEN_DICT",
    "AliasedModel",
    "ByTag",
    "ClosedModel",
    "Int",
    "JsonInt",
    "JsonNumber",
    "McpModel",
    "Number",
    "Omittable",
    "Preset",
    "ResultTypeUnion",
]

_T = TypeVar("_T")


def _check_unknown_members(model: BaseModel, path: str = "$") -> None:
    """``ValueError`` naming the first unknown member (of ``model`` or a model in
    it) that is not a JSON value. Typed members are validated by pydantic;
    unknown ones are kept as given, and only construction from Python can give
    a non-JSON one."""
    extra = model.__pydantic_extra__
    if extra:
        for name, value in extra.items():
            if not is_json(value):
                problem = find_problem(value, json_member(path, name))
                raise ValueError(f"unknown member {name!r} is not a JSON value: {problem}")
    values = model.__dict__
    fields = type(model).model_fields
    for name in model.__pydantic_fields_set__:
        value = values.get(name)
        if isinstance(value, (BaseModel, list)) and name in fields:
            here = json_member(path, fields[name].serialization_alias or name)
            if isinstance(value, BaseModel):
                _check_unknown_members(value, here)
            else:
                for index, item in enumerate(value):
                    if isinstance(item, BaseModel):
                        _check_unknown_members(item, f"{here}[{index}]")


def _checked_json(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None or (kind is dict and not value):
        return value  # the most common untyped values, without a call
    if is_json(value):
        return value
    # encode finds the path; model_dump_json users get pydantic's error.
    raise ValueError("not a JSON value (NaN, an infinity, a set, bytes, a non-string key...)")


_JSON_CHECKED = PlainSerializer(_checked_json, when_used="json")


def _untyped(annotation: Any) -> bool:
    """Whether a member's type leaves its values unchecked somewhere (``Any`` in it)."""
    if annotation is Any or isinstance(annotation, TypeVar):
        return True
    return any(_untyped(arg) for arg in typing.get_args(annotation) if arg is not Ellipsis)


class McpModel(BaseModel):
    """Base of every generated object model: open to unknown members."""

    model_config = ConfigDict(
        extra="allow",
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        defer_build=True,
        # Wire data never needs revalidation; models built in Python are
        # validated once by __init__.
        revalidate_instances="never",
        # A member assigned later is validated as construction validates it,
        # so a model holds what `encode` can write exactly (see __setattr__).
        validate_assignment=True,
    )

    def __init__(self, /, **data: Any) -> None:
        # Python callers may use attribute names or wire aliases; decoding
        # (model_validate / model_validate_json) reads aliases only. Presets
        # go in as if given, so exclude_unset still writes them.
        construction = _construction(type(self))
        for name, wire, value in construction.presets:
            if name not in data and wire not in data:
                data[name] = value
        for name, wire in construction.omittable:
            for key in (name, wire):
                if key in data and data[key] is None:
                    del data[key]
        self.__pydantic_validator__.validate_python(
            data, self_instance=self, by_name=True, by_alias=True
        )
        _check_unknown_members(self)

    # Pydantic hands raw input to a custom __init__ during model_validate,
    # which would let wire keys match attribute names; this marker keeps
    # decoding on pydantic's own path, so only construction reads names.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def __setattr__(self, name: str, value: Any) -> None:
        # An Omittable member set to None is left out, as construction leaves it out.
        if value is None and name in type(self).__mcp_omittable__:
            object.__setattr__(self, name, None)
            self.__pydantic_fields_set__.discard(name)
            return
        if name not in type(self).model_fields and not name.startswith("_") and not is_json(value):
            # An unknown member: pydantic would keep anything (and write a set
            # as an array, NaN as null).
            problem = find_problem(value, json_member("$", name))
            raise ValueError(f"unknown member {name!r} is not a JSON value: {problem}")
        super().__setattr__(name, value)

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """pydantic's ``model_validate``; unknown members given from Python (in
        the model or any model in it) must be JSON values, as decoded ones are."""
        model = super().model_validate(obj, *args, **kwargs)
        _check_unknown_members(model)
        return model

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; each member of ``update`` is assigned to it, so validated as an
        assignment is (pydantic's own ``model_copy`` validates none of them)."""
        copied = super().model_copy(deep=deep)
        for name, value in (update or {}).items():
            setattr(copied, name, value)
        return copied

    # What `mcp_schema.codec.encode` relies on. Typed members are validated at
    # construction and assignment; unknown members given from Python are
    # checked when given; untyped members (``Any``, ``dict[str, Any]``) are
    # checked for JSON when written as JSON (pydantic would write a set as an
    # array and NaN as null): the check is attached to them here.
    #
    # The class variables below are declared for type checkers only: pydantic
    # evaluates every annotation of a model's bases again for each subclass,
    # over a quarter of the time a version's classes take to create.
    if TYPE_CHECKING:
        __mcp_exact__: ClassVar[bool]
        __mcp_omittable__: ClassVar[frozenset[str]]
    __mcp_exact__ = True
    __mcp_omittable__ = frozenset()
    """The `Omittable` members: one holding ``None`` is not written."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        omittable: list[str] = []
        for name, info in cls.model_fields.items():
            if any(isinstance(marker, _NotNull) for marker in info.metadata):
                omittable.append(name)
            if _JSON_CHECKED not in info.metadata and _untyped(info.annotation):
                info.metadata.append(_JSON_CHECKED)
        cls.__mcp_omittable__ = frozenset(omittable)


class AliasedModel(McpModel):
    """An open model with an optional member whose attribute name is not its
    wire name: the only kind whose unknown members can be mistaken for one.

    Only these pay for a per-object hook; the generator picks the base.
    """

    if TYPE_CHECKING:  # not an annotation pydantic reads (see McpModel)
        __mcp_renamed__: ClassVar[tuple[frozenset[str], frozenset[str]]]
    __mcp_renamed__ = (frozenset(), frozenset())
    """(nullable, all) renamed optional members, worked out once per class:
    the hook below runs for every decoded object."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # A nullable renamed member records an explicit null, so that
        # model_post_init can tell it from the default (see there).
        nullable = _renamed_nullable(cls)
        for name in nullable:
            metadata = cls.model_fields[name].metadata
            if _MARK_NULL not in metadata:
                metadata.append(_MARK_NULL)
        cls.__mcp_renamed__ = (nullable, _renamed_optional(cls))

    def model_post_init(self, context: Any, /) -> None:
        # Pydantic puts every unknown key into fields_set. An unknown key that
        # equals an attribute name (wire "has_more" next to the field wire
        # "hasMore") would then mark that field as set, and exclude_unset
        # would emit "hasMore": null. A renamed member holding None beside its
        # twin was not given, so it is unset again; a nullable one that was
        # given as null holds _NULL until here, and stays set.
        nullable, renamed = self.__mcp_renamed__
        given_null: list[str] = []
        if nullable:
            values = vars(self)
            for name in nullable:
                if values.get(name) is _NULL:
                    values[name] = None
                    given_null.append(name)
        extra = self.__pydantic_extra__
        if extra:
            for name in renamed.intersection(extra):
                if getattr(self, name) is None and name not in given_null:
                    self.__pydantic_fields_set__.discard(name)


class _Construction(typing.NamedTuple):
    presets: tuple[tuple[str, str, Any], ...]
    """(attribute, wire name, value) of each member `Preset` fills in."""
    omittable: tuple[tuple[str, str], ...]
    """(attribute, wire name) of each `Omittable` member."""


_CONSTRUCTION: dict[type[BaseModel], _Construction] = {}


def _wire_name(name: str, info: FieldInfo) -> str:
    alias = info.serialization_alias
    return alias if alias is not None else name


def _construction(cls: type[BaseModel]) -> _Construction:
    found = _CONSTRUCTION.get(cls)
    if found is None:
        fields = cls.model_fields.items()
        found = _CONSTRUCTION[cls] = _Construction(
            presets=tuple(
                (name, _wire_name(name, info), marker.value)
                for name, info in fields
                for marker in info.metadata
                if isinstance(marker, _Preset)
            ),
            omittable=tuple(
                (name, _wire_name(name, info))
                for name, info in fields
                if any(isinstance(marker, _NotNull) for marker in info.metadata)
            ),
        )
    return found


def _renamed_optional(cls: type[BaseModel]) -> frozenset[str]:
    """Optional members whose attribute name is not the wire name.

    Aliases and defaults are known when the class is created, before its
    annotations are resolved, so this needs no schema build.
    """
    return frozenset(
        name
        for name, info in cls.model_fields.items()
        if _wire_name(name, info) != name and not info.is_required()
    )


class _Null:
    """An explicit null of a nullable renamed member, between validation and post-init."""

    __slots__ = ()


_NULL = _Null()
_MARK_NULL = AfterValidator(lambda value: _NULL if value is None else value)


def _renamed_nullable(cls: type[BaseModel]) -> frozenset[str]:
    """The renamed optional members that may also be null (not `Omittable`)."""
    return frozenset(
        name
        for name in _renamed_optional(cls)
        if not any(isinstance(m, _NotNull) for m in cls.model_fields[name].metadata)
    )


OPEN_DICT = ConfigDict(extra="allow")
"""Pydantic config of a generated TypedDict: unknown keys kept as parsed."""

CLOSED_DICT = ConfigDict(extra="forbid")
"""Pydantic config of a generated TypedDict whose schema forbids unlisted keys."""


class ClosedModel(McpModel):
    """An object model whose schema forbids members it does not list."""

    model_config = ConfigDict(extra="forbid")


class _NotNull:
    """Validate ``X | None`` as ``X``: the ``None`` is the absent default only."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        members = [arg for arg in typing.get_args(source) if arg is not type(None)]
        inner: Any = members[0] if len(members) == 1 else Union[tuple(members)]
        return handler.generate_schema(inner)


Omittable = Annotated[Union[_T, None], _NotNull()]
"""``Omittable[X]``: an optional member that must not be ``null`` when present."""


class _Preset:
    """The value construction fills in for a required member (see `Preset`)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return handler(source)


def Preset(value: Any, **field: Any) -> Any:
    """A required member that a model built in Python may leave out.

    ``method: Literal["tools/call"] = Preset("tools/call")``: decoding still
    requires the member, while construction fills in ``value`` (and counts it
    as set, so ``encode`` writes it). Type checkers see a default, so the
    ``__init__`` they synthesize makes the argument optional. ``field`` takes
    the other `pydantic.Field` options.
    """
    info: FieldInfo = Field(**field)
    info.metadata.append(_Preset(value))
    return info


class _Bounded:
    """A JSON number type with optional inclusive bounds."""

    __slots__ = ("ge", "le")

    def __init__(self, *, ge: float | None = None, le: float | None = None) -> None:
        self.ge = ge
        self.le = le

    def _int_arm(self) -> CoreSchema:
        # An int is within [ge, le] exactly when it is within [ceil(ge), floor(le)].
        return core_schema.int_schema(
            strict=True, ge=_int_bound(self.ge, math.ceil), le=_int_bound(self.le, math.floor)
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ge={self.ge!r}, le={self.le!r})"


MAX_EXACT_INTEGRAL_FLOAT = 2**53
"""Largest magnitude of a request id written as a float (``5.0``) that is read as the
int: from here on a double skips integers, so the id ``9007199254740993.0`` would become
another request (``mcp_schema.codec.decode`` refuses it, -32700)."""


class Int(_Bounded):
    """A JSON Schema ``integer``: strict, bounds kept, integral floats accepted.

    ``5.0`` and ``1e16`` are integers in JSON Schema; they are read as the ints
    ``5`` and ``10**16``, the same JSON values (the double's exact value, as
    every peer reads it).
    Use as ``Annotated[int, Int(ge=0)]``.
    """

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.union_schema(
            [
                self._int_arm(),
                core_schema.no_info_after_validator_function(
                    _integral,
                    core_schema.float_schema(
                        strict=True, allow_inf_nan=False, ge=self.ge, le=self.le
                    ),
                ),
            ],
            custom_error_type="json_integer",
            custom_error_message="Input should be a JSON integer" + _bounds_text(self.ge, self.le),
            serialization=core_schema.simple_ser_schema("int"),
        )


def _integral(value: float) -> int:
    # Not pydantic's multiple_of=1: it allows for rounding, so 5e-324 would pass
    # (and be read as 0).
    if not value.is_integer():
        raise ValueError("not an integer")
    return int(value)


class Number(_Bounded):
    """A JSON Schema ``number``: strict, finite, an int stays an int.

    Use as ``Annotated[float, Number(ge=0, le=1)]``.
    """

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.union_schema(
            [
                self._int_arm(),
                core_schema.float_schema(strict=True, allow_inf_nan=False, ge=self.ge, le=self.le),
            ],
            custom_error_type="json_number",
            custom_error_message="Input should be a finite JSON number"
            + _bounds_text(self.ge, self.le),
        )


def _int_bound(bound: float | None, rounding: typing.Callable[[float], int]) -> int | None:
    return None if bound is None else rounding(bound)


def _bounds_text(ge: float | None, le: float | None) -> str:
    parts = ([f">= {ge}"] if ge is not None else []) + ([f"<= {le}"] if le is not None else [])
    return (" " + " and ".join(parts)) if parts else ""


JsonInt = Annotated[int, Int()]
"""A JSON Schema ``integer`` without bounds."""

JsonNumber = Annotated[float, Number()]
"""A JSON Schema ``number`` without bounds."""

DEFAULT_RESULT_TAG = "complete"


class ResultTypeUnion:
    """Discriminate a union of results on ``resultType``.

    Annotate a union whose members carry ``pydantic.Tag``s: a ``resultType``
    among the tags selects the member tagged with it; any other value (or none)
    selects the member tagged ``"complete"``, the method's own result
    (``resultType`` is an open string in the schema).

    The known tags are looked up by pydantic-core straight from the input; only
    other values go through a Python discriminator, which has to turn the whole
    result into Python objects first.
    """

    def __init__(self, *tags: str) -> None:
        self.tags = frozenset(tags)

    def tag_of(self, value: Any) -> str:
        if isinstance(value, dict):
            result_type = value.get("resultType")
        else:
            result_type = getattr(value, "result_type", None)
        # resultType may be any JSON here; only a known string selects an arm.
        if isinstance(result_type, str) and result_type in self.tags:
            return result_type
        return DEFAULT_RESULT_TAG

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        members: dict[str, Any] = {}
        for member in typing.get_args(source):
            tag = next(m.tag for m in typing.get_args(member)[1:] if isinstance(m, Tag))
            members[tag] = typing.get_args(member)[0]
        native = core_schema.tagged_union_schema(
            {tag: handler.generate_schema(cls) for tag, cls in members.items()},
            discriminator="resultType",
        )
        fallback = handler.generate_schema(Annotated[source, Discriminator(self.tag_of)])
        return core_schema.union_schema([native, fallback], mode="left_to_right")


class ByTag:
    """Pick the arms of a union by the value of a member every arm requires.

    For a union whose arms all require ``key`` with one or a few allowed
    strings, but do not each have a value of their own (two arms allow
    ``"string"``, one allows ``"integer"`` and ``"number"``): the value in
    the input selects the arms that allow it, and only those are tried, as
    the plain union would try them (an arm that does not allow the value
    could not validate anyway). Pydantic's smart mode would otherwise
    validate the input against every arm: for a union of eight object arms,
    five times the cost of the one that matches.

    Use as ``Annotated[A | B | C, ByTag("type")]``, ``key`` being the wire
    name. Arms it cannot read (a forward reference) leave the union as it is.
    """

    def __init__(self, key: str) -> None:
        self.key = key

    def __repr__(self) -> str:
        return f"ByTag({self.key!r})"

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        groups: dict[str, list[Any]] = {}
        for arm in typing.get_args(source):
            values = _allowed_values(arm, self.key)
            if values is None:
                return handler(source)
            for value in values:
                groups.setdefault(value, []).append(arm)
        choices: dict[Any, CoreSchema] = {}
        for value, arms in groups.items():
            if len(arms) == 1:
                choices[value] = handler.generate_schema(arms[0])
            else:
                choices[value] = core_schema.union_schema(
                    [handler.generate_schema(arm) for arm in arms]
                )
        return core_schema.tagged_union_schema(choices, discriminator=self.key)


def _allowed_values(arm: Any, key: str) -> tuple[str, ...] | None:
    """The strings a model or TypedDict ``arm`` requires its member ``key`` to
    be (a ``Literal``), or None when it says otherwise."""
    annotation: Any = None
    if isinstance(arm, type) and issubclass(arm, BaseModel):
        for name, info in arm.model_fields.items():
            if (info.serialization_alias or name) == key and info.is_required():
                annotation = info.annotation
    elif is_typeddict(arm) and key in getattr(arm, "__required_keys__", ()):
        annotation = arm.__annotations__.get(key)
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is not typing.Literal:
        return None
    values = typing.get_args(annotation)
    return values if all(type(v) is str for v in values) else None
