"""The gate of an `mcp_schema.http.Endpoint`: what it consults, once a POST
is parsed and before its session reads it, to decide whether the request
may reach the tool, resource or prompt it names (hand-written runtime
module; `mcp_schema.auth.Access` is the one the package gives).

Why here, and not in the handler: a missing scope is answered with HTTP
403 and a ``WWW-Authenticate`` challenge, and a status is sent before
anything of the answer. A handler runs after the endpoint chose the
answer's form (one JSON body, or an event stream already started, 200), so
it cannot choose the status any more. The endpoint therefore asks the gate
with what it parsed (the method, the tool's name, the resource's URI, the
arguments) and the principal, and:

* a `Response` (the 403 step-up challenge) is the answer, at once: the
  session never reads the request, nothing changes in it;
* an `McpError` (a policy's denial, told as the item being unknown) is the
  request's JSON-RPC answer, given in place of the handler's, with the
  status and form any answer of the handler would have;
* None lets the request through.

While the endpoint runs the handler of a request its gate admitted,
`ADMITTED` is True (a handler consulting the same rules, for its lists or
where no gate ran, tells the two apart by it).

The principal comes from one place, `current_principal`: the verified
`mcp_schema.auth.Principal` of the request's `mcp_schema.http.Caller`,
which the front door (`mcp_schema.http.precheck.Precheck.admit`, the
token checked by `mcp_schema.auth.ResourceServer.authenticate`) built;
the endpoint gives it to the gate and sets it in `VERIFIED` around its
handlers (the context is copied to the tasks a handler starts, so the
server layer's listings read the same one). A front door outside the
package's (a framework's middleware) may set `VERIFIED` itself around its
call of the endpoint: the door then takes that principal as the caller's.
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mcp_schema.errors import McpError
from mcp_schema.http.stream import Response

if TYPE_CHECKING:
    from mcp_schema.auth.principal import Principal

__all__ = ["ADMITTED", "VERIFIED", "Gate", "Verdict", "current_principal"]

VERIFIED: ContextVar[Principal | None] = ContextVar("mcp_schema.http.verified", default=None)
"""The verified principal of the request being served (None: none verified)."""

ADMITTED: ContextVar[bool] = ContextVar("mcp_schema.http.admitted", default=False)
"""True while the endpoint serves a request its gate admitted: what the
handler then need not decide again (where it is False, on stdio, the server
layer applies the policy itself)."""

Verdict = Response | McpError | None
"""What a gate decides: the refusal to send, the error to answer with, or None."""


def current_principal() -> Principal | None:
    """The verified principal of the request being served (see the module)."""
    return VERIFIED.get()


@runtime_checkable
class Gate(Protocol):
    """What an endpoint consults before a POST's session reads it."""

    def admit(self, principal: Principal | None, message: dict[str, Any]) -> Awaitable[Verdict]:
        """The verdict on ``message`` (the parsed JSON-RPC message; a
        ``subscriptions/listen``'s resource URIs may be narrowed in place)."""
        ...

    def admit_now(self, principal: Principal | None, message: dict[str, Any]) -> Verdict:
        """`admit` where nothing can be awaited (`Endpoint.handle`): a
        policy that would wait denies."""
        ...
