"""The values the rating math works on: a pool's sums (each pair's head-to-head, the finishing orders
as Plackett-Luce reads them), what a rated set adds to them, a fitted rating, a bot's running totals
and its part in one match. Plain frozen data, no I/O: the store keeps them, the ladder computes them
with this package."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

START_RATING: Final = 1500.0
"""The mean rating of every pool, and the rating of a bot not yet rated in a pool."""

FinishingOrder = tuple[tuple[str, ...], ...]
"""A match's bots in the order they finished, best first: groups of bots tied for a place, each group's
names sorted."""


@dataclass(frozen=True, slots=True)
class PairResult:
    """Two bots' head-to-head in a pool: the sets they played together, the summed score of the first
    (a set's score being its mean result over its matches: 1 ranked above, 0.5 equal, 0 below) and the
    sum of the squares of those scores (for the spread of the scores around the fit)."""

    sets: int
    score: float
    squares: float


@dataclass(frozen=True, slots=True)
class SetResult:
    """What a rated set adds to its pool's sums: the score of each pair of its bots (first < second by
    name, the score of first), and with three or more bots what its matches' finishing orders add to the
    choices and places of PoolSums."""

    scores: dict[tuple[str, str], float]
    choices: dict[tuple[str, ...], float]
    places: dict[str, float]


@dataclass(frozen=True, slots=True)
class PoolSums:
    """What a pool's ratings are fitted from, and all of it (fit.py): each pair's head-to-head (first <
    second by name); in three- and four-team pools, the finishing orders of the rated sets' matches as
    Plackett-Luce reads them, a place at a time: `choices`, how often each group of bots (names sorted)
    was the group still unplaced when a place was given, and `places`, how many of those places each bot
    took (fractions when bots tied: see fit.py); and the number of rated sets. Their size is bounded by
    the groups of bots that met, not by the number of sets."""

    pairs: dict[tuple[str, str], PairResult] = field(default_factory=dict)
    choices: dict[tuple[str, ...], float] = field(default_factory=dict)
    places: dict[str, float] = field(default_factory=dict)
    rated_sets: int = 0


@dataclass(frozen=True, slots=True)
class FittedRating:
    """A bot's rating in a pool as the maximum-likelihood fit gives it (fit.py): the rating, the half
    width of its 95% interval, and the likelihood that it is stronger than the next bot below it in the
    pool's ratings (None for the last)."""

    bot: str
    rating: float
    margin: float
    superiority: float | None


@dataclass(frozen=True, slots=True)
class BotTotals:
    """A bot's running totals in one pool, kept up to date as each match and each rating event is
    stored, so that the standings and the pairing read them instead of the history: its matches, wins,
    losses and faults by group."""

    matches: int = 0
    wins: int = 0
    losses: int = 0
    timeouts: int = 0
    illegal_moves: int = 0
    crashes: int = 0


@dataclass(frozen=True, slots=True)
class MatchTally:
    """One bot's part in one match (tally.match_tallies counts it): its rank, whether it won or lost, its
    faults by group, whether the match was a forfeit of its own."""

    bot: str
    rank: int
    win: bool
    loss: bool
    timeouts: int
    illegal_moves: int
    crashes: int
    own_forfeit: bool

    @property
    def totals(self) -> BotTotals:
        """What the match adds to the bot's running totals."""
        return BotTotals(1, int(self.win), int(self.loss), self.timeouts, self.illegal_moves, self.crashes)
