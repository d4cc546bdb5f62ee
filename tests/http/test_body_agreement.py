"""Headers given to ``decode`` must agree with the body (-32020); neither silently wins.

Each must end in a result or a typed `McpError` (a wrong argument type from the
calling program: ``TypeError``), in linear cost, with bounded error output.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_schema import codec
from mcp_schema.errors import HeaderMismatchError, McpError
from tests.hostile import call, raw

PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


def decode_error(raw: Any, **kw: Any) -> McpError:
    with pytest.raises(McpError) as info:
        codec.decode(raw, **kw)
    return info.value


GOOD_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "t"}


@pytest.mark.parametrize(
    ("change", "header"),
    [
        ({"MCP-Protocol-Version": "2025-11-25"}, "MCP-Protocol-Version"),
        ({"Mcp-Method": "tools/list"}, "Mcp-Method"),
        ({"Mcp-Name": "evil"}, "Mcp-Name"),
    ],
)
def test_headers_that_disagree_with_the_body_are_refused(
    change: dict[str, str], header: str
) -> None:
    err = decode_error(raw(call()), headers={**GOOD_HEADERS, **change})
    assert err.code == -32020 and err.data["header"] == header
    pairs = [(k.encode(), v.encode()) for k, v in {**GOOD_HEADERS, **change}.items()]
    assert decode_error(raw(call()), headers=pairs).code == -32020
    with pytest.raises(HeaderMismatchError):
        codec.Correlator().decode(raw(call()), headers={**GOOD_HEADERS, **change})


def test_agreeing_headers_give_the_message_decoded_without_them() -> None:
    plain = codec.encode(codec.decode(raw(call())))
    assert codec.encode(codec.decode(raw(call()), headers=GOOD_HEADERS)) == plain
    assert codec.encode(codec.Correlator().decode(raw(call()), headers=GOOD_HEADERS)) == plain


def test_handshake_era_headers_that_are_present_must_agree() -> None:
    assert codec.decode(PING, headers={"MCP-Protocol-Version": "2025-11-25"})
    assert (
        decode_error(
            PING, version="2025-11-25", headers={"MCP-Protocol-Version": "2026-07-28"}
        ).code
        == -32020
    )
    assert decode_error(PING, headers={"Mcp-Method": "tools/list"}).code == -32020
    session = codec.Correlator(version="2025-11-25")
    assert decode_error_of(session, PING, headers={"MCP-Protocol-Version": "2026-07-28"}) == -32020


def test_header_values_of_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        codec.decode(raw(call()), headers={"MCP-Protocol-Version": 5})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        codec.decode(raw(call()), headers=["MCP-Protocol-Version"])  # type: ignore[list-item]


def decode_error_of(session: codec.Correlator, body: bytes, **kw: Any) -> int:
    with pytest.raises(McpError) as info:
        session.decode(body, **kw)
    return info.value.code
