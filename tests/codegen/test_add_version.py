"""Adding a protocol version is data plus ``make regen``.

In a scratch copy of the project (the generator, the data in ``schema/``, the
hand-written runtime and an empty ``generated/``), a fake ``2027-01-01`` is
pinned with ``python -m codegen pin`` to a copy of the 2026-07-28 schema file,
its results are paired and the 2026-07-28 overlays are extended to it: only
the three data files change.
After regenerating, the copy decodes a 2027-01-01 ``tools/call`` that names
its version in ``_meta``, through the fast path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from codegen import spec

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
NEW = "2027-01-01"
LIKE = "2026-07-28"


def _edit_json(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def _pair_and_overlay(schema_dir: Path) -> None:
    """What a maintainer writes after pinning: the result pairing, the overlays."""

    def pair(data: dict[str, Any]) -> None:
        data[NEW] = data[LIKE]

    def overlay(data: dict[str, Any]) -> None:
        for entry in data["overlays"]:
            if LIKE in entry["schemas"]:
                entry["schemas"].append(NEW)

    _edit_json(schema_dir / "results.json", pair)
    _edit_json(schema_dir / "overlays.json", overlay)


def _changed_files(root: Path) -> list[str]:
    return sorted(
        str(path.relative_to(root))
        for path in (root / "schema").iterdir()
        if path.read_bytes() != (REPO / "schema" / path.name).read_bytes()
    )


DECODE_2027 = textwrap.dedent(f"""
    import json, pathlib, sys
    import mcp_schema
    from mcp_schema import registry, versions
    from mcp_schema.codec import Correlator, decode, encode
    from mcp_schema.context import RequestContext

    root = pathlib.Path(sys.argv[1])
    assert root in pathlib.Path(registry.__file__).resolve().parents, registry.__file__
    assert "{NEW}" in mcp_schema.SUPPORTED_VERSIONS
    assert versions.STATELESS_VERSIONS[-2:] == ("{LIKE}", "{NEW}")

    def request(version):
        return json.dumps({{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {{
            "name": "get_weather", "arguments": {{"city": "Oslo"}},
            "_meta": {{"io.modelcontextprotocol/protocolVersion": version,
                      "io.modelcontextprotocol/clientCapabilities": {{}}}}}}}}).encode()

    for version in ("{NEW}", "{LIKE}"):
        raw = request(version)
        message = decode(raw)
        package = "mcp_schema.v" + version.replace("-", "_")
        assert type(message).__module__ == package + ".models", type(message)
        assert type(message).__name__ == "CallToolRequest"
        assert message.params.meta.protocol_version == version
        assert json.loads(encode(message)) == json.loads(raw)
        session = Correlator()
        assert type(session.decode(raw)).__module__ == package + ".models"
        assert session.version == version and session.pending == 1
        context = RequestContext.from_request(message)
        assert type(context.client_capabilities).__module__ == package + ".models"
    print("ok")
""")


def test_a_new_version_is_a_pin_and_regen(tmp_path: Path) -> None:
    root = tmp_path / "project"
    for name in ("codegen", "schema", "src"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")  # ruff's settings
    (root / "generated" / "mcp_schema").mkdir(parents=True)

    spec_dir = tmp_path / "spec"  # the shared spec files, and room for the new one
    spec_dir.mkdir()
    for entry in spec.spec_dir().iterdir():
        (spec_dir / entry.name).symlink_to(entry)
    env = {**os.environ, "MCP_SPEC_DIR": str(spec_dir)}

    upstream = spec.spec_dir() / spec.pins()[LIKE].local
    pin = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "pin",
            NEW,
            "--file",
            str(upstream),
            "--commit",
            "0" * 40,
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert pin.returncode == 0, pin.stdout + pin.stderr
    assert f"changes against {LIKE}: none" in pin.stdout
    pinned = json.loads((root / "schema" / "pins.json").read_text())["schemas"][NEW]
    assert (pinned["package"], pinned["era"], pinned["local"]) == (
        "v2027_01_01",
        "stateless",
        f"{NEW}/schema.json",
    )
    assert (spec_dir / NEW / "schema.json").read_bytes() == upstream.read_bytes()

    _pair_and_overlay(root / "schema")
    assert _changed_files(root) == [
        "schema/overlays.json",
        "schema/pins.json",
        "schema/results.json",
    ]

    regen = subprocess.run(
        [sys.executable, "-m", "codegen"], cwd=root, env=env, capture_output=True, text=True
    )
    assert regen.returncode == 0, regen.stderr
    assert "-> mcp_schema.v2027_01_01\n" in regen.stdout
    assert (root / "generated" / "mcp_schema" / "v2027_01_01" / "tables.py").is_file()

    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), str(root / "generated")])
    run = subprocess.run(
        [sys.executable, "-c", DECODE_2027, str(root)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"
