"""`splice`: the gateway's rewrite of a forwarded request's
``params._meta.traceparent``, its bytes found by a scan; every other byte
as the client sent it, whatever the spacing, escapes and nesting; pieces of
JSON in any order pass or change in one string, in time linear in the body."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema.telemetry.splice import splice
from tests.hostile import costs_linearly

OURS = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    meta = draw(st.dictionaries(st.text(max_size=8), values, max_size=4))
    if draw(st.booleans()):
        meta["traceparent"] = draw(st.text(max_size=60) | values)
    params: dict[str, Any] = draw(st.dictionaries(st.text(max_size=8), values, max_size=3))
    if draw(st.booleans()):
        params["_meta"] = meta
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(st.integers()), "method": "tools/call"}
    if draw(st.booleans()):
        message["params"] = params
    return message


@st.composite
def encoded(draw: st.DrawFn, message: dict[str, Any]) -> bytes:
    """``message`` in one of the many byte forms of the same JSON."""
    separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : "), (",\n", ":\t")]))
    text = json.dumps(message, separators=separators, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):  # a key written with an escape is the same key
        text = text.replace('"traceparent"', '"trace\\u0070arent"')
    return (" " * draw(st.integers(0, 2)) + text + "\n" * draw(st.integers(0, 1))).encode()


def expected(message: dict[str, Any]) -> dict[str, Any]:
    meta = message.get("params", {}).get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get("traceparent"), str):
        changed: dict[str, Any] = json.loads(json.dumps(message))
        changed["params"]["_meta"]["traceparent"] = OURS
        return changed
    return message


def common(a: bytes, b: bytes) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def differing(before: bytes, after: bytes) -> int:
    """Bytes of ``after`` outside the longest common prefix and suffix."""
    prefix = common(before, after)
    suffix = common(before[prefix:][::-1], after[prefix:][::-1])
    return len(after) - prefix - suffix


# 100 examples: drawing whole nested messages is what this test spends its
# time on, and the scan's cases (escapes, spacing, nesting) come up well within them.
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_only_the_traceparents_bytes_change(data: st.DataObject) -> None:
    message = data.draw(messages())
    body = data.draw(encoded(message))
    spliced = splice(body, {"traceparent": OURS})
    assert json.loads(spliced) == expected(message)
    if expected(message) is message:
        assert spliced is body  # nothing to rewrite: the very bytes
    else:
        assert differing(body, spliced) <= len(OURS) + 2  # one run of bytes: the new string


@settings(max_examples=100, deadline=None)
@given(body=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_what_is_no_message_passes_unchanged(body: bytes) -> None:
    spliced = splice(body, {"traceparent": OURS})
    if spliced is not body:  # rewritten only where a reader finds the member, as a string
        before, after = json.loads(body), json.loads(spliced)
        assert isinstance(before["params"]["_meta"]["traceparent"], str)
        after["params"]["_meta"]["traceparent"] = before["params"]["_meta"]["traceparent"]
        assert after == before


def test_tracestate_is_rewritten_beside_it_and_a_repeated_key_stops_it() -> None:
    body = b'{"params":{"_meta":{"tracestate":"a=1","traceparent":"x"}},"id":1}'
    spliced = splice(body, {"traceparent": OURS, "tracestate": "b=2"})
    assert spliced == body.replace(b'"x"', f'"{OURS}"'.encode()).replace(b'"a=1"', b'"b=2"')
    repeated = b'{"params":{"_meta":{"traceparent":"x","traceparent":"y"}}}'
    assert splice(repeated, {"traceparent": OURS}) is repeated
    assert splice(b'{"params":{"_meta":{"traceparent":5}}}', {"traceparent": OURS}).endswith(
        b"5}}}"
    )


PIECES = st.sampled_from(
    [b"{", b"}", b"[", b"]", b'"', b"\\", b":", b",", b" ", b"1", b'"x"', b'\\"', b"\xff"]
) | st.sampled_from([b'"params"', b'"_meta"', b'"traceparent"', b'"trace\\u0070arent"'])


@settings(max_examples=60)
@given(st.lists(PIECES, max_size=40).map(b"".join))
def test_pieces_of_json_in_any_order_pass_or_change_only_in_a_string(body: bytes) -> None:
    spliced = splice(body, {"traceparent": OURS})
    assert isinstance(spliced, bytes)
    if spliced is not body:  # one string replaced: the rest as it was
        assert differing(body, spliced) <= len(OURS) + 2


def test_the_scan_costs_time_linear_in_the_body() -> None:
    def traced(size: int) -> bytes:
        members = ", ".join(f'"k{i}": ["\\"", {{"a": [[1]]}}]' for i in range(size // 24))
        return f'{{"params": {{"_meta": {{{members}, "traceparent": "x"}}}}, "id": 1}}'.encode()

    def rewritten(body: bytes) -> None:
        meta = json.loads(splice(body, {"traceparent": OURS}))["params"]["_meta"]
        assert meta["traceparent"] == OURS

    costs_linearly(rewritten, traced(4096), traced(32768))
