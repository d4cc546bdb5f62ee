"""Import and first-use costs, each measured in fresh interpreters (minimum of N)."""

from __future__ import annotations

import os
import subprocess
import sys

from bench.workloads import ROOT, tools_call_request

_TIMED = """\
import time
t = time.perf_counter()
{body}
print(time.perf_counter() - t)
"""


def _snippets() -> dict[str, str]:
    raw = tools_call_request().messages[0].raw
    return {
        "import pydantic.BaseModel": "from pydantic import BaseModel",
        "import pydantic + first validate_json (one-field model)": (
            "from pydantic import BaseModel\n"
            "class M(BaseModel):\n    x: int\n"
            "M.model_validate_json(b'{\"x\": 1}')"
        ),
        "import mcp_schema.v2026_07_28": "import mcp_schema.v2026_07_28",
        "from mcp_schema.v2026_07_28 import CallToolRequest": (
            "from mcp_schema.v2026_07_28 import CallToolRequest"
        ),
        "import mcp_schema.codec": "import mcp_schema.codec",
        "import mcp_types.methods": "import mcp_types.methods",
        "import + first decode (ours, tools/call)": f"from mcp_schema import codec\ncodec.decode({raw!r})",
        "import + first decode_dict (ours, tools/call)": (
            f"from mcp_schema import codec\ncodec.decode_dict({raw!r})"
        ),
        "import + first parse (mcp-types, tools/call)": (
            "from mcp_types import jsonrpc, methods\n"
            f"e = jsonrpc.jsonrpc_message_adapter.validate_json({raw!r})\n"
            "methods.parse_client_request(e.method, '2026-07-28', e.params)"
        ),
    }


def _once(body: str) -> float:
    # Installed packages come with bytecode: let the warm-up run write it.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run(
        [sys.executable, "-c", _TIMED.format(body=body)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def measure(runs: int = 10) -> dict[str, float]:
    """Seconds: the minimum over ``runs`` fresh processes (bytecode caches warm)."""
    results: dict[str, float] = {}
    snippets = _snippets()
    for body in snippets.values():
        _once(body)  # write .pyc files first
    samples: dict[str, list[float]] = {name: [] for name in snippets}
    for _ in range(runs):
        for name, body in snippets.items():
            samples[name].append(_once(body))
    for name, values in samples.items():
        results[name] = min(values)
    return results
