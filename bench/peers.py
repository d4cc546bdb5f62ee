"""The contenders: each turns a workload into a callable that processes all its messages once.

A builder raises :class:`Unsupported` when a contender cannot handle a
workload at all; a message it fails on is left out of its timing and counted
in :attr:`Runner.failures`.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jiter
import jsonschema_rs
import mcp_types._v2025_11_25 as mt_v2025
import mcp_types._v2026_07_28 as mt_v2026
import orjson
from mcp_types import jsonrpc as mt_jsonrpc
from mcp_types import methods as mt_methods
from pydantic import BaseModel, TypeAdapter, create_model

import codegen.spec
from bench.workloads import HANDSHAKE, Msg, Workload, tables
from mcp_schema import codec, versions
from mcp_schema._codec import parse, route, schemas, views
from mcp_schema._codec.messages import ErrorResponse, ResultResponse

Call = Callable[[], object]

_THEIRS: dict[str, Any] = {HANDSHAKE: mt_v2025, "2026-07-28": mt_v2026}


class Unsupported(Exception):
    """The contender cannot process this workload."""


@dataclass
class Runner:
    run: Call
    messages: int
    """How many messages one ``run()`` processes."""
    failures: Counter[str] = field(default_factory=Counter)
    first: float = 0.0
    """Seconds taken by the first ``run()`` in this process: lazy builds included."""

    @property
    def note(self) -> str:
        if not self.failures:
            return ""
        shown = ", ".join(f"{reason} x{n}" for reason, n in self.failures.most_common(3))
        return f"error: {shown}"


def _sequence(calls: list[Call]) -> Call:
    if len(calls) == 1:
        return calls[0]

    def run() -> None:
        for call in calls:
            call()

    return run


def _first(call: Call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _checked(workload: Workload, build: Callable[[Msg], Call]) -> Runner:
    """Calls that succeed once at setup; the others are recorded as failures."""
    calls: list[Call] = []
    failures: Counter[str] = Counter()
    first = 0.0
    for msg in workload.messages:
        try:
            call = build(msg)
            first += _first(call)
        except Exception as exc:  # any failure is a result to report
            failures[f"{type(exc).__name__}: {str(exc).splitlines()[0][:60]}"] += 1
            continue
        calls.append(call)
    if not calls:
        raise Unsupported(f"error: {failures.most_common(1)[0][0]}")
    return Runner(_sequence(calls), len(calls), failures, first)


# -- the floor -----------------------------------------------------------------------


def orjson_loads(workload: Workload) -> Runner:
    return _checked(workload, lambda msg: functools.partial(orjson.loads, msg.raw))


def orjson_dumps(workload: Workload) -> Runner:
    return _checked(workload, lambda msg: functools.partial(orjson.dumps, orjson.loads(msg.raw)))


# -- ours --------------------------------------------------------------------------------


def version_to_name(msg: Msg) -> str | None:
    """The version a caller passes: none for a stateless-era request, which
    names its own in params._meta."""
    stateless = msg.version in versions.STATELESS_VERSIONS
    return None if msg.kind == "request" and stateless else msg.version


def _ours(workload: Workload, view: str) -> Runner:
    """``codec.decode`` or ``codec.decode_dict`` (``view``); a session through a Correlator."""
    if workload.session:
        raws = [msg.raw for msg in workload.messages]

        def run() -> None:
            decode = getattr(codec.Correlator(allow_unknown_methods=True), view)
            for raw in raws:
                decode(raw)

        return Runner(run, len(raws), first=_first(run))

    decode = getattr(codec, view)
    return _checked(
        workload,
        lambda msg: functools.partial(
            decode, msg.raw, version=version_to_name(msg), method=msg.method
        ),
    )


def ours_decode(workload: Workload) -> Runner:
    return _ours(workload, "decode")


def ours_decode_dict(workload: Workload) -> Runner:
    return _ours(workload, "decode_dict")


def route_of(msg: Msg) -> route.Route:
    """The route the codec takes for ``msg``: the definition both views validate."""
    known = route.Known(version=version_to_name(msg), method=msg.method, allow_unknown_methods=True)
    return route.route(parse.parse(msg.raw), known, None)


def _exact_type(msg: Msg) -> Any:
    """The class ``decode`` ends up with for ``msg``, as one pydantic type: a
    response is ``ResultResponse`` (``ErrorResponse``) of the payload's class."""
    found = route_of(msg)
    payload = views.model_of(found.target)
    if found.kind == "result":
        return ResultResponse[payload]  # type: ignore[valid-type]
    if found.kind == "error":
        return ErrorResponse[payload]  # type: ignore[valid-type]
    return payload


def _exact_validator(msg: Msg) -> Callable[[bytes], Any]:
    """Pydantic's own validator of the class ``decode`` ends up with."""
    exact = _exact_type(msg)
    if isinstance(exact, type) and issubclass(exact, BaseModel):
        return exact.__pydantic_validator__.validate_json
    return TypeAdapter(exact).validator.validate_json


def pydantic_exact_class(workload: Workload) -> Runner:
    """The reference for ``decode``'s overhead: validate_json of the exact class."""
    return _checked(workload, lambda msg: functools.partial(_exact_validator(msg), msg.raw))


def _parse_and_validate(msg: Msg) -> Callable[[], Any]:
    """The issue's probe: jiter's duplicate-refusing parse, then jsonschema-rs
    ``is_valid`` of the definition the route names (no routing, no checks)."""
    found = route_of(msg)
    validator = schemas.validator(found.target)
    payload = None if found.kind in ("request", "notification") else found.kind
    raw = msg.raw

    def run() -> bool:
        value = jiter.from_json(raw, catch_duplicate_keys=True, allow_inf_nan=False)
        valid: bool = validator.is_valid(value if payload is None else value[payload])
        return valid

    assert run(), msg.raw[:200]
    return run


def jiter_and_jsonschema_rs(workload: Workload) -> Runner:
    """The reference for ``decode_dict``'s overhead: parse plus one is_valid."""
    return _checked(workload, _parse_and_validate)


def decoded_dicts(workload: Workload) -> list[codec.DictMessage]:
    """Every message of the workload, decoded in the dict view."""
    if workload.session:
        correlator = codec.Correlator(allow_unknown_methods=True)
        return [correlator.decode_dict(msg.raw) for msg in workload.messages]
    return [
        codec.decode_dict(msg.raw, version=msg.version, method=msg.method)
        for msg in workload.messages
    ]


def decoded(workload: Workload) -> list[codec.Message]:
    """Every message of the workload, decoded by our codec."""
    if workload.session:
        correlator = codec.Correlator(allow_unknown_methods=True)
        return [correlator.decode(msg.raw) for msg in workload.messages]
    return [
        codec.decode(msg.raw, version=msg.version, method=msg.method) for msg in workload.messages
    ]


def ours_encode(workload: Workload) -> Runner:
    messages = decoded(workload)
    run = _sequence([functools.partial(codec.encode, m) for m in messages])
    return Runner(run, len(messages), first=_first(run))


# -- mcp-types 2.3.0, through its public parse functions ----------------------------------


def _mcp_types_parse(msg: Msg) -> Any:
    envelope = mt_jsonrpc.jsonrpc_message_adapter.validate_json(msg.raw)
    client = msg.direction == "c2s"
    method = msg.method or ""
    if msg.kind == "request":
        assert isinstance(envelope, mt_jsonrpc.JSONRPCRequest)
        parse = mt_methods.parse_client_request if client else mt_methods.parse_server_request
        return parse(envelope.method, msg.version, envelope.params)
    if msg.kind == "notification":
        assert isinstance(envelope, mt_jsonrpc.JSONRPCNotification)
        key = (envelope.method, msg.version)
        if key in mt_methods.CLIENT_NOTIFICATIONS and (
            client or key not in mt_methods.SERVER_NOTIFICATIONS
        ):
            return mt_methods.parse_client_notification(
                envelope.method, msg.version, envelope.params
            )
        return mt_methods.parse_server_notification(envelope.method, msg.version, envelope.params)
    if msg.kind == "result":
        assert isinstance(envelope, mt_jsonrpc.JSONRPCResponse)
        # A server answers client requests: its results are SERVER_RESULTS.
        parse_result = (
            mt_methods.parse_server_result
            if msg.direction == "s2c"
            else mt_methods.parse_client_result
        )
        return parse_result(method, msg.version, envelope.result)
    assert isinstance(envelope, mt_jsonrpc.JSONRPCError)
    return envelope  # error responses are typed by the envelope adapter itself


def mcp_types_parse(workload: Workload) -> Runner:
    return _checked(workload, lambda msg: functools.partial(_mcp_types_parse, msg))


# -- pydantic validate_json on mcp-types' own per-version model ---------------------------------


@functools.cache
def _result_envelope(version: str, target: Any) -> TypeAdapter[Any]:
    name = getattr(target, "__name__", "Union")
    model: type[BaseModel] = create_model(
        f"{name}Envelope_{version.replace('-', '_')}",
        jsonrpc=(str, ...),
        id=(mt_jsonrpc.RequestId, ...),
        result=(target, ...),
    )
    return TypeAdapter(model)


def _per_version_validator(msg: Msg) -> Callable[[bytes], Any]:
    module = _THEIRS[msg.version]
    if msg.definition and hasattr(module, msg.definition):
        return getattr(module, msg.definition).model_validate_json  # type: ignore[no-any-return]
    key = (msg.method or "", msg.version)
    if msg.kind == "request":
        table = mt_methods.CLIENT_REQUESTS if msg.direction == "c2s" else mt_methods.SERVER_REQUESTS
        return table[key].model_validate_json
    if msg.kind == "notification":
        cls = mt_methods.CLIENT_NOTIFICATIONS.get(key) or mt_methods.SERVER_NOTIFICATIONS[key]
        return cls.model_validate_json
    if msg.kind == "result":
        results = mt_methods.SERVER_RESULTS if msg.direction == "s2c" else mt_methods.CLIENT_RESULTS
        return _result_envelope(msg.version, results[key]).validate_json
    return module.JSONRPCErrorResponse.model_validate_json  # type: ignore[no-any-return]


def pydantic_per_version(workload: Workload) -> Runner:
    return _checked(workload, lambda msg: functools.partial(_per_version_validator(msg), msg.raw))


# -- jsonschema-rs against the upstream schema ----------------------------------------------


@functools.cache
def _schema(version: str) -> dict[str, Any]:
    return codegen.spec.load(version)


@functools.cache
def _validator(version: str, ref: str) -> Any:
    schema = _schema(version)
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], **orjson.loads(ref)}
    return jsonschema_rs.validator_for(root)


def _message(name: str, envelope: str, defs: dict[str, Any]) -> dict[str, Any]:
    """The upstream schema of a whole message the tables name: a draft-07
    ``JSONRPC<Name>`` is ``<Name>`` together with its envelope."""
    if name in defs:
        return {"$ref": f"#/$defs/{name}"}
    own = name.removeprefix("JSONRPC")
    return {"allOf": [{"$ref": f"#/$defs/{envelope}"}, {"$ref": f"#/$defs/{own}"}]}


def _definition_of(msg: Msg) -> dict[str, Any]:
    defs = _schema(msg.version)["$defs"]
    if msg.definition and msg.definition in defs:
        return {"$ref": f"#/$defs/{msg.definition}"}
    entry_tables = tables(msg.version)
    method = msg.method or ""
    if msg.kind == "request":
        entry = entry_tables.requests.get(method)
        return _message(entry.request_name if entry else "JSONRPCRequest", "JSONRPCRequest", defs)
    if msg.kind == "notification":
        note = entry_tables.notifications.get(method)
        name = note.notification_name if note else "JSONRPCNotification"
        return _message(name, "JSONRPCNotification", defs)
    if msg.kind == "error":
        return {"$ref": "#/$defs/JSONRPCErrorResponse"}
    entry = entry_tables.requests.get(method)
    if entry is None:
        return {"$ref": "#/$defs/JSONRPCResultResponse"}
    arms = [entry.result_name, *entry.alternative_names]
    result = {"anyOf": [{"$ref": f"#/$defs/{name}"} for name in arms]}
    return {
        "allOf": [{"$ref": "#/$defs/JSONRPCResultResponse"}, {"properties": {"result": result}}]
    }


def jsonschema_rs_validate(workload: Workload) -> Runner:
    def build(msg: Msg) -> Call:
        ref = orjson.dumps(_definition_of(msg), option=orjson.OPT_SORT_KEYS).decode()
        validator = _validator(msg.version, ref)
        instance = orjson.loads(msg.raw)
        validator.validate(instance)  # invalid workloads are failures, not timings
        return functools.partial(validator.is_valid, instance)

    return _checked(workload, build)


CONTENDERS: dict[str, Callable[[Workload], Runner]] = {
    "orjson.loads": orjson_loads,
    "ours.decode_dict": ours_decode_dict,
    "ours.decode": ours_decode,
    "pydantic exact class": pydantic_exact_class,
    "jiter + jsonschema-rs": jiter_and_jsonschema_rs,
    "ours.encode": ours_encode,
    "orjson.dumps": orjson_dumps,
    "mcp-types": mcp_types_parse,
    "jsonschema-rs": jsonschema_rs_validate,
    "pydantic/mcp-types model": pydantic_per_version,
}
