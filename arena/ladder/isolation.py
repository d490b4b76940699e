"""What the arena can isolate, and what a run asks of a bot it cannot.

A bot the arena starts itself (a `--command` or an uploaded bot) is *isolated*: each seat of a match is a
process of its own, and no process plays two matches on the same deals (bots/pool.py), so what it
remembers of a hand can never serve it, nor its partner. A remote bot (an address) is not: the arena can
neither restart nor separate processes it did not start. Distinct addresses do not prove distinct
processes (one process may listen on many ports, and it may remember the rotations of a set), so a remote
bot is never counted as isolated, however many addresses it gives (`entries.isolated`): every set it plays
is recorded as not isolated, the standings mark it, and a run may refuse such bots altogether
(`--isolated-only`). What registration asks of it is addresses that are distinct endpoints (aliases of one
refused), so that an honest entrant's partners are separate programs; one address for a whole team is
allowed and marked (`shares_seats`), since it is the host's choice and no worse than a process behind two
ports.
"""

from __future__ import annotations

import ipaddress
import os
import socket

from arena.ladder.store import BotEntry, isolated
from arena.runner import split_addresses
from arena.runner.seating import UNIX_PREFIX
from fiftysix.engine import MatchRules


def unfit_reason(bot: BotEntry, isolated_only: bool) -> str | None:
    """Why `bot` may not play in a run (None: it may): a remote bot, when the run takes only bots the arena
    isolates."""
    if isolated_only and not isolated([bot]):
        return "a remote bot, and this run takes only bots the arena starts (--isolated-only)"
    return None


def shares_seats(bot: BotEntry, rules: MatchRules) -> bool:
    """Whether a remote bot gives fewer addresses than the seats of a team under `rules`, so that one
    process plays two partners (the worst of the leaks: each partner's hand from the first card)."""
    if bot.address is None:  # started by the arena: a process per seat
        return False
    return len(split_addresses(bot.address)) < rules.players // rules.team_count


def check_distinct_endpoints(address: str) -> None:
    """Refuse addresses of one bot that reach the same endpoint: the same `unix:` socket, or the same port
    on host names or numbers that resolve alike (`127.0.0.1:P` and `localhost:P`; any two loopback or
    unspecified addresses count as one host). A host name that does not resolve is compared as written.

    :raises ValueError: naming the two addresses.
    """
    seen: dict[tuple[str, ...], str] = {}
    for one in split_addresses(address):
        for endpoint in _endpoints(one):
            if endpoint in seen and seen[endpoint] != one:
                raise ValueError(
                    f"{seen[endpoint]} and {one} reach the same endpoint: give each seat a distinct bot "
                    "process (partners must not share one)"
                )
            if endpoint in seen:
                raise ValueError(f"{one} is given twice: give each seat a distinct bot process")
            seen[endpoint] = one


def _endpoints(address: str) -> set[tuple[str, ...]]:
    """The endpoints `address` may reach, normalised for comparison."""
    if address.startswith(UNIX_PREFIX):
        return {("unix", os.path.realpath(address[len(UNIX_PREFIX) :]))}
    host, _, written = address.rpartition(":")
    host = host.strip("[]")
    try:
        port = str(int(written))  # the port as a number: `80` and `080` are one port
    except ValueError:
        port = written
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, int(port), proto=socket.IPPROTO_TCP)}
    except (OSError, UnicodeError, ValueError):
        found = {host.lower()}
    return {("tcp", _host_key(str(one)), port) for one in found}


def _host_key(host: str) -> str:
    """A host as compared: loopback and unspecified addresses are all this machine; an IPv4 address
    mapped into IPv6 is the IPv4 address."""
    try:
        parsed = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if parsed.is_loopback or parsed.is_unspecified:
        return "this-host"
    return str(parsed)
