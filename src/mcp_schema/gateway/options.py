"""What the gateway's options are read into: the precheck of its door
(``--allowed-host``, ``--allowed-origin``, the ``--auth-*`` options), the
upstream's credentials and timeouts, the shares of its tables
(``--share-sessions``, ``--share-upstreams``); each option that cannot work is a
`GatewayError` naming it (`mcp_schema.gateway.command` runs them); and the
event loop it runs on (``--loop``)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import ipaddress
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import urlsplit

from mcp_schema.errors import McpError, quote
from mcp_schema.gateway.auth_options import resource_server_of, trusted_proxies_of

if TYPE_CHECKING:
    from mcp_schema.gateway.http_upstream import Credentials
    from mcp_schema.http.pool import Timeouts
    from mcp_schema.http.precheck import Precheck

__all__ = [
    "LOOPS",
    "MOST_SHARED",
    "GatewayError",
    "SessionBounds",
    "ShareBound",
    "UpstreamBounds",
    "credentials_of",
    "loop_runner",
    "precheck_of",
    "seconds",
    "sessions_of",
    "share_bound",
    "timeouts_of",
    "upstreams_of",
]

MOST_SHARED = 1_000_000
"""The largest bound ``--share-*`` takes (a table's entries each hold memory,
a child process or an upstream session)."""


class GatewayError(Exception):
    """The gateway could not start (exit status 2)."""


def _host_name(value: str) -> str:
    """An ``--allowed-host`` value as `Precheck` takes it (lower-case, IPv6 without brackets)."""
    name = value.lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if ":" in name:  # an IPv6 address, or a port that does not belong here
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            name = ""
    if not name or any(c in name for c in "/@ \t"):
        raise GatewayError(f"--allowed-host takes a host name, without a port: not {quote(value)}")
    return name


def _origin(value: str) -> str:
    """An ``--allowed-origin`` value as browsers send an ``Origin``: scheme, host, port."""
    origin = value.rstrip("/")
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - a malformed port raises ValueError here
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
        raise GatewayError(
            f"--allowed-origin takes an origin, as https://app.example: not {quote(value)}"
        )
    return origin


def precheck_of(args: argparse.Namespace) -> Precheck | None:
    """The gateway's precheck from ``--allowed-host``, ``--allowed-origin``,
    the ``--auth-*`` options and ``--trusted-proxy``
    (`mcp_schema.gateway.auth_options`; None: none given, the app's own default)."""
    from mcp_schema.http.precheck import Precheck

    try:
        auth, proxies = resource_server_of(args), trusted_proxies_of(args)
    except ValueError as exc:
        raise GatewayError(str(exc)) from None
    if args.allowed_host is None and not args.allowed_origin and auth is None and not proxies:
        return None
    hosts = None if args.allowed_host is None else [_host_name(h) for h in args.allowed_host]
    # No body size of its own, as the apps' default: the validator's max_body rules.
    try:
        return Precheck(
            allowed_hosts=hosts,
            allowed_origins=[_origin(o) for o in args.allowed_origin],
            max_body=sys.maxsize,
            auth=auth,
            trusted_proxies=proxies,
        )
    except ValueError as exc:  # a --trusted-proxy that is no address
        raise GatewayError(str(exc)) from None


@dataclass(frozen=True)
class ShareBound:
    """The bounds of one of the gateway's tables (`mcp_schema.shares.Share`),
    as ``--share-sessions`` or ``--share-upstreams`` give them: ``per_key``
    entries per caller, at most ``total``, ``total`` in all."""

    per_key: int
    total: int


def _count(text: str) -> int | None:
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 7):
        return None
    count = int(digits)
    return count if 0 < count <= MOST_SHARED else None


def share_bound(value: str) -> ShareBound:
    """A ``--share-*`` value, ``PER:TOTAL``: two counts from 1 to
    `MOST_SHARED`, the caller's at most the table's (checked here, once)."""
    per, colon, total = value.partition(":")
    per_key, bound = _count(per), _count(total)
    if not colon or per_key is None or bound is None:
        raise argparse.ArgumentTypeError(
            f"give PER:TOTAL, two counts from 1 to {MOST_SHARED:,}: not {quote(value)}"
        )
    if per_key > bound:
        raise argparse.ArgumentTypeError(
            f"a caller's share ({per_key:,}) must not exceed the table's ({bound:,}): "
            f"not {quote(value)}"
        )
    return ShareBound(per_key, bound)


class SessionBounds(TypedDict, total=False):
    """The arguments of the sessions' share, as the constructors take them."""

    max_sessions: int
    max_sessions_per_key: int


class UpstreamBounds(TypedDict, total=False):
    """The arguments of the bridge's upstream sessions' share."""

    max_upstreams: int
    max_upstreams_per_key: int


def sessions_of(bound: ShareBound | None) -> SessionBounds:
    """``--share-sessions`` as arguments (none given: the constructors' defaults)."""
    if bound is None:
        return {}
    return {"max_sessions": bound.total, "max_sessions_per_key": bound.per_key}


def upstreams_of(bound: ShareBound | None) -> UpstreamBounds:
    """``--share-upstreams`` as arguments (none given: the constructors' defaults)."""
    if bound is None:
        return {}
    return {"max_upstreams": bound.total, "max_upstreams_per_key": bound.per_key}


def seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < 86400:  # nan and inf fail too
        raise argparse.ArgumentTypeError(f"not a number of seconds: {quote(value)}")
    return seconds


def credentials_of(args: argparse.Namespace, child: list[str]) -> Credentials:
    """What the upstream requests carry (``--upstream-token-env``,
    ``--upstream-token-file``, ``--upstream-client-id`` with its options,
    ``--pass-authorization``: one at most)."""
    from mcp_schema.gateway.http_upstream import Credentials
    from mcp_schema.gateway.upstream_oauth import upstream_oauth_of
    from mcp_schema.http.credentials import CredentialSource, StaticToken

    env, file, passed = args.upstream_token_env, args.upstream_token_file, args.pass_authorization
    client_id = getattr(args, "upstream_client_id", None)
    if sum((env is not None, file is not None, bool(passed), client_id is not None)) > 1:
        raise GatewayError(
            "give one of --upstream-token-env, --upstream-token-file, --upstream-client-id, "
            "--pass-authorization"
        )
    if child and (env is not None or file is not None or passed or args.upstream_read_timeout):
        raise GatewayError("the upstream's credentials and timeout are for an --upstream URL")
    try:
        source: CredentialSource | None = None
        if env is not None:
            source = StaticToken.from_env(env)
        elif file is not None:
            source = StaticToken.from_file(file)
        elif hasattr(args, "upstream_client_id"):
            source = upstream_oauth_of(args, None if child else args.upstream)
    except (ValueError, McpError) as exc:  # the message names the variable or file, never a secret
        raise GatewayError(str(exc) if isinstance(exc, ValueError) else exc.message) from None
    return Credentials(source, pass_authorization=passed)


def timeouts_of(args: argparse.Namespace) -> Timeouts | None:
    """The upstream's timeouts (``--upstream-read-timeout``; None: the gateway's default)."""
    import dataclasses

    from mcp_schema.gateway.http_upstream import UPSTREAM_TIMEOUTS

    read = args.upstream_read_timeout
    return None if read is None else dataclasses.replace(UPSTREAM_TIMEOUTS, read=read)


LOOPS = ("auto", "asyncio", "uvloop")
"""``--loop``'s choices, uvicorn's own: ``auto`` is uvloop where it is installed."""


def loop_runner(loop: str) -> Callable[[Coroutine[Any, Any, None]], None]:
    """What runs the gateway's main coroutine to its end: `asyncio.run`, or
    uvloop's ``run`` (``auto``: uvloop where installed, as uvicorn's default
    picks; ``uvloop`` where it is not: a `GatewayError`)."""
    if loop not in LOOPS:
        raise GatewayError(f"--loop must be one of {', '.join(LOOPS)}, not {quote(loop)}")
    if loop == "asyncio":
        return asyncio.run
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        if loop == "uvloop":
            raise GatewayError("--loop uvloop needs uvloop: pip install uvloop") from None
        return asyncio.run
    run: Callable[[Coroutine[Any, Any, None]], None] = uvloop.run
    return run
