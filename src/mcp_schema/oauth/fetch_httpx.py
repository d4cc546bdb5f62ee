"""`HttpxFetcher`: the OAuth client's `mcp_schema.oauth.fetch.Fetcher` on
an ``httpx.AsyncClient`` of the caller's (its transport, its proxies),
within the bounds of `mcp_schema.oauth.fetch.BoundedFetcher`. Only this
module of the OAuth client imports httpx; the default fetcher
(`mcp_schema.oauth.fetch.HttpFetcher`) needs none."""

from __future__ import annotations

import httpx

from mcp_schema.errors import clip
from mcp_schema.oauth.errors import FetchError
from mcp_schema.oauth.fetch import (
    FETCH_SECONDS,
    MAX_FETCHED,
    MAX_REDIRECTS,
    BoundedFetcher,
    Request,
    Response,
    shown,
)

__all__ = ["HttpxFetcher"]


class HttpxFetcher(BoundedFetcher):
    """The `Fetcher` on httpx. ``http``: an ``httpx.AsyncClient`` of the
    caller's (its own redirect following is not used; kept open by
    `aclose`), else one of its own."""

    def __init__(
        self,
        http: httpx.AsyncClient | None = None,
        *,
        timeout: float = FETCH_SECONDS,
        max_bytes: int = MAX_FETCHED,
        max_redirects: int = MAX_REDIRECTS,
        guard: bool = False,
    ) -> None:
        super().__init__(
            timeout=timeout, max_bytes=max_bytes, max_redirects=max_redirects, guard=guard
        )
        self._http = httpx.AsyncClient() if http is None else http
        self._owned = http is None

    async def aclose(self) -> None:
        if self._owned:
            await self._http.aclose()

    async def exchange(self, request: Request, url: str) -> Response:
        headers, body = request.encoded()
        try:
            async with self._http.stream(
                request.method,
                url,
                headers=headers,
                content=body or None,
                follow_redirects=False,
                timeout=self.timeout,
            ) as answer:
                declared = answer.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_bytes:
                    raise FetchError(f"{shown(url)}: an answer over {self.max_bytes:,} bytes")
                read = bytearray()
                async for chunk in answer.aiter_bytes():
                    read += chunk
                    if len(read) > self.max_bytes:
                        raise FetchError(f"{shown(url)}: an answer over {self.max_bytes:,} bytes")
                fields = tuple((k.lower(), v) for k, v in answer.headers.multi_items())
                return Response(answer.status_code, fields, bytes(read))
        except httpx.HTTPError as exc:
            reason = clip(str(exc)) or type(exc).__name__
            raise FetchError(f"{shown(url)}: {reason}") from None
