"""A ladder run's memory stays flat, and what bounds a run: a number of matches, a duration, a stop."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import re
import sys
import time
from numbers import Real
from pathlib import Path

import pytest
from ladder_support import FAST, registered

from arena.cli import main
from arena.cli.progress import Progress
from arena.ladder import Ladder, LadderReport, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.held_sets import SetInPlay
from arena.ladder.live_gate import LiveGate
from arena.ladder.run_settings import VOIDED_SETS_KEPT
from arena.ladder.store import LadderStore
from sample_bots.random_bot import RandomBot
from sdk import BotServer, BotView, Move, start


def shape(report: LadderReport) -> dict[str, int | None]:
    """Each field of the report: None for a number, the length of anything that holds several."""
    sizes: dict[str, int | None] = {}
    for field in dataclasses.fields(report):
        value = getattr(report, field.name)
        sizes[field.name] = None if isinstance(value, Real) else len(value)
    return sizes


def test_a_run_report_does_not_grow_with_the_matches(tmp_path: Path, servers: list[BotServer]) -> None:
    reports = []
    for matches in (2, 10):
        store = registered(tmp_path / f"ladder-{matches}.db", servers[:2])
        settings = LadderSettings(matches=matches, deal_cap=2, time_control=FAST, seed=5)
        reports.append(asyncio.run(Ladder(store, settings, LocalBots(tmp_path)).run()))
        store.close()
    short, long = reports
    assert (short.matches, long.matches) == (2, 10)
    assert shape(short) == shape(long)
    assert long.decisions > short.decisions > 0  # what bench/ladder.py divides by the matches


def test_a_report_names_the_first_voided_sets_and_counts_the_rest(
    tmp_path: Path, servers: list[BotServer]
) -> None:
    store = registered(tmp_path / "ladder.db", servers[:2])
    ladder = Ladder(store, LadderSettings(), LocalBots(tmp_path))
    for seed in range(VOIDED_SETS_KEPT + 5):
        duplicate = store.sets.create_set(4, "pairs", 2, seed, ["bot0", "bot1"], isolated=False)
        in_play = SetInPlay(duplicate, LiveGate(range(duplicate.rotations)))
        ladder.player.void(in_play, "arena error")
        ladder.player.void(in_play, "arena error again")  # a set is made void once
    assert ladder.report.sets_voided == VOIDED_SETS_KEPT + 5
    assert len(ladder.report.voided_sets) == VOIDED_SETS_KEPT
    assert store.sets.unfinished_sets() == []
    store.close()


def test_a_run_bounded_by_time_ends_on_whole_sets(tmp_path: Path, servers: list[BotServer]) -> None:
    store = registered(tmp_path / "ladder.db", servers[:2])
    settings = LadderSettings(matches=None, duration_s=0.3, deal_cap=2, time_control=FAST, seed=6)
    report = asyncio.run(Ladder(store, settings, LocalBots(tmp_path)).run())
    # The first set starts at once; no set starts after 0.3 s, and the one in play is finished.
    assert report.matches >= 2
    assert report.matches % 2 == 0
    assert report.sets_rated == report.matches // 2
    assert store.sets.unfinished_sets() == []
    store.close()


def test_matches_and_duration_whichever_comes_first(tmp_path: Path, servers: list[BotServer]) -> None:
    store = registered(tmp_path / "ladder.db", servers[:2])
    settings = LadderSettings(matches=2, duration_s=3600, deal_cap=2, time_control=FAST, seed=6)
    report = asyncio.run(Ladder(store, settings, LocalBots(tmp_path)).run())
    assert report.matches == 2
    store.close()


class Terminal(io.StringIO):
    """Standard error as a terminal: the progress line is redrawn in place."""

    def isatty(self) -> bool:
        return True


def test_the_progress_total_grows_with_a_resumed_set(
    tmp_path: Path,
    servers: list[BotServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--matches 1 with a set of two matches left unfinished: the run plays both, and says 1/2, 2/2
    (never 2/1)."""
    db = tmp_path / "ladder.db"
    store = registered(db, servers)
    unfinished = store.sets.create_set(4, "pairs", 2, 8, ["bot0", "bot1"], isolated=False)
    store.close()
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["ladder", "--db", str(db), "run", "--matches", "1", "--decision-ms", "500"]) == 0
    counts = [
        (int(done), int(total)) for done, total in re.findall(r"(\d+)/(\d+) matches", terminal.getvalue())
    ]
    assert counts == [(1, 2), (2, 2)]
    assert "Played 2 matches (1 sets rated, 0 faults)" in capsys.readouterr().out
    store = LadderStore(db)
    assert len(store.matches.finished(unfinished.id)) == 2
    assert store.sets.unfinished_sets() == []
    store.close()


def test_a_run_bounded_by_time_alone_shows_the_time_left() -> None:
    progress = Progress(None, stream=Terminal(), duration_s=3600)
    progress.started -= 5
    progress.advance()
    line = progress.line()
    assert re.search(r"^1 matches .* 59:5\d left .*elapsed$", line), line
    assert "/" not in line.replace("/min", "")
    progress.duration_s = 0
    assert "time is up, finishing the sets in play" in progress.line()
    assert " left" not in progress.line()


def test_the_time_left_is_the_sooner_of_matches_and_duration() -> None:
    progress = Progress(1000, stream=Terminal(), duration_s=60)
    progress.started -= 1  # one match a second: 999 s of matches left, but under a minute of time
    progress.advance()
    assert re.search(r"\b0:5\d left\b", progress.line()), progress.line()


class SlowBot(RandomBot):
    """Thinks 50 ms a decision, so that a match is surely in progress when the run is stopped."""

    def decide(self, view: BotView) -> Move:
        time.sleep(0.05)
        return super().decide(view)


def test_stop_now_cancels_the_matches_in_progress_and_stores_nothing_of_them(tmp_path: Path) -> None:
    slow = start(SlowBot)
    store = registered(tmp_path / "ladder.db", [slow, slow])
    settings = LadderSettings(matches=None, deal_cap=4, seed=9)
    ladder = Ladder(store, settings, LocalBots(tmp_path))

    async def run_and_stop() -> tuple[LadderReport, float]:
        task = asyncio.create_task(ladder.run())
        while ladder.launched == 0:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        ladder.stop(now=True)
        stopped = time.monotonic()
        report = await task
        return report, time.monotonic() - stopped

    try:
        report, seconds = asyncio.run(run_and_stop())
        assert seconds < 2
        assert (report.matches, report.matches_cancelled) == (0, 1)
        assert store.matches.finished() == []
        [(_duplicate, missing)] = store.sets.unfinished_sets()
        assert missing == [0, 1]  # the next run plays the whole set
        assert ladder.scheduled == {"bot0": 0, "bot1": 0}
    finally:
        store.close()
        slow.stop(0)


UNRULY = Path(__file__).resolve().parents[2] / "bots" / "unruly_bot.py"


def test_a_stop_while_the_bots_start_begins_no_match(tmp_path: Path) -> None:
    """Ctrl-C once while a set's command bots are still starting: the run waits for the starts (they are
    stopped with the run) but begins none of the set's matches."""
    store = LadderStore(tmp_path / "ladder.db")
    for name in ("slow0", "slow1"):
        store.registry.add_bot(name, command=f"python {UNRULY} --port {{port}} --delay 1.5")
    bots = LocalBots(tmp_path, grace=1.0)
    ladder = Ladder(store, LadderSettings(matches=None, deal_cap=1, seed=2), bots)

    async def run_and_stop() -> LadderReport:
        task = asyncio.create_task(ladder.run())
        while ladder.launched == 0:
            await asyncio.sleep(0.01)
        ladder.stop()
        try:
            return await task
        finally:
            await bots.stop_all()

    try:
        report = asyncio.run(run_and_stop())
        assert (report.matches, report.matches_cancelled) == (0, 0)
        assert store.matches.finished() == []
        [(_duplicate, missing)] = store.sets.unfinished_sets()
        assert missing == [0, 1]
        assert ladder.scheduled == {"slow0": 0, "slow1": 0}
        assert ladder.planned_matches is None
    finally:
        store.close()


def test_a_run_whose_sets_cannot_start_ends_at_every_concurrency(tmp_path: Path) -> None:
    """Workers wait for each other to start a set's rotations together; when the sets are dropped (a bot
    that does not start) and workers end, the ones left never wait for more workers than there are."""
    for concurrency in (2, 3):
        store = LadderStore(tmp_path / f"ladder-{concurrency}.db")
        store.registry.add_bot(
            "fine", command="python -m sample_bots.random_bot --port 0 --port-file {port_file}"
        )
        store.registry.add_bot("broken", command="python -c 'raise SystemExit(3)' {port}")
        settings = LadderSettings(matches=3, concurrency=concurrency, time_control=FAST, seed=2, retry_s=0.0)

        async def run(store: LadderStore, settings: LadderSettings) -> None:
            local_bots = LocalBots(tmp_path / "logs", grace=1.0)
            try:
                await asyncio.wait_for(Ladder(store, settings, local_bots).run(), timeout=120)
            finally:
                await local_bots.stop_all()

        asyncio.run(run(store, settings))
        assert store.matches.finished() == []
        assert "broken" in store.registry.down_bots()
        store.close()
