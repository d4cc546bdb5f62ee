"""``Decoder``: the options of many reads, checked once when it is made; the
keyword forms ``decode`` and ``decode_dict`` read through one."""

from __future__ import annotations

import json
from typing import Any

import pytest

import mcp_schema.v2025_11_25 as old
from mcp_schema._codec import decoding
from mcp_schema.codec import TASKS_EXTENSION, Decoder, ResultResponse, decode, decode_dict
from mcp_schema.errors import McpError, MethodNotFoundError

PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
UNKNOWN = b'{"jsonrpc": "2.0", "id": 2, "method": "vendor/thing"}'
TOOLS = b'{"jsonrpc": "2.0", "id": 3, "result": {"tools": []}}'


@pytest.mark.parametrize(
    "options",
    [
        {"version": 2025},
        {"extensions": "io.modelcontextprotocol/tasks"},
        {"extensions": [1]},
        {"allow_unknown_methods": 1},
        {"assume_complete": "yes"},
        {"lenient_newer": 0},
    ],
)
def test_options_of_the_wrong_type_are_refused_when_it_is_made(options: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        Decoder(**options)
    with pytest.raises(TypeError):  # the keyword forms check them the same way
        decode(PING, **options)
    with pytest.raises(TypeError):
        decode_dict(PING, **options)


def test_a_flag_given_as_an_int_never_finds_the_decoder_of_the_bool() -> None:
    assert decode(UNKNOWN, allow_unknown_methods=True).method == "vendor/thing"  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        decode(UNKNOWN, allow_unknown_methods=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        decode(UNKNOWN, lenient_newer=1)  # type: ignore[arg-type]
    with pytest.raises(MethodNotFoundError):
        decode(UNKNOWN, allow_unknown_methods=False)


def test_a_decoder_reads_as_the_keyword_forms_do() -> None:
    decoder = Decoder(version="2025-11-25", allow_unknown_methods=True)
    for raw, method in ((PING, None), (UNKNOWN, None), (TOOLS, "tools/list")):
        model = decoder.decode(raw, method=method)
        same = decode(raw, version="2025-11-25", allow_unknown_methods=True, method=method)
        assert type(model) is type(same) and model == same
        plain = decoder.decode_dict(raw, method=method)
        assert plain == decode_dict(
            raw, version="2025-11-25", allow_unknown_methods=True, method=method
        )
        assert plain == json.loads(raw)


def test_the_method_of_each_response_is_given_with_it() -> None:
    decoder = Decoder(version="2025-11-25")
    typed = decoder.decode(TOOLS, method="tools/list")
    assert isinstance(typed, ResultResponse) and isinstance(typed.result, old.ListToolsResult)
    generic = decoder.decode(TOOLS)
    assert isinstance(generic, ResultResponse) and not isinstance(
        generic.result, old.ListToolsResult
    )
    with pytest.raises(TypeError):
        decoder.decode(TOOLS, method=5)  # type: ignore[arg-type]


def test_the_methods_a_decoder_remembers_are_bounded() -> None:
    decoder = Decoder(version="2025-11-25")
    for i in range(5000):
        decoder.decode_dict(TOOLS, method=f"vendor/{i}")
    assert len(decoder._knowns) <= decoding._KNOWNS


def test_its_errors_are_decodes_errors() -> None:
    decoder = Decoder(version="2025-11-25", extensions=(TASKS_EXTENSION,))
    for raw in (
        b"{",
        UNKNOWN,
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}',
    ):
        with pytest.raises(McpError) as mine:
            decoder.decode(raw)
        with pytest.raises(McpError) as theirs:
            decode(raw, version="2025-11-25", extensions=(TASKS_EXTENSION,))
        assert mine.value.to_response() == theirs.value.to_response()


def test_its_repr_shows_its_options() -> None:
    assert repr(Decoder(lenient_newer=True)) == (
        "Decoder(version=None, extensions=[], allow_unknown_methods=False, "
        "assume_complete=False, lenient_newer=True)"
    )
