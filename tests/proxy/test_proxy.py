"""``mcp_schema.proxy``: the `Validator` and its reports, then ``python -m
mcp_schema proxy`` as a process, with small fake children (the official SDK
client drives it in ``tests/examples/test_sdk_client.py``)."""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from mcp_schema.codec import Sender
from mcp_schema.errors import InvalidParamsError
from mcp_schema.proxy import (
    EXCERPT_BYTES,
    MAX_DATA_BYTES,
    MAX_REPORT_BYTES,
    Report,
    Validator,
    report_line,
    run,
)

CAPTURES = Path(__file__).parents[1] / "data" / "captures"
GOOD_CAPTURES = [
    "python-2025-11-25.jsonl",
    "python-2026-07-28.jsonl",
    "typescript-2025-11-25.jsonl",
    "cross-pyclient-tsserver-2025-11-25.jsonl",
    "cross-tsclient-pyserver-2025-11-25.jsonl",
    "older/python-2024-11-05.jsonl",
]
SENDER: dict[str, Sender] = {"c2s": "client", "s2c": "server"}
EXAMPLE_PROXY = Path(__file__).resolve().parents[2] / "examples" / "proxy.py"


def frames(name: str) -> list[tuple[Sender, bytes]]:
    """A capture's messages as (sender, line) in the order they travelled."""
    found: list[tuple[Sender, bytes]] = []
    for entry in map(json.loads, (CAPTURES / name).read_text().splitlines()):
        raw = entry["raw"] if "raw" in entry else json.dumps(entry["message"])
        found.append((SENDER[entry["dir"]], raw.encode()))
    return found


def without_time(reports: list[Report]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "time"} for r in reports]


# -- the Validator ------------------------------------------------------------------------


@pytest.mark.parametrize("name", GOOD_CAPTURES)
def test_good_sessions_are_not_reported(name: str) -> None:
    validator = Validator()
    for sender, line in frames(name):
        assert validator.feed(sender, line + b"\n") == []
    assert validator.close("client") == validator.close("server") == []


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}'
)
INITIALIZED = (
    b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},'
    b'"serverInfo":{"name":"s","version":"1"}}}'
)
LIST = b'{"jsonrpc":"2.0","id":5,"method":"tools/list"}'

# (lines before, sender, the bad line, code, start of the message, id)
ERRORS: list[tuple[list[tuple[Sender, bytes]], Sender, bytes, int, str, object]] = [
    ([], "client", b'{"jsonrpc":"2.0","id":1,"method":"ping"', -32700, "Parse error: EOF", None),
    ([], "server", b'{"jsonrpc":"2.0","method":"x\xff"}', -32700, "Parse error: invalid", None),
    ([], "client", b"", -32700, "Parse error: an empty line is not a message", None),
    ([], "client", b" \t\r", -32700, "Parse error: a blank line is not a message", None),
    ([], "client", b'{"jsonrpc":"2.0","id":2}', -32600, "Invalid Request: neither", None),
    (
        [],
        "client",
        b'[{"jsonrpc":"2.0","id":6,"method":"ping"}]',
        -32600,
        "Invalid Request: a batch",
        None,
    ),
    (
        [],
        "client",
        b'{"jsonrpc":"2.0","id":6,"method":"ping","id":7}',
        -32600,
        "Invalid Request: the member",
        None,
    ),
    ([("client", LIST)], "client", LIST, -32600, "Invalid Request: id 5 is already in flight", 5),
    (
        [],
        "client",
        b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{}}',
        -32602,
        "Invalid params: $.params.name: Field required",
        "x",
    ),
    (
        [],
        "server",
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":1}}',
        -32602,
        "Invalid params: $.params.level",
        None,
    ),
    (  # typed by the request it answers
        [("client", LIST)],
        "server",
        b'{"jsonrpc":"2.0","id":5,"result":{"tools":1}}',
        -32602,
        "Invalid result: $.result.tools: Input should be a valid array",
        None,
    ),
    (  # the session version is followed
        [("client", INITIALIZE), ("server", INITIALIZED)],
        "client",
        b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":'
        b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
        -32022,
        "Unsupported protocol version: 2026-07-28 (this session speaks 2025-11-25)",
        4,
    ),
]


@pytest.mark.parametrize(("before", "sender", "line", "code", "message", "rid"), ERRORS)
def test_each_error_class_is_one_report(
    before: list[tuple[Sender, bytes]],
    sender: Sender,
    line: bytes,
    code: int,
    message: str,
    rid: object,
) -> None:
    validator = Validator()
    for earlier, frame in before:
        assert validator.check(earlier, frame) is None
    report = validator.check(sender, line)
    assert report is not None
    assert report["code"] == code and report["message"].startswith(message), report
    assert report["direction"] == ("client->server" if sender == "client" else "server->client")
    assert report["id"] == rid
    assert report["line"] == 1 + sum(1 for earlier, _ in before if earlier == sender)
    assert report["length"] == len(line)
    assert report["frame"] == line.decode("utf-8", "backslashreplace")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", report["time"])
    assert list(report) == [
        "time", "direction", "line", "code", "message", "data", "id", "frame", "length", "repeats"
    ]  # fmt: skip
    assert report["repeats"] == 0


def test_correlation_is_what_makes_a_result_invalid() -> None:
    result = b'{"jsonrpc":"2.0","id":5,"result":{"tools":1}}'
    assert Validator().check("server", result) is None  # answers nothing known: a generic Result
    validator = Validator()
    assert validator.check("client", LIST) is None
    assert validator.check("server", result) is not None
    vendor = Validator()
    assert (
        vendor.check("client", b'{"jsonrpc":"2.0","id":9,"method":"vendor/x","params":{}}') is None
    )
    assert vendor.check("server", b'{"jsonrpc":"2.0","id":9,"result":{"any":1}}') is None


def test_error_data_is_the_codecs_list_of_problems() -> None:
    report = Validator().check(
        "client", b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}'
    )
    assert report is not None
    assert report["data"] == {"errors": [{"path": "$.params.name", "reason": "Field required"}]}


def test_a_failing_validator_is_a_report_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    validator = Validator()

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(validator.correlator, "decode_dict", broken)
    report = validator.check("client", LIST)
    assert report is not None and report["code"] == -32603
    assert (
        report["message"]
        == "Internal error: the validator failed: RuntimeError: boom\\nsecond line"
    )


def test_feeding_any_split_of_a_stream_reports_the_same() -> None:
    lines = [line for who, line in frames("raw-python-server-2025-11-25.jsonl") if who == "client"]
    lines += [
        b"",
        b"not json\r",
        LIST,
        b'{"jsonrpc":"2.0","id":"\xe2\x82\xac","method":"tools/call"}',
    ]
    stream = b"".join(line + b"\n" for line in lines)
    whole = Validator()
    expected = without_time([r for line in lines if (r := whole.check("client", line))])
    assert len(expected) == 10
    rng = random.Random(7)
    for _ in range(20):
        validator = Validator()
        reports: list[Report] = []
        at = 0
        while at < len(stream):
            step = rng.choice([1, 2, 3, 17, 200, 5000])
            reports += validator.feed("client", stream[at : at + step])
            at += step
        assert without_time(reports) == expected
    one_byte = Validator()
    reports = [r for byte in stream for r in one_byte.feed("client", bytes([byte]))]
    assert without_time(reports) == expected


def test_reports_one_at_a_time_never_hold_a_chunks_worth() -> None:
    flood = b"\n" * 65536  # a chunk of empty lines: one report each
    tracemalloc.start()
    try:
        count = sum(1 for _ in Validator().reports("server", flood))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 65536 and peak < 4 * 1024 * 1024, peak  # feed's list: some 30 MB
    lazily, at_once = Validator(), Validator()
    stream = b"\n" + LIST + b"\n{}\n"
    assert without_time(list(lazily.reports("client", stream))) == without_time(
        at_once.feed("client", stream)
    )
    assert [r["line"] for r in lazily.feed("client", b"\n")] == [4]


def test_a_crlf_line_is_a_message() -> None:
    validator = Validator()
    assert validator.feed("client", LIST + b"\r\n") == []


def test_a_last_line_without_a_newline_is_reported_at_the_end() -> None:
    validator = Validator()
    assert validator.feed("server", LIST + b"\n" + LIST[:20]) == []
    [report] = validator.close("server")
    assert report["code"] == -32700 and report["line"] == 2 and report["length"] == 20
    assert report["message"].startswith("Parse error: the stream ended inside a line of 20 bytes")
    assert report["frame"] == LIST[:20].decode()
    assert validator.close("server") == []
    validator.feed("client", b"partial")
    validator.discard("client")  # the relay stopped, not the peer
    assert validator.close("client") == []


def test_an_overlong_line_is_reported_and_never_held() -> None:
    limit = 1 << 20
    validator = Validator(max_line_bytes=limit)
    chunk = b"x" * 65536
    size = 20 * 1024 * 1024
    tracemalloc.start()
    try:
        reports: list[Report] = []
        for _ in range(size // len(chunk)):
            reports += validator.feed("server", chunk)
        reports += validator.feed("server", b"\n" + LIST + b"\n")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * limit, peak  # the limit and a chunk, never the 20 MiB line
    [report] = reports
    assert report["code"] == -32700 and report["line"] == 1 and report["length"] == size
    assert report["message"] == (
        f"Parse error: a line of {size:,} bytes is longer than the limit of {limit:,}; "
        "forwarded, not validated"
    )
    assert report["frame"] == "x" * EXCERPT_BYTES
    [after] = validator.feed("server", b"{}\n")  # line 2 was LIST, valid
    assert after["line"] == 3 and after["code"] == -32600

    small = Validator(max_line_bytes=100)
    [whole] = small.feed("client", b"y" * 1000 + b"\n")  # the whole line in one chunk
    assert whole["length"] == 1000 and whole["frame"] == "y" * 1000
    direct = small.check("client", b"z" * 101)  # not read: no parse error of its own
    assert direct is not None and direct["length"] == 101 and "longer than" in direct["message"]
    assert small.feed("client", b"w" * 500) == []
    [ended] = small.close("client")  # over-long and unfinished
    assert ended["length"] == 500 and ended["frame"] == "w" * 500 and ended["line"] == 3


def test_a_line_at_the_limit_is_validated() -> None:
    line = LIST[:-1] + b" " * (200 - len(LIST)) + b"}"
    assert len(line) == 200
    assert Validator(max_line_bytes=200).check("client", line) is None


def test_the_excerpt_is_cut_at_a_character() -> None:
    line = b'{"x":"' + b"a" * (EXCERPT_BYTES - 9) + "é€".encode() + b'"}'  # € is cut
    report = Validator().check("client", line)
    assert report is not None and report["length"] == len(line)
    assert report["frame"].endswith("aé") and "\ufffd" not in report["frame"]
    bad = Validator().check("client", b"\xff\xfe" + b"a" * 2000)
    assert bad is not None and bad["frame"].startswith("\\xff\\xfeaaa")


def test_large_error_data_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    validator = Validator()
    many = [{"path": f"$.params.p{i}", "reason": "r" * 500} for i in range(20)]

    def invalid(*args: object, **kwargs: object) -> None:
        raise InvalidParamsError("Invalid params: many", {"errors": many, "total": 5000})

    monkeypatch.setattr(validator.correlator, "decode_dict", invalid)
    report = validator.check("client", LIST)
    assert report is not None
    assert len(json.dumps(report["data"])) <= MAX_DATA_BYTES
    assert report["data"]["total"] == 5000 and 0 < len(report["data"]["errors"]) < 20
    assert report["data"]["errors"] == many[: len(report["data"]["errors"])]

    def opaque(*args: object, **kwargs: object) -> None:
        raise InvalidParamsError("Invalid params: opaque", {"blob": "b" * 50_000})

    monkeypatch.setattr(validator.correlator, "decode_dict", opaque)
    report = validator.check("client", LIST)
    assert report is not None and report["data"] == {"truncated": True}


def _tools(count: int, bad: object) -> bytes:
    tools = [{"name": "t" * 300, "inputSchema": bad} for _ in range(count)]
    return json.dumps({"jsonrpc": "2.0", "id": 5, "result": {"tools": tools}}).encode()


HOSTILE: dict[str, tuple[list[tuple[Sender, bytes]], Sender, bytes]] = {
    "control characters": ([], "client", b'{"jsonrpc":"2.0","id":1,"method":"\x00\x1b[2J\x07\x7f"'),
    "line separators": (
        [],
        "client",
        '{"jsonrpc":"2.0","id":"\u2028\u2029\x85\r","method":"tools/call","params":{}}'.encode(),
    ),
    "raw newline escapes": ([], "client", b'{"jsonrpc":"2.0","id":"a\\nb","method":"tools/call"}'),
    "not utf-8": ([], "server", b"\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x90\x28\xbc" * 300),
    "lone surrogate": ([], "client", b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}'),
    "deep nesting": ([], "client", b"[" * 100_000 + b"]" * 100_000),
    "deep object": ([], "client", b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
    "long string id": (
        [],
        "client",
        b'{"jsonrpc":"2.0","id":"' + b"i" * 1_000_000 + b'","method":"tools/call","params":{}}',
    ),
    "huge integer id": (
        [],
        "client",
        b'{"jsonrpc":"2.0","id":' + b"9" * 4000 + b',"method":"tools/call","params":{}}',
    ),
    "astral method": (
        [],
        "client",
        ('{"jsonrpc":"2.0","id":1,"method":"' + "😀" * 5000 + '"').encode(),
    ),
    "astral member names": (
        [],
        "client",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": 5, **{"😀" * 300 + str(i): [] for i in range(100)}},
            }
        ).encode(),
    ),
    "5000 invalid tools": ([("client", LIST)], "server", _tools(5000, 7)),
    "5000 tools with long bad schemas": (
        [("client", LIST)],
        "server",
        _tools(5000, {"type": "😀" * 2000}),
    ),
    "duplicate members": (
        [],
        "client",
        b'{"jsonrpc":"2.0","id":1,"'
        + "😀".encode() * 3000
        + b'":1,"'
        + "😀".encode() * 3000
        + b'":2}',
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_line_makes_one_bounded_report_line(name: str) -> None:
    before, sender, line = HOSTILE[name]
    validator = Validator()
    for earlier, frame in before:
        assert validator.check(earlier, frame) is None
    report = validator.check(sender, line)
    assert report is not None
    written = report_line(report)
    assert written.endswith(b"\n") and written.count(b"\n") == 1 and written.isascii()
    text = written.decode()
    assert len(text.splitlines()) == 1 and text[:-1].isprintable()
    assert len(written) <= MAX_REPORT_BYTES
    assert json.loads(text) == report
    assert report["length"] == len(line) and len(report["frame"].encode()) <= 4 * EXCERPT_BYTES


def test_the_worst_report_stays_under_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    # Everything at its longest at once: a 1,000-character astral message,
    # data at its bound, an excerpt of control bytes, a long id.
    validator = Validator()
    data = {"errors": [{"path": "$." + "😀" * 200, "reason": "😀" * 200} for _ in range(20)]}

    def worst(*args: object, **kwargs: object) -> None:
        err = InvalidParamsError("😀" * 5000, data)
        err.request_id = "😀" * 5000
        raise err

    monkeypatch.setattr(validator.correlator, "decode_dict", worst)
    report = validator.check("client", b"\x01" * 5000)
    assert report is not None
    assert len(report_line(report)) <= MAX_REPORT_BYTES
    assert report["message"].startswith("😀") and report["id"] is not None


def test_wrong_arguments_are_refused() -> None:
    validator = Validator()
    with pytest.raises(ValueError, match="sender"):
        validator.check("proxy", LIST)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sender"):
        validator.feed(None, LIST)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="line must be bytes"):
        validator.check("client", LIST.decode())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="data must be bytes"):
        validator.feed("client", 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_line_bytes"):
        Validator(max_line_bytes="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_line_bytes"):
        Validator(max_line_bytes=0)
    with pytest.raises(TypeError, match="report must be a file with a descriptor"):
        run(["true"], report=io.BytesIO())
    with pytest.raises(TypeError, match="command must be a sequence of strings"):
        run("true")
    with pytest.raises(TypeError, match="command must hold strings"):
        run(["true", 5])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="command must not be empty"):
        run([])


# -- the command line -----------------------------------------------------------------------

PROXY = [sys.executable, "-m", "mcp_schema", "proxy"]
# Echoes every byte and keeps what it received in argv[1]; says hello on stderr.
ECHO = """
import os, sys
os.write(2, b"child stderr\\n")
with open(sys.argv[1], "wb") as seen:
    while data := os.read(0, 65536):
        seen.write(data)
        os.write(1, data)
"""


def child(source: str, *args: str) -> list[str]:
    return [sys.executable, "-c", source, *args]


def reports_in(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"time"')]


def test_the_relay_is_byte_exact_both_ways(tmp_path: Path) -> None:
    sent = b"".join(
        [
            INITIALIZE + b"\n",
            LIST + b"\r\n",
            b"not json\n",
            bytes(byte for byte in range(256) if byte != ord("\n")) + b"\n",
            b"\n",
            b'{"jsonrpc":"2.0","id":"\xe2\x82\xac","method":"tools/call","params":{}}\n',
            b"x" * 300_000 + b"\n",
            b"no newline at the end",
        ]
    )
    seen = tmp_path / "seen"
    report = tmp_path / "report.jsonl"
    run = subprocess.run(
        [*PROXY, "--report", str(report), "--", *child(ECHO, str(seen))],
        input=sent,
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert seen.read_bytes() == sent  # client -> server
    assert run.stdout == sent  # server -> client
    assert run.stderr == b"child stderr\n"  # the child's, and nothing else
    found = reports_in(report.read_text())
    codes = [-32700, -32700, -32700, -32602, -32700, -32700]
    for direction in ("client->server", "server->client"):  # the echo makes the same mistakes
        assert [(r["line"], r["code"]) for r in found if r["direction"] == direction] == list(
            zip(range(3, 9), codes, strict=True)
        )
    assert found[-1]["message"].startswith(
        "Parse error: the stream ended inside a line of 21 bytes"
    )
    assert report.read_bytes().isascii()


# The server's side: one bad notification, then a valid answer to the request it reads.
SERVER_SIDE = r"""
import sys
sys.stdout.write('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":1}}\n')
sys.stdout.flush()
for line in sys.stdin:
    sys.stdout.write('{"jsonrpc":"2.0","id":5,"result":{"tools":[]}}\n')
    sys.stdout.flush()
"""


def test_reports_name_the_direction_and_code_on_stderr() -> None:
    sent = LIST + b'\n{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}\n'
    run = subprocess.run(
        [*PROXY, "--", *child(SERVER_SIDE)], input=sent, capture_output=True, timeout=60
    )
    assert run.returncode == 0
    assert run.stdout.count(b"\n") == 3
    found = reports_in(run.stderr.decode())
    assert run.stderr.decode().splitlines() == [json.dumps(r, separators=(",", ":")) for r in found]
    assert {(r["direction"], r["line"], r["code"], r["id"]) for r in found} == {
        ("server->client", 1, -32602, None),
        ("client->server", 2, -32602, 6),
    }
    client = next(r for r in found if r["direction"] == "client->server")
    assert client["message"] == "Invalid params: $.params.name: Input should be a valid string"
    assert client["data"] == {
        "errors": [{"path": "$.params.name", "reason": "Input should be a valid string"}]
    }
    line = sent.splitlines()[1]
    assert client["frame"] == line.decode() and client["length"] == len(line)


def test_long_lines_are_forwarded_and_reported(tmp_path: Path) -> None:
    sent = b"[" + b"1," * 1_500_000 + b"1]\n" + LIST + b"\n"
    report = tmp_path / "report.jsonl"
    run = subprocess.run(
        [
            *PROXY,
            "--report",
            str(report),
            "--max-line-bytes",
            "1000",
            "--",
            *child(ECHO, os.devnull),
        ],
        input=sent,
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 0 and run.stdout == sent
    found = reports_in(report.read_text())
    assert [(r["direction"], r["line"], r["length"]) for r in found] == [
        ("client->server", 1, 3_000_003),
        ("server->client", 1, 3_000_003),
    ]  # the echoed request is read as the server's, with its own ids: valid
    assert all(r["frame"] == "[" + "1," * 511 + "1" for r in found)


@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("import sys; sys.exit(0)", 0),
        ("import sys; sys.exit(3)", 3),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 128 + 9),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + 15),
    ],
)
def test_the_exit_status_is_the_childs(source: str, status: int) -> None:
    run = subprocess.run([*PROXY, "--", *child(source)], input=b"", capture_output=True, timeout=60)
    assert (run.returncode, run.stdout, run.stderr) == (status, b"", b"")


def test_end_of_input_closes_the_childs_and_its_last_output_is_relayed() -> None:
    source = (
        "import sys, time\nsys.stdin.buffer.read()\ntime.sleep(0.3)\n"
        'sys.stdout.write(\'{"jsonrpc":"2.0","method":"notifications/initialized"}\\n\')\n'
        "sys.exit(5)"
    )
    run = subprocess.run(
        [*PROXY, "--", *child(source)], input=LIST + b"\n", capture_output=True, timeout=60
    )
    assert run.returncode == 5 and run.stderr == b""
    assert run.stdout == b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def _gone(pid: int) -> bool:
    """The process no longer exists: neither running nor a zombie waiting to be reaped."""
    return not Path(f"/proc/{pid}").exists()


def _wait_gone(pid: int, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.02)
    return _gone(pid)


def _started(proxy: subprocess.Popen[bytes], pid_file: Path) -> int:
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().endswith("\n")):
        assert proxy.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    return int(pid_file.read_text())


# Writes its pid, then waits on its standard input (signals as they come).
WAITER = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(f"{os.getpid()}\\n")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
sys.stdin.buffer.read()
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_proxy_reaches_the_child_which_is_reaped(
    tmp_path: Path, signum: int
) -> None:
    pid_file = tmp_path / "pid"
    proxy = subprocess.Popen(
        [*PROXY, "--", *child(WAITER, str(pid_file))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        pid = _started(proxy, pid_file)
        proxy.send_signal(signum)
        assert proxy.wait(timeout=30) == 128 + signum
        assert proxy.stderr is not None and proxy.stderr.read() == b""
        assert _wait_gone(pid)
    finally:
        proxy.kill()
        proxy.wait()


# Writes its pid, then a valid line every 20 ms; ``stubborn`` ignores the end
# of its input and failed writes, so only a signal stops it.
WRITER = """
import os, signal, sys, threading, time
stubborn = sys.argv[2] == "stubborn"
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(f"{os.getpid()}\\n")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def watch():
    sys.stdin.buffer.read()
    if not stubborn:
        os._exit(0)
threading.Thread(target=watch, daemon=True).start()
while True:
    try:
        os.write(1, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\\n')
    except OSError:
        pass
    time.sleep(0.02)
"""


@pytest.mark.parametrize(
    ("mode", "status"),
    [("polite", 0), pytest.param("stubborn", 128 + 15, marks=pytest.mark.slow)],  # waits 2 s
)
def test_when_the_reader_goes_away_the_child_is_stopped_and_reaped(
    tmp_path: Path, mode: str, status: int
) -> None:
    pid_file = tmp_path / "pid"
    proxy = subprocess.Popen(
        [*PROXY, "--", *child(WRITER, str(pid_file), mode)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proxy.stdout is not None
        pid = _started(proxy, pid_file)
        assert proxy.stdout.readline().startswith(b'{"jsonrpc"')
        proxy.stdout.close()  # EPIPE on the proxy's next write
        assert proxy.wait(timeout=30) == status
        assert proxy.stderr is not None and proxy.stderr.read() == b""
        assert _wait_gone(pid)
    finally:
        proxy.kill()
        proxy.wait()


@pytest.mark.slow  # waits DRAIN_SECONDS
def test_output_held_open_by_what_the_child_left_behind_ends_the_drain(tmp_path: Path) -> None:
    # The child leaves a sleeping process holding its standard output, and exits.
    source = (
        "import subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '30'], stderr=subprocess.DEVNULL)\n"
        "print(p.pid, file=sys.stderr)\n"
        'sys.stdout.write(\'{"jsonrpc":"2.0","method":"notifications/initialized"}\\n\')'
    )
    start = time.monotonic()
    run = subprocess.run([*PROXY, "--", *child(source)], input=b"", capture_output=True, timeout=60)
    took = time.monotonic() - start
    os.kill(int(run.stderr), signal.SIGKILL)
    assert run.returncode == 0 and run.stdout.startswith(b'{"jsonrpc"')
    # DRAIN_SECONDS after the child exited, not the 30 s of the process left behind
    # (two interpreters start first: on a loaded machine that alone took 6 s).
    assert took < 20


def test_a_report_that_cannot_be_written_is_status_2_and_the_session_goes_on() -> None:
    sent = b"not json\n" * 3 + LIST + b"\n"
    run = subprocess.run(
        [*PROXY, "--report", "/dev/full", "--", *child(ECHO, os.devnull)],
        input=sent,
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 2 and run.stdout == sent
    assert run.stderr.decode().splitlines() == [
        "child stderr",
        "error: cannot write the report: No space left on device",
    ]


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_a_validator_that_dies_is_status_2_and_the_session_goes_on(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    proxy = subprocess.Popen(
        [*PROXY, "--", *child(WAITER, str(pid_file))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        server = _started(proxy, pid_file)
        [validator] = [pid for pid in _children(proxy.pid) if pid != server]
        os.kill(validator, signal.SIGKILL)
        time.sleep(0.1)
        out, err = proxy.communicate(b"not json\n" * 1000, timeout=30)
        assert proxy.returncode == 2 and out == b""  # the child exited 0 at the end of input
        assert err.decode() == (
            "error: the validator stopped (status -9); the session was not all validated\n"
        )
    finally:
        proxy.kill()
        proxy.wait()


def test_the_module_runs_the_subcommand() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mcp_schema.proxy", "--", *child("import sys; sys.exit(4)")],
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert (run.returncode, run.stderr) == (4, b"")


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--", "/nonexistent/server"], 'error: cannot start "/nonexistent/server": No such file'),
        ([], "error: no command given"),
        (["--"], "error: no command given"),
        (["--max-line-bytes", "0", "--", "true"], "error: --max-line-bytes must be positive"),
        (["--report", "/nonexistent/dir/r.jsonl", "--", "MARK"], "error: cannot write the report"),
    ],
)
def test_the_proxys_own_failures_are_one_line_and_status_2(
    tmp_path: Path, args: list[str], problem: str
) -> None:
    marker = tmp_path / "started"
    if args[-1:] == ["MARK"]:  # a child that would leave a mark
        args = [*args[:-1], *child(f"open({str(marker)!r}, 'w')")]
    run = subprocess.run([*PROXY, *args], input=b"", capture_output=True, timeout=60)
    assert run.returncode == 2 and run.stdout == b""
    [line] = run.stderr.decode().splitlines()
    assert line.startswith(problem), line
    assert not marker.exists()  # the child was never started


@pytest.mark.parametrize(("closing", "name"), [("0<&-", "input"), ("1>&-", "output")])
def test_a_closed_standard_stream_is_refused(tmp_path: Path, closing: str, name: str) -> None:
    marker = tmp_path / "started"
    run = subprocess.run(
        ["sh", "-c", f'exec "$@" {closing}', "sh", *PROXY, "--", "touch", str(marker)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 2 and run.stdout == b"" and not marker.exists()
    assert run.stderr.decode() == f"error: standard {name} is closed\n"


def test_the_example_reports_what_it_cannot_decode_and_passes_it_on() -> None:
    echo = [sys.executable, "-c", "import sys\nfor line in sys.stdin: print(line, end='')"]
    sent = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n{"jsonrpc": "2.0", "id": 2}\n'
    run = subprocess.run(
        [sys.executable, str(EXAMPLE_PROXY), "--", *echo],
        input=sent,
        capture_output=True,
        timeout=30,
    )
    assert run.stdout == sent
    found = reports_in(run.stderr.decode())
    assert sorted((r["direction"], r["line"], r["code"]) for r in found) == [
        ("client->server", 2, -32600),
        ("server->client", 2, -32600),
    ]  # in either order: each direction's thread writes its own
