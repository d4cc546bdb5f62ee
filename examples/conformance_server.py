"""The fixtures of the official MCP conformance suite
(``@modelcontextprotocol/conformance``), served over Streamable HTTP by the
package's binding: ``python examples/conformance_server.py [PORT]`` serves
``http://127.0.0.1:PORT/mcp`` (port 0: any free one; the URL is printed)
under uvicorn, in this process.

Both eras on one endpoint (`mcp_schema.http.Endpoint`): an ``initialize``
session (2025-11-25 and older) and per-request 2026-07-28 calls. One
``serve(session, event)`` answers both: a handler's ``session.ask`` is a
server-to-client request in a session and an input-required result per
request, its round sealed into the ``requestState`` under ``MCP_STATE_KEY``
(a random key when unset: one process). Results carry cache hints (the
endpoint's ``ttl_ms`` and ``cache_scope``); the endpoint refuses a foreign
``Host`` or ``Origin`` (DNS rebinding), as it serves on loopback.

A module adds methods with ``METHODS.update(...)`` (each ``answer(session,
event)`` returns a result, or None when it answers later or asks first), its
capabilities with ``CAPABILITIES.update(...)``, and its rounds' completions
with ``FINISHED.update(...)``.
"""

from __future__ import annotations

import os
import runpy
import secrets
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import uvicorn

from mcp_schema.errors import (
    InvalidParamsError,
    McpError,
    MethodNotFoundError,
    MissingRequiredClientCapabilityError,
)
from mcp_schema.http import Endpoint
from mcp_schema.http.asgi import App
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.rounds import check_input_responses, input_required
from mcp_schema.session import Event, InputReceived, RequestReceived, ServerSession
from mcp_schema.tasks import TaskServer

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
# The Tasks extension's fixtures, beside this file (a script, as this one is).
TASKS = runpy.run_path(str(Path(__file__).with_name("conformance_tasks.py")))
serve_tasks: Callable[[ServerSession, Event], bool] = TASKS["serve"]

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
PROMPTS: list[dict[str, Any]] = [
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
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": False},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}


def elicit(message: str, **fields: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": fields, "required": list(fields)}
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": schema},
    }


def sample(prompt: str, max_tokens: int) -> dict[str, Any]:
    said = {"role": "user", "content": text(prompt)}
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [said], "maxTokens": max_tokens},
    }


ROOTS: dict[str, Any] = {"method": "roots/list", "params": {}}
# What each input-required fixture asks (SEP-2322); the multi-round one asks
# step2 once step1 is answered (`answered`).
ASKED: dict[str, dict[str, dict[str, Any]]] = {
    "test_input_required_result_elicitation": {
        "user_name": elicit("What is your name?", name=STRING)
    },
    "test_input_required_result_sampling": {
        "capital_question": sample("What is the capital of France?", 100)
    },
    "test_input_required_result_list_roots": {"client_roots": ROOTS},
    "test_input_required_result_request_state": {
        "confirm": elicit("Please confirm", ok={"type": "boolean"})
    },
    "test_input_required_result_multiple_inputs": {
        "user_name": elicit("What is your name?", name=STRING),
        "greeting": sample("Generate a greeting", 50),
        "client_roots": ROOTS,
    },
    "test_input_required_result_multi_round": {
        "step1": elicit("Step 1: What is your name?", name=STRING)
    },
    "test_input_required_result_tampered_state": {
        "confirm": elicit("Please confirm", ok={"type": "boolean"})
    },
    "test_input_required_result_capabilities": {
        "confirm": elicit("Please confirm", ok={"type": "boolean"}),
        "capital_question": sample("What is the capital of France?", 100),
    },
    "test_input_required_result_prompt": {
        "user_context": elicit("What context should the prompt use?", context=STRING)
    },
}
# The diagnostic tools of the stateless scenario (SEP-2575): one that needs
# sampling (-32021 without it), one that asks, one that logs only when the
# call names a level, and two that publish a list change to the listens.
ASKED["test_missing_capability"] = {"capital_question": sample("What is 2 + 2?", 10)}
ASKED["test_streaming_elicitation"] = {"user_name": elicit("What is your name?", name=STRING)}
PUBLISH: dict[str, Callable[[], object]] = {}
"""Per tool: the change it publishes (`application` fills it, as it holds the listens)."""
SEALED_ONLY = frozenset(
    f"test_input_required_result_{name}"
    for name in ("request_state", "tampered_state", "multi_round")
)
"""The rounds whose answers count only with their sealed ``requestState``."""
STEP2 = {"step2": elicit("Step 2: What is your favorite color?", color=STRING)}
TOOLS.extend(tool(name) for name in ASKED if name != "test_input_required_result_prompt")
TOOLS.extend(tool(name) for name in ("test_logging_tool", "test_trigger_tool_change"))
TOOLS.append(tool("test_trigger_prompt_change"))
TOOLS.extend(TASKS["TOOLS"])
PROMPTS.append({"name": "test_input_required_result_prompt", "description": "Fixture prompt"})
INFO = {"name": "mcp-schema-conformance", "version": "1.0.0"}
Answer = Callable[[ServerSession, RequestReceived], Any]
Finish = Callable[[ServerSession, RequestReceived, dict[str, Any], object], Any]


def params_of(event: RequestReceived) -> Any:
    """A request's params, a model of its wire version (either era's)."""
    return getattr(event.message, "params", None)


def said(answer: object) -> Any:
    """What an answer says: a sampled message's text, a form's content, the roots."""
    content = getattr(answer, "content", None)
    if content is not None:
        return getattr(content, "text", content)
    return [root.uri for root in getattr(answer, "roots", None) or ()]


def begin(
    session: ServerSession, event: RequestReceived, asks: dict[str, Any], state: object = None
) -> Any:
    """Ask what the client can answer; None: the answers come as `InputReceived`.

    A retry that carries the answers but no ``requestState`` (an ephemeral
    round: the fixtures' first rounds need no state) is answered at once,
    unless its tool trusts only a sealed round (`SEALED_ONLY`): asked again.
    """
    asks = {key: ask for key, ask in asks.items() if event.can_ask(ask["method"])}
    if not asks:
        return {"content": [text("This client cannot be asked")], "isError": True}
    params = params_of(event)
    given = getattr(params, "input_responses", None)
    unsealed = getattr(params, "request_state", None) is None and params.name not in SEALED_ONLY
    if given and unsealed and asks.keys() <= given.keys():
        asked: Any = input_required(event.version, asks)  # an InputRequiredResult model
        answers = check_input_responses(event.message, asked)
        return FINISHED[params.name](session, event, answers, state)
    session.ask(event, asks, state=state)
    return None


def completed(words: str) -> Finish:
    return lambda session, request, answers, state: {
        "content": [text(words.format_map(Said(answers)))]
    }


def elicited(session: ServerSession, request: RequestReceived, answers: Any, state: object) -> Any:
    form = answers["form"]
    action, content = getattr(form, "action", None), getattr(form, "content", None)
    return {"content": [text(f"Elicitation completed: action={action}, content={content}")]}


def multi_round(
    session: ServerSession, request: RequestReceived, answers: Any, state: object
) -> Any:
    if "step1" in answers:
        return begin(session, request, STEP2, state={"name": said(answers["step1"]).get("name")})
    name = cast("dict[str, Any]", state).get("name") if isinstance(state, dict) else None
    return {"content": [text(f"{name} likes {said(answers['step2']).get('color')}")]}


def prompted(session: ServerSession, request: RequestReceived, answers: Any, state: object) -> Any:
    context = said(answers["user_context"]).get("context")
    return {"messages": [{"role": "user", "content": text(f"Use this context: {context}")}]}


class Said(dict[str, Any]):
    """Answers as `str.format` fields: each one what it `said`."""

    def __getitem__(self, key: str) -> Any:
        return said(super().__getitem__(key))


FINISHED: dict[str, Finish] = {
    "test_sampling": completed("LLM response: {sample}"),
    **{name: elicited for name in ELICITED},
    "test_input_required_result_elicitation": completed("Hello, {user_name[name]}!"),
    "test_input_required_result_sampling": completed("The model said: {capital_question}"),
    "test_input_required_result_list_roots": completed("Roots: {client_roots}"),
    "test_input_required_result_request_state": completed("state-ok: {confirm}"),
    "test_input_required_result_multiple_inputs": completed(
        "{user_name}, {greeting}, {client_roots}"
    ),
    "test_input_required_result_multi_round": multi_round,
    "test_input_required_result_tampered_state": completed("state-ok: {confirm}"),
    "test_input_required_result_capabilities": completed("Answered: {capital_question}"),
    "test_input_required_result_prompt": prompted,
    "test_missing_capability": completed("Sampled: {capital_question}"),
    "test_streaming_elicitation": completed("Hello, {user_name[name]}!"),
}
"""Per tool or prompt: its result once the client answered what it asked."""


def call_tool(session: ServerSession, event: RequestReceived) -> Any:
    params = params_of(event)
    name = params.name
    arguments: dict[str, Any] = params.arguments or {}
    if name in CONTENT:
        return {"content": CONTENT[name]}
    if name == "test_error_handling":
        failed = text("This tool intentionally returns an error for testing")
        return {"isError": True, "content": [failed]}
    if name in PUBLISH:
        PUBLISH[name]()
        return {"content": [text(f"{name}: published")]}
    if name == "test_missing_capability" and not event.can_ask("sampling/createMessage"):
        needed: dict[str, Any] = {"sampling": {}}
        raise MissingRequiredClientCapabilityError(
            "test_missing_capability needs sampling", required_capabilities=needed
        )
    if name in ("test_tool_with_logging", "test_logging_tool"):
        for step in ("execution started", "processing data", "execution completed"):
            session.log("info", f"Tool {step}", request=event)  # if the client asked for logs
        return {"content": [text("Logging done")]}
    if name == "test_tool_with_progress":
        for done in (0, 50, 100):
            session.progress(event, done, total=100)  # if the call asked for progress
        return {"content": [text("Progress done")]}
    if name == "test_sampling":
        return begin(session, event, {"sample": sample(str(arguments.get("prompt")), 100)})
    if name in ELICITED:
        form = {
            "message": str(arguments.get("message", "Please answer")),
            "requestedSchema": ELICITED[name],
        }
        return begin(session, event, {"form": {"method": "elicitation/create", "params": form}})
    if name in ASKED:
        return begin(session, event, ASKED[name])
    raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})


def get_prompt(session: ServerSession, event: RequestReceived) -> Any:
    params = params_of(event)
    if params.name in ASKED:
        return begin(session, event, ASKED[params.name])
    return {"messages": prompt_messages(params.name, params.arguments or {})}


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


def prompt_messages(name: str, args: dict[str, str]) -> list[dict[str, Any]]:
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


def listed(key: str, items: list[dict[str, Any]]) -> Answer:
    return lambda session, event: {key: items}


METHODS: dict[str, Answer] = {
    "tools/list": listed("tools", TOOLS),
    "tools/call": call_tool,
    "resources/list": listed("resources", RESOURCES),
    "resources/templates/list": listed("resourceTemplates", [TEMPLATE]),
    "resources/read": lambda session, event: {"contents": [read_resource(params_of(event).uri)]},
    "resources/subscribe": lambda session, event: {},
    "resources/unsubscribe": lambda session, event: {},
    "prompts/list": listed("prompts", PROMPTS),
    "prompts/get": get_prompt,
    "completion/complete": lambda session, event: {
        "completion": {"values": [], "total": 0, "hasMore": False}
    },
}
"""Per method: its answer (None when the client is asked first)."""


def serve(session: ServerSession, event: Event) -> None:
    if serve_tasks(session, event):
        return None
    if isinstance(event, InputReceived):
        request, answers, state = event.request, dict(event.responses), event.state
        name = params_of(request).name
        return answered(session, request, lambda: FINISHED[name](session, request, answers, state))
    if isinstance(event, RequestReceived):
        method = METHODS.get(event.method)
        if method is None:
            return session.fail(event, MethodNotFoundError(f"Method not found: {event.method}"))
        return answered(session, event, lambda: method(session, event))
    return None


def answered(session: ServerSession, request: RequestReceived, answer: Callable[[], Any]) -> None:
    """``request`` answered with what ``answer`` returns (None: not yet), or its error."""
    try:
        result = answer()
    except McpError as err:
        return session.fail(request, err)
    if result is not None:
        session.respond(request, result)
    return None


def application(state_key: str | None) -> App:
    """The fixtures' endpoint as an ASGI app, sealing rounds under ``state_key``."""
    try:
        keys = StateKeys.from_env(state_key or secrets.token_urlsafe(32))
    except ValueError as exc:
        raise SystemExit(f"MCP_STATE_KEY: {exc}") from None
    endpoint = Endpoint(
        serve,
        info=INFO,
        capabilities=CAPABILITIES,
        request_state=StateSealer(keys),
        tasks=TaskServer(),
        session_options={"cache_scope": "public", "ttl_ms": 60_000},
    )
    listens = endpoint.subscriptions
    PUBLISH.update(
        test_trigger_tool_change=listens.tools_list_changed,
        test_trigger_prompt_change=listens.prompts_list_changed,
    )
    return App(endpoint)


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 3001
    app = application(os.environ.get("MCP_STATE_KEY"))  # a key too short stops it here
    listening = socket.create_server(("127.0.0.1", port))  # listening: the URL works once printed
    print(f"listening on http://127.0.0.1:{listening.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[listening])


if __name__ == "__main__":
    main()
