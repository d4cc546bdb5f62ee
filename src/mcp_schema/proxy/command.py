"""The command line: ``python -m mcp_schema proxy [--report FILE]
[--max-line-bytes N] [--tasks] -- CMD ...`` (`add_arguments`, `main`)."""

from __future__ import annotations

import argparse
import os
import sys

from mcp_schema.errors import quote
from mcp_schema.proxy import _fd
from mcp_schema.proxy.lines import MAX_LINE_BYTES
from mcp_schema.proxy.relay import ProxyError, run
from mcp_schema.versions import TASKS_EXTENSION


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
            if not _fd.is_open(fd):
                raise ProxyError(f"{name} is closed")
        if not _fd.is_open(2):
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
        _fd.say(f"error: {problem}")
        return 2
