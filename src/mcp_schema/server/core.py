"""`Server`: an MCP server written as decorated functions (hand-written
runtime module; see the package and ``docs/guide/remote-server.md``).

It makes the same things a hand-written server is made of, from the
functions: the `mcp_schema.http.Endpoint` handler (`Server.handler`), the
info and capabilities, and, with `Server.asgi`, the whole replica.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, TypeVar, overload

from mcp_schema.auth.access import POLICY_SECONDS, Access, Policy
from mcp_schema.auth.scopes import Kind
from mcp_schema.http.answers import ANSWER_SECONDS
from mcp_schema.server.context import Context
from mcp_schema.server.dispatch import Dispatch
from mcp_schema.server.prompts import Prompt
from mcp_schema.server.resources import Resource
from mcp_schema.server.tools import TaskMode, Tool
from mcp_schema.server.toolset import ToolSet
from mcp_schema.session import Event, ServerSession

__all__ = ["Server"]

F = TypeVar("F", bound=Callable[..., Any])
_NONE: frozenset[str] = frozenset()


class Server:
    """A server named ``name`` at ``version`` (its ``Implementation``, with
    ``title``); ``instructions`` for the client; ``logging``: declare the
    ``logging`` capability (`Context.log` needs a client that asked for
    logs); ``mask_errors``: a tool's unexpected exception is told to the
    client as a failure alone, not its type and message (it is logged either
    way); ``timeout``: the seconds a call may run in the replica's app
    before it is cancelled and answered -32603 (the endpoint's ``answer_seconds``);
    ``inline``: the sync functions run in the event loop, not each call in a
    worker thread (each item's ``inline=`` decides for it): for functions
    that never block, the call answered at once, with no thread hop.

    Authorization per tool, resource and prompt (`access`, an
    `mcp_schema.auth.Access` the replica's endpoint consults): each item's
    ``scopes=``; ``policy`` (sync or async, given an
    `mcp_schema.auth.Attempt`: True allows) with ``policy_seconds`` to
    answer; ``list_missing``: False hides an item whose scopes the caller
    lacks (by default it stays listed, and a call is the step-up challenge).
    See ``docs/guide/authorization.md``."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        logging: bool = False,
        mask_errors: bool = False,
        timeout: float = ANSWER_SECONDS,
        policy: Policy | None = None,
        policy_seconds: float = POLICY_SECONDS,
        list_missing: bool = True,
        inline: bool = False,
    ) -> None:
        self.inline = inline
        self.info: dict[str, Any] = {"name": name, "version": version}
        if title is not None:
            self.info["title"] = title
        self.instructions = instructions
        self.logging = logging
        self.timeout = timeout
        self.tools = ToolSet()
        self.resources: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}
        self.access = Access(
            scopes=self.scopes_of,
            policy=policy,
            policy_seconds=policy_seconds,
            list_missing=list_missing,
        )
        """What each caller may reach (the endpoint's gate; `Access.protected_by`
        takes a resource server's challenge URL and scopes)."""
        self.dispatch = Dispatch(
            self.tools, self.resources, self.prompts, mask_errors=mask_errors, access=self.access
        )

    def scopes_of(self, kind: Kind, name: str) -> frozenset[str]:
        """The scopes the ``kind`` item ``name`` declares (a resource by its
        URI, or a template's by a URI it matches, or by the template itself)."""
        item: Tool | Prompt | Resource | None
        if kind == "tool":
            item = self.tools.tools.get(name)
        elif kind == "prompt":
            item = self.prompts.get(name)
        else:
            item = self.resources.get(name)
            if item is None:
                item = next((r for r in self.resources.values() if r.match(name) is not None), None)
        return _NONE if item is None else item.scopes

    @property
    def capabilities(self) -> dict[str, Any]:
        """What the server declares: ``tools`` (their list changes), and
        ``resources``, ``prompts`` and ``logging`` when it has them."""
        declared: dict[str, Any] = {"tools": {"listChanged": True}}
        if self.resources:
            declared["resources"] = {}
        if self.prompts:
            declared["prompts"] = {}
        if self.logging:
            declared["logging"] = {}
        return declared

    @property
    def handler(self) -> Callable[[ServerSession, Event], Awaitable[None] | None]:
        """The `mcp_schema.http.Endpoint` handler serving the decorated
        functions (give the endpoint ``handler_version="2026-07-28"``)."""
        return self.dispatch.handler

    async def handle(self, session: ServerSession, event: Event) -> None:
        """Serve ``event`` of ``session``, awaiting what the functions await."""
        await self.dispatch.serve(session, event)

    # -- decorators -------------------------------------------------------------------------

    @overload
    def tool(self, function: F, /) -> F: ...

    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        task: TaskMode = False,
        enabled: bool = True,
        scopes: Collection[str] = (),
        inline: bool | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        name: str | Callable[..., Any] | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        structured: bool | None = None,
        task: TaskMode = False,
        enabled: bool = True,
        scopes: Collection[str] = (),
        inline: bool | None = None,
    ) -> Any:
        """``@server.tool()``: the function is a tool (`mcp_schema.server.tools`):
        ``name`` (default the function's), ``title``, ``description`` (default
        its docstring), ``annotations`` (``ToolAnnotations``), ``structured``
        (False: no ``outputSchema``), ``task`` (True: run as a task of the
        Tasks extension when the client takes one; ``"required"``: only
        then), ``enabled`` (False: listed only once enabled, `ToolSet.enable`),
        ``scopes`` (what a call needs: `access`), ``inline`` (True: a sync
        function runs in the event loop, for one that never blocks; False: in
        a worker thread; None, the default: as the server's ``inline`` says)."""

        def add(function: F) -> F:
            self.tools.add(
                Tool(
                    function,
                    context=Context,
                    name=name if isinstance(name, str) else None,
                    title=title,
                    description=description,
                    annotations=annotations,
                    structured=structured,
                    task=task,
                    enabled=enabled,
                    scopes=scopes,
                    inline=self.inline if inline is None else inline,
                )
            )
            return function

        return add(name) if callable(name) else add

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        scopes: Collection[str] = (),
        inline: bool | None = None,
    ) -> Callable[[F], F]:
        """``@server.resource("config://app")`` or a template
        (``"users://{user_id}"``, its variables the function's parameters):
        see `mcp_schema.server.resources`; ``scopes``: what a read needs;
        ``inline``: as `tool`'s."""

        def add(function: F) -> F:
            if uri in self.resources:
                raise ValueError(f"a resource at {uri!r} is defined already")
            self.resources[uri] = Resource(
                function,
                uri,
                context=Context,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                scopes=scopes,
                inline=self.inline if inline is None else inline,
            )
            return function

        return add

    @overload
    def prompt(self, function: F, /) -> F: ...

    @overload
    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        scopes: Collection[str] = (),
        inline: bool | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        name: str | Callable[..., Any] | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        scopes: Collection[str] = (),
        inline: bool | None = None,
    ) -> Any:
        """``@server.prompt()``: the function is a prompt (`mcp_schema.server.prompts`);
        ``scopes``: what a ``prompts/get`` needs; ``inline``: as `tool`'s."""

        def add(function: F) -> F:
            made = Prompt(
                function,
                context=Context,
                name=name if isinstance(name, str) else None,
                title=title,
                description=description,
                scopes=scopes,
                inline=self.inline if inline is None else inline,
            )
            if made.name in self.prompts:
                raise ValueError(f"a prompt named {made.name!r} is defined already")
            self.prompts[made.name] = made
            return function

        return add(name) if callable(name) else add

    # -- the tool set -----------------------------------------------------------------------

    async def enable(self, *names: str) -> None:
        """Enable the tools ``names``, on every replica (`ToolSet`)."""
        await self.tools.enable(names, True)

    async def disable(self, *names: str) -> None:
        """Disable the tools ``names``, on every replica."""
        await self.tools.enable(names, False)

    async def toggle(self, name: str) -> bool:
        """Enable the tool ``name`` if it is disabled, else disable it, on
        every replica, each toggle one transition; whether it is enabled now."""
        return await self.tools.toggle(name)

    # -- serving ----------------------------------------------------------------------------

    def asgi(self, **options: Any) -> Any:
        """The ASGI app of one replica (`mcp_schema.server.app.build`): the
        settings of `mcp_schema.server.config` from ``options``, else the
        environment. One app per server in a process: the tool set is shared
        through the last one built."""
        from mcp_schema.server.app import build

        return build(self, **options)
