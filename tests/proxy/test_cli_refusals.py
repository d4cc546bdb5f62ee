"""``python -m mcp_schema validate`` on hostile input: missing files, closed streams, full disks, overlong lines, endless input.

Each must end in a result or a typed `McpError` (a wrong argument type from the
calling program: ``TypeError``), in linear cost, with bounded error output.
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_schema.cli import main as cli_main


def run_cli(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_schema", "validate", *args],
        capture_output=True,
        text=True,
        timeout=60,
        **kw,
    )


def assert_one_line_failure(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_cli_missing_file_and_directory_exit_2(tmp_path: Path) -> None:
    assert_one_line_failure(run_cli(str(tmp_path / "absent.jsonl")))
    assert_one_line_failure(run_cli(str(tmp_path)))


def test_cli_closed_stdin_exits_2() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; os.close(0); sys.stdin = None; "
            "from mcp_schema.cli import main; sys.exit(main(['validate', '-']))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_line_failure(result)


def test_cli_unsupported_version_on_an_empty_file_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert_one_line_failure(run_cli(str(empty), "--version", "2099-01-01"))
    assert_one_line_failure(run_cli())  # usage


def test_cli_full_disk_exits_2(tmp_path: Path) -> None:
    sample = tmp_path / "one.jsonl"
    sample.write_bytes(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n' * 10)

    class FullDisk(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    err = io.StringIO()
    assert cli_main(["validate", str(sample)], stdout=FullDisk(), stderr=err) == 2
    assert err.getvalue() == "error: I/O error: No space left on device\n"
    if Path("/dev/full").exists():  # the real thing, through a subprocess
        with open("/dev/full", "w") as full:
            assert_one_line_failure(
                subprocess.run(
                    [sys.executable, "-m", "mcp_schema", "validate", str(sample)],
                    stdout=full,
                    stderr=subprocess.PIPE,
                    text=True,
                    timeout=60,
                )
            )


def test_cli_escapes_peer_text_on_an_ascii_stdout(tmp_path: Path) -> None:
    sample = tmp_path / "inject.jsonl"
    sample.write_text(
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "x\nline 2: -32602 $: forged \u00e9" + "m" * 500}
        )
        + "\n"
    )
    result = run_cli(str(sample), env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and lines[-1] == "0 valid, 1 invalid"
    assert lines[0].startswith("line 1: -32601 ") and len(lines[0]) < 600


def test_cli_reports_an_overlong_line_and_goes_on(tmp_path: Path) -> None:
    sample = tmp_path / "long.jsonl"
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    sample.write_bytes(b"[" * 5000 + b"\n" + ping + b"\n")
    out, err = io.StringIO(), io.StringIO()
    assert (
        cli_main(["validate", str(sample), "--max-line-bytes", "1000"], stdout=out, stderr=err) == 1
    )
    assert out.getvalue().splitlines() == [
        "line 1: -32700 $: line of 5,000 bytes is longer than 1,000, not read",
        "1 valid, 1 invalid",
    ]


def test_cli_on_dev_zero_stays_small() -> None:
    # An endless line: the CLI keeps skipping it in bounded chunks instead of growing.
    script = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
        "from mcp_schema.cli import main; sys.exit(main(['validate', '/dev/zero']))"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=3)
    finally:
        process.kill()
        _, stderr = process.communicate(timeout=30)
    assert b"MemoryError" not in stderr and b"Traceback" not in stderr
