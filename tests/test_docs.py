"""``make docs``: the pdoc reference renders and documents every public class.

Renders into a temporary directory with ``docs/build.py`` (the script ``make
docs`` runs) and checks, for every version package, that each public class
has its section, its wire-named fields and its link to the upstream schema
definition. Skipped when pdoc (the ``docs`` extra) is not installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

pytest.importorskip("pdoc", reason="pdoc is in the 'docs' group: pip install --group docs")

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PINS = json.loads((REPO / "schema" / "pins.json").read_text())["schemas"]


def _load_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mcp_schema_docs_build", REPO / "docs" / "build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


build = _load_build()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build.build(out)
    return out


def _page(site: Path, module: str) -> str:
    return (site / (module.replace(".", "/") + ".html")).read_text(encoding="utf-8")


def _public_classes(package: str) -> dict[str, type]:
    module = importlib.import_module(package)
    return {
        name: obj
        for name in module.__all__
        if isinstance(obj := getattr(module, name), type) and not name.startswith("_")
    }


def test_one_page_per_module(site: Path) -> None:
    assert (site / "index.html").is_file()
    for module in build.modules():
        assert (site / (module.replace(".", "/") + ".html")).is_file(), module
    for required in ("base", "method_table", "errors", "codec", "http_headers"):
        assert f"mcp_schema.{required}" in build.modules()


@pytest.mark.parametrize("pin", sorted(PINS))
def test_every_public_class_is_documented(site: Path, pin: str) -> None:
    package = f"mcp_schema.{PINS[pin]['package']}"
    page = _page(site, package)
    classes = _public_classes(package)
    assert classes, package
    missing = [name for name in classes if f'<section id="{name}">' not in page]
    assert not missing, f"{package}: no section for {missing}"

    # Each generated model links to its upstream definition and shows its fields by
    # wire name (a field with an alias shows the alias, e.g. "_meta").
    docs_url = PINS[pin]["docs"]
    for name, cls in classes.items():
        if not (
            issubclass(cls, BaseModel)
            and cls.__name__ == name  # not an alias of another class
            and cls.__module__.startswith(package)
        ):
            continue
        section = page[page.index(f'<section id="{name}">') :]
        section = section[: section.find("<section id=", 1)]
        assert docs_url in section, f"{package}.{name}: no link to {docs_url}"
        declared = vars(cls).get("__annotations__", {})
        for field_name, field in cls.model_fields.items():
            if field_name not in declared:
                continue  # inherited (a derived class): shown in its parent's section
            wire = field.serialization_alias or field_name
            assert (
                f"<code>&#34;{wire}&#34;</code>" in section or f'<code>"{wire}"</code>' in section
            ), f"{package}.{name}.{field_name}: wire name {wire!r} not shown"


def test_runtime_pages_document_their_api(site: Path) -> None:
    for module in (
        "mcp_schema.codec",
        "mcp_schema.errors",
        "mcp_schema.http_headers",
        "mcp_schema.session",
    ):
        page = _page(site, module)
        for name in importlib.import_module(module).__all__:
            assert re.search(rf'id="{re.escape(name)}"', page), f"{module}.{name} undocumented"
