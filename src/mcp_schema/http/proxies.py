"""`TrustedProxies`: the client's address behind a reverse proxy, read from
``Forwarded`` (RFC 7239) or ``X-Forwarded-For`` only when the connection
came from a proxy configured as trusted, as uvicorn's
``--forwarded-allow-ips`` does (hand-written runtime module).

Anyone may send those headers: taken from a client that reached the server
directly, they would let it name any address and so take another client's
share. Behind trusted proxies the address is the nearest one in the chain
that is not itself a trusted proxy (each proxy appends the address it was
reached from, so the entries to its right are the ones it vouches for);
a chain made of trusted proxies alone names its leftmost entry. A header
too long, or an entry that is no IP address (``unknown``, an obfuscated
node), leaves the address of the connection itself.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Collection, Mapping
from typing import Any

from mcp_schema._args import strings

__all__ = ["MAX_HOPS", "UVICORN_OPTIONS", "TrustedProxies", "peer_address"]

MAX_HOPS = 32
"""Entries of a forwarding header looked at, from the right."""

UVICORN_OPTIONS: Mapping[str, Any] = {"proxy_headers": False}
"""What every uvicorn the package runs (``gateway``, ``serve``) is configured
with. uvicorn's own proxy-headers middleware is on by default and trusts
127.0.0.1: it would put a loopback client's ``X-Forwarded-For`` into the
scope's ``client`` before `TrustedProxies`, the one rule of whose forwarding
headers count, reads it, and so let any local client name the address its
share is kept under."""

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_FOR = re.compile(r'(?i)(?:^|;)\s*for\s*=\s*("[^"]*"|[^;\s]*)')


def peer_address(client: object) -> str | None:
    """The address of an ASGI scope's ``client`` (host, port), or None."""
    if isinstance(client, (tuple, list)) and client and isinstance(client[0], str):
        return client[0]
    return None


@functools.lru_cache(maxsize=1024)
def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    value = text.strip().strip('"')
    if value.startswith("["):  # Forwarded: "[2001:db8::1]:4711"
        value = value[1 : value.find("]")] if "]" in value else ""
    elif value.count(":") == 1:  # an IPv4 address with a port
        value = value.partition(":")[0]
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _for_of(element: str) -> str:
    """The ``for`` of one ``Forwarded`` element (``unknown`` when it names none)."""
    found = _FOR.search(element.strip())
    return "unknown" if found is None else found.group(1) or "unknown"


class TrustedProxies:
    """The proxies whose forwarding headers are believed: IP addresses or
    networks (``"10.0.0.0/8"``), or ``"*"`` for any peer (only where nothing
    but the proxy can reach the server). None given: none trusted, and the
    address is the connection's."""

    __slots__ = ("any", "networks")

    def __init__(self, proxies: Collection[str] = ()) -> None:
        given: list[str] = list(strings(proxies, "trusted_proxies") or [])
        self.any = "*" in given
        self.networks: tuple[_Network, ...] = tuple(
            ipaddress.ip_network(p.strip(), strict=False) for p in given if p.strip() != "*"
        )

    def __bool__(self) -> bool:
        return self.any or bool(self.networks)

    def trusted(self, address: str | None) -> bool:
        """Whether ``address`` is one of the trusted proxies."""
        if address is None:
            return False
        if self.any:
            return True
        ip = _ip(address)
        return ip is not None and any(ip in network for network in self.networks)

    def address(self, client: object, received: Mapping[str, str]) -> str | None:
        """The client's address: the ASGI ``client``'s, or behind a trusted
        proxy the one its ``Forwarded`` (else ``X-Forwarded-For``) names."""
        peer = peer_address(client)
        if not (self.any or self.networks) or not self.trusted(peer):
            return peer
        forwarded = received.get("forwarded")
        if forwarded is not None:
            chain = [_for_of(element) for element in forwarded.split(",")[-MAX_HOPS:]]
        else:
            chain = received.get("x-forwarded-for", "").split(",")
        entries = [entry.strip() for entry in chain[-MAX_HOPS:] if entry.strip()]
        found = peer
        for entry in reversed(entries):
            ip = _ip(entry)
            if ip is None:
                return found  # the chain is not readable past here
            found = str(ip)
            if not self.trusted(found):
                return found
        return found
