"""Two `arena ladder run` processes at once on one ladder file, started in one folder with the sample bots
(issue 22): each runner keeps its bots' files apart (`arena.db-logs/RUNNER/`), so neither overwrites the
other's logs, takes the other's port files or reaches and stops the other's bots; both finish every set
they started, and no sample bot faults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest
from sqlalchemy import select

from arena.ladder.bots import LocalBots
from arena.ladder.store import LadderStore, relations

ROOT: Final = Path(__file__).resolve().parents[3]


def test_two_runners_on_one_ladder_keep_their_bots_apart(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    command = [sys.executable, "-m", "arena.cli", "ladder", "run", "--db", str(db), "--sample-bots"]
    command += ["--deal-cap", "1", "--concurrency", "2"]
    runners = [
        subprocess.Popen(
            [*command, "--matches", str(matches)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for matches in (2, 2)
    ]
    outputs = [runner.communicate(timeout=120) for runner in runners]
    for runner, (out, err) in zip(runners, outputs, strict=True):
        assert runner.returncode == 0, err
        assert " sets rated, 0 faults) in " in out, out

    store = LadderStore(db)
    try:
        set_ids = set(store.file._conn.scalars(select(relations.sets.c.id)))
        assert set_ids
        assert store.sets.rated_sets() == set_ids  # none left unfinished
        assert [match.faults for match in store.matches.finished() if match.faults] == []
    finally:
        store.close()

    folders = sorted((tmp_path / "arena.db-logs").iterdir())
    assert len(folders) == 2, folders  # a folder per runner
    assert all(folder.is_dir() for folder in folders), folders
    for folder in folders:
        logs = sorted(folder.iterdir())
        assert {log.name.split("-")[0] for log in logs} == {"random", "rules"}, logs
        for log in logs:
            assert log.suffix == ".log", log  # no port file left behind
            text = log.read_text()
            assert text.count('"event": "bot_serving"') == 1, (log, text)  # one process per log
            assert text.count("[arena] the bot ended") == 1, (log, text)


def test_each_run_names_a_folder_of_its_own(tmp_path: Path) -> None:
    first, second = LocalBots(tmp_path), LocalBots(tmp_path)
    assert first.run != second.run
    assert first.log_folder.parent == second.log_folder.parent == tmp_path
    assert LocalBots(tmp_path, run="worker-a").log_folder == tmp_path / "worker-a"
    for bad in ("", "..", "a/b", ".hidden", "a b"):
        with pytest.raises(ValueError, match="run's name"):
            LocalBots(tmp_path, run=bad)
