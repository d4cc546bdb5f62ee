"""`mcp_schema.server.Context`: asks in both eras (2026-07-28: sealed, so a
retry completes on another replica), sampling, progress, logs, the
principal, and a task started at run time."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from mcp_schema.server import Context, Server, TaskStarted
from mcp_schema.tasks import TaskContext
from tests.server.serving import (
    DECLARING,
    Handshake,
    Stateless,
    message,
    post,
    replica,
    text,
)

KEY = "a state key of the tests of 32 bytes or more"


class Confirm(BaseModel):
    confirm: bool


def asking() -> tuple[Server, list[str]]:
    server = Server("context-test")
    ran: list[str] = []

    @server.tool()
    async def confirm_delete(name: str, ctx: Context) -> str:
        ran.append(name)
        answer = await ctx.ask(f"Delete {name}?", Confirm)
        if not (answer.accepted and answer.data and answer.data.confirm):
            return "kept"
        again = await ctx.ask("Really?", Confirm)
        return f"deleted {name}" if again.data and again.data.confirm else "kept"

    @server.tool()
    async def think(ctx: Context) -> str:
        reply = await ctx.sample("A word?", max_tokens=5, system_prompt="Be brief")
        return f"you said {getattr(reply.content, 'text', None)}"

    @server.tool()
    async def count(ctx: Context) -> str:
        for step in (1, 2):
            await ctx.report_progress(step, 2, f"step {step}")
        await ctx.log("info", {"counted": 2})
        return f"{ctx.request_id} {ctx.version} {ctx.principal}"

    return server, ran


YES = {"action": "accept", "content": {"confirm": True}}


def test_a_2026_07_28_ask_is_sealed_and_its_retry_completes_on_another_replica() -> None:
    server, ran = asking()
    first, second = replica(server, state_key=KEY), replica(server, state_key=KEY)
    call = {"name": "confirm_delete", "arguments": {"name": "bob"}}

    async def asked() -> list[dict[str, Any]]:
        one = await post(first, message("tools/call", call))
        state = one["result"]["requestState"]
        question = one["result"]["inputRequests"]["q0"]
        retry = {**call, "requestState": state, "inputResponses": {"q0": YES}}
        two = await post(second, message("tools/call", retry))  # another replica
        again = {**call, "requestState": two["result"]["requestState"]}
        again["inputResponses"] = {"q1": YES}
        three = await post(first, message("tools/call", again))
        return [question, two["result"]["inputRequests"], three["result"]]

    question, asked_again, done = asyncio.run(asked())
    assert question["method"] == "elicitation/create"
    assert question["params"]["message"] == "Delete bob?"
    assert question["params"]["requestedSchema"] == {
        "type": "object",
        "properties": {"confirm": {"title": "Confirm", "type": "boolean"}},
        "required": ["confirm"],
    }
    assert list(asked_again) == ["q1"]  # the first answer carried in the sealed state
    assert text(done) == "deleted bob"
    assert ran == ["bob", "bob", "bob"]  # run again from its start at each answer


def test_a_forged_answer_to_the_first_question_is_refused() -> None:
    server, _ = asking()
    first = replica(server, state_key=KEY)
    call = {"name": "confirm_delete", "arguments": {"name": "bob"}}

    async def forged() -> dict[str, Any]:
        one = await post(first, message("tools/call", call))
        state = one["result"]["requestState"]
        other = {"name": "confirm_delete", "arguments": {"name": "alice"}}  # another call
        return await post(first, message("tools/call", {**other, "requestState": state}))

    assert asyncio.run(forged())["error"]["code"] == -32602


def test_a_handshake_era_ask_is_a_request_to_the_client_and_its_answer_completes_the_call() -> None:
    server, _ = asking()
    client = Handshake(server)
    call = {"name": "confirm_delete", "arguments": {"name": "bob"}}
    (ask,) = client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    assert ask["method"] == "elicitation/create"
    (again,) = client.send({"jsonrpc": "2.0", "id": ask["id"], "result": YES})
    assert again["params"]["message"] == "Really?"
    (done,) = client.send({"jsonrpc": "2.0", "id": again["id"], "result": YES})
    assert (done["id"], text(done["result"])) == (1, "deleted bob")


def test_a_client_that_cannot_be_asked_gets_an_error_result() -> None:
    server, _ = asking()
    served = Stateless(server)
    result = served.result(
        "tools/call", {"name": "confirm_delete", "arguments": {"name": "bob"}}, capabilities={}
    )
    assert (result["isError"], text(result)) == (True, "this client cannot be asked")


def test_sampling_asks_the_clients_model_and_returns_its_message() -> None:
    server, _ = asking()
    served = Stateless(server)
    asked = served.call("think")
    sample = asked["inputRequests"]["q0"]
    assert sample["method"] == "sampling/createMessage"
    assert sample["params"]["maxTokens"] == 5 and sample["params"]["systemPrompt"] == "Be brief"
    reply = {"role": "assistant", "content": {"type": "text", "text": "maybe"}, "model": "m"}
    retry = {"name": "think", "arguments": {}, "requestState": asked["requestState"]}
    done = served.result("tools/call", {**retry, "inputResponses": {"q0": reply}})
    assert text(done) == "you said maybe"


def test_progress_and_logs_reach_a_client_that_asked_for_them() -> None:
    server, _ = asking()
    server.logging = True
    served = Stateless(server)
    params: dict[str, Any] = {"name": "count", "arguments": {}}
    asked: dict[str, Any] = {"progressToken": "p", "io.modelcontextprotocol/logLevel": "info"}
    frames = served.send(message("tools/call", params, **asked))
    progress = [f["params"] for f in frames if f.get("method") == "notifications/progress"]
    assert [(p["progress"], p["message"]) for p in progress] == [(1, "step 1"), (2, "step 2")]
    (logged,) = [f["params"] for f in frames if f.get("method") == "notifications/message"]
    assert logged == {"level": "info", "data": {"counted": 2}}
    assert text(frames[-1]["result"]) == "7 2026-07-28 None"
    quiet = served.send(message("tools/call", params))  # asked for neither
    assert [f.get("method") for f in quiet] == [None]


def test_a_function_starts_a_task_at_run_time_where_the_client_takes_one() -> None:
    server = Server("run-as-task")

    async def work(task: TaskContext) -> dict[str, Any]:
        await task.report("working")
        return {"content": [{"type": "text", "text": "done later"}]}

    @server.tool()
    def later(ctx: Context) -> str | TaskStarted:
        return ctx.run_as_task(work) if ctx.accepts_task else "done now"

    served = replica(server)
    call = {"name": "later", "arguments": {}}

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        now = await post(served, message("tools/call", call))
        task = await post(served, message("tools/call", call, capabilities=DECLARING))
        return now["result"], task["result"]

    now, task = asyncio.run(both())
    assert text(now) == "done now"
    assert task["resultType"] == "task" and task["status"] == "working"


def test_an_error_the_client_answers_a_question_with_is_the_tools_failure() -> None:
    server, _ = asking()
    client = Handshake(server)
    call = {"name": "confirm_delete", "arguments": {"name": "bob"}}
    (ask,) = client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    refusal = {"code": -32600, "message": "the user closed the dialog"}
    (done,) = client.send({"jsonrpc": "2.0", "id": ask["id"], "error": refusal})
    assert done["id"] == 1 and done["result"]["isError"] is True
    assert text(done["result"]) == "the client answered with an error: the user closed the dialog"
