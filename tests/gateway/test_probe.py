"""`mcp_schema.gateway.probe.Probe`, sans-IO: the ``server/discover`` request
it builds, and what each kind of upstream answer tells (the package's own
endpoint serving 2026-07-28 only, every version, or the handshake era only;
an HTTP error status; a server error)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_schema.gateway.probe import Probe, ProbeError, Served
from mcp_schema.http import Endpoint
from mcp_schema.http.stream import Response
from mcp_schema.session import ServerSession
from mcp_schema.versions import SUPPORTED_VERSIONS

CAPABILITIES = {"tools": {"listChanged": True}}
INFO = {"name": "up", "version": "1"}


def probed(answer: object) -> Served:
    """The probe's outcome, each of its posts answered by ``answer`` (an
    `Endpoint`, or a fixed `Response`)."""
    probe = Probe()
    for _ in range(4):
        for post in probe.posts():
            if isinstance(answer, Endpoint):
                response = answer.handle(post.method, "/mcp", list(post.headers), post.body)
            else:
                assert isinstance(answer, Response)
                response = answer
            reply = probe.reply(post, response.status, response.headers)
            body = response.body if response.stream is None else response.stream.take()
            found = probe.read(reply.feed(body) + reply.end())
            if found is not None:
                if isinstance(answer, Endpoint) and found.handshake and found.stateless:
                    assert probe.closing is not None and probe.closing.method == "DELETE"
                return found
    raise AssertionError("the probe did not settle")


def endpoint(versions: list[str]) -> Endpoint:
    return Endpoint(
        lambda s, e: None,
        info=INFO,
        capabilities=CAPABILITIES,
        instructions="be kind",
        versions=versions,
    )


def test_the_discover_request_is_a_2026_one_with_its_headers() -> None:
    (post,) = Probe().posts()
    headers = dict(post.headers)
    assert headers["mcp-protocol-version"] == "2026-07-28"
    assert headers["mcp-method"] == "server/discover"
    assert json.loads(post.body)["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]


def test_a_2026_only_upstream() -> None:
    served = probed(endpoint(["2026-07-28"]))
    assert served.stateless == ("2026-07-28",) and not served.handshake
    assert served.capabilities == CAPABILITIES and served.server_info == INFO
    assert served.instructions == "be kind"
    assert served.serves("2026-07-28") and not served.serves(None)


def test_an_upstream_of_both_eras_that_lists_only_2026_is_asked_initialize() -> None:
    up = endpoint(list(SUPPORTED_VERSIONS))
    served = probed(up)
    assert served.stateless == ("2026-07-28",) and served.handshake


def test_a_handshake_only_upstream_refusing_with_its_versions_is_initialized() -> None:
    served = probed(endpoint(["2025-06-18"]))  # -32022, listing 2025-06-18
    assert (served.stateless, served.handshake, served.discovered) == ((), True, False)
    assert served.serves(None) and not served.serves("2026-07-28")
    # What the bridge for 2026-07-28 clients speaks to it with: no second probe.
    assert served.version == "2025-06-18"
    assert served.capabilities == CAPABILITIES and served.server_info == INFO


@pytest.mark.parametrize("status", [400, 404, 405])
def test_a_server_that_does_not_know_discover_is_of_the_handshake_era(status: int) -> None:
    assert probed(Response(status, [("content-type", "text/plain")], b"no")) == Served((), True)
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    answer = Response(status, [("content-type", "application/json")], json.dumps(error).encode())
    assert probed(answer).handshake


def test_a_server_error_tells_nothing() -> None:
    with pytest.raises(ProbeError, match="500"):
        probed(Response(500, [("content-type", "text/plain")], b"down"))


def test_the_probe_tells_the_extensions_the_upstream_declares() -> None:
    tasks: dict[str, Any] = {"io.modelcontextprotocol/tasks": {}}
    up = Endpoint(
        lambda s, e: None,
        info=INFO,
        capabilities={**CAPABILITIES, "extensions": tasks},
        versions=list(SUPPORTED_VERSIONS),
    )
    served = probed(up)
    assert served.discovered and served.extensions == frozenset({"io.modelcontextprotocol/tasks"})
    assert probed(endpoint(["2026-07-28"])).extensions == frozenset()


def test_an_upstream_that_did_not_discover_declares_nothing_known() -> None:
    served = probed(endpoint(["2025-06-18"]))
    assert not served.discovered and served.extensions is None


def over_stdio(server: ServerSession) -> Served:
    """The probe over stdio: each frame it writes is a line ``server`` reads,
    each frame ``server`` writes a line the probe reads."""
    probe = Probe(transport="stdio")
    for _ in range(4):
        for frame in probe.frames():
            server.receive(frame)
            for line in server.data_to_send():
                found = probe.receive(line)
                if found is not None:
                    return found
    raise AssertionError("the probe did not settle")


def test_over_stdio_a_handshake_only_server_is_initialized_after_its_refusal() -> None:
    server = ServerSession(info=INFO, capabilities=CAPABILITIES, versions=["2025-06-18"])
    served = over_stdio(server)
    assert (served.stateless, served.handshake, served.version) == ((), True, "2025-06-18")
    assert served.capabilities == CAPABILITIES and served.server_info == INFO


def test_over_stdio_a_server_that_discovers_is_served_as_it_is() -> None:
    server = ServerSession(info=INFO, capabilities=CAPABILITIES, versions=["2026-07-28"])
    served = over_stdio(server)
    assert served.discovered and served.stateless == ("2026-07-28",) and served.version is None
