"""The published artefact: build the wheel, install it into a brand-new venv, use it.

Catches what the editable development install hides: files missing from the
wheel (``py.typed``, a version package), files that should not be in it
(``codegen``, ``tests``), undeclared runtime dependencies and a package that
only imports because the repository happens to be on ``sys.path``.

Slow-ish (about 15-30 s: one wheel build, one venv, one ``pip install`` that
reuses pip's cache); it needs the package index pip is configured for.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_schema.registry import COMPILED
from mcp_schema.versions import DEFAULT_VERSION

pytestmark = [pytest.mark.slow, pytest.mark.dist]

REPO = Path(__file__).resolve().parents[2]
# The two source roots that the wheel merges into one mcp_schema package.
PACKAGE_ROOTS = (REPO / "src" / "mcp_schema", REPO / "generated" / "mcp_schema")
VERSION_PACKAGES = tuple(compiled.package for compiled in COMPILED)
DEFAULT_PACKAGE = next(c.package for c in COMPILED if c.key == DEFAULT_VERSION)
RUNTIME_MODULES = (
    "mcp_schema.base",
    "mcp_schema.tables",
    "mcp_schema.versions",
    "mcp_schema.registry",
    "mcp_schema.errors",
    "mcp_schema.codec",
    "mcp_schema.http_headers",
    "mcp_schema.session",
)
# Everything a fresh `pip install mcp-schema` may bring along (names normalised).
RUNTIME_DEPENDENCIES = ["jiter", "jsonschema-rs", "pydantic", "typing-extensions"]
ALLOWED_DISTRIBUTIONS = {
    "mcp-schema",
    *RUNTIME_DEPENDENCIES,
    "pydantic-core",
    "annotated-types",
    "typing-inspection",
    "pip",
    "setuptools",
}
PUBLISHED_EXTRAS = ["auth", "http", "otel", "prometheus", "redis", "serve", "testing"]
"""The only extras a user sees: development tools are dependency groups (PEP 735)."""
TIMEOUT = 600


def _run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=cwd)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
        f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
    )
    return proc


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(REPO)])
    wheels = sorted(out.glob("mcp_schema-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def fresh_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The interpreter of a new venv with nothing but the wheel installed."""
    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # pip's default cache is shared with the development venv, so this is
    # mostly a local copy after the first run.
    _run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)]
    )
    yield python


def test_wheel_holds_only_the_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = next(n.split("/")[0] for n in names if ".dist-info/" in n)
    stray = [n for n in names if not n.startswith(("mcp_schema/", f"{dist_info}/"))]
    assert stray == [], f"files outside mcp_schema/ in the wheel: {stray}"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert "mcp_schema/py.typed" in names

    # Every .py file of both source roots and every validation document is
    # shipped, and nothing else is.
    expected = {
        f"mcp_schema/{p.relative_to(root).as_posix()}"
        for root in PACKAGE_ROOTS
        for pattern in ("*.py", "validation.json")
        for p in root.rglob(pattern)
        if "__pycache__" not in p.parts
    }
    shipped = {n for n in names if n.startswith("mcp_schema/") and n.endswith((".py", ".json"))}
    assert shipped == expected
    for package in VERSION_PACKAGES:
        folder = package.replace(".", "/")
        for module in ("__init__.py", "models.py", "methods.py", "tables.py", "validation.json"):
            assert f"{folder}/{module}" in names


def test_wheel_metadata(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = z.read(meta_name).decode()
    requires = sorted(
        _normalise(re.split(r"[\s<>=!~;\[(]", line.split(":", 1)[1].strip())[0])
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    )
    assert requires == RUNTIME_DEPENDENCIES
    assert "Requires-Python: >=3.10" in metadata
    extras = sorted(
        line.split(":", 1)[1].strip()
        for line in metadata.splitlines()
        if line.startswith("Provides-Extra:")
    )
    assert extras == PUBLISHED_EXTRAS
    by_extra = sorted(
        line.split("extra ==", 1)[1].strip().strip("'\"")
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" in line
    )
    assert set(by_extra) == set(PUBLISHED_EXTRAS), by_extra
    # No exact pins reach users: each extra takes a range.
    pinned = [
        line
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "==" in line.split(";")[0]
    ]
    assert not pinned


def test_fresh_venv_has_only_runtime_dependencies(fresh_python: Path) -> None:
    listing = _run(
        [str(fresh_python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"]
    ).stdout
    installed = {_normalise(d["name"]): d["version"] for d in json.loads(listing)}
    assert "mcp-schema" in installed
    extra = set(installed) - ALLOWED_DISTRIBUTIONS
    assert not extra, f"unexpected distributions in a fresh install: {sorted(extra)}"


def test_installed_package_imports_and_decodes(fresh_python: Path, tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import importlib, json, pathlib, sys
        import mcp_schema
        site = pathlib.Path(mcp_schema.__file__).resolve().parent
        assert pathlib.Path(sys.prefix).resolve() in site.parents, site  # not the checkout
        assert (site / "py.typed").is_file()
        for name in {VERSION_PACKAGES + RUNTIME_MODULES!r}:
            module = importlib.import_module(name)
            assert getattr(module, "__all__", None), name
        from importlib.resources import files
        import jsonschema_rs
        documents = {{
            name: json.loads(files(name).joinpath("validation.json").read_text())
            for name in {VERSION_PACKAGES!r}
        }}
        views = jsonschema_rs.validator_map_for(documents[{DEFAULT_PACKAGE!r}])
        assert views.get("#/$defs/Implementation").is_valid({{"name": "n", "version": "1"}})
        from mcp_schema.codec import decode, encode
        raw = b'{{"jsonrpc":"2.0","id":1,"method":"ping"}}'
        assert json.loads(encode(decode(raw, version={DEFAULT_VERSION!r}))) == json.loads(raw)
        print(mcp_schema.__version__)
    """)
    # cwd is an empty directory, so only the installed copy can be imported.
    out = _run([str(fresh_python), "-I", "-c", script], cwd=tmp_path).stdout
    assert out.strip() == _project_version()


def test_cli_validates_jsonl(wheel: Path, fresh_python: Path, tmp_path: Path) -> None:
    if "mcp_schema/__main__.py" not in zipfile.ZipFile(wheel).namelist():
        pytest.skip("no CLI (mcp_schema/__main__.py) in this build")
    good = tmp_path / "good.jsonl"
    good.write_text(
        "\n".join(
            [
                '{"jsonrpc":"2.0","id":1,"method":"ping"}',
                '{"jsonrpc":"2.0","id":1,"result":{}}',
                '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            ]
        )
        + "\n"
    )
    _run(
        [
            str(fresh_python),
            "-I",
            "-m",
            "mcp_schema",
            "validate",
            str(good),
            "--version",
            DEFAULT_VERSION,
        ],
        cwd=tmp_path,
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}\n')
    proc = subprocess.run(
        [
            str(fresh_python),
            "-I",
            "-m",
            "mcp_schema",
            "validate",
            str(bad),
            "--version",
            DEFAULT_VERSION,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=tmp_path,
    )
    assert proc.returncode != 0, proc.stdout + proc.stderr


def _project_version() -> str:
    text = (REPO / "pyproject.toml").read_text()
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    assert match
    return match.group(1)
