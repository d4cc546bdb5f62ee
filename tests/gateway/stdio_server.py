"""A stdio server the gateway's tests put behind it: ``examples/server.py``,
but the tool ``die`` ends the process before it answers, the tool ``wrong``
answers with a result the schema refuses (``content`` no list), and before
answering as ``echo`` does, the tool ``long`` writes a line of 500 bytes,
``garbage`` a line that is no JSON, ``stray`` a response to no request,
``cr`` a log message with a CR in it (JSON whitespace, one line still)."""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path

EXAMPLE = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "server.py"))


SLIPPED = {
    "long": json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"pad": "x" * 450}}).encode(),
    "garbage": b"not json",
    "stray": b'{"jsonrpc":"2.0","id":999,"result":{}}',
    "cr": b'{"jsonrpc":"2.0",\r"method":"notifications/message",'
    b'"params":{"level":"info","data":"cr"}}',
}


def main() -> None:
    session = EXAMPLE["ServerSession"](
        info={"name": "test-server", "version": "1"},
        capabilities={"tools": {}},
        handler_version="2026-07-28",
        versions=EXAMPLE["VERSIONS"],  # MCP_VERSIONS, read as the example reads it
    )
    for line in sys.stdin.buffer:
        frames = []
        for event in session.receive(line):
            params = getattr(getattr(event, "message", None), "params", None)
            name = getattr(params, "name", None)
            if name == "die":
                os._exit(3)
            if name == "wrong":
                wrong = {"jsonrpc": "2.0", "id": event.id, "result": {"content": "oops"}}
                frames.append(json.dumps(wrong).encode())
                continue
            if name in SLIPPED:
                frames.append(SLIPPED[name])
            EXAMPLE["serve"](session, event)
        frames += session.data_to_send()
        sys.stdout.buffer.writelines(frame + b"\n" for frame in frames)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
