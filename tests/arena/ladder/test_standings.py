"""The standings computed from stored matches: wins, losses, fault groups, intervals from rated sets only,
ranks; and the matches per bot that the pairing reads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.ladder.rating.values import BotTotals, FittedRating
from arena.ladder.standings import (
    CRASH_CAUSES,
    ILLEGAL_MOVE_CAUSES,
    TIMEOUT_CAUSES,
    default_pool,
    ladder_standings,
    matches_per_bot,
    rank_bots,
)
from arena.ladder.store import BotEntry, LadderStore, StoredMatch
from fiftysix.wire import FaultCause, FaultRecord
from tests.arena.ladder.match_support import save_match


def stored(
    set_id: int, rotation: int, ranks: dict[str, int], faults: Sequence[FaultRecord] = ()
) -> StoredMatch:
    """A stored match whose teams are played by the bots of `ranks`, in its order."""
    return StoredMatch(
        f"m{set_id}-{rotation}",
        set_id,
        rotation,
        tuple(ranks),
        "one_team_left",
        tuple(ranks.values()),
        dict(ranks),
        tuple(faults),
        10,
        0.5,
    )


def scanned_totals(matches: Sequence[StoredMatch]) -> dict[str, BotTotals]:
    """Each bot's totals as the standings counted them from the whole history before version 3: the
    reference the running totals must equal."""
    totals = {}
    for name in {name for match in matches for name in match.bot_ranks}:
        played = [match for match in matches if name in match.bot_ranks]
        wins = losses = 0
        for match in played:
            rank = match.bot_ranks[name]
            others = [other for bot, other in match.bot_ranks.items() if bot != name]
            if all(rank < other for other in others):
                wins += 1
            elif all(rank > other for other in others):
                losses += 1
        causes = [
            fault.cause for match in played for fault in match.faults if match.team_bots[fault.team] == name
        ]
        totals[name] = BotTotals(
            len(played),
            wins,
            losses,
            sum(cause in TIMEOUT_CAUSES for cause in causes),
            sum(cause in ILLEGAL_MOVE_CAUSES for cause in causes),
            sum(cause in CRASH_CAUSES for cause in causes),
        )
    return totals


FITTED = {"a": FittedRating("a", 1516.0, 120.0, 0.75), "b": FittedRating("b", 1484.0, 120.0, None)}


def bot(name: str, rating: float = 1500.0, probation: str | None = None) -> BotEntry:
    return BotEntry(name, "h:1", None, rating, probation)


def fault(team: int, cause: FaultCause, substituted: bool = False) -> FaultRecord:
    return FaultRecord(seat=team, team=team, cause=cause, detail="", deal_number=1, substituted=substituted)


def test_wins_losses_and_faults_count_for_the_bot_of_the_team() -> None:
    matches = [
        stored(1, 0, {"a": 1, "b": 2}, [fault(1, FaultCause.TIMEOUT)]),  # b (team 1) timed out
        stored(1, 1, {"b": 2, "a": 1}, [fault(0, FaultCause.ILLEGAL_MOVE)]),  # b is team 0 now
    ]
    lines = {
        line.bot: line
        for line in rank_bots([bot("a", 1516), bot("b", 1484)], scanned_totals(matches), FITTED)
    }
    assert lines["a"].rank == 1
    assert (lines["a"].matches, lines["a"].wins, lines["a"].losses) == (2, 2, 0)
    assert (lines["b"].wins, lines["b"].losses) == (0, 2)
    assert (lines["b"].timeouts, lines["b"].illegal_moves, lines["b"].crashes) == (1, 1, 0)
    assert (lines["a"].timeouts, lines["a"].illegal_moves) == (0, 0)
    assert lines["a"].interval < float("inf")
    assert lines["a"].to_json()["faults"] == {"timeouts": 0, "illegal_moves": 0, "crashes": 0}


def test_a_win_is_first_alone_and_a_loss_last_alone() -> None:
    matches = [
        stored(1, 0, {"a": 1, "b": 1, "c": 2}),  # a and b share first: no win, c loses
        stored(1, 1, {"c": 1, "a": 2, "b": 3}),  # c wins, a neither, b loses
    ]
    lines = {
        line.bot: line for line in rank_bots([bot("a"), bot("b"), bot("c")], scanned_totals(matches), {})
    }
    assert [(lines[name].wins, lines[name].losses) for name in "abc"] == [(0, 0), (0, 1), (1, 1)]


@pytest.mark.parametrize("cause", list(FaultCause))
def test_every_fault_cause_counts_in_exactly_one_group(cause: FaultCause) -> None:
    assert [cause in group for group in (TIMEOUT_CAUSES, ILLEGAL_MOVE_CAUSES, CRASH_CAUSES)].count(True) == 1
    [line] = rank_bots(
        [bot("a")],
        scanned_totals([stored(1, 0, {"a": 2, "b": 1}, [fault(0, cause, substituted=True)])]),
        {},
    )
    assert line.timeouts + line.illegal_moves + line.crashes == 1


def test_the_interval_and_superiority_come_from_the_fit() -> None:
    matches = [stored(1, 0, {"a": 1, "b": 2}), stored(1, 1, {"b": 2, "a": 1})]
    [unrated, _] = rank_bots([bot("a"), bot("b")], scanned_totals(matches), {})
    assert (unrated.interval, unrated.superiority) == (float("inf"), None)
    assert (unrated.to_json()["interval"], unrated.to_json()["superiority"]) == (None, None)
    [rated, last] = rank_bots([bot("a", 1516), bot("b", 1484)], scanned_totals(matches), FITTED)
    assert (rated.interval, rated.superiority, last.superiority) == (120.0, 0.75, None)
    assert rated.to_json()["superiority"] == 0.75


def test_best_rating_first_and_equal_ratings_share_a_rank() -> None:
    lines = rank_bots([bot("d", 1400), bot("c", 1500), bot("b", 1600), bot("a", 1500)], {}, {})
    assert [(line.rank, line.bot) for line in lines] == [(1, "b"), (2, "a"), (2, "c"), (4, "d")]


def test_matches_per_bot() -> None:
    matches = [stored(1, 0, {"a": 1, "b": 2}), stored(1, 1, {"b": 1, "a": 2}), stored(2, 0, {"a": 1, "c": 2})]
    assert matches_per_bot(matches) == {"a": 3, "b": 2, "c": 1}
    assert matches_per_bot([]) == {}


def test_the_standings_of_a_store_list_every_registered_bot(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.db")
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    store.registry.set_probation("b", "crashed")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b", "gone"], isolated=False)
    save_match(store, "m1", duplicate, 0, "one_team_left", [1, 2, 3], [], {}, 1, 0.1)
    lines = ladder_standings(store)
    assert [(line.bot, line.matches, line.wins, line.probation) for line in lines] == [
        ("a", 1, 1, None),
        ("b", 1, 0, "crashed"),
    ]
    store.close()


@pytest.mark.parametrize(
    ("pools", "shown"),
    [
        ({}, "4p-pairs"),
        ({"6p-pairs": 9, "4p-pairs": 3}, "6p-pairs"),
        ({"4p-pairs@sprt-x": 50, "6p-pairs": 9}, "6p-pairs"),  # an event's pool only when alone
        ({"4p-pairs@sprt-x": 50}, "4p-pairs@sprt-x"),
    ],
)
def test_the_default_pool_is_the_ladders_with_the_most_matches(pools: dict[str, int], shown: str) -> None:
    assert default_pool(pools) == shown
