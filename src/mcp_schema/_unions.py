"""Union validators of the generated models (hand-written runtime module;
`mcp_schema.base` exports them): `ResultTypeUnion` picks a result by its
``resultType``, `ByTag` tries only the arms that allow a tag's value."""

from __future__ import annotations

import typing
from typing import Annotated, Any

from pydantic import BaseModel, Discriminator, GetCoreSchemaHandler, Tag
from pydantic_core import CoreSchema, core_schema
from typing_extensions import is_typeddict

__all__ = ["DEFAULT_RESULT_TAG", "ByTag", "ResultTypeUnion"]

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
