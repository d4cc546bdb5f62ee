"""An MCP server over stdio on mcp-schema alone, for the ``initialize`` era
(2025-11-25) and stateless 2026-07-28 alike: ``python examples/server.py``.

Tools with structured output, an error result, progress and logging, a tool
that asks the user (elicitation, or in 2026-07-28 an input-required result), a
resource and a prompt. Cancellation needs no code: each request is answered
before the next line is read."""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel

from mcp_schema import v2025_11_25 as old
from mcp_schema import v2026_07_28 as new
from mcp_schema.codec import Correlator, encode, message_kind, reply
from mcp_schema.errors import InvalidParamsError, McpError, MethodNotFoundError

INFO = old.Implementation(name="example-server", version="1.0.0")
MODERN = tuple(entry.request for entry in new.REQUESTS.values())
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
NUMBERS = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "description": "Say it back", "inputSchema": TEXT, "outputSchema": TEXT},
    {"name": "divide", "description": "a / b", "inputSchema": NUMBERS},
    {"name": "count", "description": "Count to 3 with progress", "inputSchema": {"type": "object"}},
    {"name": "ask", "description": "Ask the user for a word", "inputSchema": {"type": "object"}},
]
RESOURCE = {"uri": "config://app", "name": "config", "mimeType": "application/json"}
PROMPT = {"name": "review", "arguments": [{"name": "code", "required": True}]}
ASK = {"message": "Say a word", "requestedSchema": TEXT}
LISTED: dict[str, Any] = {"cache_scope": "private", "ttl_ms": 0}
WIRE_LISTED = {"cacheScope": "private", "ttlMs": 0}

session = Correlator()
waiting: dict[
    str | int | None, old.CallToolRequest
] = {}  # elicitation id -> the tools/call it serves


def send(message: BaseModel | dict[str, Any]) -> None:
    line = encode(message)
    if isinstance(message, old.ElicitRequest):
        session.decode(line)  # the Correlator sees both directions, so the answer comes back typed
    sys.stdout.buffer.write(line + b"\n")
    sys.stdout.buffer.flush()


def text_result(modern: bool, text: str, **extra: Any) -> BaseModel:
    result = {"content": [{"type": "text", "text": text}], **extra}
    if modern:
        return new.CallToolResult.model_validate({**result, "resultType": "complete"})
    return old.CallToolResult.model_validate(result)


def call_tool(request: old.CallToolRequest | new.CallToolRequest) -> BaseModel | None:
    modern, pkg = (True, new) if isinstance(request, new.CallToolRequest) else (False, old)
    args, name = request.params.arguments or {}, request.params.name
    if name == "echo":
        text = str(args.get("text"))
        return text_result(modern, text, structuredContent={"text": text})
    if name == "divide":
        if not args.get("b"):
            return text_result(modern, "division by zero", isError=True)
        return text_result(modern, str(args.get("a", 0) / args["b"]))
    if name == "count":
        token = request.params.meta.progress_token if request.params.meta else None
        for step in (1, 2, 3) if token is not None else ():
            progress = pkg.ProgressNotificationParams(progress_token=token, progress=step, total=3)
            send(pkg.ProgressNotification(params=progress))
        logged = pkg.LoggingMessageNotificationParams(level="info", data="counted to 3")
        send(pkg.LoggingMessageNotification(params=logged))
        return text_result(modern, "1 2 3")
    if name != "ask":
        raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
    if isinstance(request, new.CallToolRequest):  # 2026-07-28: ask in the result, read the retry
        said = (request.params.input_responses or {}).get("word")
        if isinstance(said, new.ElicitResult) and request.params.request_state == "asked":
            return text_result(True, f"you said {(said.content or {}).get('text')}")
        elicit = new.ElicitRequest(params=new.ElicitRequestFormParams.model_validate(ASK))
        return new.InputRequiredResult(input_requests={"word": elicit}, request_state="asked")
    params = old.ElicitRequestFormParams.model_validate(ASK)  # handshake era: ask the client
    elicitation = old.ElicitRequest(id=f"ask-{request.id}", params=params)
    waiting[elicitation.id] = request
    send(elicitation)
    return None  # answered when the elicitation result arrives


CAPABILITIES: dict[str, Any] = {"tools": {}, "resources": {}, "prompts": {}}
CATALOGUE: dict[str, dict[str, Any]] = {
    "tools/list": {"tools": TOOLS},
    "resources/list": {"resources": [RESOURCE]},
    "prompts/list": {"prompts": [PROMPT]},
    "resources/read": {"contents": [{"uri": "config://app", "text": '{"debug": false}'}]},
    "prompts/get": {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}]},
}


def answer(request: Any) -> BaseModel | None:
    modern, method = isinstance(request, MODERN), request.method
    if method == "initialize":
        caps = old.ServerCapabilities.model_validate({**CAPABILITIES, "logging": {}})
        return old.InitializeResult(
            protocol_version=old.VERSION, capabilities=caps, server_info=INFO
        )
    if method == "server/discover":
        versions = [new.VERSION, old.VERSION]
        capabilities = new.ServerCapabilities.model_validate(CAPABILITIES)
        return new.DiscoverResult(capabilities=capabilities, supported_versions=versions, **LISTED)
    if method in ("ping", "logging/setLevel"):
        return new.Result() if modern else old.Result()
    if method == "tools/call":
        return call_tool(request)
    if method not in CATALOGUE:
        raise MethodNotFoundError(f"Method not found: {method}", {"method": method})
    result = CATALOGUE[method]
    if modern:  # 2026-07-28 results say they are complete, and lists how long they keep
        result = {**result, "resultType": "complete", **(WIRE_LISTED if "list" in method else {})}
    return (new if modern else old).REQUESTS[method].result.model_validate(result)  # type: ignore[no-any-return]


def main() -> None:
    for line in sys.stdin.buffer:
        try:
            message = session.decode(line)
        except McpError as err:
            if err.answerable:  # never answer a notification or a response
                send(err.to_response())
            continue
        kind, rid = message_kind(message), message.__dict__.get("id")
        if kind in ("result", "error"):  # the answer to an elicitation
            call, said = waiting.pop(rid, None), getattr(message, "result", None)
            if call is not None and isinstance(said, old.ElicitResult):
                word = (said.content or {}).get("text")
                send(reply(call, text_result(False, f"you said {word}")))
        elif kind == "request":  # notifications (initialized, cancelled) need nothing
            try:
                result = answer(message)
            except McpError as err:
                send(reply(rid, err))
                continue
            if result is not None:
                send(reply(rid, result))


if __name__ == "__main__":
    main()
