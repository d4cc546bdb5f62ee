"""Numbers as peers read them (RFC 8259 section 6): integers exact, floats the
IEEE doubles they read as, both ways; refused only where a value would change
kind (overflow, underflow) or, for an id, become another id."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.codec import decode, decode_dict, encode
from mcp_schema.errors import McpError, ParseError

VERSION = "2025-11-25"

# Every double a peer can send: drawn from the bit patterns, so subnormals,
# both zeros and the largest finite magnitudes come up as often as 1.5.
doubles = (
    st.integers(0, 2**64 - 1)
    .map(lambda bits: struct.unpack("<d", bits.to_bytes(8, "little"))[0])
    .filter(math.isfinite)
)
any_float = st.one_of(
    doubles,
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [1e16, float(2**53), 1e300, -0.0, 5e-324, 1.7976931348623157e308, 6.02214076e23]
    ),
)


def call(arguments: dict[str, Any], rid: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "t", "arguments": arguments},
    }


def tool_result(structured: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"content": [], "structuredContent": structured},
    }


def same(a: Any, b: Any) -> bool:
    """Equal JSON values, numbers to the bit (-0.0 is not 0.0)."""
    if type(a) is float and type(b) is float:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


@pytest.mark.parametrize("number", ["1e16", "6.02214076e23", "1.5e300", "9007199254740993.0"])
def test_a_large_float_in_tool_arguments_is_an_ordinary_number(number: str) -> None:
    raw = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {"v": %s}}}'
        % number.encode()
    )
    assert decode(raw, version=VERSION).params.arguments == {"v": float(number)}  # type: ignore[attr-defined]
    assert decode_dict(raw, version=VERSION)["params"]["arguments"] == {"v": float(number)}


@pytest.mark.parametrize("number", ["1e16", "6.02214076e23", "-1.5e300"])
def test_a_large_float_in_structured_content_is_an_ordinary_number(number: str) -> None:
    raw = json.dumps(tool_result({"v": 0})).replace("0}", number + "}").encode()
    for decoded in (
        decode(raw, version=VERSION, method="tools/call"),
        decode_dict(raw, version=VERSION, method="tools/call"),
    ):
        assert json.loads(encode(decoded))["result"]["structuredContent"] == {"v": float(number)}


@pytest.mark.parametrize("value", [1e16, float(2**53), 1e300, -1e300, 1.7976931348623157e308])
def test_what_encode_writes_decode_reads_back(value: float) -> None:
    # pydantic writes these as 1e+16, 9007199254740992.0, 1e+300...
    for message in (call({"v": value}), tool_result({"v": value})):
        out = encode(message)
        back = decode_dict(out, version=VERSION, method="tools/call")
        assert same(back, message)


@given(any_float, any_float)
def test_decode_encode_decode_keeps_every_double(argument: float, structured: float) -> None:
    for message, method in (
        (call({"v": argument, "deep": [structured]}), None),
        (tool_result({"v": structured}), "tools/call"),
    ):
        raw = json.dumps(message).encode()  # the standard library's text, as a peer writes it
        as_dict = decode_dict(raw, version=VERSION, method=method)
        assert same(as_dict, message)
        again = encode(as_dict)
        assert same(decode_dict(again, version=VERSION, method=method), message)
        model = decode(raw, version=VERSION, method=method)
        assert same(json.loads(encode(model)), message)


@given(st.integers(-(2**53) + 1, 2**53 - 1))
def test_an_integral_float_id_below_two_to_the_53_is_the_integer(rid: int) -> None:
    raw = json.dumps(call({}, float(rid))).encode()
    decoded = decode(raw, version=VERSION)
    assert decoded.id == rid and type(decoded.id) is int  # type: ignore[attr-defined]
    assert json.loads(encode(decoded))["id"] == rid


@given(any_float.filter(lambda f: f.is_integer() and abs(f) >= 2**53))
def test_a_float_id_of_two_to_the_53_or_more_is_refused(rid: float) -> None:
    for message, method in (
        (call({}, rid), None),
        ({"jsonrpc": "2.0", "id": rid, "result": {}}, "ping"),
    ):
        with pytest.raises(ParseError):
            decode(json.dumps(message).encode(), version=VERSION, method=method)


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1e-400", "2e-324"])
def test_a_float_that_changes_kind_is_refused_in_both_views(number: str) -> None:
    raw = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {"v": %s}}}'
        % number.encode()
    )
    for read in (decode, decode_dict):
        with pytest.raises(McpError) as info:
            read(raw, version=VERSION)
        assert info.value.code == -32700 and "cannot be kept" in info.value.message


@pytest.mark.parametrize("number", ["1e16", "9007199254740993.0", "1e300"])
def test_an_integer_member_written_as_a_large_float_is_read_alike_in_both_views(
    number: str,
) -> None:
    # JSON Schema's integer is an integral number: both views accept it, the
    # model as the int the double holds exactly.
    raw = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage",'
        b' "params": {"messages": [], "maxTokens": %s}}' % number.encode()
    )
    model = decode(raw, version=VERSION)
    assert model.params.max_tokens == int(float(number))  # type: ignore[attr-defined]
    assert decode_dict(raw, version=VERSION)["params"]["maxTokens"] == float(number)
    assert decode_dict(encode(model), version=VERSION)["params"]["maxTokens"] == float(number)


@pytest.mark.parametrize("number", ["5e-324", "1e-300", "0.5"])
def test_an_integer_member_holding_a_fraction_is_refused_in_both_views(number: str) -> None:
    # pydantic's multiple_of=1 allows for rounding: 5e-324 would be read as 0.
    raw = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage",'
        b' "params": {"messages": [], "maxTokens": %s}}' % number.encode()
    )
    for read in (decode, decode_dict):
        with pytest.raises(McpError) as info:
            read(raw, version=VERSION)
        assert info.value.code == -32602
        assert info.value.data == {
            "errors": [{"path": "$.params.maxTokens", "reason": "Input should be a JSON integer"}]
        }
