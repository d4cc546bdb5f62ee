"""Every public function, given an argument of the wrong type, raises ``TypeError``.

Never ``AttributeError``, ``KeyError``, a pydantic ``ValidationError``, a
``decimal`` error or anything else foreign to the call (issue 19): a caller's
mistake is a ``TypeError`` that says which argument. The walk covers what the
package's public modules export (their ``__all__``, or their public top-level
callables; the modules ``make docs`` documents) and the public methods of the
hand-written classes callers use. Models (generated or not) answer wrong
members with ``ValidationError`` by design, and plain records (dataclasses,
named tuples) hold what they are given, so neither is walked;
`test_every_public_function_is_walked` keeps the table complete.

Each case is called once per parameter with that argument replaced by a value
of another type: ``object()``, and for common annotations a near miss (``5``
for a ``str``, ``"5"`` for an ``int``, ``"abc"`` for a collection of strings,
``5`` for a mapping).
"""

from __future__ import annotations

import importlib
import inspect
import io
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

import mcp_schema
import mcp_schema.v2025_11_25 as old
import mcp_schema.v2026_07_28 as new
from mcp_schema import (
    builders,
    capabilities,
    cli,
    codec,
    context,
    diff,
    errors,
    http_headers,
    json_strategies,
    negotiation,
    projection,
    proxy,
    rounds,
    session,
    subscriptions,
    tables,
    testing,
    tool_headers,
    versions,
)
from mcp_schema.registry import COMPILED

PIPELINE = "pipeline rewrite"
TOOLS_CHANGED = "notifications/tools/list_changed"
LISTEN_REQUEST = new.SubscriptionsListenRequest.model_validate(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"toolsListChanged": True},
        },
    }
)

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
RAW = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "_meta": '
    b'{"io.modelcontextprotocol/protocolVersion": "2026-07-28", '
    b'"io.modelcontextprotocol/clientCapabilities": {}}}}'
)
REQUEST = new.CallToolRequest(id=1, params={"name": "t", "_meta": META})
OLD_REQUEST = old.CallToolRequest(id=1, params={"name": "t"})
INITIALIZE = old.InitializeRequest(
    id=0,
    params={
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    },
)
ASKED = context.input_required(
    "2026-07-28",
    {"u": {"method": "roots/list"}},
    state="s",
)
ANSWERS: dict[str, Any] = {"u": {"roots": []}}
RETRY = context.retry_with_input(REQUEST, ASKED, ANSWERS)  # type: ignore[arg-type]
TOOL = {"name": "t", "inputSchema": {"type": "object"}}
HEADERS = {"Mcp-Method": "tools/call", "Mcp-Name": "t", "MCP-Protocol-Version": "2026-07-28"}
STRATEGY = json_strategies.booleans()


@dataclass
class Case:
    name: str
    call: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    untyped: frozenset[str] = frozenset()
    """Parameters that take any value (``Any``, ``object``): nothing is wrong for them."""
    near: dict[str, list[Any]] = field(default_factory=dict)
    """Further wrong values of a parameter, beyond the ones its annotation suggests."""
    pipeline: bool = False
    """In the decode pipeline being rewritten: what still fails there is listed
    in `PIPELINE_FAILS` (xfail, strict) for its owner, not fixed here."""
    shape: Callable[..., Any] | None = None
    """What has ``call``'s parameters, when ``call`` is a wrapper (a fresh object each call)."""

    def signature(self) -> inspect.Signature:
        return inspect.signature(self.shape or self.call)


INFO = {"name": "walk", "version": "1"}


def _correlator() -> codec.Correlator:
    return codec.Correlator()


def _pending_correlator() -> codec.Correlator:
    session = codec.Correlator(version="2025-11-25")
    session.request("ping", sender="server")
    return session


CASES = [
    # codec
    Case("codec.decode", codec.decode, (RAW,), pipeline=True),
    Case("codec.decode_dict", codec.decode_dict, (RAW,), pipeline=True),
    Case("codec.encode", codec.encode, (REQUEST,)),
    Case("codec.message_kind", codec.message_kind, (REQUEST,), pipeline=True),
    Case("codec.reply", codec.reply, (1, old.Result()), near={"to": [1.5, True]}),
    Case("Correlator", codec.Correlator, (), pipeline=True),
    Case(
        "Correlator.decode",
        lambda *a, **k: _correlator().decode(*a, **k),
        (RAW,),
        pipeline=True,
        shape=codec.Correlator().decode,
    ),
    Case(
        "Correlator.decode_dict",
        lambda *a, **k: _correlator().decode_dict(*a, **k),
        (RAW,),
        pipeline=True,
        shape=codec.Correlator().decode_dict,
    ),
    Case(
        "Correlator.forget",
        lambda *a, **k: _pending_correlator().forget(*a, **k),
        (1,),
        {"sender": "server"},
        near={"sender": ["x"]},
        pipeline=True,
        shape=codec.Correlator().forget,
    ),
    Case(
        "Correlator.request",
        lambda *a, **k: codec.Correlator().request(*a, **k),
        ("ping",),
        {"sender": "server"},
        pipeline=True,
        shape=codec.Correlator().request,
    ),
    Case("codec.to_wire", codec.to_wire, (REQUEST,)),
    Case(
        "proxy.report_line",
        proxy.report_line,
        ({"direction": "client->server", "line": 1, "code": -32700, "message": "m"},),
    ),
    # sessions
    Case("ServerSession", session.ServerSession, (), {"info": INFO}),
    Case("ClientSession", session.ClientSession, (), {"info": INFO}),
    Case(
        "ServerSession.receive",
        lambda *a, **k: session.ServerSession(info=INFO).receive(*a, **k),
        (RAW,),
        shape=session.ServerSession(info=INFO).receive,
    ),
    Case(
        "ClientSession.receive",
        lambda *a, **k: session.ClientSession(info=INFO).receive(*a, **k),
        (RAW,),
        shape=session.ClientSession(info=INFO).receive,
    ),
    Case(
        "ClientSession.initialize",
        lambda *a, **k: session.ClientSession(info=INFO).initialize(*a, **k),
        ("2025-11-25",),
        shape=session.ClientSession(info=INFO).initialize,
    ),
    # version packages
    *(
        Case(
            f"{compiled.package}.decode_request",
            importlib.import_module(compiled.package).decode_request,
            (
                RAW
                if compiled.era == "stateless"
                else b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
            ),
            pipeline=True,
        )
        for compiled in COMPILED
        if compiled.extension is None
    ),
    *(
        Case(
            f"{compiled.package}.decode_response",
            importlib.import_module(compiled.package).decode_response,
            (
                b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [], "resultType": "complete"}}',
                "tools/call",
            ),
            pipeline=True,
        )
        for compiled in COMPILED
        if compiled.extension is None
    ),
    # builders
    Case("builders.cancelled", builders.cancelled, ("2025-11-25", 1), {"reason": "r"}),
    Case("builders.list_changed", builders.list_changed, ("2025-11-25", "tools")),
    Case(
        "builders.log_message",
        builders.log_message,
        ("2025-11-25", "info", {"x": 1}),
        {"logger": "l"},
        untyped=frozenset({"data"}),
    ),
    Case(
        "builders.notification",
        builders.notification,
        ("2025-11-25", "notifications/initialized", {}),
    ),
    Case(
        "builders.progress",
        builders.progress,
        ("2025-11-25", "tok", 0.5),
        {"total": 1.0, "message": "m"},
    ),
    Case("builders.resource_updated", builders.resource_updated, ("2025-11-25", "file:///x")),
    # cli
    Case(
        "cli.read_lines",
        lambda *a, **k: list(cli.read_lines(*a, **k)),
        (io.BytesIO(b"{}\n"), 10),
        shape=cli.read_lines,
    ),
    Case(
        "cli.validate_lines",
        cli.validate_lines,
        ([b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'], io.StringIO()),
        {"version": "2025-11-25", "extensions": (), "progress": None, "max_bytes": 100},
    ),
    Case(
        "cli.main",
        cli.main,
        (["diff", "2025-06-18", "2025-11-25"],),
        {"stdout": io.StringIO(), "stderr": io.StringIO()},
    ),
    # capabilities
    Case("capabilities.askable", capabilities.askable, ("2025-11-25", "roots/list")),
    Case("capabilities.capability_of", capabilities.capability_of, ("tools/list",)),
    Case(
        "capabilities.missing_capabilities",
        capabilities.missing_capabilities,
        ({}, {"roots": {}}),
    ),
    Case(
        "capabilities.require_client_capabilities",
        capabilities.require_client_capabilities,
        (REQUEST, {}),
    ),
    # rounds
    Case("rounds.check_input_responses", rounds.check_input_responses, (RETRY, ASKED)),
    Case("rounds.input_required", rounds.input_required, ("2026-07-28", {}), {"state": "s"}),
    Case(
        "rounds.retry_with_input",
        rounds.retry_with_input,
        (REQUEST, ASKED, ANSWERS),
        {"request_id": 2},
    ),
    # context
    Case("context.check_input_responses", context.check_input_responses, (RETRY, ASKED)),
    Case("context.input_required", context.input_required, ("2026-07-28", {}), {"state": "s"}),
    Case("context.missing_capabilities", context.missing_capabilities, ({}, {"roots": {}})),
    Case(
        "context.require_client_capabilities",
        context.require_client_capabilities,
        (REQUEST, {}),
    ),
    Case(
        "context.retry_with_input",
        context.retry_with_input,
        (REQUEST, ASKED, ANSWERS),
        {"request_id": 2},
    ),
    Case("RequestContext.from_request", context.RequestContext.from_request, (REQUEST,)),
    Case(
        "RequestContext.from_session",
        context.RequestContext.from_session,
        (OLD_REQUEST, INITIALIZE),
        {"log_level": "info"},
    ),
    # diff
    Case("diff.definitions", diff.definitions, ("2025-11-25",)),
    Case("diff.diff", diff.diff, ("2025-06-18", "2025-11-25")),
    Case(
        "VersionDiff.removed_members",
        diff.diff("2025-06-18", "2025-11-25").removed_members,
        ("Tool",),
    ),
    # errors
    Case("errors.clip", errors.clip, ("text", 10)),
    Case("errors.error_list", errors.error_list, ([{"path": "$", "reason": "r"}],)),
    Case("errors.quote", errors.quote, ("text",), untyped=frozenset({"value"})),
    Case(
        "McpError",
        errors.McpError,
        ("message", {"x": 1}),
        {"code": 5},
        untyped=frozenset({"data"}),
    ),
    Case(
        "McpError.to_response",
        errors.InvalidParamsError().to_response,
        (1,),
        near={"id": [1.5, True]},
    ),
    Case(
        "McpError.from_error_object",
        errors.McpError.from_error_object,
        ({"code": -32602, "message": "m"},),
    ),
    # http_headers
    Case(
        "http_headers.check_request_headers",
        http_headers.check_request_headers,
        (HEADERS, REQUEST, TOOL),
        {"required": True},
    ),
    Case(
        "http_headers.check_version_header",
        http_headers.check_version_header,
        (HEADERS, "2026-07-28"),
    ),
    Case("http_headers.decode_header_value", http_headers.decode_header_value, ("v",)),
    Case("http_headers.encode_header_value", http_headers.encode_header_value, ("v",)),
    Case("http_headers.received_headers", http_headers.received_headers, (HEADERS,)),
    Case("http_headers.request_headers", http_headers.request_headers, (REQUEST, TOOL)),
    Case("http_headers.validate_tool_headers", http_headers.validate_tool_headers, (TOOL,)),
    Case("ToolHeaders", http_headers.ToolHeaders, (TOOL,)),
    Case("tool_headers.validate_tool_headers", tool_headers.validate_tool_headers, (TOOL,)),
    # json_strategies
    Case("json_strategies.any_json", json_strategies.any_json),
    Case("json_strategies.arrays", json_strategies.arrays, (STRATEGY, 0, 3)),
    Case("json_strategies.booleans", json_strategies.booleans),
    Case(
        "json_strategies.consts",
        json_strategies.consts,
        ("a", "b"),
        untyped=frozenset({"first", "more"}),
    ),
    Case("json_strategies.integers", json_strategies.integers, (0, 10)),
    Case("json_strategies.maps", json_strategies.maps, (STRATEGY,)),
    Case("json_strategies.nulls", json_strategies.nulls),
    Case("json_strategies.numbers", json_strategies.numbers, (0, 1.5)),
    Case("json_strategies.objects", json_strategies.objects, ({"a": STRATEGY}, {}, None)),
    Case("json_strategies.one_of", json_strategies.one_of, (STRATEGY, STRATEGY)),
    Case("json_strategies.recursive", json_strategies.recursive, (STRATEGY, json_strategies.maps)),
    Case(
        "json_strategies.result_types",
        json_strategies.result_types,
        (STRATEGY, {"input_required": STRATEGY}),
    ),
    Case("json_strategies.strings", json_strategies.strings, (0, 5), {"format": None}),
    Case(
        "json_strategies.unknown_members",
        json_strategies.unknown_members,
        (frozenset({"a"}), STRATEGY),
    ),
    # negotiation
    Case(
        "negotiation.discover_result",
        negotiation.discover_result,
        ({},),
        {
            "server_info": {"name": "s", "version": "1"},
            "instructions": "i",
            "ttl_ms": 0,
            "cache_scope": "private",
            "versions": ["2026-07-28"],
        },
        untyped=frozenset({"capabilities", "server_info"}),
        near={"versions": ["2026-07-28"]},
    ),
    Case(
        "negotiation.initialize_version",
        negotiation.initialize_version,
        ("2025-11-25",),
        untyped=frozenset({"requested"}),
    ),
    # projection
    Case(
        "projection.project",
        projection.project,
        (OLD_REQUEST, "2025-06-18"),
        {"strict": False, "session": None},
    ),
    # testing
    Case("testing.definitions", testing.definitions, ("2025-11-25",), {"extension": None}),
    Case("testing.instances", testing.instances, (old.Tool,)),
    Case("testing.invalid_messages", testing.invalid_messages, ("2025-11-25",)),
    Case(
        "testing.messages",
        testing.messages,
        ("2025-11-25",),
        {"method": "ping", "kind": "request", "extensions": ()},
    ),
    Case("testing.models", testing.models, (old.Tool,)),
    # tables
    Case(
        "tables.definition",
        tables.definition,
        ("mcp_schema.v2025_11_25", "Tool"),
    ),
    Case(
        "tables.lazy_definitions",
        tables.lazy_definitions,
        ("mcp_schema.v2025_11_25.methods", {"ERROR_MODEL": "Error"}),
    ),
    Case("tables.lazy_exports", tables.lazy_exports, ("mcp_schema", {}, {}, ())),
    # versions
    Case("versions.extensions_of", versions.extensions_of, ("2025-11-25",)),
    Case("versions.protocol", versions.protocol, ("2025-11-25",)),
    Case(
        "versions.unsupported",
        versions.unsupported,
        ("1999-01-01", " (why)"),
        untyped=frozenset({"requested"}),
    ),
    Case("versions.version_of", versions.version_of, (old.Tool,)),
    # subscriptions
    Case("subscriptions.checked_change", subscriptions.checked_change, (TOOLS_CHANGED,)),
    Case("subscriptions.supported_by", subscriptions.supported_by, ({"tools": {}},)),
    Case(
        "subscriptions.listened",
        subscriptions.listened,
        (LISTEN_REQUEST,),
    ),
    Case("subscriptions.Subscriptions", subscriptions.Subscriptions, (), {"max_listens": 2}),
    Case(
        "subscriptions.Subscriptions.open",
        lambda *a, **k: subscriptions.Subscriptions().open(*a, **k),
        (1, {"toolsListChanged": True}),
        shape=subscriptions.Subscriptions().open,
    ),
    Case(
        "subscriptions.Subscriptions.publish",
        lambda *a, **k: subscriptions.Subscriptions().publish(*a, **k),
        (TOOLS_CHANGED,),
        shape=subscriptions.Subscriptions().publish,
    ),
]

_FLAGS = {"allow_unknown_methods": "object str", "assume_complete": "object str"}
PIPELINE_FAILS: dict[str, dict[str, str]] = {}


# What the walk leaves out, and why.
NOT_WALKED = {
    **{
        f"mcp_schema.proxy.{name}": "runs the proxy on this process's own streams (test_proxy.py)"
        for name in ("run", "main", "add_arguments")
    },
    **{
        f"mcp_schema.codec.{name}": "a type predicate: any object is an answer (False)"
        for name in ("is_request", "is_notification", "is_response")
    },
    "mcp_schema.base.Preset": "builds a pydantic Field for generated code; its keywords are Field's",
    **{
        f"mcp_schema.redis_calls.{name}": "the Redis broker's and task store's own plumbing, "
        "given what they checked (their cases: RedisBroker, RedisTaskStore)"
        for name in ("call", "client", "seconds", "within")
    },
}


def _annotation(parameter: inspect.Parameter) -> str:
    annotation = parameter.annotation
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")


def _near_misses(annotation: str) -> list[Any]:
    """Values of another type than ``annotation`` says, a caller could pass by mistake."""
    plain = annotation.replace(" | None", "").strip()
    if plain == "str":
        return [5]
    if plain in ("int", "float", "float | int"):
        return ["5"]
    if plain == "bool":
        return ["yes"]
    if plain.startswith(("Iterable[str]", "Collection[str]", "Sequence[str]")):
        return ["abc"]
    if plain.startswith("Mapping[") or plain.startswith("dict["):
        return [5, "abc"]
    return []


def _calls() -> list[Any]:
    params = []
    for case in CASES:
        signature = case.signature()
        bound = signature.bind_partial(*case.args, **case.kwargs)
        for name, parameter in signature.parameters.items():
            if name in case.untyped or parameter.kind is parameter.VAR_KEYWORD:
                continue
            if parameter.kind is parameter.VAR_POSITIONAL and name not in bound.arguments:
                continue
            wrong = [object(), *_near_misses(_annotation(parameter)), *case.near.get(name, [])]
            for value in wrong:
                marks = []
                failing = PIPELINE_FAILS.get(case.name, {}).get(name, "").split()
                if type(value).__name__ in failing:
                    assert case.pipeline, f"{case.name} is not in the pipeline: fix it"
                    marks.append(pytest.mark.xfail(strict=True, reason=PIPELINE))
                params.append(
                    pytest.param(
                        case,
                        name,
                        value,
                        id=f"{case.name}-{name}={type(value).__name__}:{str(value)[:12]}",
                        marks=marks,
                    )
                )
    return params


def _call_with(case: Case, name: str, value: Any) -> None:
    signature = case.signature()
    bound = signature.bind_partial(*case.args, **case.kwargs)
    parameter = signature.parameters[name]
    if parameter.kind is parameter.VAR_POSITIONAL:
        bound.arguments[name] = (value,)
    else:
        bound.arguments[name] = value
    case.call(*bound.args, **bound.kwargs)


def test_every_case_is_a_valid_call() -> None:
    for case in CASES:
        case.call(*case.args, **case.kwargs)


@pytest.mark.parametrize(("case", "name", "value"), _calls())
def test_a_wrong_argument_type_is_a_type_error(case: Case, name: str, value: Any) -> None:
    try:
        _call_with(case, name, value)
    except TypeError:
        return
    except Exception as exc:  # the point: nothing but TypeError
        pytest.fail(f"{case.name}({name}={value!r}) raised {type(exc).__name__}: {exc}")
    pytest.fail(f"{case.name}({name}={value!r}) accepted it")


def _public_callables() -> set[str]:
    names = ["mcp_schema", *(c.package for c in COMPILED)]
    names += sorted(
        f"mcp_schema.{info.name}"
        for info in pkgutil.iter_modules(mcp_schema.__path__)
        if not info.ispkg and not info.name.startswith("_") and info.name != "__main__"
    )
    found = set()
    for module_name in names:
        module = importlib.import_module(module_name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            exported = [
                n
                for n, o in vars(module).items()
                if not n.startswith("_") and getattr(o, "__module__", None) == module_name
            ]
        for name in exported:
            value = getattr(module, name)
            if isinstance(value, type):
                continue  # classes: their public methods are cases of their own
            if inspect.isroutine(getattr(value, "__wrapped__", value)):
                found.add(f"{module_name}.{name}")
    return found


def _case_names() -> set[str]:
    return {
        name if name.startswith("mcp_schema.") else f"mcp_schema.{name}"
        for name in (case.name for case in CASES)
    }


def test_every_public_function_is_walked() -> None:
    missing = {
        name for name in _public_callables() if name not in _case_names() and name not in NOT_WALKED
    }
    assert not missing, f"add a Case for each: {sorted(missing)}"


@pytest.mark.parametrize("flag", ["allow_unknown_methods", "assume_complete"])
@pytest.mark.parametrize("read", [codec.decode, codec.decode_dict])
def test_a_flag_given_as_an_int_is_refused_after_the_same_call_with_a_bool(
    read: Any, flag: str
) -> None:
    # decode remembers the checked keyword arguments of its calls, and 1 == True.
    raw = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    read(raw, **{flag: True})
    for wrong in (1, 1.0):
        with pytest.raises(TypeError, match=flag):
            read(raw, **{flag: wrong})
