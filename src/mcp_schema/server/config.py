"""`Config`: how one replica is set up, from `mcp_schema.server.Server.asgi`'s
arguments or else the environment (hand-written runtime module).

=================  ==========================  ======================================
argument           environment                 unset
=================  ==========================  ======================================
``state_key``      ``MCP_STATE_KEY``           a random key: this process alone
``redis_url``      ``MCP_REDIS_URL``           everything in this process
``tasks_db``       ``MCP_TASKS_DB``            tasks in Redis, else in memory
``versions``       ``MCP_VERSIONS``            every version the package knows
``allowed_hosts``  ``MCP_ALLOWED_HOSTS``       loopback names on loopback, else any
``lease_seconds``  ``MCP_TASK_LEASE_SECONDS``  30 (`DEFAULT_LEASE_SECONDS`)
``drain_seconds``  ``MCP_DRAIN_SECONDS``       10 (`DRAIN_SECONDS`)
``shares``         ``MCP_SHARES``              a tenth of each table per caller
``idle_seconds``   ``MCP_SESSION_IDLE_SECONDS``  1800 (`IDLE_SECONDS`)
``auth_issuer``    ``MCP_AUTH_ISSUER``         no token asked (with ``auth_resource``)
``auth_resource``  ``MCP_AUTH_RESOURCE``       its canonical URI, as tokens name it
``auth_scopes``    ``MCP_AUTH_SCOPES``         the scopes every request needs: none
``trusted_proxies`` ``MCP_TRUSTED_PROXIES``    none: the connection's address
``access_log``     ``MCP_ACCESS_LOG``          no access log (`mcp_schema.http.access_log`)
=================  ==========================  ======================================

With ``MCP_AUTH_ISSUER`` (the authorization server's issuer URL) and
``MCP_AUTH_RESOURCE`` (this server's canonical resource URI) the replica is
a resource server (`mcp_schema.auth.ResourceServer`, the ``auth`` extra):
every request needs a JWT access token of that issuer for that resource,
and its principal is the caller's everywhere. One without the other, or
without the extra, is a `ConfigError`. ``MCP_TRUSTED_PROXIES`` names the
proxies (addresses, networks, ``*``) whose ``X-Forwarded-For`` gives the
client's address (`mcp_schema.http.proxies`).
With Redis, two more bound every call to it (`mcp_schema.redis_calls`):
``redis_connect_timeout`` (``MCP_REDIS_CONNECT_TIMEOUT``, 1 s) and
``redis_command_timeout`` (``MCP_REDIS_COMMAND_TIMEOUT``, 0.5 s).
``shares`` are what one caller may hold of each table a client fills, on
each replica (`mcp_schema.shares`): ``sessions=100,listens=20,tasks=10`` in
the environment (a mapping as an argument), naming any of `SHARED_TABLES`
(``sessions``, ``listens``, ``tasks``, ``waiting``, ``forwards``); each at
most its table's bound. ``idle_seconds``: how long a handshake-era session
may go unused before it expires.

Lists are comma-separated in the environment. A configuration that cannot
work is a `ConfigError`, one line naming the setting and what to do, which
ends the process (it is a ``SystemExit``) before it serves anything: a key
too short, an unknown version, Redis without a shared key, a task database
beside Redis, a Redis URL without the ``redis`` extra installed.
"""

from __future__ import annotations

import dataclasses
import math
import os
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_schema.http.answers import MAX_WAITING
from mcp_schema.http.forward import MAX_FORWARDS
from mcp_schema.http.sessions import IDLE_SECONDS, MAX_SESSIONS
from mcp_schema.request_state import StateKeys
from mcp_schema.subscriptions import MAX_LISTENS
from mcp_schema.tasks import DEFAULT_LEASE_SECONDS
from mcp_schema.tasks.server import MAX_LIVE
from mcp_schema.versions import SUPPORTED_VERSIONS

__all__ = ["DRAIN_SECONDS", "SHARED_TABLES", "Config", "ConfigError"]

DRAIN_SECONDS = 10.0
"""How long a replica told to stop gives the requests and tasks it runs."""

_ENV = {
    "state_key": "MCP_STATE_KEY",
    "redis_url": "MCP_REDIS_URL",
    "tasks_db": "MCP_TASKS_DB",
    "versions": "MCP_VERSIONS",
    "allowed_hosts": "MCP_ALLOWED_HOSTS",
    "lease_seconds": "MCP_TASK_LEASE_SECONDS",
    "drain_seconds": "MCP_DRAIN_SECONDS",
    "auth_issuer": "MCP_AUTH_ISSUER",
    "auth_resource": "MCP_AUTH_RESOURCE",
    "auth_scopes": "MCP_AUTH_SCOPES",
    "trusted_proxies": "MCP_TRUSTED_PROXIES",
    "redis_connect_timeout": "MCP_REDIS_CONNECT_TIMEOUT",
    "redis_command_timeout": "MCP_REDIS_COMMAND_TIMEOUT",
    "shares": "MCP_SHARES",
    "idle_seconds": "MCP_SESSION_IDLE_SECONDS",
    "access_log": "MCP_ACCESS_LOG",
}

# The redis extra's defaults, repeated: this module imports without it.
_REDIS_CONNECT_TIMEOUT = 1.0
_REDIS_COMMAND_TIMEOUT = 0.5

SHARED_TABLES: Mapping[str, int] = {
    "sessions": MAX_SESSIONS,
    "listens": MAX_LISTENS,
    "tasks": MAX_LIVE,
    "waiting": MAX_WAITING,
    "forwards": MAX_FORWARDS,
}
"""The tables ``shares`` may name, each with its bound: handshake-era
sessions, open listens, live tasks, stateless-era requests awaiting their
answer, requests forwarded from other replicas."""


class ConfigError(SystemExit):
    """A setting that cannot work: its one line (``MCP_STATE_KEY: ...``) is
    what the process says as it stops."""

    def __init__(self, setting: str, problem: str) -> None:
        super().__init__(f"{setting}: {problem}")
        self.setting, self.problem = setting, problem


@dataclass(frozen=True)
class Config:
    """One replica's settings, checked (see the module)."""

    keys: StateKeys
    redis_url: str | None
    tasks_db: str | None
    versions: tuple[str, ...] | None
    allowed_hosts: tuple[str, ...] | None
    lease_seconds: float
    drain_seconds: float
    auth: tuple[str, str] | None = None
    """The issuer and the resource of `auth_server`, or None: no token asked."""
    auth_scopes: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()

    def auth_server(self) -> Any:
        """The `mcp_schema.auth.ResourceServer` of `auth`, or None."""
        if self.auth is None:
            return None
        from mcp_schema.auth import RequiredScopes, ResourceServer  # Config checked the extra

        issuer, resource = self.auth
        required = RequiredScopes(always=self.auth_scopes)
        return ResourceServer(resource=resource, issuer=issuer, required=required)

    redis_connect_timeout: float = _REDIS_CONNECT_TIMEOUT
    redis_command_timeout: float = _REDIS_COMMAND_TIMEOUT
    shares: Mapping[str, int] = dataclasses.field(default_factory=dict)
    idle_seconds: float = IDLE_SECONDS
    access_log: str | None = None
    """The file one JSON line per request is appended to (created 0600), or None."""

    @classmethod
    def read(cls, env: Mapping[str, str] | None = None, **given: Any) -> Config:
        """The settings ``given`` (None: unset), else those of ``env``
        (default ``os.environ``); `ConfigError` for one that cannot work."""
        unknown = set(given) - set(_ENV)
        if unknown:
            raise TypeError(f"no such setting: {', '.join(sorted(unknown))}")
        environment = os.environ if env is None else env

        def setting(name: str) -> Any:
            value = given.get(name)
            return environment.get(_ENV[name]) or None if value is None else value

        redis_url = _redis_url(setting("redis_url"))
        tasks_db = setting("tasks_db")
        if redis_url and tasks_db:
            raise ConfigError(
                "MCP_TASKS_DB",
                "the tasks live in Redis when MCP_REDIS_URL is set (one store every replica "
                "reads): unset MCP_TASKS_DB",
            )
        for name, path in (("MCP_TASKS_DB", tasks_db), ("MCP_ACCESS_LOG", setting("access_log"))):
            if path and not Path(path).expanduser().resolve().parent.is_dir():
                raise ConfigError(name, f"no directory for {path!r}: create it")
        return cls(
            keys=_keys(setting("state_key"), shared=bool(redis_url)),
            redis_url=redis_url,
            tasks_db=str(tasks_db) if tasks_db else None,
            versions=_versions(setting("versions")),
            allowed_hosts=_names(setting("allowed_hosts")),
            lease_seconds=_seconds(
                setting("lease_seconds"), "MCP_TASK_LEASE_SECONDS", DEFAULT_LEASE_SECONDS
            ),
            drain_seconds=_seconds(setting("drain_seconds"), "MCP_DRAIN_SECONDS", DRAIN_SECONDS),
            auth=_auth(setting("auth_issuer"), setting("auth_resource")),
            auth_scopes=_names(setting("auth_scopes")) or (),
            trusted_proxies=_proxies(setting("trusted_proxies")),
            redis_connect_timeout=_seconds(
                setting("redis_connect_timeout"),
                "MCP_REDIS_CONNECT_TIMEOUT",
                _REDIS_CONNECT_TIMEOUT,
            ),
            redis_command_timeout=_seconds(
                setting("redis_command_timeout"),
                "MCP_REDIS_COMMAND_TIMEOUT",
                _REDIS_COMMAND_TIMEOUT,
            ),
            shares=_shares(setting("shares")),
            idle_seconds=_seconds(
                setting("idle_seconds"), "MCP_SESSION_IDLE_SECONDS", IDLE_SECONDS
            ),
            access_log=str(setting("access_log")) if setting("access_log") else None,
        )


def _shares(value: str | Mapping[str, int] | None) -> dict[str, int]:
    if value is None:
        return {}
    pairs: list[tuple[str, object]]
    if isinstance(value, str):
        pairs = [
            (name.strip(), count.strip())
            for name, _, count in (p.partition("=") for p in value.split(",") if p.strip())
        ]
    else:
        pairs = list(value.items())
    shares: dict[str, int] = {}
    for name, count in pairs:
        if name not in SHARED_TABLES:
            known = ", ".join(sorted(SHARED_TABLES))
            raise ConfigError("MCP_SHARES", f"{name[:40]!r} is no table (known: {known})")
        text, bound = str(count), SHARED_TABLES[name]
        if not (text.isascii() and text.isdigit() and 0 < int(text[:12]) <= bound):
            raise ConfigError("MCP_SHARES", f"{name}={text[:40]!r}: give a count, 1 to {bound:,}")
        shares[name] = int(text)
    return shares


def _auth(issuer: str | None, resource: str | None) -> tuple[str, str] | None:
    if issuer is None and resource is None:
        return None
    if issuer is None or resource is None:
        missing = "MCP_AUTH_ISSUER" if issuer is None else "MCP_AUTH_RESOURCE"
        raise ConfigError(
            missing, "not set: authorization needs the issuer and this server's resource URI"
        )
    try:
        from mcp_schema.auth.urls import canonical_resource, secure_url
    except ImportError:
        raise ConfigError(
            "MCP_AUTH_ISSUER", "needs the auth extra: pip install 'mcp-schema[auth]'"
        ) from None
    try:
        secure_url(issuer, "the issuer")
    except ValueError as exc:
        raise ConfigError("MCP_AUTH_ISSUER", str(exc)) from None
    try:
        canonical_resource(resource)
    except ValueError as exc:
        raise ConfigError("MCP_AUTH_RESOURCE", str(exc)) from None
    return issuer, resource


def _proxies(value: str | Collection[str] | None) -> tuple[str, ...]:
    named = _names(value) or ()
    from mcp_schema.http.proxies import TrustedProxies

    try:
        TrustedProxies(named)
    except ValueError as exc:
        raise ConfigError("MCP_TRUSTED_PROXIES", str(exc)) from None
    return named


def _names(value: str | Collection[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = value.split(",") if isinstance(value, str) else list(value)
    kept = tuple(n.strip() for n in names if n.strip())
    return kept or None


def _keys(value: str | None, *, shared: bool) -> StateKeys:
    if value is None:
        if shared:
            raise ConfigError(
                "MCP_STATE_KEY",
                "not set: replicas sharing MCP_REDIS_URL need one key, at least 32 bytes "
                "(python -c 'import secrets; print(secrets.token_urlsafe(32))')",
            )
        return StateKeys(secrets.token_urlsafe(32))  # this process's alone
    try:
        return StateKeys.from_env(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError("MCP_STATE_KEY", str(exc)) from None


def _versions(value: str | Collection[str] | None) -> tuple[str, ...] | None:
    named = _names(value)
    if named is None:
        return None
    unknown = [v for v in named if v not in SUPPORTED_VERSIONS]
    if unknown:
        raise ConfigError(
            "MCP_VERSIONS", f"unknown {', '.join(unknown)} (known: {', '.join(SUPPORTED_VERSIONS)})"
        )
    return named


def _redis_url(value: str | None) -> str | None:
    if value is None:
        return None
    if not value.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(
            "MCP_REDIS_URL", f"{value[:80]!r} is no redis://, rediss:// or unix:// URL"
        )
    try:
        import redis  # noqa: F401  (the redis extra)
    except ImportError:
        raise ConfigError(
            "MCP_REDIS_URL", "needs the Redis client: pip install 'mcp-schema[redis]'"
        ) from None
    return value


def _seconds(value: str | float | None, name: str, default: float) -> float:
    if value is None:
        return default
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise ConfigError(name, f"{value!r} is no positive number of seconds")
    return seconds
