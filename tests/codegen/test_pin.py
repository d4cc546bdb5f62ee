"""``python -m codegen pin`` says which definitions and members changed."""

from __future__ import annotations

from codegen.pin import schema_diff


def test_schema_diff_names_definitions_and_members() -> None:
    old = {
        "$defs": {
            "Kept": {"type": "object", "properties": {"a": {"type": "string"}}},
            "Gone": {"type": "string"},
            "Tool": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "description": "old words"},
                    "title": {"type": "string"},
                    "size": {"type": "integer"},
                },
            },
        }
    }
    new = {
        "$defs": {
            "Kept": {"type": "object", "properties": {"a": {"type": "string", "description": "x"}}},
            "Added": {"type": "boolean"},
            "Tool": {
                "type": "object",
                "required": ["name", "size"],
                "properties": {
                    "name": {"type": "string", "description": "new words"},
                    "size": {"type": "number"},
                    "icons": {"type": "array"},
                },
            },
            "Shape": {"type": "string"},
        }
    }
    old["$defs"]["Shape"] = {"type": "integer"}
    assert schema_diff(old, new) == [
        "+ Added",
        "- Gone",
        "~ Shape: shape",
        "~ Tool: +icons, -title, ~size, required size",
    ]
    assert schema_diff(new, new) == []
