"""A protected MCP server and its authorization server, in memory
(``httpx.MockTransport``), for the OAuth client's tests: each knob is one
way a server may behave, or misbehave, and every request is recorded, so a
test can say where each token and each client id went."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from mcp_schema.http.client import HttpClient
from mcp_schema.oauth import ClientInfo, FollowRedirect, HttpxFetcher, OAuth

MCP = "https://mcp.example/api/mcp"
AS = "https://as.example"
OTHER_AS = "https://other-as.example"
REDIRECT = "http://127.0.0.1:5555/callback"
INFO = {"name": "oauth-test", "version": "1"}
_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "protected", "version": "1"},
}


@dataclass
class World:
    """The knobs (see the module) and the record."""

    prm_resource: str = MCP
    authorization_servers: list[str] = field(default_factory=lambda: [AS])
    metadata_issuer: str | None = None  # None: the issuer itself
    iss: str = "correct"  # correct | wrong | omit
    iss_supported: bool = True
    pkce: bool = True
    token_type: str = "Bearer"
    refresh: bool = False
    scope_challenge: str | None = None  # the 401's scope
    needs: str | None = None  # a scope tools/list needs (403 insufficient_scope otherwise)
    always_401: bool = False
    withheld: frozenset[str] = frozenset()  # scopes the authorization server never grants
    cimd: bool = False
    registration: bool = True
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    as_scopes: list[str] | None = None
    prm_scopes: list[str] | None = None
    override: Callable[[httpx.Request], httpx.Response | None] | None = None
    requests: list[httpx.Request] = field(default_factory=list)
    granted: dict[str, set[str]] = field(default_factory=dict)  # token: its scopes
    refreshes: dict[str, str] = field(default_factory=dict)  # refresh token: scope
    challenge: str | None = None
    clients: int = 0
    issued: int = 0

    # -- the record --------------------------------------------------------------------

    def sent(self, path: str, host: str | None = None) -> list[httpx.Request]:
        return [
            r for r in self.requests if r.url.path == path and (host is None or r.url.host == host)
        ]

    def authorizations(self) -> list[dict[str, list[str]]]:
        return [parse_qs(r.url.query.decode()) for r in self.sent("/authorize")]

    def forms(self, path: str = "/token") -> list[dict[str, list[str]]]:
        return [parse_qs(r.content.decode()) for r in self.sent(path)]

    # -- the servers ---------------------------------------------------------------------

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.override is not None and (answer := self.override(request)) is not None:
            return answer
        url = str(request.url.copy_with(query=None))
        if url.startswith("https://mcp.example"):
            return self._mcp(request, url)
        for issuer in self.authorization_servers:
            if url.startswith(issuer):
                return self._as(request, issuer, url[len(issuer) :])
        return httpx.Response(404)

    def _mcp(self, request: httpx.Request, url: str) -> httpx.Response:
        if url == "https://mcp.example/.well-known/oauth-protected-resource/api/mcp":
            prm: dict[str, Any] = {
                "resource": self.prm_resource,
                "authorization_servers": self.authorization_servers,
            }
            if self.prm_scopes is not None:
                prm["scopes_supported"] = self.prm_scopes
            return httpx.Response(200, json=prm)
        if url != MCP:
            return httpx.Response(404)
        if request.method != "POST":
            return httpx.Response(405)  # no stream of its own
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ")
        if not header.startswith("Bearer ") or token not in self.granted or self.always_401:
            scope = f'scope="{self.scope_challenge}", ' if self.scope_challenge else ""
            value = f'Bearer {scope}resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/api/mcp"'
            return httpx.Response(401, headers={"www-authenticate": value})
        message = json.loads(request.content)
        if (
            self.needs
            and message.get("method") == "tools/list"
            and self.needs not in self.granted[token]
        ):
            value = f'Bearer error="insufficient_scope", scope="{self.needs}"'
            return httpx.Response(403, headers={"www-authenticate": value})
        if "id" not in message:
            return httpx.Response(202)
        result: dict[str, Any] = _INIT if message["method"] == "initialize" else {"tools": []}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _as(self, request: httpx.Request, issuer: str, path: str) -> httpx.Response:
        if path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, json=self._metadata(issuer))
        if path == "/authorize":
            query = parse_qs(request.url.query.decode())
            back = {"code": f"code-{issuer}", "state": query.get("state", [""])[0]}
            self.challenge = query.get("code_challenge", [None])[0]
            if self.iss != "omit":
                back["iss"] = issuer if self.iss == "correct" else "https://evil.example"
            self._scope = query.get("scope", [""])[0]
            return httpx.Response(
                302, headers={"location": f"{query['redirect_uri'][0]}?{urlencode(back)}"}
            )
        if path == "/register":
            self.clients += 1
            body = json.loads(request.content)
            return httpx.Response(
                201, json={"client_id": f"client-{self.clients}-{issuer}", **body}
            )
        if path == "/token":
            return self._token(parse_qs(request.content.decode()))
        return httpx.Response(404)

    def _metadata(self, issuer: str) -> dict[str, Any]:
        document: dict[str, Any] = {
            "issuer": self.metadata_issuer or issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "token_endpoint_auth_methods_supported": self.auth_methods,
            "authorization_response_iss_parameter_supported": self.iss_supported,
            "client_id_metadata_document_supported": self.cimd,
        }
        if self.registration:
            document["registration_endpoint"] = f"{issuer}/register"
        if self.pkce:
            document["code_challenge_methods_supported"] = ["S256"]
        if self.as_scopes is not None:
            document["scopes_supported"] = self.as_scopes
        return document

    def _token(self, form: dict[str, list[str]]) -> httpx.Response:
        grant = form["grant_type"][0]
        if grant == "authorization_code":
            digest = hashlib.sha256(form["code_verifier"][0].encode()).digest()
            expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if expected != self.challenge:
                return httpx.Response(400, json={"error": "invalid_grant"})
            scope = self._scope
        elif grant == "refresh_token":
            found = self.refreshes.pop(form["refresh_token"][0], None)  # rotated
            if found is None:
                return httpx.Response(400, json={"error": "invalid_grant"})
            scope = found
        else:
            scope = form.get("scope", [""])[0]
        token = f"token-{self.issued}"
        self.issued += 1
        self.granted[token] = set(scope.split()) - self.withheld
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": self.token_type,
            "expires_in": 3600,
        }
        if self.refresh:
            answer["refresh_token"] = f"refresh-{self.issued}"
            self.refreshes[answer["refresh_token"]] = scope
        return httpx.Response(200, json=answer)

    # -- the clients ---------------------------------------------------------------------

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def oauth(self, **options: Any) -> OAuth:
        fetcher = HttpxFetcher(self.http())
        options.setdefault("redirect", FollowRedirect(REDIRECT, fetcher))
        return OAuth(MCP, fetcher=fetcher, **options)

    def client(self, auth: OAuth) -> HttpClient:
        return HttpClient(MCP, info=INFO, mode="handshake", http=self.http(), auth=auth)


def pre_registered(
    client_id: str = "pre", secret: str | None = "s3cret", issuer: str | None = None
) -> ClientInfo:
    return ClientInfo(client_id, secret, issuer=issuer)


def query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)
