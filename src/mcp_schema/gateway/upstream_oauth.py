"""The gateway as an OAuth client of its upstream: the ``--upstream-client-*``
options of ``python -m mcp_schema gateway`` (`add_upstream_oauth_arguments`)
and the `mcp_schema.oauth.OAuth` source they make (`upstream_oauth_of`),
which gets the gateway's own token by the client credentials grant.

======================================  ===================================================
option                                  what
======================================  ===================================================
``--upstream-client-id ID``             the gateway's client id at the upstream's issuer
``--upstream-client-secret-env NAME``   its secret, in the environment variable NAME
``--upstream-client-secret-file PATH``  its secret, in the file PATH
``--upstream-private-key-file PATH``    or a PEM key: ``private_key_jwt`` (the auth extra)
``--upstream-signing-algorithm ALG``    the key's algorithm (ES256 by default)
``--upstream-issuer URL``               the only issuer the credentials go to
``--upstream-scope SCOPE`` (repeated)   the scopes asked for (else those of its metadata)
======================================  ===================================================

The secret is never an argument: a command line is visible to every user of
the machine. The authorization server is the one the upstream's protected
resource metadata names (its well-known path, or the ``resource_metadata``
of its 401); ``--upstream-issuer`` pins it, so that the secret goes to no
other. Each token is asked for before its first use, with the upstream as
its ``resource``, renewed before it expires and when the upstream refuses
it, one fetch for all the requests waiting; the token is never logged nor
passed to a client. An upstream that is not on loopback is reached with the
server-side request forgery guard of `mcp_schema.oauth.fetch`: its
authorization server is then https, on public addresses only.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from mcp_schema.oauth import OAuth

__all__ = ["add_upstream_oauth_arguments", "upstream_oauth_of"]

_MAX_KEY = 64 * 1024


def add_upstream_oauth_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--upstream-client-*`` options, on ``parser``."""
    group = parser.add_argument_group(
        "the upstream's authorization (the gateway's own token; see docs/guide/gateway.md)"
    )
    group.add_argument(
        "--upstream-client-id",
        metavar="ID",
        help="get the gateway's upstream token by the client credentials grant, as client ID",
    )
    group.add_argument(
        "--upstream-client-secret-env", metavar="NAME", help="its client secret: $NAME"
    )
    group.add_argument(
        "--upstream-client-secret-file", metavar="PATH", help="its client secret: the file PATH"
    )
    group.add_argument(
        "--upstream-private-key-file",
        metavar="PATH",
        help="authenticate with private_key_jwt, signed with the PEM key in PATH",
    )
    group.add_argument(
        "--upstream-signing-algorithm",
        metavar="ALG",
        default="ES256",
        help="the private key's JWS algorithm (default ES256)",
    )
    group.add_argument(
        "--upstream-issuer",
        metavar="URL",
        help="the authorization server the credentials belong to (default: the first met)",
    )
    group.add_argument(
        "--upstream-scope", action="append", metavar="SCOPE", help="a scope to ask for"
    )


def _given(args: argparse.Namespace) -> list[str]:
    names = ("secret_env", "secret_file", "private_key_file", "issuer", "scope")
    return [n for n in names if getattr(args, f"upstream_{n}", None) is not None]


def upstream_oauth_of(args: argparse.Namespace, upstream: str | None) -> OAuth | None:
    """The OAuth source of ``--upstream-client-id`` for ``upstream``, or None
    without it; ``ValueError`` (one line, naming no secret) for options
    that cannot work."""
    client_id = args.upstream_client_id
    if client_id is None:
        if _given(args):
            raise ValueError("the --upstream-client-* options need --upstream-client-id")
        return None
    if upstream is None:
        raise ValueError("--upstream-client-id is for an --upstream URL")
    env, file, key_file = (
        args.upstream_client_secret_env,
        args.upstream_client_secret_file,
        args.upstream_private_key_file,
    )
    if sum(x is not None for x in (env, file, key_file)) != 1:
        raise ValueError(
            "--upstream-client-id needs one of --upstream-client-secret-env, "
            "--upstream-client-secret-file, --upstream-private-key-file"
        )
    from mcp_schema.auth.secret import Secret
    from mcp_schema.oauth import ClientInfo, OAuth
    from mcp_schema.oauth.urls import is_loopback

    secret = key = None
    try:
        if env is not None:
            secret = Secret.from_env(env).reveal()
        elif file is not None:
            secret = Secret.from_file(file).reveal()
        else:
            key = _read_key(Path(key_file))
    except OSError as exc:
        raise ValueError(
            f"cannot read the upstream's client secret: {exc.strerror or exc}"
        ) from None
    issuer = args.upstream_issuer
    method = "private_key_jwt" if key is not None else None
    client = ClientInfo(client_id, secret, method, issuer)
    return OAuth(
        upstream,
        grant="client_credentials",
        client=client,
        private_key=key,
        signing_algorithm=args.upstream_signing_algorithm,
        scopes=args.upstream_scope,
        guard=not is_loopback(urlsplit(upstream).hostname),
    )


def _read_key(path: Path) -> str:
    with path.open("rb") as source:
        data = source.read(_MAX_KEY + 1)
    if len(data) > _MAX_KEY or b"-----BEGIN" not in data:
        raise ValueError(f"{path} holds no PEM private key")
    return data.decode("ascii", "replace")
