"""``mcp_schema.proxy.lines``: the one JSON-lines reader, and its two users
(the proxy's `Validator` and ``python -m mcp_schema validate``) held to the
same rules."""

from __future__ import annotations

import io
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema import cli
from mcp_schema.proxy import EXCERPT_BYTES, Validator
from mcp_schema.proxy.lines import Line, LineSplitter, OverlongLine, not_a_message, read_lines

LIMIT = 8


def expected(stream: bytes, limit: int = LIMIT) -> list[Line]:
    """The lines of ``stream`` by the rules, computed the plain way."""
    *ended, last = stream.split(b"\n")
    lines = [*ended, last] if last else ended
    return [OverlongLine(len(x), x[:EXCERPT_BYTES]) if len(x) > limit else x for x in lines]


def split(stream: bytes, cuts: list[int], limit: int = LIMIT) -> list[Line]:
    splitter = LineSplitter(limit)
    found: list[Line] = []
    at = 0
    for cut in sorted(cuts):
        found += splitter.feed(stream[at:cut])
        at = max(at, cut)
    found += splitter.feed(stream[at:])
    last = splitter.close()
    return found + ([last] if last is not None else [])


streams = st.lists(
    st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")), max_size=12
).flatmap(
    lambda lines: st.tuples(
        st.sampled_from([b"\n".join(lines), b"\n".join(lines) + b"\n"]),
        st.lists(st.integers(0, 300), max_size=10),
    )
)


@given(streams)
def test_any_split_of_a_stream_gives_the_same_lines(case: tuple[bytes, list[int]]) -> None:
    stream, cuts = case
    assert split(stream, cuts) == expected(stream)
    assert list(read_lines(io.BytesIO(stream), LIMIT)) == expected(stream)


def test_an_overlong_line_keeps_its_size_and_head_only() -> None:
    splitter = LineSplitter(1 << 20)
    chunk = b"x" * 65536
    tracemalloc.start()
    try:
        for _ in range(320):  # 20 MiB
            assert splitter.feed(chunk) == []
        [line, short] = splitter.feed(b"\nok\n")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 << 20, peak
    assert line == OverlongLine(320 * 65536, b"x" * EXCERPT_BYTES) and short == b"ok"


def test_a_cut_stream_forgets_its_unfinished_line() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"partial") == []
    splitter.discard()
    assert splitter.close() is None
    assert splitter.feed(b"next\n") == [b"next"]


def test_wrong_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="max_line_bytes"):
        LineSplitter("5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_line_bytes"):
        LineSplitter(0)
    with pytest.raises(TypeError, match="binary stream"):
        read_lines(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="binary stream"):
        list(read_lines(io.StringIO("text\n")))  # type: ignore[arg-type]


# -- both readers, one rule ------------------------------------------------------------------

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
NOT_MESSAGES = [
    (b"", "an empty line is not a message"),
    (b" \t", "a blank line is not a message"),
    (b"\r", "a blank line is not a message"),  # an empty line ended by \r\n
]


@pytest.mark.parametrize(("line", "reason"), NOT_MESSAGES)
def test_an_empty_or_blank_line_is_invalid_for_both_readers(line: bytes, reason: str) -> None:
    assert not_a_message(line) == reason
    [report] = Validator().feed("client", PING + b"\n" + line + b"\n")
    assert (report["line"], report["code"]) == (2, -32700)
    assert report["message"] == f"Parse error: {reason}"
    printed = validate(PING + b"\n" + line + b"\n")
    assert printed == f"line 2: -32700 $: {reason}\n1 valid, 1 invalid\n"


def test_an_overlong_line_is_invalid_for_both_readers() -> None:
    stream = PING + b"\n" + b"[" * 50 + b"\n" + PING.replace(b"1", b"2") + b"\n"
    [report] = Validator(max_line_bytes=45).feed("server", stream)
    assert (report["line"], report["length"], report["code"]) == (2, 50, -32700)
    assert report["message"].startswith("Parse error: a line of 50 bytes is longer than")
    assert validate(stream, "--max-line-bytes", "45") == (
        "line 2: -32700 $: line of 50 bytes is longer than 45, not read\n2 valid, 1 invalid\n"
    )


def test_a_last_line_without_newline_is_read_from_a_file_and_reported_on_a_stream() -> None:
    stream = PING + b"\n" + PING.replace(b"1", b"2")  # no newline at the end
    assert validate(stream) == "2 valid, 0 invalid\n"  # a file's end ends its last line
    validator = Validator()
    assert validator.feed("client", stream) == []
    [report] = validator.close("client")  # no peer reads it
    assert report["line"] == 2 and report["message"].startswith("Parse error: the stream ended")


def test_a_crlf_line_is_a_message_for_both_readers() -> None:
    assert Validator().feed("client", PING + b"\r\n") == []
    assert validate(PING + b"\r\n") == "1 valid, 0 invalid\n"


def validate(data: bytes, *args: str) -> str:
    """What ``python -m mcp_schema validate`` prints for a file holding ``data``."""
    with tempfile.TemporaryDirectory() as scratch:
        capture = Path(scratch) / "capture.jsonl"
        capture.write_bytes(data)
        printed = io.StringIO()
        cli.main(["validate", str(capture), "--version", "2025-11-25", *args], stdout=printed)
    return printed.getvalue()
