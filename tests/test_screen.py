"""The input screen's glances may spare a message the full check only where
the full check would pass: generated messages full of near misses (huge
exponents, long digit runs, NaN, escaped and repeated envelope members)."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_schema._codec import screen
from mcp_schema._codec.builds import built_once
from mcp_schema.errors import McpError

_WS = st.sampled_from(["", " ", "\n", "\t", "\r\n "])

_NUMBERS = st.one_of(
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.builds(
        lambda sign, mantissa, mark, exponent_sign, exponent: (
            f"{sign}{mantissa}{mark}{exponent_sign}{exponent}"
        ),
        st.sampled_from(["", "-"]),
        st.sampled_from(["1", "9.99", "0.5", "1" * 199, "1" * 200, "9" * 250 + ".5", "0"]),
        st.sampled_from(["e", "E"]),
        st.sampled_from(["", "+", "-"]),
        st.sampled_from(["9", "99", "100", "307", "308", "309", "400", "0400", "00099"]),
    ),
    st.sampled_from(["NaN", "Infinity", "-Infinity"]),
)

_ENVELOPE = ["jsonrpc", "id", "method", "params", "result", "error"]
_KEYS = st.one_of(
    st.sampled_from(_ENVELOPE),
    st.sampled_from(_ENVELOPE).map(lambda k: "\\u00" + format(ord(k[0]), "x") + k[1:]),
    st.sampled_from(_ENVELOPE).map(lambda k: k[:-1] + "\\u00" + format(ord(k[-1]), "X")),
    st.text("abcdeijmnoprstuyNaI0123456789", max_size=8),
)


def _string(text: str) -> str:
    return '"' + text + '"'


_VALUES = st.recursive(
    st.one_of(
        _NUMBERS,
        st.sampled_from(["true", "null", '"NaN"', '"1e400"', '"id"', '"x\\"id\\""']),
        _KEYS.map(_string),
    ),
    lambda inner: st.one_of(
        st.lists(st.tuples(_WS, inner), max_size=4).map(
            lambda items: "[" + ",".join(w + v for w, v in items) + "]"
        ),
        st.lists(st.tuples(_KEYS, _WS, inner), max_size=4).map(
            lambda members: "{" + ",".join(f"{_string(k)}{w}:{w}{v}" for k, w, v in members) + "}"
        ),
    ),
    max_leaves=12,
)

_MESSAGES = st.lists(st.tuples(_KEYS, _WS, _VALUES), max_size=6).map(
    lambda members: "{" + ",".join(f"{_string(k)}{w}:{w}{v}" for k, w, v in members) + "}"
)


def _refused(raw: bytes) -> bool:
    try:
        screen.full_check(raw)
    except McpError:
        return True
    return False


@settings(max_examples=400, deadline=None)
@given(_MESSAGES)
def test_a_glance_passes_only_what_the_full_check_passes(text: str) -> None:
    raw = text.encode()
    finite = screen._finite_at_a_glance(raw)
    unique = screen._unique_at_a_glance(raw)
    if finite and unique:
        assert not _refused(raw), text
    if _refused(raw):
        # What the full check refuses, screen refuses whichever way it goes.
        try:
            screen.screen(raw)
        except McpError:
            pass
        else:
            raise AssertionError(text)


def test_the_glances_catch_every_shape_the_full_check_refuses() -> None:
    for number in ["1e400", "-1E+400", "1" * 400 + ".5", "0.5e00400", "NaN", "-Infinity"]:
        raw = b'{"jsonrpc": "2.0", "method": "x", "params": {"v": %s}}' % number.encode()
        assert _refused(raw)
        assert not screen._finite_at_a_glance(raw), number
    for repeated in [b'"id": 1, "id": 2', b'"id": 1, "\\u0069d": 2', b'"id": 1, "i\\u0064" : 2']:
        raw = b'{"jsonrpc": "2.0", "method": "x", %s}' % repeated
        assert _refused(raw)
        assert not screen._unique_at_a_glance(raw), repeated


def test_a_first_build_from_many_threads_runs_once() -> None:
    calls: list[int] = []

    @built_once
    def build(key: int) -> list[int]:
        calls.append(key)
        time.sleep(0.05)  # wide enough for every thread to arrive
        return [key]

    results: list[list[int]] = []
    threads = [threading.Thread(target=lambda: results.append(build(7))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [7]
    assert len(results) == 8 and all(r is results[0] for r in results)
