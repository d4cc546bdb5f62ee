"""A cluster of its own (`tests.cluster.harness`: three replicas of
``examples/http_server.py``, Redis, nginx), for what the shared one must not
suffer: racing toggles through two replicas, each one transition and none
lost; and replicas killed (SIGKILL) between a 2026-07-28 ``ask`` and its
retry, which completes through nginx on a replica still alive, by
hand-made HTTP and with the official Python SDK client (2026-07-28 mode,
its elicitation callback killing the replica that served the call)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client import Client

from tests.cluster.harness import Cluster, Replica, running
from tests.cluster.test_replicas import TOOLS, address, called, exchange, stateless

pytestmark = pytest.mark.cluster
ANSWER = {"word": {"action": "accept", "content": {"text": "yes"}}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with running(tmp_path_factory.mktemp("failover")) as started:
        yield started


def tools(where: str) -> list[str]:
    listed, _ = called(where, "tools/list")
    return [t["name"] for t in listed["tools"]]


def test_racing_toggles_through_two_replicas_are_each_one_transition(cluster: Cluster) -> None:
    first, second = (r.address for r in cluster.replicas[:2])
    racers = 12
    start = threading.Barrier(racers)
    said: list[str] = []

    def toggle(where: str) -> None:
        start.wait()
        result, _ = called(where, "tools/call", name="toggle")
        said.append(result["content"][0]["text"])

    threads = [
        threading.Thread(target=toggle, args=((first, second)[i % 2],)) for i in range(racers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    told = Counter(said)
    assert sum(told.values()) == racers
    # From off, an even number of transitions alternating: as many added as removed.
    assert told == {"extra added": racers // 2, "extra removed": racers // 2}, told
    assert tools(first) == tools(second) == TOOLS  # off again, as every replica reads it


def killed(replica: Replica) -> None:
    replica.process.kill()
    replica.process.wait(10)


def test_a_retry_completes_through_nginx_after_the_replica_of_its_call_is_killed(
    cluster: Cluster,
) -> None:
    victim = cluster.replicas[0]
    message, headers = stateless("tools/call", name="ask", arguments={})
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {}}
    status, _, body = exchange(victim.address, "POST", message, **headers)
    asked = json.loads(body)["result"]
    assert (status, asked["resultType"]) == (200, "input_required")
    killed(victim)  # between the call and its retry: nothing of the call was kept there
    retry = json.loads(json.dumps(message))
    retry["params"].update(inputResponses=ANSWER, requestState=asked["requestState"])
    served = set()
    for _ in range(3):  # every upstream in turn: nginx passes the dead one's share on
        status, found, body = exchange(address(cluster), "POST", retry, **headers)
        assert status == 200, body
        assert json.loads(body)["result"]["content"][0]["text"] == "you said yes"
        served.add(found["x-upstream"].split(", ")[-1])  # the replica that answered
    assert victim.address not in served


def last_ask(cluster: Cluster) -> str | None:
    """The replica that served the latest ``ask`` call nginx logged, not yet retried."""
    records = [json.loads(line) for line in cluster.access_log.read_text().splitlines()]
    asks = [r for r in records if '"ask"' in r["body"] and "requestState" not in r["body"]]
    return asks[-1]["upstream"] if asks and asks[-1] is records[-1] else None


async def asked_while_killing(cluster: Cluster) -> list[Any]:
    """The SDK client's ``ask``, whose elicitation callback kills the replica
    that answered the call input-required (nginx's log names it)."""
    victims: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        served = None
        with anyio.fail_after(5):  # nginx writes its record as the call's response ends
            while served is None:
                served = last_ask(cluster)
                await anyio.sleep(0.05)
        victim = next(r for r in cluster.replicas if r.address == served)
        killed(victim)
        victims.append(victim.address)
        return types.ElicitResult(action="accept", content={"text": "still here"})

    with anyio.fail_after(60):
        async with Client(
            cluster.url,
            mode="2026-07-28",
            read_timeout_seconds=20,
            cache=None,
            elicitation_callback=elicit,
        ) as c:
            answer = await c.call_tool("ask", {})
            listed = [t.name for t in (await c.list_tools()).tools]
    return [victims, getattr(answer.content[0], "text", None), answer.is_error, listed]


def test_the_sdk_clients_retry_survives_the_replica_of_its_call_killed(cluster: Cluster) -> None:
    alive = [r.address for r in cluster.replicas if r.process.poll() is None]
    assert len(alive) >= 2  # one to kill, one to answer the retry
    victims, said, is_error, listed = anyio.run(asked_while_killing, cluster)
    assert len(victims) == 1 and victims[0] in alive
    assert (said, is_error, listed) == ("you said still here", False, TOOLS)
