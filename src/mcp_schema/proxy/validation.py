"""The validator process (``python -m mcp_schema.proxy --validator CONFIG``)
and the pipe the relays feed it through.

The relays hand it copies of what they forward as records: a kind (one
byte, `RECORDS`) and the length of the bytes that follow (4 bytes). It
feeds them to one `Validator` and its reports to a `ReportLog`, which a
thread of its own writes. Validation runs beside the relays, never holding
them up but through a full pipe (backpressure, so that nothing grows without
bound); the writing of reports never holds up validation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterable
from typing import Any, Literal

from mcp_schema.codec import Sender
from mcp_schema.proxy import _fd
from mcp_schema.proxy.lines import MAX_LINE_BYTES
from mcp_schema.proxy.reports import DIRECTION, Report, ReportLog
from mcp_schema.proxy.validator import Validator

Event = Literal["data", "end", "cut"]
"""What a record says of a stream: bytes of it, its end (the peer closed it),
or that the relay stopped reading it (no report of a partial last line)."""

RECORDS: dict[bytes, tuple[Sender, Event]] = {
    b"c": ("client", "data"),
    b"s": ("server", "data"),
    b"C": ("client", "end"),
    b"S": ("server", "end"),
    b"x": ("client", "cut"),
    b"y": ("server", "cut"),
}
"""Each record's kind: whose stream, and what of it."""

_KIND = {meaning: kind for kind, meaning in RECORDS.items()}
_HEADER = 5  # the kind and the length
PIPE_BYTES = 1024 * 1024
"""What the validator may lag behind before relaying waits."""
FAILED = 2
"""The validator's status when it said why itself."""
STALL_SECONDS = 1.0
"""How long the validator, once its input ended, waits for a report output
that takes nothing."""


class Validation:
    """The validator process and the pipe to it, seen from the relays.

    Raises `OSError` when it cannot be started."""

    def __init__(self, config: dict[str, Any], report_fd: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_schema.proxy", "--validator", json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=report_fd,
            bufsize=0,
            start_new_session=True,  # a terminal's Ctrl-C is not for it: its input ends
            env=_importable(),
        )
        assert self.proc.stdin is not None
        self._pipe = self.proc.stdin
        self._lock = threading.Lock()
        self._broken = False
        try:  # a deeper pipe: bursts need not wait for validation (Linux)
            import fcntl

            fcntl.fcntl(self._pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
        except (ImportError, OSError):
            pass

    def send(self, sender: Sender, event: Event, chunk: bytes = b"") -> None:
        """One record, whole, in the order of the calls (which is the caller's to keep)."""
        record = _KIND[sender, event] + len(chunk).to_bytes(_HEADER - 1, "big") + chunk
        with self._lock:
            if self._broken:
                return
            if not _fd.write(self._pipe.fileno(), record):
                self._broken = True  # the validator stopped; its status says why

    def finish(self) -> str | None:
        """End the validator's input, wait for it: why validation failed, if it did."""
        with self._lock:
            self._broken = True
            self._pipe.close()
        status = self.proc.wait()
        if status == 0:
            return None
        if status == FAILED:
            return "validation stopped"  # the validator said why on standard error
        return f"the validator stopped (status {status}); the session was not all validated"

    def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            self.proc.wait()


def serve(config: dict[str, Any]) -> int:
    """The validator process: records on standard input, reports on standard
    output, written by a thread of their own from a `ReportLog`: a report
    output nobody reads (a full pipe) holds up neither validation nor, through
    it, the relays."""
    validator = Validator(
        version=config.get("version"),
        extensions=config.get("extensions", ()),
        max_line_bytes=config.get("max_line_bytes", MAX_LINE_BYTES),
    )
    log = ReportLog()
    writer = _Writer(log, 1)
    writer.start()
    source = os.fdopen(0, "rb", buffering=_fd.CHUNK)
    while len(header := source.read(_HEADER)) == _HEADER:
        sender, event = RECORDS[header[:1]]
        size = int.from_bytes(header[1:], "big")
        chunk = source.read(size) if size else b""
        if event == "data":
            log.traffic(len(chunk))
            reports: Iterable[Report] = validator.reports(sender, chunk)
        elif event == "end":
            reports = validator.close(sender)
        else:
            validator.discard(sender)
            reports = ()
        for report in reports:  # each merged or left out as it comes: never a list
            log.add(report)
        if event != "data":
            log.end(DIRECTION[sender])
    log.finish()
    writer.wait()
    return FAILED if writer.failed else 0


class _Writer(threading.Thread):
    """Writes what a `ReportLog` keeps; what it cannot write is dropped and
    counted, and the first failure said (the status is then `FAILED`)."""

    def __init__(self, log: ReportLog, fd: int) -> None:
        super().__init__(name="proxy-reports", daemon=True)  # never keeps the process
        self.log = log
        self.fd = fd
        self.failed = False
        self.writes = 0

    def run(self) -> None:
        while (data := self.log.take()) is not None:
            self.writes += 1
            if self.failed:
                self.log.unwritten()
                continue
            try:
                _fd.write(self.fd, data, raising=True)
            except OSError as exc:
                self.failed = True
                self.log.unwritten()
                _fd.say(f"error: cannot write the report: {exc.strerror or exc}")

    def wait(self) -> None:
        """Until all is written, or nothing was for `STALL_SECONDS` (a full pipe
        nobody reads: the rest is left unwritten)."""
        writes = -1
        while self.is_alive() and writes != self.writes:
            writes = self.writes
            self.join(STALL_SECONDS)


def _importable() -> dict[str, str]:
    """The environment, with the folders this ``mcp_schema`` was imported from first."""
    import mcp_schema

    roots = [os.path.dirname(os.path.abspath(path)) for path in mcp_schema.__path__]
    inherited = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*roots, *filter(None, [inherited])])}
