"""The load and the counting of ``make chaos`` (`tests.cluster.test_chaos`):
steady requests of both eras through nginx, listens open on every replica,
tasks created and polled, every request recorded with its times and how it
ended, so that a fault's effect can be read off afterwards.

Kinds of request, each its own loop:

- ``stateless``: 2026-07-28 ``tools/call echo``, needing no shared state;
- ``session``: a handshake-era ``tools/call echo`` on one of the open
  sessions (a 404 loses the session, which is replaced);
- ``initialize``: a new handshake-era session (a write of its record);
- ``task``: a ``long_count`` task created, then ``tasks/get`` until it ends;
- ``toggle``: ``toggle`` on one replica directly, after which every listen
  open on the others must hear ``tools/list_changed`` within `HEARD_WITHIN`
  seconds, or it was deaf.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from mcp_schema.http_headers import request_headers
from mcp_schema.tasks.protocol import NO_SUCH_TASK
from mcp_schema.versions import TASKS_EXTENSION

HEARD_WITHIN = 2.0  # seconds a listen on B has to hear a change made on A
TASK_STUCK = 20.0  # seconds after which a task not ended is stuck (it takes 3)
SESSIONS = 6  # handshake-era sessions kept open
_MESSAGE = 100  # characters of an error's message kept, to say what failed
ACCEPT = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "chaos", "version": "1"},
    },
}


def stateless(method: str, capabilities: dict[str, Any] | None = None, **params: Any) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": meta}}


@dataclass
class Outcome:
    """One request: when it ran, and how it ended (``ok``, or why not)."""

    kind: str
    began: float
    ended: float
    ok: bool
    why: str = ""  # "503", "502", "rpc -32603", "no answer", "lost session", ...
    answered: bool = True  # an HTTP answer (a JSON-RPC error naming the request, for ours)
    message: str = ""  # the JSON-RPC error's message, cut: what failed

    @property
    def seconds(self) -> float:
        return self.ended - self.began


@dataclass
class Listen:
    replica: str
    opened: float | None = None  # acknowledged at
    closed: float | None = None
    heard: list[float] = field(default_factory=list)


@dataclass
class Load:
    """The load on a cluster (see the module), and what it recorded."""

    url: str
    replicas: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    listens: list[Listen] = field(default_factory=list)
    toggles: list[tuple[str, float, float]] = field(default_factory=list)  # replica, began, ended
    tasks: dict[str, Counter[str]] = field(default_factory=dict)  # task id: what happened
    task_created: dict[str, float] = field(default_factory=dict)
    task_ended: dict[str, float] = field(default_factory=dict)  # when its end was read
    sessions_lost: list[float] = field(default_factory=list)
    down: set[str] = field(default_factory=set)  # replicas not to send to directly
    in_flight: dict[int, tuple[str, float]] = field(default_factory=dict)  # kind, began
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    # -- one request ------------------------------------------------------------------------

    async def _post(
        self,
        client: httpx.AsyncClient,
        kind: str,
        message: Any,
        where: str | None = None,
        session: str | None = None,
    ) -> tuple[Outcome, Any, httpx.Headers | None]:
        headers = {**ACCEPT, **request_headers(message)}
        if session is not None:
            headers["mcp-session-id"] = session
        url = self.url if where is None else f"http://{where}/mcp"
        began = time.monotonic()
        flying = (kind, began)
        self.in_flight[id(flying)] = flying
        try:
            response = await client.post(url, content=json.dumps(message), headers=headers)
        except httpx.HTTPError as exc:
            return (
                Outcome(kind, began, time.monotonic(), False, type(exc).__name__, False),
                None,
                None,
            )
        finally:
            del self.in_flight[id(flying)]
        ended = time.monotonic()
        answer = _answer(response)
        if response.status_code == 200 and isinstance(answer, dict) and "result" in answer:
            return Outcome(kind, began, ended, True), answer["result"], response.headers
        named = isinstance(answer, dict) and answer.get("id") == message.get("id")
        why, message = str(response.status_code), ""
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            why += f" rpc {answer['error'].get('code')}"
            message = str(answer["error"].get("message"))[:_MESSAGE]
        return (
            Outcome(kind, began, ended, False, why, named or response.status_code == 502, message),
            answer,
            None,
        )

    def _record(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    # -- the loops --------------------------------------------------------------------------

    async def _stateless(self, client: httpx.AsyncClient) -> None:
        message = stateless("tools/call", name="echo", arguments={"text": "x"})
        while not self._stop.is_set():
            outcome, _, _ = await self._post(client, "stateless", message)
            self._record(outcome)
            await asyncio.sleep(0.05)

    async def _opened(self, client: httpx.AsyncClient) -> str | None:
        outcome, _, headers = await self._post(client, "initialize", INIT)
        self._record(outcome)
        if headers is None or "mcp-session-id" not in headers:
            return None
        session = headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        try:
            await client.post(
                self.url,
                content=json.dumps(initialized),
                headers={**ACCEPT, "mcp-session-id": session},
            )
        except httpx.HTTPError:
            pass
        return session

    async def _sessions(self, client: httpx.AsyncClient) -> None:
        sessions: list[str] = []
        turn = 0
        while not self._stop.is_set():
            while len(sessions) < SESSIONS and not self._stop.is_set():
                opened = await self._opened(client)
                if opened is None:
                    await asyncio.sleep(0.2)
                    break
                sessions.append(opened)
            if not sessions:
                continue
            turn += 1
            session = sessions[turn % len(sessions)]
            message = {
                "jsonrpc": "2.0",
                "id": turn,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "s"}},
            }
            outcome, _, _ = await self._post(client, "session", message, session=session)
            if outcome.why.startswith("404"):
                outcome.why = "lost session"
                self.sessions_lost.append(outcome.ended)
                sessions.remove(session)
            self._record(outcome)
            await asyncio.sleep(0.1)

    async def _initializing(self, client: httpx.AsyncClient) -> None:
        while not self._stop.is_set():
            session = await self._opened(client)
            if session is not None:  # end it: the sessions of this loop are only its writes
                try:
                    await client.delete(self.url, headers={**ACCEPT, "mcp-session-id": session})
                except httpx.HTTPError:
                    pass
            await asyncio.sleep(0.5)

    async def _tasks(self, client: httpx.AsyncClient) -> None:
        declaring: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}}
        polling: list[asyncio.Task[None]] = []
        while not self._stop.is_set():
            message = stateless("tools/call", declaring, name="long_count", arguments={})
            outcome, result, _ = await self._post(client, "task", message)
            self._record(outcome)
            if outcome.ok and isinstance(result, dict) and "taskId" in result:
                task_id = result["taskId"]
                self.tasks[task_id] = Counter()
                self.task_created[task_id] = outcome.ended
                polling.append(asyncio.ensure_future(self._poll(client, task_id, declaring)))
            await asyncio.sleep(1.0)
        await asyncio.gather(*polling, return_exceptions=True)

    async def _poll(self, client: httpx.AsyncClient, task_id: str, declaring: Any) -> None:
        seen = self.tasks[task_id]
        created = self.task_created[task_id]
        message = stateless("tasks/get", declaring, taskId=task_id)
        while time.monotonic() - created < TASK_STUCK:
            outcome, answer, _ = await self._post(client, "task", message)
            self._record(outcome)
            if outcome.ok and answer.get("status") in ("completed", "failed", "cancelled"):
                seen[answer["status"]] += 1
                break
            if isinstance(answer, dict) and NO_SUCH_TASK in str(answer.get("error", "")):
                seen["lost"] += 1
                break
            await asyncio.sleep(0.3)
        else:
            seen["stuck"] += 1
        self.task_ended[task_id] = time.monotonic()

    def running_tasks(self, at: float, older: float) -> list[str]:
        """The tasks created ``older`` seconds or more before ``at`` and not
        seen ended by then."""
        return [
            t
            for t, created in self.task_created.items()
            if created <= at - older and self.task_ended.get(t, at + 1) > at
        ]

    async def _listen(self, client: httpx.AsyncClient, replica: str) -> None:
        message = stateless("subscriptions/listen", notifications={"toolsListChanged": True})
        message["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = {
            "name": "c",
            "version": "1",
        }
        headers = {**ACCEPT, **request_headers(message)}
        while not self._stop.is_set():
            if replica in self.down:
                await asyncio.sleep(0.2)
                continue
            listen = Listen(replica)
            self.listens.append(listen)
            try:
                async with client.stream(
                    "POST", f"http://{replica}/mcp", content=json.dumps(message), headers=headers
                ) as response:
                    async for line in response.aiter_lines():
                        if "subscriptions/acknowledged" in line:
                            listen.opened = time.monotonic()
                        elif "tools/list_changed" in line:
                            listen.heard.append(time.monotonic())
                        elif "notifications/cancelled" in line or '"resultType"' in line:
                            break
            except httpx.HTTPError:
                pass
            listen.closed = time.monotonic()
            await asyncio.sleep(0.1)  # a client listens again

    async def _toggles(self, client: httpx.AsyncClient) -> None:
        turn = 0
        while not self._stop.is_set():
            live = [r for r in self.replicas if r not in self.down]
            turn += 1
            where = live[turn % len(live)]
            message = stateless("tools/call", name="toggle", arguments={})
            outcome, _, _ = await self._post(client, "toggle", message, where=where)
            self._record(outcome)
            if outcome.ok:
                self.toggles.append((where, outcome.began, outcome.ended))
            await asyncio.sleep(1.0)

    async def stateless_only(self, until: asyncio.Event) -> None:
        """One client's ``stateless`` loop alone (a gateway has no more to load)."""
        async with httpx.AsyncClient(timeout=httpx.Timeout(15.0)) as client:
            running = asyncio.ensure_future(self._stateless(client))
            await until.wait()
            self._stop.set()
            await running

    async def run(self, until: asyncio.Event) -> None:
        limits = httpx.Limits(max_connections=50, max_keepalive_connections=0)
        timeout = httpx.Timeout(15.0)
        async with (
            httpx.AsyncClient(limits=limits, timeout=timeout) as client,
            httpx.AsyncClient(timeout=httpx.Timeout(15.0, read=None)) as streams,
        ):
            loops = [
                self._stateless(client),
                self._sessions(client),
                self._initializing(client),
                self._tasks(client),
                self._toggles(client),
            ]
            loops += [self._listen(streams, r) for r in self.replicas]
            running = [asyncio.ensure_future(loop) for loop in loops]
            await until.wait()
            self._stop.set()
            await asyncio.wait(running, timeout=TASK_STUCK + 5)
            for task in running:
                task.cancel()

    # -- reading it -------------------------------------------------------------------------

    def deaf(self, since: float, until: float) -> tuple[int, int]:
        """(deaf, checked): for each toggle made in ``since..until`` on A, the
        listens on other replicas open before it began and still open
        `HEARD_WITHIN` seconds after it ended, and how many heard nothing."""
        checked = deaf = 0
        for where, began, ended in self.toggles:
            if not since <= began <= until:
                continue
            for listen in self.listens:
                if listen.replica == where or listen.opened is None or listen.opened > began:
                    continue
                if listen.closed is not None and listen.closed < ended + HEARD_WITHIN:
                    continue
                checked += 1
                if not any(began <= t <= ended + HEARD_WITHIN for t in listen.heard):
                    deaf += 1
        return deaf, checked


def _answer(response: httpx.Response) -> Any:
    body = response.content
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in body.decode("utf-8", "replace").splitlines():
            if line.startswith("data:") and '"id"' in line:
                body = line[5:].encode()
    try:
        return json.loads(body)
    except ValueError:
        return None
