"""Where the arena may connect for a participant: the host's address policy, against server-side request
forgery (SSRF).

A participant (a token that is not the host's) gives the address of their bot, and the arena connects
to it as itself, from inside the host's network. Unchecked, that lets a stranger make the arena knock on
the host's own services (loopback, the LAN, a cloud's metadata address, another program's Unix socket,
another entrant's bot) and learn from the answer what is there. So a participant's address must be
public: every address its host name resolves to is a global unicast address (`ipaddress`'s `is_global`,
less what some Python versions count as global and is not: multicast, reserved, site-local, and the
IPv4-mapped, 6to4, Teredo, NAT64 and IPv4-compatible forms of an IPv4 address that is not public), unless
it falls in a range the host allows (`arena serve --allow-addresses 10.0.0.0/8`, for a LAN event).
`unix:` addresses are never a participant's. The host's own addresses (its token, its command line) are
not checked: the host is trusted.

The check and the connection see the same answer: a name is resolved once (every textual form of an
address, `127.1` and `2130706433` too, is read by the system's resolver, as a connection would read it),
every address it resolves to is checked (one refused refuses the name), and the arena connects to the
first of them as a gRPC `ipv4:` / `ipv6:` target, which is never resolved again: a name that resolves
elsewhere a moment later (DNS rebinding) changes nothing. Each connection to a participant's address is
checked anew (at registration, before each set, before each match).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Final

from arena.runner.seating import UNIX_PREFIX, check_address, split_addresses

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

RESOLVE_TIMEOUT_S: Final = 5.0
"""How long the names of one registration or connection may take to resolve before they are refused."""
MAX_RANGES: Final = 64
"""The most ranges a host may allow (a LAN event needs a few)."""

_NOT_PUBLIC: Final[tuple[tuple[Network, str], ...]] = tuple(
    (ipaddress.ip_network(network), why)
    for network, why in (
        ("::/96", "an IPv4-compatible address"),
        ("100.64.0.0/10", "shared address space (carrier-grade NAT)"),
        ("192.0.0.0/24", "reserved for protocol assignments"),
        ("198.18.0.0/15", "reserved for benchmarking"),
        ("240.0.0.0/4", "reserved"),
        ("64:ff9b::/96", "a NAT64 address"),
        ("64:ff9b:1::/48", "a NAT64 address"),
        ("2001::/32", "a Teredo address"),
        ("2001:db8::/32", "reserved for documentation"),
        ("3fff::/20", "reserved for documentation"),
        ("fec0::/10", "site-local"),
    )
)
"""Ranges refused whatever `ipaddress` says of them (some Python versions count some as global)."""


class AddressRefusedError(ValueError):
    """An address the policy refuses. Its text is what a participant reads, the same whatever the
    address is or resolves to; `reason` says why, for the host's log only."""

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(refused_text(address))
        self.address = address
        self.reason = reason


def refused_text(address: str) -> str:
    """What a participant reads when their address is refused: nothing of what it resolved to, nor of
    what listens there."""
    return (
        f"the address is not allowed: {address} (a participant's bot must listen at a public internet "
        "address, or one the host allows, given as HOST:PORT whose HOST resolves to such addresses only)"
    )


def not_public_reason(address: IPAddress) -> str | None:
    """Why `address` is not a public unicast address (None: it is)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        inner = not_public_reason(address.ipv4_mapped)
        return None if inner is None else f"the IPv4-mapped form of {address.ipv4_mapped}, {inner}"
    checks = (
        (address.is_unspecified, "unspecified"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address.is_multicast, "multicast"),
        (address.is_reserved, "reserved"),
        (address.is_private, "private or special-purpose"),
        (isinstance(address, ipaddress.IPv6Address) and address.is_site_local, "site-local"),
    )
    for refused, why in checks:
        if refused:
            return why
    for network, why in _NOT_PUBLIC:
        if address.version == network.version and address in network:
            return why
    if not address.is_global:
        return "not globally reachable"
    if isinstance(address, ipaddress.IPv6Address) and address.sixtofour is not None:
        inner = not_public_reason(address.sixtofour)  # a 6to4 relay would reach it
        if inner is not None:
            return f"the 6to4 form of {address.sixtofour}, {inner}"
    return None


def resolve_host(host: str, port: int) -> list[tuple[str, int]]:
    """What `host` resolves to for a TCP connection to `port`, from the system's resolver (which reads
    numeric forms as a connection would: `127.1`, `0x7f.1`, `2130706433`): (address, scope id) each.
    Blocks; the policy's one way to resolve (a test may stand in for it)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [(str(info[4][0]), int(info[4][3]) if len(info[4]) == 4 else 0) for info in infos]


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Which addresses a participant's bot may be at: public addresses, and those in `allowed` (ranges
    the host allows, for a LAN event)."""

    allowed: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, text: str) -> AddressPolicy:
        """The policy allowing the ranges of `text`, separated by commas (`10.0.0.0/8,fd00::/8`; empty:
        public addresses only). A single address is a range of one.

        :raises ValueError: a range that is not one (or host bits set, as in 10.0.0.1/8), or too many.
        """
        ranges: list[Network] = []
        for part in (piece.strip() for piece in text.split(",")):
            if not part:
                continue
            try:
                ranges.append(ipaddress.ip_network(part, strict=True))
            except ValueError as error:
                raise ValueError(
                    f"{part[:60]!r} is not an address range like 10.0.0.0/8 or fd00::/8 ({error})"
                ) from None
        if len(ranges) > MAX_RANGES:
            raise ValueError(f"at most {MAX_RANGES} address ranges, got {len(ranges)}")
        return cls(tuple(dict.fromkeys(ranges)))

    @property
    def text(self) -> str:
        """The allowed ranges as `parse` reads them (empty: none)."""
        return ",".join(str(network) for network in self.allowed)

    def refusal(self, address: IPAddress) -> str | None:
        """Why a participant's bot may not be at `address` (None: it may)."""
        plain = address
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            plain = address.ipv4_mapped
        if any(plain.version == network.version and plain in network for network in self.allowed):
            return None
        return not_public_reason(address)

    def pin(self, address: str) -> str:
        """The gRPC target to connect to for a participant's `HOST:PORT`: its host resolved once, every
        address it resolves to checked, and the first as an `ipv4:` / `ipv6:` target (never resolved
        again). Blocks while the name resolves.

        :raises AddressRefusedError: a `unix:` address, a name that does not resolve, or one address it
            resolves to that the policy refuses.
        """
        if address.strip().startswith(UNIX_PREFIX):
            raise AddressRefusedError(address, "a Unix socket on the host")
        try:
            check_address(address)
        except ValueError as error:
            raise AddressRefusedError(address, str(error)) from None
        host, _, port = address.strip().rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        try:
            found = resolve_host(host, int(port))
        except (OSError, UnicodeError, ValueError) as error:
            raise AddressRefusedError(address, f"the name does not resolve ({error})") from None
        if not found:
            raise AddressRefusedError(address, "the name resolves to no address")
        for text, scope in found:
            try:
                one = ipaddress.ip_address(text)
            except ValueError:
                raise AddressRefusedError(address, f"resolves to {text!r}, not an IP address") from None
            if scope or (isinstance(one, ipaddress.IPv6Address) and one.scope_id):
                raise AddressRefusedError(address, f"resolves to {text}, an address with a scope")
            why = self.refusal(one)
            if why is not None:
                raise AddressRefusedError(address, f"resolves to {one}: {why}")
        first = ipaddress.ip_address(found[0][0])
        if isinstance(first, ipaddress.IPv6Address) and first.ipv4_mapped is not None:
            first = first.ipv4_mapped
        if isinstance(first, ipaddress.IPv4Address):
            return f"ipv4:{first}:{int(port)}"
        return f"ipv6:[{first}]:{int(port)}"


async def pin_addresses(policy: AddressPolicy, addresses: str) -> str:
    """`policy.pin` of each of `addresses` (`HOST:PORT[,HOST:PORT...]`), separated by commas as they
    were, resolved off the event loop and within RESOLVE_TIMEOUT_S.

    :raises AddressRefusedError: for the first address refused.
    """
    parts = split_addresses(addresses)
    try:
        async with asyncio.timeout(RESOLVE_TIMEOUT_S):
            pinned = await asyncio.gather(*(asyncio.to_thread(policy.pin, one) for one in parts))
    except TimeoutError:
        raise AddressRefusedError(
            addresses, f"its names did not resolve within {RESOLVE_TIMEOUT_S:g} s"
        ) from None
    return ",".join(pinned)
