"""A resource made of a function (hand-written runtime module): a fixed URI
(``resources/list``) or a URI template (``resources/templates/list``), whose
``{name}`` variables are the function's parameters (RFC 6570 simple
expansion: each matches one path segment, percent-decoded, then converted by
the parameter's annotation).

What the function returns becomes the ``contents`` of ``resources/read``: a
string is text (``mime_type``, else ``text/plain``), bytes a base64 blob,
resource contents models (``TextResourceContents``...) are the contents,
anything else JSON text (``application/json``). A URI no resource has is
-32602 naming it, as the specification's resources page says.
"""

from __future__ import annotations

import base64
import inspect
import re
from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import unquote

import pydantic_core

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.auth.scopes import needed
from mcp_schema.codec import to_wire
from mcp_schema.errors import InvalidParamsError
from mcp_schema.server.signature import Signature

__all__ = ["Resource", "not_found"]

_VARIABLE = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CONTENTS = (mcp.TextResourceContents, mcp.BlobResourceContents)


def not_found(uri: str) -> InvalidParamsError:
    return InvalidParamsError("Resource not found", {"uri": uri})


class Resource:
    """The resource of ``function`` at ``uri`` (see the module); ``ValueError``
    for a template whose variables are not the function's parameters;
    ``inline``: a sync function runs in the event loop, not in a worker thread."""

    def __init__(
        self,
        function: Callable[..., Any],
        uri: str,
        *,
        context: type,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        scopes: Collection[str] = (),
        inline: bool = False,
    ) -> None:
        self.function, self.uri, self.mime_type = function, uri, mime_type
        self.scopes = needed(scopes)
        self.is_async = inspect.iscoroutinefunction(function)
        self.inline = inline
        self.signature = Signature(function, context, f"{function.__name__}Resource")
        variables = _VARIABLE.findall(uri)
        self.template = bool(variables)
        definition: dict[str, Any] = {"uriTemplate" if variables else "uri": uri}
        definition["name"] = name or function.__name__
        for key, value in (("title", title), ("description", description), ("mimeType", mime_type)):
            if value is None and key == "description":
                value = inspect.getdoc(function)
            if value:
                definition[key] = value
        self.definition = definition
        named = {p.name for p in self.signature.params}
        required = {p.name for p in self.signature.params if p.required}
        if not all(_NAME.fullmatch(v) for v in variables) or len(set(variables)) < len(variables):
            raise ValueError(f"{uri}: template variables are distinct {{name}}s (RFC 6570 level 1)")
        if not required <= set(variables) <= named:
            raise ValueError(
                f"{uri}: the template's variables {sorted(variables)} must be the parameters "
                f"of {function.__name__} (it needs {sorted(required)})"
            )
        parts = _VARIABLE.split(uri)  # literal, variable, literal, ...
        if any(not parts[i] for i in range(2, len(parts) - 1, 2)):
            raise ValueError(f"{uri}: two variables side by side cannot be told apart")
        self._pattern = re.compile("".join(_piece(parts, i) for i in range(len(parts))))

    def match(self, uri: str) -> dict[str, Any] | None:
        """The arguments ``uri`` gives the function, or None when it is not this resource's."""
        if not self.template:
            return {} if uri == self.uri else None
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        try:
            return self.signature.arguments({k: unquote(v) for k, v in found.groupdict().items()})
        except ValueError:
            return None  # a segment the parameter's type refuses names no resource

    def contents(self, uri: str, value: Any) -> dict[str, Any]:
        """The ``ReadResourceResult`` of what the function returned for ``uri``."""
        items = value if isinstance(value, (list, tuple)) else [value]
        if items and all(isinstance(item, _CONTENTS) for item in items):
            return {"contents": [to_wire(item) for item in items]}
        entry: dict[str, Any] = {"uri": uri}
        if isinstance(value, (bytes, bytearray)):
            entry["blob"] = base64.b64encode(value).decode("ascii")
            entry["mimeType"] = self.mime_type or "application/octet-stream"
        elif isinstance(value, str):
            entry["text"] = value
            entry["mimeType"] = self.mime_type or "text/plain"
        else:
            entry["text"] = pydantic_core.to_json(value, fallback=str).decode()
            entry["mimeType"] = self.mime_type or "application/json"
        return {"contents": [entry]}


def _piece(parts: list[str], index: int) -> str:
    """The pattern of ``parts[index]``: a literal as it is; a variable, one
    segment up to the first character of the literal after it, which it
    never takes, so that a URI is matched in time linear in its length
    (a variable that could take it would backtrack over every place)."""
    part = parts[index]
    if index % 2 == 0:
        return re.escape(part)
    after = parts[index + 1][:1] if index + 1 < len(parts) else ""
    stop = "/" + ("" if after in ("", "/") else re.escape(after))
    return f"(?P<{part}>[^{stop}]+)"
