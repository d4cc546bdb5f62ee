"""The parse stage: one strict parse, refusing what a JSON value cannot keep."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema._codec import parse as stage
from mcp_schema._codec.parse import MAX_DEPTH, as_bytes, parse
from mcp_schema.errors import InvalidRequestError, McpError, ParseError


def refused(data: bytes) -> McpError:
    with pytest.raises(McpError) as info:
        parse(data)
    return info.value


def nested(depth: int, inner: str) -> bytes:
    """``inner`` as the members of an object nested ``depth`` levels deep."""
    text = "{" + inner + "}"
    for _ in range(depth - 1):
        text = '{"x": ' + text + "}"
    return text.encode()


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
@pytest.mark.parametrize(
    "members", ['"name": "evil", "name": "safe"', '"name": "evil", "\\u006eame": "safe"']
)
def test_a_repeated_member_is_refused_at_every_depth(depth: int, members: str) -> None:
    err = refused(nested(depth, members))
    assert isinstance(err, InvalidRequestError)
    assert err.data == {"member": "name"} and "more than once" in err.message


def test_a_repeated_member_in_an_array_element_is_refused() -> None:
    err = refused(b'{"params": {"content": [{"type": "text"}, {"type": "a", "type": "b"}]}}')
    assert err.code == -32600


def test_members_equal_in_value_but_distinct_in_name_are_kept() -> None:
    assert parse(b'{"a": 1, "A": 1, "a ": 1}') == {"a": 1, "A": 1, "a ": 1}


@pytest.mark.parametrize(
    "number",
    [
        "1e-400",
        "-1e-400",
        "1E-400",
        "0." + "0" * 400 + "1",
        "1e400",
        "-1e400",
        "1" * 400 + ".0",
        "1.7976931348623159e308",
        "2e-324",
        "123" + "0" * 230 + "e99",
        "0." + "0" * 230 + "1e-99",
    ],
)
def test_a_float_that_would_change_kind_is_refused(number: str) -> None:
    for prefix in (b"", b" " * stage._WALK_FROM):  # the glance, and the walk alone
        err = refused(b'{"id": 1, "result": {"v": ' + number.encode() + b"}}" + prefix)
        assert isinstance(err, ParseError) and "cannot be kept" in err.message


@pytest.mark.parametrize(
    "number",
    [
        "0.0",
        "-0.0",
        "0e5",
        "0." + "0" * 400,
        "1e-5",
        "0.5",
        "1e15",
        "9007199254740991.0",
        "4.9e-324",
        "9007199254740993.0",
        "1e16",
        "1e+16",
        "6.02214076e23",
        "1.5e300",
        "-1.7976931348623157e308",
        "1" * 300 + ".0",
    ],
)
def test_floats_are_read_as_the_doubles_peers_read(number: str) -> None:
    # RFC 8259 section 6: any peer's parser reads these as the same double.
    for prefix in (b"", b" " * stage._WALK_FROM):
        assert parse(b'{"v": ' + number.encode() + b"}" + prefix) == {"v": float(number)}


@pytest.mark.parametrize("rid", ["5.0", "50e-1", "-7e0", "9007199254740991.0"])
def test_an_id_written_as_an_exact_integral_float_is_kept(rid: str) -> None:
    assert parse(b'{"id": ' + rid.encode() + b"}") == {"id": float(rid)}


@pytest.mark.parametrize(
    "rid", ["9007199254740993.0", "9007199254740992.0", "-1e16", "1e300", "1.0000000000000000001"]
)
def test_an_id_that_a_double_rounds_to_another_integer_is_refused(rid: str) -> None:
    err = refused(b'{"jsonrpc": "2.0", "id": ' + rid.encode() + b', "method": "ping"}')
    assert isinstance(err, ParseError) and "id" in err.message


def test_integers_are_exact_up_to_4300_digits() -> None:
    big = "9" * 4300
    assert parse(b'{"v": ' + big.encode() + b"}") == {"v": int(big)}
    err = refused(b'{"v": ' + big.encode() + b"9}")
    assert isinstance(err, ParseError) and "4,300 digits" in err.message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_numbers_are_refused(literal: str) -> None:
    assert refused(b'{"v": ' + literal.encode() + b"}").code == -32700


def test_nesting_is_bounded() -> None:
    assert parse(nested(MAX_DEPTH, '"a": 1'))
    err = refused(nested(MAX_DEPTH + 1, '"a": 1'))
    assert isinstance(err, ParseError) and f"deeper than {MAX_DEPTH}" in err.message


def test_lone_surrogates_are_refused_escaped_or_real() -> None:
    assert "lone surrogate" in refused(b'{"v": "\\ud800"}').message
    with pytest.raises(ParseError, match="lone surrogate"):
        as_bytes('{"v": "\ud800"}')
    assert parse(b'{"v": "\\ud83d\\ude00"}') == {"v": "\U0001f600"}


def test_a_batch_is_refused_before_it_is_parsed() -> None:
    err = refused(b" \n[" + b'{"jsonrpc": "2.0"},' * 10 + b"{}]")
    assert isinstance(err, InvalidRequestError) and "batch" in err.message


@pytest.mark.parametrize("text", [b"1", b'"x"', b"null", b"true"])
def test_a_message_is_an_object(text: bytes) -> None:
    assert isinstance(refused(text), InvalidRequestError)


@pytest.mark.parametrize("text", [b"", b"{oops", b"{} x", b"\xff", b'{"a": "\xff"}'])
def test_what_is_not_json_is_a_parse_error(text: bytes) -> None:
    assert isinstance(refused(text), ParseError)


def test_the_peer_text_quoted_in_a_refusal_is_cut() -> None:
    key = "k" * 10_000 + "\n"
    err = refused(json.dumps({key: 1}).encode()[:-1] + b", " + json.dumps(key).encode() + b": 2}")
    assert len(err.message) < 400 and "\n" not in err.message


def test_argument_types() -> None:
    assert as_bytes(bytearray(b"{}")) == b"{}" and as_bytes(memoryview(b"{}")) == b"{}"
    with pytest.raises(TypeError):
        as_bytes(5)


# The glance decides most short messages from the bytes alone, the walk the
# rest: whatever either passes, the exact check must pass too (they may send
# a clean message to the exact check, never an unsafe one past it).
_numbers = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers().map(str),
    st.builds(
        lambda m, e: f"{m}e{e}",
        st.integers(-(10**20), 10**20),
        st.integers(-500, 500),
    ),
    st.builds(lambda i, f: f"{i}.{f}", st.integers(0, 10**30), st.text("0123456789", min_size=1)),
)


@given(st.lists(st.one_of(_numbers, st.text().map(json.dumps)), max_size=6))
def test_a_glance_passes_only_what_the_exact_check_passes(items: list[str]) -> None:
    data = ("[" + ", ".join(items) + "]").encode()
    if not stage._numbers_at_a_glance(data):
        return
    stage._check_numbers(data)  # must not raise


@given(st.lists(st.one_of(_numbers, st.text().map(json.dumps)), max_size=6))
def test_the_walk_passes_only_what_the_exact_check_passes(items: list[str]) -> None:
    data = ("[" + ", ".join(items) + "]").encode()
    if not stage._plain_floats(json.loads(data)):
        return
    stage._check_numbers(data)  # must not raise


@given(_numbers)
def test_the_exact_check_refuses_exactly_the_floats_a_double_cannot_hold(token: str) -> None:
    data = b'{"v": ' + token.encode() + b"}"
    is_float = any(c in token for c in ".eE")
    value = float(token) if is_float else int(token)
    mantissa = token.lower().partition("e")[0]
    unkept = is_float and (
        math.isinf(value) or (value == 0 and any(c in "123456789" for c in mantissa))
    )
    if unkept:
        assert isinstance(refused(data), ParseError)
    else:
        assert parse(data) == {"v": value}
