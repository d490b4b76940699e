"""What a stored match adds to each of its bots' running totals, and what a rated set adds to the
pairwise scores behind each bot's interval: the counting rules of the standings, applied once when a
match or a rating event is stored, so that the standings and the pairing read sums, not the history.

A win is a match the bot ranked first alone, a loss one it ranked last alone. A fault counts against
the bot that played the team that made it, in one of three groups: timeouts; illegal moves (illegal,
malformed and misdirected answers, protocol errors); crashes (disconnected, unreachable, incompatible).
A match is a forfeit of the bot's own when one of its faults was not played on by a substitute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from arena.ladder.elo import pair_scores
from arena.ladder.entries import BotTotals
from fiftysix.wire import FaultCause, FaultRecord

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
class MatchTally:
    """One bot's part in one match, as its totals and its membership row count it."""

    bot: str
    rank: int
    win: bool
    loss: bool
    timeouts: int
    illegal_moves: int
    crashes: int
    own_forfeit: bool


def match_tallies(
    team_bots: Sequence[str], bot_ranks: Mapping[str, int], faults: Sequence[FaultRecord]
) -> list[MatchTally]:
    """Each bot's part in a match whose teams were played by `team_bots` and ranked as `bot_ranks`."""
    tallies = []
    for bot, rank in bot_ranks.items():
        others = [other for name, other in bot_ranks.items() if name != bot]
        own = [fault for fault in faults if team_bots[fault.team] == bot]
        tallies.append(
            MatchTally(
                bot,
                rank,
                win=all(rank < other for other in others),
                loss=not all(rank < other for other in others) and all(rank > other for other in others),
                timeouts=sum(fault.cause in TIMEOUT_CAUSES for fault in own),
                illegal_moves=sum(fault.cause in ILLEGAL_MOVE_CAUSES for fault in own),
                crashes=sum(fault.cause in CRASH_CAUSES for fault in own),
                own_forfeit=any(not fault.substituted for fault in own),
            )
        )
    return tallies


def add_match(totals: BotTotals, tally: MatchTally) -> BotTotals:
    """`totals` with one more match."""
    return BotTotals(
        totals.matches + 1,
        totals.wins + tally.win,
        totals.losses + tally.loss,
        totals.timeouts + tally.timeouts,
        totals.illegal_moves + tally.illegal_moves,
        totals.crashes + tally.crashes,
        totals.pair_count,
        totals.pair_mean,
        totals.pair_m2,
    )


def add_pair_score(totals: BotTotals, score: float) -> BotTotals:
    """`totals` with one more pairwise score (Welford's update: identical scores keep pair_m2 at exactly
    0.0, as the interval's fallback for a bot that always scored the same needs)."""
    count = totals.pair_count + 1
    delta = score - totals.pair_mean
    mean = totals.pair_mean + delta / count
    return BotTotals(
        totals.matches,
        totals.wins,
        totals.losses,
        totals.timeouts,
        totals.illegal_moves,
        totals.crashes,
        count,
        mean,
        totals.pair_m2 + delta * (score - mean),
    )


def set_pair_scores(rankings: Sequence[Mapping[str, int]]) -> list[tuple[str, float]]:
    """Each bot's pairwise scores in a rated set (one per opponent), as the interval counts them."""
    return [(bot, score) for (bot, _other), score in pair_scores(rankings).items()]
