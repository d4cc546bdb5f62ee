"""`mcp_schema.gateway.EventSplitter`: the events of a ``text/event-stream``
whatever the chunks (Hypothesis), every byte in the raw of one event, and
an overlong event never held."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.gateway import EventSplitter, SseEvent
from mcp_schema.proxy import EXCERPT_BYTES

LINE_ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])
FIELDS = st.sampled_from([b"data: ", b"data:", b"event: ", b"id: ", b": ", b"retry: "])
TEXT = st.binary(max_size=20).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[bytes | None]]:
    """A stream and the data of each event in it, as a reader dispatches them."""
    stream = b""
    datas: list[bytes | None] = []
    for _ in range(draw(st.integers(0, 5))):
        data: list[bytes] = []
        for _ in range(draw(st.integers(0, 3))):
            field, value, end = draw(FIELDS), draw(TEXT), draw(LINE_ENDS)
            stream += field + value + end
            if field.startswith(b"data:"):
                data.append(value[1:] if field == b"data:" and value[:1] == b" " else value)
        end = draw(LINE_ENDS)
        if stream.endswith(b"\r") and end == b"\n":
            end = b"\r\n"  # an LF right after a CR is that CR's line end, no line of its own
        stream += end
        datas.append(b"\n".join(data) if data else None)
    return stream, datas


def split(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(stream)) for c in cuts})
    return [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]


@given(streams(), st.lists(st.integers(0, 200), max_size=8))
def test_any_chunking_gives_the_same_events_and_every_byte(
    case: tuple[bytes, list[bytes | None]], cuts: list[int]
) -> None:
    stream, datas = case
    splitter = EventSplitter(1 << 20)
    events: list[SseEvent] = []
    for chunk in split(stream, cuts):
        events += splitter.feed(chunk)
    last = splitter.close()
    assert b"".join(e.raw for e in events) + (last.raw if last else b"") == stream
    assert [e.data for e in events if e.data is not None] == [d for d in datas if d is not None]


def test_a_crlf_split_between_chunks_is_one_line_end() -> None:
    splitter = EventSplitter(100)
    assert splitter.feed(b"data: a\r") == []
    [event] = splitter.feed(b"\n\r\n")
    assert event.data == b"a"


def test_an_overlong_event_keeps_only_its_head_and_the_next_is_read() -> None:
    splitter = EventSplitter(64)
    big = b"data: " + b"x" * 10_000 + b"\n\n"
    events = []
    for start in range(0, len(big), 700):
        events += splitter.feed(big[start : start + 700])
    events += splitter.feed(b"data: ok\n\n")
    [over, ok] = events
    assert over.overlong and over.size == len(big) and len(over.raw) == EXCERPT_BYTES
    assert over.data is None and ok.data == b"ok"


def test_the_stream_ending_inside_an_event_gives_it_unfinished() -> None:
    splitter = EventSplitter(100)
    assert splitter.feed(b"data: {") == []
    assert splitter.close() == SseEvent(b"data: {", None, 7, False, True)
    assert splitter.close() is None


def test_a_cr_lf_ending_a_chunk_leaves_an_lf_first_in_the_next_its_own_line() -> None:
    # Found by Hypothesis: the CR LF was taken for a CR whose LF was still to come.
    splitter = EventSplitter(1 << 20)
    assert splitter.feed(b"data: a\r\n") == []
    [event] = splitter.feed(b"\n")
    assert (event.raw, event.data) == (b"data: a\r\n\n", b"a")
