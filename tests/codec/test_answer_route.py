"""`own_answer_route`: the route of a result a session composed, told
without checking its own envelope again, is the one `route` finds."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcp_schema._codec.catalog import SUPPORTED, catalog
from mcp_schema._codec.route import Known, own_answer_route, route

METHODS = sorted({(v, m) for v in SUPPORTED for m in catalog(v, ()).requests})
RESULTS: st.SearchStrategy[Any] = st.one_of(
    st.just({}),
    st.dictionaries(
        st.sampled_from(["resultType", "task", "content", "_meta"]),
        st.one_of(
            st.sampled_from(["complete", "input_required", "task", "x"]), st.none(), st.just({})
        ),
        max_size=3,
    ),
    st.lists(st.none(), max_size=1),
)


@given(
    st.sampled_from(METHODS), st.one_of(st.integers(), st.text(max_size=3)), RESULTS, st.booleans()
)
def test_the_route_of_an_own_answer_is_routes(
    version_method: tuple[str, str], rid: Any, result: Any, assume_complete: bool
) -> None:
    version, method = version_method
    known = Known(version=version, method=method, assume_complete=assume_complete)
    value = {"jsonrpc": "2.0", "id": rid, "result": result}
    assert own_answer_route(known, rid, result) == route(value, known, None)
