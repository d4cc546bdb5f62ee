"""`Context`: what a tool, resource or prompt function gets in the parameter
annotated ``Context`` (hand-written runtime module): the request it serves,
and the ways to talk back while serving it.

Asking (`Context.ask`, `Context.sample`) works in both eras and on any
replica by replay. The first time a function asks, the call is answered with
the question (handshake era: a request to the client on the call's stream;
2026-07-28: an input-required result whose ``requestState`` seals the
answers so far, `mcp_schema.request_state`), and the function stops there.
When the answer comes (a POST of the session, or the client's retry, which
any replica holding the same ``MCP_STATE_KEY`` serves), the function runs
again from its start with the same arguments, and each question it asked
before is answered at once, in the order asked: so what a function does
before its last question may run more than once, as with the official
SDK's 2026-07-28 server. In a task (``task=`` on the decorator) the work runs
once: a question waits for the client's ``tasks/update`` (`TaskContext.ask`).

Every method that talks to the client is a coroutine: a function that asks
or reports is ``async def``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, overload

from pydantic import BaseModel, ValidationError

from mcp_schema import v2026_07_28 as mcp
from mcp_schema.codec import to_wire
from mcp_schema.context import LoggingLevel
from mcp_schema.errors import McpError
from mcp_schema.http.caller import Caller
from mcp_schema.server.tools import ToolError
from mcp_schema.session import RequestReceived, ServerSession
from mcp_schema.session.events import CapabilityError
from mcp_schema.tasks import TaskContext, TaskRecord, Work

__all__ = ["Answers", "Context", "Elicited", "Pending", "TaskStarted"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Answers = dict[str, Any]
"""Answers by question key: the result's wire JSON, or the client's `McpError`."""

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"


@dataclass(frozen=True)
class Elicited(Generic[T]):
    """The user's answer to `Context.ask`: ``action`` (``accept``,
    ``decline``, ``cancel``) and, when accepted, ``data`` read into the
    schema's type (a model instance, or the content's mapping)."""

    action: Literal["accept", "decline", "cancel"]
    data: T | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


@dataclass(frozen=True)
class TaskStarted:
    """What `Context.run_as_task` returns, for the function to return: the
    call is answered with the task (``record``), not a result."""

    record: TaskRecord


class Pending(BaseException):
    """A question not answered yet: the function stops here, the call is
    answered with the question (a `BaseException`, so that an author's
    ``except Exception`` does not swallow it)."""

    def __init__(self, key: str, question: dict[str, Any]) -> None:
        super().__init__(key)
        self.key, self.question = key, question

    def ask(
        self, session: ServerSession | None, request: RequestReceived, context: Context | None
    ) -> None:
        """Answer ``request`` with the question, the answers so far of
        ``context`` (the function's `Context`) carried in its state."""
        assert session is not None and context is not None  # a task's wait in its store
        state = {"answers": wire_answers(context.answers)}
        session.ask(request, {self.key: self.question}, state=state)


def wire_answers(answers: Mapping[str, Any]) -> dict[str, Any]:
    """``answers`` as the JSON a round carries (`read_answers` reads it back)."""
    return {
        key: {"error": a.to_error_object()} if isinstance(a, McpError) else {"result": a}
        for key, a in answers.items()
    }


def read_answers(state: object, responses: Mapping[str, BaseModel | McpError]) -> Answers:
    """The answers of the rounds so far (``state``, as `wire_answers` wrote
    it) and of this one (``responses``: models, or the client's errors)."""
    answers: Answers = {}
    carried = state.get("answers") if isinstance(state, dict) else None
    for key, entry in (carried or {}).items():
        if isinstance(entry, dict) and "error" in entry:
            answers[key] = McpError.from_error_object(entry["error"])
        elif isinstance(entry, dict):
            answers[key] = entry.get("result")
    for key, response in responses.items():
        answers[key] = response if isinstance(response, McpError) else to_wire(response)
    return answers


class Context:
    """The context of one call (see the module): ``request`` in ``session``,
    or the task of ``task`` (then no session: the request was answered)."""

    def __init__(
        self,
        session: ServerSession | None,
        request: RequestReceived | None,
        answers: Answers | None = None,
        task: TaskContext | None = None,
        track: Callable[[Work], Work] | None = None,
    ) -> None:
        self._session, self._request, self.task = session, request, task
        self._track = track
        self.answers: Answers = {} if answers is None else answers
        self._asked = 0
        self.claimer: Callable[[], Awaitable[None]] | None = None
        """The claim of the round whose answers this run was given (set by
        `mcp_schema.server.dispatch`), or None."""

    async def claim(self) -> None:
        """Make the answers this run was given single-use, before acting on
        them (a one-time redemption): the round is recorded as used through
        the broker's claims, on every replica
        (`mcp_schema.session.events.InputReceived.claim`). A replayed retry
        fails the call with -32602 (``already used``), a broker that cannot
        be reached with -32603: nothing after the claim runs. Without answers
        (the first run) there is nothing to claim."""
        if self.claimer is not None:
            await self.claimer()

    @property
    def principal(self) -> str | None:
        """Who the call comes from (the authenticated user), or None."""
        if self.task is not None:
            return self.task.record.principal or None
        return None if self._session is None else self._session.principal

    @property
    def caller(self) -> Caller | None:
        """Who sent the call, as the HTTP front door established it: its
        ``principal`` (the same as `principal`), the client's ``address``,
        and ``verified``, the token's `mcp_schema.auth.Principal` (its scopes)
        when the server checks tokens. None for a task's work (its request was
        answered) and where no front door says (stdio)."""
        return None if self._request is None else self._request.context.caller

    @property
    def request_id(self) -> str | int | None:
        return None if self._request is None else self._request.id

    @property
    def version(self) -> str | None:
        """The protocol version the client speaks."""
        if self.task is not None:
            return self.task.version
        return None if self._request is None else self._request.version

    def can_ask(self, method: str) -> bool:
        """Whether the client declared what ``method`` (``elicitation/create``,
        ``sampling/createMessage``) needs, so that asking it may succeed."""
        if self.task is not None:
            return self.task.can_ask(method)
        return self._request is not None and self._request.can_ask(method)

    @overload
    async def ask(
        self, message: str, schema: type[M], *, key: str | None = None
    ) -> Elicited[M]: ...

    @overload
    async def ask(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicited[dict[str, Any]]: ...

    async def ask(
        self, message: str, schema: type[BaseModel] | Mapping[str, Any], *, key: str | None = None
    ) -> Elicited[Any]:
        """Ask the user (elicitation, form mode): ``schema`` is a pydantic
        model of primitive fields (or a ``requestedSchema`` mapping, then
        ``data`` is the content's mapping); ``key``: the question's key in
        ``inputRequests`` (default ``q`` and its rank: ``q0``, ``q1``...).
        `ToolError` when the client cannot be asked, or its answer does not
        fit the schema."""
        if isinstance(schema, Mapping):
            requested = dict(schema)
        else:
            found = schema.model_json_schema()
            requested = {"type": "object", "properties": found.get("properties", {})}
            if found.get("required"):
                requested["required"] = found["required"]
        question = {"message": message, "requestedSchema": requested}
        answer = await self._answer(ELICIT, question, key)
        action = answer.get("action", "cancel")
        if action != "accept":
            return Elicited(action)
        content = answer.get("content") or {}
        if isinstance(schema, Mapping):
            return Elicited(action, content)
        try:
            return Elicited(action, schema.model_validate(content))
        except ValidationError as exc:
            reason = exc.errors(include_url=False)[0]["msg"]
            raise ToolError(f"the answer does not fit what was asked: {reason}") from None

    async def sample(
        self,
        prompt: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        key: str | None = None,
        **params: Any,
    ) -> mcp.CreateMessageResult:
        """Ask the client's model (sampling): ``prompt`` is the user's text, or
        the ``messages`` themselves; ``key`` as for `ask`; ``params``: more
        ``CreateMessageRequest`` params, as on the wire (``temperature``,
        ``modelPreferences``...)."""
        messages = (
            [{"role": "user", "content": {"type": "text", "text": prompt}}]
            if isinstance(prompt, str)
            else [dict(m) for m in prompt]
        )
        asked: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens, **params}
        if system_prompt is not None:
            asked["systemPrompt"] = system_prompt
        return mcp.CreateMessageResult.model_validate(await self._answer(SAMPLE, asked, key))

    async def _answer(
        self, method: str, params: dict[str, Any], key: str | None = None
    ) -> dict[str, Any]:
        """The client's answer to the question (see the module)."""
        if not self.can_ask(method):
            raise ToolError("this client cannot be asked")
        key = key or f"q{self._asked}"
        self._asked += 1
        question = {"method": method, "params": params}
        if self.task is not None:
            (answer,) = (await self.task.ask({key: question})).values()
            return to_wire(answer)
        found = self.answers.get(key)
        if isinstance(found, McpError):  # the client's refusal: the tool's failure, in words
            raise ToolError(f"the client answered with an error: {found.message}")
        if not isinstance(found, dict):
            raise Pending(key, question)
        return found

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Progress, when the call asked for it (a task: its status message)."""
        if self.task is not None:
            await self.task.report(message or f"{progress:g}" + (f" of {total:g}" if total else ""))
        elif self._session is not None and self._request is not None:
            self._session.progress(self._request, progress, total=total, message=message)

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """A log message to the client, when it asked for that level (none in a task)."""
        if self._session is not None and self._request is not None:
            self._session.log(level, data, logger=logger, request=self._request)

    @property
    def accepts_task(self) -> bool:
        """Whether `run_as_task` may answer this call with a task."""
        return (
            self._session is not None
            and self._request is not None
            and self._session.accepts_task(self._request)
        )

    def run_as_task(self, work: Work, **options: Any) -> TaskStarted:
        """Answer the call with a task running ``work`` (an async function of
        a `mcp_schema.tasks.TaskContext`, returning the ``CallToolResult``);
        return what this returns. ``options``: those of
        ``ServerSession.run_as_task``. `CapabilityError` unless `accepts_task`."""
        if self._session is None or self._request is None:
            raise CapabilityError("a task cannot start another task")
        if self._track is not None:
            work = self._track(work)
        return TaskStarted(self._session.run_as_task(self._request, work, **options))
