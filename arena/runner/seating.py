"""Who plays where: bot addresses, one per seat or one for a whole team, and the seat of every bot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fiftysix.engine import MatchRules


@dataclass(frozen=True, slots=True)
class BotAddress:
    """A bot to play against: its name (for standings and records) and where it listens.

    `address` is `HOST:PORT`, or several separated by commas: one per seat, so that no single bot
    process ever plays two seats of a team (partners then cannot share what their hands hold). The
    k-th seat of the bot's team uses the k-th address (cycling when there are fewer addresses).
    """

    name: str
    address: str

    @classmethod
    def parse(cls, text: str) -> BotAddress:
        """Parse `NAME=HOST:PORT[,HOST:PORT...]`, with an error that says what was expected."""
        name, equals, address = text.partition("=")
        if not equals or not name.strip():
            raise ValueError(f"expected NAME=HOST:PORT, like alice=127.0.0.1:50051; got {text!r}")
        bot = cls(name.strip(), address.strip())
        for one in bot.addresses:
            check_address(one)
        return bot

    @property
    def addresses(self) -> tuple[str, ...]:
        """The addresses, one per seat of the team (or one for all)."""
        return split_addresses(self.address)


def split_addresses(text: str) -> tuple[str, ...]:
    """The addresses in `HOST:PORT[,HOST:PORT...]` (one per seat, or one for all), stripped."""
    return tuple(part.strip() for part in text.split(","))


UNIX_PREFIX = "unix:"
"""How a Unix-domain socket address starts (gRPC's `unix:PATH`): where sandboxed bots listen."""
UNIX_PATH_BYTES = 107
"""The longest socket path Linux takes (sun_path holds 108 bytes with the final NUL)."""


def check_address(address: str) -> None:
    """Raise ValueError unless `address` is `HOST:PORT` with a port from 1 to 65535 and a host of
    printable characters without spaces (it is printed, and no host name needs more), or `unix:PATH`
    with a path of at most 107 bytes, printable, without spaces or commas (commas separate seats)."""
    if address.strip().startswith(UNIX_PREFIX):
        path = address.strip()[len(UNIX_PREFIX) :]
        if not path or len(path.encode()) > UNIX_PATH_BYTES:
            raise ValueError(f"expected unix:PATH with a path of 1 to 107 bytes, got {address!r}")
        if not path.isprintable() or any(character.isspace() or character == "," for character in path):
            raise ValueError(f"a socket path has no spaces, commas or control characters, got {address!r}")
        return
    host, colon, port = address.strip().rpartition(":")
    # ASCII digits only: `str.isdigit` and `int` also take other scripts' digits (`٨٠` is 80).
    if not colon or not host or not (port.isascii() and port.isdigit()) or len(port) > 5:
        raise ValueError(f"expected HOST:PORT with a port from 1 to 65535, got {address!r}")
    if not 1 <= int(port) <= 65535:
        raise ValueError(f"expected HOST:PORT with a port from 1 to 65535, got {address!r}")
    if not host.isprintable() or any(character.isspace() for character in host) or len(host) > 253:
        raise ValueError(f"a host name has no spaces or control characters, got {address!r}")


def seats_for_teams(rules: MatchRules, team_bots: Sequence[BotAddress]) -> list[BotAddress]:
    """The bot of every seat when each team is played by one bot (`team_bots[team]`); the k-th seat of
    a team gets the bot's k-th address."""
    if len(team_bots) != rules.team_count:
        raise ValueError(
            f"a {rules.players}-player {rules.ruleset.value} match has {rules.team_count} teams: "
            f"give one bot per team, got {len(team_bots)}"
        )
    seats = []
    for seat in range(rules.players):
        team = rules.team_of(seat)
        bot = team_bots[team]
        addresses = bot.addresses
        position = rules.seats_of(team).index(seat)
        seats.append(BotAddress(bot.name, addresses[position % len(addresses)]))
    return seats
