"""A tool made of a function (hand-written runtime module): its definition
(``inputSchema`` and ``outputSchema`` from the type hints, the docstring as
its description), the check of a call's arguments against that very
``inputSchema`` before the function runs, and the conversion of what the
function returns into a ``CallToolResult``.

* Arguments: the published ``inputSchema`` (pydantic's, with
  ``additionalProperties: false`` unless the function takes ``**kwargs``) is
  compiled once by jsonschema-rs; a call it refuses is answered with a tool
  error result (``isError``) naming each argument at fault, as the
  specification's tools page has input validation errors reported, and the
  function never runs.
* Results: with an ``outputSchema`` (a return annotation; a model,
  ``TypedDict``, dataclass or ``dict[str, ...]`` as it is, any other type as
  ``{"result": ...}``, as the official SDK's ``MCPServer`` does), the value
  is checked by pydantic and becomes ``structuredContent``, its JSON (or
  the string itself) one text block of ``content``. Without one, a string
  is a text block, content blocks (``TextContent``, ``ImageContent``...)
  are the content, a ``CallToolResult`` is the result, anything else is
  written as JSON text.
* ``-> ToolResult[T]``: the ``outputSchema`` is ``T``'s, the function
  returns the ``content`` beside the ``structured`` value.
* `ToolError` raised by the function is an ``isError`` result with its
  message; see `mcp_schema.server.dispatch` for other exceptions.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import jsonschema_rs
import pydantic_core
from pydantic import BaseModel, TypeAdapter, ValidationError, create_model
from typing_extensions import is_typeddict

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.auth.scopes import needed
from mcp_schema.codec import to_wire
from mcp_schema.errors import clip
from mcp_schema.server.signature import Signature, native, unwrapped
from mcp_schema.tool_headers import ToolHeaders

__all__ = ["MAX_REPORTED", "Tool", "ToolError", "ToolResult", "error_result"]

MAX_REPORTED = 5
"""Argument problems named in one error result (the first ones found)."""

_CONTENT = (
    mcp.TextContent,
    mcp.ImageContent,
    mcp.AudioContent,
    mcp.EmbeddedResource,
    mcp.ResourceLink,
)
TaskMode = Literal[False, True, "required"]


T = TypeVar("T")


@dataclass(frozen=True)
class ToolResult(Generic[T]):
    """What a tool annotated ``-> ToolResult[T]`` returns to choose its
    content: ``content`` (a string, or content blocks) beside ``structured``,
    the value of its ``outputSchema`` (``T``'s)."""

    content: str | Sequence[Any]
    structured: T

    def __init__(self, content: str | Sequence[Any], structured: T) -> None:
        # A tool builds one per call: the fields written into the instance's
        # dict, not by the frozen class's object.__setattr__, twice the cost.
        fields = self.__dict__
        fields["content"] = content
        fields["structured"] = structured


class ToolError(Exception):
    """Raised by a tool function: the call is answered with an ``isError``
    result carrying this message (the tool failed, in words for the model)."""


def error_result(message: str) -> dict[str, Any]:
    """A ``CallToolResult`` telling the tool failed."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


class Tool:
    """The tool of ``function`` (see the module). ``task``: run as a task of
    the Tasks extension when the client takes one (``"required"``: only
    then; -32021 otherwise); ``structured``: False for no ``outputSchema``;
    ``scopes``: what a call needs (`mcp_schema.auth.Access`); ``inline``: a
    sync function runs in the event loop, not in a worker thread."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        context: type,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        task: TaskMode = False,
        enabled: bool = True,
        scopes: Collection[str] = (),
        inline: bool = False,
    ) -> None:
        if not callable(function):
            raise TypeError(f"a tool is a function, not {type(function).__name__}")
        self.function = function
        self.scopes = needed(scopes)
        self.name = name or function.__name__
        self.is_async = inspect.iscoroutinefunction(function)
        self.inline = inline
        self.task: TaskMode = task
        self.enabled = enabled
        self.signature = Signature(function, context, f"{self.name}Arguments")
        definition: dict[str, Any] = {"name": self.name}
        if title is not None:
            definition["title"] = title
        described = description if description is not None else inspect.getdoc(function)
        if described:
            definition["description"] = described
        definition["inputSchema"] = self.signature.schema
        returned = get_type_hints(function, include_extras=True).get(
            "return", inspect.Signature.empty
        )
        if get_origin(unwrapped(returned)) is ToolResult:
            (returned,) = get_args(unwrapped(returned))
        self._output: TypeAdapter[Any] | None = None
        self._checked_output: jsonschema_rs.Validator | None = None
        self._wrapped = False
        if structured is not False and _structured(returned):
            definition["outputSchema"] = self._output_schema(returned)
        if annotations:
            definition["annotations"] = dict(annotations)
        # An x-mcp-header clients would refuse is the author's mistake: here, now.
        self.headers = ToolHeaders(definition)
        self.definition = definition
        self._check = jsonschema_rs.Draft202012Validator(self.signature.schema)

    def _output_schema(self, returned: Any) -> dict[str, Any]:
        self._output = TypeAdapter(returned)
        published: dict[str, Any]
        if _object_like(unwrapped(returned)):
            published = self._output.json_schema()
        else:
            self._wrapped = True
            wrapper = create_model(f"{self.name}Output", result=(returned, ...))
            published = wrapper.model_json_schema()
        if native(returned, output=True):  # the value is its JSON: checked by the schema itself
            self._checked_output = jsonschema_rs.Draft202012Validator(published)
        return published

    def problems(self, arguments: Mapping[str, Any]) -> str | None:
        """What is wrong with ``arguments`` by the ``inputSchema`` (the first
        `MAX_REPORTED` problems, each naming its argument), or None."""
        if self._check.is_valid(arguments):
            return None
        found = []
        for error in self._check.iter_errors(arguments):
            path = ".".join(str(step) for step in error.instance_path)
            found.append(clip(f"{path}: {error.message}" if path else error.message))
            if len(found) == MAX_REPORTED:
                break
        return f"Invalid arguments for tool {self.name}: " + "; ".join(found)

    def result(self, value: Any) -> dict[str, Any]:
        """The ``CallToolResult`` of what the function returned; ``ValueError``
        when it does not fit the ``outputSchema`` (the tool's fault)."""
        content = None
        if type(value) is ToolResult:
            content = _content(value.content)
            value = value.structured
        if self._output is None:
            return _unstructured(value) if content is None else {"content": content}
        data = self._data(value)
        if content is None:
            text = data if isinstance(data, str) else pydantic_core.to_json(data).decode()
            content = [_text(text)]
        structured = {"result": data} if self._wrapped else data
        return {"content": content, "structuredContent": structured}

    def _data(self, value: Any) -> Any:
        """``value`` as the JSON of the ``outputSchema``; ``ValueError`` when it does not fit."""
        assert self._output is not None
        checked = self._checked_output
        if checked is not None:
            if checked.is_valid({"result": value} if self._wrapped else value):
                return value
            reason = "not what its outputSchema describes"
        else:
            try:
                return self._output.dump_python(
                    self._output.validate_python(value), mode="json", by_alias=True
                )
            except ValidationError as exc:
                reason = exc.errors(include_url=False)[0]["msg"]
        raise ValueError(f"tool {self.name} returned what its outputSchema refuses: {reason}")


def _structured(returned: Any) -> bool:
    """Whether a return annotation has an ``outputSchema``: any but none,
    ``None``, ``Any`` and what is content or a whole result already."""
    bare = unwrapped(returned)
    if bare in (inspect.Signature.empty, None, type(None), Any, object):
        return False
    if get_origin(bare) in (list, tuple, Union, types.UnionType):
        return not all(_content_type(a) for a in get_args(bare) if a is not Ellipsis)
    return not _content_type(bare)


def _content_type(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, (*_CONTENT, mcp.CallToolResult))


def _object_like(kind: Any) -> bool:
    """Whether values of ``kind`` are JSON objects (else wrapped in ``result``)."""
    if isinstance(kind, type) and (
        issubclass(kind, BaseModel) or is_typeddict(kind) or dataclasses.is_dataclass(kind)
    ):
        return True
    return get_origin(kind) is dict and get_args(kind)[:1] in ((), (str,))


def _unstructured(value: Any) -> dict[str, Any]:
    if type(value) is mcp.CallToolResult:
        return to_wire(value)
    return {"content": _content(value)}


def _content(value: Any) -> list[Any]:
    """The content blocks of ``value`` (not a ``CallToolResult``: its own content)."""
    # Exact types: an isinstance against a pydantic class is its metaclass's, slow.
    kind = type(value)
    if kind is str:
        return [{"type": "text", "text": value}]  # _text's, written here: one call less per call
    if value is None:
        return []
    if kind is mcp.CallToolResult:
        return to_wire(value)["content"]  # type: ignore[no-any-return]
    items = value if kind in (list, tuple) else [value]
    if items and all(type(item) in _CONTENT for item in items):
        return [to_wire(item) for item in items]
    return [_text(pydantic_core.to_json(value, fallback=str).decode())]
