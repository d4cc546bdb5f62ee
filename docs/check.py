"""Open every page of the built site in headless Chromium: ``python docs/check.py [SITE]``.

``make docs-check`` runs it on ``site/`` (``make test`` does, through
``tests/docs/test_site.py``, when a Chromium is installed). The site is served on
127.0.0.1 by the standard library's HTTP server; Chromium is driven through
its DevTools protocol over ``--remote-debugging-pipe`` (two file descriptors
carrying NUL-terminated JSON), so nothing beyond the standard library and a
Chromium binary is needed: no websocket client, no driver, no port to find,
no browser download.

A page fails when

* it does not render: no header or no main article (or one of no height),
  no ``h1``, or an empty article;
* the browser reports an error: an uncaught exception, a ``console.error``,
  a log entry of level error, a request that failed or answered 400 or more;
* it asks for anything off this server (a web font, a CDN script): the site
  must work offline;
* one of its links to this site leads to no page or file, or to an anchor
  the target page does not have.

Exit status 0 when every page passes, 1 when one fails (each problem on one
line), 2 when no Chromium is found or it cannot be driven.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--mute-audio",
    "--remote-debugging-pipe",
)
PAGE_TIMEOUT = 30.0  # seconds for one page to load
SETTLE = 0.05  # seconds after the load event for late scripts to report

# What the page says about itself, read after it loaded.
PROBE = """(() => {
  const article = document.querySelector("article.md-content__inner");
  const header = document.querySelector("header.md-header");
  const height = (el) => (el ? el.getBoundingClientRect().height : 0);
  return {
    title: document.title,
    h1: Array.from(document.querySelectorAll("article h1")).map((h) => h.textContent.trim()),
    articleHeight: height(article),
    headerHeight: height(header),
    articleText: article ? article.innerText.trim().length : 0,
    ids: Array.from(document.querySelectorAll("[id]")).map((el) => el.id),
    names: Array.from(document.querySelectorAll("a[name]")).map((el) => el.name),
    links: Array.from(document.querySelectorAll("a[href], link[href]")).map((el) => el.href),
  };
})()"""


def find_chromium(explicit: str | None = None) -> str | None:
    """``explicit``, else ``$CHROMIUM``, else the first Chromium on ``PATH``."""
    for candidate in (explicit, os.environ.get("CHROMIUM")):
        if candidate:
            return shutil.which(candidate) or (candidate if Path(candidate).is_file() else None)
    for name in CHROMIUM_NAMES:
        if found := shutil.which(name):
            return found
    return None


# -- the site, served ----------------------------------------------------------------------


class _Handler(http.server.SimpleHTTPRequestHandler):
    missing: list[str]

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.missing.append(f"{code} {self.path}")
        super().send_error(code, message, explain)


@contextlib.contextmanager
def serve(site: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve ``site`` on 127.0.0.1 (a free port); yields the base URL and the 4xx log."""
    missing: list[str] = []
    handler = functools.partial(
        type("Handler", (_Handler,), {"missing": missing}), directory=str(site)
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", missing
    finally:
        server.shutdown()
        server.server_close()


# -- Chromium over the DevTools pipe ---------------------------------------------------------


class BrowserError(RuntimeError):
    """Chromium could not be started or stopped answering."""


class Browser:
    """A headless Chromium driven over ``--remote-debugging-pipe``."""

    def __init__(self, executable: str) -> None:
        self._profile = tempfile.mkdtemp(prefix="docs-check-")
        self._log = tempfile.TemporaryFile()
        ours_read, theirs_write = os.pipe()
        theirs_read, ours_write = os.pipe()

        def child_fds() -> None:  # Chromium reads commands on fd 3 and writes on fd 4
            read, write = os.dup(theirs_read), os.dup(theirs_write)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self._process = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            pass_fds=(3, 4),
            preexec_fn=child_fds,
        )
        os.close(theirs_read)
        os.close(theirs_write)
        self._read, self._write = ours_read, ours_write
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def log_tail(self) -> str:
        self._log.seek(0)
        lines = self._log.read().decode(errors="replace").splitlines()
        return "\n".join(lines[-20:])

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium closed the pipe:\n{self.log_tail()}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = PAGE_TIMEOUT,
    ) -> dict[str, Any]:
        """Send one command; events that arrive meanwhile are kept in ``events``."""
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = session
        data = json.dumps(command).encode() + b"\0"
        while data:
            data = data[os.write(self._write, data) :]
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_for(self, event: str, timeout: float = PAGE_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not any(e["method"] == event for e in self.events):
            self.events.append(self._receive(deadline))

    def drain(self, seconds: float) -> None:
        """Collect the events of the next ``seconds``."""
        deadline = time.monotonic() + seconds
        with contextlib.suppress(BrowserError):
            while time.monotonic() < deadline:
                self.events.append(self._receive(deadline))

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)


# -- the check -------------------------------------------------------------------------------


@dataclass
class Page:
    path: str  # relative to the site root: "guide/decoding/index.html"
    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def site_pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))


def _problems_in(events: list[dict[str, Any]], base: str) -> list[str]:
    """What the browser reported while a page loaded."""
    out: list[str] = []
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            out.append(f"uncaught exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            out.append(f"console.{params['type']}: {args}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            out.append(f"browser log: {entry['text']} {entry.get('url', '')}".rstrip())
        elif method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not url.startswith((base, "data:", "blob:", "about:")):
                out.append(f"asks for a resource off the site: {url}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            out.append(f"request failed: {params.get('errorText')} ({params.get('type')})")
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            response = params["response"]
            out.append(f"HTTP {response['status']}: {response['url']}")
    return out


def _target_of(url: str, base: str, site: Path) -> tuple[str, str] | None:
    """(site path of the page or file a link leads to, its fragment); None if off the site."""
    if not url.startswith(base):
        return None
    parts = urllib.parse.urlsplit(url)
    path = urllib.parse.unquote(parts.path).lstrip("/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    elif (site / path).is_dir():
        path += "/index.html"
    return path, urllib.parse.unquote(parts.fragment)


def check(
    site: Path, chromium: str, screenshots: Path | None = None, out: Any = sys.stdout
) -> list[str]:
    """Every problem found on the site (empty when every page passes)."""
    paths = site_pages(site)
    if not paths:
        return [f"{site}: no pages (build the site first: make docs)"]
    pages: dict[str, Page] = {}
    with serve(site) as (base, missing):
        browser = Browser(chromium)
        try:
            target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
                "sessionId"
            ]
            for domain in ("Page", "Runtime", "Log", "Network"):
                browser.call(f"{domain}.enable", session=session)
            browser.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                session=session,
            )
            for path in paths:
                page = pages[path] = Page(path)
                browser.events.clear()
                navigated = browser.call(
                    "Page.navigate", {"url": base + urllib.parse.quote(path)}, session=session
                )
                if navigated.get("errorText"):
                    page.problems.append(f"does not load: {navigated['errorText']}")
                    continue
                browser.wait_for("Page.loadEventFired")
                browser.drain(SETTLE)
                page.problems += _problems_in(browser.events, base)
                probe = browser.call(
                    "Runtime.evaluate",
                    {"expression": PROBE, "returnByValue": True},
                    session=session,
                )["result"]["value"]
                if not probe["headerHeight"]:
                    page.problems.append("no header rendered (is the theme's CSS there?)")
                if not probe["articleHeight"] or not probe["articleText"]:
                    page.problems.append("no main content rendered")
                elif not probe["h1"] and path != "404.html":
                    page.problems.append("no h1 in the main content")
                page.ids = set(probe["ids"]) | set(probe["names"])
                page.links = probe["links"]
                if screenshots is not None:
                    shot = browser.call(
                        "Page.captureScreenshot", {"format": "png"}, session=session
                    )
                    target_file = screenshots / (path.replace("/", "_") + ".png")
                    target_file.write_bytes(__import__("base64").b64decode(shot["data"]))
        finally:
            browser.close()
    problems: list[str] = []
    links = anchors = 0
    for page in pages.values():
        for url in sorted(set(page.links)):
            found = _target_of(url, base, site)
            if found is None:
                continue
            links += 1
            path, fragment = found
            if path not in pages and not (site / path).is_file():
                page.problems.append(f"broken link: {url.removeprefix(base)}")
            elif fragment and path in pages:
                anchors += 1
                if fragment not in pages[path].ids:
                    page.problems.append(f"broken anchor: {url.removeprefix(base)}")
        problems += [f"{page.path}: {problem}" for problem in page.problems]
    problems += [f"server: {line}" for line in missing if not any(line in p for p in problems)]
    print(
        f"docs-check: {len(pages)} pages, {links} internal links ({anchors} to anchors), "
        f"{len(problems)} problems",
        file=out,
    )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", default="site", type=Path)
    parser.add_argument("--chromium", help="the browser (default: $CHROMIUM, else on PATH)")
    parser.add_argument("--screenshots", type=Path, help="save a PNG of each page here")
    args = parser.parse_args(argv)
    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("docs-check: no Chromium found (apt-get install chromium)", file=sys.stderr)
        return 2
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    try:
        problems = check(args.site, chromium, args.screenshots)
    except BrowserError as err:
        print(f"docs-check: {err}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
