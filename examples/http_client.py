"""An MCP client over Streamable HTTP on mcp-schema's `HttpClient`:
``python examples/http_client.py http://127.0.0.1:3001/mcp``.

It connects as most clients want (2026-07-28 first, ``initialize`` when the
server is of the handshake era), lists the tools and calls each, then reads
each resource and gets each prompt the server offers, and prints one line
per answer. It declares elicitation, sampling and roots, and answers every
ask: a form with a value of each field's type, a fixed sentence, no roots.

The official conformance suite runs it as a client under test (``client
--command "python examples/http_client.py"``): the suite appends the URL,
and may name the tool calls to make in ``MCP_CONFORMANCE_CONTEXT`` (JSON
``{"toolCalls": [{"name": ..., "arguments": {...}}]}``) and the protocol
version to speak in ``MCP_CONFORMANCE_PROTOCOL_VERSION``. Needs the ``http``
extra (httpx).

A server that asks for authorization (a 401) is authorized with
`mcp_schema.oauth.OAuth`. The consent is the suite's: its authorization
server redirects straight back, so `FollowRedirect` takes the code from the
redirect without a browser. The credentials the suite hands out in
``MCP_CONFORMANCE_CONTEXT`` (``client_id``, ``client_secret``,
``private_key_pem``) are used as pre-registered ones; the
``auth/client-credentials-*`` scenarios (``MCP_CONFORMANCE_SCENARIO``) use
the client credentials grant; the Client ID Metadata Document is the one the
suite expects. ``private_key_jwt`` needs the ``auth`` extra too."""

import asyncio
import json
import os
import sys
from collections.abc import Awaitable
from typing import Any

from mcp_schema.base import McpModel
from mcp_schema.codec import to_wire
from mcp_schema.errors import McpError
from mcp_schema.http.binding import Mode
from mcp_schema.http.client import HttpClient
from mcp_schema.oauth import ClientInfo, FollowRedirect, HttpFetcher, OAuth
from mcp_schema.session import InputRequested
from mcp_schema.versions import STATELESS_VERSIONS

INFO = {"name": "example-http-client", "version": "1.0.0"}
CAPABILITIES: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
SAMPLES: dict[str, Any] = {"boolean": True, "integer": 1, "number": 1, "string": "yes"}
# The Client ID Metadata Document URL the conformance suite's authorization
# server accepts as is (a real client hosts its own), and a loopback redirect URI.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://127.0.0.1:3000/callback"
# Seconds one authorization fetch may take: the suite starts every client of
# a requirement set at once, and its servers answer slowly on a loaded machine.
FETCH_SECONDS = 30.0


def sample(schema: dict[str, Any]) -> Any:
    """A value the JSON Schema ``schema`` (one property's) accepts, for the simple ones."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    return SAMPLES.get(str(schema.get("type")), "yes")


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A value of each required property of an object schema (a tool's inputSchema)."""
    properties: dict[str, Any] = schema.get("properties", {})
    required: list[str] = schema.get("required", [])
    return {name: sample(properties.get(name) or {}) for name in required}


async def answer(event: InputRequested) -> dict[str, Any]:
    """Every ask of the server answered, keyed as asked."""
    answers: dict[str, Any] = {}
    for key, asked in event.requests.items():
        wire = to_wire(asked)
        params: dict[str, Any] = wire.get("params") or {}
        if wire.get("method") == "elicitation/create":
            form: dict[str, Any] = params.get("requestedSchema", {})
            fields: dict[str, Any] = form.get("properties", {})
            content = {name: sample(field) for name, field in fields.items()}
            answers[key] = {"action": "accept", "content": content}
        elif wire.get("method") == "sampling/createMessage":
            reply = {"type": "text", "text": "a word"}
            answers[key] = {"role": "assistant", "content": reply, "model": "example"}
        else:  # roots/list
            answers[key] = {"roots": []}
    return answers


def mode_of(version: str | None) -> tuple[Mode, list[str] | None]:
    """How to connect when asked for ``version`` (auto, every version, when not)."""
    if not version:
        return "auto", None
    return ("stateless" if version in STATELESS_VERSIONS else "handshake"), [version]


async def said(what: str, answering: Awaitable[McpModel]) -> dict[str, Any]:
    """The answer's wire form, printed on one line (or the error the call raised)."""
    try:
        result = to_wire(await answering)
    except McpError as err:
        print(what, "failed:", err.message)
        return {}
    print(what, json.dumps(result)[:400])
    return result


def authorization(url: str, context: dict[str, Any], scenario: str, fetcher: HttpFetcher) -> OAuth:
    """The OAuth client of the server at ``url``, with what the suite gave."""
    client = None
    if "client_id" in context:
        client = ClientInfo(context["client_id"], context.get("client_secret"))
    if scenario.startswith("auth/client-credentials"):
        return OAuth(
            url,
            grant="client_credentials",
            client=client,
            private_key=context.get("private_key_pem"),
            signing_algorithm=context.get("signing_algorithm", "ES256"),
            fetcher=fetcher,
        )
    return OAuth(
        url,
        redirect=FollowRedirect(REDIRECT_URI, fetcher),
        fetcher=fetcher,
        client=client,
        client_metadata_url=CLIENT_METADATA_URL,
        client_metadata={"client_name": INFO["name"]},
    )


async def run(url: str, context: dict[str, Any], version: str | None, scenario: str) -> None:
    fetcher = HttpFetcher(timeout=FETCH_SECONDS)
    try:
        await exercise(url, version, authorization(url, context, scenario, fetcher), context)
    finally:
        await fetcher.aclose()


async def exercise(url: str, version: str | None, auth: OAuth, context: dict[str, Any]) -> None:
    mode, versions = mode_of(version)
    async with HttpClient(
        url,
        info=INFO,
        capabilities=CAPABILITIES,
        versions=versions,
        mode=mode,
        on_input=answer,
        auth=auth,
    ) as client:
        offered = client.session.server_capabilities or {}
        print("connected", client.session.version)
        listed = await said("tools/list", client.list_tools())
        tools: list[dict[str, Any]] = listed.get("tools", [])
        calls: list[dict[str, Any]] = context.get("toolCalls") or [
            {"name": tool["name"], "arguments": arguments(tool["inputSchema"])} for tool in tools
        ]
        for call in calls:
            await said(
                f"tools/call {call['name']}", client.call_tool(call["name"], call.get("arguments"))
            )
        if "resources" in offered:
            resources = await said("resources/list", client.request("resources/list", {}))
            found: list[dict[str, Any]] = resources.get("resources", [])
            for resource in found:
                read = client.request("resources/read", {"uri": resource["uri"]})
                await said(f"resources/read {resource['uri']}", read)
        if "prompts" in offered:
            prompts = await said("prompts/list", client.request("prompts/list", {}))
            listed_prompts: list[dict[str, Any]] = prompts.get("prompts", [])
            for prompt in listed_prompts:
                named: list[dict[str, Any]] = prompt.get("arguments", [])
                needed = {a["name"]: "x" for a in named if a.get("required")}
                got = client.request("prompts/get", {"name": prompt["name"], "arguments": needed})
                await said(f"prompts/get {prompt['name']}", got)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/http_client.py URL")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    asyncio.run(run(sys.argv[1], context, version, scenario))


if __name__ == "__main__":
    main()
