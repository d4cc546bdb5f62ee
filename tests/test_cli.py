"""``python -m mcp_schema validate`` on a sample file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CAPTURE = Path(__file__).parent / "data" / "captures" / "typescript-2025-11-25.jsonl"


def test_cli_reports_invalid_lines_and_counts(tmp_path: Path) -> None:
    sample = tmp_path / "sample.jsonl"
    lines = [
        json.dumps(json.loads(line)["message"])
        for line in CAPTURE.read_text().splitlines()
        if "message" in json.loads(line)
        and json.loads(line)["message"].get("method") != "tools/frobnicate"
    ]
    lines += [
        '{"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {"name": 5}}',
        "not json",
        "",
    ]
    sample.write_text("\n".join(lines) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "mcp_schema", "validate", str(sample)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    out = result.stdout.splitlines()
    assert out[-1] == f"{len(lines) - 3} valid, 2 invalid"
    assert f"line {len(lines) - 2}: -32602 $.params.name: Input should be a valid string" in out
    assert any(line.startswith(f"line {len(lines) - 1}: -32700") for line in out)

    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(lines[:-3]) + "\n")
    ok = subprocess.run(
        [sys.executable, "-m", "mcp_schema", "validate", "-"],
        input=good.read_text(),
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and ok.stdout.strip() == f"{len(lines) - 3} valid, 0 invalid"


def test_cli_offers_the_compiled_versions() -> None:
    from mcp_schema import SUPPORTED_VERSIONS

    result = subprocess.run(
        [sys.executable, "-m", "mcp_schema", "validate", "-", "--version", "1999-01-01"],
        input="",
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert all(repr(version) in result.stderr for version in SUPPORTED_VERSIONS), result.stderr
