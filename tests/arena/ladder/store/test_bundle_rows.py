"""The uploaded bundles' bytes in the store, on SQLite and PostgreSQL: written in the transaction of the
version that first names them (bytes that are not their hash's record nothing), read back a chunk at a
time, shared by content hash, gone with the last version that names them; and a ladder of version 6,
whose bundles were files only, upgraded with its bundle files taken in (each checked against its hash),
or read as it is without them."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from arena.ladder.store import Freed, LadderStore, StoreError, bundles_folder
from arena.ladder.store.bundles import CHUNK_BYTES
from arena.ladder.store.relations import bundle_chunks, bundles, meta
from arena.ladder.store.schema import SCHEMA_VERSION
from arena.sandbox.bundles import Bundle, store_bundle


def archive(folder: Path, name: str, size: int) -> Path:
    """A .tar.gz of `size` random (incompressible) bytes and a bot.py: about `size` bytes itself."""
    path = folder / f"{name}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for member, data in (("bot.py", f"# {name}\n".encode()), ("weights.bin", os.urandom(size))):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def kept(folder: Path, name: str, size: int) -> Bundle:
    """A bundle kept in a bundles folder of `folder`, as an upload keeps it before its version is recorded."""
    return store_bundle(archive(folder, name, size), folder / "kept")


def rows(store: LadderStore, relation: str) -> int:
    return int(store.file._conn.scalar(text(f"SELECT count(*) FROM {relation}")))


def test_a_version_writes_its_bundle_and_the_last_version_takes_it_away(
    database: str, tmp_path: Path
) -> None:
    bundle = kept(tmp_path, "big", 2 * CHUNK_BYTES + 5000)
    store = LadderStore(database)
    try:
        store.uploads.add_upload("ann", bundle.sha256, "run", bundle.archive, bundle.bytes)
        stored = store.uploads.bundle(bundle.sha256)
        assert stored is not None
        assert (stored.archive_bytes, stored.kept_bytes) == (bundle.archive.stat().st_size, bundle.bytes)
        assert stored.chunks == 3
        data = b"".join(store.uploads.chunk(bundle.sha256, seq) for seq in range(stored.chunks))
        assert data == bundle.archive.read_bytes()
        with pytest.raises(StoreError, match="holds no chunk 3 of the bundle"):
            store.uploads.chunk(bundle.sha256, 3)
        # The same bytes for another bot: one bundle, written once.
        store.uploads.add_upload("bea", bundle.sha256, "run", bundle.archive, bundle.bytes)
        assert (rows(store, "bundles"), rows(store, "bundle_chunks")) == (1, 3)
        assert store.uploads.kept_bytes({bundle.sha256, "0" * 64}) == bundle.bytes
        assert store.uploads.remove_uploads([("ann", 1)]) == Freed()  # bea's version still names it
        assert store.uploads.bundle(bundle.sha256) == stored
        assert store.uploads.remove_uploads([("bea", 1)]) == Freed(1, bundle.bytes)
        assert store.uploads.bundle(bundle.sha256) is None
        assert (rows(store, "bundles"), rows(store, "bundle_chunks")) == (0, 0)
    finally:
        store.close()


def test_bytes_that_are_not_their_hash_record_nothing(database: str, tmp_path: Path) -> None:
    bundle = kept(tmp_path, "one", 1000)
    other = archive(tmp_path, "other", 1000)
    store = LadderStore(database)
    try:
        with pytest.raises(StoreError, match=r"does not hold the bytes of its hash; nothing was recorded$"):
            store.uploads.add_upload("ann", bundle.sha256, "run", other, 1)
        with pytest.raises(StoreError, match="cannot read the bundle"):
            store.uploads.add_upload("ann", bundle.sha256, "run", tmp_path / "missing.tar.gz", 1)
        assert store.uploads.uploads_of("ann") == []
        assert (rows(store, "bundles"), rows(store, "bundle_chunks")) == (0, 0)
    finally:
        store.close()


def _as_version_6(store: LadderStore) -> None:
    """Make the store what a version-6 arena left: no bundles' relations, the version 6."""
    connection = store.file._conn
    connection.execute(text("DROP TABLE bundle_chunks"))
    connection.execute(text("DROP TABLE bundles"))
    connection.execute(meta.update().where(meta.c.key == "schema_version").values(value="6"))


def test_an_upgrade_to_version_7_takes_the_bundle_files_in(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archives of the bundles folder that a version names go into the database, each checked
    against its hash: one missing or holding other bytes is left out (its version cannot start until
    uploaded again). Read-only, a version-6 ladder reads as holding no bundle."""
    monkeypatch.chdir(tmp_path)  # a server database's bundles folder is in the working folder
    store = LadderStore(database)
    folder = bundles_folder(store.files_stem)
    present, missing, swapped = (kept(tmp_path, name, 3000) for name in ("present", "missing", "swapped"))
    for name, bundle in (("ann", present), ("bea", missing), ("cy", swapped)):
        store.uploads.add_upload(name, bundle.sha256, "run")  # no bytes, as version 6 recorded it
    _as_version_6(store)
    store.close()
    folder.mkdir()
    for bundle in (present, swapped):
        for part in bundle.archive.parent.glob(f"{bundle.sha256}*"):
            os.rename(part, folder / part.name)
    other = archive(tmp_path, "other", 3000).read_bytes()
    (folder / f"{swapped.sha256}.tar.gz").write_bytes(other)  # a file whose bytes are not its name's
    reader = LadderStore(database, read_only=True)
    try:
        assert reader.uploads.bundle(present.sha256) is None
        assert reader.uploads.kept_bytes({present.sha256}) == 0
    finally:
        reader.close()
    upgraded = LadderStore(database)
    try:
        version = upgraded.file._conn.scalar(select(meta.c.value).where(meta.c.key == "schema_version"))
        assert version == str(SCHEMA_VERSION)
        stored = upgraded.uploads.bundle(present.sha256)
        assert stored is not None
        assert stored.kept_bytes == present.bytes  # its .bytes file, as the quota counted it
        assert upgraded.uploads.chunk(present.sha256, 0) == (folder / f"{present.sha256}.tar.gz").read_bytes()
        assert upgraded.uploads.bundle(missing.sha256) is None
        assert upgraded.uploads.bundle(swapped.sha256) is None
        held = upgraded.file._conn.scalar(select(func.count()).select_from(bundles))
        chunks = upgraded.file._conn.scalar(select(func.count()).select_from(bundle_chunks))
        assert (held, chunks) == (1, 1)
    finally:
        upgraded.close()
