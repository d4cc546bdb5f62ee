"""The gateway as a resource server of its own: the ``--auth-*`` and
``--trusted-proxy`` options of ``python -m mcp_schema gateway``
(`add_auth_arguments`) and the `mcp_schema.auth.ResourceServer` they make
(`resource_server_of`), which the gateway's one front door
(`mcp_schema.http.precheck.Precheck`) checks each client's token with.

=================================  ==============================  =========================
option                             environment                     what
=================================  ==============================  =========================
``--auth-issuer URL``              ``MCP_AUTH_ISSUER``             the authorization server
``--auth-resource URI``            ``MCP_AUTH_RESOURCE``           the gateway's own URI
``--auth-scope SCOPE`` (repeated)  ``MCP_AUTH_SCOPES`` (commas)    needed by every request
``--auth-introspection URL``       ``MCP_AUTH_INTROSPECTION``      opaque tokens: RFC 7662
``--auth-client-id ID``            ``MCP_AUTH_CLIENT_ID``          the gateway as its client
``--auth-client-secret-file F``    ``MCP_AUTH_CLIENT_SECRET``      its secret (env or file)
``--trusted-proxy ADDR``           ``MCP_TRUSTED_PROXIES``         whose X-Forwarded-For counts
=================================  ==============================  =========================

An option given wins over its variable. The issuer and the resource go
together; without them no token is asked. With ``--auth-introspection``
(``discover``: the endpoint the issuer's metadata names) tokens are opaque
and checked by introspection, as client ``--auth-client-id``, whose secret
is never an argument (a command line is visible to every user of the
machine): the file, else the variable.

The resource is the gateway's canonical URI (``https://gateway.example/mcp``),
the audience its clients' tokens must name: a token issued for the upstream
is not the gateway's, and the gateway never passes a client's token on.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_schema.auth.server import ResourceServer

__all__ = ["add_auth_arguments", "resource_server_of", "trusted_proxies_of"]

_SECRET_ENV = "MCP_AUTH_CLIENT_SECRET"


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--auth-*`` and ``--trusted-proxy`` options, on ``parser``."""
    group = parser.add_argument_group(
        "authorization (the gateway's own; see docs/guide/authorization.md)"
    )
    group.add_argument("--auth-issuer", metavar="URL", help="the issuer whose tokens clients bring")
    group.add_argument(
        "--auth-resource", metavar="URI", help="the gateway's canonical URI, the tokens' audience"
    )
    group.add_argument(
        "--auth-scope", action="append", metavar="SCOPE", help="a scope every request needs"
    )
    group.add_argument(
        "--auth-introspection",
        metavar="URL",
        help="check opaque tokens at this introspection endpoint ('discover': the issuer's)",
    )
    group.add_argument("--auth-client-id", metavar="ID", help="the gateway's client id there")
    group.add_argument(
        "--auth-client-secret-file",
        metavar="FILE",
        help=f"the file holding its client secret (default: ${_SECRET_ENV})",
    )
    group.add_argument(
        "--trusted-proxy",
        action="append",
        metavar="ADDR",
        help="a proxy (address, network or *) whose X-Forwarded-For names the client",
    )


def _given(
    args: argparse.Namespace, name: str, env: Mapping[str, str], variable: str
) -> str | None:
    value = getattr(args, name, None)
    return value if value is not None else env.get(variable) or None


def _listed(
    args: argparse.Namespace, name: str, env: Mapping[str, str], variable: str
) -> list[str]:
    given = getattr(args, name, None)
    values = given if given is not None else (env.get(variable) or "").split(",")
    return [v.strip() for v in values if v.strip()]


def trusted_proxies_of(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> list[str]:
    """``--trusted-proxy``, else ``MCP_TRUSTED_PROXIES``."""
    return _listed(args, "trusted_proxy", os.environ if env is None else env, "MCP_TRUSTED_PROXIES")


def resource_server_of(
    args: argparse.Namespace, env: Mapping[str, str] | None = None
) -> ResourceServer | None:
    """The gateway's `ResourceServer`, or None without ``--auth-issuer``;
    ``ValueError`` (one line) for settings that cannot work."""
    environment = os.environ if env is None else env
    issuer = _given(args, "auth_issuer", environment, "MCP_AUTH_ISSUER")
    resource = _given(args, "auth_resource", environment, "MCP_AUTH_RESOURCE")
    introspection = _given(args, "auth_introspection", environment, "MCP_AUTH_INTROSPECTION")
    if issuer is None and resource is None:
        if introspection is not None:
            raise ValueError("--auth-introspection needs --auth-issuer and --auth-resource")
        return None
    if issuer is None or resource is None:
        raise ValueError("--auth-issuer and --auth-resource go together")
    try:
        from mcp_schema.auth import Introspector, RequiredScopes, ResourceServer, Secret
    except ImportError:
        raise ValueError("--auth-* needs the auth extra: pip install 'mcp-schema[auth]'") from None
    required = RequiredScopes(always=_listed(args, "auth_scope", environment, "MCP_AUTH_SCOPES"))
    if introspection is None:
        return ResourceServer(resource=resource, issuer=issuer, required=required)
    client_id = _given(args, "auth_client_id", environment, "MCP_AUTH_CLIENT_ID")
    if client_id is None:
        raise ValueError("--auth-introspection needs --auth-client-id")
    secret_file = _given(
        args, "auth_client_secret_file", environment, "MCP_AUTH_CLIENT_SECRET_FILE"
    )
    try:
        secret = Secret.from_file(secret_file) if secret_file else Secret.from_env(_SECRET_ENV)
    except OSError as exc:
        raise ValueError(f"cannot read --auth-client-secret-file: {exc.strerror or exc}") from None
    verifier = Introspector(
        issuer,
        resource,
        client_id=client_id,
        client_secret=secret,
        endpoint=None if introspection == "discover" else introspection,
    )
    return ResourceServer(
        resource=resource, verifier=verifier, authorization_servers=[issuer], required=required
    )
