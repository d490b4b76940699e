"""Issue 26's bundles in the store under Ray: a bot uploaded through `arena serve` (a process of its own,
in a working folder of its own), whose bundles folder is then gone, is played on a Ray worker whose own
bundles folder lacks its bundle: the runner (another process, in another working folder) reads it from
PostgreSQL and ships it, the worker checks it and keeps it in its folder (never one the runner names).
The cluster is test_ray.py's (one of this module's own)."""

from __future__ import annotations

import io
import os
import secrets
import shutil
import tarfile
import tempfile
from pathlib import Path

import pytest
from postgres_support import PostgresServer

from arena.ladder.store import LadderStore
from sdk import BotServer
from tests.arena.ladder.ladder_support import assert_ladder_invariants
from tests.arena.ladder.test_ray import _arena, cluster
from tests.arena.ladder.upload_support import machine, upload_through_the_site
from tests.arena.sandbox.sandbox_support import ROOT, python_only, require_bubblewrap

__all__ = ["cluster"]  # the Ray cluster fixture, for this module's own


def unique_bundle(folder: Path) -> Path:
    """The random bot as an entrant bundles it, with bytes of its own: no machine has kept it before."""
    path = folder / "ann.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for package in ("sdk", "fiftysix", "sample_bots"):
            tar.add(ROOT / package, package, filter=python_only)
        tar.add(ROOT / "sample_bots" / "random_bot.py", "bot.py")
        nonce = secrets.token_hex(16).encode()
        info = tarfile.TarInfo("nonce")
        info.size = len(nonce)
        tar.addfile(info, io.BytesIO(nonce))
    return path


def test_an_uploaded_bot_plays_on_a_worker_whose_bundles_folder_lacks_it(
    cluster: str,
    servers: list[BotServer],
    postgres: PostgresServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_bubblewrap()
    database = postgres.new_database()
    sha256 = upload_through_the_site(database, tmp_path, capsys, monkeypatch, unique_bundle(tmp_path))
    store = LadderStore(database)
    try:
        store.registry.add_bot("rival", address=f"127.0.0.1:{servers[0].port}")
        [upload] = store.uploads.uploads_of("ann")
    finally:
        store.close()
    assert upload.sha256 == sha256
    runner = tmp_path / "runner"
    runner.mkdir()
    stem = machine(tmp_path, "runner", database, monkeypatch).name.removesuffix(".bundles")
    # The cluster's workers run on this machine, with its temporary folder (their folder's default).
    worker_folder = Path(tempfile.gettempdir()) / f"arena-bundles-{os.getuid()}"
    assert not (worker_folder / upload.sha256).exists()
    try:
        out = _arena(
            *("ladder", "run", "--db", database, "--matches", "2", "--deal-cap", "1", "--concurrency", "2"),
            *("--bot-memory", "512", "--bot-processes", "48", "--ray", cluster),
            cwd=runner,
        )
        assert "Played 2 matches (1 sets rated, 0 faults)" in out, out
        # The worker kept the bundle in its own folder, and ann's processes ran there, from it.
        assert (worker_folder / upload.sha256 / "nonce").is_file()
        logs = list((runner / f"{stem}-logs").rglob("ann-*.log"))
        assert any(log.parent.name.startswith("worker-") for log in logs), logs
        store = LadderStore(database)
        try:
            assert_ladder_invariants(store)
            versions = {
                output.version
                for match in store.matches.finished()
                for output in store.outputs.of_match(match.id)
            }
            assert versions == {upload.version}
        finally:
            store.close()
    finally:
        for part in worker_folder.glob(f"{upload.sha256}*"):
            if part.is_dir():
                shutil.rmtree(part)
            else:
                part.unlink()
