"""Rating a finished set: once, when complete and not void, by refitting its pool from the sums with the
set added (computed again when another runner rated a set of the pool meanwhile); a removed bot stays in
the fit."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from arena.ladder.rating.fit import fit_pool
from arena.ladder.rating.values import START_RATING, PairResult, PoolSums
from arena.ladder.ratings import ATTEMPTS, rate_set
from arena.ladder.store import DuplicateSet, LadderStore, RatingChange, RatingsChangedError
from tests.arena.ladder.match_support import save_match


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LadderStore]:
    opened = LadderStore(tmp_path / "ladder.db")
    for name in ("a", "b", "c"):
        opened.registry.add_bot(name, address=f"h:{name}")
    yield opened
    opened.close()


def played(store: LadderStore, bots: list[str], rankings: list[list[int]], players: int = 4) -> DuplicateSet:
    """A set of `bots`, with one stored match per ranking given (a ranking by team)."""
    duplicate = store.sets.create_set(players, "pairs", None, 1, bots, isolated=False)
    for rotation, ranking in enumerate(rankings):
        save_match(store, f"m{duplicate.id}-{rotation}", duplicate, rotation, "done", ranking, [], {}, 1, 0.1)
    return duplicate


def changes(event: Iterable[RatingChange] | None) -> dict[str, float]:
    assert event is not None
    return {change.bot: change.after - change.before for change in event}


def test_a_set_is_rated_once_when_complete(store: LadderStore) -> None:
    duplicate = played(store, ["a", "b"], [[1, 2]])  # a (team 0) first
    assert rate_set(store, duplicate) is None  # one rotation still to play
    assert store.sets.rated_sets() == set()
    save_match(store, "m1-1", duplicate, 1, "done", [2, 1], [], {}, 1, 0.1)  # a is team 1, first again
    expected = fit_pool(PoolSums({("a", "b"): PairResult(1, 1.0, 1.0)}))
    gain = expected.ratings[0] - START_RATING
    assert changes(rate_set(store, duplicate)) == pytest.approx({"a": gain, "b": -gain})
    assert rate_set(store, duplicate) is None
    assert store.registry.bot("a").rating == pytest.approx(expected.ratings[0])
    assert store.sets.unfinished_sets() == []
    assert store.ratings.pool_sums("4p-pairs") == PoolSums(
        {("a", "b"): PairResult(1, 1.0, 1.0)}, rated_sets=1
    )


def test_the_fit_does_not_depend_on_the_order_of_the_sets(tmp_path: Path) -> None:
    """Unlike sequential Elo: the same sets rated in another order give the same ratings."""
    sets = [(["a", "b"], [[1, 2], [2, 1]]), (["b", "c"], [[1, 2], [1, 2]]), (["a", "c"], [[2, 1], [2, 1]])]
    ratings = []
    for order, name in ((sets, "one.db"), (sets[::-1], "two.db")):
        store = LadderStore(tmp_path / name)
        for bot in "abc":
            store.registry.add_bot(bot, address="h:1")
        for bots, rankings in order:
            rate_set(store, played(store, bots, rankings))
        ratings.append({bot.name: bot.rating for bot in store.registry.bots()})
        store.close()
    assert ratings[0] == pytest.approx(ratings[1])


def test_three_team_sets_are_fitted_on_their_finishing_order(store: LadderStore) -> None:
    # a first in every rotation, then c, then b: the order a > c > b.
    duplicate = store.sets.create_set(6, "pairs", None, 1, ["a", "b", "c"], isolated=False)
    ranks = {"a": 1, "c": 2, "b": 3}
    for rotation in range(3):
        ranking = [ranks[bot] for bot in duplicate.team_bots(rotation)]
        save_match(store, f"m{rotation}", duplicate, rotation, "done", ranking, [], {}, 1, 0.1)
    assert rate_set(store, duplicate) is not None
    sums = store.ratings.pool_sums("6p-pairs")
    # Three matches, each a > c > b: a took the first place among all three, c the second among b, c.
    assert sums.choices == {("a", "b", "c"): 3.0, ("b", "c"): 3.0}
    assert sums.places == {"a": 3.0, "c": 3.0}
    assert sums.pairs == {
        ("a", "b"): PairResult(1, 1.0, 1.0),
        ("a", "c"): PairResult(1, 1.0, 1.0),
        ("b", "c"): PairResult(1, 0.0, 0.0),
    }
    assert (
        store.registry.bot("a", "6p-pairs").rating
        > store.registry.bot("c", "6p-pairs").rating
        > store.registry.bot("b", "6p-pairs").rating
    )


def test_a_void_set_is_never_rated(store: LadderStore) -> None:
    duplicate = played(store, ["a", "b"], [[1, 2], [2, 1]])
    store.sets.void_set(duplicate.id, "arena error in rotation 1")
    assert rate_set(store, duplicate) is None
    assert store.registry.bot("a").rating == START_RATING


def test_a_removed_bot_stays_in_the_fit(store: LadderStore) -> None:
    first = changes(rate_set(store, played(store, ["a", "b"], [[1, 2], [2, 1]])))
    store.registry.remove_bot("b")
    event = rate_set(store, played(store, ["a", "b"], [[2, 1], [1, 2]]))
    assert event is not None
    assert {change.bot: change.before for change in event} == pytest.approx(
        {"a": START_RATING + first["a"], "b": START_RATING + first["b"]}
    )
    assert store.ratings.fitted_ratings("4p-pairs").keys() == {"a", "b"}


def test_sums_changed_by_another_runner_are_read_again(
    store: LadderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between reading the sums and saving the event, another runner rates a set of the pool: the event
    is refused and computed again, so the fit saved includes that set."""
    mine = played(store, ["a", "b"], [[1, 2], [2, 1]])
    theirs = played(store, ["a", "c"], [[1, 2], [2, 1]])
    other = LadderStore(store.path)
    read = store.ratings.pool_sums
    reads = 0

    def sums_then_the_other_runner(pool: str) -> PoolSums:
        nonlocal reads
        reads += 1
        sums = read(pool)
        if reads == 1:
            rate_set(other, theirs)
        return sums

    monkeypatch.setattr(store.ratings, "pool_sums", sums_then_the_other_runner)
    event = rate_set(store, mine)
    other.close()
    assert reads == 2
    assert event is not None
    [a_before] = [change.before for change in event if change.bot == "a"]
    assert a_before > START_RATING  # after their set, not the 1500 read first
    assert read("4p-pairs") == PoolSums(
        {("a", "b"): PairResult(1, 1.0, 1.0), ("a", "c"): PairResult(1, 1.0, 1.0)}, rated_sets=2
    )
    events = sqlite3.connect(store.path).execute("SELECT set_id, bot, before, after FROM rating_events")
    by_set = {(set_id, bot): (before, after) for set_id, bot, before, after in events}
    assert by_set[(mine.id, "a")][0] == by_set[(theirs.id, "a")][1]
    assert store.registry.bot("a").rating == by_set[(mine.id, "a")][1]


def test_sums_that_keep_changing_stop_with_a_store_error(
    store: LadderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    duplicate = played(store, ["a", "b"], [[1, 2], [2, 1]])
    attempts = 0

    def always_stale(pool: str) -> PoolSums:
        nonlocal attempts
        attempts += 1
        return PoolSums(rated_sets=-attempts)

    monkeypatch.setattr(store.ratings, "pool_sums", always_stale)
    with pytest.raises(RatingsChangedError, match="ratings changed while set 1 was being rated"):
        rate_set(store, duplicate)
    assert attempts == ATTEMPTS
    assert store.sets.rated_sets() == set()
