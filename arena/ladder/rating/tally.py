"""What a stored match adds to each of its bots' running totals, and what a rated set adds to its pool's
sums (the head-to-head of each pair, the finishing orders read a place at a time) that the ratings are fitted
from: the counting rules, applied once when a match or a rating event is stored, so that the standings,
the pairing and the fit read sums, not the history.

A win is a match the bot ranked first alone, a loss one it ranked last alone. A fault counts against
the bot that played the team that made it, in one of three groups: timeouts; illegal moves (illegal,
malformed and misdirected answers, protocol errors); crashes (disconnected, unreachable, incompatible).
A match is a forfeit of the bot's own when one of its faults was not played on by a substitute.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Final, TypeVar

from arena.ladder.rating.values import (
    BotTotals,
    FinishingOrder,
    MatchTally,
    PairResult,
    PoolSums,
    SetResult,
)
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
    added = tally.totals
    return BotTotals(
        totals.matches + added.matches,
        totals.wins + added.wins,
        totals.losses + added.losses,
        totals.timeouts + added.timeouts,
        totals.illegal_moves + added.illegal_moves,
        totals.crashes + added.crashes,
    )


def pair_scores(rankings: Sequence[Mapping[str, int]]) -> dict[tuple[str, str], float]:
    """Mean score of bot i against bot j over a set's matches, for every ordered pair (i, j).

    `rankings` holds one mapping per match of the set: bot name -> rank (1 is best, equal ranks tie).

    >>> pair_scores([{"a": 1, "b": 2}, {"a": 1, "b": 1}])
    {('a', 'b'): 0.75, ('b', 'a'): 0.25}
    """
    if not rankings:
        raise ValueError("a set has at least one match")
    bots = sorted(rankings[0])
    scores: dict[tuple[str, str], float] = {}
    for first, second in itertools.permutations(bots, 2):
        total = 0.0
        for ranking in rankings:
            if ranking[first] < ranking[second]:
                total += 1.0
            elif ranking[first] == ranking[second]:
                total += 0.5
        scores[(first, second)] = total / len(rankings)
    return scores


def finishing_order(ranks: Mapping[str, int]) -> FinishingOrder:
    """A match's bots in the order they finished (1 is best; equal ranks share a place).

    >>> finishing_order({"c": 2, "a": 1, "b": 2, "d": 3})
    (('a',), ('b', 'c'), ('d',))
    """
    places = sorted(set(ranks.values()))
    return tuple(tuple(sorted(bot for bot, rank in ranks.items() if rank == place)) for place in places)


def order_choices(order: FinishingOrder) -> tuple[dict[tuple[str, ...], float], dict[str, float]]:
    """A finishing order as Plackett-Luce reads it, a place at a time: the group still unplaced at each
    place (but the last) and the bot that took it. Tied bots: each strict order that breaks the ties
    counts 1 / (their number), so two bots tied for a place take it half a time each (fit.py).

    >>> order_choices((("a",), ("b", "c")))
    ({('a', 'b', 'c'): 1.0, ('b', 'c'): 1.0}, {'a': 1.0, 'b': 0.5, 'c': 0.5})
    """
    breaks = list(itertools.product(*(itertools.permutations(group) for group in order)))
    choices: dict[tuple[str, ...], float] = {}
    places: dict[str, float] = {}
    for broken in breaks:
        strict = [bot for group in broken for bot in group]
        for place in range(len(strict) - 1):
            unplaced = tuple(sorted(strict[place:]))
            choices[unplaced] = choices.get(unplaced, 0.0) + 1.0 / len(breaks)
            places[strict[place]] = places.get(strict[place], 0.0) + 1.0 / len(breaks)
    return choices, places


def set_result(rankings: Sequence[Mapping[str, int]]) -> SetResult:
    """What a rated set whose matches ranked its bots as `rankings` adds to its pool's sums: the score of
    each pair (first before second by name), and with three or more bots each match's finishing order,
    read a place at a time."""
    scores = pair_scores(rankings)
    choices: dict[tuple[str, ...], float] = {}
    places: dict[str, float] = {}
    if len(rankings[0]) > 2:
        for ranks in rankings:
            match_choices, match_places = order_choices(finishing_order(ranks))
            _add(choices, match_choices)
            _add(places, match_places)
    return SetResult({pair: score for pair, score in scores.items() if pair[0] < pair[1]}, choices, places)


def add_set(sums: PoolSums, result: SetResult) -> PoolSums:
    """A pool's sums with one more rated set (`sums` may hold only the rows the set changes)."""
    pairs = dict(sums.pairs)
    for pair, score in result.scores.items():
        before = pairs.get(pair, PairResult(0, 0.0, 0.0))
        pairs[pair] = PairResult(before.sets + 1, before.score + score, before.squares + score * score)
    choices, places = dict(sums.choices), dict(sums.places)
    _add(choices, result.choices)
    _add(places, result.places)
    return PoolSums(pairs, choices, places, sums.rated_sets + 1)


_Key = TypeVar("_Key")


def _add(totals: dict[_Key, float], more: Mapping[_Key, float]) -> None:
    for key, value in more.items():
        totals[key] = totals.get(key, 0.0) + value
