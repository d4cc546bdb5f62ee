"""A validating stdio relay of your own, on the library API behind
``python -m mcp_schema proxy``: ``python examples/proxy.py -- SERVER_COMMAND...``.

The command line is the complete tool (validation off the forwarding path,
signals, exit status, a report file); this is the part to reuse in a gateway
of your own. One `Validator` sees both directions, fed the bytes in the order
they travel (here: before they are forwarded, under one lock), so responses
are checked against the request they answer. It splits lines itself, holds
none longer than its limit, and returns a `Report` for each line that fails.
A `ReportLog` keeps what is written of them bounded (runs of the same failure
merged, a cap), and a thread of its own writes it: a standard error nobody
reads never holds up the relay.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from mcp_schema.codec import Sender
from mcp_schema.proxy import ReportLog, Validator

validator = Validator()
log = ReportLog()
lock = threading.Lock()


def write_reports() -> None:
    while (data := log.take()) is not None:
        os.write(2, data)


def pump(sender: Sender, source: int, sink: int) -> None:
    while chunk := os.read(source, 65536):
        with lock:
            log.traffic(len(chunk))
            for found in validator.reports(sender, chunk):
                log.add(found)
        os.write(sink, chunk)  # unchanged, valid or not (a pipe takes it whole)
    with lock:
        for found in validator.close(sender):  # a last line without a newline
            log.add(found)


def main(command: list[str]) -> int:
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    stdin = server.stdin

    def to_server() -> None:
        pump("client", sys.stdin.fileno(), stdin.fileno())
        stdin.close()  # end of input: the server's signal to exit

    writer = threading.Thread(target=write_reports, daemon=True)
    writer.start()
    threading.Thread(target=to_server, daemon=True).start()
    pump("server", server.stdout.fileno(), sys.stdout.fileno())
    status = server.wait()
    log.finish()  # the runs still open, and what was left out
    writer.join(1.0)  # a standard error nobody reads is not waited for
    return status


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[1:] if args[:1] == ["--"] else args))
