"""``python -m mcp_schema validate`` on a sample file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CAPTURE = Path(__file__).parents[1] / "data" / "captures" / "typescript-2025-11-25.jsonl"


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
    assert out[-1] == f"{len(lines) - 3} valid, 3 invalid"
    assert f"line {len(lines) - 2}: -32602 $.params.name: Input should be a valid string" in out
    assert any(line.startswith(f"line {len(lines) - 1}: -32700") for line in out)
    assert f"line {len(lines)}: -32700 $: an empty line is not a message" in out  # not skipped

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


# -- issue 19: every I/O failure is exit status 2 and one line ---------------------------


def _cli(args: list[str], **streams: Any) -> subprocess.CompletedProcess[str]:
    result: subprocess.CompletedProcess[str] = subprocess.run(
        [sys.executable, "-m", "mcp_schema", *args], text=True, timeout=120, **streams
    )
    return result


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith("error: "), stderr
    return lines[0]


DIFF = ["diff", "2024-11-05", "2026-07-28"]


def _good(tmp_path: Path) -> Path:
    good = tmp_path / "ok.jsonl"
    good.write_text('{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    return good


def test_a_full_disk_is_exit_2(tmp_path: Path) -> None:
    full = Path("/dev/full")
    if not full.exists():
        pytest.skip("no /dev/full here")
    for args in (DIFF, [*DIFF, "--json"], ["validate", str(_good(tmp_path))]):
        with full.open("w") as sink:
            result = _cli(args, stdout=sink, stderr=subprocess.PIPE)
        assert result.returncode == 2, result.stderr
        assert "No space left" in _one_line(result.stderr)


def test_a_closed_pipe_is_exit_2(tmp_path: Path) -> None:
    for args in (DIFF, [*DIFF, "--json"], ["validate", str(_good(tmp_path))]):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before anything is written
        try:
            result = _cli(args, stdout=write, stderr=subprocess.PIPE)
        finally:
            os.close(write)
        assert result.returncode == 2, result.stderr
        assert "Broken pipe" in _one_line(result.stderr)


def test_a_closed_stdout_is_exit_2(tmp_path: Path) -> None:
    for args in (DIFF, ["validate", str(_good(tmp_path))]):
        code = (
            "import os, sys; os.close(1); sys.stdout = None; "
            f"from mcp_schema.cli import main; sys.exit(main({args!r}))"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 2, result.stderr
        assert "standard output is closed" in _one_line(result.stderr)
        # The same with the shell's `>&-`: the interpreter starts without stdout.
        shell = subprocess.run(
            ["sh", "-c", f'"{sys.executable}" -m mcp_schema {" ".join(args)} >&-'],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert shell.returncode == 2, shell.stderr
        _one_line(shell.stderr)


def test_a_huge_max_line_bytes_means_no_limit(tmp_path: Path) -> None:
    result = _cli(
        ["validate", str(_good(tmp_path)), "--max-line-bytes", str(2**63 - 1)],
        capture_output=True,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "1 valid, 0 invalid\n", "")
    huge = _cli(
        ["validate", str(_good(tmp_path)), "--max-line-bytes", str(10**30)], capture_output=True
    )
    assert huge.returncode == 0, huge.stderr


def test_a_closed_stderr_does_not_move_the_error_to_stdout(tmp_path: Path) -> None:
    with Path("/dev/null").open("w") as sink:
        result = subprocess.run(
            [
                "sh",
                "-c",
                f'"{sys.executable}" -m mcp_schema validate "{tmp_path}/missing.jsonl" 2>&-',
            ],
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            timeout=120,
        )
    assert (result.returncode, result.stdout) == (2, "")
