"""The proxy's report format: one JSON line per invalid line (`Report`), its
bounds, and `report_line`, the one way a report is written."""

from __future__ import annotations

import codecs
import json
import time
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

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


def report_line(report: Report) -> bytes:
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
    }
    if len(report_line(report)) > MAX_REPORT_BYTES:  # not reached by the codec's errors
        report["data"] = None if data is None else {"truncated": True}
        report["message"] = clip(message, 200)
    return report


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
