"""An MCP client over Streamable HTTP on mcp-schema's `HttpClient`:
``python examples/http_client.py http://127.0.0.1:3001/mcp``.

It connects as most clients want (2026-07-28 first, ``initialize`` when the
server is of the handshake era), lists the tools and calls each, then reads
each resource and gets each prompt the server offers, and prints one line
per answer. It declares elicitation, sampling and roots, and answers every
ask: a form with a value of each field's type, a fixed sentence, no roots.

The official conformance suite runs it as a client under test (``client
--command "python examples/http_client.py"``): the suite appends the URL,
and may name the tool calls to make in ``MCP_CONFORMANCE_CONTEXT`` (JSON
``{"toolCalls": [{"name": ..., "arguments": {...}}]}``) and the protocol
version to speak in ``MCP_CONFORMANCE_PROTOCOL_VERSION``. Needs the ``http``
extra (httpx)."""

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from mcp_schema.codec import to_wire
from mcp_schema.errors import McpError
from mcp_schema.http.binding import Mode
from mcp_schema.http.client import HttpClient
from mcp_schema.session import InputRequested
from mcp_schema.versions import STATELESS_VERSIONS

INFO = {"name": "example-http-client", "version": "1.0.0"}
CAPABILITIES: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
SAMPLES: dict[str, Any] = {"boolean": True, "integer": 1, "number": 1, "string": "yes"}


def sample(schema: object) -> Any:
    """A value the JSON Schema ``schema`` (one property's) accepts, for the simple ones."""
    if not isinstance(schema, Mapping):
        return "yes"
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    return SAMPLES.get(kind if isinstance(kind, str) else "string", "yes")


def arguments(schema: object) -> dict[str, Any]:
    """A value of each required property of an object schema."""
    if not isinstance(schema, Mapping):
        return {}
    properties = schema.get("properties")
    required = schema.get("required")
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return {}
    return {name: sample(properties.get(name)) for name in required if isinstance(name, str)}


async def answer(event: InputRequested) -> dict[str, Any]:
    """Every ask of the server answered, keyed as asked."""
    answers: dict[str, Any] = {}
    for key, asked in event.requests.items():
        method = getattr(asked, "method", None)
        params = to_wire(asked).get("params") or {}
        if method == "elicitation/create":
            fields = (params.get("requestedSchema") or {}).get("properties") or {}
            content = {name: sample(field) for name, field in fields.items()}
            answers[key] = {"action": "accept", "content": content}
        elif method == "sampling/createMessage":
            reply = {"type": "text", "text": "a word"}
            answers[key] = {"role": "assistant", "content": reply, "model": "example"}
        else:  # roots/list
            answers[key] = {"roots": []}
    return answers


def mode_of(version: str | None) -> tuple[Mode, list[str] | None]:
    """How to connect when asked for ``version`` (auto, every version, when not)."""
    if not version:
        return "auto", None
    return ("stateless" if version in STATELESS_VERSIONS else "handshake"), [version]


def said(what: str, result: Any) -> None:
    print(what, json.dumps(to_wire(result))[:400])


async def run(url: str, context: Mapping[str, Any], version: str | None) -> None:
    mode, versions = mode_of(version)
    async with HttpClient(
        url,
        info=INFO,
        capabilities=CAPABILITIES,
        versions=versions,
        mode=mode,
        on_input=answer,
    ) as client:
        offered = client.session.server_capabilities or {}
        print("connected", client.session.version)
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in getattr(listed, "tools", [])}
        calls = context.get("toolCalls")
        if not isinstance(calls, list):
            schemas = {name: to_wire(tool) for name, tool in tools.items()}
            calls = [
                {"name": n, "arguments": arguments(t.get("inputSchema"))}
                for n, t in schemas.items()
            ]
        for call in calls:
            try:
                said(
                    f"tools/call {call['name']}",
                    await client.call_tool(call["name"], call.get("arguments")),
                )
            except McpError as err:
                print(f"tools/call {call['name']} failed: {err.message}")
        if "resources" in offered:
            resources = await client.request("resources/list", {})
            for resource in getattr(resources, "resources", []):
                said(
                    f"resources/read {resource.uri}",
                    await client.request("resources/read", {"uri": resource.uri}),
                )
        if "prompts" in offered:
            prompts = await client.request("prompts/list", {})
            for prompt in getattr(prompts, "prompts", []):
                needed = {a.name: "x" for a in (prompt.arguments or []) if a.required}
                params = {"name": prompt.name, "arguments": needed}
                said(f"prompts/get {prompt.name}", await client.request("prompts/get", params))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/http_client.py URL")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    asyncio.run(run(sys.argv[1], context, os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")))


if __name__ == "__main__":
    main()
