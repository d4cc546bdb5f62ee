"""Write an MCP server as functions: ``server = Server("name", version="1.0.0")``,
then ``@server.tool()``, ``@server.resource(uri)`` and ``@server.prompt()`` on
sync or async functions, and ``app = server.asgi()`` for a replica that
serves both eras (``python -m mcp_schema serve module:server`` runs it).

The schemas come from the type hints, the arguments are checked against
them before a function runs, what it returns is the result, and a parameter
annotated `Context` asks the user or the client's model, reports progress
and logs, in both eras and on any replica. See ``docs/guide/remote-server.md``.
"""

from mcp_schema.server.context import Context, Elicited, TaskStarted
from mcp_schema.server.core import Server
from mcp_schema.server.signature import Header
from mcp_schema.server.tools import ToolError, ToolResult

__all__ = ["Context", "Elicited", "Header", "Server", "TaskStarted", "ToolError", "ToolResult"]
