"""What the ``*_refusals`` test files of each unit build hostile input from:
a 2026-07-28 ``tools/call`` with its ``_meta``, and a message as JSON bytes."""

from __future__ import annotations

import json
from typing import Any

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
}


def call(meta: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META if meta is None else meta, "name": "t", **params},
    }


def raw(message: Any) -> bytes:
    return json.dumps(message).encode()
