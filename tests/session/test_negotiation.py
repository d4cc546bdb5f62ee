"""mcp_schema.negotiation as sessions use it: a version is fixed only by a
request the session accepted, a session refuses what it does not serve in
either role, and a client hears "no version in common" alike in both eras."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_schema.errors import UnsupportedProtocolVersionError
from mcp_schema.negotiation import read_version
from mcp_schema.session import (
    ClientSession,
    Negotiated,
    ProtocolError,
    RequestReceived,
    ServerSession,
)
from mcp_schema.versions import DEFAULT_VERSION

INFO = {"name": "s", "version": "1"}
NEW = "2026-07-28"


def meta(**caps: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": NEW,
        "io.modelcontextprotocol/clientCapabilities": caps,
    }


def frames(session: ServerSession | ClientSession) -> list[Any]:
    return [json.loads(f) for f in session.data_to_send()]


REFUSED = [
    {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": meta()}},
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "requestState": "forged", "_meta": meta()},
    },
]


@pytest.mark.parametrize("request_", REFUSED, ids=["undeclared", "forged-state"])
def test_a_refused_stateless_request_fixes_no_version(request_: dict[str, Any]) -> None:
    session = ServerSession(info=INFO, capabilities={"tools": {}})
    events = session.receive(json.dumps(request_))
    assert [type(e) for e in events] == [ProtocolError]
    assert session.version is None
    opening = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO},
    }
    frames(session)
    events = session.receive(json.dumps(opening))
    (answer,) = frames(session)
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    assert isinstance(events[0], Negotiated) and session.version == "2025-11-25"


def test_an_accepted_stateless_request_fixes_the_version() -> None:
    session = ServerSession(info=INFO, capabilities={"tools": {}})
    listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}
    negotiated, request = session.receive(json.dumps(listed))
    assert isinstance(negotiated, Negotiated) and isinstance(request, RequestReceived)
    assert session.version == NEW


def test_a_client_refuses_a_request_in_a_version_it_does_not_serve() -> None:
    client = ClientSession(info=INFO, capabilities={"roots": {}}, versions=["2025-06-18"])
    old = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "roots/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2024-11-05"}},
    }
    (refused,) = client.receive(json.dumps(old))
    assert isinstance(refused, ProtocolError) and refused.error.code == -32022
    (answer,) = frames(client)
    assert answer["error"]["data"]["supported"] == ["2025-06-18"]
    server = ServerSession(info=INFO, versions=["2025-06-18"])
    (also,) = server.receive(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": old["params"]})
    )
    assert isinstance(also, ProtocolError) and also.error.code == -32022


def test_no_version_in_common_is_a_protocol_error_after_discover_as_after_initialize() -> None:
    client = ClientSession(info=INFO, versions=[NEW])
    client.discover()
    frames(client)
    answer = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "complete",
            "supportedVersions": ["2025-11-25"],
            "capabilities": {},
            "ttlMs": 0,
            "cacheScope": "private",
        },
    }
    (refused,) = client.receive(json.dumps(answer))
    assert isinstance(refused, ProtocolError) and refused.error.code == -32022
    assert not refused.answered and client.version is None


def test_read_version_decides_before_and_after_negotiation() -> None:
    served = ["2025-06-18", NEW]
    assert read_version(None, "initialize", None, served) == DEFAULT_VERSION
    assert read_version(NEW, "tools/list", None, served) == NEW
    assert read_version(None, "tools/list", None, served, header="2025-06-18") == "2025-06-18"
    assert read_version(None, "tools/list", "2025-06-18", served) == "2025-06-18"
    with pytest.raises(UnsupportedProtocolVersionError) as refused:
        read_version(NEW, "tools/list", "2025-06-18", served)
    assert getattr(refused.value, "data", None) == {"requested": NEW, "supported": ["2025-06-18"]}
    with pytest.raises(UnsupportedProtocolVersionError) as refused:
        read_version("2024-11-05", "ping", None, served)
    assert getattr(refused.value, "data", None) == {
        "requested": "2024-11-05",
        "supported": [NEW, "2025-06-18"],
    }


def test_a_second_negotiation_answer_changes_nothing() -> None:
    client = ClientSession(info=INFO)
    client.initialize()
    client.discover()
    frames(client)
    opened = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": INFO}
    (negotiated,) = client.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "result": opened}))
    assert isinstance(negotiated, Negotiated) and client.version == "2025-11-25"
    discovered = {
        "resultType": "complete",
        "supportedVersions": [NEW],
        "capabilities": {},
        "ttlMs": 0,
        "cacheScope": "private",
    }
    (refused,) = client.receive(json.dumps({"jsonrpc": "2.0", "id": 2, "result": discovered}))
    assert isinstance(refused, ProtocolError) and refused.error.code == -32600
    assert client.version == "2025-11-25"
