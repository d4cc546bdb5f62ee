"""Regression tests for each Correlator finding of issue 18."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import pytest

from mcp_schema import codec
from mcp_schema.errors import McpError

INIT: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    },
}
NAMING_2026: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 5,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def raw(value: Any) -> bytes:
    return json.dumps(value).encode()


def refusal(correlator: codec.Correlator, value: Any, **options: Any) -> McpError:
    with pytest.raises(McpError) as caught:
        correlator.decode(raw(value), **options)
    return caught.value


def test_a_server_learns_its_version_without_feeding_its_own_answer() -> None:
    server = codec.Correlator()
    server.decode(raw(INIT))
    server.fix("2025-06-18")  # what it answered
    assert server.version == "2025-06-18"
    assert refusal(server, NAMING_2026).code == -32022
    with pytest.raises(McpError):
        server.fix("2025-11-25")
    assert server.version == "2025-06-18"


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_no_message_switches_a_negotiated_version(version: str) -> None:
    session = codec.Correlator()
    if version == "2026-07-28":
        session.decode(raw(NAMING_2026))
    else:
        session.decode(raw(INIT | {"params": {**INIT["params"], "protocolVersion": version}}))
        answer = {
            "protocolVersion": version,
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        }
        session.decode(raw({"jsonrpc": "2.0", "id": 0, "result": answer}))
    assert session.version == version
    other = "2025-06-18" if version == "2026-07-28" else "2026-07-28"
    naming = {**NAMING_2026, "id": 9}
    naming["params"] = {
        "_meta": {
            **NAMING_2026["params"]["_meta"],
            "io.modelcontextprotocol/protocolVersion": other,
        }
    }
    err = refusal(session, naming)
    assert err.code == -32022 and session.version == version


def test_refusals_of_a_full_table_or_an_id_in_flight_answer_with_the_id() -> None:
    session = codec.Correlator(version="2025-11-25", max_pending=1)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    session.decode(raw(ping), sender="client")
    again = refusal(session, ping, sender="client")
    assert again.code == -32600 and again.to_response()["id"] == 1
    full = refusal(session, ping | {"id": "two"}, sender="client")
    assert full.code == -32600 and full.to_response()["id"] == "two"


def test_errors_reading_a_response_are_not_answerable() -> None:
    session = codec.Correlator(version="2025-11-25")
    rid, _ = session.request("roots/list", sender="server")
    err = refusal(
        session, {"jsonrpc": "2.0", "id": rid, "result": {"roots": "no"}}, sender="client"
    )
    assert err.code == -32602 and not err.answerable


def test_request_leaks_no_pending_entry_when_it_cannot_be_encoded() -> None:
    session = codec.Correlator(version="2025-11-25")
    with pytest.raises(ValueError):
        session.request("sampling/createMessage", {"messages": "no"}, sender="server")
    assert session.pending == 0


def test_eight_threads_share_one_correlator() -> None:
    session = codec.Correlator(version="2025-11-25")
    failures: list[BaseException] = []

    def work(thread: int) -> None:
        try:
            for i in range(200):
                rid, _ = session.request("ping", sender="server")
                session.decode(raw({"jsonrpc": "2.0", "id": rid, "result": {}}), sender="client")
                mine = f"{thread}-{i}"
                session.decode(
                    raw({"jsonrpc": "2.0", "id": mine, "method": "ping"}), sender="client"
                )
                session.decode(raw({"jsonrpc": "2.0", "id": mine, "result": {}}), sender="server")
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
            assert not thread.is_alive()
    finally:
        sys.setswitchinterval(interval)
    assert failures == [] and session.pending == 0


def test_an_initialize_naming_a_version_fixes_none() -> None:
    # Read in the version it names; its result, not the request, fixes the
    # session version (an initialize naming an unsupported one is refused).
    client = codec.Correlator()
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-06-18"}}
    client.decode(raw({**INIT, "params": {**INIT["params"], **meta}}))
    assert client.version is None
    garbage = {"_meta": {"io.modelcontextprotocol/protocolVersion": "garbage"}}
    assert (
        refusal(client, {**INIT, "id": 1, "params": {**INIT["params"], **garbage}}).code == -32022
    )
    assert client.version is None
    answer = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        },
    }
    client.decode(raw(answer))
    assert client.version == "2025-06-18"


def test_an_option_changed_between_messages_is_checked_and_followed() -> None:
    session = codec.Correlator()
    vendor = {"jsonrpc": "2.0", "id": 9, "method": "vendor/thing"}
    assert refusal(session, vendor).code == -32601
    with pytest.raises(TypeError):
        session.allow_unknown_methods = 1  # type: ignore[assignment]
    assert session.allow_unknown_methods is False  # a refused change changes nothing
    session.allow_unknown_methods = True
    session.decode(raw(vendor))
    assert session.pending == 1


def test_tools_given_check_a_calls_param_headers_and_a_refused_call_is_not_pending() -> None:
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    }
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "t",
            "arguments": {"region": "eu"},
            "_meta": NAMING_2026["params"]["_meta"],
        },
    }
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "t"}
    connection = codec.Correlator()
    with pytest.raises(McpError) as refused:
        connection.decode_dict(raw(message), sender="client", headers=headers, tools={"t": tool})
    assert refused.value.code == -32020 and connection.pending == 0
    connection.decode_dict(raw(message), sender="client", headers=headers, tools={})  # not known
    assert connection.pending == 1
    message["id"] = 2
    headers["mcp-param-region"] = "eu"
    connection.decode(raw(message), sender="client", headers=headers, tools={"t": tool})
    assert connection.pending == 2
