"""Everything a sandboxed process can write counts against one cap, its `/tmp` (`--bot-tmp`): a bot that
tries to write far more than that into every place it can (tests/bots/hog_bot.py: its socket folder,
/tmp, its working folder, $HOME, /dev/shm...) holds at most the cap, measured from the host in the file
system its socket is on; it still starts, and nothing of it lands on the host's disk. Through LocalBots, in
the real sandbox, the way the arena runs here (as root: a user id per process; as an ordinary user: a user
namespace); test_sandbox_sockets.py reaches a socket the other way too."""

from __future__ import annotations

import asyncio
import json
import os
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Final

import pytest
from sandbox_support import python_only, require_bubblewrap

from arena.ladder.bots import Launch, LocalBots
from arena.ladder.store import BotEntry
from arena.sandbox.bubblewrap import Limits, Sandbox
from arena.sandbox.bundles import store_bundle

ROOT: Final = Path(__file__).resolve().parents[3]
MIB: Final = 1024 * 1024
CAP: Final = 2 * MIB
SANDBOX: Final = Sandbox(Limits(memory_bytes=512 * MIB, cpu_seconds=60, processes=32, tmp_bytes=CAP))
TRIED: Final = 4 * CAP
"""What the hog tries to write in each place."""
COMMAND: Final = f"python bot.py --bytes {TRIED} --socket {{socket}}"


def _bundle(work: Path) -> Path:
    archive = work / "hog.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for package in ("sdk", "fiftysix"):
            tar.add(ROOT / package, package, filter=python_only)
        tar.add(ROOT / "tests/bots/hog_bot.py", "bot.py")
    return store_bundle(archive, work / "bundles").folder


def _reports(logs: Path) -> list[dict[str, Any]]:
    """What the hogs logged of their writing."""
    return [
        json.loads(line)
        for log in sorted(logs.rglob("*.log"))
        for line in log.read_text(errors="replace").splitlines()
        if line.startswith('{"event": "hogged"')
    ]


def _bytes_under(folder: Path) -> int:
    return sum(path.lstat().st_size for path in folder.rglob("*"))


def _used_bytes(address: str) -> int:
    """The bytes in use in the file system that holds the socket at `address`, seen from the host."""
    usage = os.statvfs(address.removeprefix("unix:"))
    return (usage.f_blocks - usage.f_bfree) * usage.f_frsize


def test_a_sandboxed_bot_writes_no_more_than_its_cap_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bubblewrap()
    host_tmp = tmp_path / "host-tmp"
    host_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(host_tmp))  # where the arena would make host folders
    launch = Launch(COMMAND, sandboxed=True, folder=_bundle(tmp_path))
    logs = tmp_path / "logs"

    async def scene() -> tuple[list[dict[str, Any]], list[int], int]:
        local = LocalBots(logs, grace=1.0, idle_limit=0, sandbox=SANDBOX, launch_of=lambda _bot: launch)
        try:
            addresses = await local.acquire(BotEntry("hog", None, COMMAND, 1500.0, None), 2)
            deadline = time.monotonic() + 30
            while len(reports := _reports(logs)) < 2:
                assert time.monotonic() < deadline, "the hogs did not report"
                await asyncio.sleep(0.05)
            return reports, [_used_bytes(address) for address in addresses], _bytes_under(host_tmp)
        finally:
            await local.stop_all()

    reports, used, on_host = asyncio.run(scene())
    for report in reports:
        written = report["written"]
        assert CAP // 2 < sum(written.values()) <= CAP, written
        assert report["descriptors"] == [0, 1, 2]  # nothing of the arena's: no pipe to bwrap, no filter
    assert all(bytes_in_use <= CAP for bytes_in_use in used), used
    assert on_host == 0
    assert list(host_tmp.iterdir()) == []
