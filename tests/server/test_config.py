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
        ({"MCP_REDIS_COMMAND_TIMEOUT": "0"}, "MCP_REDIS_COMMAND_TIMEOUT: '0' is no positive"),
        ({"MCP_REDIS_CONNECT_TIMEOUT": "inf"}, "MCP_REDIS_CONNECT_TIMEOUT: 'inf' is no positive"),
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
