"""README.md stays a short front page: at most 200 lines, every relative link
leads to a file of the repository, and every guide page is linked from it
(its snippets run in tests/docs/test_snippets.py)."""

from __future__ import annotations

import re

from tests.snippets import DOCS, README, ROOT

TEXT = README.read_text(encoding="utf-8")
LINKS = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", TEXT)


def test_readme_is_short() -> None:
    assert len(TEXT.splitlines()) <= 200


def test_relative_links_resolve() -> None:
    relative = [link for link in LINKS if "://" not in link]
    assert relative
    missing = [link for link in relative if not (ROOT / link).exists()]
    assert not missing, missing


def test_every_guide_page_is_linked() -> None:
    pages = {str(p.relative_to(ROOT)) for p in (DOCS / "guide").glob("*.md")}
    assert pages <= set(LINKS), pages - set(LINKS)
