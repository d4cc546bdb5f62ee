"""The gateway as an OAuth client of its upstream (``--upstream-client-id``:
`mcp_schema.gateway.upstream_oauth`, the client credentials grant of
`mcp_schema.oauth.OAuth`), against a fake authorization server and a
protected upstream, both under uvicorn on loopback: the token is fetched
before its first use, once for concurrent requests, with the upstream as
its ``resource``; renewed before it expires and once on the upstream's 401;
never in an answer nor a log line; every failure is 502 to the request's id."""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import logging
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from mcp_schema.gateway.command import add_arguments
from mcp_schema.gateway.http_upstream import Credentials, upstream_client
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.options import GatewayError, credentials_of
from mcp_schema.gateway.probe import ProbeError, probe_upstream
from mcp_schema.oauth import OAuth
from tests.gateway.test_gateway import CALL, post, serving
from tests.gateway.test_gateway_upstream import ANSWER

SECRET = "gateway-secret-0123456789"
CLIENT = ("--upstream-client-id", "gw")
PRM = "/.well-known/oauth-protected-resource/mcp"


async def _body(receive: Any) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


async def _json(send: Any, status: int, document: Any, *extra: tuple[bytes, bytes]) -> None:
    fields = [(b"content-type", b"application/json"), *extra]
    await send({"type": "http.response.start", "status": status, "headers": fields})
    await send({"type": "http.response.body", "body": json.dumps(document).encode()})


@dataclass
class AuthServer:
    """The fake authorization server: its metadata and token endpoint, each
    token request recorded (its form and ``Authorization``)."""

    base: str = ""
    expires_in: int = 3600
    refuse: bool = False
    delay: float = 0.0
    issued: list[str] = field(default_factory=list)
    requests: list[tuple[dict[str, list[str]], bytes]] = field(default_factory=list)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await _body(receive)
        if scope["path"] == "/.well-known/oauth-authorization-server":
            return await _json(send, 200, {
                "issuer": self.base, "token_endpoint": f"{self.base}/token",
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "grant_types_supported": ["client_credentials"],
            })  # fmt: skip
        if scope["path"] != "/token":
            return await _json(send, 404, {})
        self.requests.append((parse_qs(body.decode()), dict(scope["headers"])[b"authorization"]))
        await asyncio.sleep(self.delay)
        if self.refuse:
            return await _json(send, 401, {"error": "invalid_client"})
        token = f"tok{len(self.issued) + 1}-{secrets.token_hex(8)}"
        self.issued.append(token)
        await _json(send, 200, {
            "access_token": token, "token_type": "Bearer", "expires_in": self.expires_in,
        })  # fmt: skip


@dataclass
class Protected:
    """An upstream that takes the authorization server's tokens only: its
    metadata at the well-known path (or only in its 401's challenge), each
    request's ``Authorization`` kept; one fixed answer to the others."""

    auth: AuthServer
    base: str = ""
    well_known: bool = True
    refuse_all: bool = False
    revoked: set[str] = field(default_factory=set)
    seen: list[str | None] = field(default_factory=list)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        metadata = PRM if self.well_known else "/elsewhere/prm"
        if scope["path"] == metadata:
            document = {"resource": f"{self.base}/mcp", "authorization_servers": [self.auth.base]}
            return await _json(send, 200, document)
        if scope["path"] != "/mcp":
            return await _json(send, 404, {})
        sent = dict(scope["headers"]).get(b"authorization")
        self.seen.append(None if sent is None else sent.decode())
        token = (sent or b"").decode().removeprefix("Bearer ")
        if self.refuse_all or token not in self.auth.issued or token in self.revoked:
            await _body(receive)
            challenge = f'Bearer resource_metadata="{self.base}{metadata}"'.encode()
            return await _json(send, 401, {}, (b"www-authenticate", challenge))
        await _body(receive)
        await _json(send, 200, json.loads(ANSWER))


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[AuthServer, Protected]]:
    auth = AuthServer()
    upstream = Protected(auth)
    with serving(auth) as auth_url, serving(upstream) as upstream_url:
        auth.base, upstream.base = auth_url.removesuffix("/mcp"), upstream_url.removesuffix("/mcp")
        yield auth, upstream


@pytest.fixture
def world(servers: tuple[AuthServer, Protected]) -> tuple[AuthServer, Protected]:
    auth, upstream = servers
    auth.expires_in, auth.refuse, auth.delay = 3600, False, 0.0
    auth.issued.clear()
    auth.requests.clear()
    upstream.well_known, upstream.refuse_all = True, False
    upstream.revoked.clear()
    upstream.seen.clear()
    return auth, upstream


def options(upstream: str, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    flags = ["--listen", "127.0.0.1:0", "--upstream", upstream, "--upstream-client-id", "gw"]
    return parser.parse_args([*flags, "--upstream-client-secret-env", "GW_SECRET", *extra])


def source(
    upstream: str, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> OAuth:  # the gateway's own, from its options
    monkeypatch.setenv("GW_SECRET", SECRET)
    found = credentials_of(options(upstream, *extra), []).source
    assert isinstance(found, OAuth)
    return found


def test_concurrent_requests_share_one_token_fetch_and_never_see_the_token(
    world: tuple[AuthServer, Protected],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    auth, upstream = world
    auth.delay = 0.2  # every request waits on the one fetch
    caplog.set_level(logging.DEBUG)
    oauth = source(f"{upstream.base}/mcp", monkeypatch, "--upstream-scope", "mcp")
    with serving(GatewayApp(f"{upstream.base}/mcp", credentials=oauth)) as url:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: post(url, CALL), range(4)))
    assert [a.status_code for a in answers] == [200] * 4
    assert len(auth.issued) == 1 and upstream.seen == [f"Bearer {auth.issued[0]}"] * 4
    ((form, basic),) = auth.requests
    assert form["grant_type"] == ["client_credentials"] and form["scope"] == ["mcp"]
    assert form["resource"] == [f"{upstream.base}/mcp"] and SECRET not in json.dumps(form)
    assert base64.b64decode(basic.removeprefix(b"Basic ")) == f"gw:{SECRET}".encode()
    shown = caplog.text + "".join(a.text + str(a.headers) for a in answers)
    assert auth.issued[0] not in shown and SECRET not in shown


def test_a_token_about_to_expire_is_renewed_before_it_is_sent(
    world: tuple[AuthServer, Protected], monkeypatch: pytest.MonkeyPatch
) -> None:
    auth, upstream = world
    auth.expires_in = 20  # within the renewal margin: stale at once
    oauth = source(f"{upstream.base}/mcp", monkeypatch)
    with serving(GatewayApp(f"{upstream.base}/mcp", credentials=oauth)) as url:
        statuses = [post(url, CALL).status_code for _ in range(2)]
    assert statuses == [200, 200] and len(auth.issued) == 2
    assert upstream.seen == [f"Bearer {t}" for t in auth.issued]


def test_an_upstream_401_renews_the_token_once_and_the_request_goes_again(
    world: tuple[AuthServer, Protected], monkeypatch: pytest.MonkeyPatch
) -> None:
    auth, upstream = world
    oauth = source(f"{upstream.base}/mcp", monkeypatch)
    with serving(GatewayApp(f"{upstream.base}/mcp", credentials=oauth)) as url:
        first = post(url, CALL)
        upstream.revoked.add(auth.issued[0])
        second = post(url, CALL)
    assert (first.status_code, second.status_code) == (200, 200)
    one, two = (f"Bearer {t}" for t in auth.issued)
    assert upstream.seen == [one, one, two]


def test_an_upstream_that_keeps_refusing_is_502_to_the_requests_id_after_one_renewal(
    world: tuple[AuthServer, Protected], monkeypatch: pytest.MonkeyPatch
) -> None:
    auth, upstream = world
    upstream.refuse_all = True
    oauth = source(f"{upstream.base}/mcp", monkeypatch)
    with serving(GatewayApp(f"{upstream.base}/mcp", credentials=oauth)) as url:
        answer = post(url, CALL)
    assert answer.status_code == 502 and "www-authenticate" not in answer.headers
    assert (answer.json()["id"], answer.json()["error"]["code"]) == (7, -32603)
    assert len(upstream.seen) == 2 and len(auth.issued) == 2  # one renewal, no more
    assert not any(t in answer.text for t in auth.issued)


@pytest.mark.parametrize("enforce", [False, True])
def test_an_authorization_server_that_refuses_is_502_to_the_requests_id_naming_no_secret(
    world: tuple[AuthServer, Protected], monkeypatch: pytest.MonkeyPatch, enforce: bool
) -> None:
    auth, upstream = world
    auth.refuse = True
    oauth = source(f"{upstream.base}/mcp", monkeypatch)
    app = GatewayApp(f"{upstream.base}/mcp", credentials=oauth, enforce=enforce)
    with serving(app) as url:
        answer = post(url, CALL)
    assert answer.status_code == 502
    assert (answer.json()["id"], answer.json()["error"]["code"]) == (7, -32603)
    assert SECRET not in answer.text and upstream.seen == []  # nothing went without a token


def test_the_metadata_named_only_by_the_upstreams_401_is_found(
    world: tuple[AuthServer, Protected], monkeypatch: pytest.MonkeyPatch
) -> None:
    auth, upstream = world
    upstream.well_known = False
    oauth = source(f"{upstream.base}/mcp", monkeypatch)
    with serving(GatewayApp(f"{upstream.base}/mcp", credentials=oauth)) as url:
        answer = post(url, CALL)
    assert answer.status_code == 200 and len(auth.issued) == 1
    assert upstream.seen == [None, f"Bearer {auth.issued[0]}"]  # no token before the challenge


def test_the_bridges_exchanges_carry_the_gateways_token_and_renew_it_on_a_401(
    world: tuple[AuthServer, Protected], monkeypatch: pytest.MonkeyPatch
) -> None:
    auth, upstream = world  # the probe: the bridges' exchanges (`exchanged`), cheaply
    oauth = source(f"{upstream.base}/mcp", monkeypatch)

    async def probed() -> None:
        http = upstream_client()
        try:
            for _ in range(2):
                with contextlib.suppress(ProbeError):  # one fixed answer tells a probe nothing
                    await probe_upstream(
                        upstream.base + "/mcp", http, credentials=Credentials(oauth)
                    )
                upstream.revoked.add(auth.issued[0])
        finally:
            await http.aclose()
            await oauth.aclose()

    asyncio.run(probed())
    one, two = (f"Bearer {t}" for t in auth.issued)
    assert upstream.seen[0] == one and upstream.seen[-1] == two
    assert upstream.seen.count(one) == upstream.seen.index(two) and len(auth.issued) == 2


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--upstream-client-id", "gw"], "needs one of --upstream-client-secret-env"),
        (["--upstream-scope", "mcp"], "need --upstream-client-id"),
        (
            [*CLIENT, "--upstream-client-secret-env", "GW_SECRET", "--upstream-token-env", "T"],
            "give one of",
        ),
        (["--upstream-client-id", "gw", "--upstream-client-secret-env", "UNSET_HERE"], "not set"),
        (
            ["--upstream-client-id", "gw", "--upstream-private-key-file", __file__],
            "no PEM private key",
        ),
    ],
)
def test_upstream_oauth_options_that_cannot_work_stop_the_gateway_naming_no_secret(
    flags: list[str], said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GW_SECRET", SECRET)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--listen", ":0", "--upstream", "http://127.0.0.1:9/mcp", *flags])
    with pytest.raises(GatewayError, match=said) as refused:
        credentials_of(args, [])
    assert SECRET not in str(refused.value)


def test_a_secret_file_works_and_no_secret_is_taken_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "secret").write_text(SECRET + "\n")
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    base = ["--listen", ":0", "--upstream", "https://mcp.example/mcp", "--upstream-client-id", "gw"]
    found = credentials_of(
        parser.parse_args([*base, "--upstream-client-secret-file", str(tmp_path / "secret")]), []
    ).source
    assert isinstance(found, OAuth) and found.guard  # not on loopback: the SSRF guard is on
    assert found.client is not None and found.client.client_secret == SECRET
    assert SECRET not in repr(found) + repr(found.client)
    with pytest.raises(SystemExit):
        parser.parse_args([*base, "--upstream-client-secret", SECRET])
    assert "error:" in capsys.readouterr().err  # unrecognized (or an ambiguous prefix)
