"""A validating stdio relay of your own, on the library API behind
``python -m mcp_schema proxy``: ``python examples/proxy.py -- SERVER_COMMAND...``.

The command line is the complete tool (validation off the forwarding path,
signals, exit status, a report file); this is the part to reuse in a gateway
of your own. One `Validator` sees both directions, fed the bytes in the order
they travel (here: before they are forwarded, under one lock), so responses
are checked against the request they answer. It splits lines itself, holds
none longer than its limit, and returns a `Report` for each line that fails;
`report_line` writes one as a JSON line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from mcp_schema.codec import Sender
from mcp_schema.proxy import Report, Validator, report_line

validator = Validator()
lock = threading.Lock()


def report(reports: list[Report]) -> None:
    for found in reports:
        sys.stderr.buffer.write(report_line(found))
    sys.stderr.buffer.flush()


def pump(sender: Sender, source: int, sink: int) -> None:
    while chunk := os.read(source, 65536):
        with lock:
            found = validator.feed(sender, chunk)
        os.write(sink, chunk)  # unchanged, valid or not (a pipe takes it whole)
        report(found)
    with lock:
        report(validator.close(sender))  # a last line without a newline


def main(command: list[str]) -> int:
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    stdin = server.stdin

    def to_server() -> None:
        pump("client", sys.stdin.fileno(), stdin.fileno())
        stdin.close()  # end of input: the server's signal to exit

    threading.Thread(target=to_server, daemon=True).start()
    pump("server", server.stdout.fileno(), sys.stdout.fileno())
    return server.wait()


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[1:] if args[:1] == ["--"] else args))
