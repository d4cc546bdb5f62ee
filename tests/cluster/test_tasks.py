"""The Tasks extension across replicas (`tests.cluster.harness`: three
replicas of ``examples/http_server.py`` whose task store is a
`RedisTaskStore` on their shared Redis, behind nginx): a ``long_count`` task
created through nginx on one replica is polled, answered, finished and
cancelled through the others, by hand-made 2026-07-28 HTTP declaring the
extension; and a task whose replica is SIGKILLed mid-work is reported
``failed`` through another replica once its lease passes (the replicas'
lease shortened by ``MCP_TASK_LEASE_SECONDS``)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_schema.http_headers import request_headers
from mcp_schema.tasks.store import WORKER_STOPPED
from mcp_schema.versions import TASKS_EXTENSION
from tests.cluster.harness import Cluster, running
from tests.cluster.test_failover import killed
from tests.cluster.test_replicas import address, exchange

pytestmark = pytest.mark.cluster
LEASE = 2.0  # seconds: the replicas' lease, so that a dead worker shows soon
DECLARING: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}
GO_ON = {"go_on": {"action": "accept", "content": {}}}  # the answer to long_count's one question


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work = tmp_path_factory.mktemp("tasks")
    with running(work, MCP_TASK_LEASE_SECONDS=str(LEASE)) as started:
        yield started
    for log in sorted(work.glob("replica-*.log")):  # a replica's failure is only logged
        assert "Traceback" not in log.read_text(errors="replace"), log.read_text()[-3000:]


def sent(
    where: str, method: str, capabilities: dict[str, Any] = DECLARING, **params: Any
) -> tuple[dict[str, Any], str]:
    """A 2026-07-28 request of a client with ``capabilities`` (by default
    declaring the extension, and elicitation), sent to ``where``: its result,
    and the replica that served it (nginx's ``X-Upstream``)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    message = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {**params, "_meta": meta}}
    status, found, body = exchange(where, "POST", message, **request_headers(message))
    answer = json.loads(body)
    assert status == 200 and "result" in answer, body
    return answer["result"], found.get("x-upstream", where)


def created(cluster: Cluster) -> tuple[str, str, list[str]]:
    """A new ``long_count`` task through nginx: its id, the replica that runs
    it, and the other two."""
    task, holder = sent(address(cluster), "tools/call", name="long_count", arguments={})
    assert task["resultType"] == "task" and task["status"] == "working", task
    others = [r.address for r in cluster.replicas if r.address != holder]
    assert len(others) == 2, (holder, others)
    return task["taskId"], holder, others


def polled(where: str, task_id: str, until: Any, seconds: float = 15.0) -> dict[str, Any]:
    """``tasks/get`` through ``where`` until ``until(task)`` holds (every 0.1 s)."""
    deadline = time.monotonic() + seconds
    while True:
        task, _ = sent(where, "tasks/get", taskId=task_id)
        if until(task):
            return task
        assert time.monotonic() < deadline, f"{task_id} on {where}: {task}"
        time.sleep(0.1)


def test_a_task_is_answered_and_finished_through_other_replicas(cluster: Cluster) -> None:
    task_id, _, (polling, answering) = created(cluster)
    asked = polled(polling, task_id, lambda t: t["status"] == "input_required")
    assert asked["inputRequests"]["go_on"]["method"] == "elicitation/create"
    assert asked["statusMessage"] == "counted 2 of 3"
    ack, _ = sent(answering, "tasks/update", taskId=task_id, inputResponses=GO_ON)
    assert ack["resultType"] == "complete"
    done = polled(polling, task_id, lambda t: t["status"] == "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "counted to 3"}]
    assert "inputRequests" not in done and "error" not in done
    again, _ = sent(answering, "tasks/get", taskId=task_id)  # the third replica reads alike
    assert (again["status"], again["result"]) == ("completed", done["result"])


def test_a_task_cancelled_through_another_replica_stays_cancelled(cluster: Cluster) -> None:
    task_id, _, (cancelling, polling) = created(cluster)
    polled(polling, task_id, lambda t: "statusMessage" in t)  # its work has begun
    ack, _ = sent(cancelling, "tasks/cancel", taskId=task_id)
    assert ack["resultType"] == "complete"
    assert polled(polling, task_id, lambda t: True)["status"] == "cancelled"
    time.sleep(3.5)  # long_count's whole run: its worker, on the holder, stopped
    late = polled(polling, task_id, lambda t: True)
    assert late["status"] == "cancelled" and "result" not in late, late


def test_a_task_whose_replica_is_killed_is_failed_through_another(cluster: Cluster) -> None:
    task_id, holder, (polling, _) = created(cluster)
    polled(polling, task_id, lambda t: t["status"] == "working" and "statusMessage" in t)
    victim = next(r for r in cluster.replicas if r.address == holder)
    killed(victim)  # SIGKILL: nothing of the worker writes again
    still = polled(polling, task_id, lambda t: True)
    assert still["status"] == "working"  # its last renewal's lease has not passed yet
    # Once its lease passes (not at its TTL, an hour away), read on another replica:
    failed = polled(polling, task_id, lambda t: t["status"] != "working", seconds=LEASE + 5)
    assert failed["status"] == "failed" and failed["statusMessage"] == WORKER_STOPPED, failed
    assert failed["error"]["code"] == -32603 and "result" not in failed
