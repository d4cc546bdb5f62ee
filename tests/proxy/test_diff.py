"""``python -m mcp_schema diff``: what changed between two versions' models."""

from __future__ import annotations

import io
import json

from mcp_schema.cli import main
from mcp_schema.diff import Member, definitions, diff


def _run(*argv: str) -> str:
    out = io.StringIO()
    assert main(["diff", *argv], stdout=out, stderr=io.StringIO()) == 0
    return out.getvalue()


def test_a_version_against_itself_has_no_changes() -> None:
    same = diff("2025-06-18", "2025-06-18")
    assert (same.added, same.removed, same.changed) == ((), (), ())


def test_definitions_name_members_by_wire_name() -> None:
    tool = definitions("2025-11-25")["Tool"].members
    assert tool is not None
    assert tool["inputSchema"].required and not tool["outputSchema"].required
    assert definitions("2025-11-25")["ContentBlock"].members is None


def test_known_changes_between_adjacent_versions() -> None:
    assert "AudioContent" in diff("2024-11-05", "2025-03-26").added
    assert "ResourceLink" in diff("2025-03-26", "2025-06-18").added
    assert "AudioContent" in diff("2025-03-26", "2024-11-05").removed
    to_2026 = diff("2025-11-25", "2026-07-28")
    result = next(c for c in to_2026.changed if c.name == "CallToolResult")
    assert Member("resultType", True, "str") in result.added
    assert diff("2026-07-28", "2025-11-25").removed_members("CallToolResult") == {"resultType"}


def test_reversed_diff_swaps_added_and_removed() -> None:
    forward, back = diff("2025-06-18", "2025-11-25"), diff("2025-11-25", "2025-06-18")
    assert (forward.added, forward.removed) == (back.removed, back.added)
    assert [c.name for c in forward.changed] == [c.name for c in back.changed]


def test_text_output() -> None:
    text = _run("2024-11-05", "2025-03-26")
    lines = text.splitlines()
    assert lines[0] == "2024-11-05 -> 2025-03-26"
    assert "+ AudioContent" in lines
    change = diff("2024-11-05", "2025-03-26")
    assert lines[-1] == (
        f"{len(change.added)} added, {len(change.removed)} removed, "
        f"{len(change.changed)} changed definitions"
    )


def test_json_output_matches_the_diff() -> None:
    data = json.loads(_run("2025-11-25", "2026-07-28", "--json"))
    change = diff("2025-11-25", "2026-07-28")
    assert (data["from"], data["to"]) == ("2025-11-25", "2026-07-28")
    assert data["added"] == list(change.added) and data["removed"] == list(change.removed)
    assert data["changed"]["CallToolResult"]["added"]["resultType"] == {
        "required": True,
        "type": "str",
    }
    assert len(data["changed"]) == len(change.changed)


def test_unknown_version_is_a_usage_error() -> None:
    err = io.StringIO()
    try:
        main(["diff", "2020-01-01", "2025-11-25"], stdout=io.StringIO(), stderr=err)
    except SystemExit as exit_:
        assert exit_.code == 2
    else:
        raise AssertionError("an unknown version was accepted")
