"""``mcp_schema.proxy.reports``: what a session's reports may grow to
(`ReportLog`: runs merged, a cap, what was left out counted), and the proxy
writing them without ever holding up the relay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.proxy import Report, Validator
from mcp_schema.proxy.reports import BACKLOG_BYTES, REPORT_BUDGET, ReportLog

PROXY = [sys.executable, "-m", "mcp_schema", "proxy"]
EMPTY = b""
BAD_LEVEL = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"x","data":1}}'
NO_METHOD = b'{"jsonrpc":"2.0","id":1}'


def reports(*lines: bytes) -> list[Report]:
    validator = Validator()
    found = [validator.check("server", line) for line in lines]
    return [r for r in found if r is not None]


def drain(log: ReportLog) -> list[dict[str, Any]]:
    """Everything ``log`` keeps, written, once it is finished."""
    log.finish()
    written = b""
    while (data := log.take()) is not None:
        written += data
    return [json.loads(line) for line in written.splitlines()]


def test_a_run_of_the_same_failure_is_its_first_report_and_one_closing_it() -> None:
    log = ReportLog()
    for report in reports(*[EMPTY] * 1000, NO_METHOD, EMPTY, EMPTY):
        log.add(report)
    found = drain(log)
    assert [(r["line"], r["code"], r["repeats"]) for r in found] == [
        (1, -32700, 0),
        (1000, -32700, 999),  # closed by the next, different failure
        (1001, -32600, 0),
        (1002, -32700, 0),
        (1003, -32700, 1),  # closed at the end
    ]
    assert log.dropped == 0


def test_a_run_is_closed_by_the_end_of_its_stream_only() -> None:
    log = ReportLog()
    client = Validator()
    for _ in range(3):
        for report in client.feed("client", b"\n") + reports(EMPTY):  # both directions
            log.add(report)
    log.end("client->server")
    assert [json.loads(log.take() or b"")["repeats"] for _ in range(3)] == [0, 0, 2]
    assert [(r["direction"], r["repeats"]) for r in drain(log)] == [("server->client", 2)]


@given(st.lists(st.sampled_from([EMPTY, b" ", NO_METHOD, BAD_LEVEL, b"{}"]), max_size=300))
def test_the_log_never_exceeds_its_budget_and_counts_what_it_left_out(
    lines: list[bytes],
) -> None:
    budget = 2000
    log = ReportLog(budget=budget)
    found = reports(*lines)
    for report in found:
        log.traffic(50)
        log.add(report)
    log.finish()
    written = b""
    while (data := log.take()) is not None:
        written += data
    assert len(written) <= budget + 50 * len(found)
    kept = [json.loads(line) for line in written.splitlines()]
    told = sum(r.get("dropped", 0) for r in kept)
    stood_for = sum(max(1, r["repeats"]) for r in kept if "line" in r)
    assert told == log.dropped and stood_for + told == len(found)


def test_what_is_not_taken_in_time_is_left_out_and_counted() -> None:
    log = ReportLog(budget=10**9)
    one = reports(NO_METHOD)[0]
    size = len(json.dumps(one, separators=(",", ":"))) + 1
    for _ in range(2 * BACKLOG_BYTES // size):  # alternating: no run to merge
        log.add(one)
        log.add(reports(BAD_LEVEL)[0])
    assert 0 < log.dropped < 2 * (2 * BACKLOG_BYTES // size)
    first = log.take()
    log.unwritten()  # the writer could not write it
    rest = drain(log)
    assert first is not None and rest[-1] == {"time": rest[-1]["time"], "dropped": log.dropped}


# -- the proxy ------------------------------------------------------------------------------

FLOOD = """
import os, sys
line, count = sys.argv[1].encode().decode("unicode_escape").encode(), int(sys.argv[2])
data = line * count
view = memoryview(data)
while view:
    view = view[os.write(1, view[:65536]):]
"""


def flood(line: bytes, count: int) -> list[str]:
    return [
        sys.executable,
        "-c",
        FLOOD,
        line.decode().encode("unicode_escape").decode(),
        str(count),
    ]


def test_two_hundred_thousand_empty_lines_make_a_report_of_a_few_hundred_bytes(
    tmp_path: Path,
) -> None:
    report = tmp_path / "report.jsonl"
    run = subprocess.run(
        [*PROXY, "--report", str(report), "--", *flood(b"\n", 200_000)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout == b"\n" * 200_000
    written = report.read_bytes()
    assert len(written) < 2048, len(written)  # one report line per line was 38 MB
    first, last = map(json.loads, written.splitlines())
    assert (first["line"], first["repeats"]) == (1, 0)
    assert (last["line"], last["repeats"], last["length"]) == (200_000, 199_999, 0)


def test_a_client_that_never_reads_stderr_still_gets_all_of_stdout() -> None:
    # Two failures in turn (no run to merge): far more report than a pipe holds.
    pair = BAD_LEVEL + b"\n" + NO_METHOD + b"\n"
    count = 300_000 // len(pair) + 1  # reports of ~1 MB against a 64 KiB pipe
    proxy = subprocess.Popen(
        [*PROXY, "--", *flood(pair, count)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,  # never read
    )
    received = bytearray()

    def read() -> None:
        assert proxy.stdout is not None
        while chunk := os.read(proxy.stdout.fileno(), 65536):
            received.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        reader.join(60)
        assert not reader.is_alive(), f"stdout stopped after {len(received):,} bytes"
        assert bytes(received) == pair * count
        assert proxy.wait(timeout=30) == 0
    finally:
        proxy.kill()
        proxy.wait()
    assert proxy.stderr is not None
    written = proxy.stderr.read()
    assert 32 * 1024 < len(written) <= REPORT_BUDGET + len(pair) * count  # a pipe full


def test_the_report_bound_is_the_budget_plus_the_traffic(tmp_path: Path) -> None:
    pair = BAD_LEVEL + b"\n" + NO_METHOD + b"\n"  # each report several times its line
    report = tmp_path / "report.jsonl"
    start = time.monotonic()
    run = subprocess.run(
        [*PROXY, "--report", str(report), "--", *flood(pair, 2000)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout == pair * 2000, time.monotonic() - start
    written = report.read_bytes()
    assert len(written) <= REPORT_BUDGET + len(pair) * 2000
    found = [json.loads(line) for line in written.splitlines()]
    told = sum(r.get("dropped", 0) for r in found)
    assert told > 0 and len([r for r in found if "line" in r]) + told == 4000
