"""Uploads end to end through the command line: two uploaded bots registered (each checked in the
sandbox), a ladder run between them, a new version by `bots update`, the versions and bundles kept."""

from __future__ import annotations

import sqlite3
import tarfile
from pathlib import Path

import pytest
from sandbox_support import random_bot_bundle, require_bubblewrap

from arena.cli import main
from arena.ladder.store import LadderStore
from arena.ladder.uploads import Uploads, bundles_folder


def test_uploaded_bots_play_a_ladder_and_keep_their_versions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_bubblewrap()
    archive, db = random_bot_bundle(tmp_path), str(tmp_path / "arena.db")
    for check, name in enumerate(("ann", "bea"), 1):
        assert (
            main(["bots", "add", name, "--upload", str(archive), "--run", "python bot.py", "--db", db]) == 0
        )
        out = capsys.readouterr().out
        assert "version 1 (bundle" in out
        assert out.strip().endswith(f"checked: 12 passed, 0 failed, 5 skipped (check {check})")
    run = ["ladder", "run", "--matches", "2", "--concurrency", "2", "--deal-cap", "1", "--db", db]
    assert main([*run, "--bot-memory", "512", "--bot-processes", "48", "--log-level", "warning"]) == 0
    assert "Played 2 matches (1 sets rated, 0 faults)" in capsys.readouterr().out
    command = ["bots", "update", "ann", "--upload", str(archive), "--run", "python -m sample_bots.random_bot"]
    assert main([*command, "--no-check", "--db", db]) == 0
    assert "version 2" in capsys.readouterr().out
    store = LadderStore(db)
    try:
        versions = store.uploads.uploads_of("ann")
        launch = Uploads(store).launch_of(store.registry.bot("ann"))
        # Each sandboxed seat's output was kept with its match, with the version that played.
        kept = [store.outputs.of_match(match.id) for match in store.matches.finished()]
        checks = store.checks.checks_of_bot("ann")
    finally:
        store.close()
    assert [[(output.seat, output.version) for output in seats] for seats in kept] == [
        [(seat, 1) for seat in range(4)]
    ] * 2
    assert launch.version == 2
    assert [upload.version for upload in versions] == [1, 2]
    assert versions[1].run == "python -m sample_bots.random_bot --socket {socket}"
    assert versions[0].sha256 == versions[1].sha256  # the same bytes: one bundle
    assert launch.sandboxed
    assert launch.folder == bundles_folder(Path(db)) / versions[0].sha256
    assert [check.version for check in checks] == [1]  # the check of version 2 was skipped (--no-check)
    assert main(["bots", "remove", "ann", "--db", db]) == 0
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM bot_uploads WHERE bot = 'ann'").fetchone() == (2,)
        assert connection.execute("SELECT count(*) FROM bot_launches WHERE bot = 'ann'").fetchone() == (0,)


def test_a_refused_upload_leaves_no_bundle_but_a_shared_one_stays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_bubblewrap()
    archive, db = random_bot_bundle(tmp_path), str(tmp_path / "arena.db")
    other = tmp_path / "other.tar.gz"
    with tarfile.open(other, "w:gz") as tar:
        tar.add(Path(__file__), "bot.py")
    add = ["bots", "add", "--db", db]
    assert main([*add, "ann", "--upload", str(other), "--run", "python bot.py"]) == 1  # it does not serve
    refused = capsys.readouterr()
    assert "did not start" in refused.out  # its check's report, item by item
    assert "ann failed the check, so nothing was registered" in refused.err
    folder = bundles_folder(Path(db))
    assert sorted(path.name for path in folder.iterdir()) == [".lock"]  # nothing of it left
    assert main([*add, "bea", "--upload", str(archive), "--run", "python bot.py"]) == 0
    kept = sorted(path.name for path in folder.iterdir())
    # The same bytes again, refused (its command fails): the bundle bea's version names stays.
    assert main([*add, "cy", "--upload", str(archive), "--run", "python missing.py"]) == 1
    assert sorted(path.name for path in folder.iterdir()) == kept
