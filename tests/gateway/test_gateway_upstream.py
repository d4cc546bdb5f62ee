"""The gateway's HTTP upstream (`mcp_schema.gateway.http_upstream`) under
uvicorn: a frozen upstream is 504 and a failing one 502, each a JSON-RPC
error to the request's id, in both modes; the client's credentials never
go upstream unless ``pass_authorization``; the gateway's own do
(`StaticToken`, from the environment or a file), in forward mode and in
both bridges; an upstream's 401 or 403 is never relayed (502, the
challenge dropped, the source told of a 401)."""

from __future__ import annotations

import asyncio
import json
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_schema.gateway.bridge.links import HttpBridge
from mcp_schema.gateway.http_upstream import Credentials, upstream_client
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.options import credentials_of, timeouts_of
from mcp_schema.gateway.probe import probe_upstream
from mcp_schema.http.credentials import CredentialSource, StaticToken
from mcp_schema.http.pool import Timeouts
from mcp_schema.proxy import ReportLog
from tests.gateway.test_gateway import CALL, HEADERS, post, reported, serving
from tests.http.upstream import Reader, Writer, request_of, upstream

HTTP_SERVER = Path(__file__).resolve().parents[2] / "examples" / "http_server.py"
ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{"content":[]}}'


Response = tuple[int, dict[str, Any]]


async def asgi_post(app: GatewayApp, message: dict[str, Any]) -> Response:
    """``message`` POSTed to ``app`` in this loop, as uvicorn would hand it: its status and JSON."""
    body = json.dumps(message).encode()
    fields = [(k.encode(), v.encode()) for k, v in {**HEADERS, "host": "127.0.0.1:3000"}.items()]
    scope = {
        "type": "http", "method": "POST", "path": "/mcp", "headers": fields,
        "query_string": b"", "server": ("127.0.0.1", 3000),
    }  # fmt: skip
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(scope, receive, send)
    await app.aclose()
    return sent[0]["status"], json.loads(b"".join(m.get("body", b"") for m in sent[1:]))


class Counted:
    """A `CredentialSource` handing out ``Bearer t1``, then ``t2`` once rejected."""

    def __init__(self) -> None:
        self.turn, self.rejections = 1, []  # type: ignore[var-annotated]

    async def authorization(self) -> str | None:
        return f"Bearer t{self.turn}"

    def rejected(self, authorization: str) -> None:
        self.rejections.append(authorization)
        self.turn += 1


def recording(seen: list[dict[bytes, bytes]], status: int = 200, **extra: bytes) -> Any:
    """An upstream that keeps each request's fields and answers ``status``."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        seen.append(dict(scope["headers"]))
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        fields = [
            (b"content-type", b"application/json"),
            *((k.encode(), v) for k, v in extra.items()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": fields})
        await send({"type": "http.response.body", "body": ANSWER})

    return app


@pytest.mark.parametrize("enforce", [False, True])
def test_a_frozen_upstream_is_504_to_the_requests_id_within_the_read_timeout(
    enforce: bool,
) -> None:
    async def frozen(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(30)

    log = ReportLog()
    with serving(frozen) as upstream:
        app = GatewayApp(upstream, enforce=enforce, reports=log, timeouts=Timeouts(read=0.3))
        with serving(app) as url:
            answer = post(url, CALL)
    assert answer.status_code == 504 and answer.elapsed.total_seconds() < 3
    assert (answer.json()["id"], answer.json()["error"]["code"]) == (7, -32603)
    assert "did not answer in time" in answer.json()["error"]["message"]
    assert [r["id"] for r in reported(log)] == [7]


@pytest.mark.parametrize("enforce", [False, True])
@pytest.mark.parametrize(
    "answer", [b"", b"HTTP/1.1 200 OK\r\ncontent-length: 99\r\n", b"garbage\r\n\r\n"]
)
def test_an_upstream_breaking_before_its_answer_is_502_to_the_requests_id(
    enforce: bool, answer: bytes
) -> None:
    async def breaking(reader: Reader, writer: Writer) -> None:
        await request_of(reader)
        writer.write(answer)  # then the connection closes
        await writer.drain()

    async def run() -> Response:
        async with upstream(breaking) as served:
            app = GatewayApp(served.url, enforce=enforce)
            return await asgi_post(app, CALL)

    status, body = asyncio.run(run())
    assert status == 502
    assert (body["id"], body["error"]["code"]) == (7, -32603)
    assert "cannot be reached" in body["error"]["message"]


def test_the_clients_credentials_never_go_upstream_by_default() -> None:
    seen: list[dict[bytes, bytes]] = []
    secret = {"authorization": "Bearer client-token", "proxy-authorization": "Basic eDp5"}
    with serving(recording(seen)) as upstream:
        with serving(GatewayApp(upstream)) as url:
            assert post(url, CALL, {**HEADERS, **secret}).status_code == 200
        with serving(GatewayApp(upstream, pass_authorization=True)) as url:
            assert post(url, CALL, {**HEADERS, **secret}).status_code == 200
    dropped, passed = seen
    assert b"authorization" not in dropped and b"proxy-authorization" not in dropped
    assert passed[b"authorization"] == b"Bearer client-token"
    assert passed[b"proxy-authorization"] == b"Basic eDp5"


def test_the_gateways_token_goes_upstream_instead_of_the_clients(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UPSTREAM_TOKEN", "from-env")
    (tmp_path / "token").write_text("from-file\n")
    seen: list[dict[bytes, bytes]] = []
    sources = [StaticToken.from_env("UPSTREAM_TOKEN"), StaticToken.from_file(tmp_path / "token")]
    with serving(recording(seen)) as upstream:
        for source in sources:
            with serving(GatewayApp(upstream, credentials=source)) as url:
                answer = post(url, CALL, {**HEADERS, "authorization": "Bearer client-token"})
                assert answer.status_code == 200
    assert [s[b"authorization"] for s in seen] == [b"Bearer from-env", b"Bearer from-file"]
    assert all(b"client-token" not in b"".join(s.values()) for s in seen)
    shown = repr(sources) + str(vars(GatewayApp("http://x/mcp", credentials=sources[0])))
    assert "from-env" not in shown and "from-file" not in shown
    assert "env:UPSTREAM_TOKEN" in shown


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("enforce", [False, True])
def test_an_upstream_refusing_the_gateways_credentials_is_502_and_never_relayed(
    status: int, enforce: bool
) -> None:
    seen: list[dict[bytes, bytes]] = []
    challenge = b'Bearer error="invalid_token", resource_metadata="https://up/.well-known/x"'
    upstream_app = recording(seen, status, **{"www-authenticate": challenge})
    source = Counted()
    log = ReportLog()
    with serving(upstream_app) as upstream:
        app = GatewayApp(upstream, enforce=enforce, credentials=source, reports=log)
        with serving(app) as url:
            first, second = post(url, CALL), post(url, CALL)
    for answer in (first, second):
        assert answer.status_code == 502 and "www-authenticate" not in answer.headers
        assert (answer.json()["id"], answer.json()["error"]["code"]) == (7, -32603)
        assert f"HTTP {status}" in answer.json()["error"]["message"]
    if status == 401:  # rejected: sent once more with the source's fresh one, then 502
        tokens = [f"Bearer t{n}" for n in range(1, 5)]
        assert source.rejections == tokens
        assert [s[b"authorization"].decode() for s in seen] == tokens
    else:  # a token that lacks a right is not a stale one
        assert source.rejections == []
    assert {r["id"] for r in reported(log)} == {7}


class Broken:
    """A `CredentialSource` that cannot give a token (its authorization server is down)."""

    async def authorization(self) -> str | None:
        raise ConnectionError("secret-detail")

    def rejected(self, authorization: str) -> None:
        raise RuntimeError("nor hear of a refusal")


@pytest.mark.parametrize("enforce", [False, True])
def test_a_credential_source_that_fails_is_502_to_the_requests_id(enforce: bool) -> None:
    seen: list[dict[bytes, bytes]] = []
    with serving(recording(seen)) as upstream:
        with serving(GatewayApp(upstream, enforce=enforce, credentials=Broken())) as url:
            answer = post(url, CALL)
    assert answer.status_code == 502 and seen == []  # nothing went upstream without it
    assert (answer.json()["id"], answer.json()["error"]["code"]) == (7, -32603)
    assert "no credentials" in answer.json()["error"]["message"]
    assert "secret-detail" not in answer.text


def test_a_credential_source_failing_on_a_401_still_lets_the_502_out() -> None:
    class Refusing(Broken):
        async def authorization(self) -> str | None:
            return "Bearer t"

    seen: list[dict[bytes, bytes]] = []
    with serving(recording(seen, 401)) as upstream:
        with serving(GatewayApp(upstream, credentials=Refusing())) as url:
            answer = post(url, CALL)
    assert answer.status_code == 502 and answer.json()["id"] == 7


def test_a_token_file_is_read_again_after_a_401(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("old")
    source = StaticToken.from_file(path)
    path.write_text("rotated")
    assert asyncio.run(source.authorization()) == "Bearer old"
    source.rejected("Bearer old")
    assert asyncio.run(source.authorization()) == "Bearer rotated"
    assert isinstance(source, CredentialSource)


@pytest.mark.parametrize("value", ["", "two words", "a\r\nx-injected: 1", "é"])
def test_a_token_that_would_split_a_header_is_refused_without_showing_it(value: str) -> None:
    with pytest.raises(ValueError) as refused:
        StaticToken.from_env("T", {"T": value})
    assert value.strip() == "" or value not in str(refused.value)


def test_the_command_line_takes_one_source_of_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from mcp_schema.gateway.command import GatewayError, add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    base = ["--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp"]
    monkeypatch.setenv("T", "s3cr3t")
    (tmp_path / "t").write_text("s3cr3t2")
    got = credentials_of(parser.parse_args([*base, "--upstream-token-env", "T"]), [])
    assert asyncio.run(got.added([])) == "Bearer s3cr3t"
    got = credentials_of(
        parser.parse_args([*base, "--upstream-token-file", str(tmp_path / "t")]), []
    )
    assert asyncio.run(got.added([])) == "Bearer s3cr3t2"
    assert credentials_of(parser.parse_args([*base, "--pass-authorization"]), []).pass_authorization
    timed = timeouts_of(parser.parse_args([*base, "--upstream-read-timeout", "7.5"]))
    assert timed is not None and (timed.read, timed.connect) == (7.5, 10.0)
    assert timeouts_of(parser.parse_args(base)) is None
    with pytest.raises(SystemExit):
        parser.parse_args([*base, "--upstream-read-timeout", "nan"])
    for wrong in (
        ["--upstream-token-env", "T", "--pass-authorization"],
        ["--upstream-token-env", "UNSET_VARIABLE_OF_NOBODY"],
        ["--upstream-token-file", str(tmp_path / "missing")],
    ):
        with pytest.raises(GatewayError) as refused:
            credentials_of(parser.parse_args([*base, *wrong]), [])
        assert "s3cr3t" not in str(refused.value)


# -- the bridges ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded() -> Iterator[tuple[str, list[bytes | None]]]:
    """``examples/http_server.py`` in the handshake era alone, keeping each
    request's ``Authorization``."""
    server = runpy.run_path(str(HTTP_SERVER))["server"]
    inner = server.asgi(env={}, versions="2025-06-18")
    seen: list[bytes | None] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(dict(scope["headers"]).get(b"authorization"))
        await inner(scope, receive, send)

    with serving(app) as url:
        yield url, seen


def test_the_http_bridge_sends_the_gateways_credentials(
    guarded: tuple[str, list[bytes | None]],
) -> None:
    url, seen = guarded
    seen.clear()
    app = GatewayApp(url, credentials=StaticToken("bridge-token"), served=None)
    bridge = HttpBridge(url, credentials=app.credentials)

    async def started() -> None:
        try:
            await bridge.start()
        finally:
            await bridge.aclose()

    asyncio.run(started())
    assert seen and set(seen) == {b"Bearer bridge-token"}


def test_the_probe_and_the_handshake_front_send_the_gateways_credentials() -> None:
    seen: list[dict[bytes, bytes]] = []

    async def probed(url: str) -> None:
        http = upstream_client()
        try:
            await probe_upstream(url, http, credentials=Credentials(StaticToken("probe-token")))
        except Exception:
            pass  # the recording upstream answers nothing a probe can read
        finally:
            await http.aclose()

    with serving(recording(seen)) as url:
        asyncio.run(probed(url))
    assert seen and {s.get(b"authorization") for s in seen} == {b"Bearer probe-token"}


def test_an_upstream_401_to_a_bridge_rejects_the_token_and_is_no_challenge() -> None:
    seen: list[dict[bytes, bytes]] = []
    source = Counted()
    upstream_app = recording(seen, 401, **{"www-authenticate": b"Bearer"})

    async def started(url: str) -> str:
        bridge = HttpBridge(url, credentials=Credentials(source))
        try:
            await bridge.start()
        except Exception as exc:
            return str(exc)
        finally:
            await bridge.aclose()
        return ""

    with serving(upstream_app) as url:
        said = asyncio.run(started(url))
    assert said and "Bearer" not in said.replace("Bearer t", "")
    assert source.rejections[:1] == ["Bearer t1"]
    assert json.dumps(said)  # a message, not the challenge
