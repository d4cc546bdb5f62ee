"""`build`: one replica of a `mcp_schema.server.Server` as an ASGI app, the
pieces a hand-written server assembles (``examples/http_server.py`` before
this layer) made from a `Config` (hand-written runtime module).

* Without ``MCP_REDIS_URL``: an `App` over an `Endpoint`, sessions, listens
  and tasks in this process (tasks in ``MCP_TASKS_DB`` when set, a
  `SqliteTaskStore`).
* With it: a `ClusterApp` over a `RedisBroker`, the sessions recorded in it
  (`BrokerSessions`), the tasks in a `RedisTaskStore` on the same Redis,
  and the listens of every replica fed by one `Relay`: any replica serves
  any request, handshake-era sessions included.

With ``MCP_AUTH_ISSUER`` and ``MCP_AUTH_RESOURCE`` the endpoint's front
door is a resource server (`mcp_schema.auth.ResourceServer`): the protected
resource metadata served, every request's token checked, its principal the
caller's everywhere (`mcp_schema.http.precheck`).

Either way the ``requestState`` of a 2026-07-28 question is sealed under
``MCP_STATE_KEY`` (`StateSealer`), the tool set is shared through the broker
(`mcp_schema.server.toolset`), and the app has ``/healthz`` and ``/readyz``
(`mcp_schema.server.health`).

Stopping (`ServerApp.drain`, on SIGTERM or SIGINT when the ASGI server
handles them, as uvicorn does; else at the lifespan's shutdown):

1. readiness answers 503 and every ``subscriptions/listen`` stream ends
   (``notifications/cancelled``), so its client listens again, on a replica
   that stays; the ASGI server stops accepting connections and waits for
   the requests in flight (uvicorn's ``--timeout-graceful-shutdown``, which
   ``python -m mcp_schema serve`` sets to ``MCP_DRAIN_SECONDS``);
2. at the lifespan's shutdown, the tasks still running get what is left of
   ``drain_seconds`` since the drain began, then each is handed back: its
   work stops and its lease ends now, so every replica reports it failed
   at once (`mcp_schema.tasks.store.WORKER_STOPPED`), not once the lease
   would have passed;
3. sessions end, the relay stops, the stores and the broker close.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import threading
import time
from collections.abc import Collection, Mapping
from types import FrameType
from typing import TYPE_CHECKING, Any

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.broker import Broker, InProcessBroker
from mcp_schema.http import Endpoint, MemorySessions, SessionStore
from mcp_schema.http.access_log import AccessLog
from mcp_schema.http.adapter import Receive, Scope, Send, serve_lifespan
from mcp_schema.http.asgi import App
from mcp_schema.request_state import StateSealer
from mcp_schema.server.config import Config
from mcp_schema.server.health import HEALTH, READY, Health
from mcp_schema.server.toolset import Refreshing
from mcp_schema.subscription_relay import Relay
from mcp_schema.subscriptions import TASKS, supported_by
from mcp_schema.tasks import TaskServer, TaskStore

if TYPE_CHECKING:
    from mcp_schema.http.forward import ClusterApp
    from mcp_schema.server.core import Server

__all__ = ["ServerApp", "build"]

_LOG = logging.getLogger("mcp_schema.server")
_STOPPING = "the server is stopping: listen again"
_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_HEALTH_PATHS = frozenset((HEALTH, READY))


def build(
    server: Server,
    *,
    env: Any = None,
    path: str = "/mcp",
    allowed_origins: Collection[str] = (),
    drain_on_signal: bool = True,
    state_key: str | None = None,
    redis_url: str | None = None,
    tasks_db: str | None = None,
    versions: str | Collection[str] | None = None,
    allowed_hosts: str | Collection[str] | None = None,
    lease_seconds: float | None = None,
    drain_seconds: float | None = None,
    auth_issuer: str | None = None,
    auth_resource: str | None = None,
    auth_scopes: str | Collection[str] | None = None,
    trusted_proxies: str | Collection[str] | None = None,
    redis_connect_timeout: float | None = None,
    redis_command_timeout: float | None = None,
    shares: str | Mapping[str, int] | None = None,
    idle_seconds: float | None = None,
    **endpoint: Any,
) -> ServerApp:
    """The replica's app (see the module): the settings of `Config` from the
    arguments, else from ``env`` (``os.environ``); ``endpoint``: more `Endpoint`
    options (``max_body``, ``principal``, ``auth``: a `ResourceServer`, ``telemetry``:
    told the tools and prompts defined by now...)."""
    config = Config.read(
        env,
        state_key=state_key,
        redis_url=redis_url,
        tasks_db=tasks_db,
        versions=versions,
        allowed_hosts=allowed_hosts,
        lease_seconds=lease_seconds,
        drain_seconds=drain_seconds,
        redis_connect_timeout=redis_connect_timeout,
        redis_command_timeout=redis_command_timeout,
        shares=shares,
        idle_seconds=idle_seconds,
        auth_issuer=auth_issuer,
        auth_resource=auth_resource,
        auth_scopes=auth_scopes,
        trusted_proxies=trusted_proxies,
    )
    share, (broker, sessions) = config.shares.get, _shared(config)
    auth, access = _authorization(server, config, endpoint)
    tasks, listens = _tables(server, config)
    made = Endpoint(
        server.handler,
        info=server.info,
        capabilities=server.capabilities,
        instructions=server.instructions,
        versions=config.versions,
        handler_version=mcp.VERSION,
        path=path,
        allowed_hosts=config.allowed_hosts,
        allowed_origins=allowed_origins,
        sessions=sessions,
        subscriptions=listens,
        request_state=StateSealer(config.keys, claims=broker),
        tasks=tasks,
        tools=functools.partial(getattr, server.tools, "headers"),  # per request: no Python frame
        answer_seconds=server.timeout,
        max_waiting_per_key=share("waiting"),
        auth=auth,
        trusted_proxies=config.trusted_proxies,
        access=access,
        **endpoint,
    )
    _observed(server, made, broker if config.redis_url else None)
    relay = Relay(listens, broker)
    channel = f"mcp-schema/server/{server.info['name']}/tools"
    server.tools.bind(broker, channel, relay.tools_list_changed)
    app = App(made, relay=relay, access_log=AccessLog.of(config.access_log))
    inner = _clustered(app, config)
    return ServerApp(server, inner, made, broker, config, drain_on_signal=drain_on_signal)


def _clustered(app: App, config: Config) -> App | ClusterApp:
    """``app`` as a replica of a cluster sharing Redis (any replica serves any
    session), or as it is without Redis."""
    if not config.redis_url:
        return app
    from mcp_schema.http.forward import ClusterApp

    return ClusterApp(app, max_forwards_per_key=config.shares.get("forwards"))


def _tables(server: Server, config: Config) -> tuple[TaskServer, Refreshing]:
    """The tasks and the listens, each with its share per caller."""
    share = config.shares.get
    store = _task_store(config)
    tasks = TaskServer(store, lease_seconds=config.lease_seconds, max_live_per_key=share("tasks"))
    sent = supported_by(server.capabilities) | {TASKS}
    return tasks, Refreshing(server.tools, supported=sent, max_listens_per_key=share("listens"))


def _authorization(server: Server, config: Config, endpoint: dict[str, Any]) -> tuple[Any, Any]:
    """The resource server (given, or of ``MCP_AUTH_*``) and the access
    rules (given, or the server's), the latter protected by the former: its
    step-up challenges name this server's metadata."""
    auth = endpoint.pop("auth", None) or config.auth_server()
    access = endpoint.pop("access", server.access)
    if auth is not None and access is not None:
        access.protected_by(auth)
    return auth, access


def _shared(config: Config) -> tuple[Broker, SessionStore]:
    """Redis's broker and the sessions recorded in it, else this process's
    (each with its share per caller, and its idle time)."""
    per_key, idle = config.shares.get("sessions"), config.idle_seconds
    if not config.redis_url:
        return InProcessBroker(), MemorySessions(max_per_key=per_key, idle_seconds=idle)
    from mcp_schema.http.shared_sessions import BrokerSessions
    from mcp_schema.redis_broker import RedisBroker  # the redis extra: Config checked it

    broker = RedisBroker.from_url(
        config.redis_url,
        connect_timeout=config.redis_connect_timeout,
        command_timeout=config.redis_command_timeout,
    )
    return broker, BrokerSessions(broker, max_per_key=per_key, idle_seconds=idle)


def _observed(server: Server, made: Endpoint, shared: Broker | None) -> None:
    """The endpoint's telemetry told the names the server defines by now (they
    are recorded as they are), and the shared broker's round trips counted
    (the in-process broker makes none)."""
    if made.telemetry is not None:
        made.telemetry.declare(tools=server.tools.tools, prompts=server.prompts)
    if shared is not None:
        shared.telemetry = made.telemetry


def _task_store(config: Config) -> TaskStore | None:
    """Redis's, else the SQLite file's, else None (this process's memory)."""
    if config.redis_url:
        from mcp_schema.tasks.redis_store import RedisTaskStore

        return RedisTaskStore(
            config.redis_url,
            connect_timeout=config.redis_connect_timeout,
            command_timeout=config.redis_command_timeout,
        )
    if config.tasks_db:
        from mcp_schema.tasks.sqlite_store import SqliteTaskStore

        return SqliteTaskStore(config.tasks_db)
    return None


class ServerApp:
    """The ASGI app of one replica (see the module): ``endpoint`` served by
    ``inner``, the health routes, the lifespan and the drain."""

    def __init__(
        self,
        server: Server,
        inner: App | ClusterApp,
        endpoint: Endpoint,
        broker: Broker,
        config: Config,
        *,
        drain_on_signal: bool = True,
    ) -> None:
        self.server, self.inner, self.endpoint, self.broker = server, inner, endpoint, broker
        self.config = config
        self.drain_on_signal = drain_on_signal
        self.health = Health(endpoint.rules, broker if config.redis_url else None, self._draining)
        self.drained_at: float | None = None
        """When the drain began (`time.monotonic`), or None."""
        self._previous: dict[int, Any] = {}

    def _draining(self) -> bool:
        return self.drained_at is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http" and scope["path"] not in _HEALTH_PATHS:
            return await self.inner(scope, receive, send)  # the endpoint's: told apart first
        if kind == "lifespan":
            return await serve_lifespan(receive, send, self.start, self.stop)
        if kind == "http":
            return await self.health(scope, receive, send)
        await self.inner(scope, receive, send)

    async def start(self) -> None:
        """The lifespan's startup: the inner app's (the relay, the forwarding),
        the shared tool set read, the signals heard."""
        await self.inner.start()
        await self.server.tools.load()
        if self.drain_on_signal:
            self._hear_signals()

    def drain(self) -> None:
        """Begin stopping (see the module, step 1); once."""
        if self.drained_at is not None:
            return
        self.drained_at = time.monotonic()
        _LOG.info("draining: readiness off, listens ended")
        self.endpoint.subscriptions.cancel(_STOPPING)

    async def stop(self) -> None:
        """The lifespan's shutdown (steps 2 and 3)."""
        self.drain()
        self._restore_signals()
        await self._hand_back()
        await self.inner.stop()
        if not isinstance(self.inner, App) and self.endpoint.tasks is not None:
            await self.endpoint.tasks.aclose()  # App.stop closes them; ClusterApp's does not
        if self.endpoint.rules.auth is not None:
            await self.endpoint.rules.auth.aclose()  # its HTTP client
        await self.broker.aclose()

    async def _hand_back(self) -> None:
        tasks = self.endpoint.tasks
        if tasks is None:
            return
        assert self.drained_at is not None
        running = self.server.dispatch.running
        deadline = self.drained_at + self.config.drain_seconds
        while running and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        left = list(running)
        await tasks.stop()
        now = tasks.clock()
        for context in left:
            record = context.record
            if record.lease_owner is None:
                continue
            try:
                if await tasks.store.renew(
                    record.task_id, record.principal, record.lease_owner, now
                ):
                    _LOG.info("task %s handed back: the replica stopped", record.task_id)
            except Exception:  # the store is down: its lease passes as it would
                _LOG.exception("task %s not handed back", record.task_id)

    # -- signals ----------------------------------------------------------------------------

    def _hear_signals(self) -> None:
        """Begin the drain on SIGTERM or SIGINT, before the ASGI server's own
        handler (kept, and called) stops accepting and waits for requests;
        only where that server handles them in Python (uvicorn does)."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for number in _SIGNALS:
            previous = signal.getsignal(number)
            if not callable(previous):
                continue  # the default (or ignored): not the ASGI server's to chain

            def heard(signum: int, frame: FrameType | None, previous: Any = previous) -> None:
                loop.call_soon_threadsafe(self.drain)
                previous(signum, frame)

            signal.signal(number, heard)
            self._previous[number] = previous

    def _restore_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous.clear()
