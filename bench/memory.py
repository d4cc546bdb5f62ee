"""Bytes retained by one decoded message, measured with tracemalloc."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

import orjson

from bench import peers
from bench.workloads import Msg, Workload


def retained(decode: Callable[[], object]) -> int:
    """Traced bytes still allocated while the decoded value is held."""
    decode()  # build adapters and caches outside the measurement
    gc.collect()
    tracemalloc.start()
    try:
        # get_traced_memory() allocates nothing, unlike a Snapshot held across the call.
        before = tracemalloc.get_traced_memory()[0]
        held = decode()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del held
    return after - before


def measure(workload: Workload) -> dict[str, int]:
    msg: Msg = workload.messages[0]
    sizes = {
        "json bytes": len(msg.raw),
        "orjson.loads": retained(lambda: orjson.loads(msg.raw)),
        "ours.decode_dict": retained(lambda: peers.decoded_dicts(workload)[0]),
        "ours.decode": retained(lambda: peers.decoded(workload)[0]),
    }
    try:
        sizes["mcp-types"] = retained(lambda: peers._mcp_types_parse(msg))
    except Exception:
        sizes["mcp-types"] = -1
    return sizes
