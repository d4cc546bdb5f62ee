"""``examples/http_server.py`` as three uvicorn replicas sharing Redis
(``MCP_REDIS_URL``), behind nginx balancing round-robin
(`tests.cluster.harness`): any replica serves any session, a 2026-07-28
``ask``'s retry completes on another replica than its call (one
``MCP_STATE_KEY``), the official Python SDK client sees one server, and round-robin really spreads the
requests (nginx names the replica of each in ``X-Upstream`` and in its
access log). ``make test-cluster`` runs them."""

from __future__ import annotations

import http.client
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from mcp.client import Client

from tests.cluster.harness import Cluster, running
from tests.http.test_asgi import COMMON, session

pytestmark = pytest.mark.cluster
PEERS = Path(__file__).parents[1] / "peers"

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
STATELESS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LISTING = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
TOOLS = ["echo", "divide", "count", "ask", "think", "toggle", "long_count"]  # extra off


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work = tmp_path_factory.mktemp("cluster")
    with running(work) as started:
        yield started
    for log in sorted(work.glob("replica-*.log")):  # a replica's failure is only logged
        assert "Traceback" not in log.read_text(errors="replace"), log.read_text()[-3000:]


def address(cluster: Cluster) -> str:
    return urlsplit(cluster.url).netloc


def exchange(
    where: str,
    method: str,
    message: dict[str, Any] | None = None,
    session_id: str | None = None,
    **extra: str,
) -> tuple[int, dict[str, str], bytes]:
    """One request to ``where`` (host:port): its status, headers (lower-case) and body."""
    connection = http.client.HTTPConnection(where, timeout=15)
    headers = {**HEADERS, **extra, **({"Mcp-Session-Id": session_id} if session_id else {})}
    try:
        body = None if message is None else json.dumps(message)
        connection.request(method, "/mcp", body, headers)
        response = connection.getresponse()
        found = {k.lower(): v for k, v in response.getheaders()}
        return response.status, found, response.read()
    finally:
        connection.close()


def opened(where: str) -> tuple[str, str | None]:
    """A new handshake-era session through ``where``: its id and the replica that holds it."""
    status, headers, body = exchange(where, "POST", INIT)
    assert status == 200 and json.loads(body)["id"] == 0
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert exchange(where, "POST", initialized, headers["mcp-session-id"])[0] == 202
    return headers["mcp-session-id"], headers.get("x-upstream")


def logged_since(cluster: Cluster, before: int) -> list[dict[str, str]]:
    """nginx's records after the first ``before`` (it writes one as a request ends)."""
    time.sleep(0.5)  # the last requests' records
    return [json.loads(line) for line in cluster.access_log.read_text().splitlines()[before:]]


def logged(cluster: Cluster) -> int:
    return len(cluster.access_log.read_text().splitlines())


def test_round_robin_spreads_stateless_requests_over_every_replica(cluster: Cluster) -> None:
    message = {**LISTING, "params": {"_meta": STATELESS}}
    extra = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    served: Counter[str] = Counter()
    for _ in range(6):
        status, headers, body = exchange(address(cluster), "POST", message, **extra)
        assert status == 200 and len(json.loads(body)["result"]["tools"]) == len(TOOLS)
        served[headers["x-upstream"]] += 1
    assert served == {replica.address: 2 for replica in cluster.replicas}


def test_every_replica_serves_a_session_and_delete_works_from_any(cluster: Cluster) -> None:
    session_id, holder = opened(address(cluster))
    served = set()
    for i in range(6):
        status, headers, body = exchange(address(cluster), "POST", {**LISTING, "id": i}, session_id)
        assert (status, json.loads(body)["id"], headers["mcp-session-id"]) == (200, i, session_id)
        served.add(headers["x-upstream"])
    assert served == {replica.address for replica in cluster.replicas}
    other = next(r.address for r in cluster.replicas if r.address != holder)
    assert exchange(other, "DELETE", session_id=session_id)[0] == 200  # not the holder
    gone = set()
    for _ in range(3):
        status, headers, body = exchange(address(cluster), "POST", LISTING, session_id)
        assert (status, json.loads(body)["id"]) == (404, 1)
        gone.add(headers["x-upstream"])
    assert gone == {replica.address for replica in cluster.replicas}


def test_an_elicitation_answered_through_another_replica_than_its_stream(cluster: Cluster) -> None:
    holder, relay, answering = (r.address for r in cluster.replicas)
    session_id, _ = opened(holder)
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ask"}}
    connection = http.client.HTTPConnection(relay, timeout=15)  # the stream: held by no holder
    try:
        connection.request(
            "POST", "/mcp", json.dumps(call), {**HEADERS, "Mcp-Session-Id": session_id}
        )
        stream = connection.getresponse()
        assert stream.getheader("content-type") == "text/event-stream"
        line = b""
        while not line.startswith(b"data: "):
            line = stream.readline()
            assert line, "the stream ended before the server's request"
        asked = json.loads(line[len(b"data: ") :])
        assert asked["method"] == "elicitation/create"
        answer = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {"action": "accept", "content": {"text": "yes"}},
        }
        assert exchange(answering, "POST", answer, session_id)[0] == 202
        line = b""
        while not line.startswith(b"data: "):
            line = stream.readline()
            assert line, "the stream ended before the tool's result"
        result = json.loads(line[len(b"data: ") :])
    finally:
        connection.close()
    assert (result["id"], result["result"]["content"][0]["text"]) == (9, "you said yes")


def test_the_sdk_client_in_the_handshake_era_through_the_balancer(cluster: Cluster) -> None:
    before = logged(cluster)
    seen = anyio.run(session, cluster.url, "legacy")
    asked = {"ask": "you said yes", "think": "you said maybe", "tools": TOOLS}
    assert seen == {**COMMON, **asked, "version": "2025-11-25"}
    records = logged_since(cluster, before)
    holder = next(r["upstream"] for r in records if '"initialize"' in r["body"])
    session_id = next(r["session"] for r in records if r["session"])
    own = [r for r in records if r["session"] == session_id]
    assert {r["upstream"] for r in own} == {replica.address for replica in cluster.replicas}
    # The client's answers to the server's two requests (elicitation, sampling):
    answers = [r for r in own if '"result"' in r["body"] and '"method"' not in r["body"]]
    assert len(answers) == 2
    assert {r["upstream"] for r in answers} != {holder}  # one at least reached another replica


def test_the_sdk_client_in_2026_07_28_through_the_balancer(cluster: Cluster) -> None:
    before = logged(cluster)
    seen = anyio.run(session, cluster.url, "2026-07-28")
    assert seen == {**COMMON, "tools": TOOLS, "version": "2026-07-28"}
    records = logged_since(cluster, before)
    assert {r["upstream"] for r in records} == {replica.address for replica in cluster.replicas}
    # Each asking tool: the call answered input-required on one replica, the retry
    # (carrying the sealed requestState) served by another.
    for tool in ("ask", "think"):
        named = [r for r in records if f'"name":"{tool}"' in r["body"].replace(" ", "")]
        calls = [r["upstream"] for r in named if "requestState" not in r["body"]]
        retries = [r["upstream"] for r in named if "requestState" in r["body"]]
        assert len(calls) == len(retries) == 1, named
        assert calls != retries


def stateless(method: str, **params: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request (its message and headers) standing alone."""
    message = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": method,
        "params": {**params, "_meta": STATELESS},
    }
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if "name" in params:
        headers["Mcp-Name"] = params["name"]
    return message, headers


def called(where: str, method: str, **params: Any) -> tuple[dict[str, Any], str]:
    """The result of a stateless request to ``where``, and the replica that served it."""
    message, headers = stateless(method, **params)
    status, found, body = exchange(where, "POST", message, **headers)
    assert status == 200, body
    return json.loads(body)["result"], found.get("x-upstream", where)


def events(stream: http.client.HTTPResponse) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages of an event stream, as they come."""
    while line := stream.readline():
        if line.startswith(b"data: "):
            yield json.loads(line[len(b"data: ") :])


def test_a_toggle_through_one_replica_reaches_a_listen_held_by_another(cluster: Cluster) -> None:
    holder, toggling, listing = (r.address for r in cluster.replicas)
    message, headers = stateless("subscriptions/listen", notifications={"toolsListChanged": True})
    connection = http.client.HTTPConnection(holder, timeout=15)
    try:
        connection.request("POST", "/mcp", json.dumps(message), {**HEADERS, **headers})
        stream = connection.getresponse()
        assert stream.getheader("content-type") == "text/event-stream"
        changes = events(stream)
        assert next(changes)["method"] == "notifications/subscriptions/acknowledged"
        result, served = called(toggling, "tools/call", name="toggle")
        assert (result["content"][0]["text"], served) == ("extra added", toggling)
        assert next(changes)["method"] == "notifications/tools/list_changed"
        tools, served = called(listing, "tools/list")
        assert served == listing and [t["name"] for t in tools["tools"]] == [*TOOLS, "extra"]
        result, _ = called(listing, "tools/call", name="extra")
        assert result["content"][0]["text"] == "extra is here"
        result, _ = called(listing, "tools/call", name="toggle")  # back as it was
        assert result["content"][0]["text"] == "extra removed"
        assert next(changes)["method"] == "notifications/tools/list_changed"
    finally:
        connection.close()
    for replica in cluster.replicas:
        tools, _ = called(replica.address, "tools/list")
        assert [t["name"] for t in tools["tools"]] == TOOLS
    message, headers = stateless("tools/call", name="extra")  # gone: an unknown tool
    status, _, body = exchange(holder, "POST", message, **headers)
    assert json.loads(body)["error"]["code"] == -32602, (status, body)


async def toggled_twice(url: str) -> list[Any]:
    """The SDK client in ``auto`` mode listening while it toggles ``extra`` on then off."""
    seen: list[Any] = []
    with anyio.fail_after(30):
        async with Client(url, mode="auto", read_timeout_seconds=10, cache=None) as c:
            async with c.listen(tools_list_changed=True) as changes:
                for _ in range(2):
                    toggle = await c.call_tool("toggle", {})
                    seen.append(getattr(toggle.content[0], "text", None))
                    seen.append(type(await changes.__anext__()).__name__)
                    tools = [t.name for t in (await c.list_tools()).tools]
                    seen.append(tools)
                    if "extra" in tools:
                        extra = await c.call_tool("extra", {})
                        seen.append(getattr(extra.content[0], "text", None))
    return seen


def test_the_sdk_client_in_auto_mode_through_the_balancer(cluster: Cluster) -> None:
    seen = anyio.run(session, cluster.url, "auto")
    assert seen == {**COMMON, "tools": TOOLS, "version": "2026-07-28"}
    changed = anyio.run(toggled_twice, cluster.url)
    event = changed[1]
    assert changed == [
        "extra added",
        event,
        [*TOOLS, "extra"],
        "extra is here",
        "extra removed",
        event,
        TOOLS,
    ]
    assert "Changed" in event or "Change" in event, event


def test_the_typescript_sdk_client_through_the_balancer(cluster: Cluster) -> None:
    # Imported here: the Node wheel is installed by `make interop`, never by the
    # fast suite's venvs, which collect this module too.
    from tests.peers.interop import PACKAGES, WORK, install, node

    install(WORK, PACKAGES)  # the pinned SDK into build/interop (npm; a no-op once there)
    before = logged(cluster)
    done = node(PEERS / "ts_http_client.mjs", cluster.url, timeout=60)
    steps = [line for line in done.stdout.splitlines() if line.startswith(("ok", "FAIL"))]
    assert done.returncode == 0 and len(steps) == 11, done.stdout + done.stderr
    records = logged_since(cluster, before)
    call = next(r for r in records if '"name":"ask"' in r["body"].replace(" ", ""))
    answer = next(r for r in records if '"blue"' in r["body"])  # the elicitation's answer
    assert call["session"] == answer["session"] and call["upstream"] != answer["upstream"]


def test_a_dead_holder_means_no_session_and_no_wait(cluster: Cluster) -> None:
    first, _, last = cluster.replicas
    session_id, _ = opened(last.address)
    last.process.kill()  # no shutdown: its records stay until found dead or expired
    last.process.wait(10)
    began = time.monotonic()
    status, _, body = exchange(first.address, "POST", LISTING, session_id)
    assert (status, json.loads(body)["id"]) == (404, 1)
    status, _, body = exchange(address(cluster), "POST", LISTING, session_id)
    assert status == 404
    assert time.monotonic() - began < 10  # last: it kills a replica
