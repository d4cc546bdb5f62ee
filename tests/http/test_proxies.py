"""`mcp_schema.http.proxies.TrustedProxies`: forwarding headers are read
only from a trusted proxy, and then name an address of the chain (the
nearest untrusted one), never anything a client made up beyond it; any
header text ends in an address or the peer's, never an exception."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_schema.http.proxies import MAX_HOPS, TrustedProxies

TRUSTED = TrustedProxies(["10.0.0.0/8", "2001:db8:ffff::/48"])
addresses = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)).map(str)


@given(peer=addresses, chain=st.lists(addresses, max_size=8), text=st.text(max_size=200))
def test_an_untrusted_peer_is_its_own_address_whatever_it_sends(
    peer: str, chain: list[str], text: str
) -> None:
    if TRUSTED.trusted(peer):
        return
    for received in ({"x-forwarded-for": ", ".join(chain)}, {"forwarded": text}):
        assert TRUSTED.address((peer, 1234), received) == peer


@given(chain=st.lists(addresses, min_size=1, max_size=8), text=st.text(max_size=200))
def test_behind_a_trusted_proxy_the_address_is_one_of_the_chain(
    chain: list[str], text: str
) -> None:
    peer = "10.0.0.2"
    found = TRUSTED.address((peer, 1234), {"x-forwarded-for": ", ".join(chain)})
    assert found in {str(ipaddress.ip_address(a)) for a in chain} | {peer}
    untrusted = [a for a in chain if not TRUSTED.trusted(a)]
    if untrusted:
        assert found == str(ipaddress.ip_address(untrusted[-1]))
    garbled = TRUSTED.address((peer, 1234), {"forwarded": text})
    assert isinstance(garbled, str)


@pytest.mark.parametrize(
    ("header", "value", "found"),
    [
        ("x-forwarded-for", "198.51.100.7", "198.51.100.7"),
        ("x-forwarded-for", "203.0.113.1, 198.51.100.7, 10.9.9.9", "198.51.100.7"),
        ("x-forwarded-for", "unknown, 10.9.9.9", "10.9.9.9"),  # unreadable past a proxy
        ("forwarded", 'for="[2001:db8::1]:4711";proto=https', "2001:db8::1"),
        ("forwarded", "for=192.0.2.60;proto=http, for=10.1.1.1", "192.0.2.60"),
        ("forwarded", "for=_hidden", "10.0.0.2"),
        ("forwarded", "proto=https", "10.0.0.2"),  # an element naming no one
    ],
)
def test_forwarding_headers_behind_a_trusted_proxy(header: str, value: str, found: str) -> None:
    assert TRUSTED.address(("10.0.0.2", 1), {header: value}) == found


def test_only_the_last_hops_are_read_and_no_proxies_means_the_peer() -> None:
    chain = ", ".join(["198.51.100.1"] + ["10.0.0.9"] * MAX_HOPS)
    assert TRUSTED.address(("10.0.0.2", 1), {"x-forwarded-for": chain}) == "10.0.0.9"
    assert TrustedProxies().address(("10.0.0.2", 1), {"x-forwarded-for": "1.2.3.4"}) == "10.0.0.2"
    assert (
        TrustedProxies(["*"]).address(("192.0.2.9", 1), {"x-forwarded-for": "1.2.3.4"}) == "1.2.3.4"
    )
    with pytest.raises(ValueError):
        TrustedProxies(["nginx"])
