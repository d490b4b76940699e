"""The one factory of a run's bot processes (arena/ladder/bots/factory.py): it refuses a sandbox that would
show bots the host's files, hides a ladder's file, logs and bundles, and is the only place in the arena
that builds a pool; a Ray worker builds its pool through it too, with the runner's hidden files."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from arena.ladder.bots import BotHost, ExposedFilesError, Launch, local_bots
from arena.ladder.ray_play import WorkerBots, _WorkerPool
from arena.ladder.run_bots import bot_host, ladder_bots, logs_folder
from arena.ladder.store import BotEntry, LadderStore
from arena.ladder.uploads import CACHE_VARIABLE
from arena.sandbox.bubblewrap import Limits, Sandbox

ROOT = Path(__file__).resolve().parents[4]
LIMITS = Limits(memory_bytes=256 * 1024 * 1024, cpu_seconds=7)


def _launch(bot: BotEntry) -> Launch:
    raise AssertionError("no bot starts here")


def test_the_factory_refuses_a_sandbox_that_shows_a_hidden_file(tmp_path: Path) -> None:
    showing = Sandbox(LIMITS, shared=(tmp_path,), share_arena_python=False)
    with pytest.raises(ExposedFilesError, match=r"holds .*arena\.db: move the ladder's file out"):
        local_bots(tmp_path / "logs", BotHost(showing, (tmp_path / "arena.db",)), _launch)
    elsewhere = BotHost(showing, (tmp_path.parent / "elsewhere.db",))
    bots = local_bots(tmp_path / "logs", elsewhere, _launch, idle_limit=3, port_range=(9000, 9100), run="r")
    assert (bots.sandbox, bots.hidden, bots.idle_limit, bots.port_range) == (
        showing,
        elsewhere.hidden,
        3,
        (9000, 9100),
    )
    assert bots.log_folder == tmp_path / "logs" / "r"


def test_a_ladder_hides_its_file_its_logs_and_its_bundles(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "arena.db")
    try:
        host = bot_host(store, Sandbox(LIMITS))
        assert host.sandbox.limits == LIMITS
        assert host.hidden == (
            tmp_path / "arena.db",
            tmp_path / "arena.db-logs",
            tmp_path / "arena.db.bundles",
        )
        bots = ladder_bots(store, Sandbox(LIMITS), idle_limit=5)
        assert bots.hidden == host.hidden
        assert bots.sandbox.limits == LIMITS
        assert bots.log_folder.parent == logs_folder(store) == tmp_path / "arena.db-logs"
    finally:
        store.close()


def test_a_ray_worker_builds_its_pool_through_the_factory_with_the_runners_hidden_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker hides from bots what the runner hides, and its own bundles folder too."""
    store = LadderStore(tmp_path / "arena.db")
    try:
        runner = ladder_bots(store, Sandbox(LIMITS), idle_limit=2)
    finally:
        store.close()
    settings = WorkerBots.like(runner)
    assert settings.hidden == runner.hidden
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "worker-bundles"))
    worker = _WorkerPool(settings)
    try:
        assert worker.local_bots.sandbox == runner.sandbox
        assert worker.local_bots.hidden == (*runner.hidden, tmp_path / "worker-bundles")
    finally:
        worker.stop()
    # Where the worker's sandbox would show the ladder (its Python installation holds it), it starts nothing.
    showing = Sandbox(LIMITS, shared=(tmp_path,), share_arena_python=False)
    with pytest.raises(ExposedFilesError):
        _WorkerPool(dataclasses.replace(settings, sandbox=showing))


def test_no_other_module_of_the_arena_builds_a_pool() -> None:
    """Every command that starts bots goes through the factory: `LocalBots(` is built there alone."""
    building = re.compile(r"\bLocalBots\(")
    found = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "arena").rglob("*.py"))
        if building.search(path.read_text(encoding="utf-8"))
    ]
    assert found == ["arena/ladder/bots/factory.py"]
