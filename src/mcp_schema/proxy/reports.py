"""The proxy's report format: one JSON line per invalid line (`Report`), its
bounds, `report_line` (the one way a report is written), and `ReportLog`,
which keeps what a session writes bounded: runs of the same failure merged,
and a cap on the whole, with a count of what was left out (`Dropped`)."""

from __future__ import annotations

import codecs
import json
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple, TypedDict, cast

from mcp_schema.codec import Sender
from mcp_schema.errors import clip, quote

Direction = Literal["client->server", "server->client"]

EXCERPT_BYTES = 1024
"""Bytes of a failing line kept in its report (``frame``)."""

MAX_DATA_BYTES = 8192
"""Largest ``data`` of a report, as JSON: a longer error list keeps its first
entries (``total`` counts them all), other data becomes ``{"truncated": true}``."""

MAX_REPORT_BYTES = 32768
"""Upper bound of one report line: the excerpt (at most 6 bytes of JSON per
byte), the codec's message (at most 1,000 characters, 12 bytes each),
``data`` and the rest."""

REPORT_BUDGET = 64 * 1024
"""What a `ReportLog` writes, in bytes, never exceeds this plus the size of
the traffic it reports on."""

BACKLOG_BYTES = 64 * 1024
"""What a `ReportLog` holds not yet written; a report that would make it
more is left out (counted in the next `Dropped`)."""

DIRECTION: dict[Sender, Direction] = {"client": "client->server", "server": "server->client"}
"""The direction of what each peer sends."""


class Report(TypedDict):
    """One invalid line: what `Validator` returns and the proxy writes as one JSON line."""

    time: str
    """When it was validated: UTC, ISO 8601 with milliseconds (``...T03:04:05.678Z``)."""
    direction: Direction
    line: int
    """The line's number in its direction, from 1."""
    code: int
    """The JSON-RPC error code (-32700 for what is not one framed JSON value)."""
    message: str
    data: Any
    """The error's data (the codec's list of problems), at most `MAX_DATA_BYTES` as JSON."""
    id: str | int | None
    """The id of a request that failed; ``null`` otherwise."""
    frame: str
    """At most `EXCERPT_BYTES` of the line, decoded as UTF-8 (other bytes as ``\\xNN``)."""
    length: int
    """The whole line's size in bytes, without its newline."""
    repeats: int
    """0, or in the report that closes a run of lines of this direction that
    failed the same way (code, message and data), the number of lines of the
    run after its first report; ``line`` is the last of them."""


class Dropped(TypedDict):
    """The line `ReportLog` writes where reports were left out."""

    time: str
    """When it was written: UTC, ISO 8601 with milliseconds."""
    dropped: int
    """How many failing lines were left out since the previous line written,
    over the log's bound or not written in time."""


def report_line(report: Report | Dropped) -> bytes:
    """``report`` as one line of JSON (ASCII, ending in a newline)."""
    if not isinstance(report, Mapping):
        raise TypeError(f"report must be a Report mapping, not {type(report).__name__}")
    text = json.dumps(report, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.encode("ascii") + b"\n"


def make_report(
    sender: Sender,
    number: int,
    code: int,
    message: str,
    data: Any,
    request_id: object,
    line: bytes,
    size: int | None = None,
) -> Report:
    """The report of line ``number`` of ``sender`` (``size`` bytes long when
    ``line`` is only its first bytes), every member within its bound."""
    report: Report = {
        "time": _now(),
        "direction": DIRECTION[sender],
        "line": number,
        "code": code,
        "message": clip(message, 1000),
        "data": _bounded_data(data),
        "id": _bounded_id(request_id),
        "frame": _excerpt(line),
        "length": len(line) if size is None else size,
        "repeats": 0,
    }
    if len(report_line(report)) > MAX_REPORT_BYTES:  # not reached by the codec's errors
        report["data"] = None if data is None else {"truncated": True}
        report["message"] = clip(message, 200)
    return report


class _Entry(NamedTuple):
    data: bytes
    lines: int  # the failing lines its report stands for
    news: int  # those, and the ones its Dropped line (first in data) announces


class _Run:
    """The reports of one direction that failed the same way, since its first."""

    __slots__ = ("first", "last", "repeats")

    def __init__(self, first: Report) -> None:
        self.first = first
        self.last = first
        self.repeats = 0

    def extends(self, report: Report) -> bool:
        first = self.first
        return (report["code"], report["message"]) == (first["code"], first["message"]) and (
            report["data"] == first["data"]
        )


class ReportLog:
    """The report lines of one session, bounded, between the thread that
    validates and the one that writes (thread-safe).

    `add` takes each `Report`. The first of a run of lines of a direction
    that failed the same way is kept, the rest of the run merged into one
    report closing it (``repeats``), written when the run ends: a different
    failure of that direction, `end` of its stream, or `finish`. What is kept
    never exceeds ``budget`` plus the bytes `traffic` counted, nor
    ``backlog`` waiting to be written: a report over either is left out, and
    a `Dropped` line before the next one written (or at the end) counts them.

    The writer calls `take` for the next bytes to write (None once `finish`
    was called and all was taken) and `unwritten` when it could not write
    them; `dropped` counts the failing lines left out.
    """

    _RESERVE = 256  # of the budget: the last Dropped line, whatever came before

    def __init__(self, *, budget: int = REPORT_BUDGET, backlog: int = BACKLOG_BYTES) -> None:
        self.dropped = 0
        self._allowed = budget - self._RESERVE
        self._backlog = backlog
        self._used = 0  # bytes kept so far
        self._pending = 0  # of them, not yet taken
        self._untold = 0  # lines left out since the last Dropped line kept
        self._entries: deque[_Entry] = deque()
        self._taken: _Entry | None = None
        self._runs: dict[Direction, _Run] = {}
        self._finished = False
        self._lock = threading.RLock()  # the condition's: traffic takes it without its frame
        self._ready = threading.Condition(self._lock)

    def traffic(self, size: int) -> None:
        """``size`` more bytes of traffic were validated: the bound grows by as much."""
        with self._lock:
            self._allowed += size

    def add(self, report: Report) -> None:
        """One failing line's report (`Validator` order, per direction)."""
        with self._ready:
            run = self._runs.get(report["direction"])
            if run is not None and run.extends(report):
                run.repeats += 1
                run.last = report
                return
            self._close(report["direction"])
            self._runs[report["direction"]] = _Run(report)
            self._keep(report_line(report), 1)

    def end(self, direction: Direction) -> None:
        """That direction's stream ended: its run, if one is open, is closed."""
        with self._ready:
            self._close(direction)

    def finish(self) -> None:
        """The session ended: every run closed, a last `Dropped` line if any were."""
        with self._ready:
            for direction in list(self._runs):
                self._close(direction, at_end=True)
            if self._untold:
                self._append(_Entry(_dropped(self._untold), 0, self._untold))
                self._untold = 0
            self._finished = True
            self._ready.notify_all()

    def take(self) -> bytes | None:
        """The next bytes to write, when there are; None once all was taken after `finish`."""
        with self._ready:
            while not self._entries and not self._finished:
                self._ready.wait()
            if not self._entries:
                return None
            self._taken = self._entries.popleft()
            self._pending -= len(self._taken.data)
            return self._taken.data

    def unwritten(self) -> None:
        """The bytes last taken were not written: their lines count as dropped."""
        with self._ready:
            if self._taken is not None:
                self.dropped += self._taken.lines
                self._untold += self._taken.news
                self._taken = None

    def _close(self, direction: Direction, *, at_end: bool = False) -> None:
        run = self._runs.pop(direction, None)
        if run is not None and run.repeats:
            closing: Report = {**run.last, "repeats": run.repeats}
            self._keep(report_line(closing), run.repeats, at_end=at_end)

    def _keep(self, line: bytes, lines: int, *, at_end: bool = False) -> None:
        data = _dropped(self._untold) + line if self._untold else line
        over_backlog = self._pending + len(data) > self._backlog and not at_end
        if over_backlog or self._used + len(data) > self._allowed:
            self.dropped += lines
            self._untold += lines
            return
        self._append(_Entry(data, lines, lines + self._untold))
        self._untold = 0

    def _append(self, entry: _Entry) -> None:
        self._used += len(entry.data)
        self._pending += len(entry.data)
        self._entries.append(entry)
        self._ready.notify_all()


def _dropped(lines: int) -> bytes:
    return report_line({"time": _now(), "dropped": lines})


def _now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def _excerpt(line: bytes) -> str:
    # A cut inside a character leaves that character out (an incremental
    # decoder keeps an incomplete sequence back); bytes that are no UTF-8 at
    # all are shown as \xNN.
    decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")
    return decoder.decode(line[:EXCERPT_BYTES], final=len(line) <= EXCERPT_BYTES)


def _json_size(value: Any) -> int | None:
    try:
        return len(json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return None


def _bounded_data(data: object) -> object:
    if data is None:
        return None
    size = _json_size(data)
    if size is not None and size <= MAX_DATA_BYTES:
        return data
    found: dict[str, Any] = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
    errors: object = found.get("errors")
    if not isinstance(errors, list):
        return {"truncated": True}
    errors = cast("list[object]", errors)
    total: object = found.get("total")
    kept: list[object] = []
    used = 64  # the envelope: {"errors":[],"total":N}
    for entry in errors:
        entry_size = _json_size(entry)
        if entry_size is None or used + entry_size + 1 > MAX_DATA_BYTES:
            break
        kept.append(entry)
        used += entry_size + 1
    return {"errors": kept, "total": total if isinstance(total, int) else len(errors)}


def _bounded_id(request_id: object) -> str | int | None:
    if isinstance(request_id, str):
        return clip(request_id)
    if isinstance(request_id, int) and not isinstance(request_id, bool):
        if -(2**63) <= request_id < 2**63:
            return request_id
        return quote(request_id)  # a huge integer, as (cut) text
    return None
