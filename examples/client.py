"""An MCP client over stdio on mcp-schema's session, for both eras:
``python examples/client.py auto|legacy -- SERVER COMMAND...``.

``auto`` asks ``server/discover`` (2026-07-28) and falls back to ``initialize``
when the server refuses it; ``legacy`` goes straight to ``initialize``. It lists
the tools, calls them, answers what the server asks for (a form, the model, the
roots: handshake-era requests, or 2026-07-28 input-required results, the same
event either way), and prints one line per step."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from mcp_schema.codec import to_wire
from mcp_schema.session import (
    ClientSession,
    InputRequested,
    Negotiated,
    NotificationReceived,
    ResponseReceived,
)

ANSWERS: dict[str, dict[str, Any]] = {
    "elicitation/create": {"action": "accept", "content": {"confidence": 0.9, "note": "ok"}},
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "sunny"},
        "model": "stub",
    },
    "roots/list": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]},
}


class Connection:
    """A server process and the session speaking to it."""

    def __init__(self, command: list[str]) -> None:
        self.server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        capabilities: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
        info = {"name": "example-client", "version": "1.0.0"}
        self.session = ClientSession(info=info, capabilities=capabilities, log_level="info")
        self.notified: list[str] = []

    def wait(self, rid: int) -> ResponseReceived | Negotiated:
        """Send what is queued, then read until request ``rid`` is answered."""
        assert self.server.stdin is not None and self.server.stdout is not None
        while True:
            self.server.stdin.writelines(f + b"\n" for f in self.session.data_to_send())
            self.server.stdin.flush()
            line = self.server.stdout.readline()
            if not line:
                raise EOFError("the server closed the connection")
            for event in self.session.receive(line):
                if isinstance(event, InputRequested):
                    asked = {k: ANSWERS[to_wire(r)["method"]] for k, r in event.requests.items()}
                    self.session.provide_input(event, asked)
                elif isinstance(event, NotificationReceived):
                    self.notified.append(event.method)
                elif isinstance(event, Negotiated) or (
                    isinstance(event, ResponseReceived) and event.id == rid
                ):
                    return event

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = self.wait(self.session.request(method, params))
        assert isinstance(answer, ResponseReceived)
        if answer.error is not None:
            return {"error": answer.error.message}
        assert answer.result is not None
        return to_wire(answer.result)

    def tool(self, name: str, **arguments: Any) -> object:
        params = {"name": name, "arguments": arguments, "_meta": {"progressToken": name}}
        result = self.call("tools/call", params)
        blocks = result.get("content") or [result]
        return blocks[0].get("text", blocks[0])


def main(mode: str, command: list[str]) -> None:
    connection = Connection(command)
    session = connection.session
    if mode == "auto" and isinstance(connection.wait(session.discover()), ResponseReceived):
        print("discover refused: falling back to initialize")
    if session.version is None:
        connection.wait(session.initialize())
    print("version", session.version)
    print("tools", ",".join(sorted(t["name"] for t in connection.call("tools/list")["tools"])))
    print("echo", connection.tool("echo", text="hi"))
    print("divide", connection.tool("divide", a=1, b=4))
    print("count", connection.tool("slow_count", n=3))
    print("elicit", connection.tool("rate_forecast", city="Oslo"))
    print("sample", connection.tool("summarize"))
    print("roots", connection.tool("show_roots"))
    print("read", connection.call("resources/read", {"uri": "config://app"})["contents"][0]["text"])
    prompt = connection.call("prompts/get", {"name": "code_review", "arguments": {"code": "x"}})
    print("prompt", prompt["messages"][0]["content"]["text"].splitlines()[0])
    print("progress", connection.notified.count("notifications/progress"))
    assert connection.server.stdin is not None
    connection.server.stdin.close()
    connection.server.wait(timeout=10)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[sys.argv.index("--") + 1 :])
