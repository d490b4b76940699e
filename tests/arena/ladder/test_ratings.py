"""Rating a finished set: once, when complete and not void, from the ratings as they are when the event
is saved (computed again when another runner changed them), with the last rating of a removed bot."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from arena.ladder.elo import START_RATING
from arena.ladder.ratings import ATTEMPTS, rate_set, rating_event
from arena.ladder.store import DuplicateSet, LadderStore, RatingChange, RatingsChangedError


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LadderStore]:
    opened = LadderStore(tmp_path / "ladder.db")
    for name in ("a", "b", "c"):
        opened.add_bot(name, address=f"h:{name}")
    yield opened
    opened.close()


def played(store: LadderStore, bots: list[str], rankings: list[list[int]]) -> DuplicateSet:
    """A set of `bots`, with one stored match per ranking given (a ranking by team)."""
    duplicate = store.create_set(4, "pairs", None, 1, bots)
    for rotation, ranking in enumerate(rankings):
        store.save_match(f"m{duplicate.id}-{rotation}", duplicate, rotation, "done", ranking, [], {}, 1, 0.1)
    return duplicate


def changes(event: Iterable[RatingChange] | None) -> dict[str, float]:
    assert event is not None
    return {change.bot: change.after - change.before for change in event}


def test_a_set_is_rated_once_when_complete(store: LadderStore) -> None:
    duplicate = played(store, ["a", "b"], [[1, 2]])  # a (team 0) first
    assert rate_set(store, duplicate) is None  # one rotation still to play
    assert store.rated_sets() == set()
    store.save_match("m1-1", duplicate, 1, "done", [2, 1], [], {}, 1, 0.1)  # a is team 1, first again
    assert changes(rate_set(store, duplicate)) == pytest.approx({"a": 16.0, "b": -16.0})
    assert rate_set(store, duplicate) is None
    assert store.bot("a").rating == pytest.approx(1516.0)
    assert store.unfinished_sets() == []


def test_a_void_set_is_never_rated(store: LadderStore) -> None:
    duplicate = played(store, ["a", "b"], [[1, 2], [2, 1]])
    store.void_set(duplicate.id, "arena error in rotation 1")
    assert rate_set(store, duplicate) is None
    assert store.bot("a").rating == START_RATING


def test_a_removed_bot_counts_with_its_last_rating(store: LadderStore) -> None:
    rate_set(store, played(store, ["a", "b"], [[1, 2], [2, 1]]))
    store.remove_bot("b")
    event = rate_set(store, played(store, ["a", "b"], [[2, 1], [1, 2]]))
    assert event is not None
    assert {change.bot: change.before for change in event} == pytest.approx({"a": 1516.0, "b": 1484.0})


def test_a_bot_without_a_rating_starts_at_the_start() -> None:
    event = rating_event({"a": 1600.0}, [{"a": 1, "new": 2}])
    assert [(change.bot, change.before) for change in event] == [("a", 1600.0), ("new", START_RATING)]
    assert sum(change.after - change.before for change in event) == pytest.approx(0.0)


def test_ratings_changed_by_another_runner_are_read_again(
    store: LadderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between reading the ratings and saving the event, another runner rates a set of `a`: the event
    is refused and computed again, so that set's change to `a` is not lost."""
    mine = played(store, ["a", "b"], [[1, 2], [2, 1]])
    theirs = played(store, ["a", "c"], [[1, 2], [2, 1]])
    other = LadderStore(store.path)
    read = store.ratings
    reads = 0

    def ratings_then_the_other_runner(bots: Iterable[str], pool: str) -> dict[str, float]:
        nonlocal reads
        reads += 1
        ratings = read(bots, pool)
        if reads == 1:
            rate_set(other, theirs)
        return ratings

    monkeypatch.setattr(store, "ratings", ratings_then_the_other_runner)
    event = rate_set(store, mine)
    other.close()
    assert reads == 2
    assert event is not None
    [a_before] = [change.before for change in event if change.bot == "a"]
    assert a_before == pytest.approx(1516.0)  # after their set, not the 1500 read first
    events = sqlite3.connect(store.path).execute("SELECT set_id, bot, before, after FROM rating_events")
    by_set = {(set_id, bot): (before, after) for set_id, bot, before, after in events}
    assert by_set[(mine.id, "a")][0] == by_set[(theirs.id, "a")][1]
    assert store.bot("a").rating == by_set[(mine.id, "a")][1]


def test_ratings_that_keep_changing_stop_with_a_store_error(
    store: LadderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    duplicate = played(store, ["a", "b"], [[1, 2], [2, 1]])
    attempts = 0

    def always_stale(bots: Iterable[str], pool: str) -> dict[str, float]:
        nonlocal attempts
        attempts += 1
        return dict.fromkeys(bots, 1000.0 + attempts)

    monkeypatch.setattr(store, "ratings", always_stale)
    with pytest.raises(RatingsChangedError, match="ratings changed while set 1 was being rated"):
        rate_set(store, duplicate)
    assert attempts == ATTEMPTS
    assert store.rated_sets() == set()
