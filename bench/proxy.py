"""What ``python -m mcp_schema proxy`` costs: the captured sessions
(``tests/data/captures/*.jsonl``) relayed through it, through a plain
cat-style relay (two threads copying bytes, no validation) and directly.

Usage: ``python -m bench.proxy [--rounds N] [--repeat R]``.

A fake server replays a capture's server side: after the k-th client line it
reads, it writes the server lines that followed it in the capture. Two
measures per route, after a first exchange that pays for the processes'
start-up, and that start-up:

* throughput: after one pass in lockstep, the client side written as fast as
  the pipes take it (the capture ``--repeat`` times) and closed; frames per
  second (both directions) until the route has exited, validation included;
* latency: one client line at a time, the round trip to the last server line
  it gets (only lines answered by exactly one), median and 90th percentile;
  the proxy's added latency per frame is half the difference of the medians
  with the plain relay (a round trip crosses it twice);
* start: from starting the route's process to the first answer (the
  proxy imports the codec; it builds its validators off the forwarding path).

Nothing here asserts. Best of ``--rounds`` for each number.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = sorted((ROOT / "tests" / "data" / "captures").glob("*.jsonl"))


def load(capture: Path, replay: int = 0) -> tuple[list[bytes], list[list[bytes]]]:
    """The client lines, and the server lines after each (index 0: before any),
    of the ``replay``-th replay: its request ids are its own, so that replays
    streamed back to back never reuse an id still in flight."""
    client: list[bytes] = []
    after: list[list[bytes]] = [[]]
    for entry in map(json.loads, capture.read_text().splitlines()):
        if "raw" in entry:
            raw = entry["raw"]
        else:
            raw = json.dumps(_renumbered(entry["message"], replay) if replay else entry["message"])
        line = raw.replace("\n", " ").encode() + b"\n"
        if entry["dir"] == "c2s":
            client.append(line)
            after.append([])
        else:
            after[-1].append(line)
    return client, after


def _renumbered(message: Any, replay: int) -> Any:
    def moved(rid: Any) -> Any:
        if isinstance(rid, int) and not isinstance(rid, bool):
            return rid + 1_000_000 * replay
        return f"{rid}~{replay}" if isinstance(rid, str) else rid

    if not isinstance(message, dict):
        return message  # a batch: its ids are refused anyway
    message = dict(message)
    if "id" in message:
        message["id"] = moved(message["id"])
    params = message.get("params")
    if message.get("method") == "notifications/cancelled" and isinstance(params, dict):
        message["params"] = {**params, "requestId": moved(params.get("requestId"))}
    return message


# -- the two helpers, run as processes ------------------------------------------------------


def fake_server(capture: Path, replays: int) -> None:
    client, _ = load(capture)
    answers = [load(capture, replay)[1] for replay in range(replays)]
    out = sys.stdout.buffer
    out.write(b"".join(answers[0][0]))
    out.flush()
    for count, _ in enumerate(sys.stdin.buffer):
        replay, index = divmod(count, len(client))
        lines = answers[replay % replays][index + 1]
        if lines:
            out.write(b"".join(lines))
            out.flush()


def relay(command: list[str]) -> int:
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None and child.stdout is not None
    to_child = child.stdin

    def copy(source: int, sink: int) -> None:
        while data := os.read(source, 65536):
            os.write(sink, data)

    def up() -> None:
        copy(0, to_child.fileno())
        to_child.close()

    threading.Thread(target=up, daemon=True).start()
    copy(child.stdout.fileno(), 1)
    return child.wait()


# -- the driver -------------------------------------------------------------------------------


def routes(capture: Path, report: Path, replays: int) -> dict[str, list[str]]:
    server = [sys.executable, "-m", "bench.proxy", "server", str(capture), str(replays)]
    return {
        "direct": server,
        "cat-style relay": [sys.executable, "-m", "bench.proxy", "relay", "--", *server],
        "mcp_schema proxy": [
            *(sys.executable, "-m", "mcp_schema", "proxy", "--report", str(report)),
            *("--", *server),
        ],
    }


def _start(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)


def _exchange(proc: subprocess.Popen[bytes], line: bytes, answers: int) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line)
    proc.stdin.flush()
    for _ in range(answers):
        proc.stdout.readline()


def _warm(proc: subprocess.Popen[bytes], client: list[bytes], after: list[list[bytes]]) -> int:
    """Exchange until a client line gets an answer (the processes have started):
    how many client lines that took."""
    assert proc.stdout is not None
    for _ in after[0]:
        proc.stdout.readline()
    for count, line in enumerate(client, start=1):
        _exchange(proc, line, len(after[count]))
        if after[count]:
            return count
    raise ValueError("the server never answers")


def _finish(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    proc.stdout.read()
    proc.wait()


def throughput(argv: list[str], capture: Path, repeat: int) -> float:
    """Frames per second, both directions, from the first byte written to the
    route's exit (the proxy exits once it has validated everything)."""
    client, after = load(capture)
    proc = _start(argv)
    assert proc.stdin is not None and proc.stdout is not None
    done = _warm(proc, client, after)
    for count in range(done, len(client)):  # one whole pass first: validators built
        _exchange(proc, client[count], len(after[count + 1]))
    frames: list[bytes] = []
    answers = 0
    for replay in range(1, repeat + 1):
        lines, answered = load(capture, replay)
        frames += lines
        answers += sum(map(len, answered[1:]))
    stdin = proc.stdin

    def write() -> None:
        for start in range(0, len(frames), 16):
            stdin.write(b"".join(frames[start : start + 16]))
        stdin.close()

    began = time.perf_counter()
    writer = threading.Thread(target=write)
    writer.start()
    read = len(proc.stdout.read().splitlines())
    proc.wait()
    took = time.perf_counter() - began
    writer.join()
    assert read == answers, (read, answers)
    return (len(frames) + answers) / took


def latency(argv: list[str], capture: Path, repeat: int) -> list[float]:
    """The time to the first answer from the start of the route's process, then the
    round trips in seconds of the client lines answered by exactly one server line."""
    replays = [load(capture, replay) for replay in range(repeat)]
    client, after = replays[0]
    began = time.perf_counter()
    proc = _start(argv)
    done = _warm(proc, client, after)
    trips: list[float] = [time.perf_counter() - began]  # the start: to the first answer
    for count in range(done, len(client) * repeat):
        replay, index = divmod(count, len(client))
        answers = len(replays[replay][1][index + 1])
        began = time.perf_counter()
        _exchange(proc, replays[replay][0][index], answers)
        if answers == 1:
            trips.append(time.perf_counter() - began)
    _finish(proc)
    return trips


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.proxy")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=100, help="times each capture is replayed")
    args = parser.parse_args()
    rows: list[tuple[str, dict[str, tuple[float, float, float, float]]]] = []
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.jsonl"
        for capture in CAPTURES:
            row: dict[str, tuple[float, float, float, float]] = {}
            replays = args.repeat + 1
            for route, argv in routes(capture, report, replays).items():
                fps = max(throughput(argv, capture, args.repeat) for _ in range(args.rounds))
                runs = [
                    latency(argv, capture, max(1, args.repeat // 4)) for _ in range(args.rounds)
                ]
                start = min(run[0] for run in runs)
                trips = min((run[1:] for run in runs), key=statistics.median)
                p90 = statistics.quantiles(trips, n=10)[-1]
                row[route] = (fps, statistics.median(trips), p90, start)
            rows.append((capture.name, row))
            print(_line(capture.name, row), flush=True)
        reported = len(report.read_text().splitlines()) if report.exists() else 0
    print()
    print(_summary(rows))
    print(
        f"report lines written by the proxy: {reported:,} (the raw-* captures hold invalid frames)"
    )


def _line(name: str, row: dict[str, tuple[float, float, float, float]]) -> str:
    cells = "  ".join(
        f"{route}: {fps:,.0f} frames/s, rtt {med * 1e6:,.0f} µs (p90 {p90 * 1e6:,.0f}), "
        f"first answer {start * 1e3:,.0f} ms"
        for route, (fps, med, p90, start) in row.items()
    )
    return f"{name}: {cells}"


def _summary(rows: list[tuple[str, dict[str, tuple[float, float, float, float]]]]) -> str:
    lines = [
        "| capture | direct frames/s | relay frames/s | proxy frames/s | proxy/relay "
        "| relay rtt µs | proxy rtt µs | added per frame µs | relay start ms | proxy start ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in rows:
        direct, plain, proxy = row["direct"], row["cat-style relay"], row["mcp_schema proxy"]
        lines.append(
            f"| {name} | {direct[0]:,.0f} | {plain[0]:,.0f} | {proxy[0]:,.0f} | "
            f"{proxy[0] / plain[0]:.2f} | {plain[1] * 1e6:,.0f} | {proxy[1] * 1e6:,.0f} | "
            f"{(proxy[1] - plain[1]) / 2 * 1e6:,.0f} | {plain[3] * 1e3:,.0f} | "
            f"{proxy[3] * 1e3:,.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["server"]:
        fake_server(Path(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1:3] == ["relay", "--"]:
        sys.exit(relay(sys.argv[3:]))
    else:
        main()
