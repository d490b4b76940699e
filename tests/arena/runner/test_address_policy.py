"""The host's address policy for participants' bots (SSRF): what it refuses, in every textual form an
address may take, what it connects to instead of a name, and the ranges a host may allow. Names are
resolved by the system's resolver (numeric forms never reach DNS); a stand-in resolver is used only where
a name must resolve to addresses no real name here does."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import time

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from arena.runner import address_policy
from arena.runner.address_policy import (
    AddressPolicy,
    AddressRefusedError,
    pin_addresses,
    refused_text,
)

PUBLIC = AddressPolicy()

NOT_PUBLIC_V4 = [
    ipaddress.ip_network(network)
    for network in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    )
]  # fmt: skip
"""IPv4's special-purpose ranges (IANA's registry): none is where a participant's bot may be."""


def refused(address: str, policy: AddressPolicy = PUBLIC) -> str:
    """Why `policy` refuses `address` (for the host's log); fails if it does not."""
    with pytest.raises(AddressRefusedError) as caught:
        policy.pin(address)
    assert str(caught.value) == refused_text(address)  # all a participant reads: the same every time
    return caught.value.reason


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1:50051", "loopback"),
        ("localhost:50051", "loopback"),
        ("LOCALHOST:50051", "loopback"),
        ("10.0.0.1:50051", "private"),
        ("[::1]:50051", "loopback"),
        ("::1:50051", "loopback"),
        ("unix:/tmp/another-bot.sock", "Unix socket"),
        ("169.254.169.254:80", "link-local"),  # a cloud's metadata service
        ("100.64.0.1:50051", "carrier-grade NAT"),
        ("0.0.0.0:50051", "unspecified"),
        ("0:50051", "unspecified"),
        ("224.0.0.1:50051", "multicast"),
        ("239.255.255.250:1900", "multicast"),
        ("240.0.0.1:50051", "reserved"),
        ("255.255.255.255:50051", "reserved"),
        ("[::]:50051", "unspecified"),
        ("[fe80::1]:50051", "link-local"),
        ("[fc00::1]:50051", "private"),
        ("[fd12:3456::1]:50051", "private"),
        ("[fec0::1]:50051", "site-local"),
        ("[ff02::1]:50051", "multicast"),
        ("[ff0e::1]:50051", "multicast"),
        ("[::ffff:127.0.0.1]:50051", "IPv4-mapped form of 127.0.0.1"),
        ("[::ffff:7f00:1]:50051", "IPv4-mapped form of 127.0.0.1"),
        ("[::ffff:10.1.2.3]:50051", "IPv4-mapped form of 10.1.2.3"),
        ("[::127.0.0.1]:50051", "reserved"),  # IPv4-compatible
        ("[64:ff9b::7f00:1]:50051", "reserved"),  # NAT64 of 127.0.0.1
        ("[64:ff9b::808:808]:50051", "reserved"),  # NAT64 of a public address: refused too
        ("[2002:7f00:1::]:50051", "6to4 form of 127.0.0.1"),
        ("[2002:a00:1::]:50051", "6to4 form of 10.0.0.1"),
        ("[2001::1]:50051", "private"),  # Teredo
        ("[2001:db8::1]:50051", "private"),
        ("127.1:50051", "loopback"),
        ("0x7f.1:50051", "loopback"),
        ("0x7f000001:50051", "loopback"),
        ("2130706433:50051", "loopback"),
        ("0177.0.0.1:50051", "loopback"),
        ("017700000001:50051", "loopback"),
        ("127.0.1:50051", "loopback"),
        ("no-such-host.invalid:50051", "does not resolve"),
        ("127.0.0.1.:50051", "does not resolve"),
    ],
)
def test_what_is_not_public_is_refused_with_the_same_text(address: str, why: str) -> None:
    assert why in refused(address)


@pytest.mark.parametrize(
    ("address", "target"),
    [
        ("8.8.8.8:53", "ipv4:8.8.8.8:53"),
        ("134744072:53", "ipv4:8.8.8.8:53"),  # 8.8.8.8 as one number
        ("8.8.2056:53", "ipv4:8.8.8.8:53"),
        ("[::ffff:8.8.8.8]:53", "ipv4:8.8.8.8:53"),  # mapped: connected to as IPv4
        ("[2606:4700:4700::1111]:443", "ipv6:[2606:4700:4700::1111]:443"),
        ("2606:4700:4700:0:0:0:0:1111:443", "ipv6:[2606:4700:4700::1111]:443"),
        ("[2002:808:808::1]:443", "ipv6:[2002:808:808::1]:443"),  # 6to4 of a public address
    ],
)
def test_a_public_address_is_pinned_to_a_target_that_is_never_resolved_again(
    address: str, target: str
) -> None:
    assert PUBLIC.pin(address) == target


def v4_addresses() -> st.SearchStrategy[ipaddress.IPv4Address]:
    """Any IPv4 address, with the special-purpose ranges as likely as the rest."""
    special = st.sampled_from(NOT_PUBLIC_V4).flatmap(
        lambda network: st.integers(int(network.network_address), int(network.broadcast_address))
    )
    return st.one_of(st.integers(0, 2**32 - 1), special).map(ipaddress.IPv4Address)


def v4_forms(address: ipaddress.IPv4Address) -> list[str]:
    """Every textual form the system's resolver reads as `address` (inet_aton's one, two, three and four
    parts, in decimal, octal and hexadecimal; IPv4-mapped IPv6 in both notations)."""
    value = int(address)
    a, b, c, d = address.packed
    return [
        str(address),
        str(value),
        hex(value),
        "0" + oct(value)[2:],
        f"{a}.{value & 0xFFFFFF}",
        f"{a}.{b}.{value & 0xFFFF}",
        f"{hex(a)}.{hex(b)}.{hex(c)}.{hex(d)}",
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
        f"[::ffff:{address}]",
        f"[::ffff:{value >> 16:x}:{value & 0xFFFF:x}]",
        f"[0:0:0:0:0:FFFF:{address}]",
    ]


def answer(address: str) -> str:
    """The target `address` is pinned to, or `refused`."""
    try:
        return PUBLIC.pin(address)
    except AddressRefusedError:
        return "refused"


@given(v4_addresses())
@example(ipaddress.IPv4Address("127.0.0.1"))
@example(ipaddress.IPv4Address("169.254.169.254"))
def test_every_form_of_an_ipv4_address_gets_the_same_answer(address: ipaddress.IPv4Address) -> None:
    """The policy reads what a connection would connect to, so no spelling slips a private address
    through: every form is refused when the address is in a special-purpose range (IANA's), and pinned
    to the address itself when it is not."""
    special = any(address in network for network in NOT_PUBLIC_V4)
    expected = "refused" if special else f"ipv4:{address}:50051"
    for form in v4_forms(address):
        assert answer(f"{form}:50051") == expected, form


@given(st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address))
@example(ipaddress.IPv6Address("2002:7f00:1::"))
@example(ipaddress.IPv6Address("64:ff9b::7f00:1"))
def test_every_form_of_an_ipv6_address_gets_the_same_answer(address: ipaddress.IPv6Address) -> None:
    """Compressed, exploded or in capitals, an IPv6 address gets one answer; one that is not global, or
    that carries an IPv4 address that is not public (mapped, 6to4), is refused."""
    forms = [f"[{address.compressed}]", f"[{address.exploded}]", f"[{address.exploded.upper()}]"]
    answers = {answer(f"{form}:443") for form in forms}
    assert len(answers) == 1
    carried = address.ipv4_mapped or address.sixtofour
    if not address.is_global or (carried is not None and not carried.is_global) or address.is_multicast:
        assert answers == {"refused"}


def test_the_ranges_a_host_allows() -> None:
    lan = AddressPolicy.parse(" 127.0.0.0/8, 10.0.0.0/8,fd00::/8,10.0.0.0/8 ")
    assert lan.text == "127.0.0.0/8,10.0.0.0/8,fd00::/8"
    assert AddressPolicy.parse(lan.text) == lan
    assert AddressPolicy.parse("") == PUBLIC
    assert lan.pin("127.1:5") == "ipv4:127.0.0.1:5"
    assert lan.pin("localhost:5") == "ipv4:127.0.0.1:5"
    assert lan.pin("[::ffff:10.9.8.7]:5") == "ipv4:10.9.8.7:5"
    assert lan.pin("[fd00::7]:5") == "ipv6:[fd00::7]:5"
    assert lan.pin("8.8.8.8:53") == "ipv4:8.8.8.8:53"  # public addresses stay allowed
    assert "loopback" in refused("[::1]:5", lan)  # IPv6 loopback is not in 127.0.0.0/8
    assert "private" in refused("192.168.1.1:5", lan)
    assert "Unix socket" in refused("unix:/tmp/bot.sock", lan)  # never a participant's
    assert AddressPolicy.parse("192.168.1.7").pin("192.168.1.7:5") == "ipv4:192.168.1.7:5"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10.0.0.1/8", "'10.0.0.1/8' is not an address range like 10.0.0.0/8 or fd00::/8 (10.0.0.1/8 "
         "has host bits set)"),
        ("lan", "'lan' is not an address range"),
        ("10.0.0.0/33", "'10.0.0.0/33' is not an address range"),
        (",".join(f"10.0.{n}.0/24" for n in range(65)), "at most 64 address ranges, got 65"),
    ],
)  # fmt: skip
def test_a_range_that_is_not_one_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        AddressPolicy.parse(text)


def test_a_name_with_one_address_refused_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name is as safe as the worst address it resolves to (a connection may take any of them); an
    allowed name is pinned to the first."""
    answers = {
        "mixed.test": [("8.8.8.8", 0), ("127.0.0.1", 0)],
        "public.test": [("2606:4700:4700::1111", 0), ("8.8.8.8", 0)],
        "scoped.test": [("2606:4700:4700::1111", 3)],
        "nothing.test": [],
    }
    system = address_policy.resolve_host
    monkeypatch.setattr(
        address_policy,
        "resolve_host",
        lambda host, port: answers[host] if host in answers else system(host, port),
    )
    assert "resolves to 127.0.0.1: loopback" in refused("mixed.test:1")
    assert PUBLIC.pin("public.test:443") == "ipv6:[2606:4700:4700::1111]:443"
    assert "scope" in refused("scoped.test:1")
    assert "no address" in refused("nothing.test:1")
    assert asyncio.run(pin_addresses(PUBLIC, "public.test:1, 8.8.8.8:2")) == (
        "ipv6:[2606:4700:4700::1111]:1,ipv4:8.8.8.8:2"
    )
    with pytest.raises(AddressRefusedError):
        asyncio.run(pin_addresses(PUBLIC, "public.test:1,mixed.test:2"))


def test_a_name_that_resolves_too_slowly_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(host: str, port: int) -> list[tuple[str, int]]:
        time.sleep(0.5)
        return [("8.8.8.8", 0)]

    monkeypatch.setattr(address_policy, "resolve_host", slow)
    monkeypatch.setattr(address_policy, "RESOLVE_TIMEOUT_S", 0.05)
    with pytest.raises(AddressRefusedError) as caught:
        asyncio.run(pin_addresses(PUBLIC, "slow.test:1"))
    assert "did not resolve within 0.05 s" in caught.value.reason
