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
yields one report line: its `Report` (the members are listed there), as one
line of JSON (`report_line`: ASCII, at most `MAX_REPORT_BYTES`). Good
traffic writes nothing.

What a session writes is bounded as a whole (`ReportLog`), whatever the
peers send: a run of lines of one direction that fail the same way is its
first report and one report closing the run (``repeats`` counts the lines
merged), and past `REPORT_BUDGET` plus the size of the traffic, reports are
left out, a `Dropped` line (``{"time": ..., "dropped": N}``) counting them
before the next report written, or at the end. Reports are written by a
thread of their own: where they go never holds up validation, nor through it
the relays. A report output that takes nothing (a pipe nobody reads) has
reports left out once `BACKLOG_BYTES` wait to be written, and is waited for
one second at the end.

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

A line ending in ``\\r\\n`` is a message like any other. Lines are split by
`LineSplitter`, the reader ``python -m mcp_schema validate`` uses too.

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
written in the middle of a session (an error such as a full disk or a closed
pipe: the reports after it are left out), or a validator that stopped (the
session goes on, unvalidated, and the status is 2 when it ends).

Reports on standard error (the default) share it with the child's own lines;
each report is written with one call, but ``--report FILE`` keeps them apart.
``python -m mcp_schema.proxy ...`` is ``python -m mcp_schema proxy ...``.

The package's modules: ``lines`` (the JSON-lines reader), ``validator``
(the `Validator`), ``reports`` (the report format and `ReportLog`),
``validation`` (the validator process), ``relay`` (the child and the two
directions) and ``command`` (the command line).
"""

from __future__ import annotations

from mcp_schema.proxy.command import add_arguments, main
from mcp_schema.proxy.lines import MAX_LINE_BYTES, LineSplitter, OverlongLine, read_lines
from mcp_schema.proxy.relay import DRAIN_SECONDS, GRACE_SECONDS, ProxyError, run
from mcp_schema.proxy.reports import (
    BACKLOG_BYTES,
    EXCERPT_BYTES,
    MAX_DATA_BYTES,
    MAX_REPORT_BYTES,
    REPORT_BUDGET,
    Direction,
    Dropped,
    Report,
    ReportLog,
    report_line,
)
from mcp_schema.proxy.validator import Validator

__all__ = [
    "BACKLOG_BYTES",
    "DRAIN_SECONDS",
    "EXCERPT_BYTES",
    "GRACE_SECONDS",
    "MAX_DATA_BYTES",
    "MAX_LINE_BYTES",
    "MAX_REPORT_BYTES",
    "REPORT_BUDGET",
    "Direction",
    "Dropped",
    "LineSplitter",
    "OverlongLine",
    "ProxyError",
    "Report",
    "ReportLog",
    "Validator",
    "add_arguments",
    "main",
    "read_lines",
    "report_line",
    "run",
]
