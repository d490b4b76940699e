"""Nothing one sandboxed process writes reaches another (the fair-play issue): not a later process of the
same uploaded bot, nor one running beside it, nor a process of another bot, so that no process can pass
on what it saw in a match. The prober is tests/bots/note_bot.py: each process leaves a note through every
channel it can think of and looks for the others' (see its docstring for the list), and logs what it
found (its socket folder is in its own /tmp, which goes with it).

Through LocalBots, the way the arena runs here (as root: a user id per process; as an ordinary user: a user
namespace); and, when the tests run as root, the prober alone in sandboxes of both ways, the ordinary way
as `nobody`, so that both are tested either way. Skipped where bubblewrap cannot run, except under CI.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from sandbox_support import python_only, require_bubblewrap

from arena.ladder.bots import Launch, LocalBots
from arena.ladder.store import BotEntry
from arena.sandbox import bubblewrap
from arena.sandbox.bubblewrap import Limits, Sandbox
from arena.sandbox.bundles import store_bundle

ROOT: Final = Path(__file__).resolve().parents[3]
NOTE_BOT: Final = ROOT / "tests/bots/note_bot.py"
MIB: Final = 1024 * 1024
SANDBOX: Final = Sandbox(Limits(memory_bytes=512 * MIB, cpu_seconds=60, processes=32, tmp_bytes=8 * MIB))
COMMAND: Final = "python bot.py --socket {socket}"
SYSTEM_PYTHON: Final = Path("/usr/bin/python3")
NOBODY: Final = 65534
WAIT_SECONDS: Final = 60.0

WRITABLE_FOLDERS: Final = {"/tmp", bubblewrap.SOCKET_FOLDER}
"""Where a sandboxed process may write: its own /tmp and its socket folder in it."""
NAMESPACED_FILES: Final = {
    # A pseudo-terminal of its own /dev/pts.
    "/dev/ptmx",
    "/dev/pts/ptmx",
    # Settings of its own IPC namespace.
    "/proc/sys/fs/mqueue/msg_default",
    "/proc/sys/fs/mqueue/msg_max",
    "/proc/sys/fs/mqueue/msgsize_default",
    "/proc/sys/fs/mqueue/msgsize_max",
    "/proc/sys/fs/mqueue/queues_max",
    "/proc/sys/kernel/auto_msgmni",
    "/proc/sys/kernel/msgmax",
    "/proc/sys/kernel/msgmnb",
    "/proc/sys/kernel/msgmni",
    "/proc/sys/kernel/sem",
    "/proc/sys/kernel/shm_rmid_forced",
    "/proc/sys/kernel/shmall",
    "/proc/sys/kernel/shmmax",
    "/proc/sys/kernel/shmmni",
    # Settings of its own PID namespace.
    "/proc/sys/kernel/ns_last_pid",
    "/proc/sys/kernel/pid_max",
}
"""Files beyond the harmless devices that a sandboxed process may open for writing: its namespaces' own."""


def _events(log: Path) -> list[dict[str, Any]]:
    """The prober's lines in a log (the SDK's and the supervisor's are not JSON)."""
    if not log.exists():
        return []
    events = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith('{"event"'):
            events.append(json.loads(line))
    return events


def _noted_at(log: Path) -> float | None:
    noted = [event for event in _events(log) if event["event"] == "noted"]
    return noted[0]["at"] if noted else None


async def _looked_after_all_noted(running: list[Path], everyone: list[Path]) -> None:
    """Wait until each of `running` has looked once more after every process of `everyone` left its notes,
    so that each has met the notes of all the others that were there to meet."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        noted = [_noted_at(log) for log in everyone]
        if None not in noted:
            last = max(at for at in noted if at is not None)
            rounds = [[e for e in _events(log) if e["event"] == "looked"] for log in running]
            if all(any(event["started"] > last for event in events) for events in rounds):
                return
        assert time.monotonic() < deadline, f"the probers did not look in time: {running}"
        await asyncio.sleep(0.1)


async def _ended(log: Path) -> bool:
    """Whether the process of `log` ended (its supervisor notes it last), waited for."""
    deadline = time.monotonic() + WAIT_SECONDS
    while "[arena] the bot ended" not in log.read_text(errors="replace") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return "[arena] the bot ended" in log.read_text(errors="replace")


def _bundle(work: Path, name: str) -> Path:
    """The prober as an upload: the SDK and the game beside it, and a marker that makes its bundle its own."""
    archive, marker = work / f"{name}.tar.gz", work / f"{name}.txt"
    marker.write_text(name)
    with tarfile.open(archive, "w:gz") as tar:
        for package in ("sdk", "fiftysix"):
            tar.add(ROOT / package, package, filter=python_only)
        tar.add(NOTE_BOT, "bot.py")
        tar.add(marker, "marker.txt")
    return store_bundle(archive, work / "bundles").folder


def _assert_private(logs: list[Path]) -> None:
    """What every prober found: no note of another, and no channel it should not have had."""
    for log in logs:
        events = _events(log)
        assert events, f"{log.name} logged nothing: {log.read_text(errors='replace')[-2000:]}"
        noted, looked = events[0], [event for event in events if event["event"] == "looked"]
        assert noted["event"] == "noted"
        assert looked, f"{log.name} never looked"
        assert [event["found"] for event in (noted, looked[-1])] == [{}, {}], log.name
        assert set(noted["writable_folders"]) == WRITABLE_FOLDERS, log.name
        assert set(noted["writable_files"]) <= NAMESPACED_FILES, log.name
        assert noted["keyrings"] == []


def test_no_note_crosses_between_processes_the_arena_starts(tmp_path: Path) -> None:
    require_bubblewrap()
    notes = _bundle(tmp_path, "note")
    other = _bundle(tmp_path, "other")
    launches = {
        "note": Launch(COMMAND, sandboxed=True, folder=notes),
        "other": Launch(COMMAND, sandboxed=True, folder=other),
    }
    logs = tmp_path / "logs"

    def entry(name: str) -> BotEntry:
        return BotEntry(name, None, COMMAND, 1500.0, None)

    def log(name: str, number: int) -> Path:
        return logs / "run" / f"{name}-{number}.log"

    async def scene() -> list[Path]:
        local = LocalBots(
            logs,
            grace=1.0,
            idle_limit=0,
            sandbox=SANDBOX,
            launch_of=lambda bot: launches[bot.name],
            run="run",
        )
        try:
            # Two processes of one bot at once.
            first = await local.acquire(entry("note"), 2)
            together = [log("note", 1), log("note", 2)]
            await _looked_after_all_noted(together, together)
            # One more of it, and one of another bot, while they run.
            beside = await local.acquire(entry("note"), 1) + await local.acquire(entry("other"), 1)
            running = [*together, log("note", 3), log("other", 4)]
            await _looked_after_all_noted(running, running)
            # The first two stop.
            local.release(first)
            for stopped in together:
                assert await _ended(stopped), stopped
            # And one after them.
            after = await local.acquire(entry("note"), 1)
            everyone = [*running, log("note", 5)]
            await _looked_after_all_noted(everyone[2:], everyone)
            local.release([*beside, *after])
            return everyone
        finally:
            await local.stop_all()

    logs_written = asyncio.run(scene())
    _assert_private(logs_written)
    for log in logs_written:  # its output reaches its log through the supervisor: a pipe, not the file
        assert all(stream.startswith("pipe:") for stream in _events(log)[0]["streams"])


@pytest.fixture
def bot_folder() -> Iterator[Path]:
    """The prober's folder, which `nobody` can reach (pytest's own folders are root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="arena-private-test-"))
    base.chmod(0o755)
    folder = base / "bot"
    folder.mkdir(mode=0o755)
    shutil.copyfile(NOTE_BOT, folder / "bot.py")
    (folder / "bot.py").chmod(0o644)
    yield base
    subprocess.run(["rm", "-rf", "--", str(base)], check=False)


def _as_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


WAYS: Final[list[tuple[str, Callable[[], None] | None]]] = [("ordinary user", _as_nobody), ("root", None)]


@pytest.mark.parametrize(("way", "become"), WAYS, ids=[way for way, _ in WAYS])
def test_no_note_crosses_between_sandboxes_of_either_way(
    bot_folder: Path, way: str, become: Callable[[], None] | None
) -> None:
    """The prober without the SDK (any Python runs it), in sandboxes made as the arena makes them."""
    if os.geteuid() != 0:
        pytest.skip("the test through LocalBots runs the ordinary way already; the root way needs root")
    require_bubblewrap()
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no /usr/bin/python3 to run the prober with")
    bot = bot_folder / "bot"
    started: dict[Path, subprocess.Popen[bytes]] = {}

    def start(number: int) -> Path:
        log = bot_folder / f"{number}.log"
        uid = None if become is not None else bubblewrap.SANDBOX_UIDS[20 + number]
        probe = [str(SYSTEM_PYTHON), "bot.py", "--socket", bubblewrap.SOCKET_PATH, "--seconds", "600"]
        sandbox = Sandbox(SANDBOX.limits, share_arena_python=False)
        with bubblewrap.filter_descriptor() as filter_fd, log.open("wb") as output:
            started[log] = subprocess.Popen(
                bubblewrap.command_line(sandbox, probe, bot, uid, filter_fd=filter_fd),
                env=bubblewrap.ENVIRONMENT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=output,
                preexec_fn=become,
                pass_fds=(filter_fd,),
            )
        return log

    def stop(logs: list[Path]) -> None:
        for log in logs:
            started[log].terminate()  # bwrap, and with it the sandbox (--die-with-parent)
            started[log].wait(timeout=WAIT_SECONDS)

    async def scene() -> list[Path]:
        together = [start(1), start(2)]
        await _looked_after_all_noted(together, together)
        running = [*together, start(3)]
        await _looked_after_all_noted(running, running)
        stop(running)
        everyone = [*running, start(4)]
        await _looked_after_all_noted(everyone[3:], everyone)
        return everyone

    try:
        logs = asyncio.run(scene())
    finally:
        for process in started.values():
            process.kill()
            process.wait()
    _assert_private(logs)
