"""Tokens an attacker would send end in a 401 challenge with
``error="invalid_token"`` and ``resource_metadata``, never a principal:
``alg: none``, the wrong key, HS256 keyed with the public key, a flipped
signature, expired or not yet valid, the wrong ``aud`` or ``iss``, no or an
unknown ``kid``, an ID token, 1 MB tokens and garbage; and a flood of
unknown ``kid`` values costs the authorization server one JWKS fetch per
refresh interval, not one per token."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
import warnings
from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from jwt.algorithms import RSAAlgorithm
from jwt.warnings import InsecureKeyLengthWarning

from mcp_schema.auth import JwtVerifier, Principal, ResourceServer
from tests.auth.tokens import (
    EC_KEY,
    ED_KEY,
    ISSUER,
    JWKS_URL,
    KID,
    METADATA_URL,
    OTHER_RSA_KEY,
    RESOURCE,
    RSA_KEY,
    assembled,
    authenticated,
    authorization_server,
    b64,
    bearer,
    claims,
    jwks,
    public_jwk,
    refusal_of,
    resource_server,
    run,
    sign,
)

NOW = int(time.time())
PUBLIC_PEM = RSA_KEY.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)


def hs256(secret: bytes, header: dict[str, object] | None = None) -> str:
    """A token MACed with ``secret``: what an attacker makes of a public key."""
    head = header or {"alg": "HS256", "kid": KID, "typ": "at+jwt"}
    signing_input = f"{b64(json.dumps(head).encode())}.{b64(json.dumps(claims()).encode())}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(mac)}"


def flipped(token: str) -> str:
    head, body, signature = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=="))
    raw[len(raw) // 2] ^= 0x01
    return f"{head}.{body}.{b64(bytes(raw))}"


def id_token() -> str:
    """An ID token of the same issuer and key: its audience is its client."""
    return sign(
        claims(aud="app", nonce="n-0", auth_time=NOW, azp="app", scope=None, client_id=None),
        typ="JWT",
    )


HOSTILE: dict[str, Callable[[], str]] = {
    "alg none": lambda: assembled({"alg": "none", "kid": KID, "typ": "at+jwt"}, claims(), b""),
    "alg none, no signature part": lambda: assembled({"alg": "none", "kid": KID}, claims(), b"")[
        :-1
    ],
    "signed with another key": lambda: sign(key=OTHER_RSA_KEY),
    "HS256 keyed with the public key (PEM)": lambda: hs256(PUBLIC_PEM),
    "HS256 keyed with the public key (JWK)": lambda: hs256(
        json.dumps(public_jwk(RSA_KEY, KID)).encode()
    ),
    "a flipped signature": lambda: flipped(sign()),
    "expired": lambda: sign(claims(exp=NOW - 3600, iat=NOW - 7200)),
    "not yet valid": lambda: sign(claims(nbf=NOW + 3600)),
    "issued in the future": lambda: sign(claims(iat=NOW + 3600)),
    "no exp": lambda: sign(claims(exp=None)),
    "for another resource": lambda: sign(claims(aud="https://other.example.com/mcp")),
    "for a resource that merely starts alike": lambda: sign(claims(aud=RESOURCE + "-evil")),
    "no aud": lambda: sign(claims(aud=None)),
    "from another issuer": lambda: sign(claims(iss="https://evil.example.com")),
    "from an issuer that merely starts alike": lambda: sign(claims(iss=ISSUER + ".evil.com")),
    "no kid": lambda: sign(kid=None),
    "an unknown kid": lambda: sign(kid="key-unknown"),
    "a kid that is not a string": lambda: assembled({"alg": "RS256", "kid": 1}, claims(), b"x"),
    "an ID token": id_token,
    "RS256 named, the kid an EC key's": lambda: sign(key=EC_KEY, alg="ES256", kid=KID),
    "PS256 with a key bound to RS256": lambda: sign(alg="PS256"),
    "a crit header": lambda: sign(crit=["exp"]),
    "sender-constrained (cnf)": lambda: sign(claims(cnf={"jkt": "x"})),
    "a logout token's typ": lambda: sign(typ="logout+jwt"),
    "no subject and no client": lambda: sign(claims(sub=None, client_id=None)),
    "a subject with a line break": lambda: sign(claims(sub="alice\r\nbob")),
    "a scope that is no list of scope tokens": lambda: sign(claims(scope='a "b"')),
    "a JWE-shaped token": lambda: "a.b.c.d.e",
    "garbage in three parts": lambda: "not.a.jwt",
    "a header that is no JSON": lambda: f"{b64(b'{nope')}.{b64(b'{}')}.{b64(b'x')}",
    "a header that is a list": lambda: f"{b64(b'[1]')}.{b64(b'{}')}.{b64(b'x')}",
    "one word": lambda: "garbage",
    "a megabyte of token": lambda: "a" * (1 << 20),
    "a megabyte in three parts": lambda: ".".join(["a" * (1 << 20)] * 3),
}


@pytest.mark.parametrize("make", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_token_gets_the_invalid_token_challenge(make: Callable[[], str]) -> None:
    status, params, body = refusal_of(authenticated(resource_server(), bearer(make())))
    assert status == 401
    assert params["error"] == "invalid_token"
    assert params["resource_metadata"] == METADATA_URL
    assert body["error"]["code"] == -32600 and body["id"] is None


def signed_text(payload: str) -> str:
    """A token whose payload is ``payload`` as written, signed with the good key:
    JSON no library would write (``Infinity``, an integer of 400 digits)."""
    header = b64(json.dumps({"alg": "RS256", "kid": KID, "typ": "at+jwt"}).encode())
    body = b64(payload.encode())
    signature = RSA_KEY.sign(f"{header}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{body}.{b64(signature)}"


@pytest.mark.parametrize("exp", ["Infinity", "NaN", "1e400", "1" + "0" * 400, '"soon"', "true"])
def test_an_exp_that_is_no_time_is_refused_even_signed(exp: str) -> None:
    payload = json.dumps(claims(exp=0)).replace('"exp": 0', f'"exp": {exp}')
    status, params, _ = refusal_of(authenticated(resource_server(), bearer(signed_text(payload))))
    assert (status, params["error"]) == (401, "invalid_token")


def test_the_good_token_those_are_made_from_is_taken() -> None:
    # Each hostile token above is one change away from this one.
    principal = authenticated(resource_server(), bearer(sign()))
    assert isinstance(principal, Principal)
    assert (principal.issuer, principal.subject) == (ISSUER, "alice")
    assert principal.scopes == {"tools:read"}


@pytest.mark.parametrize(("key", "alg"), [(RSA_KEY, "PS256"), (EC_KEY, "ES256"), (ED_KEY, "EdDSA")])
def test_each_kind_of_public_key_verifies_its_own_algorithm(key: object, alg: str) -> None:
    fetcher = authorization_server(public_jwk(key, "k"))  # type: ignore[arg-type]
    token = sign(key=key, alg=alg, kid="k")  # type: ignore[arg-type]
    assert isinstance(authenticated(resource_server(fetcher), bearer(token)), Principal)


def test_an_hmac_key_in_the_jwks_is_never_used() -> None:
    secret = b"s" * 32
    oct_key = {"kty": "oct", "kid": KID, "k": b64(secret), "alg": "HS256"}
    server = resource_server(authorization_server(oct_key))
    status, params, _ = refusal_of(authenticated(server, bearer(hs256(secret))))
    assert (status, params["error"]) == (401, "invalid_token")


def test_a_key_too_short_is_refused() -> None:
    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    server = resource_server(authorization_server(public_jwk(weak, KID)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureKeyLengthWarning)  # PyJWT signs it, warning
        token = sign(key=weak)
    assert refusal_of(authenticated(server, bearer(token)))[0] == 401


def test_a_jwks_key_with_private_members_is_not_taken() -> None:
    leaked = {**RSAAlgorithm.to_jwk(RSA_KEY, as_dict=True), "kid": KID}
    del leaked["key_ops"]  # ["sign"]: refused for that alone
    assert (
        refusal_of(authenticated(resource_server(authorization_server(leaked)), bearer(sign())))[0]
        == 401
    )


def test_an_access_token_typ_is_required_where_configured() -> None:
    verifier = JwtVerifier(ISSUER, RESOURCE, at_jwt=True, fetcher=authorization_server())
    server = ResourceServer(resource=RESOURCE, verifier=verifier, authorization_servers=[ISSUER])
    for typ in (None, "JWT"):
        assert refusal_of(authenticated(server, bearer(sign(typ=typ))))[0] == 401
    assert isinstance(authenticated(server, bearer(sign(typ="application/at+jwt"))), Principal)
    # RFC 9068 section 2.2's claims are all required then.
    assert refusal_of(authenticated(server, bearer(sign(claims(jti=None)))))[0] == 401


def test_a_flood_of_unknown_kids_fetches_the_jwks_once_per_interval() -> None:
    fetcher = authorization_server()
    clock = [1000.0]
    verifier = JwtVerifier(
        ISSUER, RESOURCE, fetcher=fetcher, refresh_seconds=30.0, clock=lambda: clock[0]
    )
    server = ResourceServer(resource=RESOURCE, verifier=verifier, authorization_servers=[ISSUER])
    flood = [sign(kid=f"unknown-{n}") for n in range(300)]

    async def flooded() -> None:
        answers = await asyncio.gather(*(server.authenticate(bearer(t)) for t in flood))  # at once
        answers += [await server.authenticate(bearer(t)) for t in flood]  # one after another
        assert all(refusal_of(answer)[0] == 401 for answer in answers)

    async def main() -> None:
        assert isinstance(await server.authenticate(bearer(sign())), Principal)  # keys fetched
        await flooded()
        assert fetcher.count(JWKS_URL) == 1  # fetched less than 30 s ago: not again
        clock[0] += 30.0
        await flooded()
        assert fetcher.count(JWKS_URL) == 2  # one refresh for them all
        clock[0] += 29.0
        await flooded()
        assert fetcher.count(JWKS_URL) == 2

    run(main())


def test_a_new_key_is_found_by_the_refresh_an_unknown_kid_causes() -> None:
    fetcher = authorization_server()
    clock = [0.0]
    verifier = JwtVerifier(ISSUER, RESOURCE, fetcher=fetcher, clock=lambda: clock[0])
    server = ResourceServer(resource=RESOURCE, verifier=verifier, authorization_servers=[ISSUER])
    assert isinstance(authenticated(server, bearer(sign())), Principal)
    fetcher.answers[JWKS_URL] = jwks(public_jwk(RSA_KEY, KID), public_jwk(OTHER_RSA_KEY, "key-2"))
    clock[0] += 31
    assert isinstance(
        authenticated(server, bearer(sign(key=OTHER_RSA_KEY, kid="key-2"))), Principal
    )
