"""End to end: no process the arena starts outlives it (even a bot that ignores SIGTERM, a helper that
left with setsid, an arena killed with SIGKILL), stopping many bots takes one grace period, and a bot's
log stays under its cap. The misbehaving bot is tests/bots/unruly_bot.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.ladder.bots.commands import BotStartError
from arena.ladder.bots.pool import LocalBots
from arena.ladder.store import BotEntry
from arena.sandbox.bubblewrap import Limits, Sandbox

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the guarantees need Linux (death signals, subreaper, /proc)"
)

UNRULY = Path(__file__).resolve().parents[3] / "bots" / "unruly_bot.py"


def unruly(*flags: str) -> BotEntry:
    """A registered command bot running unruly_bot.py with `flags`."""
    command = shlex.join(["python", str(UNRULY), "--port", "PORT", *flags]).replace("PORT", "{port}")
    return BotEntry("unruly", None, command, 1500.0, None)


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has finished)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def descendants(pid: int) -> set[int]:
    """Every process below `pid` now."""
    found: set[int] = set()
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for child in map(int, children.read_text().split()):
                found |= {child, *descendants(child)}
    return found


def read_pid(path: Path) -> int:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return int(path.read_text())


def wait_gone(pids: set[int], seconds: float) -> set[int]:
    """The processes of `pids` still alive after waiting up to `seconds` for them to end."""
    deadline = time.monotonic() + seconds
    while (left := {pid for pid in pids if alive(pid)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def leftovers() -> Iterator[set[int]]:
    """Pids a failing test must not leave running: killed at the end if they are still unruly bots."""
    pids: set[int] = set()
    yield pids
    for pid in pids:
        with contextlib.suppress(OSError):
            if alive(pid) and b"unruly_bot" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)


ARENA = """
import asyncio, sys
from pathlib import Path
from arena.ladder.bots.pool import LocalBots
from fiftysix.logs import configure_logging
from arena.ladder.store import BotEntry

async def main() -> None:
    configure_logging(json_lines=True)
    bots = LocalBots(Path(sys.argv[1]), grace=1.0)
    await bots.acquire(BotEntry("unruly", None, sys.argv[2], 1500.0, None), 1)
    print("ready", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def test_a_sigkilled_arena_leaves_no_process_behind(tmp_path: Path, leftovers: set[int]) -> None:
    escapee_file = tmp_path / "escapee.pid"
    bot = unruly("--ignore-term", "--fork-escapee", str(escapee_file))
    assert bot.command is not None
    arena = subprocess.Popen(
        [sys.executable, "-c", ARENA, str(tmp_path / "logs"), bot.command],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert arena.stdout is not None
        assert arena.stdout.readline() == "ready\n"
        escapee = read_pid(escapee_file)
        started = descendants(arena.pid)
        leftovers.update(started)
        assert escapee in started
        assert len(started) >= 2, "the bot and its escapee at least"
        os.kill(arena.pid, signal.SIGKILL)
    finally:
        arena.kill()
        arena.wait()
    # The bot ignores SIGTERM and the escapee left its session: both must die within a grace period.
    assert wait_gone(started, 15) == set()


def test_stop_all_stops_an_escapee_too(tmp_path: Path, leftovers: set[int]) -> None:
    escapee_file = tmp_path / "escapee.pid"

    async def run() -> int:
        bots = LocalBots(tmp_path, grace=1.0)
        try:
            await bots.acquire(unruly("--fork-escapee", str(escapee_file)), 1)
            escapee = read_pid(escapee_file)
            leftovers.add(escapee)
            assert alive(escapee)
        finally:
            await bots.stop_all()
        return escapee

    # Gone as soon as stop_all returns: the supervisor reaps it before it exits.
    assert not alive(asyncio.run(run()))


def test_arena_bots_add_leaves_no_escapee(tmp_path: Path, leftovers: set[int]) -> None:
    escapee_file = tmp_path / "escapee.pid"
    bot = unruly("--fork-escapee", str(escapee_file))
    assert bot.command is not None
    db = tmp_path / "ladder.db"
    added = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "bots",
            "--db",
            str(db),
            "add",
            "unruly",
            "--command",
            bot.command,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    escapee = read_pid(escapee_file)
    leftovers.add(escapee)
    assert not alive(escapee)


def test_stopping_stubborn_bots_takes_one_grace_period(tmp_path: Path, leftovers: set[int]) -> None:
    grace = 2.0
    before = descendants(os.getpid())

    async def run() -> tuple[set[int], float]:
        bots = LocalBots(tmp_path, grace=grace)
        started = set[int]()
        try:
            await bots.acquire(unruly("--ignore-term"), 4)
            started = descendants(os.getpid()) - before
            leftovers.update(started)
        finally:
            stopping = time.monotonic()
            await bots.stop_all()
        return started, time.monotonic() - stopping

    started, seconds = asyncio.run(run())
    # Each bot ignores SIGTERM, so it takes the whole grace period; one after the other would take four.
    assert grace <= seconds < 2 * grace
    assert len(started) >= 4
    assert not {pid for pid in started if alive(pid)}


def test_a_chatty_bot_log_keeps_its_head_and_its_tail_under_the_cap(tmp_path: Path) -> None:
    limit = 64 * 1024
    whole = Sandbox(Limits(output_bytes=64 * 1024 * 1024))  # nothing dropped per match: the log's cap

    async def run() -> None:
        bots = LocalBots(tmp_path, grace=1.0, log_limit_bytes=limit, run="run", sandbox=whole)
        try:
            await bots.acquire(unruly("--chatty"), 1)
        finally:
            await bots.stop_all()

    asyncio.run(run())
    text = (tmp_path / "run" / "unruly-1.log").read_bytes()
    assert len(text) < limit + 1024
    assert b"unruly: first line\n" in text[: limit // 2]
    assert b"unruly: last line\n" in text[-limit // 2 :]
    dropped = re.search(rb"\n\[arena\] (\d+) bytes of output dropped here\n", text)
    assert dropped is not None
    assert int(dropped.group(1)) > 8_000_000


def test_a_bot_that_never_answers_fails_to_start_and_leaves_nothing(
    tmp_path: Path, leftovers: set[int]
) -> None:
    escapee_file = tmp_path / "escapee.pid"
    before = descendants(os.getpid())

    async def run() -> str:
        bots = LocalBots(tmp_path, startup_timeout=2.0, grace=1.0, run="run")
        with pytest.raises(BotStartError) as raised:
            await bots.acquire(unruly("--never-answer", "--fork-escapee", str(escapee_file)), 1)
        return str(raised.value)

    message = asyncio.run(run())
    assert "did not start" in message
    assert str(tmp_path / "run" / "unruly-1.log") in message
    assert "\n" not in message
    escapee = read_pid(escapee_file)
    leftovers.add(escapee)
    assert not alive(escapee)
    assert descendants(os.getpid()) - before == set()


def test_a_bot_that_dies_takes_its_escapee_along_and_is_restarted(
    tmp_path: Path, leftovers: set[int]
) -> None:
    escapee_file = tmp_path / "escapee.pid"
    bot = unruly("--fork-escapee", str(escapee_file))

    async def run() -> None:
        bots = LocalBots(tmp_path, grace=1.0)
        try:
            [first] = await bots.acquire(bot, 1)
            bots.release([first])
            escapee = read_pid(escapee_file)
            leftovers.add(escapee)
            os.kill(parent(escapee), signal.SIGKILL)
            deadline = time.monotonic() + 15
            while alive(escapee) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert not alive(escapee)
            # Once the arena has seen its supervisor exit, the next match gets a new process.
            while (second := (await bots.acquire(bot, 1))[0]) == first:
                bots.release([second])
                assert time.monotonic() < deadline, "the dead bot was never replaced"
                await asyncio.sleep(0.05)
            leftovers.add(read_pid(escapee_file))
        finally:
            await bots.stop_all()

    asyncio.run(run())
