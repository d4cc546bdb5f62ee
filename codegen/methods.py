"""Method tables and error codes, read off a built module.

Which side sends what comes from the schema's ``Client*``/``Server*`` unions
(extensions have none: ``schema/results.json`` lists their senders); which
result answers which request comes from the hand-written pairing in
``schema/results.json``; the alternatives to a complete result come from the
schema again (``*ResultResponse`` unions, task-augmentable params).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from . import ir
from .build import Builder, const_of
from .ir import BuildError

SENDER_UNIONS = {
    "ClientRequest": "client",
    "ServerRequest": "server",
    "ClientNotification": "client",
    "ServerNotification": "server",
}
ERROR_ENVELOPES = ("JSONRPCErrorResponse", "JSONRPCError")  # 2025-11-25 on; draft-07
# JSON-RPC 2.0's own codes; MCP schemas only define some of them.
JSONRPC_CODES = {
    -32700: "PARSE_ERROR",
    -32600: "INVALID_REQUEST",
    -32601: "METHOD_NOT_FOUND",
    -32602: "INVALID_PARAMS",
    -32603: "INTERNAL_ERROR",
}


def union_members(builder: Builder, name: str) -> list[str]:
    if name not in builder.defs:
        return []
    shape = builder.def_shape(name)
    if "anyOf" in shape:
        return [a["$ref"].rsplit("/", 1)[-1] for a in builder.defs[name]["anyOf"]]
    return [name]


def collect(
    builder: Builder, pairing: dict[str, Any], classes: dict[str, ir.ModelClass]
) -> ir.MethodTables:
    """The method tables of the module ``builder`` built; ``classes`` are its
    own and those it reuses, by name."""
    results: dict[str, str] = pairing.get("results", {})
    listed_senders: dict[str, str] = pairing.get("senders", {})
    senders = _senders(builder)
    input_requests = set(union_members(builder, "InputRequest"))
    requests: list[ir.RequestEntry] = []
    notifications: list[ir.NotificationEntry] = []
    embedded: list[ir.NotificationEntry] = []
    for method, name in _by_method(builder).items():
        params = _params_class(classes, name)
        if name in input_requests:
            if method not in results:
                raise BuildError(f"input request {method!r} has no result in schema/results.json")
            embedded.append(ir.NotificationEntry(method, "server", name, params))
            continue
        sides = senders.get(name) or (
            {listed_senders[method]} if method in listed_senders else set()
        )
        if not sides:
            raise BuildError(f"{name}: no sender for {method!r} (add it to schema/results.json)")
        sender: Literal["client", "server", "both"] = (
            "both" if len(sides) > 1 else "client" if "client" in sides else "server"
        )
        if "id" not in builder.def_shape(name).get("properties", {}) and method not in results:
            notifications.append(ir.NotificationEntry(method, sender, name, params))
            continue
        if method not in results:
            raise BuildError(f"request {method!r} has no result in schema/results.json")
        result = results[method]
        alternatives = _alternatives(builder, classes, result, params)
        requests.append(ir.RequestEntry(method, sender, name, params, (result, *alternatives)))
    generic = generic_error(classes)
    return ir.MethodTables(
        tuple(requests),
        tuple(notifications),
        tuple(embedded),
        _error_codes(builder, classes, generic),
        generic,
    )


def _senders(builder: Builder) -> dict[str, set[str]]:
    """Who sends each definition, from the schema's ``Client*``/``Server*`` unions."""
    senders: dict[str, set[str]] = {}
    for union, side in SENDER_UNIONS.items():
        for member in union_members(builder, union):
            senders.setdefault(member, set()).add(side)
    return senders


def _by_method(builder: Builder) -> dict[str, str]:
    """Every definition that carries a ``method`` const, by that method, sorted."""
    by_method: dict[str, str] = {}
    for name in sorted(builder.defs):
        method = const_of(builder.def_shape(name), "method")
        if method is None or name in SENDER_UNIONS:
            continue
        if method in by_method:
            raise BuildError(f"method {method!r} is defined by {by_method[method]} and {name}")
        by_method[method] = name
    return dict(sorted(by_method.items()))


def _params_class(classes: dict[str, ir.ModelClass], name: str) -> str | None:
    for f in classes[name].fields:
        if f.wire_name == "params" and isinstance(f.type, ir.Ref) and f.type.name in classes:
            return f.type.name
    return None


def _alternatives(
    builder: Builder, classes: dict[str, ir.ModelClass], result: str, params: str | None
) -> list[str]:
    """Results that may answer in place of the complete one."""
    alternatives: list[str] = []
    for cls in classes.values():
        if not cls.name.endswith("ResultResponse"):
            continue
        for f in cls.fields:
            if (
                f.wire_name == "result"
                and isinstance(f.type, ir.Union_)
                and ir.Ref(result) in f.type.members
            ):
                alternatives += [
                    m.name for m in f.type.members if isinstance(m, ir.Ref) and m.name != result
                ]
    if params is not None and any(f.wire_name == "task" for f in classes[params].fields):
        alternatives.append("CreateTaskResult")
    return list(dict.fromkeys(alternatives))


def _error_codes(
    builder: Builder, classes: dict[str, ir.ModelClass], generic: str
) -> tuple[ir.ErrorCode, ...]:
    codes: dict[int, ir.ErrorCode] = {}
    for name in sorted(builder.defs):
        if name not in classes:
            continue
        error_model = name
        error_field = next((f for f in classes[name].fields if f.wire_name == "error"), None)
        if error_field is not None and isinstance(error_field.type, ir.Ref):
            error_model = error_field.type.name
        code_field = (
            next(
                (
                    f
                    for f in classes.get(error_model, classes[name]).fields
                    if f.wire_name == "code"
                ),
                None,
            )
            if error_model in classes
            else None
        )
        if code_field is None or not isinstance(code_field.type, ir.Const):
            continue
        (code,) = code_field.type.values
        assert isinstance(code, int)
        constant = JSONRPC_CODES.get(code) or _upper_snake(name.removesuffix("Error"))
        codes[code] = ir.ErrorCode(constant, code, error_model)
    for code, constant in JSONRPC_CODES.items():
        codes.setdefault(code, ir.ErrorCode(constant, code, generic))
    return tuple(sorted(codes.values(), key=lambda e: -e.code))


def generic_error(classes: dict[str, ir.ModelClass]) -> str:
    """The model of an ``error`` member in general: what the error envelope refers to.

    2025-11-25 on, the envelope is ``JSONRPCErrorResponse`` and its error the
    ``Error`` def; the draft-07 schemas inline it in ``JSONRPCError``.
    """
    for envelope in ERROR_ENVELOPES:
        if envelope in classes:
            field = next(f for f in classes[envelope].fields if f.wire_name == "error")
            assert isinstance(field.type, ir.Ref)
            return field.type.name
    raise BuildError("no JSON-RPC error envelope among the definitions")


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).upper()
