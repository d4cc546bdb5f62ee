"""The codec on hostile input: input types, depth, numbers, repeated members, envelopes, peer text in messages.

Each must end in a result or a typed `McpError` (a wrong argument type from the
calling program: ``TypeError``), in linear cost, with bounded error output.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_schema import codec, errors
from mcp_schema.errors import McpError
from mcp_schema.versions import PROTOCOL_VERSION_KEY
from tests.hostile import META, call, raw

PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


def decode_error(raw: Any, **kw: Any) -> McpError:
    with pytest.raises(McpError) as info:
        codec.decode(raw, **kw)
    return info.value


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview, lambda b: b.decode()])
def test_every_bytes_like_input_and_str_decode_alike(kind: Any) -> None:
    message = codec.decode(kind(raw(call())))
    assert codec.encode(message) == codec.encode(codec.decode(raw(call())))
    session = codec.Correlator()
    assert codec.encode(session.decode(kind(raw(call())))) == codec.encode(message)


def test_other_input_types_are_type_errors() -> None:
    for wrong in (5, None, [PING], {"jsonrpc": "2.0"}):
        with pytest.raises(TypeError):
            codec.decode(wrong)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            codec.Correlator().decode(wrong)  # type: ignore[arg-type]


@pytest.mark.parametrize("depth", [300, 1000, 100_000])
def test_deep_nesting_with_nan_text_is_a_parse_error(depth: int) -> None:
    inner = b'{"a":' * depth + b'"NaN"' + b"}" * depth
    err = decode_error(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + inner + b"}")
    assert err.code == -32700 and "nested deeper than 200 levels" in err.message
    assert decode_error(b"[" * depth + b'"NaN"' + b"]" * depth).code == -32600


def test_batches_are_refused_from_the_first_byte() -> None:
    # Unterminated and 8 MB long: refused without reading (or building) the array.
    err = decode_error(b"  \n[" + b"1," * 4_000_000)
    assert err.code == -32600 and "a batch" in err.message


@pytest.mark.parametrize(
    "number", [b"1e400", b"-1E+400", b"1" * 400 + b".5", b"0.5e00400", b"NaN", b"-Infinity"]
)
def test_numbers_that_cannot_be_kept_are_refused(number: bytes) -> None:
    for where in (b'"x": %s', b'"_meta": {"k": [%s]}'):
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {' + where % number + b"}}"
        assert decode_error(body).code == -32700
        padded = body.replace(b'"params"', b'"pad": "' + b"p" * 40_000 + b'", "params"')
        assert decode_error(padded).code == -32700  # the large-message route


def test_numbers_that_can_be_kept_round_trip() -> None:
    for number in (b"1e15", b"123456789012345678901234567890", b"-0.0", b"2.5e-300"):
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": %s}}' % number
        assert json.loads(codec.encode(codec.decode(body))) == json.loads(body)


def test_mass_non_finite_values_cost_one_short_error() -> None:
    values = b",".join(b'"k%d": 1e400' % i for i in range(50_000))
    body = raw(
        call(
            dict(
                META, **{"io.modelcontextprotocol/clientCapabilities": {"experimental": {"x": {}}}}
            )
        )
    )
    body = body.replace(b'"x": {}', b'"x": {' + values + b"}")
    err = decode_error(body)
    assert err.code == -32700 and len(json.dumps(err.to_response(1))) < 1000


@pytest.mark.parametrize(
    "number", [b"1e308", b"-1e300", b"9007199254740994.0", b"9007199254740993.0", b"1e16"]
)
def test_integral_float_ids_of_2_53_or_more_are_refused(number: bytes) -> None:
    # From 2**53 on a double skips integers: 9007199254740993.0 would read as
    # the id 9007199254740992, another request. So an id is refused there.
    for body in (
        b'{"jsonrpc": "2.0", "id": %s, "method": "ping"}' % number,
        b'{"jsonrpc": "2.0", "id": %s, "result": {}}' % number,
    ):
        assert decode_error(body, method="ping").code == -32700
    # An integer member is a number as every peer reads it: the double's exact
    # value, the same JSON value when written again.
    sampled = raw(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 0},
        }
    ).replace(b'"maxTokens": 0', b'"maxTokens": ' + number)
    for read in (codec.decode, codec.decode_dict):
        decoded = read(sampled, version="2025-11-25")
        assert json.loads(codec.encode(decoded)) == json.loads(sampled)


def test_small_integral_floats_are_one_id_rule_for_requests_and_responses() -> None:
    request = codec.decode(b'{"jsonrpc": "2.0", "id": 5.0, "method": "ping"}')
    response = codec.decode(b'{"jsonrpc": "2.0", "id": 5.0, "result": {}}', method="ping")
    assert request.id == 5 and response.id == 5  # type: ignore[attr-defined]
    assert len(codec.encode(response)) <= len(b'{"jsonrpc": "2.0", "id": 5.0, "result": {}}')
    for bad in (b"5.5", b"true", b"[5]"):
        for body in (
            b'{"jsonrpc": "2.0", "id": %s, "method": "ping"}' % bad,
            b'{"jsonrpc": "2.0", "id": %s, "result": {}}' % bad,
        ):
            assert decode_error(body, method="ping").code == -32600


def test_nullable_member_beside_its_snake_case_twin_round_trips() -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [], "resultType": "complete", '
        b'"structuredContent": null, "structured_content": 1}}'
    )
    message = codec.decode(body, version="2026-07-28", method="tools/call")
    assert json.loads(codec.encode(message)) == json.loads(body)
    absent = body.replace(b'"structuredContent": null, ', b"")
    assert json.loads(
        codec.encode(codec.decode(absent, version="2026-07-28", method="tools/call"))
    ) == json.loads(absent)


@pytest.mark.parametrize("escape", [b"\\ud800", b"\\udfff", b"\\ud800\\u0041", b"\\ud800\\ud800"])
def test_lone_surrogate_escapes_are_refused_saying_so(escape: bytes) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "%s"}}' % escape
    err = decode_error(body)
    assert err.code == -32700 and "lone surrogate" in err.message
    paired = body.replace(escape, b"\\ud83d\\ude00")
    assert json.loads(codec.encode(codec.decode(paired))) == json.loads(paired)


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}',
        b'{"jsonrpc": "2.0", "jsonrpc": "2.0", "id": 1, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}, "params": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {}, "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "a"}, '
        b'"error": {"code": 1, "message": "b"}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "m\\u0065thod": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "'
        + b"y" * 40_000
        + b'"}, "method": "tools/list"}',
    ],
)
def test_repeated_envelope_members_are_invalid_requests(body: bytes) -> None:
    for decoder in (lambda b: codec.decode(b, method="ping"), codec.Correlator().decode):
        with pytest.raises(errors.InvalidRequestError) as info:
            decoder(body)
        assert "more than once" in info.value.message


@pytest.mark.parametrize(
    "params",
    [
        b'{"name": "evil", "name": "safe"}',
        b'{"name": "evil", "n\\u0061me": "safe"}',
        b'{"name": "t", "arguments": {"x": 1}, "arguments": {"x": 2}}',
        b'{"name": "t", "_meta": {"%s": "2025-11-25", "%s": "2026-07-28"}}'
        % (PROTOCOL_VERSION_KEY.encode(), PROTOCOL_VERSION_KEY.encode()),
        b'{"name": "t", "arguments": {"deep": [{"a": {"b": 1, "b": 2}}]}}',
    ],
)
def test_repeated_members_at_any_depth_are_refused(params: bytes) -> None:
    # Parsers differ on which of two members wins: a proxy that checked
    # "safe" while its backend calls "evil" is message smuggling.
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": %s}' % params
    for decoder in (
        codec.decode,
        codec.decode_dict,
        codec.Correlator().decode,
        codec.Correlator().decode_dict,
    ):
        with pytest.raises(errors.InvalidRequestError) as info:
            decoder(body)
        assert "more than once" in info.value.message
        assert info.value.request_id == 1 and info.value.answerable  # answered by its id


def test_a_repeated_error_code_is_refused_in_a_response() -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "code": 1, "message": "x"}}'
    err = decode_error(body, method="ping")
    assert err.code == -32600 and not err.answerable


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}',
        b'{"jsonrpc": "2.0", "id": 1, "params": {}}',
        b'{"jsonrpc": "2.0", "id": 1}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "error": {"code": 1, "message": "x"}}',
        b'{"jsonrpc": "2.0", "method": "notifications/initialized", "result": {}}',
        b'{"jsonrpc": "2.0", "id": 1.5, "error": {"code": 1, "message": "x"}}',
    ],
)
def test_envelopes_mixing_or_lacking_kinds_are_invalid_requests(body: bytes) -> None:
    for version in (None, "2025-11-25", "2026-07-28"):
        assert decode_error(body, version=version, method="ping").code == -32600


@pytest.mark.parametrize("named", [b"null", b"5", b"{}"])
def test_a_meta_version_that_is_not_a_string_is_a_typed_error(named: bytes) -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": '
        b'{"io.modelcontextprotocol/protocolVersion": %s}}}' % named
    )
    err = decode_error(body)
    assert err.code == -32022 and err.data["requested"] == named.decode()


def test_extensions_must_not_be_a_str() -> None:
    with pytest.raises(TypeError):
        codec.decode(raw(call()), extensions="io.modelcontextprotocol/tasks")
    with pytest.raises(TypeError):
        codec.Correlator(extensions="io.modelcontextprotocol/tasks")


def test_attacker_text_in_codec_messages_is_escaped_and_cut() -> None:
    err = decode_error(raw({"jsonrpc": "2.0", "id": 1, "method": "x\nline 2: ok" + "z" * 100_000}))
    assert err.code == -32601 and "\n" not in err.message and len(err.message) < 300
    body = raw(call(arguments={f"k\n{i}": 1 for i in range(3)}))
    many = raw({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": 5}] * 5000}})
    err = decode_error(many, version="2025-11-25", method="tools/list")
    assert len(err.data["errors"]) == errors.MAX_ERRORS and err.data["total"] >= 5000
    assert len(json.dumps(err.to_response(1))) <= errors.MAX_RESPONSE_BYTES
    assert codec.decode(body)
