"""The messages the benchmark decodes: official examples, synthetic payloads, captured sessions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from mcp_schema import versions
from mcp_schema.tables import VersionTables

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT.parent / "shared" / "mcp-spec"
CAPTURES = ROOT / "tests" / "data" / "captures"

# The versions the bench data is in: the official examples and the captured
# sessions (tests/data/captures) were recorded in these.
LATEST = "2026-07-28"
HANDSHAKE = "2025-11-25"

Kind = Literal["request", "notification", "result", "error"]
Direction = Literal["c2s", "s2c"]


def tables(version: str) -> VersionTables:
    """The method tables of a compiled version, from the registry."""
    compiled = versions.protocol(version)
    assert compiled is not None, f"{version} is not compiled"
    return compiled.load()


@dataclass(frozen=True)
class Msg:
    """One JSON-RPC message and what a decoder may be told about it in advance."""

    raw: bytes
    kind: Kind
    direction: Direction
    method: str | None
    """The message's method, or for a response the method of the request it answers."""
    version: str
    definition: str | None = None
    """The schema ``$defs`` name of the whole message, when it has one."""


@dataclass(frozen=True)
class Workload:
    name: str
    group: Literal["example", "synthetic", "session"]
    version: str
    messages: tuple[Msg, ...]

    @property
    def session(self) -> bool:
        return self.group == "session"

    @property
    def size(self) -> int:
        return sum(len(m.raw) for m in self.messages)


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def kind_of(message: dict[str, Any]) -> Kind:
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "error" if "error" in message else "result"


def _sender_direction(version: str, method: str, kind: Kind) -> Direction:
    package = tables(version)
    table = package.requests if kind == "request" else package.notifications
    entry = table.get(method)
    return "s2c" if entry is not None and entry.sender == "server" else "c2s"


# -- official 2026-07-28 examples ---------------------------------------------


def _result_methods(version: str) -> dict[str, str]:
    """``CallToolResult`` -> ``tools/call``: the method answered by each result class."""
    return {entry.result_name: method for method, entry in tables(version).requests.items()}


def examples(version: str = LATEST) -> Iterator[Workload]:
    by_result = _result_methods(version)
    root = SPEC_DIR / version / "examples"
    for path in sorted(root.glob("*/*.json")):
        message = json.loads(path.read_bytes())
        if not isinstance(message, dict) or "jsonrpc" not in message:
            continue
        definition = path.parent.name
        kind = kind_of(message)
        method: str | None = message.get("method")
        direction: Direction = "s2c"
        if kind in ("request", "notification") and method is not None:
            direction = _sender_direction(version, method, kind)
        if kind == "result":
            method = by_result.get(definition.removesuffix("Response"))
        msg = Msg(dumps(message), kind, direction, method, version, definition)
        yield Workload(f"ex:{definition}/{path.stem}", "example", version, (msg,))


# -- synthetic payloads ----------------------------------------------------------

_META = {
    versions.PROTOCOL_VERSION_KEY: LATEST,
    "io.modelcontextprotocol/clientInfo": {"name": "bench-client", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def tools_call_request() -> Workload:
    message = {
        "jsonrpc": "2.0",
        "id": 42,
        "method": "tools/call",
        "params": {
            "_meta": _META,
            "name": "get_forecast",
            "arguments": {"city": "Paris", "units": "metric", "days": 3},
        },
    }
    msg = Msg(dumps(message), "request", "c2s", "tools/call", LATEST, "CallToolRequest")
    return Workload("tools/call request (small args)", "synthetic", LATEST, (msg,))


def _input_schema(i: int) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "query": {
            "type": "string",
            "description": f"Search text for operation {i}.",
            "minLength": 1,
            "maxLength": 512,
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100,
            "default": 20,
            "description": "Maximum number of items to return.",
        },
        "sort": {
            "type": "string",
            "enum": ["relevance", "created", "updated"],
            "default": "relevance",
        },
        "filters": {
            "type": "object",
            "description": "Optional filters applied before ranking.",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                "since": {"type": "string", "format": "date-time"},
                "owner": {"type": "string", "pattern": "^[a-z][a-z0-9_-]{2,31}$"},
            },
            "additionalProperties": False,
        },
    }
    if i % 3 == 0:
        properties["dryRun"] = {"type": "boolean", "default": False}
    if i % 5 == 0:
        properties["threshold"] = {"type": "number", "minimum": 0, "maximum": 1}
    return {
        "type": "object",
        "properties": properties,
        "required": ["query"],
        "additionalProperties": False,
    }


def _tool(i: int) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": f"service_{i // 10}_operation_{i}",
        "title": f"Operation {i}",
        "description": (
            f"Runs operation {i} of service {i // 10} against the workspace and "
            "returns matching items, newest first. Read-only unless dryRun is false."
        ),
        "inputSchema": _input_schema(i),
        "annotations": {
            "readOnlyHint": i % 2 == 0,
            "idempotentHint": True,
            "openWorldHint": i % 7 == 0,
        },
    }
    if i % 4 == 0:
        tool["outputSchema"] = {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "object"}},
                "total": {"type": "integer"},
            },
            "required": ["items"],
        }
    if i % 10 == 0:
        tool["icons"] = [
            {
                "src": f"https://example.com/icons/{i}.png",
                "mimeType": "image/png",
                "sizes": ["48x48"],
            }
        ]
    return tool


def tools_list_result(count: int = 500) -> Workload:
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "resultType": "complete",
            "tools": [_tool(i) for i in range(count)],
            "ttlMs": 300000,
            "cacheScope": "public",
        },
    }
    msg = Msg(dumps(message), "result", "s2c", "tools/list", LATEST, "ListToolsResultResponse")
    return Workload(f"tools/list result ({count} tools)", "synthetic", LATEST, (msg,))


def resources_read_result(size: int = 1 << 20) -> Workload:
    lines: list[str] = []
    total = 0
    i = 0
    while total < size:
        line = f'{i:06d}: let value = "the quick brown fox\\tjumps"; // over the lazy dog\n'
        lines.append(line)
        total += len(line)
        i += 1
    text = "".join(lines)[:size]
    message = {
        "jsonrpc": "2.0",
        "id": "read-1",
        "result": {
            "resultType": "complete",
            "contents": [
                {"uri": "file:///project/big.rs", "mimeType": "text/x-rust", "text": text}
            ],
        },
    }
    msg = Msg(
        dumps(message), "result", "s2c", "resources/read", LATEST, "ReadResourceResultResponse"
    )
    return Workload("resources/read result (1 MiB text)", "synthetic", LATEST, (msg,))


def deep_call_tool_result(depth: int = 50) -> Workload:
    node: dict[str, Any] = {"leaf": True, "values": [1, 2.5, "x", None]}
    for level in range(depth, 0, -1):
        node = {"level": level, "label": f"node-{level}", "child": node}
    message = {
        "jsonrpc": "2.0",
        "id": 9,
        "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "nested result"}],
            "structuredContent": node,
            "isError": False,
        },
    }
    msg = Msg(dumps(message), "result", "s2c", "tools/call", LATEST, "CallToolResultResponse")
    return Workload(f"CallToolResult (structuredContent {depth} deep)", "synthetic", LATEST, (msg,))


def ping_result() -> Workload:
    """The smallest response there is: an empty result answering ``ping``."""
    message = {"jsonrpc": "2.0", "id": 1, "result": {}}
    msg = Msg(dumps(message), "result", "s2c", "ping", HANDSHAKE, "EmptyResult")
    return Workload("ping result (2025-11-25)", "synthetic", HANDSHAKE, (msg,))


def elicitation_request() -> Workload:
    """The form elicitation the official Python SDK sent in its captured
    session: small, but its form's element schemas are a union of eight arms."""
    sent = session("python-2025-11-25").messages
    msg = next(m for m in sent if m.method == "elicitation/create" and m.kind == "request")
    return Workload("elicitation/create request (2025-11-25)", "synthetic", HANDSHAKE, (msg,))


def synthetic() -> list[Workload]:
    return [
        ping_result(),
        elicitation_request(),
        tools_call_request(),
        tools_list_result(),
        resources_read_result(),
        deep_call_tool_result(),
    ]


# -- captured official-SDK sessions ---------------------------------------------------


def _opposite(direction: Direction) -> Direction:
    return "s2c" if direction == "c2s" else "c2s"


def session(name: str) -> Workload:
    """A captured session, each response paired with the method of its request."""
    pending: dict[tuple[str, type, Any], str] = {}
    messages: list[Msg] = []
    version = HANDSHAKE
    for line in (CAPTURES / f"{name}.jsonl").read_text().splitlines():
        record = json.loads(line)
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        direction: Direction = record["dir"]
        version = record.get("version", version)
        kind = kind_of(message)
        method: str | None = message.get("method")
        if kind == "request":
            pending[(direction, type(message["id"]), message["id"])] = str(method)
        elif kind in ("result", "error"):
            key = (_opposite(direction), type(message.get("id")), message.get("id"))
            method = pending.pop(key, None)
        messages.append(Msg(dumps(message), kind, direction, method, version))
    return Workload(f"session:{name}", "session", version, tuple(messages))


def sessions() -> list[Workload]:
    return [
        session("python-2025-11-25"),
        session("typescript-2025-11-25"),
        session("python-2026-07-28"),
    ]


def all_workloads() -> list[Workload]:
    return [*examples(), *synthetic(), *sessions()]
