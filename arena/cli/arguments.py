"""Command-line argument types: each turns a string into a value or raises an argparse error that says
what was expected. Shared by `arena` and its subcommands.

Every number has bounds, checked here where it is parsed: a value that would overflow a protobuf field,
a SQLite integer or a sensible budget is refused before any bot is started or any file is touched.
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from typing import Final

from arena.ladder.bots import command_arguments
from arena.ladder.store import BOT_NAME_RULE, OWNER_RULE, event_name, is_bot_name, is_owner_name
from arena.runner import BotAddress, check_address, split_addresses
from arena.runner.address_policy import AddressPolicy
from arena.untrusted import safe_text
from fiftysix.engine import MAX_DEAL_CAP, MAX_SEED, MIN_SEED, SEED_RANGE, Ruleset

_SHOWN_CHARS: Final = 60
"""How much of a bad argument an error repeats: enough to recognise it, never a screenful."""


def _shown(text: str) -> str:
    return safe_text(repr(text), _SHOWN_CHARS)


@dataclass(frozen=True, slots=True)
class Bounded:
    """An argument type for a whole number from `low` to `high`; its error names the range."""

    low: int
    high: int
    unit: str = ""
    range_text: str = ""
    """How the range reads in messages and --help (default: `low to high` with thousands separators)."""

    @property
    def range(self) -> str:
        """The range as people read it, e.g. `1 to 3,600,000 ms`."""
        return self.range_text or f"{self.low:,} to {self.high:,}{self.unit}"

    def __call__(self, text: str) -> int:
        expected = f"expected a whole number from {self.range}"
        digits = text.strip().lstrip("+-").replace("_", "").lstrip("0")
        if digits.isdecimal() and len(digits) > _SHOWN_CHARS:
            # Beyond what is worth repeating, perhaps beyond what int() converts (4,300 digits).
            raise argparse.ArgumentTypeError(f"{expected}, got a number of {len(digits):,} digits")
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{expected}, got {_shown(text)}") from None
        if not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(f"{expected}, got {value:,}")
        return value


decision_ms: Final = Bounded(1, 3_600_000, " ms")
"""Time per decision: up to an hour."""
bank_ms: Final = Bounded(0, 86_400_000, " ms")
"""A match's time bank: up to a day."""
deal_cap: Final = Bounded(1, MAX_DEAL_CAP)
seed: Final = Bounded(MIN_SEED, MAX_SEED, range_text=SEED_RANGE)
"""Any seed the engine deals from: 128 bits, or a signed 64-bit one as older records hold."""
matches: Final = Bounded(1, 1_000_000_000)
concurrency: Final = Bounded(1, 256)
strikes: Final = Bounded(0, 10_000)
probation_after: Final = Bounded(0, 10_000)
down_after: Final = Bounded(1, 10_000)
idle_bots: Final = Bounded(0, 1_024)
port: Final = Bounded(1, 65_535)
live_delay: Final = Bounded(0, 3_600, " s")
"""How late spectators see a match in play: up to an hour."""
streams: Final = Bounded(1, 10_000)
"""Live streams `arena serve` keeps open at once (each is a connection and a file descriptor)."""
limit: Final = Bounded(1, 100_000)
"""Rows listed at once."""
uploads_at_once: Final = Bounded(1, 64)
uploads_per_hour: Final = Bounded(1, 10_000)
upload_quota_mib: Final = Bounded(1, 1_048_576, " MiB")
"""What a participant's bots' bundles may take: up to a TiB."""
keep_versions: Final = Bounded(1, 10_000)
seat: Final = Bounded(0, 7)
"""A seat of a match, numbered from 0 as records number them (8 players at most)."""
deal_number: Final = Bounded(1, 100_000_000)
"""A deal of a recorded match, from 1 (the record says how many it has)."""
move_number: Final = Bounded(1, 100_000_000)
"""A move of a recorded match, counted from 1 over its deals (the longest record the arena writes holds
under a million)."""
check_id: Final = Bounded(1, 2**63 - 1)
"""A kept check's id (a row id: 64 bits)."""


@dataclass(frozen=True, slots=True)
class BoundedReal:
    """An argument type for a number (decimals allowed) from `low` to `high`; its error names the range."""

    low: float
    high: float

    @property
    def range(self) -> str:
        """The range as people read it, e.g. `-1000 to 1000`."""
        return f"{self.low:g} to {self.high:g}"

    def __call__(self, text: str) -> float:
        expected = f"expected a number from {self.range}"
        try:
            value = float(text) if len(text) <= _SHOWN_CHARS else math.nan
        except ValueError:
            value = math.nan
        if not self.low <= value <= self.high:  # NaN and infinities too
            raise argparse.ArgumentTypeError(f"{expected}, got {_shown(text)}")
        return value


elo: Final = BoundedReal(-1000.0, 1000.0)
"""An Elo difference: beyond 1,000 the weaker side never scores."""
error_rate: Final = BoundedReal(0.0001, 0.4999)
"""An SPRT's alpha or beta: a chance above 0 and below a half."""
sets: Final = Bounded(1, 10_000_000)
"""Duplicate sets an event may play."""


@dataclass(frozen=True, slots=True)
class Duration:
    """An argument type for a span of time written with units, `90s`, `30m`, `2h` or `1h30m`, from
    `low_s` to `high_s` seconds; returns seconds."""

    low_s: int
    high_s: int

    @property
    def range(self) -> str:
        """The range as people read it."""
        return f"{span(self.low_s)} to {span(self.high_s)}"

    def __call__(self, text: str) -> float:
        expected = f"expected a duration such as 90s, 30m, 2h or 1h30m, from {self.range}"
        if self.low_s == 0 and text.strip() == "0":
            return 0.0
        found = re.fullmatch(r"(?:(\d{1,7})h)?(?:(\d{1,7})m)?(?:(\d{1,7})s)?", text.strip().lower())
        if found is None or not any(found.groups()):
            raise argparse.ArgumentTypeError(f"{expected}; got {_shown(text)}")
        hours, minutes, seconds = (int(part or 0) for part in found.groups())
        total = hours * 3600 + minutes * 60 + seconds
        if not self.low_s <= total <= self.high_s:
            raise argparse.ArgumentTypeError(f"{expected}; got {span(total)}")
        return float(total)


def span(seconds: float) -> str:
    """1h30m, 90s, 2h: the shortest way to write a whole number of seconds in the units `Duration`
    reads."""
    hours, rest = divmod(round(seconds), 3600)
    minutes, seconds = divmod(rest, 60)
    text = (
        (f"{hours}h" if hours else "")
        + (f"{minutes}m" if minutes else "")
        + (f"{seconds}s" if seconds else "")
    )
    return text or "0s"


duration: Final = Duration(1, 8760 * 3600)
"""How long a ladder run starts new sets: a second to a year."""
lease: Final = Duration(1, 24 * 3600)
"""How long a ladder run's claim of a set lasts without a renewal: a second to a day."""
check_timeout: Final = Duration(1, 600)
"""How long a bot has to answer the check when its set starts: a second to ten minutes."""
wait: Final = Duration(1, 24 * 3600)
"""How long a ladder waits before it tries again (a set put back, a bot that is down): up to a day."""
store_wait: Final = Duration(0, 24 * 3600)
"""How long a run or the site waits for a store server that went away: 0 (stop at once) to a day."""


def players(text: str) -> int:
    """4, 6 or 8."""
    if text.strip() not in ("4", "6", "8"):
        raise argparse.ArgumentTypeError(f"56 is played by 4, 6 or 8 players, not {_shown(text)}")
    return int(text)


def ruleset(text: str) -> Ruleset:
    """pairs or partnership."""
    try:
        return Ruleset.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a ruleset, pairs or partnership; got {_shown(text)}"
        ) from None


def address(text: str) -> str:
    """HOST:PORT, or several separated by commas (one per seat)."""
    parts = split_addresses(text)
    for part in parts:
        try:
            check_address(part)
        except ValueError as error:
            # Our own words, with the text escaped and cut (a port thousands of digits long included).
            problem = str(error).split(", got ", 1)[0]
            raise argparse.ArgumentTypeError(f"{problem}, got {_shown(part)}") from None
    return ",".join(parts)


def one_address(text: str) -> str:
    """HOST:PORT: one address."""
    if "," in text:
        raise argparse.ArgumentTypeError(f"expected one HOST:PORT, got {_shown(text)}")
    return address(text)


def address_ranges(text: str) -> AddressPolicy:
    """Address ranges separated by commas (10.0.0.0/8,192.168.1.0/24): the policy allowing them."""
    try:
        return AddressPolicy.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def bot_name(text: str) -> str:
    """1-64 letters, digits, '_', '.' or '-', starting with a letter or digit."""
    if not is_bot_name(text):
        raise argparse.ArgumentTypeError(f"{BOT_NAME_RULE}; got {_shown(text)}")
    return text


def owner(text: str) -> str:
    """A bot's owner: 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit."""
    if not is_owner_name(text):
        clear = " (--no-owner clears it)" if not text else ""
        raise argparse.ArgumentTypeError(f"{OWNER_RULE}; got {_shown(text)}{clear}")
    return text


def event(text: str) -> str:
    """An event's name: 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit."""
    try:
        return event_name(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"an event name is 1-64 letters, digits, '_', '.' or '-'; got {_shown(text)}"
        ) from None


def bot_command(text: str) -> str:
    """A command line with {port_file} or {port} in it."""
    try:
        command_arguments(text, 1)
    except ValueError as error:
        raise argparse.ArgumentTypeError(safe_text(str(error))) from None
    return text


def bot_address(text: str) -> BotAddress:
    """NAME=HOST:PORT[,HOST:PORT...]."""
    try:
        return BotAddress.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(safe_text(str(error))) from None


def port_range(text: str) -> tuple[int, int]:
    """LO-HI: ports from LO to HI, both included, within 1-65535."""
    low, dash, high = text.strip().partition("-")
    if dash and low.isdigit() and high.isdigit() and len(low) <= 5 and len(high) <= 5:
        first, last = int(low), int(high)
        if 1 <= first <= last <= 65535:
            return first, last
    raise argparse.ArgumentTypeError(
        f"expected LO-HI, ports from 1 to 65535 with LO <= HI; got {_shown(text)}"
    )
