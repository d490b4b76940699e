"""What the ladder keeps, as typed values: a registered bot, a duplicate set, a finished match (with
its faults as FaultRecords), one bot's part in a set's rating event. The store saves and loads them; the
scheduler, the ratings and the standings work on them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from fiftysix.engine import MatchRules, Ruleset
from fiftysix.wire import FaultRecord

DEFAULT_POOL: Final = "4p-pairs"
"""The pool of the default format (4 players, pairs): the one read when no other is named."""


BOT_NAME_RULE: Final = "a bot name is 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit"


def is_bot_name(text: str) -> bool:
    """Whether `text` may name a new bot (BOT_NAME_RULE): the command line and the site's API ask."""
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", text) is not None


def parse_pool(text: str) -> str:
    """The pool that `text` names, in its canonical form (`<players>p-<ruleset>`, such as 4p-pairs).

    :raises ValueError: when it names no format.
    """
    players, _, ruleset = text.partition("p-")
    if not players.isdecimal() or len(players) > 2:
        raise ValueError(f"no pool {text!r}: a pool is a format such as 4p-pairs or 6p-partnership")
    try:
        parsed = Ruleset.parse(ruleset)
        MatchRules(int(players), parsed)
    except ValueError:
        raise ValueError(f"no pool {text!r}: a pool is a format such as 4p-pairs or 6p-partnership") from None
    return pool_name(int(players), parsed.value)


def pool_name(players: int, ruleset: str) -> str:
    """The rating pool of a format: its players and ruleset, such as `4p-pairs` or `6p-partnership`.
    Every format is rated apart: a bot's 4-player rating says little of its 6-player play."""
    return f"{players}p-{ruleset}"


@dataclass(frozen=True, slots=True)
class BotEntry:
    """A registered bot: reached at `address` (host:port), or started from `command` by the arena."""

    name: str
    address: str | None
    command: str | None
    rating: float
    probation: str | None

    @property
    def where(self) -> str:
        """The address, or the command that starts the bot."""
        return self.address if self.address is not None else f"command: {self.command}"


@dataclass(frozen=True, slots=True)
class DuplicateSet:
    """A pairing played as one match per rotation of the teams over the seats, on the same deals."""

    id: int
    players: int
    ruleset: str
    deal_cap: int | None
    seed: int
    bots: tuple[str, ...]
    rotations: int

    @property
    def pool(self) -> str:
        """The rating pool the set belongs to."""
        return pool_name(self.players, self.ruleset)

    def team_bots(self, rotation: int) -> tuple[str, ...]:
        """The bot of each team in a rotation: rotation r moves every bot r teams on."""
        count = len(self.bots)
        return tuple(self.bots[(team - rotation) % count] for team in range(count))


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One bot's part in a set's rating event: its rating before the set and after it."""

    bot: str
    before: float
    after: float


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A finished match as the ladder keeps it."""

    id: str
    set_id: int
    rotation: int
    team_bots: tuple[str, ...]
    reason: str
    ranking: tuple[int, ...]
    bot_ranks: dict[str, int]
    faults: tuple[FaultRecord, ...]
    decisions: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """The match as a JSON-ready dictionary (faults as the store keeps them)."""
        return {
            "id": self.id,
            "set_id": self.set_id,
            "rotation": self.rotation,
            "team_bots": list(self.team_bots),
            "reason": self.reason,
            "ranking": list(self.ranking),
            "bot_ranks": dict(self.bot_ranks),
            "faults": [fault.to_json() for fault in self.faults],
            "decisions": self.decisions,
            "seconds": self.seconds,
        }


@dataclass(frozen=True, slots=True)
class BotTotals:
    """A bot's running totals in one pool, kept up to date as each match and each rating event is
    stored, so that the standings and the pairing read them instead of the history: its matches, wins,
    losses and faults by group, and the count, mean and sum of squared deviations (Welford's running
    form of sum and sum of squares) of its pairwise scores in rated sets, which its interval rests on."""

    matches: int = 0
    wins: int = 0
    losses: int = 0
    timeouts: int = 0
    illegal_moves: int = 0
    crashes: int = 0
    pair_count: int = 0
    pair_mean: float = 0.0
    pair_m2: float = 0.0
