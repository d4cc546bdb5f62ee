"""What a `ServerSession` costs per request: ``python -m bench.session``.

One ``tools/list`` request, answered with a mapping (no ``handler_version``),
in each era: ``receive`` + ``respond`` + ``data_to_send`` on a session that is
already negotiated, against ``decode`` + ``reply`` + ``encode`` of the same
request and answer, measured in the same rounds (`timing.compare`). The
session does more than the reference (it checks the answer is a valid
``tools/list`` result, keeps the request in flight, completes stateless-era
results); the target bounds what that costs.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench import timing
from mcp_schema import codec
from mcp_schema.session import RequestReceived, ServerSession

TARGET = 1.5
"""The session's cost per request, at most this many times the reference's."""

INFO = {"name": "bench", "version": "1"}
TOOLS = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
_STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
}


@dataclass(frozen=True)
class Era:
    name: str
    version: str
    request: bytes
    answer: dict[str, Any]
    """What the reference replies with: the session's answer as it is sent."""


def _request(version: str) -> bytes:
    params = {"_meta": _STATELESS_META} if version == "2026-07-28" else {}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}
    ).encode()


def negotiated(version: str) -> ServerSession:
    """A session past negotiation: ``initialize`` answered, or a first stateless request."""
    session = ServerSession(info=INFO, capabilities={"tools": {}})
    if version == "2026-07-28":
        session_request(session, _request(version))
    else:
        opening = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": INFO},
        }
        session.receive(json.dumps(opening).encode())
        session.data_to_send()
    return session


def session_request(session: ServerSession, raw: bytes) -> list[bytes]:
    for event in session.receive(raw):
        if isinstance(event, RequestReceived):
            session.respond(event, TOOLS)
    return session.data_to_send()


def reference(era: Era) -> Callable[[], bytes]:
    version = None if era.version == "2026-07-28" else era.version

    def run() -> bytes:
        request = codec.decode(era.request, version=version)
        assert codec.is_request(request)
        return codec.encode(codec.reply(request, era.answer))

    return run


def eras() -> list[Era]:
    found = []
    for name, version in (("handshake", "2025-11-25"), ("stateless", "2026-07-28")):
        raw = _request(version)
        (frame,) = session_request(negotiated(version), raw)
        found.append(Era(name, version, raw, json.loads(frame)["result"]))
    return found


def measure(repeats: int, budget: float) -> dict[str, tuple[float, float]]:
    """µs per request of (session, reference), by era, timed in the same rounds."""
    calls: dict[str, Callable[[], object]] = {}
    for era in eras():
        session = negotiated(era.version)
        calls[f"{era.name} session"] = functools.partial(session_request, session, era.request)
        calls[f"{era.name} reference"] = reference(era)
    results = timing.compare(calls, repeats=repeats, budget=budget)
    return {
        era.name: (
            results[f"{era.name} session"].best * 1e6,
            results[f"{era.name} reference"].best * 1e6,
        )
        for era in eras()
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.session")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--budget", type=float, default=0.05, help="seconds per repeat")
    args = parser.parse_args(argv)
    print("ServerSession per tools/list request, against decode + reply + encode; µs")
    for name, (ours, ref) in measure(args.repeats, args.budget).items():
        verdict = "PASS" if ours <= TARGET * ref else "MISS"
        print(
            f"  {name:<10} session {ours:6.1f}  reference {ref:6.1f}  {ours / ref:4.2f}x  "
            f"{verdict} (target <= {TARGET}x)"
        )


if __name__ == "__main__":
    main()
