"""`mcp_schema.server.resources` and `mcp_schema.server.prompts` through a
`Server`'s handler: listed, read and got as the resources and prompts pages
say, -32602 for what is not there."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from mcp_schema.server import Server
from tests.server.serving import Handshake, Stateless, message, text


def library() -> Server:
    server = Server("library")

    @server.resource("config://app", mime_type="application/json")
    def config() -> dict[str, Any]:
        """The settings."""
        return {"debug": False}

    @server.resource("users://{user_id}/avatar", name="avatar")
    def avatar(user_id: int) -> bytes:
        return bytes([user_id])

    @server.resource("notes://{title}")
    def note(title: str) -> str:
        return f"a note on {title}"

    @server.prompt()
    def review(
        code: Annotated[str, Field(description="The code")], strict: bool = False
    ) -> list[str]:
        """Review some code."""
        return [f"review {code}", f"strictly: {strict}"]

    return server


def test_resources_and_templates_are_listed_apart() -> None:
    served = Stateless(library())
    assert served.result("resources/list")["resources"] == [
        {
            "uri": "config://app",
            "name": "config",
            "description": "The settings.",
            "mimeType": "application/json",
        }
    ]
    templates = served.result("resources/templates/list")["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["users://{user_id}/avatar", "notes://{title}"]
    assert templates[0]["name"] == "avatar"


def test_a_resource_is_read_and_a_templates_variables_converted() -> None:
    served = Stateless(library())
    (config,) = served.result("resources/read", {"uri": "config://app"})["contents"]
    assert config == {
        "uri": "config://app",
        "text": '{"debug":false}',
        "mimeType": "application/json",
    }
    (avatar,) = served.result("resources/read", {"uri": "users://65/avatar"})["contents"]
    assert (avatar["blob"], avatar["mimeType"]) == ("QQ==", "application/octet-stream")
    (note,) = served.result("resources/read", {"uri": "notes://two%20words"})["contents"]
    assert note["text"] == "a note on two words"


@pytest.mark.parametrize("uri", ["config://other", "users://abc/avatar", "users://1/2/avatar"])
def test_a_uri_no_resource_has_is_invalid_params_naming_it(uri: str) -> None:
    (refused,) = Stateless(library()).send(message("resources/read", {"uri": uri}))
    assert refused["error"]["code"] == -32602 and refused["error"]["data"] == {"uri": uri}


def test_a_template_whose_variables_are_not_the_parameters_stops_the_decoration() -> None:
    server = Server("bad")
    with pytest.raises(ValueError, match="must be the parameters"):

        @server.resource("users://{name}")
        def user(user_id: str) -> str:
            return user_id


def test_a_prompt_lists_its_arguments_and_converts_them() -> None:
    served = Stateless(library())
    (review,) = served.result("prompts/list")["prompts"]
    assert review == {
        "name": "review",
        "description": "Review some code.",
        "arguments": [
            {"name": "code", "required": True, "description": "The code"},
            {"name": "strict", "required": False},
        ],
    }
    got = served.result(
        "prompts/get", {"name": "review", "arguments": {"code": "x", "strict": "true"}}
    )
    assert [m["content"]["text"] for m in got["messages"]] == ["review x", "strictly: True"]
    assert text(got) == "review x"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({}, "missing code"),
        ({"code": "x", "tone": "warm"}, "unknown tone"),
        ({"code": "x", "strict": "maybe"}, "strict"),
    ],
)
def test_prompt_arguments_it_does_not_take_are_invalid_params(
    arguments: dict[str, str], said: str
) -> None:
    (refused,) = Stateless(library()).send(
        message("prompts/get", {"name": "review", "arguments": arguments})
    )
    assert refused["error"]["code"] == -32602 and said in refused["error"]["message"]


def test_an_unknown_prompt_is_invalid_params_in_the_handshake_era_too() -> None:
    client = Handshake(library())
    (refused,) = client.send(
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "nope"}}
    )
    assert refused["error"]["code"] == -32602


def test_template_variables_stop_at_the_literal_after_them() -> None:
    server = Server("files")

    @server.resource("files://{name}-{version}/{path}")
    def file(name: str, version: str, path: str) -> str:
        return f"{name} {version} {path}"

    served = Stateless(server)
    (found,) = served.result("resources/read", {"uri": "files://pkg-1.2-rc/a-b"})["contents"]
    assert found["text"] == "pkg 1.2-rc a-b"
    hostile = "files://" + "a-" * 20_000 + "x"  # no '/': no match, in one pass
    (refused,) = served.send(message("resources/read", {"uri": hostile}))
    assert refused["error"]["code"] == -32602
    with pytest.raises(ValueError, match="side by side"):

        @server.resource("files://{name}{version}")
        def glued(name: str, version: str) -> str:
            return name
