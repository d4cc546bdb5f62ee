"""A stdio server the gateway's tests put behind it: ``examples/server.py``,
but the tool ``die`` ends the process before it answers, and the tool
``wrong`` answers with a result the schema refuses (``content`` no list)."""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path

EXAMPLE = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "server.py"))


def main() -> None:
    session = EXAMPLE["ServerSession"](
        info={"name": "test-server", "version": "1"},
        capabilities={"tools": {}},
        handler_version="2026-07-28",
        versions=EXAMPLE["served_versions"](os.environ.get("MCP_VERSIONS")),
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
            EXAMPLE["serve"](session, event)
        frames += session.data_to_send()
        sys.stdout.buffer.writelines(frame + b"\n" for frame in frames)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
