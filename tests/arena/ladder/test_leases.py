"""Several runners on one ladder file share the work through leases: a set is played by one runner at a
time, rated exactly once, and a dead runner's set is finished by another once its lease expires."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ladder_support import FAST, registered
from structlog.testing import capture_logs

from arena.ladder import Ladder, LadderReport, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore
from sdk import BotServer


def test_a_set_is_claimed_by_one_runner_at_a_time(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.db")
    free = store.sets.create_set(4, "pairs", 2, 1, ["a", "b"], isolated=False)
    assert store.leases.claim_set(free.id, "one", 60.0)
    assert not store.leases.claim_set(free.id, "two", 60.0)  # held
    assert store.leases.claim_set(free.id, "one", 60.0)  # its own: renewed
    assert [duplicate.id for duplicate, _ in store.leases.claimable_sets("two")] == []
    assert store.leases.renew_leases("one", [free.id], 0.0) == {free.id}  # now expires at once
    time.sleep(0.01)
    assert [duplicate.id for duplicate, _ in store.leases.claimable_sets("two")] == [free.id]
    assert store.leases.claim_set(free.id, "two", 60.0)  # taken over after the lease expired
    assert store.leases.renew_leases("one", [free.id], 60.0) == set()  # "one" lost it
    assert store.leases.release_set(free.id, "one") == 0.0  # not its own: nothing changes
    assert not store.leases.claim_set(free.id, "one", 60.0)

    created = store.sets.create_set(4, "pairs", 2, 2, ["a", "b"], lease=("one", 60.0), isolated=False)
    assert not store.leases.claim_set(created.id, "two", 60.0)  # a new set is created claimed
    store.leases.release_set(created.id, "one")
    assert store.leases.claim_set(created.id, "two", 60.0)  # released: anybody may claim it

    # Put back (a bot did not answer when it started): nobody claims it for a while, doubling.
    assert store.leases.release_set(created.id, "two", retry_s=30.0, retry_max_s=100.0) == 30.0
    assert not store.leases.claim_set(created.id, "two", 60.0)
    sqlite3.connect(store.path).execute("UPDATE sets SET not_before = 0").connection.commit()
    assert store.leases.claim_set(created.id, "two", 60.0)
    assert store.leases.release_set(created.id, "two", retry_s=30.0, retry_max_s=100.0) == 60.0
    sqlite3.connect(store.path).execute("UPDATE sets SET not_before = 0").connection.commit()
    assert store.leases.claim_set(created.id, "two", 60.0)
    assert store.leases.release_set(created.id, "two", retry_s=30.0, retry_max_s=100.0) == 100.0  # at most

    store.sets.void_set(free.id, "why")
    assert not store.leases.claim_set(free.id, "two", 60.0)  # a void set is never claimed
    store.close()


def test_two_runners_share_forty_matches_and_rate_every_set_once(
    tmp_path: Path, servers: list[BotServer]
) -> None:
    path = tmp_path / "ladder.db"
    registered(path, servers).close()
    first, second = LadderStore(path), LadderStore(path)
    left_over = first.sets.create_set(
        4, "pairs", 2, 77, ["bot0", "bot1"], isolated=False
    )  # an earlier run's: one of them plays it

    async def both() -> list[LadderReport]:
        runners = [
            Ladder(store, LadderSettings(matches=20, deal_cap=2, time_control=FAST, seed=seed, concurrency=2,
                                         lease_s=3.0), LocalBots(tmp_path))
            for seed, store in ((1, first), (2, second))
        ]  # fmt: skip
        return await asyncio.gather(*(runner.run() for runner in runners))

    with capture_logs() as logs:
        reports = asyncio.run(both())
    played = [report.matches for report in reports]
    events = [entry["event"] for entry in logs]
    assert "match_not_stored" not in events  # no rotation was played twice
    assert "lease_lost" not in events
    assert "ladder_match_failed" not in events
    assert sorted(report.sets_resumed for report in reports) == [0, 1]  # the left-over set, by one
    assert len(first.matches.finished(left_over.id)) == 2
    assert sum(played) >= 40
    assert all(count >= 20 for count in played)
    stored = first.matches.finished()
    assert len(stored) == sum(played)  # every match a runner played was stored
    assert first.sets.unfinished_sets() == []
    db = sqlite3.connect(path)
    sets = db.execute("SELECT id, rotations, rated_at, lease_owner FROM sets").fetchall()
    for set_id, rotations, rated_at, lease_owner in sets:
        assert len(first.matches.finished(set_id)) == rotations
        assert rated_at is not None
        assert lease_owner is None  # every lease given up
        events_of_set = db.execute("SELECT count(*) FROM rating_events WHERE set_id = ?", (set_id,))
        assert events_of_set.fetchone() == (2,)  # rated exactly once
    assert sum(bot.rating for bot in first.registry.bots()) == pytest.approx(3 * 1500)
    first.close()
    second.close()


def test_a_killed_runner_s_set_is_finished_by_another_after_its_lease_expires(
    tmp_path: Path, servers: list[BotServer]
) -> None:
    path = tmp_path / "ladder.db"
    registered(path, servers[:2]).close()
    runner = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "ladder", "--db", str(path), "run", "--forever",
         "--lease", "3s", "--deal-cap", "3", "--decision-ms", "500", "--bank-ms", "500"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    store = LadderStore(path)
    try:
        # Kill it in the middle of a set: one rotation stored, the other in play.
        deadline = time.monotonic() + 60
        middle = None
        while middle is None and time.monotonic() < deadline:
            middle = (
                sqlite3.connect(path)
                .execute(
                    "SELECT id, lease_until FROM sets WHERE rated_at IS NULL AND lease_owner LIKE ?"
                    " AND (SELECT count(*) FROM matches WHERE set_id = sets.id) = 1",
                    (f"%-{runner.pid}-%",),
                )
                .fetchone()
            )
            if middle is None:
                time.sleep(0.01)
        assert middle is not None, "the runner did not get going"
        os.kill(runner.pid, signal.SIGKILL)
    finally:
        runner.kill()
        runner.wait(10)
    set_id = middle[0]
    [before] = store.matches.finished(set_id)

    # Its lease holds: nobody takes the set over before it expires.
    assert set_id not in [duplicate.id for duplicate, _ in store.leases.claimable_sets("someone")]
    assert not store.leases.claim_set(set_id, "someone", 60.0)

    other = LadderStore(path)
    settings = LadderSettings(matches=2, deal_cap=2, time_control=FAST, lease_s=3.0)
    deadline = time.monotonic() + 60
    resumed = 0
    with capture_logs() as logs:
        while set_id not in store.sets.rated_sets() and time.monotonic() < deadline:
            resumed += asyncio.run(Ladder(other, settings, LocalBots(tmp_path)).run()).sets_resumed
    assert set_id in store.sets.rated_sets()
    assert resumed == 1
    assert "match_not_stored" not in [entry["event"] for entry in logs]
    assert before in store.matches.finished(set_id)  # the dead runner's match kept
    assert len(store.matches.finished(set_id)) == 2
    rating_rows = sqlite3.connect(path).execute(
        "SELECT count(*) FROM rating_events WHERE set_id = ?", (set_id,)
    )
    assert rating_rows.fetchone() == (2,)
    assert sum(bot.rating for bot in store.registry.bots()) == pytest.approx(2 * 1500)
    other.close()
    store.close()
