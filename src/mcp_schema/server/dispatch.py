"""`Dispatch`: a `mcp_schema.server.Server`'s tools, resources and prompts
serving a session's events, in both eras (hand-written runtime module).

`Dispatch._begun` is the one way an event is served: as far as it goes
without waiting (a sync function in the loop, a listing: no coroutine at
all), then the coroutine of the rest, which `Dispatch.serve` awaits and
`Dispatch.handler` (the endpoint handler) runs at once, until it first
waits: a call that needs none (an async function that awaits only its
`Context`) is answered then, in one JSON body. Where an event loop runs,
the rest is what the handler returns, which the `mcp_schema.http.Endpoint`
runs as a task of the loop (`mcp_schema.http.answers`: answered when done,
within ``answer_seconds``, cancelled when its stream is lost): async
functions await anything, sync ones run in a worker thread, so one slow
call never stalls the others, unless declared ``inline`` (it never blocks:
it runs in the loop, with no thread hop and no task). Where none runs (a
stdio loop, `Endpoint.handle` called from plain code) a sync function is
called in the caller's thread, and a call that waits on anything
(``asyncio.sleep``) is answered -32603 saying so.

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
_Ran = tuple[bool, Any]
"""What a function's call gave: (True, its value), or (False, None): it asked."""
_Serving = Coroutine[Any, Any, None]
"""The rest of serving a request: what it awaits."""
_Result = dict[str, Any] | None
"""A call's result, or None: it was answered otherwise (asked, a task started)."""
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
        serving = self._begun(session, event, not looping)
        if serving is None:
            return None  # served, nothing awaited
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
        serving = self._begun(session, event, inline)
        if serving is not None:
            await serving

    def _begun(self, session: ServerSession, event: Event, inline: bool) -> _Serving | None:
        """Serve ``event`` as far as it goes without awaiting anything: None
        once it is served, else the coroutine of the rest."""
        if isinstance(event, RequestReceived):
            request, answers = event, {}
        elif isinstance(event, InputReceived):
            request, answers = event.request, read_answers(event.state, event.responses)
            self._claimers[request] = event.claim
        else:
            return None
        rest, rules = None, self.access
        try:
            if rules is None or not rules.policy or ADMITTED.get() or request.method not in CALLS:
                rest = self._routed(session, request, answers, inline)
            else:  # no gate admitted it (stdio, an endpoint built without access=): the policy here
                rest = self._policed(rules, session, request, answers, inline)
        except McpError as err:
            session.fail(request, err)
        finally:
            if rest is None:
                self._claimers.pop(request, None)
        return None if rest is None else self._served(session, request, rest)

    async def _served(
        self, session: ServerSession, request: RequestReceived, rest: _Serving
    ) -> None:
        """The rest of `_begun`: ``rest`` awaited, an `McpError` answered as it does."""
        try:
            await rest
        except McpError as err:
            session.fail(request, err)
        finally:
            self._claimers.pop(request, None)

    async def _policed(
        self,
        access: Access,
        session: ServerSession,
        request: RequestReceived,
        answers: Answers,
        inline: bool,
    ) -> None:
        """`_routed` once ``access``'s policy allowed the call."""
        params = getattr(request.message, "params", None)
        wire = {"method": request.method, "params": to_wire(params) if params is not None else {}}
        denied = await access.policed(current_principal(), wire)
        if denied is not None:
            raise denied
        rest = self._routed(session, request, answers, inline)
        if rest is not None:
            await rest

    def _routed(
        self, session: ServerSession, request: RequestReceived, answers: Answers, inline: bool
    ) -> _Serving | None:
        """``request`` served by its method (see `_begun`)."""
        method, params = request.method, getattr(request.message, "params", None)
        if method == "tools/call":
            return self._call(session, request, answers, inline)
        if method in LISTS:
            return self._list(session, request, method)
        if method == "resources/read":
            uri = str(getattr(params, "uri", ""))
            return self._read(session, request, answers, uri, inline)
        if method == "prompts/get":
            return self._prompt(session, request, answers, params, inline)
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

    def _run(
        self,
        session: ServerSession | None,
        request: RequestReceived,
        target: _Target,
        kwargs: dict[str, Any],
        answers: Answers,
        inline: bool,
        task: TaskContext | None = None,
    ) -> _Ran | Coroutine[Any, Any, _Ran]:
        """Call ``target``'s function (its `Context` built when it takes one):
        (True, its value), or (False, None) when it asked a question, which
        then answers the call; the coroutine of either when the function is
        awaited. ``inline`` (or the target's own): a sync function runs here,
        not in a thread of its own."""
        context = None
        if target.signature.context is not None:
            context = self.context(session, request, answers, task, self.tracked)
            context.claimer = self._claimers.get(request)
            kwargs = {**kwargs, target.signature.context: context}
        if target.is_async or not (inline or target.inline):
            return self._awaited(session, request, target, kwargs, context)
        try:
            return True, target.function(**kwargs)
        except Pending as pending:
            pending.ask(session, request, context)
            return False, None

    async def _awaited(
        self,
        session: ServerSession | None,
        request: RequestReceived,
        target: _Target,
        kwargs: dict[str, Any],
        context: Context | None,
    ) -> _Ran:
        """`_run` of an async function, or of a sync one in a thread of its own."""
        function = target.function
        try:
            if target.is_async:
                return True, await function(**kwargs)
            return True, await asyncio.to_thread(functools.partial(function, **kwargs))
        except Pending as pending:
            pending.ask(session, request, context)
            return False, None

    # -- tools ------------------------------------------------------------------------------

    def _call(
        self, session: ServerSession, request: RequestReceived, answers: Answers, inline: bool
    ) -> _Serving | None:
        params = getattr(request.message, "params", None)
        name = getattr(params, "name", None)
        tool = self.tools.get(name)
        if tool is None:
            raise unknown("tool", name)
        arguments = getattr(params, "arguments", None) or {}
        problems = tool.problems(arguments)
        if problems is not None:
            session.respond(request, error_result(problems))
            return None
        try:
            kwargs = tool.signature.arguments(arguments)
        except ValueError as exc:
            invalid = f"Invalid arguments for tool {tool.name}: {exc}"
            session.respond(request, error_result(invalid))
            return None
        if tool.task and not answers and session.accepts_task(request):
            work = functools.partial(self._work, tool, request, kwargs)
            session.run_as_task(request, self.tracked(work))
            return None
        if tool.task == "required":
            session.require_task(request)
            return None
        revision = self.tools.revision
        result = self._tool_result(session, request, tool, kwargs, answers, inline)
        if result is None or isinstance(result, dict):
            self._answer(session, request, result, revision)
            return None
        return self._answer_later(session, request, result, revision)

    def _answer(
        self, session: ServerSession, request: RequestReceived, result: _Result, revision: int
    ) -> None:
        """Answer a call with ``result`` (None: asked, or answered with a task);
        in the handshake era, ``tools/list_changed`` when the call changed the tools."""
        if result is None:
            return
        session.respond(request, result)
        if self.tools.revision != revision and request.version in HANDSHAKE_VERSIONS:
            session.notify("notifications/tools/list_changed")  # no listens in that era: told

    async def _answer_later(
        self,
        session: ServerSession,
        request: RequestReceived,
        result: Coroutine[Any, Any, _Result],
        revision: int,
    ) -> None:
        self._answer(session, request, await result, revision)

    def _tool_result(
        self,
        session: ServerSession | None,
        request: RequestReceived,
        tool: Tool,
        kwargs: dict[str, Any],
        answers: Answers,
        inline: bool,
        task: TaskContext | None = None,
    ) -> _Result | Coroutine[Any, Any, _Result]:
        """The call's result, or None when it was answered otherwise; the
        coroutine of either when the function is awaited."""
        try:
            ran = self._run(session, request, tool, kwargs, answers, inline, task)
            if not isinstance(ran, tuple):
                return self._tool_result_of(request, tool, ran)
            return _result(tool, ran)
        except McpError:
            raise
        except Exception as exc:
            return self._failed(request, tool, exc)

    async def _tool_result_of(
        self, request: RequestReceived, tool: Tool, running: Coroutine[Any, Any, _Ran]
    ) -> _Result:
        """`_tool_result` once ``running`` (the function awaited) is done."""
        try:
            return _result(tool, await running)
        except McpError:
            raise
        except Exception as exc:
            return self._failed(request, tool, exc)

    def _failed(self, request: RequestReceived, tool: Tool, exc: Exception) -> dict[str, Any]:
        """The error result of a call whose function (or its result) raised
        ``exc``: a `ToolError` its message; any other exception logged."""
        if isinstance(exc, ToolError):
            return error_result(str(exc))
        _LOG.error("tool %s failed on request %r", tool.name, request.id, exc_info=exc)
        if self.mask_errors:
            return error_result(f"The tool {tool.name} failed")
        return error_result(f"The tool {tool.name} failed: {type(exc).__name__}: {exc}")

    async def _work(
        self, tool: Tool, request: RequestReceived, kwargs: dict[str, Any], task: TaskContext
    ) -> dict[str, Any]:
        """A task's work: the tool's function, in the event loop's time."""
        result = self._tool_result(None, request, tool, kwargs, {}, False, task)
        if not (result is None or isinstance(result, dict)):
            result = await result
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
            ran = self._run(session, request, target, kwargs, answers, inline)
            return ran if isinstance(ran, tuple) else await ran
        except McpError:
            raise
        except Exception:
            _LOG.exception("%s failed on request %r", what, request.id)
            raise InternalError(f"The {what} failed") from None


def _result(tool: Tool, ran: _Ran) -> _Result:
    """The call's result of what `Dispatch._run` gave (None: asked, or a task started)."""
    called, value = ran
    if not called or isinstance(value, TaskStarted):
        return None
    return tool.result(value)
