"""`StatelessCalls` against a hostile or unusual upstream, and what a client
sends that 2026-07-28 cannot carry: each ends in a JSON-RPC error to the
client's request (never an exception out of the bridge) and, where the
bridge refuses, a finding."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_schema.http.stream import Response
from tests.gateway.test_to_stateless import Bridged, texts, upstream
from tests.hostile import raw

ROOTS = {"method": "roots/list", "params": {}}
URL_ELICIT = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://x.test/", "elicitationId": "e"},
}


class Canned:
    """The example upstream, but ``tools/call`` answered with ``answer``
    (a JSON value, a `Response`, or what makes one of the call's id)."""

    def __init__(self, answer: Any) -> None:
        self.real, self.answer = upstream(), answer

    def handle(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> Response:
        value = json.loads(body)
        if value.get("method") != "tools/call":
            return self.real.handle(method, path, headers, body)
        if isinstance(self.answer, Response):
            return self.answer
        if callable(self.answer):
            return self.answer(value["id"])  # type: ignore[no-any-return]
        answer = {"jsonrpc": "2.0", "id": value["id"], **self.answer}
        return Response(200, [("content-type", "application/json")], raw(answer))


def asked(*asks: dict[str, Any]) -> dict[str, Any]:
    """An input-required result asking ``asks`` (keyed a, b...)."""
    requests = {chr(97 + i): ask for i, ask in enumerate(asks)}
    return {
        "result": {"resultType": "input_required", "inputRequests": requests, "requestState": "s"}
    }


def failed_call(bridged: Bridged) -> Any:
    answer = bridged.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert answer.result is None and answer.error is not None
    return answer.error


@pytest.mark.parametrize(
    "answer",
    [
        {"result": {"resultType": "complete", "content": "not a list"}},
        {"result": {"resultType": "no such kind"}},
        {"error": {"code": "not a number", "message": 1}},
        {"nothing": True},
    ],
)
def test_an_invalid_upstream_answer_is_an_error_to_the_client(answer: dict[str, Any]) -> None:
    error = failed_call(Bridged({}, up=Canned(answer)))
    assert error.code in (-32600, -32602, -32603)


@pytest.mark.parametrize(
    ("response", "code"),
    [
        (Response(500, [("content-type", "text/plain")], b"down"), -32603),
        (Response(200, [("content-type", "text/html")], b"<html>"), -32603),
        (Response(200, [("content-type", "application/json")], b"{"), -32603),
        (Response(202), -32603),
    ],
)
def test_a_broken_upstream_exchange_is_an_error_to_the_client(
    response: Response, code: int
) -> None:
    assert failed_call(Bridged({}, up=Canned(response))).code == code


def test_a_task_result_is_invalid_from_a_client_without_the_extension() -> None:
    task = {
        "resultType": "task",
        "taskId": "t1",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttl": None,
    }
    bridged = Bridged({}, up=Canned({"result": task}))
    error = failed_call(bridged)
    assert error.code == -32602 and "content" in error.message
    assert bridged.calls is not None and bridged.calls.pending() == 0


def test_an_upstream_error_passes_as_it_is() -> None:
    error = failed_call(Bridged({}, up=Canned({"error": {"code": -32002, "message": "gone"}})))
    assert (error.code, error.message) == (-32002, "gone")


def test_an_ask_the_client_did_not_declare_is_refused_and_reported() -> None:
    bridged = Bridged({"elicitation": {}}, up=Canned(asked(ROOTS)))
    error = failed_call(bridged)
    assert error.code == -32603 and "Cannot carry the server's ask" in error.message
    assert bridged.calls is not None
    (finding,) = bridged.calls.take_findings()
    assert "roots" in finding["message"] and bridged.calls.pending() == 0


def test_an_ask_the_clients_version_has_no_form_for_is_refused() -> None:
    # URL-mode elicitation came with 2025-11-25: a 2025-06-18 client cannot be sent one.
    bridged = Bridged({"elicitation": {}}, version="2025-06-18", up=Canned(asked(URL_ELICIT)))
    error = failed_call(bridged)
    assert "Cannot carry the server's ask" in error.message


def test_a_notification_of_no_call_on_a_calls_stream_is_reported_and_the_call_answered() -> None:
    updated = {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "x"},
    }

    def stream(rid: int) -> Response:
        done = {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "content": []}}
        events = b"".join(b"event: message\ndata: " + raw(m) + b"\n\n" for m in (updated, done))
        return Response(200, [("content-type", "text/event-stream")], events)

    bridged = Bridged({}, up=Canned(stream))
    answer = bridged.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert answer.error is None and texts(answer.result) == ""
    assert bridged.calls is not None
    (finding,) = bridged.calls.take_findings()
    assert finding["direction"] == "server->client" and "resources/updated" in finding["message"]


def test_a_clients_roots_list_changed_is_not_carried_and_reported() -> None:
    bridged = Bridged({"roots": {"listChanged": True}})
    bridged.client.notify("notifications/roots/list_changed")
    bridged.pump()
    assert bridged.calls is not None
    (finding,) = bridged.calls.take_findings()
    assert finding["direction"] == "client->server" and "roots/list_changed" in finding["message"]
