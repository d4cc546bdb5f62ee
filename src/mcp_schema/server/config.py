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
``access_log``     ``MCP_ACCESS_LOG``          no access log (`mcp_schema.http.access_log`)
=================  ==========================  ======================================

With Redis, two more bound every call to it (`mcp_schema.redis_calls`):
``redis_connect_timeout`` (``MCP_REDIS_CONNECT_TIMEOUT``, 1 s) and
``redis_command_timeout`` (``MCP_REDIS_COMMAND_TIMEOUT``, 0.5 s).

Lists are comma-separated in the environment. A configuration that cannot
work is a `ConfigError`, one line naming the setting and what to do, which
ends the process (it is a ``SystemExit``) before it serves anything: a key
too short, an unknown version, Redis without a shared key, a task database
beside Redis, a Redis URL without the ``redis`` extra installed.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_schema.request_state import StateKeys
from mcp_schema.tasks import DEFAULT_LEASE_SECONDS
from mcp_schema.versions import SUPPORTED_VERSIONS

__all__ = ["DRAIN_SECONDS", "Config", "ConfigError"]

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
    "redis_connect_timeout": "MCP_REDIS_CONNECT_TIMEOUT",
    "redis_command_timeout": "MCP_REDIS_COMMAND_TIMEOUT",
    "access_log": "MCP_ACCESS_LOG",
}

# The redis extra's defaults, repeated: this module imports without it.
_REDIS_CONNECT_TIMEOUT = 1.0
_REDIS_COMMAND_TIMEOUT = 0.5


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
    redis_connect_timeout: float = _REDIS_CONNECT_TIMEOUT
    redis_command_timeout: float = _REDIS_COMMAND_TIMEOUT
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
            access_log=str(setting("access_log")) if setting("access_log") else None,
        )


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
