"""The tools a ``tools/call``'s ``Mcp-Param-*`` headers are checked against
(`mcp_schema.session.peer.Peer.receive`): those the caller names, else those
the session last answered ``tools/list`` with, each read once into
`ToolHeaders`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Union

from pydantic import BaseModel

from mcp_schema.tool_headers import InvalidToolHeaderError, ToolHeaders, as_mapping

__all__ = ["Tool", "called_tool", "checked_tools"]

Tool = Union[Mapping[str, Any], BaseModel, ToolHeaders]
"""A tool's definition (a ``Tool`` model or its wire mapping), or its `ToolHeaders`."""


def called_tool(
    listed: dict[Any, Tool], params: object, tools: Iterable[Tool] | None
) -> Tool | None:
    """The tool a ``tools/call`` with ``params`` calls, among ``tools``, else
    among ``listed`` (those the session last listed, by name: each read once
    into `ToolHeaders`, kept there)."""
    name = params.get("name") if type(params) is dict else None
    if tools is None:
        found = listed.get(name) if isinstance(name, str) else None
        if found is None or isinstance(found, ToolHeaders):
            return found
        try:
            found = listed[name] = ToolHeaders(found)
        except InvalidToolHeaderError:
            pass  # the header check says what is wrong with it
        return found
    for tool in tools:
        if isinstance(tool, ToolHeaders):
            named = tool.name
        else:
            named = as_mapping(tool, "tool").get("name")
        if named == name:
            return tool
    return None


def checked_tools(tools: object) -> tuple[Tool, ...]:
    """``tools`` (what a caller of ``receive`` gave) as a tuple; ``TypeError``
    for what is no collection of tools."""
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise TypeError(f"tools must be a collection of tools, not {type(tools).__name__}")
    found = tuple(tools)
    for tool in found:
        if not isinstance(tool, (Mapping, BaseModel, ToolHeaders)):
            raise TypeError(f"a tool is a definition or ToolHeaders, not {type(tool).__name__}")
    return found
