"""A validating stdio proxy (hand-written runtime module):
``python -m mcp_schema proxy [--report FILE] [--max-line-bytes N] [--tasks] -- CMD ...``.

The proxy starts ``CMD`` as its child and relays its own standard input to the
child's (client -> server) and the child's standard output to its own
(server -> client), both at once; the child's standard error is its own. The
bytes go through unchanged, as they arrive: the proxy never waits for a line
to end before forwarding it, and never holds a whole session.

Every line of both directions (MCP's stdio framing: one JSON-RPC message per
line) is also validated, off the forwarding path: a validator process of its
own (``python -m mcp_schema.proxy --validator``) is handed a copy of the bytes
of both directions, in the order they were read, and feeds them to one
`Validator`: one
`mcp_schema.codec.Correlator` for the connection (told which peer sent each
line, so a response is checked against the request it answers and the session
version is followed; methods it does not know are the peers' business and
are read generically). A line that fails is still forwarded unchanged; it
yields one report line, a JSON object (`Report`):

```json
{"time":"2026-01-02T03:04:05.678Z","direction":"server->client","line":7,
 "code":-32602,"message":"Invalid result: $.result.tools: Input should be a valid array",
 "data":{"errors":[...]},"id":null,"frame":"{\\"jsonrpc\\":\\"2.0\\",...","length":51234}
```

``line`` counts the lines of that direction from 1, ``frame`` is at most
`EXCERPT_BYTES` of the line (bytes that are not UTF-8 shown as ``\\xNN``)
and ``length`` its whole size in bytes (without the newline); ``id`` is the
id of a request that failed (``null`` otherwise). Good traffic writes
nothing. Each report line is ASCII, one line, at most `MAX_REPORT_BYTES`.

What is not one well-framed message is reported too (code -32700), and still
forwarded unchanged:

* a line longer than ``--max-line-bytes`` (`MAX_LINE_BYTES` by default) is
  forwarded as it arrives but never held whole nor validated: the report
  gives its size and first bytes. Whatever a peer sends, the validator holds
  at most that limit per direction, and the pipe to it at most 1 MiB relayed
  but not yet validated: when validation falls that far behind (tens of
  thousands of messages a second, or many large ones), relaying waits for it
  rather than skip any. (Validating a line takes a few times its size while
  it is read: lower the limit to bound that too.)
* an empty or blank line (both SDKs fail to parse one);
* a last line without a newline, when a stream ends: no peer reads it as a
  message.

A line ending in ``\\r\\n`` is a message like any other.

Lifetime and exit status: end of file on the proxy's standard input closes
the child's. When the child exits, the rest of its output is relayed (until
its end, or until `DRAIN_SECONDS` pass without any, when processes it left
behind hold it open), the reports are written and the proxy exits with the
child's status (``128 + N`` when a signal N ended it, as shells report it).
SIGINT, SIGTERM and SIGHUP sent to the proxy are passed on to the child (to its
process group: the child runs in a session of its own, so a terminal's
Ctrl-C reaches it once, through the proxy), which decides what to do with
them. When the reader of the proxy's standard output goes away (EPIPE), the
child is stopped the way MCP's stdio transport says: its standard input is
closed, then after `GRACE_SECONDS` it is sent SIGTERM, then SIGKILL; in every
case it is reaped before the proxy exits.

A proxy killed outright (SIGKILL) cannot pass anything on: its child sees
the end of its input, which is how an MCP server is asked to exit (and so
does the validator).

The proxy's own failures are exit status 2 with one ``error:`` line on
standard error: a command that cannot be started, a report file that cannot
be opened, a closed standard input or output; a report that can no longer be
written in the middle of a session, or a validator that stopped (the session
goes on, unvalidated, and the status is 2 when it ends).

Reports on standard error (the default) share it with the child's own lines;
each report is written with one call, but ``--report FILE`` keeps them apart.
``python -m mcp_schema.proxy ...`` is ``python -m mcp_schema proxy ...``.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from types import FrameType
from typing import IO, Any, Literal, TypedDict, cast

from mcp_schema.codec import Correlator, Sender
from mcp_schema.errors import InternalError, McpError, ParseError, clip, quote
from mcp_schema.versions import TASKS_EXTENSION

__all__ = [
    "DRAIN_SECONDS",
    "EXCERPT_BYTES",
    "GRACE_SECONDS",
    "MAX_DATA_BYTES",
    "MAX_LINE_BYTES",
    "MAX_REPORT_BYTES",
    "Direction",
    "ProxyError",
    "Report",
    "Validator",
    "add_arguments",
    "main",
    "report_line",
    "run",
]

Direction = Literal["client->server", "server->client"]

MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line (without its newline) that is held and validated; longer ones
are forwarded in chunks and reported (the default of ``--max-line-bytes``)."""

EXCERPT_BYTES = 1024
"""Bytes of a failing line kept in its report (``frame``)."""

MAX_DATA_BYTES = 8192
"""Largest ``data`` of a report, as JSON: a longer error list keeps its first
entries (``total`` counts them all), other data becomes ``{"truncated": true}``."""

MAX_REPORT_BYTES = 32768
"""Upper bound of one report line: the excerpt (at most 6 bytes of JSON per
byte), the codec's message (at most 1,000 characters, 12 bytes each),
``data`` and the rest."""

GRACE_SECONDS = 2.0
"""How long a child being stopped by the proxy gets after its input is closed,
then after SIGTERM, before the next step."""

DRAIN_SECONDS = 1.0
"""How long the child's output is still read, once the child has exited, without
anything arriving (processes it left behind may hold it open)."""

_CHUNK = 65536
_DIRECTION: dict[str, Direction] = {"client": "client->server", "server": "server->client"}
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


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


class _Stream:
    """One direction of the connection: the line being assembled and the count."""

    __slots__ = ("buffer", "head", "lines", "skipped")

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.skipped: int | None = None  # bytes so far of an over-long line, not held
        self.head = b""  # the first bytes of that line
        self.lines = 0


class Validator:
    """Validates the lines of one stdio connection, in both directions.

    One `Correlator` (``allow_unknown_methods=True``) reads every line, so a
    response is validated against the request it answers and the session's
    version is followed. Feed it in the order the lines travelled: what one
    peer sends after reading the other's line comes after that line.

    `check` takes one line, `feed` the bytes of a stream as they arrive
    (split into lines here, an over-long line never held whole) and `close`
    the end of a stream. Each returns the `Report` of each line that failed;
    valid lines return nothing. Validation never raises for what a peer sent:
    even a failure of the validator itself is a report (-32603).

    Not thread-safe: one thread feeds it (in the proxy, its validator process).
    """

    def __init__(
        self,
        *,
        version: str | None = None,
        extensions: Collection[str] = (),
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self.max_line_bytes = _positive(max_line_bytes, "max_line_bytes")
        self.correlator = Correlator(
            version=version, extensions=extensions, allow_unknown_methods=True
        )
        self._streams = {"client": _Stream(), "server": _Stream()}

    def check(self, sender: Sender, line: bytes | bytearray | memoryview) -> Report | None:
        """The report of one line ``sender`` sent (without its newline), or None
        when it is a valid message. A line longer than ``max_line_bytes`` is
        reported without being read."""
        stream = self._stream(sender)
        frame = _bytes(line, "line")
        stream.lines += 1
        return self._check(sender, stream.lines, frame)

    def feed(self, sender: Sender, data: bytes | bytearray | memoryview) -> list[Report]:
        """The reports of the lines completed by ``data``, the next bytes of ``sender``'s stream."""
        stream = self._stream(sender)
        chunk = _bytes(data, "data")
        reports: list[Report] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            stream.lines += 1
            if stream.skipped is not None:
                reports.append(self._overlong(sender, stream, stream.skipped + end - start))
            elif stream.buffer:
                stream.buffer += memoryview(chunk)[start:end]
                line = bytes(stream.buffer)
                stream.buffer = bytearray()
                _add(reports, self._check(sender, stream.lines, line))
            else:
                _add(reports, self._check(sender, stream.lines, chunk[start:end]))
            start = end + 1
        if start < len(chunk):
            if stream.skipped is not None:
                stream.skipped += len(chunk) - start
            else:
                stream.buffer += memoryview(chunk)[start:]
                if len(stream.buffer) > self.max_line_bytes:  # never held whole
                    stream.head = bytes(stream.buffer[:EXCERPT_BYTES])
                    stream.skipped = len(stream.buffer)
                    stream.buffer = bytearray()
        return reports

    def close(self, sender: Sender) -> list[Report]:
        """``sender``'s stream ended: the report of a last line without a newline, if any."""
        stream = self._stream(sender)
        size = stream.skipped if stream.skipped is not None else len(stream.buffer)
        if not size:
            return []
        head = stream.head if stream.skipped is not None else bytes(stream.buffer)
        stream.lines += 1
        stream.buffer, stream.skipped, stream.head = bytearray(), None, b""
        message = (
            f"Parse error: the stream ended inside a line of {size:,} bytes (no newline); "
            "forwarded, not validated"
        )
        return [
            self._report(sender, stream.lines, ParseError.code, message, None, None, head, size)
        ]

    def discard(self, sender: Sender) -> None:
        """Forget the unfinished line of ``sender``'s stream (the relay stopped, not the peer)."""
        stream = self._stream(sender)
        stream.buffer, stream.skipped, stream.head = bytearray(), None, b""

    # -- one line ---------------------------------------------------------------------

    def _stream(self, sender: object) -> _Stream:
        stream = self._streams.get(sender) if isinstance(sender, str) else None
        if stream is None:
            wrong = ValueError if isinstance(sender, str) else TypeError
            raise wrong(f"sender must be 'client' or 'server', not {sender!r:.40}")
        return stream

    def _check(self, sender: Sender, number: int, line: bytes) -> Report | None:
        if len(line) > self.max_line_bytes:
            return self._overlong_line(sender, number, line)
        if not line or line.isspace():
            what = "an empty line" if not line else "a blank line"
            message = f"Parse error: {what} is not a message"
            return self._report(sender, number, ParseError.code, message, None, None, line)
        try:
            self.correlator.decode_dict(line, sender=sender)
        except McpError as err:
            data = err.to_error_object().get("data")
            return self._report(sender, number, err.code, err.message, data, err.request_id, line)
        except Exception as exc:  # the validator's own failure must not stop the session
            message = f"Internal error: the validator failed: {type(exc).__name__}: {exc}"
            return self._report(sender, number, InternalError.code, message, None, None, line)
        return None

    def _overlong(self, sender: Sender, stream: _Stream, size: int) -> Report:
        head, stream.skipped, stream.head = stream.head, None, b""
        return self._overlong_line(sender, stream.lines, head, size)

    def _overlong_line(
        self, sender: Sender, number: int, head: bytes, size: int | None = None
    ) -> Report:
        size = len(head) if size is None else size
        message = (
            f"Parse error: a line of {size:,} bytes is longer than the limit of "
            f"{self.max_line_bytes:,}; forwarded, not validated"
        )
        return self._report(sender, number, ParseError.code, message, None, None, head, size)

    def _report(
        self,
        sender: Sender,
        number: int,
        code: int,
        message: str,
        data: Any,
        request_id: object,
        line: bytes,
        size: int | None = None,
    ) -> Report:
        report: Report = {
            "time": _now(),
            "direction": _DIRECTION[sender],
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


def report_line(report: Report) -> bytes:
    """``report`` as one line of JSON (ASCII, ending in a newline)."""
    if not isinstance(report, Mapping):
        raise TypeError(f"report must be a Report mapping, not {type(report).__name__}")
    text = json.dumps(report, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.encode("ascii") + b"\n"


def _add(reports: list[Report], report: Report | None) -> None:
    if report is not None:
        reports.append(report)


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


# -- the proxy ----------------------------------------------------------------------------


class ProxyError(Exception):
    """The proxy could not start (exit status 2 on the command line)."""


# The relays hand copies of what they forward to the validator process, as
# records: a kind (one byte) and the length of the bytes that follow (4 bytes).
_RECORD_DATA = {"client": b"c", "server": b"s"}
_RECORD_END = {"client": b"C", "server": b"S"}  # the stream ended (a peer closed it)
_RECORD_CUT = {"client": b"x", "server": b"y"}  # the relay stopped: no partial-line report
_PIPE_BYTES = 1024 * 1024  # what the validator may lag behind before relaying waits
_VALIDATOR_FAILED = 2  # the validator's status when it said why itself


class _Validation:
    """The validator process (``python -m mcp_schema.proxy --validator``) and the
    pipe to it: validation runs beside the relays, never holding them up but
    through a full pipe (backpressure, so that nothing grows without bound)."""

    def __init__(self, config: dict[str, Any], report_fd: int) -> None:
        if not sys.executable:
            raise ProxyError("cannot start the validator: no Python executable is known")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mcp_schema.proxy", "--validator", json.dumps(config)],
                stdin=subprocess.PIPE,
                stdout=report_fd,
                bufsize=0,
                start_new_session=True,  # a terminal's Ctrl-C is not for it: its input ends
                env=_importable(),
            )
        except OSError as exc:
            raise ProxyError(f"cannot start the validator: {exc.strerror or exc}") from None
        assert self.proc.stdin is not None
        self._pipe = self.proc.stdin
        self._lock = threading.Lock()
        self._broken = False
        try:  # a deeper pipe: bursts need not wait for validation (Linux)
            import fcntl

            fcntl.fcntl(self._pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
        except (ImportError, OSError):
            pass

    def send(self, kind: bytes, chunk: bytes = b"") -> None:
        """One record, whole, in the order of the calls (which is the caller's to keep)."""
        with self._lock:
            if self._broken:
                return
            if not _write(self._pipe.fileno(), kind + len(chunk).to_bytes(4, "big") + chunk):
                self._broken = True  # the validator stopped; its status says why

    def finish(self) -> str | None:
        """End the validator's input, wait for it: why validation failed, if it did."""
        with self._lock:
            self._broken = True
            self._pipe.close()
        status = self.proc.wait()
        if status == 0:
            return None
        if status == _VALIDATOR_FAILED:
            return "validation stopped"  # the validator said why on standard error
        return f"the validator stopped (status {status}); the session was not all validated"

    def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            self.proc.wait()


class _Session:
    """One run of the proxy: the child, the validator, the three threads, the signals."""

    def __init__(
        self, config: dict[str, Any], report_fd: int, stdin_fd: int = 0, stdout_fd: int = 1
    ) -> None:
        self.config = config
        self.report_fd = report_fd
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.validation: _Validation | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.pending_signals: list[int] = []
        self.exited = threading.Event()
        self.wake = threading.Event()
        self.client_gone = False
        self.failure: str | None = None  # our own, mid-session: the exit status is 2
        self.stdin_lock = threading.Lock()
        self.stdin_open = True
        self.reading_since: float | None = None  # the down relay, blocked in a read since

    # -- the main thread ------------------------------------------------------------------

    def run(self, command: Sequence[str]) -> int:
        previous = self._handle_signals()
        try:
            self.validation = _Validation(self.config, self.report_fd)
            try:
                self.proc = subprocess.Popen(
                    list(command),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    bufsize=0,
                    start_new_session=True,
                )
            except (OSError, ValueError) as exc:
                self.validation.kill()
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                raise ProxyError(f"cannot start {quote(command[0])}: {reason}") from None
            try:
                return self._relay()
            except BaseException:
                self._kill()  # never leave the child behind, whatever happened
                raise
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, signal.SIG_DFL if handler is None else handler)

    def _relay(self) -> int:
        assert self.validation is not None
        for signum in self.pending_signals:
            self._forward(signum)
        threads = [
            threading.Thread(target=self._reap, name="proxy-reaper", daemon=True),
            threading.Thread(target=self._up, name="proxy-up", daemon=True),
            threading.Thread(target=self._down, name="proxy-down", daemon=True),
        ]
        for thread in threads:
            thread.start()
        self._supervise()
        self._drain(threads[2])
        problem = self.validation.finish()
        if problem is not None:
            self._fail(problem, quiet=problem == "validation stopped")
        return self._status()

    def _kill(self) -> None:
        assert self.proc is not None and self.validation is not None
        if self.proc.returncode is None:
            self._forward(signal.SIGKILL)
            self.proc.wait()
        self.validation.kill()

    def _supervise(self) -> None:
        stopping = False
        while not self.exited.is_set():
            self.wake.wait()
            self.wake.clear()
            if (self.client_gone or self.failure is not None) and not stopping:
                stopping = True
                self._stop_child()

    def _stop_child(self) -> None:
        # MCP's stdio shutdown: end of input, then SIGTERM, then SIGKILL.
        self._close_child_stdin(neutralize=True)
        for signum in (signal.SIGTERM, signal.SIGKILL):
            if self.exited.wait(GRACE_SECONDS):
                return
            self._forward(signum)
        self.exited.wait()

    def _drain(self, down: threading.Thread) -> None:
        exited_at = time.monotonic()
        while down.is_alive():
            down.join(0.05)
            since = self.reading_since
            if since is not None and time.monotonic() - max(since, exited_at) > DRAIN_SECONDS:
                return  # held open by processes the child left behind

    def _status(self) -> int:
        assert self.proc is not None
        code = self.proc.returncode
        if self.failure is not None:
            return 2
        return 128 - code if code < 0 else code

    def _handle_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        return {signum: signal.signal(signum, self._on_signal) for signum in _FORWARDED}

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.proc is None:
            self.pending_signals.append(signum)
        else:
            self._forward(signum)

    def _forward(self, signum: int) -> None:
        proc = self.proc
        if proc is None or self.exited.is_set():
            return
        try:
            os.killpg(proc.pid, signum)  # the child leads its own process group
        except OSError:
            try:
                os.kill(proc.pid, signum)
            except OSError:
                pass

    def _fail(self, problem: str, *, quiet: bool = False) -> None:
        if self.failure is None:
            self.failure = problem
            if not quiet:
                _say(f"error: {problem}")
        self.wake.set()

    # -- the threads ----------------------------------------------------------------------

    def _reap(self) -> None:
        assert self.proc is not None
        self.proc.wait()
        self.exited.set()
        self.wake.set()

    def _up(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        assert self.validation is not None
        try:
            sink = self.proc.stdin.fileno()
            while chunk := _read(self.stdin_fd):
                self.validation.send(_RECORD_DATA["client"], chunk)  # before it can be answered
                if not _write(sink, chunk):
                    self.validation.send(_RECORD_CUT["client"])  # the child stopped reading
                    break
            else:
                self.validation.send(_RECORD_END["client"])
            self._close_child_stdin(neutralize=False)
        except BaseException as exc:  # a bug: stop the child rather than hang
            self._fail(f"internal error in the client->server relay: {exc!r}")

    def _down(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        assert self.validation is not None
        try:
            source = self.proc.stdout.fileno()
            while True:
                self.reading_since = time.monotonic()
                chunk = _read(source)
                self.reading_since = None
                if not chunk:
                    self.validation.send(_RECORD_END["server"])
                    break
                self.validation.send(_RECORD_DATA["server"], chunk)
                if not _write(self.stdout_fd, chunk):
                    # The reader went away: nobody can receive the server's output.
                    self.validation.send(_RECORD_CUT["server"])
                    self.client_gone = True
                    self.wake.set()
                    break
            self.proc.stdout.close()  # a child still writing gets SIGPIPE, as in a pipeline
        except BaseException as exc:
            self._fail(f"internal error in the server->client relay: {exc!r}")
        finally:
            self.reading_since = None

    def _close_child_stdin(self, *, neutralize: bool) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        with self.stdin_lock:
            if not self.stdin_open:
                return
            if neutralize:
                # The relay may be writing to it: point the descriptor at
                # /dev/null instead of closing it, so its number is never reused.
                devnull = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(devnull, self.proc.stdin.fileno())
                finally:
                    os.close(devnull)
            else:
                self.stdin_open = False
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass


def _importable() -> dict[str, str]:
    """The environment, with the folders this ``mcp_schema`` was imported from first."""
    import mcp_schema

    roots = [os.path.dirname(os.path.abspath(path)) for path in mcp_schema.__path__]
    inherited = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*roots, *filter(None, [inherited])])}


def _serve(config: dict[str, Any]) -> int:
    """The validator process: records on standard input, reports on standard output."""
    validator = Validator(
        version=config.get("version"),
        extensions=config.get("extensions", ()),
        max_line_bytes=config.get("max_line_bytes", MAX_LINE_BYTES),
    )
    source = os.fdopen(0, "rb", buffering=_CHUNK)
    try:
        while len(header := source.read(5)) == 5:
            kind, size = header[:1], int.from_bytes(header[1:], "big")
            chunk = source.read(size) if size else b""
            sender: Sender = "client" if kind in (b"c", b"C", b"x") else "server"
            if kind in (b"c", b"s"):
                reports = validator.feed(sender, chunk)
            elif kind in (b"C", b"S"):
                reports = validator.close(sender)
            else:
                validator.discard(sender)
                reports = []
            for report in reports:
                _write(1, report_line(report), raising=True)
    except OSError as exc:
        _say(f"error: cannot write the report: {exc.strerror or exc}")
        return _VALIDATOR_FAILED
    return 0


def _read(fd: int) -> bytes:
    """The next bytes from ``fd`` (b"" at its end, or when it cannot be read)."""
    while True:
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:  # a descriptor left non-blocking by whoever opened it
            select.select([fd], [], [])
        except OSError:
            return b""


def _write(fd: int, data: bytes, *, raising: bool = False) -> bool:
    """Write all of ``data``; False when ``fd`` is closed at the other end."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])
        except OSError:
            if raising:
                raise
            return False
    return True


def _say(line: str) -> None:
    try:
        os.write(2, (clip(line, 1000) + "\n").encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def run(
    command: Sequence[str],
    *,
    report: IO[bytes] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    version: str | None = None,
    extensions: Collection[str] = (),
) -> int:
    """Run ``command`` behind the proxy on this process's standard input and
    output until it exits; its exit status (``128 + N`` for a signal N), or
    2 when reports could not be written or the validator stopped (module
    docstring). Meant to own the process: when the child exits first, a
    daemon thread is left reading standard input.

    Reports go to ``report`` (written line by line, unbuffered, by the
    validator process), or to standard error. Signal handlers for SIGINT,
    SIGTERM and SIGHUP are in place while it runs, when it runs in the main
    thread. Raises `ProxyError` when the command or the validator cannot be
    started.
    """
    argv = _command(command)
    report_fd = 2
    if report is not None:
        try:
            report.flush()
            report_fd = report.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
            raise TypeError(
                f"report must be a file with a descriptor, not {type(report).__name__}"
            ) from None
    Validator(version=version, extensions=extensions, max_line_bytes=max_line_bytes)  # checked
    config = {"version": version, "extensions": list(extensions), "max_line_bytes": max_line_bytes}
    return _Session(config, report_fd).run(argv)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``proxy`` subcommand's arguments, on ``parser`` (`main` reads them)."""
    parser.usage = "%(prog)s [-h] [--report FILE] [--max-line-bytes N] [--tasks] -- CMD ..."
    parser.description = (
        "Run CMD, relaying standard input to it and its output back, unchanged, "
        "while validating every line both ways. Each invalid line is reported as "
        "one JSON line; the exit status is CMD's (128+N for signal N), 2 for the "
        "proxy's own failures."
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="append one JSON line per invalid frame to FILE (default: standard error)",
    )
    parser.add_argument(
        "--max-line-bytes",
        metavar="N",
        type=int,
        default=MAX_LINE_BYTES,
        help=(
            f"longest line validated (default {MAX_LINE_BYTES:,}); "
            "longer ones are forwarded in chunks and reported"
        ),
    )
    parser.add_argument(
        "--tasks", action="store_true", help=f"the {TASKS_EXTENSION} extension is in use"
    )
    parser.add_argument(
        "child",
        nargs=argparse.REMAINDER,
        metavar="-- CMD ...",
        help="the server command and its arguments",
    )


def main(args: argparse.Namespace) -> int:
    """The ``proxy`` subcommand, with the arguments of `add_arguments`: the exit status."""
    child: list[str] = list(args.child)
    if child[:1] == ["--"]:
        child = child[1:]
    try:
        if not child:
            raise ProxyError("no command given: python -m mcp_schema proxy -- CMD ...")
        if args.max_line_bytes < 1:
            raise ProxyError("--max-line-bytes must be positive")
        for fd, name in ((0, "standard input"), (1, "standard output")):
            if not _is_open(fd):
                raise ProxyError(f"{name} is closed")
        if not _is_open(2):
            # A pipe created for the child must not become its standard error.
            devnull = os.open(os.devnull, os.O_WRONLY)  # the lowest free descriptor: 2
            if devnull != 2:
                os.dup2(devnull, 2)
                os.close(devnull)
            if args.report is None:
                raise ProxyError("standard error is closed: give --report FILE")
        extensions = (TASKS_EXTENSION,) if args.tasks else ()
        max_bytes = min(args.max_line_bytes, sys.maxsize - 1)
        if args.report is None:
            return run(child, max_line_bytes=max_bytes, extensions=extensions)
        try:
            report = open(args.report, "ab", buffering=0)
        except OSError as exc:
            raise ProxyError(
                f"cannot write the report {quote(args.report)}: {exc.strerror or exc}"
            ) from None
        with report:
            return run(child, report=report, max_line_bytes=max_bytes, extensions=extensions)
    except ProxyError as problem:
        _say(f"error: {problem}")
        return 2


def _positive(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be positive, not {value}")
    return value


def _bytes(value: object, name: str) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)  # the same object when it is bytes
    if isinstance(value, memoryview):
        return cast("memoryview[int]", value).tobytes()
    raise TypeError(f"{name} must be bytes, not {type(value).__name__}")


def _command(value: object) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"command must be a sequence of strings, not {type(value).__name__}")
    argv = list(cast("Sequence[object]", value))
    if not argv:
        raise ValueError("command must not be empty")
    for arg in argv:
        if not isinstance(arg, str):
            raise TypeError(f"command must hold strings, not {type(arg).__name__}")
    return cast("list[str]", argv)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


if __name__ == "__main__":
    if sys.argv[1:2] == ["--validator"]:  # started by the proxy itself
        sys.exit(_serve(json.loads(sys.argv[2])))
    _parser = argparse.ArgumentParser(prog="python -m mcp_schema.proxy")
    add_arguments(_parser)
    sys.exit(main(_parser.parse_args()))
