"""The relay: the child, the two directions copied both at once, the
signals, the shutdown and the exit status (`run`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection, Sequence
from types import FrameType
from typing import IO, Any, cast

from mcp_schema.errors import quote
from mcp_schema.proxy import _fd
from mcp_schema.proxy.lines import MAX_LINE_BYTES
from mcp_schema.proxy.validation import Validation
from mcp_schema.proxy.validator import Validator

GRACE_SECONDS = 2.0
"""How long a child being stopped by the proxy gets after its input is closed,
then after SIGTERM, before the next step."""

DRAIN_SECONDS = 1.0
"""How long the child's output is still read, once the child has exited, without
anything arriving (processes it left behind may hold it open)."""

_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class ProxyError(Exception):
    """The proxy could not start (exit status 2 on the command line)."""


class _Session:
    """One run of the proxy: the child, the validator, the three threads, the signals."""

    def __init__(
        self, config: dict[str, Any], report_fd: int, stdin_fd: int = 0, stdout_fd: int = 1
    ) -> None:
        self.config = config
        self.report_fd = report_fd
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.validation: Validation | None = None
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
            self.validation = _start_validation(self.config, self.report_fd)
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
                _fd.say(f"error: {problem}")
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
            while chunk := _fd.read(self.stdin_fd):
                self.validation.send("client", "data", chunk)  # before it can be answered
                if not _fd.write(sink, chunk):
                    self.validation.send("client", "cut")  # the child stopped reading
                    break
            else:
                self.validation.send("client", "end")
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
                chunk = _fd.read(source)
                self.reading_since = None
                if not chunk:
                    self.validation.send("server", "end")
                    break
                self.validation.send("server", "data", chunk)
                if not _fd.write(self.stdout_fd, chunk):
                    # The reader went away: nobody can receive the server's output.
                    self.validation.send("server", "cut")
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


def _start_validation(config: dict[str, Any], report_fd: int) -> Validation:
    if not sys.executable:
        raise ProxyError("cannot start the validator: no Python executable is known")
    try:
        return Validation(config, report_fd)
    except OSError as exc:
        raise ProxyError(f"cannot start the validator: {exc.strerror or exc}") from None


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

    Reports go to ``report`` (bounded by a `ReportLog`, written line by line,
    unbuffered, by the validator process), or to standard error. Signal handlers for SIGINT,
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
