"""The fixtures of the official MCP conformance suite, served over Streamable
HTTP on 127.0.0.1 with the standard library and mcp-schema alone:
``python examples/conformance_server.py [PORT]`` serves ``/mcp``.

Every POST body is decoded by the session's `Correlator`; every request is
answered on an event stream, which also carries the notifications and the
server's own requests (sampling, elicitation) made while it runs. The client
POSTs the answers to those, and they come back typed, paired by id.
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel

from mcp_schema import v2025_11_25 as mcp
from mcp_schema.codec import Correlator, encode, message_kind, reply
from mcp_schema.errors import InternalError, InvalidParamsError, McpError, MethodNotFoundError

MAX_BODY = 1 << 20
LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]"}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
NONE: dict[str, Any] = {"type": "object", "properties": {}}
STRING = {"type": "string"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(name: str, schema: dict[str, Any] = NONE) -> dict[str, Any]:
    return {"name": name, "description": f"Conformance fixture {name}", "inputSchema": schema}


def asking(*required: str) -> dict[str, Any]:
    props = {name: STRING for name in required}
    return {"type": "object", "properties": props, "required": list(required)}


ADDRESS = {"type": "object", "properties": {"street": STRING, "city": STRING}}
SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": ADDRESS},
    "properties": {"name": STRING, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}
DEFAULTS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
}
OPTIONS = ["option1", "option2", "option3"]
TITLED = [{"const": f"value{n}", "title": f"Option {n}"} for n in (1, 2, 3)]
ENUMS = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": OPTIONS},
        "titledSingle": {"type": "string", "oneOf": TITLED},
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": OPTIONS}},
        "titledMulti": {"type": "array", "items": {"anyOf": TITLED}},
    },
}
ELICITED = {
    "test_elicitation": asking("username", "email"),
    "test_elicitation_sep1034_defaults": DEFAULTS,
    "test_elicitation_sep1330_enums": ENUMS,
}
TOOLS = [
    *(tool(f"test_{name}") for name in ("simple_text", "image_content", "audio_content")),
    *(tool(f"test_{name}") for name in ("embedded_resource", "multiple_content_types")),
    *(tool(f"test_{name}") for name in ("tool_with_logging", "tool_with_progress")),
    tool("test_error_handling"),
    tool("test_sampling", asking("prompt")),
    tool("test_elicitation", asking("message")),
    *(tool(name) for name in ELICITED if name != "test_elicitation"),
    tool("json_schema_2020_12_tool", SCHEMA_2020_12),
]
EMBEDDED = {"uri": "test://embedded-resource", "mimeType": "text/plain"}
MIXED = {"uri": "test://mixed-content-resource", "mimeType": "application/json"}
IMAGE = {"type": "image", "data": PNG, "mimeType": "image/png"}
CONTENT: dict[str, list[dict[str, Any]]] = {
    "test_simple_text": [text("This is a simple text response for testing.")],
    "test_image_content": [IMAGE],
    "test_audio_content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}],
    "test_embedded_resource": [
        {
            "type": "resource",
            "resource": {**EMBEDDED, "text": "This is an embedded resource content."},
        }
    ],
    "test_multiple_content_types": [
        text("Multiple content types test:"),
        IMAGE,
        {"type": "resource", "resource": {**MIXED, "text": '{"test":"data","value":123}'}},
    ],
}
STATIC_TEXT = {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"}
STATIC_BINARY = {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"}
WATCHED = {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain"}
RESOURCES = [
    {**r, "description": f"Fixture {r['name']}"} for r in (STATIC_TEXT, STATIC_BINARY, WATCHED)
]
TEMPLATE = {
    "uriTemplate": "test://template/{id}/data",
    "name": "template",
    "description": "Fixture template",
    "mimeType": "application/json",
}
ARGS = [{"name": "arg1", "required": True}, {"name": "arg2", "required": True}]
PROMPTS = [
    {"name": "test_simple_prompt", "description": "Fixture prompt"},
    {"name": "test_prompt_with_arguments", "description": "Fixture prompt", "arguments": ARGS},
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "Fixture prompt",
        "arguments": [{"name": "resourceUri", "required": True}],
    },
    {"name": "test_prompt_with_image", "description": "Fixture prompt"},
]
CAPABILITIES = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": True, "listChanged": False},
    "prompts": {"listChanged": False},
    "logging": {},
    "completions": {},
}


class Stream:
    """One POST's event stream: the response to its request, and whatever the
    server sends while answering it."""

    def __init__(self, handler: BaseHTTPRequestHandler, session: Session) -> None:
        self.handler, self.session = handler, session
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Mcp-Session-Id", session.id)
        handler.end_headers()
        # The priming event: an id and no data, and how long a client should
        # wait before reconnecting (SSE polling of Streamable HTTP).
        handler.wfile.write(f"id: {uuid.uuid4().hex}\nretry: 1000\ndata:\n\n".encode())
        handler.wfile.flush()

    def send(self, message: BaseModel) -> None:
        self.handler.wfile.write(b"event: message\ndata: " + encode(message) + b"\n\n")
        self.handler.wfile.flush()

    def ask(self, params: mcp.CreateMessageRequestParams | mcp.ElicitRequestFormParams) -> Any:
        """Send a server-initiated request and wait for the client's answer."""
        rid = f"server-{next(self.session.ids)}"
        if isinstance(params, mcp.CreateMessageRequestParams):
            request: BaseModel = mcp.CreateMessageRequest(id=rid, params=params)
        else:
            request = mcp.ElicitRequest(id=rid, params=params)
        answer: queue.Queue[Any] = queue.Queue(maxsize=1)
        with self.session.lock:
            self.session.peer.decode(encode(request))  # so the answer decodes typed
            self.session.waiting[rid] = answer
        self.send(request)
        try:
            return getattr(answer.get(timeout=30), "result", None)
        except queue.Empty:
            with self.session.lock:
                self.session.waiting.pop(rid, None)
            raise InternalError("the client did not answer", {"id": rid}) from None


class Session:
    """What one ``Mcp-Session-Id`` remembers: the ids in flight both ways."""

    def __init__(self) -> None:
        self.id, self.lock, self.ids = uuid.uuid4().hex, threading.Lock(), itertools.count(1)
        self.peer = Correlator(version=mcp.VERSION)
        self.waiting: dict[str | int, queue.Queue[Any]] = {}


def call_tool(params: mcp.CallToolRequestParams, out: Stream) -> dict[str, Any]:
    name, args = params.name, params.arguments or {}
    if name in CONTENT:
        return {"content": CONTENT[name]}
    if name == "test_error_handling":
        return {
            "isError": True,
            "content": [text("This tool intentionally returns an error for testing")],
        }
    if name == "test_tool_with_logging":
        for step, said in enumerate(("started", "processing data", "execution completed")):
            time.sleep(0.05 if step else 0)
            logged = mcp.LoggingMessageNotificationParams(level="info", data=f"Tool {said}")
            out.send(mcp.LoggingMessageNotification(params=logged))
        return {"content": [text("Logging done")]}
    if name == "test_tool_with_progress":
        token = params.meta.progress_token if params.meta else None
        for done in (0, 50, 100):
            time.sleep(0.05 if done else 0)
            if token is not None:
                progress = mcp.ProgressNotificationParams(
                    progress_token=token, progress=done, total=100
                )
                out.send(mcp.ProgressNotification(params=progress))
        return {"content": [text("Progress done")]}
    if name == "test_sampling":
        message = {"role": "user", "content": text(str(args.get("prompt")))}
        wanted = {"messages": [message], "maxTokens": 100}
        sampled = out.ask(mcp.CreateMessageRequestParams.model_validate(wanted))
        answered = getattr(getattr(sampled, "content", None), "text", None)
        return {"content": [text(f"LLM response: {answered}")]}
    schema = ELICITED.get(name)
    if schema is None:
        raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
    form = {"message": str(args.get("message", "Please answer")), "requestedSchema": schema}
    elicited = out.ask(mcp.ElicitRequestFormParams.model_validate(form))
    action, content = getattr(elicited, "action", None), getattr(elicited, "content", None)
    return {"content": [text(f"Elicitation completed: action={action}, content={content}")]}


def read_resource(uri: str) -> dict[str, Any]:
    if uri == "test://static-text":
        return {
            "uri": uri,
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    if uri == "test://static-binary":
        return {"uri": uri, "mimeType": "image/png", "blob": PNG}
    if uri == "test://watched-resource":
        return {"uri": uri, "mimeType": "text/plain", "text": "Watched."}
    prefix, suffix = "test://template/", "/data"
    if uri.startswith(prefix) and uri.endswith(suffix):
        key = uri[len(prefix) : -len(suffix)]
        body = f'{{"id":"{key}","templateTest":true,"data":"Data for ID: {key}"}}'
        return {"uri": uri, "mimeType": "application/json", "text": body}
    raise InvalidParamsError(f"Resource not found: {uri}", {"uri": uri})


def get_prompt(name: str, args: dict[str, str]) -> list[dict[str, Any]]:
    if name == "test_simple_prompt":
        return [{"role": "user", "content": text("This is a simple prompt for testing.")}]
    if name == "test_prompt_with_arguments":
        said = f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"
        return [{"role": "user", "content": text(said)}]
    if name == "test_prompt_with_embedded_resource":
        uri = args.get("resourceUri", "test://example-resource")
        resource = {
            "uri": uri,
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        }
        return [
            {"role": "user", "content": {"type": "resource", "resource": resource}},
            {"role": "user", "content": text("Please process the embedded resource above.")},
        ]
    if name == "test_prompt_with_image":
        return [
            {"role": "user", "content": IMAGE},
            {"role": "user", "content": text("Please analyze the image above.")},
        ]
    raise InvalidParamsError(f"Unknown prompt: {name}", {"name": name})


def answer(request: Any, out: Stream) -> dict[str, Any]:
    method = request.method
    if isinstance(request, mcp.InitializeRequest):
        info = {"name": "mcp-schema-conformance", "version": "1.0.0"}
        return {"protocolVersion": mcp.VERSION, "capabilities": CAPABILITIES, "serverInfo": info}
    if isinstance(request, mcp.CallToolRequest):
        return call_tool(request.params, out)
    if isinstance(request, mcp.ReadResourceRequest):
        return {"contents": [read_resource(request.params.uri)]}
    if isinstance(request, mcp.GetPromptRequest):
        return {"messages": get_prompt(request.params.name, request.params.arguments or {})}
    if isinstance(request, mcp.CompleteRequest):
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    listed: dict[str, dict[str, Any]] = {
        "tools/list": {"tools": TOOLS},
        "resources/list": {"resources": RESOURCES},
        "resources/templates/list": {"resourceTemplates": [TEMPLATE]},
        "prompts/list": {"prompts": PROMPTS},
    }
    if method in listed:
        return listed[method]
    if method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        return {}
    raise MethodNotFoundError(f"Method not found: {method}", {"method": method})


SESSIONS: dict[str, Session] = {}


class Handler(BaseHTTPRequestHandler):
    def local(self) -> bool:
        """Refuse what a rebinding page could send: a foreign Host or Origin."""
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        origin = self.headers.get("Origin")
        origin_host = origin.split("//", 1)[-1].rsplit(":", 1)[0] if origin else "localhost"
        return host in LOCAL_HOSTS and origin_host in LOCAL_HOSTS

    def plain(self, status: int, body: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # no stream the client opens: everything rides on a POST
        self.plain(405)

    def do_DELETE(self) -> None:
        SESSIONS.pop(self.headers.get("Mcp-Session-Id") or "", None)
        self.plain(200)

    def do_POST(self) -> None:
        if self.path != "/mcp" or not self.local():
            return self.plain(404 if self.local() else 403)
        length = self.headers.get("Content-Length") or ""
        size = int(length) if length.isascii() and length.isdigit() else 0
        if not 0 < size <= MAX_BODY:
            return self.plain(413)
        body = self.rfile.read(size)
        named = self.headers.get("Mcp-Session-Id")
        session = SESSIONS.get(named or "")
        if session is None:
            if named is not None:  # unknown or terminated: the client must start anew
                return self.plain(404)
            session = Session()
        try:
            with session.lock:
                message = session.peer.decode(body)
        except McpError as err:
            return self.plain(400, encode(err.to_response()) if err.answerable else b"")
        kind, rid = message_kind(message), message.__dict__.get("id")
        if kind in ("result", "error"):
            with session.lock:
                waiter = session.waiting.pop(rid, None) if rid is not None else None
            if waiter is not None:
                waiter.put(message)
            return self.plain(202)
        if kind != "request":
            return self.plain(202)
        if isinstance(message, mcp.InitializeRequest):
            SESSIONS[session.id] = session
        request: Any = message  # a request of this version, whose result model the table names
        out = Stream(self, session)
        try:
            result: BaseModel = mcp.REQUESTS[request.method].result.model_validate(
                answer(request, out)
            )
        except McpError as err:
            return out.send(reply(rid, err))
        out.send(reply(rid, result))

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:  # the client hung up mid-answer: nobody is left to tell
            pass

    def log_message(self, format: str, *args: Any) -> None:  # keep stderr for failures
        pass


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 3001
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on http://127.0.0.1:{server.server_port}/mcp", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
