"""The cluster with authorization on (`tests.cluster.harness`: three
replicas of ``examples/http_server.py`` behind nginx, on one Redis, with
``MCP_AUTH_ISSUER`` and ``MCP_AUTH_RESOURCE``; nginx sets
``X-Forwarded-For``, which the replicas believe from it alone,
``MCP_TRUSTED_PROXIES``) and node-oidc-provider beside it
(`tests.auth.provider`), issuing JWT access tokens bound to the cluster's
URL by the client-credentials grant. No person takes part:

* the official Python SDK client (``ClientCredentialsOAuthProvider``) and
  the TypeScript SDK client (``ClientCredentialsProvider``) find the
  authorization server from the 401, get their tokens and call every tool
  of the example, in every era they speak;
* Alice's and Bob's tokens cannot touch each other's sessions, tasks,
  input rounds or listens, on any replica."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_schema.http_headers import request_headers
from mcp_schema.versions import TASKS_EXTENSION
from tests.auth.provider import provider, token
from tests.cluster.harness import Cluster, running
from tests.cluster.test_replicas import HEADERS, INIT, LISTING, TOOLS, exchange
from tests.http.test_asgi import COMMON, session
from tests.http.test_broker import _free_port

pytestmark = pytest.mark.cluster
PEERS = Path(__file__).parents[1] / "peers"
SCOPE = "mcp"
USERS = {"alice": "alice-secret-0123456789abcdef", "bob": "bob-secret-0123456789abcdef"}
DECLARING: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}


@dataclass
class Authorized:
    cluster: Cluster
    issuer: str
    resource: str
    where: str  # nginx, host:port

    def token(self, user: str) -> str:
        return token(self.issuer, user, USERS[user], self.resource, SCOPE)


@pytest.fixture(scope="module")
def authorized(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Authorized]:
    work = tmp_path_factory.mktemp("authorized")
    port = _free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    clients = [{"client_id": u, "client_secret": s, "scope": SCOPE} for u, s in USERS.items()]
    with provider(clients, {resource: {"format": "jwt", "scope": SCOPE}}) as issuer:
        with running(
            work,
            port=port,
            MCP_AUTH_ISSUER=issuer,
            MCP_AUTH_RESOURCE=resource,
            MCP_AUTH_SCOPES=SCOPE,
            MCP_TRUSTED_PROXIES="127.0.0.1",  # nginx, which sets X-Forwarded-For
        ) as cluster:
            yield Authorized(cluster, issuer, resource, f"127.0.0.1:{port}")
    for log in sorted(work.glob("replica-*.log")):  # a replica's failure is only logged
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, text[-3000:]
        assert "Bearer ey" not in text and "access_token" not in text  # never a token


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


# -- the SDK clients, tokens and all ------------------------------------------------------


class Memory:
    """The Python SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


async def sdk_session(setup: Authorized, user: str, mode: str) -> dict[str, Any]:
    """`tests.http.test_asgi.session` (most tools), then the others, through
    an SDK client that gets its own token."""
    from mcp.client import Client
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    def transport(http: Any) -> Any:
        return streamable_http_client(setup.cluster.url, http_client=http)

    oauth = ClientCredentialsOAuthProvider(
        server_url=setup.cluster.url,
        storage=Memory(),
        client_id=user,
        client_secret=USERS[user],
        scope=SCOPE,
        issuer=setup.issuer,
    )
    async with create_mcp_http_client(auth=oauth) as http:
        seen = await session(transport(http), mode)
        with anyio.fail_after(30):
            async with Client(transport(http), mode=mode, read_timeout_seconds=10, cache=None) as c:
                calls: list[tuple[str, dict[str, Any]]] = [
                    ("toggle", {}),
                    ("extra", {}),
                    ("toggle", {}),
                    ("long_count", {}),
                ]
                for name, arguments in calls:
                    answer = await c.call_tool(name, arguments)
                    seen.setdefault("rest", []).append(getattr(answer.content[0], "text", None))
    return seen


REST = ["extra added", "extra is here", "extra removed", "counted to 3"]


@pytest.mark.parametrize(
    ("mode", "version"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")]
)
def test_the_python_sdk_client_gets_a_token_and_calls_every_tool(
    authorized: Authorized, mode: str, version: str
) -> None:
    seen = anyio.run(sdk_session, authorized, "alice", mode)
    asked = {"ask": "you said yes", "think": "you said maybe", "tools": TOOLS}
    assert seen == {**COMMON, **asked, "version": version, "rest": REST}


def test_the_typescript_sdk_client_gets_a_token_and_calls_every_tool(
    authorized: Authorized, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Imported here: the Node wheel is installed by `make interop`, never by the
    # fast suite's venvs, which collect this module too.
    from tests.peers.interop import PACKAGES, WORK, install, node

    install(WORK, PACKAGES)
    monkeypatch.setenv("MCP_PEER_CLIENT_ID", "bob")
    monkeypatch.setenv("MCP_PEER_CLIENT_SECRET", USERS["bob"])
    monkeypatch.setenv("MCP_PEER_ISSUER", authorized.issuer)
    monkeypatch.setenv("MCP_PEER_SCOPE", SCOPE)
    done = node(PEERS / "ts_http_client.mjs", authorized.cluster.url, timeout=60)
    steps = [line for line in done.stdout.splitlines() if line.startswith(("ok", "FAIL"))]
    assert done.returncode == 0 and len(steps) == 11, done.stdout + done.stderr


# -- the door, through nginx --------------------------------------------------------------


def test_without_a_token_the_challenge_names_the_metadata(authorized: Authorized) -> None:
    status, headers, body = exchange(authorized.where, "POST", LISTING)
    assert status == 401 and json.loads(body)["error"]["code"] < 0
    metadata = f"http://{authorized.where}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata}"' in headers["www-authenticate"]
    assert f'scope="{SCOPE}"' in headers["www-authenticate"]
    document = httpx.get(metadata, timeout=10).json()
    assert document["authorization_servers"] == [authorized.issuer]
    assert document["resource"] == authorized.resource
    status, headers, _ = exchange(authorized.where, "POST", LISTING, **bearer("not-a-token"))
    assert status == 401 and 'error="invalid_token"' in headers["www-authenticate"]


# -- two users ----------------------------------------------------------------------------


def opened(where: str, credentials: dict[str, str]) -> str:
    status, headers, body = exchange(where, "POST", INIT, **credentials)
    assert status == 200 and json.loads(body)["id"] == 0, body
    session_id = headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert exchange(where, "POST", initialized, session_id, **credentials)[0] == 202
    return session_id


def test_another_users_token_cannot_touch_a_session_on_any_replica(
    authorized: Authorized,
) -> None:
    alice, bob = bearer(authorized.token("alice")), bearer(authorized.token("bob"))
    session_id = opened(authorized.where, alice)
    for replica in authorized.cluster.replicas:
        status, _, body = exchange(replica.address, "POST", LISTING, session_id, **bob)
        assert status == 404 and json.loads(body)["id"] == 1, body
        listen = {**bob, "Accept": "text/event-stream"}
        assert exchange(replica.address, "GET", None, session_id, **listen)[0] == 404
        assert exchange(replica.address, "DELETE", None, session_id, **bob)[0] == 404
        status, _, body = exchange(replica.address, "POST", LISTING, session_id, **alice)
        assert status == 200 and len(json.loads(body)["result"]["tools"]) == len(TOOLS)
    assert exchange(authorized.where, "DELETE", None, session_id, **alice)[0] == 200


def sent(where: str, credentials: dict[str, str], method: str, **params: Any) -> dict[str, Any]:
    """A 2026-07-28 request declaring the Tasks extension and elicitation: its answer."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": DECLARING,
    }
    message = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {**params, "_meta": meta}}
    headers = {**request_headers(message), **credentials}
    _, _, body = exchange(where, "POST", message, **headers)
    answer: dict[str, Any] = json.loads(body)
    return answer


def test_another_users_token_cannot_see_or_steer_a_task_on_any_replica(
    authorized: Authorized,
) -> None:
    alice, bob = bearer(authorized.token("alice")), bearer(authorized.token("bob"))
    task = sent(authorized.where, alice, "tools/call", name="long_count", arguments={})["result"]
    assert task["resultType"] == "task", task
    for replica in authorized.cluster.replicas:
        for method in ("tasks/get", "tasks/cancel"):
            answer = sent(replica.address, bob, method, taskId=task["taskId"])
            assert "result" not in answer and answer["error"]["code"] < 0, answer
        mine = sent(replica.address, alice, "tasks/get", taskId=task["taskId"])["result"]
        assert mine["taskId"] == task["taskId"] and mine["status"] != "cancelled"


def test_another_users_token_cannot_answer_an_input_round_on_any_replica(
    authorized: Authorized,
) -> None:
    alice, bob = bearer(authorized.token("alice")), bearer(authorized.token("bob"))
    asked = sent(authorized.where, alice, "tools/call", name="ask", arguments={})["result"]
    assert asked["resultType"] == "input_required", asked
    answers = {"word": {"action": "accept", "content": {"text": "stolen"}}}
    retry = {
        "name": "ask",
        "arguments": {},
        "inputResponses": answers,
        "requestState": asked["requestState"],
    }
    for replica in authorized.cluster.replicas:
        answer = sent(replica.address, bob, "tools/call", **retry)
        assert "you said" not in json.dumps(answer), answer
        assert "error" in answer or answer["result"].get("resultType") != "complete", answer
    done = sent(authorized.cluster.replicas[0].address, alice, "tools/call", **retry)
    assert done["result"]["content"][0]["text"] == "you said stolen", done


def listened(where: str, credentials: dict[str, str], task_id: str, seconds: float) -> bytes:
    """What a 2026-07-28 listen for ``task_id``'s status, opened through
    ``where``, carries within ``seconds``."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": DECLARING,
    }
    params = {"notifications": {"taskIds": [task_id]}, "_meta": meta}
    message = {"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen", "params": params}
    headers = {**HEADERS, **request_headers(message), **credentials}
    connection = http.client.HTTPConnection(where, timeout=seconds)
    read = b""
    deadline = time.monotonic() + seconds
    try:
        connection.request("POST", "/mcp", json.dumps(message), headers)
        response = connection.getresponse()
        assert response.status == 200, response.read()
        while time.monotonic() < deadline:
            try:
                line = response.fp.readline()
            except TimeoutError:
                break
            if not line:
                break
            read += line
    finally:
        connection.close()
    return read


def test_another_users_listen_hears_nothing_of_a_task_on_any_replica(
    authorized: Authorized,
) -> None:
    alice, bob = bearer(authorized.token("alice")), bearer(authorized.token("bob"))
    task = sent(authorized.where, alice, "tools/call", name="long_count", arguments={})["result"]
    task_id = task["taskId"]
    with ThreadPoolExecutor(len(authorized.cluster.replicas) + 1) as pool:
        bobs = [
            pool.submit(listened, replica.address, bob, task_id, 4.0)
            for replica in authorized.cluster.replicas
        ]
        alices = pool.submit(listened, authorized.cluster.replicas[0].address, alice, task_id, 4.0)
        heard = [b.result() for b in bobs]
        own = alices.result()
    status = b'"method":"notifications/tasks"'
    assert status in own and b"input_required" in own, own
    for stream in heard:
        assert b"acknowledged" in stream and status not in stream, stream
