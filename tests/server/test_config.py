"""`mcp_schema.server.config`: a replica's settings from the arguments, else
the environment; one that cannot work stops the start with one line."""

from __future__ import annotations

import pytest

from mcp_schema.server.config import DRAIN_SECONDS, Config, ConfigError
from mcp_schema.tasks import DEFAULT_LEASE_SECONDS

KEY = "the shared key of every replica of 32 bytes"


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"MCP_STATE_KEY": "too short"},
            "MCP_STATE_KEY: keys[0] has 9 bytes; a key needs at least 32",
        ),
        (
            {"MCP_REDIS_URL": "redis://127.0.0.1:1/0"},
            "MCP_STATE_KEY: not set: replicas sharing MCP_REDIS_URL",
        ),
        ({"MCP_VERSIONS": "2025-06-18,2099-01-01"}, "MCP_VERSIONS: unknown 2099-01-01 (known: "),
        ({"MCP_REDIS_URL": "http://redis"}, "MCP_REDIS_URL: 'http://redis' is no redis://"),
        (
            {
                "MCP_REDIS_URL": "redis://127.0.0.1:1/0",
                "MCP_STATE_KEY": KEY,
                "MCP_TASKS_DB": "t.db",
            },
            "MCP_TASKS_DB: the tasks live in Redis",
        ),
        ({"MCP_TASKS_DB": "/no/such/directory/tasks.db"}, "MCP_TASKS_DB: no directory for"),
        ({"MCP_TASK_LEASE_SECONDS": "-1"}, "MCP_TASK_LEASE_SECONDS: '-1' is no positive number"),
        ({"MCP_DRAIN_SECONDS": "soon"}, "MCP_DRAIN_SECONDS: 'soon' is no positive number"),
        ({"MCP_AUTH_ISSUER": "https://auth.example"}, "MCP_AUTH_RESOURCE: not set"),
        ({"MCP_AUTH_RESOURCE": "https://mcp.example/mcp"}, "MCP_AUTH_ISSUER: not set"),
        (
            {
                "MCP_AUTH_ISSUER": "http://auth.example",
                "MCP_AUTH_RESOURCE": "https://m.example/mcp",
            },
            "MCP_AUTH_ISSUER: the issuer must be https",
        ),
        (
            {"MCP_AUTH_ISSUER": "https://auth.example", "MCP_AUTH_RESOURCE": "https://M.example/"},
            "MCP_AUTH_RESOURCE: resource must",
        ),
        ({"MCP_TRUSTED_PROXIES": "10.0.0.0/8, nginx"}, "MCP_TRUSTED_PROXIES: "),
        ({"MCP_REDIS_COMMAND_TIMEOUT": "0"}, "MCP_REDIS_COMMAND_TIMEOUT: '0' is no positive"),
        ({"MCP_REDIS_CONNECT_TIMEOUT": "inf"}, "MCP_REDIS_CONNECT_TIMEOUT: 'inf' is no positive"),
        ({"MCP_SHARES": "sessions=10,rooms=2"}, "MCP_SHARES: 'rooms' is no table (known: "),
        ({"MCP_SHARES": "listens=0"}, "MCP_SHARES: listens='0': give a count, 1 to 1,024"),
        ({"MCP_SHARES": "sessions=20000"}, "MCP_SHARES: sessions='20000': give a count"),
        ({"MCP_SESSION_IDLE_SECONDS": "0"}, "MCP_SESSION_IDLE_SECONDS: '0' is no positive"),
    ],
)
def test_a_setting_that_cannot_work_stops_the_start_with_one_line(
    env: dict[str, str], said: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        Config.read(env)
    line = str(raised.value)
    assert line.startswith(said) and "\n" not in line
    assert isinstance(raised.value, SystemExit)  # uncaught, the process says it and stops


def test_unset_everything_is_one_process_with_every_version() -> None:
    config = Config.read({})
    assert (config.redis_url, config.tasks_db, config.versions, config.allowed_hosts) == (None,) * 4
    assert (config.lease_seconds, config.drain_seconds) == (DEFAULT_LEASE_SECONDS, DRAIN_SECONDS)
    assert Config.read({}).keys.key_ids != config.keys.key_ids  # a random key, this process's


def test_arguments_rule_over_the_environment_and_lists_are_comma_separated() -> None:
    env = {"MCP_VERSIONS": "2099-01-01", "MCP_ALLOWED_HOSTS": "a.example, b.example"}
    config = Config.read(env, versions=["2026-07-28"], lease_seconds=2)
    assert config.versions == ("2026-07-28",) and config.lease_seconds == 2.0
    assert config.allowed_hosts == ("a.example", "b.example")
    rotating = Config.read({"MCP_STATE_KEY": f"{KEY}-new,{KEY}"})
    assert len(rotating.keys.key_ids) == 2


def test_redis_is_bounded_by_default_and_as_configured() -> None:
    config = Config.read({})
    assert (config.redis_connect_timeout, config.redis_command_timeout) == (1.0, 0.5)
    env = {"MCP_REDIS_CONNECT_TIMEOUT": "2", "MCP_REDIS_COMMAND_TIMEOUT": "0.25"}
    config = Config.read(env, redis_command_timeout=0.75)
    assert (config.redis_connect_timeout, config.redis_command_timeout) == (2.0, 0.75)


def test_an_unknown_setting_is_the_callers_mistake() -> None:
    with pytest.raises(TypeError, match="no such setting: colour"):
        Config.read({}, colour="blue")


def test_shares_and_the_idle_time_of_sessions_reach_every_table() -> None:
    from mcp_schema.http import MemorySessions
    from mcp_schema.server import Server

    env = {
        "MCP_SHARES": "sessions=7, listens=3,tasks=2,waiting=5",
        "MCP_SESSION_IDLE_SECONDS": "60",
    }
    config = Config.read(env)
    assert config.shares == {"sessions": 7, "listens": 3, "tasks": 2, "waiting": 5}
    assert config.idle_seconds == 60.0
    app = Server("shares-test").asgi(env=env)
    sessions = app.endpoint.sessions
    assert isinstance(sessions, MemorySessions) and sessions.share.per_key == 7
    assert sessions.idle_seconds == 60.0
    assert app.endpoint.subscriptions.share.per_key == 3
    assert app.endpoint.tasks is not None and app.endpoint.tasks.share.per_key == 2
    assert app.endpoint._answers.share.per_key == 5
    assert Config.read({}, shares={"forwards": 9}).shares == {"forwards": 9}


def test_authorization_is_on_with_an_issuer_and_a_resource() -> None:
    assert Config.read({}).auth_server() is None
    env = {
        "MCP_AUTH_ISSUER": "https://auth.example",
        "MCP_AUTH_RESOURCE": "https://mcp.example/mcp",
        "MCP_AUTH_SCOPES": "mcp, files:read",
        "MCP_TRUSTED_PROXIES": "10.0.0.0/8,127.0.0.1",
    }
    config = Config.read(env)
    made = config.auth_server()
    assert made is not None and made.metadata.resource == "https://mcp.example/mcp"
    assert made.required.always == frozenset({"mcp", "files:read"})
    assert config.trusted_proxies == ("10.0.0.0/8", "127.0.0.1")
