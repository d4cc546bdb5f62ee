"""``python -m mcp_schema validate FILE [--version V]``, ``diff A B [--json]`` and
``proxy [--report FILE] -- CMD ...`` (`mcp_schema.proxy`), ``gateway --listen
HOST:PORT --upstream URL`` (`mcp_schema.gateway`) and ``serve module:server``
(`mcp_schema.server.serve`) (hand-written runtime module).

FILE holds JSON Lines, one JSON-RPC message per line (``-`` reads stdin).
Responses are paired with their requests by id, the version is detected per
message where it can be; each invalid message is reported as
``line N: <code> <JSON path>: <reason>`` (peer text escaped onto the one line
and cut), then the counts.

The lines are read as the proxy reads them (``mcp_schema.proxy.lines``): a
line longer than `MAX_LINE_BYTES` (``--max-line-bytes``) is reported as
invalid and skipped without being held in memory, an empty or blank line is
reported as no message (-32700), and the last line needs no newline.

Exit status: 0 when every message is valid, 1 when some are not, 2 for a
usage or I/O problem (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import IO, NoReturn

from mcp_schema._args import check, strings, writable
from mcp_schema.codec import Correlator
from mcp_schema.errors import McpError, ParseError, clip, quote
from mcp_schema.gateway.command import add_arguments as add_gateway_arguments
from mcp_schema.proxy import add_arguments as add_proxy_arguments
from mcp_schema.proxy.lines import MAX_LINE_BYTES as MAX_LINE_BYTES  # cli names: re-exported
from mcp_schema.proxy.lines import OverlongLine as OverlongLine
from mcp_schema.proxy.lines import not_a_message
from mcp_schema.proxy.lines import read_lines as read_lines
from mcp_schema.versions import SUPPORTED_VERSIONS, TASKS_EXTENSION

PROGRESS_EVERY = 10_000


def validate_lines(
    lines: Iterable[bytes | OverlongLine],
    out: IO[str],
    *,
    version: str | None = None,
    extensions: Sequence[str] = (),
    progress: IO[str] | None = None,
    max_bytes: int = MAX_LINE_BYTES,
) -> tuple[int, int]:
    """Validate each line (`read_lines`' rules: an empty or blank line is
    invalid); returns (valid, invalid)."""
    writable(out, "out")
    check(version, str, "version", none=True)
    extensions = strings(extensions, "extensions") or ()
    writable(progress, "progress", none=True)
    check(max_bytes, int, "max_bytes")
    correlator = Correlator(version=version, extensions=extensions)
    valid = invalid = 0
    for number, line in enumerate(lines, start=1):
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress.write(f"\r{number:,} lines…")
            progress.flush()
        if isinstance(line, OverlongLine):
            unread = f"line of {line.size:,} bytes is longer than {max_bytes:,}, not read"
        elif (no_message := not_a_message(line)) is not None:
            unread = no_message
        else:
            try:
                correlator.decode(line)
            except McpError as err:
                invalid += 1
                for path, reason in _problems(err):
                    out.write(f"line {number}: {err.code} {clip(path)}: {clip(reason)}\n")
            else:
                valid += 1
            continue
        invalid += 1
        out.write(f"line {number}: {ParseError.code} $: {unread}\n")
    if progress is not None:
        progress.write("\r")
    return valid, invalid


def _problems(err: McpError) -> list[tuple[str, str]]:
    data = err.data
    if isinstance(data, dict) and isinstance(data.get("errors"), list):
        problems = [
            (str(e.get("path", "$")), str(e.get("reason", "")))
            for e in data["errors"]
            if isinstance(e, dict)
        ]
        total = data.get("total")
        if isinstance(total, int) and total > len(problems):
            problems.append(("$", f"and {total - len(problems)} more errors"))
        return problems
    return [("$", err.message)]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, not argparse's usage block: scripts read the last line anyway.
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class _Failed(Exception):
    """A usage or I/O problem: exit status 2 with this one line on stderr."""


def _open(name: str) -> IO[bytes]:
    if name == "-":
        if sys.stdin is None:
            raise _Failed("standard input is closed")
        return sys.stdin.buffer
    try:
        return open(name, "rb")
    except OSError as exc:
        raise _Failed(f"cannot read {quote(name)}: {exc.strerror or exc}") from None


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """Run the command line; the exit status. Every usage or I/O problem
    (a closed or full stdout, a closed pipe, an unreadable file) is exit
    status 2 with one line on stderr, never a traceback."""
    if argv is not None:
        argv = strings(argv, "argv")
    writable(stdout, "stdout", none=True)
    writable(stderr, "stderr", none=True)
    out: IO[str] | None = stdout if stdout is not None else sys.stdout
    err: IO[str] | None = stderr if stderr is not None else sys.stderr
    parser = _Parser(prog="python -m mcp_schema")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("validate", help="validate a JSON Lines file of JSON-RPC messages")
    check.add_argument("file", help="the file, or - for standard input")
    check.add_argument(
        "--version",
        choices=SUPPORTED_VERSIONS,
        help="protocol version of messages that do not name one",
    )
    check.add_argument(
        "--tasks", action="store_true", help=f"the {TASKS_EXTENSION} extension was negotiated"
    )
    check.add_argument(
        "--max-line-bytes",
        type=int,
        default=MAX_LINE_BYTES,
        help=f"longest line read (default {MAX_LINE_BYTES:,}); longer lines are reported",
    )
    compare = commands.add_parser("diff", help="definitions and members changed from A to B")
    compare.add_argument("old", choices=SUPPORTED_VERSIONS, metavar="A")
    compare.add_argument("new", choices=SUPPORTED_VERSIONS, metavar="B")
    compare.add_argument("--json", action="store_true", help="one JSON object instead of text")
    add_proxy_arguments(
        commands.add_parser("proxy", help="run a stdio server, validating its traffic both ways")
    )
    add_gateway_arguments(
        commands.add_parser("gateway", help="serve /mcp in front of an HTTP server, validating")
    )
    _serve_arguments(commands.add_parser("serve", help="run a mcp_schema.server.Server"))
    args = parser.parse_args(argv)
    if args.command == "serve":
        from mcp_schema.server.serve import main as serve

        return serve(args)
    if args.command == "gateway":
        from mcp_schema.gateway.command import main as gateway

        return gateway(args)
    if args.command == "proxy":
        from mcp_schema.proxy import main as proxy

        return proxy(args)
    try:
        if out is None:
            raise _Failed("standard output is closed")
        if args.command == "diff":
            status = _diff(args.old, args.new, args.json, out)
        else:
            status = _validate(args, out, err)
        out.flush()
    except _Failed as problem:
        return _failed(str(problem), out, err)
    except OSError as exc:  # a full disk, a closed pipe, an unreadable file...
        return _failed(f"I/O error: {exc.strerror or exc}", out, err)
    return status


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` subcommand's (`mcp_schema.server.serve.main` reads them):
    here, so that the other commands do not import the server layer."""
    parser.description = (
        "Serve the mcp_schema.server.Server named module:attribute under uvicorn, "
        "configured from the MCP_* environment variables (docs/guide/remote-server.md)."
    )
    parser.add_argument(
        "target", metavar="module:server", help="the Server, as uvicorn names an app"
    )
    parser.add_argument(
        "--app-dir", default=".", help="where the module is found first (default the current one)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--log-level", default="info", help="uvicorn's log level (default info)")
    parser.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics, a listener of its own "
        "(loopback when HOST is left out; the prometheus extra)",
    )
    parser.add_argument(
        "--access-log",
        metavar="FILE",
        help="append one JSON line per request to FILE, created 0600 (MCP_ACCESS_LOG)",
    )


def _diff(old: str, new: str, as_json: bool, out: IO[str]) -> int:
    from mcp_schema.diff import diff

    changes = diff(old, new)
    out.write(json.dumps(changes.to_json(), indent=2) + "\n" if as_json else changes.to_text())
    return 0


def _validate(args: argparse.Namespace, out: IO[str], err: IO[str] | None) -> int:
    if args.max_line_bytes < 1:
        raise _Failed("--max-line-bytes must be positive")
    # No line is longer than the address space: a larger limit is no limit.
    max_bytes = min(args.max_line_bytes, sys.maxsize - 1)
    _printable(out)
    with _open(args.file) as stream:
        valid, invalid = validate_lines(
            read_lines(stream, max_bytes),
            out,
            version=args.version,
            progress=err if err is not None and _isatty(err) else None,
            extensions=(TASKS_EXTENSION,) if args.tasks else (),
            max_bytes=max_bytes,
        )
    out.write(f"{valid} valid, {invalid} invalid\n")
    return 1 if invalid else 0


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _failed(problem: str, out: IO[str] | None, err: IO[str] | None) -> int:
    """Exit status 2, with ``problem`` as one line on stderr (when there is one)."""
    if out is not None and out is sys.stdout:
        _discard_stdout()
    if err is not None:
        try:
            err.write(f"error: {clip(problem)}\n")
            err.flush()
        except (OSError, ValueError):
            pass
    return 2


def _printable(out: IO[str]) -> None:
    # Report lines may carry any character a peer sent; a stdout that cannot
    # encode one (LANG=C) writes an escape instead of failing mid-report.
    reconfigure = getattr(out, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(errors="backslashreplace")


def _discard_stdout() -> None:
    # What is still buffered would fail again when the interpreter flushes
    # stdout at exit, with a second message; it is dropped instead.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
