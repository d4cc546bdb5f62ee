"""What the tests of mcp_schema.auth share: keys made here (none committed),
tokens signed with them, an authorization server in memory (its metadata
and JWKS served by `FakeFetcher`, which counts what it is asked), and a
reading of ``WWW-Authenticate`` challenges."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from mcp_schema.auth import FetchError, JwtVerifier, Principal, ResourceServer
from mcp_schema.http.stream import Response

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"
METADATA_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
JWKS_URL = "https://auth.example.com/jwks"
KID = "key-1"

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
ED_KEY = ed25519.Ed25519PrivateKey.generate()

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey


def public_jwk(key: PrivateKey, kid: str, **extra: Any) -> dict[str, Any]:
    """The public JWK of ``key``, named ``kid``."""
    public = key.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        found = RSAAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        found = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        found = OKPAlgorithm.to_jwk(public, as_dict=True)
    return {**found, "kid": kid, "use": "sig", **extra}


def jwks(*keys: dict[str, Any]) -> bytes:
    return json.dumps({"keys": list(keys)}).encode()


def claims(**changed: Any) -> dict[str, Any]:
    """The claims of a good access token for `RESOURCE` from `ISSUER`
    (``None`` removes one)."""
    now = int(time.time())
    base: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": RESOURCE,
        "client_id": "app",
        "exp": now + 600,
        "iat": now,
        "jti": f"id-{time.perf_counter_ns()}",
        "scope": "tools:read",
    }
    base.update(changed)
    return {k: v for k, v in base.items() if v is not None}


def sign(
    payload: Mapping[str, Any] | None = None,
    *,
    key: PrivateKey = RSA_KEY,
    alg: str = "RS256",
    kid: str | None = KID,
    typ: str | None = "at+jwt",
    **header: Any,
) -> str:
    """A JWT of ``payload`` (default: `claims`) signed with ``key``."""
    head: dict[str, Any] = {
        k: v for k, v in {"kid": kid, "typ": typ, **header}.items() if v is not None
    }
    return jwt.encode(dict(payload or claims()), key, algorithm=alg, headers=head)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def assembled(header: Mapping[str, Any], payload: Mapping[str, Any], signature: bytes) -> str:
    """A compact JWS put together by hand (for tokens no library would sign)."""
    parts = [json.dumps(header).encode(), json.dumps(payload).encode()]
    return ".".join([*map(b64, parts), b64(signature)])


class FakeFetcher:
    """An authorization server in memory: ``answers`` by URL (bytes, a
    callable of the form, or another status than 200), every fetch recorded
    in ``asked``."""

    def __init__(
        self, answers: Mapping[str, bytes | int | Callable[[Mapping[str, str]], bytes]]
    ) -> None:
        self.answers = dict(answers)
        self.asked: list[str] = []
        self.forms: list[dict[str, str]] = []
        self.headers: list[dict[str, str]] = []
        self.delay = 0.0

    async def fetch(
        self,
        url: str,
        *,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        self.asked.append(url)
        self.forms.append(dict(form or {}))
        self.headers.append(dict(headers or {}))
        if self.delay:
            await asyncio.sleep(self.delay)
        answer = self.answers.get(url, 404)
        if isinstance(answer, int):
            raise FetchError(f"answered {answer}", answer)
        return answer(form or {}) if callable(answer) else answer

    def count(self, url: str) -> int:
        return self.asked.count(url)


def authorization_server(*keys: dict[str, Any], issuer: str = ISSUER) -> FakeFetcher:
    """`FakeFetcher` serving ``issuer``'s OpenID metadata (RFC 8414's path
    answers 404) and a JWKS of ``keys`` (by default the public `RSA_KEY`,
    for RS256)."""
    metadata = {"issuer": issuer, "jwks_uri": JWKS_URL}
    return FakeFetcher(
        {
            f"{issuer}/.well-known/openid-configuration": json.dumps(metadata).encode(),
            JWKS_URL: jwks(*(keys or (public_jwk(RSA_KEY, KID, alg="RS256"),))),
        }
    )


def resource_server(fetcher: FakeFetcher | None = None, **options: Any) -> ResourceServer:
    """A `ResourceServer` for `RESOURCE` taking `ISSUER`'s JWTs through ``fetcher``."""
    verifier = JwtVerifier(ISSUER, RESOURCE, fetcher=fetcher or authorization_server())
    return ResourceServer(
        resource=RESOURCE, verifier=verifier, authorization_servers=[ISSUER], **options
    )


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def authenticated(server: ResourceServer, headers: Mapping[str, str]) -> Principal | Response:
    return asyncio.run(server.authenticate(headers))


_PARAM = re.compile(r'\s*([A-Za-z_]+)="((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def challenge_params(value: str) -> dict[str, str]:
    """The parameters of one ``Bearer`` challenge (quoted-strings unescaped);
    AssertionError when it is not exactly that."""
    assert value.startswith("Bearer "), value
    rest, params = value[len("Bearer ") :], {}
    while rest:
        match = _PARAM.match(rest)
        assert match is not None, rest
        params[match.group(1)] = re.sub(r"\\(.)", r"\1", match.group(2))
        rest = rest[match.end() :]
    return params


def refusal_of(answer: object) -> tuple[int, dict[str, str], dict[str, Any]]:
    """The status, challenge parameters and JSON-RPC body of a refusal."""
    assert isinstance(answer, Response), answer
    header = answer.header("www-authenticate")
    return answer.status, challenge_params(header) if header else {}, json.loads(answer.body)
