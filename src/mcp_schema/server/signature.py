"""The parameters of an author's function, read once at decoration: the JSON
Schema of its arguments (through pydantic), which parameter takes the
`mcp_schema.server.Context`, and how an argument the schema accepted becomes
the Python value the function is called with (hand-written runtime module).

The schema is what clients see and what the arguments are checked against
(`mcp_schema.server.tools`); the conversion after it is pydantic's, and only
where a JSON value is not already the value the annotation names (a
``datetime`` from its string, a model from its object): a ``str``, ``float``,
``bool`` or a list or mapping of them is passed as it came.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    TypeAdapter,
    ValidationError,
    create_model,
)
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema
from typing_extensions import is_typeddict

__all__ = ["Header", "Param", "Signature", "is_context", "native", "unwrapped"]


@dataclass(frozen=True)
class Header:
    """``Annotated[str, Header("Region")]``: the argument is mirrored in the
    ``Mcp-Param-Region`` HTTP header (the ``x-mcp-header`` annotation of
    2026-07-28, `mcp_schema.tool_headers`)."""

    name: str

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        value = handler(schema)
        value["x-mcp-header"] = self.name
        return value


def unwrapped(annotation: Any) -> Any:
    """``annotation`` without its ``Annotated`` layers."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def is_context(annotation: Any, context: type) -> bool:
    """Whether ``annotation`` names ``context`` (or ``context | None``)."""
    annotation = unwrapped(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return any(is_context(a, context) for a in get_args(annotation) if a is not type(None))
    return isinstance(annotation, type) and issubclass(annotation, context)


_NATIVE = (str, float, bool, type(None))


def native(annotation: Any, *, output: bool = False) -> bool:
    """Whether every JSON value the schema of ``annotation`` accepts is
    already the Python value pydantic would make of it: then the value
    needs no conversion. An argument's ``int`` is not (JSON Schema takes
    ``1.0`` for an integer); an ``output`` one is (an ``int`` is its JSON)."""
    annotation = unwrapped(annotation)
    if annotation in _NATIVE or annotation is Any or annotation is object:
        return True
    if annotation is int:
        return output
    if is_typeddict(annotation):
        return all(native(a, output=output) for a in get_type_hints(annotation).values())
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return all(isinstance(a, str) or a is None for a in args)
    if origin in (Union, types.UnionType):
        return all(native(a, output=output) for a in args)
    if origin is list:
        return not args or native(args[0], output=output)
    if origin is dict:
        return not args or (args[0] is str and native(args[1], output=output))
    return False


@dataclass(frozen=True)
class Param:
    """One parameter: its name (the argument's), whether it must be given,
    and its conversion (None: the JSON value as it is)."""

    name: str
    required: bool
    convert: Callable[[Any], Any] | None
    description: str | None


class Signature:
    """The parameters of ``function`` (see the module); ``context``: the class
    whose parameter is injected, not an argument. ``TypeError`` for a
    parameter that cannot be an argument (``*args``, positional-only).
    ``strings``: the arguments come as strings (a prompt's), so every
    parameter but a ``str`` one is converted."""

    def __init__(
        self,
        function: Callable[..., Any],
        context: type,
        model_name: str,
        *,
        strings: bool = False,
    ) -> None:
        hints = get_type_hints(function, include_extras=True)
        self.context: str | None = None
        self.extra = False  # **kwargs: arguments beyond the named ones are passed on
        fields: dict[str, Any] = {}
        params: list[Param] = []
        for parameter in inspect.signature(function).parameters.values():
            annotation = hints.get(parameter.name, Any)
            if is_context(annotation, context):
                self.context = parameter.name
                continue
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                self.extra = True
                continue
            if parameter.kind in (
                inspect.Parameter.VAR_POSITIONAL,
                inspect.Parameter.POSITIONAL_ONLY,
            ):
                raise TypeError(
                    f"{function.__name__}: parameter {parameter.name!r} cannot be named"
                )
            default = parameter.default
            required = default is inspect.Parameter.empty
            # A name pydantic's BaseModel holds is the alias of a field named otherwise.
            alias = parameter.name if hasattr(BaseModel, parameter.name) else None
            info = Field(... if required else default, alias=alias)
            fields["f_" + parameter.name if alias else parameter.name] = (annotation, info)
            as_is = unwrapped(annotation) in (str, Any) if strings else native(annotation)
            convert = None if as_is else TypeAdapter(annotation).validate_python
            params.append(Param(parameter.name, required, convert, _description(annotation)))
        self.params = tuple(params)
        config = ConfigDict(extra="allow" if self.extra else "forbid")
        model: type[BaseModel] = create_model(model_name, __config__=config, **fields)
        self.schema: dict[str, Any] = model.model_json_schema(by_alias=True)
        self._converted = tuple(p for p in params if p.convert is not None)

    def arguments(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the call, from arguments the schema
        accepted; ``ValueError`` naming the argument pydantic cannot convert."""
        kwargs = dict(given)
        for param in self._converted:
            if param.name in kwargs:
                assert param.convert is not None
                try:
                    kwargs[param.name] = param.convert(kwargs[param.name])
                except ValidationError as exc:
                    reason = exc.errors(include_url=False)[0]["msg"]
                    raise ValueError(f"{param.name}: {reason}") from None
        return kwargs


def _description(annotation: Any) -> str | None:
    """The ``Field(description=...)`` of an ``Annotated`` parameter."""
    if get_origin(annotation) is not Annotated:
        return None
    for extra in get_args(annotation)[1:]:
        if isinstance(extra, FieldInfo) and extra.description:
            return extra.description
    return None
