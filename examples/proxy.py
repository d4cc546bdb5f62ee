"""A validating stdio proxy: ``python examples/proxy.py -- SERVER_COMMAND...``.

Every frame passes through unchanged, in both directions; each is also
decoded (one `Correlator` for the connection, told which peer sent each
frame, so responses are typed by the request they answer) and re-encoded, and any frame that could not be decoded,
or that would not come back as the same JSON value, is reported on stderr.
Unknown methods are the peers' business: they are decoded generically.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import IO

from mcp_schema.codec import Correlator, Sender, encode
from mcp_schema.errors import McpError

session = Correlator(allow_unknown_methods=True)
lock = threading.Lock()  # one Correlator sees both directions in order


def check(sender: Sender, line: bytes) -> None:
    direction = "client->server" if sender == "client" else "server->client"
    with lock:
        try:
            same = json.loads(encode(session.decode(line, sender=sender))) == json.loads(line)
        except McpError as err:
            print(f"proxy {direction}: {err.code} {err.message}", file=sys.stderr, flush=True)
            return
    if not same:
        print(f"proxy {direction}: would change {line[:200]!r}", file=sys.stderr, flush=True)


def pump(sender: Sender, source: IO[bytes], sink: IO[bytes]) -> None:
    for line in source:
        if line.strip():
            check(sender, line)
        sink.write(line)
        sink.flush()
    sink.close()


def main(command: list[str]) -> int:
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    to_server = threading.Thread(
        target=pump, args=("client", sys.stdin.buffer, server.stdin), daemon=True
    )
    to_server.start()
    pump("server", server.stdout, sys.stdout.buffer)
    return server.wait()


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[1:] if args[:1] == ["--"] else args))
