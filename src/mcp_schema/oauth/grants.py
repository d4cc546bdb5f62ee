"""The requests of the OAuth 2.1 grants a client makes, and the reading of
their answers, sans-IO:

* the authorization request of the code grant, with PKCE (S256, RFC 7636),
  a ``state`` and the ``resource`` (RFC 8707), and the reading of the
  redirect back (`read_callback`: the ``state``, then the ``iss`` of RFC
  9207 as the specification's
  [Authorization Response Validation](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#authorization-response-validation)
  tabulates it, then the code);
* the token requests (the code, a refresh, client credentials), each with
  the ``resource`` and the client's authentication at the token endpoint
  (``client_secret_basic``, ``client_secret_post``, ``none``,
  ``private_key_jwt``), and the reading of their answers into `Tokens`;
* the dynamic registration request (RFC 7591) and its answer.

Secrets, tokens and codes are kept out of every ``repr`` and every message.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs, quote_plus, urlencode, urlsplit

from mcp_schema.errors import clip, quote
from mcp_schema.oauth.errors import (
    AuthorizationResponseError,
    RegistrationError,
    TokenError,
)
from mcp_schema.oauth.metadata import ServerMetadata, json_object
from mcp_schema.oauth.urls import is_loopback, origin

__all__ = [
    "AUTH_METHODS",
    "ClientInfo",
    "Pending",
    "TokenRequest",
    "Tokens",
    "authorization_request",
    "client_credentials_request",
    "code_request",
    "read_callback",
    "read_registration",
    "read_tokens",
    "refresh_request",
    "registration_request",
    "resolved",
]

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
"""The token endpoint authentication methods the client can use."""

_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_CREDENTIAL = re.compile(r"[!-~]{1,8192}")  # visible ASCII: it goes into a header
_MAX_EXPIRY = 10 * 365 * 86400
_MAX_FIELDS = 20

Signer = Callable[[str, str], str]
"""``sign(client_id, audience)``: a ``private_key_jwt`` client assertion."""


@dataclass(frozen=True)
class ClientInfo:
    """Who the client is at one authorization server."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str | None = None
    """How it authenticates at the token endpoint: one of `AUTH_METHODS`
    (None: as the authorization server allows, `resolved`)."""
    issuer: str | None = None
    """The authorization server it belongs to (None: the first one met)."""


@dataclass(frozen=True)
class Tokens:
    """What a token endpoint granted, for one resource at one issuer."""

    access_token: str = field(repr=False)
    expires_at: float | None = None
    """Wall-clock seconds (``time.time()``) after which it is stale."""
    refresh_token: str | None = field(default=None, repr=False)
    scopes: tuple[str, ...] | None = None
    """The scopes asked for when it was granted (None: none asked)."""

    def fresh(self, now: float | None = None, margin: float = 30.0) -> bool:
        """Whether the access token is still usable for ``margin`` seconds."""
        if self.expires_at is None:
            return True
        return (time.time() if now is None else now) + margin < self.expires_at


@dataclass(frozen=True)
class TokenRequest:
    """One POST of a form to a token (or registration) endpoint."""

    url: str
    form: dict[str, str] = field(repr=False)
    headers: dict[str, str] = field(repr=False)


@dataclass(frozen=True)
class Pending:
    """An authorization request on its way: what the redirect back is checked against."""

    url: str = field(repr=False)
    """Where the user agent goes (the authorization endpoint and its query)."""
    redirect_uri: str
    issuer: str
    iss_required: bool
    resource: str
    scopes: tuple[str, ...] | None
    state: str = field(repr=False)
    verifier: str = field(repr=False)


def authorization_request(
    server: ServerMetadata,
    client: ClientInfo,
    redirect_uri: str,
    resource: str,
    scopes: Sequence[str] | None,
) -> Pending:
    """The authorization request (PKCE S256, a fresh ``state``, the ``resource``)."""
    if server.authorization_endpoint is None:
        raise TokenError("the authorization server has no authorization_endpoint")
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    state = secrets.token_urlsafe(24)
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": resource,
    }
    if scopes:
        query["scope"] = " ".join(scopes)
    glue = "&" if urlsplit(server.authorization_endpoint).query else "?"
    url = f"{server.authorization_endpoint}{glue}{urlencode(query)}"
    asked = tuple(scopes) if scopes else None
    return Pending(
        url, redirect_uri, server.issuer, server.iss_parameter, resource, asked, state, verifier
    )


def _one(query: Mapping[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    if values is None:
        return None
    if len(values) != 1:
        raise AuthorizationResponseError(f"the redirect back has {len(values)} {name} parameters")
    return values[0]


def read_callback(pending: Pending, callback: str) -> str:
    """The authorization code of the redirect back ``callback`` (the URL the
    user agent was sent to), or `AuthorizationResponseError`."""
    try:
        parts, sent = urlsplit(callback), urlsplit(pending.redirect_uri)
        same = origin(callback) == origin(pending.redirect_uri) and parts.path == sent.path
        query = parse_qs(parts.query, keep_blank_values=True, max_num_fields=_MAX_FIELDS)
    except ValueError:
        raise AuthorizationResponseError("the redirect back is no URL") from None
    if not same:
        raise AuthorizationResponseError("the redirect back went to another redirect URI")
    state = _one(query, "state")
    if state is None or not hmac.compare_digest(state.encode(), pending.state.encode()):
        raise AuthorizationResponseError("the redirect back carries another state")
    iss = _one(query, "iss")
    if iss is None and pending.iss_required:
        raise AuthorizationResponseError("the redirect back has no iss, which its issuer promised")
    if iss is not None and iss != pending.issuer:  # simple string comparison, RFC 9207 2.4
        raise AuthorizationResponseError(
            f"the redirect back names issuer {quote(iss)}, not {quote(pending.issuer)}"
        )
    error = _one(query, "error")
    if error is not None:
        said = _one(query, "error_description") or ""
        raise AuthorizationResponseError(f"authorization refused: {clip(error)} {clip(said)}")
    code = _one(query, "code")
    if not code:
        raise AuthorizationResponseError("the redirect back carries no code")
    return code


def resolved(client: ClientInfo, server: ServerMetadata, signing: bool) -> ClientInfo:
    """``client`` with its token endpoint authentication chosen, where it was
    not given: ``private_key_jwt`` with a key, a secret as the server allows
    (``client_secret_basic`` first), else ``none``; and bound to the issuer."""
    method = client.auth_method
    if method is None:
        supported = server.token_auth_methods
        if signing and "private_key_jwt" in supported:
            method = "private_key_jwt"
        elif client.client_secret is None:
            method = "none"
        elif "client_secret_basic" in supported or "client_secret_post" not in supported:
            method = "client_secret_basic"
        else:
            method = "client_secret_post"
    return replace(client, auth_method=method, issuer=server.issuer)


def _authenticated(
    client: ClientInfo, server: ServerMetadata, form: dict[str, str], sign: Signer | None
) -> TokenRequest:
    headers = {"accept": "application/json"}
    method = client.auth_method
    if method == "client_secret_basic" and client.client_secret is not None:
        # RFC 6749 section 2.3.1: each part form-encoded, then base64.
        pair = f"{quote_plus(client.client_id)}:{quote_plus(client.client_secret)}"
        headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    elif method == "client_secret_post" and client.client_secret is not None:
        form |= {"client_id": client.client_id, "client_secret": client.client_secret}
    elif method == "private_key_jwt":
        if sign is None:
            raise TokenError("private_key_jwt needs a private key")
        form |= {
            "client_id": client.client_id,
            "client_assertion_type": _ASSERTION_TYPE,
            "client_assertion": sign(client.client_id, server.issuer),
        }
    else:
        form["client_id"] = client.client_id
    return TokenRequest(server.token_endpoint, form, headers)


def code_request(
    server: ServerMetadata, client: ClientInfo, pending: Pending, code: str, sign: Signer | None
) -> TokenRequest:
    """The token request that redeems ``code`` (with the PKCE verifier)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": pending.redirect_uri,
        "code_verifier": pending.verifier,
        "resource": pending.resource,
    }
    return _authenticated(client, server, form, sign)


def refresh_request(
    server: ServerMetadata, client: ClientInfo, tokens: Tokens, resource: str, sign: Signer | None
) -> TokenRequest:
    """The token request that refreshes ``tokens`` (for ``resource``)."""
    assert tokens.refresh_token is not None
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    form["resource"] = resource
    return _authenticated(client, server, form, sign)


def client_credentials_request(
    server: ServerMetadata,
    client: ClientInfo,
    resource: str,
    scopes: Sequence[str] | None,
    sign: Signer | None,
) -> TokenRequest:
    """The client credentials grant's token request (a confidential client)."""
    form = {"grant_type": "client_credentials", "resource": resource}
    if scopes:
        form["scope"] = " ".join(scopes)
    return _authenticated(client, server, form, sign)


def _refusal(status: int, body: bytes, what: str) -> str:
    try:
        document = json_object(body, what, TokenError)
    except TokenError:
        return f"HTTP {status}"  # an unreadable body: the status says it
    error, said = document.get("error"), document.get("error_description")
    shown = clip(error) if isinstance(error, str) else ""
    if isinstance(said, str):
        shown += f": {clip(said)}"
    return f"HTTP {status} {shown}".rstrip()


def read_tokens(
    status: int,
    body: bytes,
    scopes: tuple[str, ...] | None,
    previous: Tokens | None = None,
    now: float | None = None,
) -> Tokens:
    """The `Tokens` of a token endpoint's answer (``scopes``: those asked
    for; ``previous``: the tokens refreshed, whose refresh token is kept when
    no new one comes), or `TokenError`."""
    if status != 200:
        raise TokenError(
            f"the token endpoint refused: {_refusal(status, body, 'the answer')}", status=status
        )
    document = json_object(body, "the token endpoint's answer", TokenError)
    access, kind = document.get("access_token"), document.get("token_type")
    if not isinstance(access, str) or not _CREDENTIAL.fullmatch(access):
        raise TokenError("the token endpoint's answer has no usable access_token")
    if not isinstance(kind, str) or kind.lower() != "bearer":
        raise TokenError(f"the token endpoint granted a {quote(kind)} token, not a Bearer one")
    expires_in = document.get("expires_in")
    expires_at = None
    if isinstance(expires_in, int) and not isinstance(expires_in, bool) and expires_in >= 0:
        expires_at = (time.time() if now is None else now) + min(expires_in, _MAX_EXPIRY)
    refresh = document.get("refresh_token")
    if not isinstance(refresh, str) or not _CREDENTIAL.fullmatch(refresh):
        refresh = previous.refresh_token if previous is not None else None
    return Tokens(access, expires_at, refresh, scopes)


def registration_request(
    server: ServerMetadata, redirect_uri: str, metadata: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The dynamic registration request (RFC 7591): its URL and JSON body
    (``metadata``: the client's own members, ``client_name`` and the like).
    It asks for ``none`` at the token endpoint where the server allows it."""
    assert server.registration_endpoint is not None
    supported = server.token_auth_methods
    method = next(
        (m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported),
        "client_secret_basic",
    )
    host = urlsplit(redirect_uri).hostname
    body: dict[str, Any] = {
        "client_name": "mcp-schema client",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        # The specification's application_type rule: native for loopback redirects.
        "application_type": "native" if is_loopback(host) else "web",
        **metadata,
    }
    return server.registration_endpoint, body


def read_registration(status: int, body: bytes, server: ServerMetadata) -> ClientInfo:
    """The `ClientInfo` a registration endpoint granted, or `RegistrationError`."""
    if status not in (200, 201):
        raise RegistrationError(
            f"registration refused: {_refusal(status, body, 'the answer')}", status=status
        )
    document = json_object(body, "the registration answer", RegistrationError)
    client_id, secret = document.get("client_id"), document.get("client_secret")
    if not isinstance(client_id, str) or not _CREDENTIAL.fullmatch(client_id):
        raise RegistrationError("the registration answer has no usable client_id")
    if not isinstance(secret, str) or not _CREDENTIAL.fullmatch(secret):
        secret = None
    method = document.get("token_endpoint_auth_method")
    if method not in AUTH_METHODS or method == "private_key_jwt":
        method = "none"
        if secret is not None:
            basic = "client_secret_basic" in server.token_auth_methods
            method = "client_secret_basic" if basic else "client_secret_post"
    return ClientInfo(client_id, secret, str(method), server.issuer)
