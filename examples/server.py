"""An MCP server over stdio on mcp-schema's session: ``python examples/server.py``.

Every handshake-era version (``initialize``) and 2026-07-28 (``server/discover``,
per-request ``_meta``) at once. The handlers are written against the 2026-07-28
models; the session reads each request into them and projects each answer back
into the version the client speaks. Tools with structured output, an error
result, progress and logging, tools that ask the user or the client's model
(elicitation or sampling requests, in 2026-07-28 an input-required result;
only of a client that can answer them), a resource and a prompt. The tool
``toggle`` adds the tool ``extra`` or removes it, and publishes the change:
the session serves 2026-07-28 ``subscriptions/listen`` itself (acknowledged,
each listen's notifications tagged with its id, only what it asked for); a
handshake-era client is sent ``notifications/tools/list_changed``.

``MCP_VERSIONS`` (comma-separated, say ``2025-06-18``) names the versions it
serves; unset, every version the package knows."""

import os
from typing import Any

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.errors import InvalidParamsError
from mcp_schema.session import InputReceived, RequestReceived, ServerSession
from mcp_schema.session.handlers import answered_by, serve_stdio

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
NUMBERS = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "description": "Say it back", "inputSchema": TEXT, "outputSchema": TEXT},
    {"name": "divide", "description": "a / b", "inputSchema": NUMBERS},
    {"name": "count", "description": "Count to 3 with progress", "inputSchema": {"type": "object"}},
    {"name": "ask", "description": "Ask the user for a word", "inputSchema": {"type": "object"}},
    {"name": "think", "description": "Ask the client's model", "inputSchema": {"type": "object"}},
    {"name": "toggle", "description": "Add or remove extra", "inputSchema": {"type": "object"}},
]
EXTRA = {"name": "extra", "description": "Here until toggled", "inputSchema": {"type": "object"}}
SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "A word?"}}]}
ELICIT = {"message": "A word?", "requestedSchema": TEXT}
VERSIONS = [v for v in os.environ.get("MCP_VERSIONS", "").split(",") if v] or None  # None: all
ASKS: dict[str, Any] = {
    "ask": {"method": "elicitation/create", "params": ELICIT},
    "think": {"method": "sampling/createMessage", "params": {**SAMPLE, "maxTokens": 9}},
}


def text(words: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": words}], **extra}


def call_tool(session: ServerSession, event: RequestReceived, call: mcp.CallToolRequest) -> Any:
    args, name = call.params.arguments or {}, call.params.name
    if name == "echo":
        return text(str(args.get("text")), structuredContent={"text": str(args.get("text"))})
    if name == "divide":  # a failed call is a result with isError, not a protocol error
        b = args.get("b")
        return text(str(args.get("a", 0) / b)) if b else text("division by zero", isError=True)
    if name == "count":
        for step in (1, 2, 3):
            session.progress(event, step, total=3)  # sent only if the call asked for progress
        session.log("info", "counted to 3", request=event)  # only if the client asked for logs
        return text("1 2 3")
    if name == "toggle":  # the tool list changes: the client hears of it, as its era has it
        TOOLS.remove(EXTRA) if EXTRA in TOOLS else TOOLS.append(EXTRA)
        session.changed("notifications/tools/list_changed")  # listens, or the notification
        return text("extra added" if EXTRA in TOOLS else "extra removed")
    if name == "extra" and EXTRA in TOOLS:
        return text("extra is here")
    if name not in ASKS:
        raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
    if not event.can_ask(ASKS[name]["method"]):  # declared by the client, and in its version
        return text("this client cannot be asked", isError=True)
    return session.ask(event, {"word": ASKS[name]})  # None: the answer comes as InputReceived


def answer(session: ServerSession, event: RequestReceived | InputReceived) -> Any:
    if isinstance(event, InputReceived):  # the client's answer to what a tool asked
        return said(event)
    request = event.message
    if isinstance(request, mcp.CallToolRequest):
        return call_tool(session, event, request)
    if isinstance(request, mcp.ListToolsRequest):
        return {"tools": TOOLS}
    if isinstance(request, mcp.ListResourcesRequest):
        return {"resources": [{"uri": "config://app", "name": "config"}]}
    if isinstance(request, mcp.ReadResourceRequest) and request.params.uri == "config://app":
        return {"contents": [{"uri": "config://app", "text": '{"debug": false}'}]}
    if isinstance(request, mcp.ListPromptsRequest):
        return {"prompts": [{"name": "review", "arguments": [{"name": "code", "required": True}]}]}
    if isinstance(request, mcp.GetPromptRequest) and request.params.name == "review":
        return {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}]}
    raise InvalidParamsError(f"Not found: {event.method}")


def said(event: InputReceived) -> dict[str, Any]:
    reply = event.responses["word"]  # a result, or the client's error
    word = getattr(getattr(reply, "content", None), "text", None)  # the model's message
    if isinstance(reply, mcp.ElicitResult):  # the form
        word = (reply.content or {}).get("text")
    return text(f"you said {word}" if word else "nothing was said")


serve = answered_by(answer)  # a result, or the McpError raised; None: the client is asked first


if __name__ == "__main__":  # one session on stdio: a line in, its events served, the answers out
    capabilities = {"tools": {"listChanged": True}, "resources": {}, "prompts": {}, "logging": {}}
    info = {"name": "example-server", "version": "1.0.0"}
    session = ServerSession(
        info=info, capabilities=capabilities, handler_version=mcp.VERSION, versions=VERSIONS
    )
    serve_stdio(session, serve)
