"""``examples/http_server.py`` with ``MCP_TASKS_DB`` (a `SqliteTaskStore`),
one uvicorn process SIGKILLed and started again on the same file: its tasks
are still there."""

from __future__ import annotations

import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from mcp_schema.tasks.store import WORKER_STOPPED
from mcp_schema.versions import TASKS_EXTENSION

# The cluster harness's way to start a process and wait for its port (stopped
# on the stack's way out): one of it in the test suite.
from tests.cluster.harness import EXAMPLES, _started
from tests.cluster.test_tasks import polled, sent
from tests.http.test_broker import _free_port

pytestmark = pytest.mark.slow
UNASKABLE: dict[str, Any] = {
    "extensions": {TASKS_EXTENSION: {}}
}  # long_count asks no question of it


def served(stack: ExitStack, database: Path, log: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """A new uvicorn process serving the example on ``database``: its host:port, and it."""
    port = _free_port()
    command = [sys.executable, "-m", "uvicorn", "--app-dir", str(EXAMPLES), "http_server:app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    environment = {"MCP_TASKS_DB": str(database), "MCP_TASK_LEASE_SECONDS": "1"}
    process = _started(stack, command, port, "the example", log, MCP_REDIS_URL="", **environment)
    return f"127.0.0.1:{port}", process


def test_tasks_survive_a_restart_finished_or_failed_for_their_dead_worker(tmp_path: Path) -> None:
    """The store keeps the records; nothing resumes the work (the package
    runs no scheduler). So after the restart the task that had finished is
    served ``completed`` with its result, and the one whose work the kill
    interrupted (waiting for its input) is ``failed``, its worker stopped,
    once its one-second lease has passed."""
    database = tmp_path / "tasks.db"
    with ExitStack() as first:
        where, process = served(first, database, tmp_path / "first.log")
        finished, _ = sent(where, "tools/call", UNASKABLE, name="long_count", arguments={})
        waiting, _ = sent(where, "tools/call", name="long_count", arguments={})
        done = polled(where, finished["taskId"], lambda t: t["status"] == "completed")
        polled(where, waiting["taskId"], lambda t: t["status"] == "input_required")
        process.kill()  # SIGKILL: no shutdown, no last write
        process.wait(10)
    with ExitStack() as second:
        where, _ = served(second, database, tmp_path / "second.log")
        again, _ = sent(where, "tasks/get", taskId=finished["taskId"])
        assert (again["status"], again["result"]) == ("completed", done["result"])
        assert again["result"]["content"] == [{"type": "text", "text": "counted to 3"}]
        failed = polled(where, waiting["taskId"], lambda t: t["status"] != "input_required")
        assert failed["status"] == "failed" and failed["statusMessage"] == WORKER_STOPPED, failed
        assert failed["error"]["code"] == -32603 and "inputRequests" not in failed
