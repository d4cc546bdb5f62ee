"""The gateway as a resource server of its own (`GatewayApp` and the
bridges behind one `Precheck(auth=...)`, and the ``--auth-*`` options that
make it): its protected resource metadata, each client's token checked
before anything reaches the upstream, the bridges' upstream sessions kept
per principal. Tokens are signed here (`tests.auth.tokens`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_schema.auth import Introspector, JwtVerifier
from mcp_schema.gateway.auth_options import add_auth_arguments, resource_server_of
from mcp_schema.gateway.monitor.asgi import GatewayApp
from mcp_schema.gateway.options import GatewayError, precheck_of
from mcp_schema.http.precheck import Precheck
from tests.auth.test_hostile_tokens import HOSTILE
from tests.auth.tokens import ISSUER, RESOURCE, claims, resource_server, sign
from tests.gateway.test_gateway import serving
from tests.gateway.test_gateway_upstream import ANSWER as UPSTREAM_ANSWER
from tests.gateway.test_gateway_upstream import recording
from tests.http.test_authorized_door import call, posted, stateless

UPSTREAM = "http://upstream.invalid/mcp"


@contextlib.contextmanager
def gateway(seen: list[dict[bytes, bytes]]) -> Iterator[GatewayApp]:
    """The gateway, its own resource server, in front of a real upstream on
    loopback that keeps the fields of each request it is sent."""
    with serving(recording(seen)) as upstream:
        yield GatewayApp(upstream, precheck=Precheck(auth=resource_server()))


def test_the_gateway_serves_its_own_metadata() -> None:
    path = "/.well-known/oauth-protected-resource/mcp"
    with gateway([]) as app:
        request = {**posted({}, None)[0], "method": "GET", "path": path}
        status, _, body = asyncio.run(call(app, request))
    assert status == 200 and json.loads(body)["resource"] == RESOURCE


@pytest.mark.parametrize("name", [None, *HOSTILE])
def test_a_client_without_a_good_token_reaches_no_upstream(name: str | None) -> None:
    seen: list[dict[bytes, bytes]] = []
    bearer = None if name is None else HOSTILE[name]()
    with gateway(seen) as app:
        status, head, _ = asyncio.run(call(app, *stateless(bearer)))
    assert status == 401 and head["www-authenticate"].startswith("Bearer ")
    assert seen == []


def test_a_good_token_is_forwarded_and_the_client_is_answered() -> None:
    seen: list[dict[bytes, bytes]] = []
    with gateway(seen) as app:
        status, _, body = asyncio.run(call(app, *stateless(sign(claims()))))
    assert status == 200 and json.loads(body) == json.loads(UPSTREAM_ANSWER) and len(seen) == 1
    assert b"authorization" not in seen[0]  # the client's token stays here


def options(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_auth_arguments(parser)
    parser.add_argument("--allowed-host", action="append")
    parser.add_argument("--allowed-origin", action="append", default=[])
    return parser.parse_args(argv)


def test_the_auth_options_make_a_jwt_resource_server() -> None:
    made = resource_server_of(options("--auth-issuer", ISSUER, "--auth-resource", RESOURCE), {})
    assert made is not None and isinstance(made.verifier, JwtVerifier)
    assert made.metadata.resource == RESOURCE
    from_env = resource_server_of(
        options(),
        {"MCP_AUTH_ISSUER": ISSUER, "MCP_AUTH_RESOURCE": RESOURCE, "MCP_AUTH_SCOPES": "a,b"},
    )
    assert from_env is not None and from_env.required.always == frozenset({"a", "b"})
    assert resource_server_of(options(), {}) is None


def test_introspection_reads_its_secret_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cret-value\n")
    argv = ("--auth-issuer", ISSUER, "--auth-resource", RESOURCE, "--auth-introspection")
    made = resource_server_of(
        options(
            *argv, "discover", "--auth-client-id", "gw", "--auth-client-secret-file", str(secret)
        ),
        {},
    )
    assert made is not None and isinstance(made.verifier, Introspector)
    assert "s3cret" not in repr(vars(made.verifier))


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (("--auth-issuer", ISSUER), {}),  # no resource
        (
            ("--auth-issuer", "http://auth.example.com", "--auth-resource", RESOURCE),
            {},
        ),  # not https
        (
            (
                "--auth-issuer",
                ISSUER,
                "--auth-resource",
                RESOURCE,
                "--auth-introspection",
                "discover",
            ),
            {},
        ),
        (("--trusted-proxy", "not an address"), {}),
    ],
)
def test_auth_options_that_cannot_work_stop_the_gateway(argv: tuple[str, ...], env: Any) -> None:
    with pytest.raises(GatewayError):
        precheck_of(options(*argv))


def test_a_stdio_gateway_session_is_its_principals_alone() -> None:
    from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
    from tests.gateway.test_gateway import serving
    from tests.gateway.test_stdio import EXAMPLE
    from tests.http.test_forward import HEADERS, INIT

    app = StdioGatewayApp(EXAMPLE, precheck=Precheck(auth=resource_server()))
    alice = {**HEADERS, "authorization": f"Bearer {sign(claims(sub='alice'))}"}
    bob = {**HEADERS, "authorization": f"Bearer {sign(claims(sub='bob'))}"}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with serving(app) as url:
        assert httpx.post(url, json=INIT, headers=HEADERS).status_code == 401
        opened = httpx.post(url, json=INIT, headers=alice)
        assert opened.status_code == 200, opened.text
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx.post(url, json=initialized, headers={**alice, **session}).status_code == 202
        assert httpx.post(url, json=listing, headers={**bob, **session}).status_code == 404
        assert httpx.delete(url, headers={**bob, **session}).status_code == 404
        mine = httpx.post(url, json=listing, headers={**alice, **session})
        assert mine.status_code == 200 and "echo" in mine.text
        assert httpx.delete(url, headers={**alice, **session}).status_code == 200
