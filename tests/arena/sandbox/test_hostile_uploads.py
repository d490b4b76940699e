"""Hostile uploaded bots in the sandbox (issue 15): a bot that tries to reach the network, read
/etc/shadow, the ladder's database or another bot's files, write outside /tmp, find and kill other
processes, fork-bomb, allocate 8 GB or print 1 GB is contained; its match ends with a typed fault of its
own; a match played at the same time and the next match go on without a fault; nothing of the host
changed, and no process is left.

The sandbox needs bubblewrap and user namespaces: where they are missing these tests are skipped, except
under CI (CI set), where they fail, so that CI never skips them silently. Small limits keep them quick.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
from sandbox_support import require_bubblewrap

from arena.ladder.bots import Launch, LocalBots
from arena.ladder.store import BotEntry
from arena.runner import BotAddress, MatchOutcome, MatchSettings, run_match, seats_for_teams
from arena.sandbox import bubblewrap
from arena.sandbox.bubblewrap import Limits, Sandbox
from arena.sandbox.bundles import store_bundle
from fiftysix.engine import MatchRules
from fiftysix.wire import FaultCause, TimeControl

ROOT: Final = Path(__file__).resolve().parents[3]
MIB: Final = 1024 * 1024
SANDBOX: Final = Sandbox(
    Limits(memory_bytes=512 * MIB, cpu_seconds=30, processes=32, tmp_bytes=8 * MIB, output_bytes=64 * 1024)
)
RULES: Final = MatchRules(4, deal_cap=1)
TIME: Final = TimeControl(decision_ms=2000, bank_ms=0)


@dataclass(frozen=True)
class Host:
    """What the tests put on the host for bots to go after, and the bundles."""

    folder: Path
    attacker: Path
    random: Path
    database: Path
    listener: socket.socket

    def fingerprint(self) -> dict[str, str]:
        """Every file under the host folder (bundles and logs aside) with its content's hash."""
        return {
            str(path.relative_to(self.folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(self.folder.rglob("*"))
            if path.is_file() and "logs" not in path.parts
        }


def _bundle(source: Path, archive: Path, bot: Path, marker: str) -> None:
    """A bundle holding the SDK and the game (what a Python bot ships), the sample bots, `bot` as bot.py
    and a marker that makes its hash its own."""
    with tarfile.open(archive, "w:gz") as tar:
        for package in ("sdk", "fiftysix", "sample_bots"):
            tar.add(
                ROOT / package,
                package,
                filter=lambda info: (
                    None if "__pycache__" in info.name or "node_modules" in info.name else info
                ),
            )
        tar.add(bot, "bot.py")
        marker_file = source / f"{marker}.txt"
        marker_file.write_text(marker)
        tar.add(marker_file, "marker.txt")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    require_bubblewrap()
    folder = tmp_path_factory.mktemp("host")
    work = tmp_path_factory.mktemp("work")
    _bundle(work, work / "attacker.tar.gz", ROOT / "tests/bots/sandbox_bot.py", "attacker")
    _bundle(work, work / "random.tar.gz", ROOT / "sample_bots/random_bot.py", "random")
    attacker = store_bundle(work / "attacker.tar.gz", folder / "bundles").folder
    random_bot = store_bundle(work / "random.tar.gz", folder / "bundles").folder
    database = folder / "arena.db"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE secrets (token TEXT)")
        db.execute("INSERT INTO secrets VALUES ('the host token')")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    yield Host(folder, attacker, random_bot, database, listener)
    listener.close()


async def _play(
    local: LocalBots, launches: dict[str, Launch], names: tuple[str, str], seed: int
) -> MatchOutcome:
    """One match between two uploaded bots, as the ladder plays it: processes taken from the pool, kept
    channels, faulty processes forgotten, all given back."""
    taken: list[str] = []
    teams = []
    try:
        for name in names:
            where = await local.acquire(BotEntry(name, None, launches[name].command, 1500.0, None), 2)
            taken.extend(where)
            teams.append(BotAddress(name, ",".join(where)))
        seats = seats_for_teams(RULES, teams)
        settings = MatchSettings(RULES, seed, TIME, connect_timeout_s=20.0)
        outcome = await run_match(
            settings, seats, described=local.described(taken), channels=local.channels(taken)
        )
        local.forget_channels([seats[fault.seat].address for fault in outcome.faults])
        return outcome
    finally:
        local.release(taken)


def _sandboxed_processes() -> list[int]:
    """Processes running as one of the sandbox's user ids (an arena running as root), but those of another
    pytest-xdist worker's tests, which may run sandboxed bots at the same time: whatever this test's arena
    left, and whatever escaped any arena's tree, is found."""
    found = []
    others = _other_workers()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
            if uid in bubblewrap.SANDBOX_UIDS and not _of_another_worker(int(entry.name), others):
                found.append(int(entry.name))
    return found


def _other_workers() -> set[int]:
    """The other pytest-xdist workers (this process's siblings), when this one is a worker."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return set()
    siblings: set[int] = set()
    for children in Path(f"/proc/{os.getppid()}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            siblings.update(map(int, children.read_text().split()))
    return siblings - {os.getpid()}


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _of_another_worker(pid: int, workers: set[int]) -> bool:
    """Whether `pid` runs below one of the other `workers`, or has ended since it was listed."""
    if not workers:
        return False
    for _ in range(10):  # an ancestor that ends mid-walk hands its children to a reaper: walk again
        try:
            ancestor = _parent(pid)
        except OSError:
            return True
        with contextlib.suppress(OSError):
            while ancestor > 1 and ancestor not in workers:
                ancestor = _parent(ancestor)
            return ancestor in workers
    return False


DISCONNECTED: Final = FaultCause.DISCONNECTED
ATTACKS: Final = [
    # attack, what it goes after, the fault, what the bot met (its error, in the fault's detail)
    ("network", "listener", DISCONNECTED, "no network"),
    ("read", "/etc/shadow", DISCONNECTED, "FileNotFoundError"),
    ("read", "database", DISCONNECTED, "FileNotFoundError"),
    ("read", "other bot", DISCONNECTED, "FileNotFoundError"),
    ("write", "host folder", DISCONNECTED, "nothing written"),
    ("processes", "random_bot", DISCONNECTED, ""),  # its kill(-1) may take its own sandbox down first
    ("fork_bomb", "", FaultCause.TIMEOUT, "no move within"),
    ("memory", "", DISCONNECTED, "MemoryError"),
    ("output", "", DISCONNECTED, "printed 1 GB"),
]


@pytest.mark.parametrize(
    ("attack", "aim", "cause", "met"),
    ATTACKS,
    ids=[f"{attack}-{aim}".strip("-") for attack, aim, *_ in ATTACKS],
)
def test_a_hostile_bot_is_contained_and_the_arena_goes_on(
    host: Host, attack: str, aim: str, cause: FaultCause, met: str
) -> None:
    target = {
        "listener": f"127.0.0.1:{host.listener.getsockname()[1]}",
        "/etc/shadow": "/etc/shadow",
        "database": str(host.database),
        "other bot": str(host.random / "bot.py"),
        "host folder": str(host.folder),
        "random_bot": "random_bot",
        "": "",
    }[aim]
    command = f"python bot.py --attack {attack} --target {shlex.quote(target)} --socket {{socket}}"
    random_command = "python -m sample_bots.random_bot --socket {socket}"
    launches = {
        "attacker": Launch(command, sandboxed=True, folder=host.attacker),
        "random": Launch(random_command, sandboxed=True, folder=host.random),
        "random-b": Launch(random_command, sandboxed=True, folder=host.random),
        "random-c": Launch(random_command, sandboxed=True, folder=host.random),
    }
    before = host.fingerprint()
    logs = host.folder / "logs" / attack / aim.replace(" ", "-").replace("/", "")

    async def scene() -> tuple[MatchOutcome, MatchOutcome, MatchOutcome]:
        local = LocalBots(logs, grace=1.0, sandbox=SANDBOX, launch_of=lambda bot: launches[bot.name])
        try:
            hostile, beside = await asyncio.gather(
                _play(local, launches, ("attacker", "random"), seed=1),
                _play(local, launches, ("random-b", "random-c"), seed=2),
            )
            after = await _play(local, launches, ("random", "random-b"), seed=3)
            return hostile, beside, after
        finally:
            await local.stop_all()

    hostile, beside, after = asyncio.run(scene())

    attacker_seats = set(RULES.seats_of(0))
    assert hostile.faults, f"the {attack} attack was not stopped: the bot played on"
    assert {fault.seat for fault in hostile.faults} <= attacker_seats
    assert [fault.cause for fault in hostile.faults] == [cause]
    assert met in hostile.faults[0].detail
    assert hostile.ranking[1] == 1  # the other team wins
    assert beside.faults == []
    assert after.faults == []
    with pytest.raises(BlockingIOError):
        host.listener.accept()
    assert host.fingerprint() == before
    assert not any(path.name == "evil" for path in host.folder.rglob("*"))
    assert _sandboxed_processes() == []
    if attack == "output":
        texts = [log.read_text(errors="replace") for log in logs.rglob("attacker-*.log")]
        assert all(len(text) < SANDBOX.limits.output_bytes + 4096 for text in texts)
        assert any("bytes of output dropped" in text for text in texts)


ARENA: Final = """
import asyncio, sys
from pathlib import Path
from arena.ladder.store import BotEntry
from arena.ladder.bots import Launch, LocalBots

async def main() -> None:
    launch = Launch(sys.argv[2], sandboxed=True, folder=Path(sys.argv[3]))
    bots = LocalBots(Path(sys.argv[1]), grace=1.0, launch_of=lambda bot: launch)
    await bots.acquire(BotEntry("random", None, launch.command, 1500.0, None), 2)
    print("ready", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            for child in map(int, children.read_text().split()):
                found |= {child, *_descendants(child)}
        except OSError:
            pass
    return found


def test_sandboxed_bots_die_with_a_sigkilled_arena(host: Host) -> None:
    command = "python -m sample_bots.random_bot --socket {socket}"
    arena = subprocess.Popen(
        [sys.executable, "-c", ARENA, str(host.folder / "logs" / "killed"), command, str(host.random)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert arena.stdout is not None
        while arena.stdout.readline() not in ("ready\n", ""):
            pass  # its log lines
        started = _descendants(arena.pid)
        assert len(started) >= 8  # two supervisors, each with bwrap, its init and the bot
        os.kill(arena.pid, signal.SIGKILL)
    finally:
        arena.kill()
        arena.wait()
    deadline = time.monotonic() + 15
    while (left := {pid for pid in started if Path(f"/proc/{pid}").exists()}) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == set()
