"""Hand-written JSON-RPC lines sent to an SDK server (through relay.py) to provoke error paths.

    python3 raw_probe.py --out CAPTURE.jsonl -- SERVER_CMD [ARGS...]

Stdlib only. Sends the initialize handshake, then malformed traffic (invalid JSON,
non-JSON-RPC objects, a batch array, wrong params, unknown method, a response to an
id that was never sent) and records whatever the server answers. Lines that are not
valid JSON are recorded with a "raw" key instead of "message" (see relay.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

LINES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-probe", "version": "0.0.1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    '{"jsonrpc": "2.0", "id": 2, "method": "ping"',  # truncated -> parse error
    "this is not json",  # parse error
    {"jsonrpc": "2.0", "id": 3, "method": "tools/frobnicate"},  # unknown method
    {"jsonrpc": "1.0", "id": 4, "method": "ping"},  # wrong jsonrpc version
    {"id": 5, "method": "ping"},  # missing jsonrpc
    {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "tools/call",
        "params": {"arguments": {}},
    },  # missing name
    {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": "oops"},  # params not object
    {"jsonrpc": "2.0", "id": 99, "result": {}},  # response to unknown id
    [{"jsonrpc": "2.0", "id": 8, "method": "ping"}],  # batch (removed in 2025-06-18)
    {"jsonrpc": "2.0", "id": "str-id-9", "method": "ping"},  # string id
    {"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {"_meta": {"progressToken": "p1"}}},
    {"jsonrpc": "2.0", "method": "notifications/unknown_thing", "params": {}},
    {"jsonrpc": "2.0", "id": 11, "method": "tools/list"},
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    proc = subprocess.Popen(
        [
            sys.executable,
            os.path.join(HERE, "relay.py"),
            "--out",
            os.path.abspath(a.out),
            "--",
            *cmd,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=HERE,
    )

    def reader() -> None:
        for line in proc.stdout:
            print("<-", line.decode().rstrip()[:200], file=sys.stderr)

    threading.Thread(target=reader, daemon=True).start()
    for item in LINES:
        text = item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
        print("->", text[:200], file=sys.stderr)
        proc.stdin.write(text.encode() + b"\n")
        proc.stdin.flush()
        time.sleep(0.4 if item is LINES[0] else 0.15)
    time.sleep(0.5)
    proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
