"""End to end: the ladder with the sample bots started by the arena, a SIGKILL mid-run, the stored
matches as `arena ladder matches --json` shows them, and the `arena bots` commands' errors."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from arena.cli import main
from arena.ladder import Ladder, LadderSettings
from arena.ladder.bots import LocalBots, free_port
from arena.ladder.store import LadderStore, relations
from fiftysix.record import from_json
from fiftysix.replay import replay
from fiftysix.wire import FaultCause, FaultRecord
from sample_bots.random_bot import RandomBot
from sdk import start
from tests.arena.ladder.match_support import save_match
from tests.cli_in_process import run_here

SAMPLES = {
    "random": "python -m sample_bots.random_bot --port {port}",
    "rules": "python -m sample_bots.rule_bot --port {port}",
}


def arena(*args: str, db: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `arena GROUP --db DB ACTION ...` as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", args[0], "--db", str(db), *args[1:]],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_ladder_ranks_the_rule_bot_above_the_random_bot(tmp_path: Path) -> None:
    db = tmp_path / "ladder.db"
    run = arena(
        "ladder", "run", "--sample-bots", "--matches", "12", "--concurrency", "2", "--seed", "3", db=db
    )
    assert run.returncode == 0, run.stderr
    assert "Played 12 matches (6 sets rated, 0 faults)" in run.stdout
    assert "rank" in run.stdout
    assert "12/12 matches" in run.stderr
    # One process per seat: two seats a team, two matches at a time, so two to four processes a bot.
    [run] = Path(f"{db}-logs").iterdir()  # the runner's own folder
    logs = sorted(path.name for path in run.iterdir())
    for bot in ("random", "rules"):
        assert 2 <= sum(name.startswith(f"{bot}-") for name in logs) <= 4, logs
    shown = arena("ladder", "show", "--json", db=db)
    assert shown.returncode == 0, shown.stderr
    standings = json.loads(shown.stdout)
    assert [line["bot"] for line in standings] == ["rules", "random"]
    assert standings[0]["elo"] > 1500 > standings[1]["elo"]
    assert all(line["matches"] == 12 for line in standings)
    assert standings[0]["wins"] > 9
    assert standings[0]["interval"] is not None
    store = LadderStore(db)
    try:
        for match in store.matches.finished():
            assert replay(from_json(store.browse.match_record(match.id))).complete
        # Command bots, started by the arena: every set is isolated.
        assert store.file._conn.scalars(select(relations.sets.c.isolated)).all() == [1] * 6
    finally:
        store.close()
    listed = arena("ladder", "matches", "--bot", "rules", "--limit", "50", "--json", db=db)
    matches = json.loads(listed.stdout)
    assert len(matches) == 12
    record_file = tmp_path / "newest.json"
    exported = arena("ladder", "record", matches[0]["id"], "--output", str(record_file), db=db)
    assert exported.returncode == 0, exported.stderr
    replayed = subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", str(record_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert replayed.returncode == 0, replayed.stderr
    missing = arena("ladder", "record", "no-such-match", db=db)
    assert missing.returncode == 1
    assert "no match" in missing.stderr


def test_concurrent_matches_in_process(tmp_path: Path) -> None:
    server = start(RandomBot)
    store = LadderStore(tmp_path / "ladder.db")
    try:
        for name in ("one", "two", "three"):
            store.registry.add_bot(name, address=f"127.0.0.1:{server.port}")
        ladder = Ladder(
            store, LadderSettings(matches=9, concurrency=4, players=6, seed=2), LocalBots(tmp_path)
        )
        report = asyncio.run(ladder.run())
        # 6-player pairs: three bots a set, three rotations a set; 9 matches are 3 whole sets.
        assert report.matches == 9
        assert report.sets_rated == 3
        assert store.sets.unfinished_sets() == []
        assert sum(len(store.matches.finished(s)) for s in range(1, 4)) == 9
        assert store.file._conn.scalars(select(relations.sets.c.isolated)).all() == [0] * 3  # remote bots
        ratings = [bot.rating for bot in store.registry.bots()]
        assert sum(ratings) == pytest.approx(1500 * 3)
    finally:
        store.close()
        server.stop(0)


def test_ladder_matches_json_shows_the_faults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With their details once the set is over; before that (its other rotation is still to replay the
    deals, and a detail may name cards), their causes only, and `ladder record` refuses the record."""
    db = tmp_path / "ladder.db"
    store = LadderStore(db)
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    fault = FaultRecord(seat=1, team=1, cause=FaultCause.ILLEGAL_MOVE, detail="legal: JD KD", deal_number=2)
    save_match(store, "m1", duplicate, 0, "forfeit", [1, 2], [fault], {}, 3, 0.5)
    store.close()
    assert main(["ladder", "--db", str(db), "matches", "--json"]) == 0
    [shown] = json.loads(capsys.readouterr().out)
    assert shown["faults"] == [{**fault.to_json(), "detail": None}]
    assert shown["team_bots"] == ["a", "b"]
    assert shown["set_over"] is False
    assert main(["ladder", "--db", str(db), "record", "m1"]) == 1
    refused = capsys.readouterr()
    assert refused.out == ""
    assert "match m1 is held back until set 1 is over" in refused.err
    store = LadderStore(db)
    store.sets.void_set(duplicate.id, "a bot was removed")
    store.close()
    assert main(["ladder", "--db", str(db), "matches", "--json"]) == 0
    [shown] = json.loads(capsys.readouterr().out)
    assert shown["faults"] == [fault.to_json()]
    assert shown["set_over"] is True
    assert main(["ladder", "--db", str(db), "record", "m1"]) == 0
    assert json.loads(capsys.readouterr().out) == {}


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc to find the bot processes")
def test_sigkill_loses_no_finished_match_and_the_next_run_goes_on(tmp_path: Path) -> None:
    db = tmp_path / "ladder.db"
    ladder = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "ladder",
            "--db",
            str(db),
            "run",
            "--sample-bots",
            "--matches",
            "500",
            "--lease",
            "2s",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        finished = 0
        while time.monotonic() < deadline and finished < 5:
            time.sleep(0.2)
            if db.exists():
                store = LadderStore(db)
                finished = len(store.matches.finished())
                store.close()
        assert finished >= 5, "the ladder did not get going"
        bots = _children(ladder.pid)
        os.kill(ladder.pid, signal.SIGKILL)
        killed = time.monotonic()
    finally:
        ladder.wait(10)
    # The bots the arena started die with it.
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in bots) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in bots)

    store = LadderStore(db)
    before = {match.id for match in store.matches.finished()}
    assert len(before) >= finished
    for match_id in before:
        assert replay(from_json(store.browse.match_record(match_id))).complete
    store.close()

    # The set in play when it was killed stays its own until its lease (2 s) expires: then it is free.
    time.sleep(max(0.0, killed + 2.5 - time.monotonic()))
    again = arena("ladder", "run", "--matches", "2", db=db)
    assert again.returncode == 0, again.stderr
    store = LadderStore(db)
    try:
        after = store.matches.finished()
        assert before <= {match.id for match in after}
        assert store.sets.unfinished_sets() == []
        played_before = [match.set_id for match in store.matches.finished() if match.id in before]
        for set_id in {match.set_id for match in after}:
            reason = store.sets.void_reason(set_id)
            if reason is None:
                assert len(store.matches.finished(set_id)) == 2
            else:
                # A set killed after its deals were shown live is never replayed: void, with what it had.
                assert reason == "interrupted after its deals were shown live"
                assert len(store.matches.finished(set_id)) == played_before.count(set_id) < 2
        # Every finished set was rated exactly once: the ratings add up to the starting total.
        assert sum(bot.rating for bot in store.registry.bots()) == pytest.approx(3000)
    finally:
        store.close()


def _descendants(pid: int) -> list[int]:
    found = []
    for child in _children(pid):
        found.extend([child, *_descendants(child)])
    return found


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc to find the bot processes")
def test_two_ctrl_c_stop_at_once_with_the_standings_and_no_traceback(tmp_path: Path) -> None:
    """The second Ctrl-C cancels the matches in progress: exit status 130 after the report and the
    standings of what finished, no traceback, no bot process left, nothing half stored."""
    db = tmp_path / "ladder.db"
    command = ["ladder", "run", "--db", str(db), "--sample-bots", "--forever", "--concurrency", "2"]
    ladder = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        finished = 0
        while time.monotonic() < deadline and finished < 1:
            time.sleep(0.2)
            if db.exists():
                store = LadderStore(db)
                finished = len(store.matches.finished())
                store.close()
        assert finished >= 1, "the ladder did not get going"
        started = _descendants(ladder.pid)
        assert started, "no bot process found"
        ladder.send_signal(signal.SIGINT)
        time.sleep(0.05)
        ladder.send_signal(signal.SIGINT)
        stdout, stderr = ladder.communicate(timeout=30)
    finally:
        if ladder.poll() is None:
            ladder.kill()
            ladder.wait(10)
    assert ladder.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "Stopping now" in stderr
    assert "Played " in stdout
    assert "rank  bot" in stdout
    assert "rules" in stdout.split("rank  bot")[1]
    left = [pid for pid in started if _alive(pid)]
    assert left == [], [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in left]
    store = LadderStore(db)
    try:
        stored = store.matches.finished()
        assert len(stored) >= finished
        for match in stored:
            assert replay(from_json(store.browse.match_record(match.id))).complete
        # Every finished set was rated exactly once; unfinished ones wait for the next run.
        assert sum(bot.rating for bot in store.registry.bots()) == pytest.approx(3000)
    finally:
        store.close()


def test_bots_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def arena(*args: str, db: Path) -> subprocess.CompletedProcess[str]:  # in this process: see run_here
        return run_here(capsys, args[0], "--db", str(db), *args[1:])

    db = tmp_path / "ladder.db"
    server = start(RandomBot)
    try:
        added = arena("bots", "add", "alpha", f"127.0.0.1:{server.port}", db=db)
        assert added.returncode == 0, added.stderr
        duplicate = arena("bots", "add", "alpha", f"127.0.0.1:{server.port}", db=db)
        assert duplicate.returncode == 1
        assert "already registered" in duplicate.stderr
    finally:
        server.stop(0)
    unreachable = arena("bots", "add", "ghost", f"127.0.0.1:{free_port()}", db=db)
    assert unreachable.returncode == 1
    assert "cannot reach" in unreachable.stderr
    malformed = arena("bots", "add", "bad", "localhost", db=db)
    assert malformed.returncode == 2
    assert "HOST:PORT" in malformed.stderr
    no_port = arena("bots", "add", "cmd", "--command", "python -m sample_bots.random_bot", db=db)
    assert no_port.returncode == 2
    assert "{port}" in no_port.stderr
    bad_name = arena("bots", "add", "bad name", "127.0.0.1:5", db=db)
    assert bad_name.returncode == 2
    command = arena("bots", "add", "local", "--command", SAMPLES["random"], db=db)
    assert command.returncode == 0, command.stderr
    broken = arena("bots", "add", "broken", "--command", "python -c 'raise SystemExit(3)' {port}", db=db)
    assert broken.returncode == 1
    assert "did not start" in broken.stdout  # its check's report
    assert "broken failed the check" in broken.stderr
    listed = arena("bots", "list", "--json", db=db)
    assert [bot["name"] for bot in json.loads(listed.stdout)] == ["alpha", "local"]
    updated = arena("bots", "update", "alpha", "127.0.0.1:7", "--no-check", db=db)
    assert updated.returncode == 0, updated.stderr
    removed = arena("bots", "remove", "alpha", db=db)
    assert removed.returncode == 0
    missing = arena("bots", "remove", "alpha", db=db)
    assert missing.returncode == 1
    assert "no bot named" in missing.stderr
    too_few = arena("ladder", "run", "--matches", "2", db=db)
    assert too_few.returncode == 1
    assert "needs at least 2 bots" in too_few.stderr
