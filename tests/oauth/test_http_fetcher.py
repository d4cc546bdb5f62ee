"""`mcp_schema.oauth.fetch.HttpFetcher`, the OAuth client's default fetcher
(`mcp_schema.http.pool`, no httpx), against scripted servers on loopback:
each bound of the module holds (a body too large, declared or streamed; a
server that never answers; a redirect to another origin; too many
redirects; a POST's redirect not followed), the form and JSON bodies go as
they should, and the SSRF guard contacts nothing it refuses."""

from __future__ import annotations

import ast
import asyncio
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

from mcp_schema.oauth import FetchError, HttpFetcher
from mcp_schema.oauth.fetch import Request
from tests.http.upstream import Reader, Writer, request_of, upstream

SRC = Path(__file__).resolve().parents[2] / "src"


def _answer(status: int, body: bytes = b"", *fields: str) -> bytes:
    head = [f"HTTP/1.1 {status} X", f"content-length: {len(body)}", *fields]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def served(*answers: bytes) -> Any:
    """A script answering each request on a connection with the next of ``answers``."""
    queue = list(answers)
    seen: list[bytes] = []

    async def script(reader: Reader, writer: Writer) -> None:
        while queue and (request := await request_of(reader)):
            seen.append(request)
            writer.write(queue.pop(0))
            await writer.drain()

    script.seen = seen  # type: ignore[attr-defined]
    return script


def fetched(script: Any, request: Any, **options: Any) -> Any:
    async def main() -> Any:
        async with upstream(script) as server:
            fetcher = HttpFetcher(**options)
            try:
                url = request.url.replace("HOST", f"127.0.0.1:{server.port}")
                return await fetcher.fetch(
                    Request(
                        request.method,
                        url,
                        request.headers,
                        request.form,
                        request.json,
                        request.follow,
                    )
                )
            finally:
                await fetcher.aclose()

    return asyncio.run(main())


def test_a_form_and_a_json_body_go_as_encoded_and_the_answer_comes_whole() -> None:
    script = served(_answer(200, b'{"ok":1}'), _answer(201, b"{}"))
    answer = fetched(
        script,
        Request(
            "POST",
            "http://HOST/token",
            {"Accept": "application/json"},
            form={"grant_type": "client_credentials", "scope": "a b"},
        ),
    )
    assert (answer.status, answer.body, answer.header("content-length")) == (200, b'{"ok":1}', "8")
    head, _, body = script.seen[0].partition(b"\r\n\r\n")
    assert b"content-type: application/x-www-form-urlencoded" in head and b"accept:" in head
    assert parse_qs(body.decode()) == {"grant_type": ["client_credentials"], "scope": ["a b"]}
    posted = fetched(served(_answer(201, b"{}")), Request("POST", "http://HOST/reg", json={"a": 1}))
    assert posted.status == 201


@pytest.mark.parametrize(
    "answer",
    [
        _answer(200, b"x" * 2048),  # declared
        b"HTTP/1.1 200 X\r\ntransfer-encoding: chunked\r\n\r\n"
        + b"400\r\n"
        + b"x" * 1024
        + b"\r\n" * 3,
    ],
)
def test_an_answer_over_the_size_bound_is_a_fetch_error(answer: bytes) -> None:
    with pytest.raises(FetchError, match="over 1,000 bytes"):
        fetched(served(answer), Request("GET", "http://HOST/meta"), max_bytes=1000)


def test_a_server_that_never_answers_is_a_fetch_error_within_the_timeout() -> None:
    async def silent(reader: Reader, writer: Writer) -> None:
        await request_of(reader)
        await asyncio.sleep(30)

    started = time.monotonic()
    with pytest.raises(FetchError, match=r"no answer within|upstream"):
        fetched(silent, Request("POST", "http://HOST/token", form={"a": "b"}), timeout=0.3)
    assert time.monotonic() - started < 3


def test_redirects_stay_within_the_origin_and_within_their_bound() -> None:
    to_other = _answer(302, b"", "location: http://127.0.0.2:9/meta")
    with pytest.raises(FetchError, match="another origin"):
        fetched(served(to_other), Request("GET", "http://HOST/meta"))
    again = _answer(302, b"", "location: /meta")
    with pytest.raises(FetchError, match="more than 2 redirects"):
        fetched(served(*[again] * 4), Request("GET", "http://HOST/meta"), max_redirects=2)
    followed = fetched(served(again, _answer(200, b"{}")), Request("GET", "http://HOST/meta"))
    assert followed.status == 200
    posted = fetched(served(again), Request("POST", "http://HOST/token", form={}))
    assert posted.status == 302  # a POST's redirect is its answer, never followed


def test_the_guard_refuses_loopback_before_any_connection() -> None:
    script = served(_answer(200, b"{}"))
    with pytest.raises(FetchError):
        fetched(script, Request("GET", "https://HOST/meta"), guard=True)
    assert script.seen == []


def _imports(module: str) -> set[str]:
    """Every module ``module``'s source imports, at its top or in a function."""
    path = SRC / Path(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_the_oauth_client_and_the_gateways_source_reach_no_httpx() -> None:
    """What OAuth and --upstream-client-id import, followed through the package
    (the httpx fetcher aside, imported only when asked for): never httpx."""
    todo, seen = ["mcp_schema.oauth", "mcp_schema.gateway.upstream_oauth"], set()
    while todo:
        module = todo.pop()
        if module in seen or module == "mcp_schema.oauth.fetch_httpx":
            continue
        seen.add(module)
        for name in _imports(module):
            assert not name.startswith("httpx"), f"{module} imports {name}"
            where = SRC / Path(*name.split("."))
            if name.startswith("mcp_schema") and (
                where.is_dir() or where.with_suffix(".py").is_file()
            ):
                todo.append(name)
    assert "mcp_schema.http.pool" in seen
