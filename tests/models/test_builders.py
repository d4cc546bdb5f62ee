"""The builders SDK authors wrote by hand: notifications per version,
server-initiated requests through a `Correlator`, and the server side of
input-required results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_schema import builders
from mcp_schema._codec.catalog import catalog
from mcp_schema.codec import Correlator, ResultResponse, decode, encode
from mcp_schema.context import check_input_responses, input_required, retry_with_input
from mcp_schema.errors import (
    InvalidParamsError,
    InvalidRequestError,
    UnsupportedProtocolVersionError,
)
from mcp_schema.tables import VersionTables
from mcp_schema.versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS, protocol

NOTIFICATIONS: list[tuple[str, Any, dict[str, Any] | None]] = [
    (
        "notifications/progress",
        lambda v: builders.progress(v, "tok", 1, total=2),
        {"progressToken": "tok", "progress": 1, "total": 2},
    ),
    (
        "notifications/message",
        lambda v: builders.log_message(v, "info", {"n": 1}, logger="db"),
        {"level": "info", "data": {"n": 1}, "logger": "db"},
    ),
    ("notifications/tools/list_changed", lambda v: builders.list_changed(v, "tools"), None),
    (
        "notifications/resources/list_changed",
        lambda v: builders.list_changed(v, "resources"),
        None,
    ),
    ("notifications/prompts/list_changed", lambda v: builders.list_changed(v, "prompts"), None),
    (
        "notifications/cancelled",
        lambda v: builders.cancelled(v, 4, reason="gone"),
        {"requestId": 4, "reason": "gone"},
    ),
    (
        "notifications/resources/updated",
        lambda v: builders.resource_updated(v, "file:///a"),
        {"uri": "file:///a"},
    ),
]


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
@pytest.mark.parametrize(
    ("method", "build", "params"), NOTIFICATIONS, ids=[n[0] for n in NOTIFICATIONS]
)
def test_notification_is_the_versions_model(
    version: str, method: str, build: Any, params: dict[str, Any] | None
) -> None:
    entry = catalog(version, ()).notifications.get(method)
    if entry is None:
        with pytest.raises(ValueError, match="has no notification"):
            build(version)
        return
    message = build(version)
    assert type(message) is entry.notification
    wire = json.loads(encode(message))
    expected: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        expected["params"] = params
    assert wire == expected
    if version in HANDSHAKE_VERSIONS:  # decoding the bytes in that version gives the same class
        assert type(decode(encode(message), version=version)) is entry.notification


def test_progress_leaves_out_what_is_not_given() -> None:
    wire = json.loads(encode(builders.progress(SUPPORTED_VERSIONS[-1], 7, 0.5)))
    assert wire["params"] == {"progressToken": 7, "progress": 0.5}


def test_refused_params_and_unknown_versions() -> None:
    with pytest.raises(ValueError, match="notifications/resources/updated"):
        builders.notification(SUPPORTED_VERSIONS[-1], "notifications/resources/updated", {"uri": 3})
    with pytest.raises(UnsupportedProtocolVersionError):
        builders.progress("1999-01-01", 1, 1)


# -- server-initiated requests -----------------------------------------------------------

SESSION = HANDSHAKE_VERSIONS[-1]

ANSWERS: list[tuple[str, dict[str, Any] | None, dict[str, Any], str]] = [
    ("roots/list", None, {"roots": [{"uri": "file:///x"}]}, "ListRootsResult"),
    (
        "sampling/createMessage",
        {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5},
        {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"},
        "CreateMessageResult",
    ),
    (
        "elicitation/create",
        {
            "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}},
        },
        {"action": "accept", "content": {"n": "Ada"}},
        "ElicitResult",
    ),
]


def test_server_requests_get_fresh_ids_and_typed_answers() -> None:
    session = Correlator(version=SESSION)
    sent = [session.request(method, params, sender="server") for method, params, _, _ in ANSWERS]
    ids = [rid for rid, _ in sent]
    assert len(set(ids)) == len(ids) and session.pending == len(ids)
    for (rid, raw), (method, params, _, _) in zip(sent, ANSWERS, strict=True):
        wire = json.loads(raw)
        assert (wire["id"], wire["method"], wire.get("params")) == (rid, method, params)
    entries = catalog(SESSION, ()).requests
    for (rid, _), (method, _, result, _) in zip(reversed(sent), reversed(ANSWERS), strict=True):
        answer = session.decode(
            json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode(), sender="client"
        )
        assert isinstance(answer, ResultResponse)
        assert type(answer.result) is entries[method].result
    assert session.pending == 0


def test_request_ids_skip_those_in_flight_and_are_not_the_clients() -> None:
    session = Correlator(version=SESSION)
    session.decode(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', sender="server")
    session.decode(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', sender="client")
    rid, _ = session.request("ping", sender="server")
    assert rid == 2  # 1 is the server's own ping in flight; the client's 1 is its own space
    client_rid, _ = session.request("ping", sender="client")
    assert client_rid == 2


def test_request_refusals_keep_the_table() -> None:
    session = Correlator(version=SESSION, max_pending=1)
    session.request("roots/list", sender="server")
    with pytest.raises(InvalidRequestError, match="limit"):
        session.request("roots/list", sender="server")
    with pytest.raises(ValueError, match="has no request"):
        session.request("no/such", sender="server")
    with pytest.raises(ValueError, match="elicitation/create"):
        session.request("elicitation/create", {"message": 3}, sender="server")
    assert session.pending == 1


# -- input-required, server side -----------------------------------------------------------

STATELESS = STATELESS_VERSIONS[-1]
CALL = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "book",
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
).encode()
ASK: dict[str, dict[str, Any]] = {
    "unit": {
        "method": "elicitation/create",
        "params": {"message": "Unit?", "requestedSchema": {"type": "object", "properties": {}}},
    },
    "roots": {"method": "roots/list"},
}
ANSWER: dict[str, dict[str, Any]] = {
    "unit": {"action": "accept", "content": {}},
    "roots": {"roots": []},
}


def _asked(state: str | None = "s-1") -> Any:
    return input_required(STATELESS, ASK, state=state)


def test_input_required_result_is_the_versions_arm() -> None:
    result = _asked()
    assert type(result) is _tables(STATELESS).result_arms["input_required"]
    assert json.loads(encode(result)) == {
        "resultType": "input_required",
        "requestState": "s-1",
        "inputRequests": ASK,
    }


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_handshake_versions_have_no_input_required(version: str) -> None:
    with pytest.raises(ValueError, match="no input-required"):
        input_required(version, ASK)


@pytest.mark.parametrize("state", ["s-1", None])
def test_the_clients_retry_passes_the_check(state: str | None) -> None:
    asked = _asked(state)
    retry = retry_with_input(decode(CALL), asked, ANSWER, request_id=8)
    responses = check_input_responses(decode(encode(retry)), asked)
    assert sorted(responses) == ["roots", "unit"]
    assert json.loads(encode(responses["unit"])) == ANSWER["unit"]


def _retry(params: dict[str, Any]) -> Any:
    message = json.loads(CALL)
    message["params"].update(params)
    return decode(json.dumps(message).encode())


@pytest.mark.parametrize(
    ("params", "path", "reason"),
    [
        ({"inputResponses": ANSWER}, "requestState", "missing"),
        ({"requestState": "forged", "inputResponses": ANSWER}, "requestState", "does not match"),
        (
            {"requestState": "s-1", "inputResponses": {"unit": ANSWER["unit"]}},
            "inputResponses",
            'no answer to "roots"',
        ),
        ({"requestState": "s-1"}, "inputResponses", 'no answer to "roots", "unit"'),
    ],
)
def test_a_wrong_retry_is_invalid_params(params: dict[str, Any], path: str, reason: str) -> None:
    with pytest.raises(InvalidParamsError) as info:
        check_input_responses(_retry(params), _asked())
    assert info.value.code == -32602
    assert f"$.params.{path}" in info.value.message and reason in info.value.message


def test_check_input_responses_takes_models_only() -> None:
    not_a_result: Any = {"requestState": "s-1"}
    with pytest.raises(TypeError, match="InputRequiredResult"):
        check_input_responses(decode(CALL), not_a_result)
    with pytest.raises(TypeError, match="decoded request model"):
        check_input_responses(json.loads(CALL), _asked())


def _tables(version: str) -> VersionTables:
    compiled = protocol(version)
    assert compiled is not None
    return compiled.load()


def test_the_builders_return_types_name_every_supported_version() -> None:
    # The registry's unions are generated from the method tables: every
    # version that has the notification, under its decoded class.
    import ast

    from mcp_schema import registry

    tree = ast.parse(Path(registry.__file__).read_text())
    aliases = {
        node.target.id: ast.unparse(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.value is not None
    }
    for method, name in (
        ("notifications/progress", "ProgressNotification"),
        ("notifications/message", "LoggingMessageNotification"),
        ("notifications/cancelled", "CancelledNotification"),
    ):
        for version in SUPPORTED_VERSIONS:
            cls = catalog(version, ()).notifications[method].notification
            package = cls.__module__.removesuffix(".models").removeprefix("mcp_schema.")
            assert f"{package}.{cls.__name__}" in aliases[name], (version, name)
