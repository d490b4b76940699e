"""Fair play on the live page: a move of a duplicate set reaches the live table only once every rotation
of the set has ended that deal, checked against the real timeline of a ladder run (every event as the
matches made it, every write to the live table, the stored records: live_timeline.py)."""

from __future__ import annotations

import asyncio
import functools
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from arena.ladder import Ladder, LadderSettings, set_play
from arena.ladder.bots import LocalBots
from arena.ladder.live_feed import LiveFeed
from arena.ladder.live_gate import Publish
from arena.ladder.match_play import LocalMatches, MatchOrder, NotStarted, PlayedMatch, Replay
from arena.ladder.store import LadderStore, relations
from tests.arena.ladder.ladder_support import FAST
from tests.arena.ladder.live_timeline import Timeline, assert_live_was_fair, watched_store
from tests.arena.ladder.match_support import save_match

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the supervisor's guarantees need Linux")

RANDOM = "python -m sample_bots.random_bot --port 0 --port-file {port_file}"


class WatchedMatches(LocalMatches):
    """Plays in process, noting every public event the match makes before the ladder sees it."""

    def __init__(self, local_bots: LocalBots, timeline: Timeline) -> None:
        super().__init__(local_bots, lambda: False)
        self.timeline = timeline

    async def play(
        self,
        order: MatchOrder,
        not_started: NotStarted,
        on_event: Publish | None,
        replay: Replay | None = None,
    ) -> PlayedMatch | None:
        noted, replayed = self.timeline.watch(order, on_event, replay)
        return await super().play(order, not_started, noted, replayed)


def test_no_move_is_live_before_every_rotation_has_ended_its_deal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Written as soon as released: quick matches would otherwise be stored (and their waiting events
    # dropped) before a batch is due, and the check would have nothing to look at.
    monkeypatch.setattr(set_play, "LiveFeed", functools.partial(LiveFeed, interval_s=0.0))
    timeline = Timeline()
    store = watched_store(tmp_path / "ladder.db", timeline)
    store.registry.add_bot("left", command=RANDOM)
    store.registry.add_bot("right", command=RANDOM)
    settings = LadderSettings(matches=6, concurrency=2, time_control=FAST, seed=5)

    async def run() -> None:
        local_bots = LocalBots(tmp_path / "logs", grace=1.0, idle_limit=8)
        try:
            await Ladder(store, settings, local_bots, matches=WatchedMatches(local_bots, timeline)).run()
        finally:
            await local_bots.stop_all()

    asyncio.run(run())
    assert len(store.matches.finished()) == 6
    assert len(timeline.attempts) == 6  # none played again
    assert assert_live_was_fair(timeline, store) > 0  # matches were shown live, only later than played


def run_ladder(store: LadderStore, settings: LadderSettings, logs: Path) -> None:
    """A ladder run over `store`, its command bots started in `logs` and stopped after."""

    async def run() -> None:
        local_bots = LocalBots(logs, grace=1.0, idle_limit=8)
        try:
            await Ladder(store, settings, local_bots).run()
        finally:
            await local_bots.stop_all()

    asyncio.run(run())


def test_a_set_shown_live_and_left_unfinished_is_void_not_replayed(tmp_path: Path) -> None:
    """A runner died after a deal of the set went live (its rotation 1 never stored): replaying rotation 1
    would deal those cards to players who may have watched them, so the next run makes the set void."""
    store = LadderStore(tmp_path / "ladder.db")
    store.registry.add_bot("left", command=RANDOM)
    store.registry.add_bot("right", command=RANDOM)
    interrupted = store.sets.create_set(4, "pairs", None, 12345, ["left", "right"], isolated=True)
    save_match(store, "early", interrupted, 0, "one_team_left", [1, 2], [], {"match_id": "early"}, 3, 0.5)
    store.sets.mark_set_shown(interrupted.id)
    untouched = store.sets.create_set(4, "pairs", None, 678, ["left", "right"], isolated=True)
    settings = LadderSettings(matches=2, concurrency=2, time_control=FAST, seed=5)
    run_ladder(store, settings, tmp_path / "logs")
    assert store.sets.void_reason(interrupted.id) == "interrupted after its deals were shown live"
    assert [match.rotation for match in store.matches.finished(interrupted.id)] == [0]
    assert sorted(match.rotation for match in store.matches.finished(untouched.id)) == [
        0,
        1,
    ]  # resumed as ever


def test_a_set_is_noted_as_shown_when_its_first_move_goes_live(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.db")
    store.registry.add_bot("left", command=RANDOM)
    store.registry.add_bot("right", command=RANDOM)
    settings = LadderSettings(matches=4, concurrency=2, time_control=FAST, seed=5, deal_cap=3)
    run_ladder(store, settings, tmp_path / "logs")
    shown = store.file._conn.execute(select(relations.sets.c.created_at, relations.sets.c.shown_at)).all()
    assert len(shown) == 2
    # Every set shows a move live at some point: when the last rotation's deal ends, or once the others
    # are stored; never before its creation.
    assert all(at is not None and at >= created for created, at in shown)
