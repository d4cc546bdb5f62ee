"""The docs site: it builds in strict mode, documents every public name, and renders.

Builds once, into a temporary directory, with exactly what ``make docs`` runs
(``mkdocs build --strict``: a warning, a broken link between pages included,
fails it). Then checks, for every generated version package, that each public
class and type alias has its section with its wire-named members and its link
to the upstream schema definition, and for every runtime module that each name
of its ``__all__`` has its entry; and, when a Chromium is installed, opens
every page in it (``docs/check.py``, what ``make docs-check`` runs): a page
that does not render, a browser error, a resource off the site or a broken
internal link or anchor fails.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

pytest.importorskip("mkdocs", reason="mkdocs is in the 'docs' group: pip install --group docs")

pytestmark = [pytest.mark.slow, pytest.mark.dist]

REPO = Path(__file__).resolve().parents[2]
PINS = json.loads((REPO / "schema" / "pins.json").read_text())["schemas"]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"mcp_schema_docs_{name}", REPO / "docs" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


hooks = _load("hooks")
check = _load("check")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-5000:]
    return out


def _page(site: Path, module: str) -> str:
    uri = Path(hooks.page_uri(module))
    html = (
        uri.parent / "index.html" if uri.name == "index.md" else uri.with_suffix("") / "index.html"
    )
    return (site / html).read_text(encoding="utf-8")


def _section(page: str, anchor: str) -> str:
    """From the heading with id ``anchor`` to the next heading of its level or above."""
    start = page.index(f'id="{anchor}"')
    end = re.compile(r"<h[1-3][ >]").search(page, start)
    return page[start : end.start() if end else len(page)]


def test_one_page_per_module(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "reference" / "index.html").is_file()
    for module in [*hooks.runtime_modules(), *hooks.version_packages()]:
        assert f'id="{module}"' in _page(site, module), module
    for required in ("base", "tables", "errors", "codec", "http_headers", "session", "proxy"):
        assert f"mcp_schema.{required}" in hooks.runtime_modules()
    assert len(hooks.version_packages()) == len(PINS)


def test_guide_pages_are_built(site: Path) -> None:
    for page in (REPO / "docs").rglob("*.md"):
        built = site / page.relative_to(REPO / "docs").with_suffix("") / "index.html"
        if page.name == "index.md":
            built = site / page.relative_to(REPO / "docs").with_name("index.html")
        assert built.is_file(), page


@pytest.mark.parametrize("pin", sorted(PINS))
def test_every_public_definition_is_documented(site: Path, pin: str) -> None:
    package = f"mcp_schema.{PINS[pin]['package']}"
    page = _page(site, package)
    module = importlib.import_module(package)
    definitions = hooks._definitions(package)
    classes = {
        n: getattr(module, n) for n in module.__all__ if isinstance(getattr(module, n), type)
    }
    assert set(classes) <= set(definitions), set(classes) - set(definitions)
    missing = [name for name in definitions if f'id="{package}.{name}"' not in page]
    assert not missing, f"{package}: no section for {missing}"

    # Each generated model and alias links to its upstream definition (a name
    # re-exported from the base version, to the base's); a model shows its
    # members by wire name (an aliased member shows the alias, e.g. "_meta").
    urls = {f"mcp_schema.{p['package']}": p["docs"] for p in PINS.values()}
    for name, definition in definitions.items():
        section = _section(page, f"{package}.{name}")
        url = urls[definition.package]
        assert f'href="{url}' in section, f"{package}.{name}: no link to {url}"
        cls = classes.get(name)
        if not (isinstance(cls, type) and issubclass(cls, BaseModel) and cls.__name__ == name):
            continue
        declared = vars(cls).get("__annotations__", {})
        for field_name, field in cls.model_fields.items():
            if field_name not in declared:
                continue  # inherited (a derived class): listed by wire name as inherited
            wire = field.serialization_alias or field_name
            assert f"<code>{wire}</code>" in section, f"{package}.{name}.{field_name}: {wire!r}"


def test_runtime_pages_document_their_api(site: Path) -> None:
    for module in hooks.runtime_modules():
        page = _page(site, module)
        for name in getattr(importlib.import_module(module), "__all__", ()):
            assert f'id="{module}.{name}"' in page, f"{module}.{name} undocumented"


def test_pages_render_in_chromium(site: Path) -> None:
    chromium = check.find_chromium()
    if chromium is None:
        pytest.skip("no Chromium (apt-get install chromium): the browser check did not run")
    problems = check.check(site, chromium)
    assert not problems, "\n".join(problems)


def test_the_browser_check_finds_what_is_broken(tmp_path: Path) -> None:
    """A two-page site with one of each fault: every one is reported."""
    chromium = check.find_chromium()
    if chromium is None:
        pytest.skip("no Chromium (apt-get install chromium): the browser check did not run")
    page = (
        '<html><body><header class="md-header" style="height:40px">h</header>'
        '<article class="md-content__inner"><h1 id="top">{title}</h1>{body}</article>'
        "</body></html>"
    )
    (tmp_path / "index.html").write_text(
        page.format(
            title="Home",
            body='<p id="here">text</p><a href="other/#here">ok</a> <a href="other/#gone">x</a>'
            ' <a href="missing/">x</a> <script>console.error("boom")</script>'
            '<img src="https://fonts.example.invalid/font.png">',
        ),
        encoding="utf-8",
    )
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "index.html").write_text(
        page.format(title="Other", body='<p id="here">text</p><a href="../#top">back</a>'),
        encoding="utf-8",
    )
    (tmp_path / "blank.html").write_text("<html><body></body></html>", encoding="utf-8")
    problems = "\n".join(check.check(tmp_path, chromium, out=io.StringIO()))
    assert "index.html: broken anchor: other/#gone" in problems
    assert "index.html: broken link: missing/" in problems
    assert "index.html: console.error: boom" in problems
    assert "index.html: asks for a resource off the site: https://fonts.example.invalid" in problems
    assert "blank.html: no header rendered" in problems
    assert "blank.html: no main content rendered" in problems
    assert "other/index.html" not in problems
