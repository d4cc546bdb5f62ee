"""mcp_schema._codec.versioning: the one rule every reader asks for a
message's version (sessions, the Correlator, decode)."""

from __future__ import annotations

import pytest

from mcp_schema import codec
from mcp_schema._codec.versioning import NULL_VERSION, read_version
from mcp_schema.errors import UnsupportedProtocolVersionError
from mcp_schema.versions import DEFAULT_VERSION, SUPPORTED_VERSIONS

NEW = "2026-07-28"


def test_an_initialize_naming_no_version_predates_the_session_version() -> None:
    assert read_version(None, "initialize", None, None, "2025-06-18") == DEFAULT_VERSION
    assert read_version(NEW, "initialize", None, None) == NEW  # one that names one is read in it
    assert read_version(None, None, None, None, "2025-06-18") == "2025-06-18"  # decode's rule


@pytest.mark.parametrize("named", ["1999-01-01", NULL_VERSION, 7])
def test_a_reader_of_no_session_refuses_with_every_supported_version(named: object) -> None:
    with pytest.raises(UnsupportedProtocolVersionError) as refused:
        read_version(named, "ping", None)
    assert refused.value.data["supported"] == list(SUPPORTED_VERSIONS)
    assert "session" not in refused.value.message


def test_decode_and_a_session_reader_agree_on_a_named_version() -> None:
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'
        b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
    )
    session = codec.Correlator()
    session.decode(body)
    assert session.version == NEW == read_version(NEW, "tools/list", None)
    assert type(codec.decode(body)).__module__.startswith("mcp_schema.v2026_07_28")
