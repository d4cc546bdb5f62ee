"""`AccessLog`: one JSON line per HTTP request a front door served, opt-in.

Each line holds the request's HTTP ``method`` (``http``), its JSON-RPC
``method``, the ``tool`` of a ``tools/call``, the ``era`` it was served in,
the HTTP ``status``, the ``duration`` in seconds and the verified
``principal`` (`mcp_schema.http.gate.current_principal`), with the ``time``
it ended. Never a header value (no token, no cookie), an argument or a
result: what a peer names is clipped to 128 characters, and JSON-encoded.

The facts are noted where they are known, once: the endpoint notes what it
parsed (`noted`, in `SEEN`, a dict the app makes for each request), the app
the status it sent and the time it took. The file is created with mode
0600 (it names principals), and appended to.
"""

from __future__ import annotations

import json
import os
import threading
import time
from contextvars import ContextVar
from typing import Any

from mcp_schema.http.gate import current_principal

__all__ = ["SEEN", "AccessLog", "noted"]

SEEN: ContextVar[dict[str, Any] | None] = ContextVar("mcp_schema_access", default=None)
"""What the endpoint noted of the request being served, while an access log is kept."""

_CLIP = 128


def _clipped(value: object) -> str | None:
    return value[:_CLIP] if isinstance(value, str) else None


def noted(value: object, stateless: bool) -> None:
    """The endpoint parsed ``value`` (a JSON-RPC message), of the era named by
    ``stateless``: noted for the access line, when one is kept."""
    seen = SEEN.get()
    if seen is None or not isinstance(value, dict):
        return
    seen["method"] = _clipped(value.get("method"))
    params = value.get("params")
    if seen["method"] == "tools/call" and isinstance(params, dict):
        seen["tool"] = _clipped(params.get("name"))
    seen["era"] = "stateless" if stateless else "handshake"


class AccessLog:
    """Lines appended to ``path`` (created 0600), or written to the open file
    descriptor ``fd`` (the caller's: left open)."""

    def __init__(self, path: str | None = None, *, fd: int | None = None) -> None:
        if (path is None) == (fd is None):
            raise TypeError("give an AccessLog a path or an fd, one of them")
        self._owned = fd is None
        if path is not None:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        assert fd is not None
        self.fd = fd
        self._lock = threading.Lock()

    @classmethod
    def of(cls, path: str | None) -> AccessLog | None:
        """The log appending to ``path``, or None without one."""
        return None if path is None else cls(path)

    def begin(self) -> dict[str, Any]:
        """A request begins: its notes, set as `SEEN` for the endpoint."""
        seen: dict[str, Any] = {"started": time.perf_counter()}
        SEEN.set(seen)
        return seen

    def write(self, http_method: str, seen: dict[str, Any], status: int | None) -> None:
        """The request ``seen`` ended (``status``: None when the client left first)."""
        principal = current_principal()
        line = {
            "time": round(time.time(), 3),
            "http": http_method[:16],
            "method": seen.get("method"),
            "tool": seen.get("tool"),
            "era": seen.get("era"),
            "status": status,
            "duration": round(time.perf_counter() - seen["started"], 6),
            "principal": None if principal is None else principal.name[:512],
        }
        data = (json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
        with self._lock:  # one write per line: lines never interleave
            try:
                os.write(self.fd, data)
            except OSError:
                pass  # a full disk loses lines, never a request

    def close(self) -> None:
        if self._owned:
            os.close(self.fd)
