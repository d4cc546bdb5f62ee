"""The ``Correlator`` on hostile input: id spaces, in-flight duplicates, malformed responses, bounds, versions.

Each must end in a result or a typed `McpError` (a wrong argument type from the
calling program: ``TypeError``), in linear cost, with bounded error output.
"""

from __future__ import annotations

import json
from collections.abc import Sized
from typing import Any

import pytest

from mcp_schema import codec, errors
from mcp_schema.errors import McpError
from tests.hostile import raw

PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


def decode_error(raw: Any, **kw: Any) -> McpError:
    with pytest.raises(McpError) as info:
        codec.decode(raw, **kw)
    return info.value


def decode_error_of(session: codec.Correlator, body: bytes, **kw: Any) -> int:
    with pytest.raises(McpError) as info:
        session.decode(body, **kw)
    return info.value.code


def j(message: Any) -> bytes:
    return json.dumps(message).encode()


CLIENT_CALL = j({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}})
SERVER_ROOTS = j({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})
CALL_RESULT = j({"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
ROOTS_RESULT = j({"jsonrpc": "2.0", "id": 1, "result": {"roots": []}})


def test_each_peer_has_its_own_id_space() -> None:
    session = codec.Correlator(version="2025-11-25")
    session.decode(CLIENT_CALL)  # a client method: the client's id 1
    session.decode(SERVER_ROOTS)  # a server method: the server's id 1
    assert session.pending == 2
    assert decode_error_of(session, CALL_RESULT) == -32600  # which id 1? nothing forgotten
    assert session.pending == 2
    call = session.decode(CALL_RESULT, sender="server")
    roots = session.decode(ROOTS_RESULT, sender="client")
    assert type(call.result).__name__ == "CallToolResult"  # type: ignore[attr-defined]
    assert type(roots.result).__name__ == "ListRootsResult"  # type: ignore[attr-defined]
    assert session.pending == 0


def test_explicit_senders_keep_both_directions_apart() -> None:
    session = codec.Correlator(version="2025-11-25")
    ping = j({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    session.decode(ping, sender="client")
    session.decode(ping, sender="server")  # the same id, the other peer's space
    assert session.pending == 2
    session.decode(j({"jsonrpc": "2.0", "id": 7, "result": {}}), sender="server")
    session.decode(j({"jsonrpc": "2.0", "id": 7, "result": {}}), sender="client")
    assert session.pending == 0
    with pytest.raises(TypeError):
        session.decode(ping, sender="proxy")  # type: ignore[arg-type]


def test_a_duplicate_in_flight_id_is_refused_and_the_pending_request_kept() -> None:
    session = codec.Correlator(version="2025-11-25")
    session.decode(CLIENT_CALL)
    list_tools = j({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert decode_error_of(session, list_tools) == -32600
    reply = session.decode(CALL_RESULT)
    assert type(reply.result).__name__ == "CallToolResult"  # type: ignore[attr-defined]


def test_a_malformed_response_does_not_consume_the_pending_request() -> None:
    session = codec.Correlator(version="2025-11-25")
    session.decode(CLIENT_CALL)
    for bad in (
        b'{"id": 1, "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {"content": 5}}',
    ):
        with pytest.raises(McpError):
            session.decode(bad)
        assert session.pending == 1
    reply = session.decode(CALL_RESULT)
    assert type(reply.result).__name__ == "CallToolResult"  # type: ignore[attr-defined]


def test_cancelled_and_forgotten_requests_leave_the_table() -> None:
    session = codec.Correlator(version="2025-11-25")
    session.decode(CLIENT_CALL)
    session.decode(
        j({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    )
    assert session.pending == 0
    session.decode(CLIENT_CALL)
    assert session.forget(1) and not session.forget(1) and session.pending == 0


def test_a_server_feeding_its_own_replies_sees_them_answered() -> None:
    server = codec.Correlator(version="2025-11-25")
    server.decode(CLIENT_CALL)  # in
    server.decode(CALL_RESULT)  # out: answers the client's request
    assert server.pending == 0


def test_the_pending_table_is_bounded() -> None:
    session = codec.Correlator(version="2025-11-25", max_pending=100)
    for i in range(100):
        session.decode(j({"jsonrpc": "2.0", "id": i, "method": "ping"}), sender="client")
    assert (
        decode_error_of(
            session, j({"jsonrpc": "2.0", "id": 100, "method": "ping"}), sender="client"
        )
        == -32600
    )
    assert session.pending == 100
    session.decode(j({"jsonrpc": "2.0", "id": 0, "method": "ping"}), sender="server")
    assert session.pending == 101  # the other peer's table has room of its own


def test_only_validated_requests_and_initialize_results_change_the_session_version() -> None:
    session = codec.Correlator(version="2025-11-25")
    other = j(
        {
            "jsonrpc": "2.0",
            "method": "notifications/whatever",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        }
    )
    assert decode_error_of(session, other) == -32022  # this session speaks 2025-11-25
    assert session.version == "2025-11-25"
    handshake = codec.Correlator()
    handshake.decode(
        j(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            }
        )
    )
    assert (
        decode_error_of(
            handshake,
            j(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {
                        "protocolVersion": "2099-01-01",
                        "capabilities": {},
                        "serverInfo": {"name": "s", "version": "1"},
                    },
                }
            ),
        )
        == -32022
    )
    assert handshake.version is None and handshake.pending == 0
    assert handshake.decode(PING)  # later traffic still decodes


def test_a_long_unsupported_version_is_cut_in_the_message_and_data() -> None:
    body = raw(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "ping",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "v\n" * 500_000}},
        }
    )
    err = decode_error(body)
    assert err.code == -32022 and "\n" not in err.message and len(err.message) < 300
    assert len(err.data["requested"]) <= errors.MAX_QUOTED
    assert len(json.dumps(err.to_response(1))) < 1000


def test_a_long_version_negotiated_by_initialize_is_cut_in_the_error() -> None:
    # The initialize result is peer text too: its -32022 stays small.
    session = codec.Correlator()
    session.decode(
        j(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            }
        )
    )
    answer = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "9\n" * 500_000,
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    with pytest.raises(McpError) as info:
        session.decode(j(answer))
    err = info.value
    assert err.code == -32022 and "\n" not in err.message and len(err.message) < 300
    assert len(err.data["requested"]) <= errors.MAX_QUOTED
    assert len(json.dumps(err.to_response(0))) < 1000


def test_method_names_a_peer_makes_up_build_no_validator_each() -> None:
    """With allow_unknown_methods, a peer may name a new method in every request;
    the responses are all read as the generic result, by one validator."""
    from mcp_schema._codec import catalog, schemas, views

    def cached() -> int:
        builders: tuple[Sized, ...] = (
            views.model_of,
            views._build_model_validator,
            catalog._catalog,
            schemas._compiled,
        )
        return sum(map(len, builders))

    correlator = codec.Correlator(version="2025-11-25", allow_unknown_methods=True)
    for i in range(40):
        view = correlator.decode if i % 2 else correlator.decode_dict
        view(b'{"jsonrpc":"2.0","id":%d,"method":"made/up/%d"}' % (i, i), sender="client")
        decoded = view(b'{"jsonrpc":"2.0","id":%d,"result":{"k":%d}}' % (i, i), sender="server")
        assert codec.encode(decoded) == b'{"jsonrpc":"2.0","id":%d,"result":{"k":%d}}' % (i, i)
        if i == 1:
            first = cached()
    assert cached() == first
    assert not any(m.startswith("made/") for m in catalog.catalog("2025-11-25", ())._results)
