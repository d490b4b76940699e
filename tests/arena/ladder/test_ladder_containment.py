"""The ladder's containment boundary: an error of the arena's own in one match, or two runners on one
file, never ends a run; the failed set is void (never rated) and everything else is rated as usual."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from ladder_support import FAST, registered
from structlog.testing import capture_logs

import arena.runner.match
from arena.ladder import Ladder, LadderReport, LadderSettings, rate_set
from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore
from sdk import BotServer


def test_an_arena_error_voids_its_set_and_the_run_goes_on(
    tmp_path: Path, servers: list[BotServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = registered(tmp_path / "ladder.db", servers)
    real = arena.runner.match.deal_end_message
    calls = 0

    def failing_once(result: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("a bug of the arena's own")
        return real(result)  # type: ignore[arg-type]

    monkeypatch.setattr(arena.runner.match, "deal_end_message", failing_once)
    # One deal a match, whatever the deals: the second deal's end is in the first set's second match.
    settings = LadderSettings(matches=6, deal_cap=1, time_control=FAST, seed=4)
    ladder = Ladder(store, settings, LocalBots(tmp_path))
    with capture_logs() as logs:
        report = asyncio.run(ladder.run())
    failed = [entry for entry in logs if entry["event"] == "match_failed_by_arena_error"]
    assert len(failed) == 1
    assert failed[0]["exc_info"] is True  # logged with its traceback
    assert report.matches == 6
    assert report.arena_errors == 1
    [(void_set, reason)] = report.voided_sets
    assert "arena error in rotation 1: RuntimeError: a bug of the arena's own" in reason
    stored = store.matches.finished()
    assert [match.reason for match in stored].count("arena_error") == 1
    errored = next(match for match in stored if match.reason == "arena_error")
    assert errored.faults == ()  # no bot blamed
    assert errored.set_id == void_set
    assert store.sets.void_reason(void_set) == reason
    assert report.sets_rated == 2  # the other two sets of the six matches
    assert store.sets.unfinished_sets() == []  # a void set is not resumed
    store.close()


def test_two_runners_on_one_file_both_finish_and_share_the_unfinished_set(
    tmp_path: Path, servers: list[BotServer]
) -> None:
    path = tmp_path / "ladder.db"
    registered(path, servers).close()
    first, second = LadderStore(path), LadderStore(path)
    unfinished = first.sets.create_set(4, "pairs", 2, 77, ["bot0", "bot1"], isolated=False)

    async def both() -> list[LadderReport]:
        settings = LadderSettings(matches=2, deal_cap=2, time_control=FAST, seed=1)
        return await asyncio.gather(
            Ladder(first, settings, LocalBots(tmp_path)).run(),
            Ladder(second, settings, LocalBots(tmp_path)).run(),
        )

    with capture_logs() as logs:
        reports = asyncio.run(both())  # before: sqlite3.IntegrityError out of the second runner
    # Once both played the unfinished set (the second's rotation a logged skip); with leases, one does.
    assert not any(entry["event"] == "match_not_stored" for entry in logs)
    assert sorted(report.sets_resumed for report in reports) == [0, 1]
    assert len(first.matches.finished(unfinished.id)) == 2
    assert rate_set(first, unfinished) is None  # rated already, by whichever stored it last
    events = sqlite3.connect(path).execute("SELECT bot FROM rating_events WHERE set_id = ?", (unfinished.id,))
    assert sorted(row[0] for row in events) == ["bot0", "bot1"]  # one rating event, applied once
    first.close()
    second.close()
