"""A prompt made of a function (hand-written runtime module): its arguments
are the function's parameters (each a string on the wire, converted by its
annotation; described by ``Annotated[..., Field(description=...)]``), its
description the docstring.

``prompts/get`` with a required argument missing, one the prompt does not
take, or one its annotation refuses is -32602, as the specification's
prompts page says. What the function returns becomes the messages: a string
is one user message, a list of strings one user message each, messages
(mappings or ``PromptMessage`` models) are the messages, a
``GetPromptResult`` is the result.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.auth.scopes import needed
from mcp_schema.codec import to_wire
from mcp_schema.errors import InvalidParamsError
from mcp_schema.server.signature import Signature

__all__ = ["Prompt"]


class Prompt:
    """The prompt of ``function`` (see the module); ``inline``: a sync function
    runs in the event loop, not in a worker thread."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        context: type,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        scopes: Collection[str] = (),
        inline: bool = False,
    ) -> None:
        self.function = function
        self.inline = inline
        self.scopes = needed(scopes)
        self.name = name or function.__name__
        self.is_async = inspect.iscoroutinefunction(function)
        self.signature = Signature(function, context, f"{self.name}Prompt", strings=True)
        definition: dict[str, Any] = {"name": self.name}
        if title is not None:
            definition["title"] = title
        described = description if description is not None else inspect.getdoc(function)
        if described:
            definition["description"] = described
        arguments = []
        for param in self.signature.params:
            argument: dict[str, Any] = {"name": param.name, "required": param.required}
            if param.description:
                argument["description"] = param.description
            arguments.append(argument)
        if arguments:
            definition["arguments"] = arguments
        self.definition = definition
        self._names = frozenset(p.name for p in self.signature.params)

    def arguments(self, given: Mapping[str, str] | None) -> dict[str, Any]:
        """The function's keyword arguments; -32602 for what the prompt does not take."""
        given = dict(given or {})
        unknown = sorted(set(given) - self._names) if not self.signature.extra else []
        missing = [p.name for p in self.signature.params if p.required and p.name not in given]
        if unknown or missing:
            said = [
                f"missing {', '.join(missing)}" if missing else "",
                f"unknown {', '.join(unknown)}" if unknown else "",
            ]
            problem = "; ".join(s for s in said if s)
            raise InvalidParamsError(f"Invalid arguments for prompt {self.name}: {problem}")
        try:
            return self.signature.arguments(given)
        except ValueError as exc:
            raise InvalidParamsError(f"Invalid arguments for prompt {self.name}: {exc}") from None

    def result(self, value: Any) -> dict[str, Any]:
        """The ``GetPromptResult`` of what the function returned."""
        if isinstance(value, mcp.GetPromptResult):
            return to_wire(value)
        items = [value] if isinstance(value, (str, Mapping, mcp.PromptMessage)) else list(value)
        messages = [
            {"role": "user", "content": {"type": "text", "text": item}}
            if isinstance(item, str)
            else to_wire(item)
            if isinstance(item, mcp.PromptMessage)
            else dict(item)
            for item in items
        ]
        result: dict[str, Any] = {"messages": messages}
        if "description" in self.definition:
            result["description"] = self.definition["description"]
        return result
