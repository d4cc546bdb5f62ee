"""`propagation.extract` on the trace context a peer sends, in ``_meta`` or
in headers: any values, any characters, any length end in a context; the
propagators' own warnings about a value they cannot read stay one bounded
line (a line break in a value once forged log lines); a value too long is
not read at all, at a cost that does not grow with it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.context import Context

from mcp_schema.telemetry.propagation import KEYS, MAX_CARRIED, carrier_of, extract
from tests.hostile import MAX_ERROR_TEXT, costs_linearly

VALID = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
TEXT = st.text(st.sampled_from("k=v,;% \t\n\r\0\x85\u2028é"), max_size=20)
VALUES = st.one_of(
    st.just(VALID),
    TEXT,
    TEXT.map(lambda t: f"{VALID}{t}"),
    st.text(max_size=20),
    st.just(VALID + " " * MAX_CARRIED),  # too long to read
    st.integers(),
)
CONTEXTS = st.dictionaries(st.sampled_from([*KEYS, "other"]), VALUES, max_size=4)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def logged() -> Iterator[list[str]]:
    handler, root = _Lines(), logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.lines
    finally:
        root.removeHandler(handler)


@settings(max_examples=30)
@given(CONTEXTS, CONTEXTS)
def test_any_context_a_peer_sends_is_read_or_ignored_in_bounded_log_lines(
    meta: dict[str, Any], headers: dict[str, Any]
) -> None:
    with logged() as lines:
        found = extract(meta, headers)  # None: the ambient context, none read
        assert found is None or isinstance(found, Context)
    for line in lines:
        assert len(line) <= MAX_ERROR_TEXT and "\n" not in line and "\r" not in line, line


def test_a_line_break_never_reaches_the_propagators() -> None:
    forged = "a=b\nERROR forged line"
    assert carrier_of({"traceparent": VALID, "baggage": forged, "tracestate": "k=v\r"}) == {
        "traceparent": VALID
    }
    assert carrier_of({"tracestate": "a=b,\tc=d"}) == {"tracestate": "a=b,\tc=d"}


def test_a_value_too_long_is_not_read_whatever_its_length() -> None:
    def read(meta: dict[str, str]) -> None:
        assert carrier_of(meta) == {}
        extract(meta, meta)

    small, large = ({key: "0" * size for key in KEYS} for size in (1 << 20, 8 << 20))
    costs_linearly(read, small, large)
