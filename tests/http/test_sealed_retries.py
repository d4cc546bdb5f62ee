"""`Endpoint(request_state=...)`: a 2026-07-28 ``ask`` answered on one
replica is retried on another (two endpoints sharing a key ring, a restarted
one, a rotated one) and completes; without the sealer, or for another
principal, the retry is refused with -32602 and never reaches the handler."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from mcp_schema.http import Endpoint, Response
from mcp_schema.request_state import StateKeys, StateSealer
from mcp_schema.session import InputReceived
from tests.http.test_binding import META, SEEN, call, endpoint, post

KEY = "the replicas' shared key, at least 32 bytes"
ASKING = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
ANSWER = {"word": {"action": "accept", "content": {}}}


def replica(*keys: str, **options: Any) -> Endpoint:
    return endpoint(request_state=StateSealer(StateKeys(*(keys or (KEY,)))), **options)


def asked_on(ep: Endpoint, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The call ``ask`` of a client that can be asked, answered by ``ep``: the retry to send."""
    message = call("ask", 1)
    message["params"]["_meta"] = ASKING
    response = post(ep, message, headers)
    assert response.status == 200
    result = json.loads(response.body)["result"]
    assert result["resultType"] == "input_required" and list(result["inputRequests"]) == ["word"]
    retry = call("ask", 2)
    retry["params"].update(_meta=ASKING, requestState=result["requestState"], inputResponses=ANSWER)
    return retry


def completed(response: Response) -> bool:
    answer = json.loads(response.body)
    return response.status == 200 and answer.get("result", {}).get("content") == [
        {"type": "text", "text": "asked"}
    ]


def test_the_retry_completes_on_another_replica() -> None:
    first, second = replica(), replica()
    retry = asked_on(first)
    SEEN.clear()
    assert completed(post(second, retry))
    assert [type(e) for e in SEEN if isinstance(e, InputReceived)] == [InputReceived]


def test_the_retry_completes_on_a_restarted_replica_and_after_rotation() -> None:
    retry = asked_on(replica())
    assert completed(post(replica(), retry))  # a new process, the same key
    assert completed(post(replica("the next key, also at least 32 bytes", KEY), retry))


def test_without_a_sealer_the_retry_is_refused_and_never_reaches_the_handler() -> None:
    plain = endpoint()
    retry = asked_on(plain)
    SEEN.clear()
    response = post(endpoint(), retry)  # another per-request session: nothing remembered
    answer = json.loads(response.body)
    assert (response.status, answer["error"]["code"]) == (400, -32602)
    assert SEEN == []


def principal(headers: Mapping[str, str]) -> str | None:
    return headers.get("x-user")


def test_the_retry_is_bound_to_the_principal_the_headers_name() -> None:
    retry = asked_on(replica(principal=principal), {"x-user": "alice"})
    other = replica(principal=principal)
    SEEN.clear()
    for headers in ({"x-user": "mallory"}, {}):
        response = post(other, retry, headers)
        error = json.loads(response.body)["error"]
        assert error["data"]["errors"][0]["reason"] == "sealed for another principal"
    assert SEEN == []
    assert completed(post(other, retry, {"x-user": "alice"}))


def test_a_principal_that_is_not_callable_is_refused() -> None:
    with pytest.raises(TypeError, match="principal"):
        replica(principal="alice")
