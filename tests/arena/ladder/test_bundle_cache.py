"""Each machine's bundles folder as a cache of the store's bundles, on SQLite and PostgreSQL: a machine
that lacks a bundle fetches it by hash, checks it and unpacks it; bytes that are not their hash's are
refused in one line and nothing of them is kept; several processes fetching one bundle at once keep it
once; an entry a killed process left half made is never used; a Ray worker keeps what the runner sent
in a folder of its own, only if it is the bundle of its hash, and its bot forfeits otherwise."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Final

import pytest
from sqlalchemy import text

from arena.errors import ArenaError
from arena.ladder import ray_play
from arena.ladder.bots import BotStartError, Launch
from arena.ladder.match_play import MatchOrder
from arena.ladder.run_bots import ladder_bots
from arena.ladder.store import BotEntry, LadderStore
from arena.ladder.store.bundles import CHUNK_BYTES
from arena.ladder.uploads import CACHE_VARIABLE, Uploads, keep_sent
from arena.runner import MatchSettings
from arena.sandbox.bubblewrap import Sandbox
from arena.sandbox.bundles import (
    UNPACKING_PREFIX,
    Bundle,
    BundleError,
    BundleLimits,
    own_folder,
    store_bundle,
)
from fiftysix.engine import MatchRules, Ruleset

ROOT: Final = Path(__file__).resolve().parents[3]
RUN: Final = "python bot.py --socket {socket}"


def archive(path: Path, size: int) -> Path:
    """A .tar.gz of a bot.py, a folder and `size` random bytes (a bundle of several chunks)."""
    with tarfile.open(path, "w:gz") as tar:
        for member, data in (("bot.py", b"print('hi')\n"), ("lib/weights.bin", os.urandom(size))):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def listing(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, with its bytes."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.fixture
def uploaded(database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Bundle, Launch]:
    """`ann` uploaded on the site's machine (its bundle kept in a folder of the site's, and in the store);
    the ladder's location, that bundle, and how ann starts on this machine, whose folder lacks it."""
    monkeypatch.chdir(tmp_path)  # a server database's bundles folder is in the working folder
    site = tmp_path / "site"
    site.mkdir()
    bundle = store_bundle(archive(site / "ann.tar.gz", 2 * CHUNK_BYTES + 100), site / "bundles")
    store = LadderStore(database)
    try:
        store.registry.add_bot("ann", command=RUN)
        upload = store.uploads.add_upload("ann", bundle.sha256, RUN, bundle.archive, bundle.bytes)
        store.uploads.set_launch("ann", RUN, True, upload.version)
        launch = Uploads(store).launch_of(store.registry.bot("ann"))
    finally:
        store.close()
    assert launch.folder is not None
    assert not launch.folder.exists()
    return database, bundle, launch


def provide(database: str, launch: Launch) -> None:
    store = LadderStore(database)
    try:
        asyncio.run(Uploads(store).provide("ann", launch))
    finally:
        store.close()


def test_a_machine_without_the_bundle_fetches_it_from_the_store(uploaded: tuple[str, Bundle, Launch]) -> None:
    database, bundle, launch = uploaded
    assert launch.folder is not None
    assert (launch.bundle, launch.folder.name, launch.sandboxed) == (bundle.sha256, bundle.sha256, True)
    provide(database, launch)
    assert listing(launch.folder) == listing(bundle.folder)
    cache = launch.folder.parent
    assert (cache / f"{bundle.sha256}.tar.gz").read_bytes() == bundle.archive.read_bytes()
    assert not list(cache.glob(f"{UNPACKING_PREFIX}*"))
    store = LadderStore(database)
    try:
        sent = asyncio.run(Uploads(store).archive("ann", bundle.sha256))  # what a Ray worker is sent
    finally:
        store.close()
    assert sent == bundle.archive.read_bytes()


def test_a_tampered_chunk_is_refused_in_one_line_and_nothing_is_kept(
    uploaded: tuple[str, Bundle, Launch],
) -> None:
    database, bundle, launch = uploaded
    assert launch.folder is not None
    store = LadderStore(database)
    try:
        store.file._conn.execute(
            text("UPDATE bundle_chunks SET data = :data WHERE sha256 = :sha256 AND seq = 1"),
            {"data": os.urandom(CHUNK_BYTES), "sha256": bundle.sha256},
        )
        uploads = Uploads(store)
        for fetch in (uploads.provide("ann", launch), uploads.archive("ann", bundle.sha256)):
            with pytest.raises(BotStartError) as refused:
                asyncio.run(fetch)
            assert re.fullmatch(
                rf"the bundle {bundle.sha256[:12]} of bot 'ann' from {re.escape(store.name)} was refused: "
                r"the bundle's bytes are not those of its hash "
                rf"\(expected {bundle.sha256[:12]}, got [0-9a-f]{{12}}\)",
                str(refused.value),
            )
            assert str(launch.folder.parent) not in refused.value.reason  # what its author may read
    finally:
        store.close()
    assert not launch.folder.exists()
    assert sorted(path.name for path in launch.folder.parent.iterdir()) == [".lock"]


FETCH: Final = """
import asyncio, sys
from pathlib import Path
from arena.ladder.bots import Launch
from arena.ladder.store import LadderStore
from arena.ladder.uploads import Uploads
database, folder, sha256, kill_after = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
if kill_after:
    import os, signal
    from arena.sandbox import bundles
    written = bundles._write_file
    def write_then_die(root, parts, *rest):
        written(root, parts, *rest)
        if parts[-1] == "weights.bin":  # its second file: the entry is half made
            os.kill(os.getpid(), signal.SIGKILL)
    bundles._write_file = write_then_die
store = LadderStore(database)
asyncio.run(Uploads(store).provide("ann", Launch("run", True, folder, 1, sha256)))
store.close()
"""


def fetching(database: str, launch: Launch, kill: bool = False) -> subprocess.Popen[str]:
    """A process of its own that fetches `launch`'s bundle (killed with SIGKILL mid-unpacking: `kill`)."""
    arguments = [database, str(launch.folder), str(launch.bundle), str(int(kill))]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", FETCH, *arguments], env=environment, stderr=subprocess.PIPE, text=True
    )


def test_processes_fetching_one_bundle_at_once_keep_it_once(uploaded: tuple[str, Bundle, Launch]) -> None:
    database, bundle, launch = uploaded
    assert launch.folder is not None
    processes = [fetching(database, launch) for _ in range(4)]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    assert listing(launch.folder) == listing(bundle.folder)
    kept = sorted(path.name for path in launch.folder.parent.iterdir())
    assert kept == sorted([".lock", bundle.sha256, f"{bundle.sha256}.tar.gz", f"{bundle.sha256}.bytes"])


def test_an_entry_a_killed_fetch_left_half_made_is_never_used(uploaded: tuple[str, Bundle, Launch]) -> None:
    database, bundle, launch = uploaded
    assert launch.folder is not None
    killed = fetching(database, launch, kill=True)
    killed.communicate(timeout=120)
    assert killed.returncode == -9
    cache = launch.folder.parent
    left = list(cache.glob(f"{UNPACKING_PREFIX}*"))
    assert left  # what it was making, under a temporary name ...
    assert not launch.folder.exists()  # ... never under the bundle's
    provide(database, launch)
    assert listing(launch.folder) == listing(bundle.folder)
    store = LadderStore(database)
    try:
        Uploads(store).release(None)  # the sweep every upload ends with
    finally:
        store.close()
    assert not list(cache.glob(f"{UNPACKING_PREFIX}*"))
    assert listing(launch.folder) == listing(bundle.folder)


def test_a_worker_keeps_what_the_runner_sent_only_if_it_is_its_hash(tmp_path: Path) -> None:
    bundle = store_bundle(archive(tmp_path / "ann.tar.gz", 1000), tmp_path / "site")
    other = archive(tmp_path / "other.tar.gz", 1000).read_bytes()
    cache = own_folder(tmp_path / "worker")
    assert cache.stat().st_mode & 0o777 == 0o700
    with pytest.raises(BundleError, match=rf"not those of its hash \(expected {bundle.sha256[:12]}, got "):
        keep_sent(cache, bundle.sha256, lambda: other, BundleLimits())
    assert sorted(path.name for path in cache.iterdir()) == [".lock"]  # nothing of them unpacked
    folder = keep_sent(cache, bundle.sha256, bundle.archive.read_bytes, BundleLimits())
    assert listing(folder) == listing(bundle.folder)

    def not_again() -> bytes:
        raise AssertionError("a bundle the worker keeps is not asked for again")

    assert keep_sent(cache, bundle.sha256, not_again, BundleLimits()) == folder


def test_a_worker_refuses_a_bundles_folder_others_may_write(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    with pytest.raises(ArenaError, match="another user's or others may write in it"):
        own_folder(shared)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(ArenaError, match="is not a folder"):
        own_folder(tmp_path / "link")


def test_a_worker_sent_other_bytes_than_the_hash_makes_its_bot_forfeit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Ray worker's side of a match (ray_play._WorkerPool) with what Ray would hand it in place: bytes
    that are not the bundle's make its bot forfeit, with why; the bundle's are kept in the worker's own
    folder, never the one the runner's launch names."""
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "worker"))
    bundle = store_bundle(archive(tmp_path / "ann.tar.gz", 1000), tmp_path / "site")
    store = LadderStore(tmp_path / "arena.db")
    try:
        runner = ladder_bots(store, Sandbox(), idle_limit=0)
    finally:
        store.close()
    worker = ray_play._WorkerPool(ray_play.WorkerBots.like(runner))
    try:
        ann, rival = (
            BotEntry("ann", None, RUN, 1500.0, None),
            BotEntry("rival", "127.0.0.1:1", None, 1500.0, None),
        )
        order = MatchOrder(MatchSettings(MatchRules(4, Ruleset.PAIRS), 1), (ann, rival), ("ann", "rival"))
        launch = Launch(RUN, True, tmp_path / "runner" / bundle.sha256, 1, bundle.sha256)
        other = archive(tmp_path / "other.tar.gz", 1000).read_bytes()
        monkeypatch.setattr(ray_play, "_received", lambda _shipped: other)
        played, _ = worker._with_bundles(order, {"ann": launch}, {bundle.sha256: "shipped"})
        assert played.bots[1] == rival
        assert re.fullmatch(
            rf"its bundle {bundle.sha256[:12]} was not kept on the worker: "
            r"the bundle's bytes are not those of "
            rf"its hash \(expected {bundle.sha256[:12]}, got [0-9a-f]{{12}}\)",
            str(played.bots[0]),
        )
        monkeypatch.setattr(ray_play, "_received", lambda _shipped: bundle.archive.read_bytes())
        played, launches = worker._with_bundles(order, {"ann": launch}, {bundle.sha256: "shipped"})
        assert played.bots == (ann, rival)
        assert launches["ann"] == dataclasses.replace(launch, folder=tmp_path / "worker" / bundle.sha256)
        assert listing(tmp_path / "worker" / bundle.sha256) == listing(bundle.folder)
        assert not (tmp_path / "runner").exists()
    finally:
        worker.stop()
