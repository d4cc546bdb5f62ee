"""Hypothesis strategies for MCP wire values and messages (hand-written runtime module).

Needs the ``testing`` extra (``pip install 'mcp-schema[testing]'``), which
brings Hypothesis; nothing else in the package imports it. The strategies are
generated from the same schemas as the models (``v*/strategies.py``), so they
draw exactly what the schema accepts: required and optional members, consts
and enums, numeric and length bounds, every union arm, bounded recursive JSON,
and sometimes unknown members, since objects are open.

* `instances`: JSON values of one model class; `models`: validated models.
* `definitions`: every schema definition of a version (aliases included), by name.
* `messages`: whole JSON-RPC messages of a version, as `WireMessage`.
* `invalid_messages`: broken messages, each with the error code ``decode`` raises.

Importing this module registers every model class with Hypothesis, so
``st.from_type(CallToolRequest)`` draws validated ``CallToolRequest`` models.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from hypothesis import strategies as st

from mcp_schema._args import check, strings
from mcp_schema._codec.messages import Kind
from mcp_schema.base import McpModel
from mcp_schema.errors import (
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
)
from mcp_schema.json_strategies import Json
from mcp_schema.registry import COMPILED
from mcp_schema.tables import CompiledVersion
from mcp_schema.versions import PROTOCOL_VERSION_KEY, SUPPORTED_VERSIONS, extensions_of, protocol

__all__ = [
    "InvalidMessage",
    "WireMessage",
    "definitions",
    "instances",
    "invalid_messages",
    "messages",
    "models",
]

M = TypeVar("M", bound=McpModel)


def _strategies(compiled: CompiledVersion) -> ModuleType:
    """The ``strategies`` module every generated version package has."""
    return importlib.import_module(f"{compiled.package}.strategies")


def _all_strategy_modules() -> list[ModuleType]:
    return [_strategies(compiled) for compiled in COMPILED]


@functools.cache
def _by_model() -> Mapping[type[McpModel], st.SearchStrategy[Json]]:
    table: dict[type[McpModel], st.SearchStrategy[Json]] = {}
    for module in _all_strategy_modules():
        table.update(module.BY_MODEL)
    return table


def instances(model: type[McpModel]) -> st.SearchStrategy[Json]:
    """JSON values (as ``json.loads`` gives them) that ``model`` accepts."""
    try:
        return _by_model()[model]
    except KeyError:
        raise TypeError(f"{model!r} is not a generated MCP model class") from None


def models(model: type[M]) -> st.SearchStrategy[M]:
    """Validated ``model`` instances, decoded from `instances` as from the wire."""
    return instances(model).map(model.model_validate)


def _version(version: str) -> CompiledVersion:
    check(version, str, "version")
    compiled = protocol(version)
    if compiled is None:
        raise ValueError(f"unsupported MCP version {version!r}; known: {SUPPORTED_VERSIONS}")
    return compiled


def _extensions(version: str, extensions: Collection[str]) -> list[CompiledVersion]:
    extensions = strings(extensions, "extensions") or ()
    known = extensions_of(version)
    unknown = sorted(set(extensions) - set(known))
    if unknown:
        raise ValueError(f"no extension {unknown[0]!r} for MCP {version}")
    return [known[extension] for extension in sorted(extensions)]


def _version_module(version: str) -> ModuleType:
    return _strategies(_version(version))


def _extension_modules(version: str, extensions: Collection[str]) -> list[ModuleType]:
    return [_strategies(compiled) for compiled in _extensions(version, extensions)]


def definitions(
    version: str, extension: str | None = None
) -> Mapping[str, st.SearchStrategy[Json]]:
    """Every schema definition of ``version`` (or of its ``extension``), by name."""
    check(extension, str, "extension", none=True)
    if extension is None:
        return _version_module(version).DEFINITIONS  # type: ignore[no-any-return]
    (module,) = _extension_modules(version, [extension])
    return module.DEFINITIONS  # type: ignore[no-any-return]


@dataclass(frozen=True)
class WireMessage:
    """A drawn message and what a receiver needs to know to decode it."""

    kind: Kind
    method: str | None
    """The request's or notification's method, or the one a response answers
    (``None`` for an error response drawn without a method)."""
    value: Json
    """The message as a JSON value."""
    version: str
    extensions: tuple[str, ...] = ()

    @property
    def raw(self) -> bytes:
        """The message as JSON bytes, as a peer would send it."""
        return json.dumps(self.value, ensure_ascii=False).encode()


def _stamped(version: str, value: Json) -> Json:
    # A stateless-era request names its version in params._meta; a drawn
    # message names the version it was drawn for.
    meta = value.get("params", {}).get("_meta")
    if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta:
        return {
            **value,
            "params": {**value["params"], "_meta": {**meta, PROTOCOL_VERSION_KEY: version}},
        }
    return value


def _with(member: str, value: Json, whole: Json) -> Json:
    return {**whole, member: value}


def _error_with_code(code: int, error: Json) -> Json:
    return {**error, "code": code}


def _tool_call(value: Json, name: str | None, arguments: Json | None) -> Json:
    params = dict(value.get("params") or {})
    if name is not None:
        params["name"] = name
    if arguments is not None:
        params["arguments"] = arguments
    return {**value, "params": params}


def _drawn(
    version: str, extensions: Collection[str]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The strategies of ``version``'s requests, notifications and results, by
    method, those of the negotiated ``extensions`` included."""
    core = _version_module(version)
    requests, notifications, results = (
        dict(core.REQUESTS),
        dict(core.NOTIFICATIONS),
        dict(core.RESULTS),
    )
    for module in _extension_modules(version, extensions):
        requests.update(module.REQUESTS)
        notifications.update(module.NOTIFICATIONS)
        results.update(module.RESULTS)
    return requests, notifications, results


def _errors(core: ModuleType) -> st.SearchStrategy[Json]:
    """Error responses of a version, with each of its error codes."""
    errors = st.one_of(
        [
            strategy.map(functools.partial(_error_with_code, code))
            for code, strategy in sorted(core.ERRORS.items())
        ]
    )
    return st.builds(_with, st.just("error"), errors, core.ERROR_RESPONSE)


def messages(
    version: str,
    *,
    method: str | Collection[str] | None = None,
    kind: Kind | None = None,
    extensions: Collection[str] = (),
    tools: Collection[str] | None = None,
    arguments: st.SearchStrategy[Mapping[str, Json]] | None = None,
) -> st.SearchStrategy[WireMessage]:
    """Whole JSON-RPC messages of MCP ``version``.

    Requests and notifications of every method (those of the negotiated
    ``extensions`` too), results typed by the method they answer (every
    alternative result included), and error responses with each of the
    version's error codes. ``method`` (one method or several) and ``kind``
    narrow the choice. ``tools`` and ``arguments`` aim ``tools/call``
    requests at a server's own tools: the tool names drawn from, and a
    strategy of the ``arguments`` objects to send them.
    Each `WireMessage` decodes with
    ``decode(m.raw, version=m.version, method=m.method, extensions=m.extensions)``.
    """
    check(kind, str, "kind", none=True)
    methods = None if method is None else {method} if isinstance(method, str) else set(method)
    if arguments is not None and not isinstance(arguments, st.SearchStrategy):
        raise TypeError(f"arguments must be a Hypothesis strategy, not {type(arguments).__name__}")
    named_tools = strings(tools, "tools", none=True)
    if named_tools is not None and not named_tools:
        raise ValueError("tools must name at least one tool")
    extensions = strings(extensions, "extensions") or ()
    core = _version_module(version)
    requests, notifications, results = _drawn(version, extensions)
    exts = tuple(sorted(extensions))
    # A negotiated extension's result arms may answer any request (decode
    # reads their tag, e.g. resultType "task", as that result).
    more_tagged = {
        tag: instances(cls)
        for compiled in _extensions(version, extensions)
        for tag, cls in compiled.load().result_arms.items()
    }

    def wire(kind: Kind, method: str | None) -> Callable[[Json], WireMessage]:
        return lambda value: WireMessage(kind, method, _stamped(version, value), version, exts)

    arms: list[st.SearchStrategy[WireMessage]] = []
    wanted = [m for m in sorted({*requests, *notifications}) if methods is None or m in methods]
    named = st.none() if named_tools is None else st.sampled_from(sorted(named_tools))
    given = st.none() if arguments is None else arguments.map(dict)
    for name in wanted:
        # The strategies draw whole messages (a draft-07 one as its JSONRPC<Name>).
        if kind in (None, "request") and name in requests:
            drawn = requests[name]
            if name == "tools/call" and (tools is not None or arguments is not None):
                drawn = st.builds(_tool_call, drawn, named, given)
            arms.append(drawn.map(wire("request", name)))
        if kind in (None, "notification") and name in notifications:
            arms.append(notifications[name].map(wire("notification", name)))
        if kind in (None, "result") and name in results:
            envelope = core.RESULT_RESPONSE
            answer = results[name].results(more_tagged)
            arms.append(
                st.builds(_with, st.just("result"), answer, envelope).map(wire("result", name))
            )
    if kind in (None, "error") and (methods is None or wanted):
        answering = method if isinstance(method, str) else None
        arms.append(_errors(core).map(wire("error", answering)))
    if not arms:
        raise ValueError(f"MCP {version} has no {kind or 'message'} for method {method!r}")
    return st.one_of(arms)


@dataclass(frozen=True)
class InvalidMessage:
    """Bytes that are not a valid message of ``version``, and the error code
    ``decode(raw, version=version)`` raises for them."""

    raw: bytes
    code: int
    version: str
    defect: str
    """What was broken, for a failing test's report."""


def _bytes(value: Json) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def _broken(version: str, request: Json, choice: tuple[str, Json]) -> InvalidMessage:
    how, replacement = choice
    if how == "truncated":
        return InvalidMessage(_bytes(request)[:-1], ParseError.code, version, "truncated JSON")
    if how == "NaN":
        raw = json.dumps({**request, "id": float("nan")}).encode()
        return InvalidMessage(raw, ParseError.code, version, "NaN is not a JSON number")
    if how == "batch":
        return InvalidMessage(
            _bytes([request]), InvalidRequestError.code, version, "a batch (JSON array)"
        )
    if how == "params":
        params = {k: v for k, v in request.get("params", {}).items() if k != replacement}
        if replacement is None or params == request.get("params"):
            return InvalidMessage(
                _bytes({**request, "params": "not an object"}),
                InvalidParamsError.code,
                version,
                "params is not an object",
            )
        return InvalidMessage(
            _bytes({**request, "params": params}),
            InvalidParamsError.code,
            version,
            f"required params member {replacement!r} missing",
        )
    unknown_method = how == "method" and isinstance(replacement, str)
    code = MethodNotFoundError.code if unknown_method else InvalidRequestError.code
    return InvalidMessage(
        _bytes({**request, how: replacement}), code, version, f"{how} is {replacement!r}"
    )


def _required_params(version: str) -> Mapping[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for name, entry in _version(version).load().requests.items():
        params = entry.params
        fields = params.model_fields.items() if params is not None else ()
        found[name] = tuple(f.serialization_alias or attr for attr, f in fields if f.is_required())
    return found


def invalid_messages(version: str) -> st.SearchStrategy[InvalidMessage]:
    """Broken requests of MCP ``version``, each paired with the code decode raises.

    Defects: malformed JSON (-32700); a batch, a wrong ``jsonrpc``, an ``id``
    that is no request id, a ``method`` that is no string (-32600); a method
    the version does not have (-32601); ``params`` that is no object or lacks
    a required member (-32602). None is valid under the version's schema.
    """
    known = {
        *_version_module(version).REQUESTS,
        *_version_module(version).NOTIFICATIONS,
        *(m for ext in _all_strategy_modules() for m in (*ext.REQUESTS, *ext.NOTIFICATIONS)),
    }
    required = _required_params(version)
    valid = messages(version, kind="request")

    def defects(message: WireMessage) -> st.SearchStrategy[InvalidMessage]:
        members = required.get(message.method or "", ())
        choices = st.one_of(
            st.sampled_from([("truncated", None), ("NaN", None), ("batch", None)]),
            st.tuples(st.just("jsonrpc"), st.sampled_from(["1.0", "2", 2.0, None])),
            st.tuples(st.just("id"), st.sampled_from([True, 1.5, None, [], {}])),
            st.tuples(st.just("method"), st.sampled_from([7, None, [], {}])),
            st.tuples(st.just("method"), st.text(max_size=20).filter(lambda m: m not in known)),
            st.tuples(st.just("params"), st.sampled_from([None, *members])),
        )
        return choices.map(functools.partial(_broken, version, message.value))

    return valid.flatmap(defects)


def _register() -> None:
    for model, strategy in _by_model().items():
        st.register_type_strategy(model, strategy.map(model.model_validate))


_register()
