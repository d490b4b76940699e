"""`arena bots prune`: the host forgets old versions of uploaded bots and frees their bundles (in the
ladder and in this machine's folder), keeping each bot's newest, the one it runs, any a set not over yet
may play, and a bundle another version shares."""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path

import pytest

from arena.cli import main
from arena.ladder import uploads as uploads_module
from arena.ladder.store import LadderStore
from arena.ladder.store.uploads import Upload
from arena.ladder.uploads import bundles_folder, prunable
from arena.sandbox.bundles import holding, kept_bytes


def version(bot: str, number: int, uploaded_at: float) -> Upload:
    return Upload(bot, number, f"{bot}-{number}", "run", uploaded_at)


ANN = [version("ann", number, 10.0 * number) for number in (1, 2, 3, 4)]
"""Four versions of ann, uploaded at 10, 20, 30 and 40."""
CASES = [
    ("the newest stays", 1, {}, {}, [1, 2, 3]),
    ("the newest two stay", 2, {}, {}, [1, 2]),
    ("the one it runs stays", 1, {"ann": 2}, {}, [1, 3]),
    # A set made at 25 may have played version 2 (launched until 30) and every later one.
    ("what an open set may play stays", 1, {}, {"ann": 25.0}, [1]),
    ("a set made as 3 replaced 2", 1, {}, {"ann": 30.0}, [1, 2]),
    ("another bot's open set changes nothing", 1, {}, {"bea": 5.0}, [1, 2, 3]),
]


@pytest.mark.parametrize(
    ("case", "keep", "launched", "open_since", "going"), CASES, ids=[case[0] for case in CASES]
)
def test_which_versions_may_go(
    case: str, keep: int, launched: dict[str, int], open_since: dict[str, float], going: list[int]
) -> None:
    assert [upload.version for upload in prunable(ANN, launched, open_since, keep)] == going


def bundle(folder: Path, name: str, data: bytes) -> Path:
    path = folder / f"{name}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("bot.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def upload(db: Path, bot: str, archive: Path, new: bool) -> None:
    action = "add" if new else "update"
    command = ["bots", action, "--db", str(db), bot, "--upload", str(archive), "--run", "python bot.py"]
    assert main([*command, "--no-check"]) == 0


def test_prune_frees_the_old_bundles_and_keeps_what_is_needed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "arena.db"
    shared, second, third, fourth = (
        bundle(tmp_path, name, name.encode() * 50_000) for name in ("shared", "second", "third", "fourth")
    )
    upload(db, "ann", shared, new=True)
    upload(db, "bea", shared, new=True)  # the same bytes: one bundle for both
    upload(db, "ann", second, new=False)
    time.sleep(0.01)
    store = LadderStore(db)
    open_set = store.sets.create_set(4, "pairs", None, 1, ["ann", "bea"], isolated=True)
    store.close()
    time.sleep(0.01)
    upload(db, "ann", third, new=False)
    upload(db, "ann", fourth, new=False)
    folder = bundles_folder(db)
    store = LadderStore(db)
    sha = {upload.version: upload.sha256 for upload in store.uploads.uploads_of("ann")}
    store.close()
    capsys.readouterr()
    # ann's version 1 may go, but its bundle is bea's too; 2 and 3 an open set may play; 4 is run.
    assert main(["bots", "prune", "--db", str(db)]) == 0
    assert capsys.readouterr().out == "Pruned 1 version of 1 bot, kept 4: freed 0.0 MiB in 0 bundles\n"
    freed = kept_bytes(folder, sha[2]) + kept_bytes(folder, sha[3])
    store = LadderStore(db)
    store.sets.void_set(open_set.id, "a test")
    store.close()
    assert main(["bots", "prune", "--db", str(db), "ann"]) == 0
    mib = f"{freed / 1024 / 1024:,.1f}"
    assert capsys.readouterr().out == f"Pruned 2 versions of 1 bot, kept 1: freed {mib} MiB in 2 bundles\n"
    store = LadderStore(db)
    try:
        assert [upload.version for upload in store.uploads.uploads_of("ann")] == [4]
        assert [upload.version for upload in store.uploads.uploads_of("bea")] == [1]
        # The ladder let go of the two bundles' bytes too, and keeps the others'.
        assert store.uploads.bundle(sha[2]) is None
        assert store.uploads.bundle(sha[3]) is None
        held = [store.uploads.bundle(sha[version]) for version in (1, 4)]
        assert all(bundle is not None for bundle in held)
        chunks = store.file._conn.exec_driver_sql("SELECT sha256 FROM bundle_chunks").all()
        assert {sha256 for (sha256,) in chunks} == {sha[1], sha[4]}
        audit = store.access.audit_log(1)[0]
        assert (audit.action, audit.detail) == ("versions_pruned", "ann v2, ann v3")
    finally:
        store.close()
    kept = {path.name.split(".")[0] for path in folder.iterdir() if not path.name.startswith(".")}
    assert kept == {sha[1], sha[4]}  # the shared bundle and the one ann runs


def test_prune_refuses_an_unknown_bot_and_waits_for_uploads_in_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "arena.db"
    upload(db, "ann", bundle(tmp_path, "one", b"1"), new=True)
    capsys.readouterr()
    assert main(["bots", "prune", "--db", str(db), "nobody"]) == 1
    assert capsys.readouterr().err == "arena bots prune: error: no uploads of 'nobody'\n"
    monkeypatch.setattr(uploads_module, "PRUNE_WAIT_S", 0.2)
    with holding(bundles_folder(db)):  # an upload in progress
        assert main(["bots", "prune", "--db", str(db)]) == 1
    error = capsys.readouterr().err
    assert error == "arena bots prune: error: uploads are still in progress after 0.2 s: try again\n"
