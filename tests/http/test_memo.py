"""`mcp_schema._memo.kept`: what the front door remembers of peers' text
stays within its bounds, whatever the peers send."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mcp_schema._memo import kept


def test_a_key_longer_than_the_bound_is_read_but_not_kept() -> None:
    memo: dict[str, int] = {}
    assert kept(memo, "abcd", 1, limit=4, longest=3) == 1
    assert kept(memo, "abc", 2, limit=4, longest=3) == 2
    assert memo == {"abc": 2}


def test_the_absence_of_a_text_is_kept_too() -> None:
    memo: dict[str | None, bool] = {}
    assert kept(memo, None, False, limit=4, longest=3) is False
    assert memo == {None: False}


def test_a_full_memo_is_emptied_before_the_next_key() -> None:
    memo: dict[bytes, int] = {}
    for value, key in enumerate((b"a", b"b", b"c")):
        kept(memo, key, value, limit=2, longest=8)
    assert memo == {b"c": 2}


@given(st.lists(st.text(max_size=12), max_size=200))
def test_a_flood_of_texts_never_grows_it_past_its_bounds(texts: list[str]) -> None:
    memo: dict[str, str] = {}
    for text in texts:
        assert kept(memo, text, text.upper(), limit=16, longest=8) == text.upper()
        assert len(memo) <= 16
        assert all(len(key) <= 8 for key in memo)
    if texts and len(texts[-1]) <= 8:
        assert memo[texts[-1]] == texts[-1].upper()
