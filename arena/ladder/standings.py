"""The standings, computed from the stored matches: every registered bot with its rating, the 95%
interval of that rating, its matches, wins, losses and faults; and how many matches each bot has
played, which the pairing reads.

A win is a match the bot ranked first alone, a loss one it ranked last alone. A fault counts against
the bot that played the team that made it, in one of three groups: timeouts; illegal moves (illegal,
malformed and misdirected answers, protocol errors); crashes (disconnected, unreachable, incompatible).
The interval rests on the bot's pairwise scores in the rated sets only (elo.py says how).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from typing import Any, Final

from arena.ladder.elo import interval_half_width, pair_scores
from arena.ladder.entries import BotEntry, StoredMatch
from arena.ladder.store import LadderStore
from fiftysix.wire import FaultCause

TIMEOUT_CAUSES: Final = frozenset({FaultCause.TIMEOUT})
ILLEGAL_MOVE_CAUSES: Final = frozenset(
    {
        FaultCause.ILLEGAL_MOVE,
        FaultCause.MALFORMED_ANSWER,
        FaultCause.WRONG_DECISION,
        FaultCause.PROTOCOL_ERROR,
    }
)
CRASH_CAUSES: Final = frozenset({FaultCause.DISCONNECTED, FaultCause.UNREACHABLE, FaultCause.INCOMPATIBLE})


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
    down_since: float | None = None
    """When the bot was marked down (the host could not reach or start it; the ladder skips it until it
    answers), in seconds since the epoch; None when it is up."""

    def to_json(self) -> dict[str, Any]:
        """The standing as a JSON-ready dictionary (an infinite interval becomes null)."""
        return {
            "rank": self.rank,
            "bot": self.bot,
            "elo": round(self.rating, 1),
            "interval": None if self.interval == float("inf") else round(self.interval, 1),
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
        }


def ladder_standings(store: LadderStore) -> list[Standing]:
    """The standings of the ladder in `store`: every registered bot, best rating first."""
    return rank_bots(store.bots(), store.matches(), store.rated_sets(), store.down_bots())


def rank_bots(
    bots: Sequence[BotEntry],
    matches: Sequence[StoredMatch],
    rated_sets: Set[int],
    down: Mapping[str, float] | None = None,
) -> list[Standing]:
    """Every bot of `bots`, best rating first (equal ratings share a rank), with its record and faults
    in `matches`; its interval rests on the sets of `rated_sets`; the bots of `down` (name: since when)
    are shown down."""
    pair_results = _pair_results(matches, rated_sets)
    lines = []
    for entry in bots:
        played = [match for match in matches if entry.name in match.bot_ranks]
        wins = losses = 0
        for match in played:
            rank = match.bot_ranks[entry.name]
            others = [other for bot, other in match.bot_ranks.items() if bot != entry.name]
            if all(rank < other for other in others):
                wins += 1
            elif all(rank > other for other in others):
                losses += 1
        causes = [
            fault.cause
            for match in played
            for fault in match.faults
            if match.team_bots[fault.team] == entry.name
        ]
        lines.append(
            Standing(
                rank=0,
                bot=entry.name,
                rating=entry.rating,
                interval=interval_half_width(pair_results.get(entry.name, [])),
                matches=len(played),
                wins=wins,
                losses=losses,
                timeouts=sum(cause in TIMEOUT_CAUSES for cause in causes),
                illegal_moves=sum(cause in ILLEGAL_MOVE_CAUSES for cause in causes),
                crashes=sum(cause in CRASH_CAUSES for cause in causes),
                probation=entry.probation,
                down_since=(down or {}).get(entry.name),
            )
        )
    lines.sort(key=lambda line: (-line.rating, line.bot))
    ranked: list[Standing] = []
    for index, line in enumerate(lines):
        tied = index > 0 and line.rating == lines[index - 1].rating
        ranked.append(replace(line, rank=ranked[-1].rank if tied else index + 1))
    return ranked


def _pair_results(matches: Iterable[StoredMatch], rated_sets: Set[int]) -> dict[str, list[float]]:
    """Each bot's pairwise scores: one per opponent per rated set."""
    by_set: dict[int, list[StoredMatch]] = {}
    for match in matches:
        if match.set_id in rated_sets:
            by_set.setdefault(match.set_id, []).append(match)
    results: dict[str, list[float]] = {}
    for stored in by_set.values():
        for (bot, _other), score in pair_scores([match.bot_ranks for match in stored]).items():
            results.setdefault(bot, []).append(score)
    return results


def matches_per_bot(matches: Iterable[StoredMatch]) -> dict[str, int]:
    """How many of `matches` each bot played."""
    counts: dict[str, int] = {}
    for match in matches:
        for bot in match.bot_ranks:
            counts[bot] = counts.get(bot, 0) + 1
    return counts
