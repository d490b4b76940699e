"""The standings of one rating pool, computed from what the store keeps: every registered bot with its
fitted rating in the pool (fit.py: the 95% interval and the likelihood of superiority over the next bot
below come with it), its matches, wins, losses and faults there (counted as tally.py says, when each
match was stored). Reading them costs a row per bot, whatever the length of the history.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from arena.ladder.isolation import shares_seats
from arena.ladder.rating import (
    CRASH_CAUSES,
    ILLEGAL_MOVE_CAUSES,
    START_RATING,
    TIMEOUT_CAUSES,
    BotTotals,
    FittedRating,
    PairResult,
)
from arena.ladder.store import DEFAULT_POOL, BotEntry, LadderStore, StoredMatch, isolated, pool_rules

__all__ = [
    "CRASH_CAUSES",
    "ILLEGAL_MOVE_CAUSES",
    "TIMEOUT_CAUSES",
    "HeadToHead",
    "Standing",
    "crosstable",
    "default_pool",
    "ladder_standings",
    "matches_per_bot",
    "rank_bots",
]


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the standings."""

    rank: int
    bot: str
    rating: float
    interval: float
    matches: int
    wins: int
    losses: int
    timeouts: int
    illegal_moves: int
    crashes: int
    probation: str | None
    pool: str = DEFAULT_POOL
    superiority: float | None = None
    """The likelihood that the bot is stronger than the next bot below it in the pool's ratings (a
    removed bot counts), from the fit; None for the last and for a bot not rated yet."""
    down_since: float | None = None
    """When the bot was marked down (the host could not reach or start it; the ladder skips it until it
    answers), in seconds since the epoch; None when it is up."""
    isolated: bool = True
    """Whether the arena starts the bot itself and so isolates its seats and sets (isolation.py); a remote
    bot is not isolated: it may remember the rotations of a set."""
    shares_seats: bool = False
    """A remote bot with fewer addresses than the seats of a team in this pool: one process plays
    partners (isolation.shares_seats)."""

    def to_json(self) -> dict[str, Any]:
        """The standing as a JSON-ready dictionary (an infinite interval becomes null)."""
        return {
            "rank": self.rank,
            "bot": self.bot,
            "pool": self.pool,
            "elo": round(self.rating, 1),
            "interval": None if self.interval == float("inf") else round(self.interval, 1),
            "superiority": None if self.superiority is None else round(self.superiority, 3),
            "matches": self.matches,
            "wins": self.wins,
            "losses": self.losses,
            "faults": {
                "timeouts": self.timeouts,
                "illegal_moves": self.illegal_moves,
                "crashes": self.crashes,
            },
            "probation": self.probation,
            "down": self.down_since is not None,
            "down_since": self.down_since,
            "isolated": self.isolated,
            "shares_seats": self.shares_seats,
        }


def default_pool(pools: Mapping[str, int]) -> str:
    """The pool shown when none is named: the ladder's pool with the most matches (an event's pool, such
    as 4p-pairs@sprt-..., only when there is no other; the default format's when nothing was played yet).
    `pools` is the store's, most matches first."""
    return next((pool for pool in pools if "@" not in pool), next(iter(pools), DEFAULT_POOL))


def ladder_standings(
    store: LadderStore, pool: str | None = None, only: Collection[str] | None = None
) -> list[Standing]:
    """The standings of `pool` (default: the pool with the most matches) in `store`: every registered
    bot (or those of `only`, as an event's report wants them), best rating first."""
    if pool is None:
        pool = default_pool(store.ratings.pools())
    bots = [bot for bot in store.registry.bots(pool) if only is None or bot.name in only]
    return rank_bots(
        bots, store.ratings.totals(pool), store.ratings.fitted_ratings(pool), pool, store.registry.down_bots()
    )


def rank_bots(
    bots: Sequence[BotEntry],
    totals: Mapping[str, BotTotals],
    fitted: Mapping[str, FittedRating],
    pool: str = DEFAULT_POOL,
    down: Mapping[str, float] | None = None,
) -> list[Standing]:
    """Every bot of `bots`, best rating first (equal ratings share a rank), with its totals in
    `totals` (none for a bot without any) and its fitted rating in `fitted` (an infinite interval for a
    bot not rated yet); the bots of `down` (name: since when) are shown down."""
    lines = []
    rules = pool_rules(pool)
    for entry in bots:
        counted = totals.get(entry.name, BotTotals())
        fit = fitted.get(entry.name)
        lines.append(
            Standing(
                rank=0,
                bot=entry.name,
                rating=entry.rating,
                interval=float("inf") if fit is None else fit.margin,
                superiority=None if fit is None else fit.superiority,
                matches=counted.matches,
                wins=counted.wins,
                losses=counted.losses,
                timeouts=counted.timeouts,
                illegal_moves=counted.illegal_moves,
                crashes=counted.crashes,
                probation=entry.probation,
                pool=pool,
                down_since=(down or {}).get(entry.name),
                isolated=isolated([entry]),
                shares_seats=shares_seats(entry, rules),
            )
        )
    lines.sort(key=lambda line: (-line.rating, line.bot))
    ranked: list[Standing] = []
    for index, line in enumerate(lines):
        tied = index > 0 and line.rating == lines[index - 1].rating
        ranked.append(replace(line, rank=ranked[-1].rank if tied else index + 1))
    return ranked


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """One cell of a crosstable: `bot`'s summed set score against `opponent` over the rated sets they
    played together (a set's score being its mean result over its matches: 1 above, 0.5 equal, 0 below)."""

    bot: str
    opponent: str
    sets: int
    score: float

    def to_json(self) -> dict[str, Any]:
        """The cell as a JSON-ready dictionary."""
        return {"bot": self.bot, "opponent": self.opponent, "sets": self.sets, "score": round(self.score, 3)}


def crosstable(
    pairs: Mapping[tuple[str, str], PairResult], fitted: Mapping[str, FittedRating]
) -> tuple[list[str], list[HeadToHead]]:
    """A pool's head-to-head results from its sums: the bots best rated first (every bot that played a
    rated set there, removed or not), and a cell for each ordered pair that met, in that order."""
    bots = sorted({bot for pair in pairs for bot in pair}, key=lambda bot: (-_rating_of(fitted, bot), bot))
    place = {bot: index for index, bot in enumerate(bots)}
    cells = []
    for (first, second), line in pairs.items():
        cells.append(HeadToHead(first, second, line.sets, line.score))
        cells.append(HeadToHead(second, first, line.sets, line.sets - line.score))
    cells.sort(key=lambda cell: (place[cell.bot], place[cell.opponent]))
    return bots, cells


def _rating_of(fitted: Mapping[str, FittedRating], bot: str) -> float:
    line = fitted.get(bot)
    return START_RATING if line is None else line.rating


def matches_per_bot(matches: Iterable[StoredMatch]) -> dict[str, int]:
    """How many of `matches` each bot played."""
    counts: dict[str, int] = {}
    for match in matches:
        for bot in match.bot_ranks:
            counts[bot] = counts.get(bot, 0) + 1
    return counts
