"""`Dispatch`: a `mcp_schema.server.Server`'s tools, resources and prompts
serving a session's events, in both eras (hand-written runtime module).

`Dispatch.serve` is the one way an event is served, a coroutine, and
`Dispatch.handler` the endpoint handler. The handler runs the coroutine at
once, until it first waits: a call that needs no waiting (a listing, an
async function that awaits only its `Context`) is answered then, in one
JSON body. Where an event loop runs, the rest is what the handler returns,
which the `mcp_schema.http.Endpoint` runs as a task of the loop
(`mcp_schema.http.answers`: answered when done, within the endpoint's
``answer_seconds``, cancelled when its stream is lost): async functions
await anything, sync ones run in a worker thread, so one slow call never
stalls the others, unless declared ``inline`` (a function that never
blocks: it runs in the loop, and its call is answered at once, with no
thread hop and no task). Where none runs (a stdio loop, `Endpoint.handle` called
from plain code) a sync function is called in the caller's thread, and a
call that waits on anything (``asyncio.sleep``) is answered -32603 saying so.

A call:

0. Whether the caller may reach the tool at all is decided before: by the
   endpoint's gate (`mcp_schema.auth.Access`: the 403 step-up challenge,
   or a denied tool answered as an unknown one); the lists are filtered
   here by the same rules. Where no gate admitted the request
   (`mcp_schema.http.gate.ADMITTED` false: stdio, an endpoint built without
   ``access=``) the policy alone applies, here, to calls and lists alike.
1. ``tools/call`` of a tool not enabled is -32602 (unknown tool); arguments
   its ``inputSchema`` refuses are a tool error result naming them
   (`mcp_schema.server.tools`); nothing ran.
2. A tool with ``task=`` and a client that takes a task: the call is
   answered with a task whose work runs the function (`TaskContext`), else
   the function runs now (``task="required"``: -32021 instead).
3. The function's value becomes the result; a `ToolError` an error result
   with its message; an `McpError` the JSON-RPC error it is; any other
   exception an error result (its type and message, or only that the tool
   failed with ``mask_errors``), logged with the tool's name and the
   request's id.
4. A question (`Context.ask`) answers the call with it; the answer runs the
   function again (`mcp_schema.server.context`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping
from typing import Any, Protocol

from mcp_schema.auth.access import CALLS, LISTS, Access, unknown
from mcp_schema.codec import to_wire
from mcp_schema.errors import InternalError, McpError, MethodNotFoundError
from mcp_schema.http.gate import ADMITTED, current_principal
from mcp_schema.server.context import (
    Answers,
    Context,
    Pending,
    TaskStarted,
    read_answers,
    wire_answers,
)
from mcp_schema.server.prompts import Prompt
from mcp_schema.server.resources import Resource, not_found
from mcp_schema.server.signature import Signature
from mcp_schema.server.tools import Tool, ToolError, error_result
from mcp_schema.server.toolset import ToolSet
from mcp_schema.session import (
    Event,
    InputReceived,
    RequestReceived,
    ServerSession,
    SessionError,
)
from mcp_schema.tasks import TaskContext, Work
from mcp_schema.versions import HANDSHAKE_VERSIONS

__all__ = ["Dispatch"]

_LOG = logging.getLogger("mcp_schema.server")
_AWAITED = "it awaited more than its context, and no event loop runs to await it"


class _Target(Protocol):
    """A tool, resource or prompt: its function, and how to call it."""

    function: Callable[..., Any]
    is_async: bool
    inline: bool
    signature: Signature


@types.coroutine
def _rest(started: Coroutine[Any, Any, None], waited: Any) -> Generator[Any, Any, None]:
    """The rest of ``started``, a coroutine run until it first waited (on
    ``waited``), as an awaitable: what it waits on goes to the task awaiting
    this, and what the task is sent (or has thrown in: a cancellation) to it."""
    while True:
        try:
            try:
                sent = yield waited
            except BaseException as thrown:  # a cancellation, a close: passed on
                waited = started.throw(thrown)
            else:
                waited = started.send(sent)
        except StopIteration:
            return


class Dispatch:
    """What serves the events of the server's sessions (see the module):
    ``tools``, ``resources`` and ``prompts`` by name (a resource by URI),
    ``context`` the class of the parameter injected; ``access``: what filters
    the lists per principal (the calls are the endpoint's to gate)."""

    def __init__(
        self,
        tools: ToolSet,
        resources: Mapping[str, Resource],
        prompts: Mapping[str, Prompt],
        *,
        context: type[Context] = Context,
        mask_errors: bool = False,
        access: Access | None = None,
    ) -> None:
        self.tools, self.resources, self.prompts = tools, resources, prompts
        self.access = access
        self.context = context
        self.mask_errors = mask_errors
        self.running: dict[TaskContext, None] = {}
        # The claim of the round each call being served was given (Context.claim).
        self._claimers: dict[RequestReceived, Callable[[], Awaitable[None]]] = {}
        """The tasks whose work runs in this process (`tracked`)."""

    def tracked(self, work: Work) -> Work:
        """``work``, in `running` while it runs."""

        async def tracking(task: TaskContext) -> Any:
            self.running[task] = None
            try:
                return await work(task)
            finally:
                self.running.pop(task, None)

        return tracking

    def handler(self, session: ServerSession, event: Event) -> Awaitable[None] | None:
        """The `mcp_schema.http.Endpoint` handler (see the module)."""
        if not isinstance(event, (RequestReceived, InputReceived)):
            return None  # nothing of the functions': negotiation, notifications, cancellation
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            looping = False  # nothing would await the rest: a sync function runs here
        else:
            looping = True
        serving = self.serve(session, event, inline=not looping)
        try:
            waited = serving.send(None)  # what needs no waiting is done now, answered at once
        except StopIteration:
            return None
        if looping:
            return _rest(serving, waited)  # the endpoint awaits it, as a task of the loop
        serving.close()
        request = event.request if isinstance(event, InputReceived) else event
        _LOG.error("%s %r: %s", request.method, request.id, _AWAITED)
        try:
            session.fail(request, InternalError(f"The call could not be served: {_AWAITED}"))
        except SessionError:
            pass  # answered before it waited
        return None

    async def serve(self, session: ServerSession, event: Event, *, inline: bool = False) -> None:
        """Serve ``event``: a request, or the answers to a question asked.
        ``inline``: a sync function runs here (else in a thread of its own)."""
        if isinstance(event, RequestReceived):
            request, answers = event, {}
        elif isinstance(event, InputReceived):
            request, answers = event.request, read_answers(event.state, event.responses)
        else:
            return
        if isinstance(event, InputReceived):
            self._claimers[request] = event.claim
        try:
            await self._request(session, request, answers, inline)
        except McpError as err:
            session.fail(request, err)
        finally:
            self._claimers.pop(request, None)

    async def _request(
        self, session: ServerSession, request: RequestReceived, answers: Answers, inline: bool
    ) -> None:
        method, params = request.method, getattr(request.message, "params", None)
        access = self.access
        if method in CALLS and access is not None and access.policy and not ADMITTED.get():
            # No gate admitted it (stdio, an endpoint built without access=): the policy here.
            wire = {"method": method, "params": to_wire(params) if params is not None else {}}
            denied = await access.policed(current_principal(), wire)
            if denied is not None:
                raise denied
        if method == "tools/call":
            return await self._call(session, request, answers, inline)
        if method in LISTS:
            return await self._list(session, request, method)
        if method == "resources/read":
            uri = str(getattr(params, "uri", ""))
            return await self._read(session, request, answers, uri, inline)
        if method == "prompts/get":
            return await self._prompt(session, request, answers, params, inline)
        raise MethodNotFoundError(f"Method not found: {method}", {"method": method})

    async def _list(self, session: ServerSession, request: RequestReceived, method: str) -> None:
        """A list: what the principal may see of it (`mcp_schema.auth.Access`),
        ``cacheScope: "private"`` when that depends on the principal."""
        access = self.access
        if method == "tools/list" and (access is None or not access.filters):
            return session.respond(request, self.tools.listed)  # built once per change
        kind, member, key = LISTS[method]
        items: list[Mapping[str, Any]]
        if method == "tools/list":
            items = self.tools.listed["tools"]
        elif method == "prompts/list":
            items = [p.definition for p in self.prompts.values()]
        else:
            template = method == "resources/templates/list"
            items = [r.definition for r in self.resources.values() if r.template == template]
        if access is None or not access.filters:
            return session.respond(request, {member: items})
        scoped = ADMITTED.get()  # behind the gate, a token was checked: its scopes count
        shown = await access.visible(current_principal(), method, kind, items, key, scoped=scoped)
        session.respond(request, {member: shown, "cacheScope": "private"})

    async def _run(
        self,
        session: ServerSession | None,
        request: RequestReceived,
        target: _Target,
        kwargs: dict[str, Any],
        answers: Answers,
        inline: bool,
        task: TaskContext | None = None,
    ) -> tuple[bool, Any]:
        """Call ``target``'s function (its `Context` built when it takes one):
        (True, its value), or (False, None) when it asked a question, which
        then answers the call. ``inline`` (or the target's own): a sync
        function runs here, not in a thread of its own."""
        context = None
        if target.signature.context is not None:
            context = self.context(session, request, answers, task, self.tracked)
            context.claimer = self._claimers.get(request)
            kwargs = {**kwargs, target.signature.context: context}
        function = target.function
        try:
            if target.is_async:
                return True, await function(**kwargs)
            if inline or target.inline:
                return True, function(**kwargs)
            return True, await asyncio.to_thread(functools.partial(function, **kwargs))
        except Pending as pending:
            assert session is not None and context is not None  # a task's wait in its store
            state = {"answers": wire_answers(context.answers)}
            session.ask(request, {pending.key: pending.question}, state=state)
            return False, None

    # -- tools ------------------------------------------------------------------------------

    async def _call(
        self, session: ServerSession, request: RequestReceived, answers: Answers, inline: bool
    ) -> None:
        params = getattr(request.message, "params", None)
        name = getattr(params, "name", None)
        tool = self.tools.get(name)
        if tool is None:
            raise unknown("tool", name)
        arguments = getattr(params, "arguments", None) or {}
        problems = tool.problems(arguments)
        if problems is not None:
            return session.respond(request, error_result(problems))
        try:
            kwargs = tool.signature.arguments(arguments)
        except ValueError as exc:
            return session.respond(
                request, error_result(f"Invalid arguments for tool {tool.name}: {exc}")
            )
        if tool.task and not answers and session.accepts_task(request):
            work = functools.partial(self._work, tool, request, kwargs)
            session.run_as_task(request, self.tracked(work))
            return
        if tool.task == "required":
            session.require_task(request)
            return
        revision = self.tools.revision
        result = await self._tool_result(session, request, tool, kwargs, answers, inline)
        if result is None:
            return  # asked, or answered with a task
        session.respond(request, result)
        if self.tools.revision != revision and request.version in HANDSHAKE_VERSIONS:
            session.notify("notifications/tools/list_changed")  # no listens in that era: told

    async def _tool_result(
        self,
        session: ServerSession | None,
        request: RequestReceived,
        tool: Tool,
        kwargs: dict[str, Any],
        answers: Answers,
        inline: bool,
        task: TaskContext | None = None,
    ) -> dict[str, Any] | None:
        """The call's result, or None when it was answered otherwise."""
        try:
            ran, value = await self._run(session, request, tool, kwargs, answers, inline, task)
            if not ran or isinstance(value, TaskStarted):
                return None
            return tool.result(value)
        except ToolError as err:
            return error_result(str(err))
        except McpError:
            raise
        except Exception as exc:
            _LOG.exception("tool %s failed on request %r", tool.name, request.id)
            if self.mask_errors:
                return error_result(f"The tool {tool.name} failed")
            return error_result(f"The tool {tool.name} failed: {type(exc).__name__}: {exc}")

    async def _work(
        self, tool: Tool, request: RequestReceived, kwargs: dict[str, Any], task: TaskContext
    ) -> dict[str, Any]:
        """A task's work: the tool's function, in the event loop's time."""
        result = await self._tool_result(None, request, tool, kwargs, {}, False, task)
        assert result is not None  # a task asks through its store, and starts no task
        return result

    # -- resources and prompts --------------------------------------------------------------

    async def _read(
        self,
        session: ServerSession,
        request: RequestReceived,
        answers: Answers,
        uri: str,
        inline: bool,
    ) -> None:
        for resource in self.resources.values():
            kwargs = resource.match(uri)
            if kwargs is not None:
                break
        else:
            raise not_found(uri)
        ran, value = await self._guarded(
            session, request, resource, kwargs, answers, inline, f"resource {uri}"
        )
        if ran:
            session.respond(request, resource.contents(uri, value))

    async def _prompt(
        self,
        session: ServerSession,
        request: RequestReceived,
        answers: Answers,
        params: Any,
        inline: bool,
    ) -> None:
        name = getattr(params, "name", None)
        prompt = self.prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise unknown("prompt", name)
        kwargs = prompt.arguments(getattr(params, "arguments", None))
        ran, value = await self._guarded(
            session, request, prompt, kwargs, answers, inline, f"prompt {prompt.name}"
        )
        if ran:
            session.respond(request, prompt.result(value))

    async def _guarded(
        self,
        session: ServerSession,
        request: RequestReceived,
        target: _Target,
        kwargs: dict[str, Any],
        answers: Answers,
        inline: bool,
        what: str,
    ) -> tuple[bool, Any]:
        """`_run`, an exception but an `McpError` answered -32603 and logged."""
        try:
            return await self._run(session, request, target, kwargs, answers, inline)
        except McpError:
            raise
        except Exception:
            _LOG.exception("%s failed on request %r", what, request.id)
            raise InternalError(f"The {what} failed") from None
