"""The messages replicas exchange through the broker to forward a request
(`mcp_schema.http.forward`) or find a session's holder
(`mcp_schema.http.shared_sessions`): each a JSON header line, then raw bytes
(hand-written runtime module)."""

from __future__ import annotations

import json
from typing import Any

import jiter

__all__ = ["EVERY", "chunks", "inbox", "pack", "reply", "texts", "unpack", "wire"]

EVERY = "mcp-replicas"
"""The channel every replica listens on (who holds a session?)."""


def inbox(replica: str) -> str:
    return "mcp-replica:" + replica


def reply(forward_id: str) -> str:
    return "mcp-reply:" + forward_id


def pack(header: dict[str, Any], payload: bytes = b"") -> bytes:
    return json.dumps(header, separators=(",", ":")).encode() + b"\n" + payload


def unpack(data: bytes) -> tuple[dict[str, Any], bytes] | None:
    """A message's header and payload; None for what is not one of ours."""
    head, newline, payload = data.partition(b"\n")
    try:
        header = jiter.from_json(head) if newline else None
    except ValueError:
        return None
    return (header, payload) if isinstance(header, dict) else None


def chunks(data: bytes, room: int) -> list[bytes]:
    return [data[i : i + room] for i in range(0, len(data), room)] or [b""]


def texts(pairs: object) -> list[tuple[bytes, bytes]] | None:
    """Headers from the wire (pairs of latin-1 strings), or None when malformed."""
    if not isinstance(pairs, list):
        return None
    found = []
    for pair in pairs:
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)
        ):
            return None
        try:
            found.append((pair[0].encode("latin-1"), pair[1].encode("latin-1")))
        except UnicodeEncodeError:
            return None
    return found


def wire(headers: list[tuple[bytes, bytes]]) -> list[list[str]]:
    return [[k.decode("latin-1"), v.decode("latin-1")] for k, v in headers]
