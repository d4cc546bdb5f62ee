"""``python -m mcp_schema validate FILE [--version V]`` (hand-written runtime module).

FILE holds JSON Lines, one JSON-RPC message per line (``-`` reads stdin).
Responses are paired with their requests by id, the version is detected per
message where it can be; each invalid message is reported as
``line N: <code> <JSON path>: <reason>``, then the counts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import IO

from mcp_schema.codec import Correlator
from mcp_schema.errors import McpError
from mcp_schema.versions import SUPPORTED_VERSIONS, TASKS_EXTENSION

PROGRESS_EVERY = 10_000


def validate_lines(
    lines: Iterable[bytes],
    out: IO[str],
    *,
    version: str | None = None,
    extensions: Sequence[str] = (),
    progress: IO[str] | None = None,
) -> tuple[int, int]:
    """Validate each non-blank line; returns (valid, invalid)."""
    correlator = Correlator(version=version, extensions=extensions)
    valid = invalid = 0
    for number, line in enumerate(lines, start=1):
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress.write(f"\r{number:,} lines…")
            progress.flush()
        if not line.strip():
            continue
        try:
            correlator.decode(line)
        except McpError as err:
            invalid += 1
            for path, reason in _problems(err):
                out.write(f"line {number}: {err.code} {path}: {reason}\n")
        else:
            valid += 1
    if progress is not None:
        progress.write("\r")
    return valid, invalid


def _problems(err: McpError) -> list[tuple[str, str]]:
    data = err.data
    if isinstance(data, dict) and isinstance(data.get("errors"), list):
        return [(str(e.get("path", "$")), str(e.get("reason", ""))) for e in data["errors"]]
    return [("$", err.message)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcp_schema")
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
    args = parser.parse_args(argv)
    stream = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")
    progress = sys.stderr if sys.stderr.isatty() else None
    with stream:
        valid, invalid = validate_lines(
            stream,
            sys.stdout,
            version=args.version,
            progress=progress,
            extensions=(TASKS_EXTENSION,) if args.tasks else (),
        )
    print(f"{valid} valid, {invalid} invalid")
    return 1 if invalid else 0
