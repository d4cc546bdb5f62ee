"""examples/http_server.py's ``long_count``: a task for a client that declared
the Tasks extension (its progress in the status message), an ordinary call for
one that did not; and examples/conformance_tasks.py's fixtures listed."""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path
from typing import Any

from mcp_schema.http import Endpoint
from mcp_schema.tasks import DEFAULT_POLL_INTERVAL_MS
from tests.tasks.serving import DECLARING, PLAIN, get, post, request, settled

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_long_count_runs_as_a_task_where_the_client_takes_one() -> None:
    async def test() -> None:
        example = runpy.run_path(str(EXAMPLES / "http_server.py"))
        served: Endpoint = example["server"].asgi(env={}).endpoint
        call: dict[str, Any] = {"name": "long_count", "arguments": {}}
        plain = await post(served, request("tools/call", call, PLAIN))
        assert plain["result"]["content"][0]["text"] == "counted to 3"
        created = await post(served, request("tools/call", call, DECLARING))
        task_id = created["result"]["taskId"]
        assert created["result"]["pollIntervalMs"] == DEFAULT_POLL_INTERVAL_MS
        for _ in range(100):  # the work's first report
            working = await settled(served, task_id, "working")
            if "statusMessage" in working:
                break
            await asyncio.sleep(0.01)
        assert working["statusMessage"] == "counted 1 of 3"
        listed = await post(served, request("tools/list", {}))
        assert "long_count" in [t["name"] for t in listed["result"]["tools"]]
        assert served.tasks is not None
        await served.tasks.stop()
        assert (await get(served, task_id))["result"][
            "status"
        ] == "working"  # until its lease passes

    asyncio.run(asyncio.wait_for(test(), 5))


def test_the_conformance_tasks_fixtures_list_what_the_suite_calls() -> None:
    fixtures = runpy.run_path(str(EXAMPLES / "conformance_tasks.py"))
    names = {t["name"] for t in fixtures["TOOLS"]}
    assert {"greet", "slow_compute", "failing_job", "protocol_error_job"} <= names
    assert {"confirm_delete", "multi_input", "test_tool_with_task"} <= names
