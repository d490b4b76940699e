"""Fair to bots: a bot the host cannot reach or start when a set starts is not rated for that set (the
set is put back and tried again later), is marked down after `down_after` such failures in a row, is
shown down, skipped by pairing, and comes back when it answers again."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from arena.cli import listings
from arena.ladder import Ladder, LadderSettings, ladder_standings
from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore
from fiftysix.wire import TimeControl
from sample_bots.random_bot import RandomBot
from sdk import start

FAST = TimeControl(decision_ms=500, bank_ms=500)


def quick(matches: int, seed: int) -> LadderSettings:
    """Short matches, a short check, short waits: what the tests wait for comes fast."""
    return LadderSettings(
        matches=matches, deal_cap=2, time_control=FAST, seed=seed,
        check_timeout_s=0.3, retry_s=0.5, down_after=3, down_recheck_s=0.2,
    )  # fmt: skip


def test_a_bot_that_does_not_answer_is_not_rated_goes_down_and_comes_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = [start(RandomBot) for _ in range(3)]
    store = LadderStore(tmp_path / "ladder.db")
    for name, server in zip("abc", servers, strict=True):
        store.registry.add_bot(name, address=f"127.0.0.1:{server.port}")
    port_of_c = servers[2].port
    servers[2].stop(0)  # c's server is down before its set starts
    waiting = store.sets.create_set(4, "pairs", 2, 5, ["a", "c"], isolated=False)  # left by an earlier run
    try:
        settings = quick(8, 3)
        with capture_logs() as logs:
            report = asyncio.run(Ladder(store, settings, LocalBots(tmp_path)).run())

        # Nothing of c was stored nor rated; its set waits, neither void nor rated.
        assert all("c" not in match.bot_ranks for match in store.matches.finished())
        assert store.matches.finished(waiting.id) == []
        assert waiting.id not in store.sets.rated_sets()
        assert store.sets.void_reason(waiting.id) is None
        assert store.registry.bot("c").rating == 1500
        events = sqlite3.connect(store.path).execute("SELECT DISTINCT bot FROM rating_events").fetchall()
        assert sorted(bot for (bot,) in events) == ["a", "b"]
        assert sum(bot.rating for bot in store.registry.bots()) == pytest.approx(3 * 1500)  # a, b only moved
        assert all(not match.faults for match in store.matches.finished())  # nobody forfeited
        assert report.matches >= 8
        postponed = [entry for entry in logs if entry["event"] == "set_postponed"]
        assert len(postponed) == 3
        assert all(entry["bots"] == ["c"] for entry in postponed)
        assert report.sets_postponed == 3
        # Down after three in a row: skipped by pairing from then on.
        assert [name for name, _ in report.bots_down] == ["c"]
        assert "not reached 3 times in a row" in report.bots_down[0][1]
        assert list(store.registry.down_bots()) == ["c"]
        assert store.registry.bot("c").probation is None  # the host's failure, not the bot's

        # Shown down: the standings (text and JSON) and the list of bots.
        [line] = [line for line in ladder_standings(store) if line.bot == "c"]
        assert line.down_since is not None
        assert line.probation is None
        assert any(
            row.split()[1:3] == ["c", "(down)"] for row in listings.format_standings(ladder_standings(store))
        )
        capsys.readouterr()
        listings.print_standings(store, as_json=True)
        shown = {line["bot"]: line for line in json.loads(capsys.readouterr().out)}
        assert (shown["c"]["down"], shown["a"]["down"]) == (True, False)
        listings.print_standings(store, as_json=False)
        assert "c is down since" in capsys.readouterr().out
        listings.print_bots(store, as_json=True)
        listed = {bot["name"]: bot for bot in json.loads(capsys.readouterr().out)}
        assert (listed["c"]["down"], listed["b"]["down"]) == (True, False)
        listings.print_bots(store, as_json=False)
        assert "down since" in capsys.readouterr().out

        # It answers again: the next run finds it up, and plays and rates the set it was not rated for.
        servers[2] = start(RandomBot, port=port_of_c)
        settings.matches = 2
        again = asyncio.run(Ladder(store, settings, LocalBots(tmp_path)).run())
        assert again.bots_back == ["c"]
        assert store.registry.down_bots() == {}
        assert again.sets_resumed == 1
        assert waiting.id in store.sets.rated_sets()
        assert len(store.matches.finished(waiting.id)) == 2
    finally:
        for server in servers:
            server.stop(0)
        store.close()


def test_a_command_that_does_not_start_is_not_rated_and_goes_down(tmp_path: Path) -> None:
    servers = [start(RandomBot) for _ in range(2)]
    store = LadderStore(tmp_path / "ladder.db")
    for name, server in zip("ab", servers, strict=True):
        store.registry.add_bot(name, address=f"127.0.0.1:{server.port}")
    store.registry.add_bot("no-start", command="python -c 'import sys; sys.exit(3)' {port}")
    try:
        settings = quick(6, 8)
        report = asyncio.run(Ladder(store, settings, LocalBots(tmp_path)).run())
        assert [name for name, _ in report.bots_down] == ["no-start"]
        assert "did not start" in report.bots_down[0][1]
        assert report.sets_voided == 0  # put back, not made void
        assert report.probations == []
        assert all("no-start" not in match.bot_ranks for match in store.matches.finished())
        assert store.registry.bot("no-start").rating == 1500
        assert list(store.registry.down_bots()) == ["no-start"]
    finally:
        for server in servers:
            server.stop(0)
        store.close()


def test_a_down_bot_is_rechecked_during_a_run(tmp_path: Path) -> None:
    """A run that goes on (here: until its matches are played) checks the down bots every
    `down_recheck_s` and takes them back when they answer."""
    servers = [start(RandomBot) for _ in range(2)]
    store = LadderStore(tmp_path / "ladder.db")
    for name, server in zip("ab", servers, strict=True):
        store.registry.add_bot(name, address=f"127.0.0.1:{server.port}")
    port_of_b = servers[1].port
    servers[1].stop(0)
    store.registry.record_host_failure("b", 1)
    assert list(store.registry.down_bots()) == ["b"]
    try:
        settings = quick(2, 8)
        ladder = Ladder(store, settings, LocalBots(tmp_path))

        async def bring_back_then_run() -> None:
            await ladder.recheck_down_bots()  # still down: nothing answers
            assert list(store.registry.down_bots()) == ["b"]
            servers[1] = start(RandomBot, port=port_of_b)
            await ladder.run()

        asyncio.run(bring_back_then_run())
        assert store.registry.down_bots() == {}
        assert ladder.report.bots_back == ["b"]
        assert ladder.report.matches == 2
    finally:
        for server in servers:
            server.stop(0)
        store.close()
