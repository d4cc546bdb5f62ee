"""``python -m mcp_schema serve module:server``, with ``--host``, ``--port``,
``--workers`` and ``--app-dir`` (hand-written runtime module): a
`mcp_schema.server.Server` run by uvicorn (the ``serve`` extra:
``pip install 'mcp-schema[serve]'``).

``module:server`` names the `Server` (or an ASGI app) as uvicorn names an
app, imported from the current directory first. The settings are those of
`mcp_schema.server.config`, from the environment; they are read once here,
before anything listens, so one that cannot work stops the command with its
one line (exit status 2). With ``--workers N`` (which needs
``MCP_REDIS_URL``: the workers are replicas) each worker process builds its
own app from the same environment (uvicorn imports `worker_app` by name in
each). uvicorn's graceful shutdown waits
``MCP_DRAIN_SECONDS`` for the requests in flight (`mcp_schema.server.app`).

``--metrics HOST:PORT`` serves the metrics on a listener of its own
(`mcp_schema.telemetry.prometheus`; one process: not with ``--workers``),
``--access-log FILE`` sets ``MCP_ACCESS_LOG`` (every worker reads it).
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from typing import Any

from mcp_schema.http.proxies import UVICORN_OPTIONS
from mcp_schema.server.config import Config, ConfigError

__all__ = ["TARGET", "ServeError", "loaded", "main", "worker_app"]

TARGET = "MCP_SERVE_TARGET"
"""The environment variable naming ``module:server`` to each worker
(``MCP_SERVE_TARGET_APP_DIR``: where it is found)."""


class ServeError(Exception):
    """The command cannot start (exit status 2, its one line)."""


def loaded(target: str, app_dir: str = ".") -> Any:
    """The ASGI app of ``module:attribute``, found in ``app_dir`` first: a
    `Server`'s (`Server.asgi`), or the app itself."""
    from mcp_schema.server.core import Server

    module_name, colon, attribute = target.partition(":")
    if not colon or not module_name or not attribute:
        raise ServeError(f"name the server as module:attribute, not {target!r}")
    sys.path.insert(0, os.path.abspath(app_dir))
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except ImportError as exc:
        raise ServeError(f"cannot import {module_name!r}: {exc}") from None
    except AttributeError:
        raise ServeError(f"{module_name!r} has no {attribute!r}") from None
    return found.asgi() if isinstance(found, Server) else found


def worker_app() -> Any:
    """The app of one worker process (uvicorn's factory, ``--workers N``)."""
    return loaded(os.environ[TARGET], os.environ.get(TARGET + "_APP_DIR", "."))


def main(args: argparse.Namespace) -> int:
    """The ``serve`` subcommand (its arguments: ``mcp_schema.cli``): the exit status."""
    try:
        import uvicorn
    except ImportError:
        print("error: serve needs uvicorn: pip install 'mcp-schema[serve]'", file=sys.stderr)
        return 2
    try:
        if args.workers < 1 or not 0 <= args.port <= 65535:
            raise ServeError("--workers must be at least 1 and --port 0 to 65535")
        if args.access_log:
            os.environ["MCP_ACCESS_LOG"] = args.access_log
        config = Config.read()  # the settings checked before anything listens
        if args.workers > 1 and args.metrics:
            raise ServeError("--metrics is one process's listener: run one worker with it")
        if args.workers > 1 and config.redis_url is None:
            raise ServeError(
                "--workers: worker processes share sessions, tasks and asks only through "
                "Redis: set MCP_REDIS_URL (and MCP_STATE_KEY), or run one worker"
            )
        metrics = _metrics(args.metrics) if args.metrics else None
        app = loaded(args.target, args.app_dir)
    except (ServeError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_level": args.log_level,
        "lifespan": "on",
        "timeout_graceful_shutdown": math.ceil(config.drain_seconds),
        **UVICORN_OPTIONS,
    }
    if args.workers > 1:
        os.environ[TARGET], os.environ[TARGET + "_APP_DIR"] = args.target, args.app_dir
        uvicorn.run(f"{__name__}:worker_app", factory=True, workers=args.workers, **options)
    else:
        try:
            uvicorn.run(app, **options)
        finally:
            if metrics is not None:
                metrics.close()
    return 0


def _metrics(address: str) -> Any:
    """The metrics listener (`serve_metrics`), started before the app is built
    so that its meter provider is the global one the app records to."""
    try:
        from mcp_schema.telemetry.prometheus import serve_metrics

        listener = serve_metrics(address)
    except ImportError as exc:
        raise ServeError(
            f"--metrics needs the prometheus extra ({exc.name}): "
            "pip install 'mcp-schema[prometheus]'"
        ) from None
    except (ValueError, OSError) as exc:
        raise ServeError(f"--metrics {address}: {exc}") from None
    print(f"serve: metrics on http://{listener.host}:{listener.port}/metrics", file=sys.stderr)
    return listener
