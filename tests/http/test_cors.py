"""CORS on the endpoint (mcp_schema.http.cors), sans-IO: the preflight of an
allowed origin answered, its responses readable (``Mcp-Session-Id``
exposed), and nothing for the loopback origins, for other origins (403 as
before) or with ``cors=False``."""

from __future__ import annotations

from typing import Any

from mcp_schema.http import Response
from tests.http.test_binding import BASE, INIT, endpoint, post, request

APP = "https://app.example.com"
PREFLIGHT = {
    "origin": APP,
    "access-control-request-method": "POST",
    "access-control-request-headers": "Content-Type, Mcp-Session-Id, Mcp-Param-City, X-Evil, mcp-param-a b",
}  # fmt: skip


def cors(response: Response) -> dict[str, str]:
    return {k: v for k, v in response.headers if k.startswith("access-control-") or k == "vary"}


def test_an_allowed_origins_preflight_is_answered() -> None:
    ep = endpoint(allowed_origins=[APP])
    answered = ep.handle("OPTIONS", "/mcp", PREFLIGHT)
    assert answered.status == 204
    assert cors(answered) == {
        "access-control-allow-methods": "POST, GET, DELETE",
        "access-control-max-age": "600",
        # What a client may send: not X-Evil, nor a name that is no HTTP token.
        "access-control-allow-headers": "content-type, mcp-session-id, mcp-param-city",
        "access-control-allow-origin": APP,
        "access-control-expose-headers": "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate",
        "vary": "Origin",
    }
    assert ep.precheck("OPTIONS", "/mcp", PREFLIGHT) == answered  # before any body is read


def test_an_allowed_origin_reads_its_responses_and_its_session_id() -> None:
    ep = endpoint(allowed_origins=[APP])
    opened = post(
        ep, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}, {"origin": APP}
    )
    assert opened.status == 200 and opened.header("mcp-session-id") is not None
    assert (
        cors(opened)["access-control-expose-headers"]
        == "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate"
    )
    assert cors(opened)["access-control-allow-origin"] == APP
    called = post(ep, request("tools/call", {"name": "hi", "arguments": {}}), {"origin": APP})
    assert called.status == 200 and cors(called)["access-control-allow-origin"] == APP
    refused = ep.handle("POST", "/mcp", {**BASE, "origin": APP}, b"[")
    assert refused.status == 400 and cors(refused)["access-control-allow-origin"] == APP  # readable
    early = ep.precheck("POST", "/mcp", {"origin": APP, "content-type": "text/plain"})
    assert (
        early is not None
        and early.status == 415
        and cors(early)["access-control-allow-origin"] == APP
    )


def no_cors(ep: Any, origin: str) -> tuple[int, dict[str, str], int]:
    preflight = ep.handle("OPTIONS", "/mcp", {**PREFLIGHT, "origin": origin})
    called = post(ep, request("tools/call", {"name": "hi", "arguments": {}}), {"origin": origin})
    return preflight.status, {**cors(preflight), **cors(called)}, called.status


def test_no_cors_for_other_origins_loopback_ones_or_when_it_is_off() -> None:
    assert no_cors(endpoint(allowed_origins=[APP]), "https://evil.example") == (403, {}, 403)
    assert no_cors(endpoint(allowed_origins=[APP]), "http://localhost:5173") == (405, {}, 200)
    assert no_cors(endpoint(), APP) == (403, {}, 403)  # off by default: no origins given
    assert no_cors(endpoint(allowed_origins=[APP], cors=False), APP) == (405, {}, 200)
