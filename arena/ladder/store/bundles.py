"""The uploaded bundles' bytes in the ladder's database, so that every machine of a competition reaches
them where it reaches the ladder (the site taking uploads on one, runners and Ray workers on others): a
row per bundle in `bundles` and its archive's bytes in `bundle_chunks`, a MiB a row, by the SHA-256 of the
archive (content-addressed: two versions of the same bytes share one bundle).

A bundle is written in the transaction that records the version naming it (uploads.py, `add_upload`), so
a refused upload writes nothing, and goes in the transaction that forgets the last version naming it
(`remove_uploads`): the database never holds a bundle no version names, nor needs a sweep, whichever
machine writes. A machine keeps what it fetched in its bundles folder, a cache by hash
(arena/ladder/uploads.py); what comes out of here is checked against its hash before it is used there.

These are functions of a connection, inside the caller's transaction, for the store's parts and the
upgrades (version 7 takes the bundle files of an older ladder in: `take_in_bundle_files`)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import structlog
from sqlalchemy import Connection, delete, select, update

from arena.ladder.store.relations import bot_uploads, bundle_chunks, bundles
from arena.sandbox.bundles import kept_bytes

log = structlog.get_logger("store")

CHUNK_BYTES: Final = 1024 * 1024
"""The bytes of a bundle's archive a row of `bundle_chunks` holds (the last one fewer)."""
ARCHIVE_SUFFIXES: Final = (".tar.gz", ".zip")
"""How a bundles folder names a bundle's archive beside its files (arena/sandbox/bundles.py)."""


def bundles_folder(stem: Path) -> Path:
    """The bundles folder of the ladder whose files start their names with `stem` (StoreFile.files_stem):
    `<stem>.bundles/`, this machine's cache of the bundles by hash."""
    return stem.with_name(f"{stem.name}.bundles")


class BundleBytesError(ValueError):
    """A bundle's archive that cannot be read, or whose bytes are not those its hash names: nothing of it
    is written (the store's part turns this into a StoreError)."""


@dataclass(frozen=True, slots=True)
class StoredBundle:
    """A bundle the database holds: its hash, its archive's size, what it takes kept on a machine, and
    its number of chunks."""

    sha256: str
    archive_bytes: int
    kept_bytes: int
    chunks: int


@dataclass(frozen=True, slots=True)
class Freed:
    """The bundles a removal of versions let go of, and what they took kept (`kept_bytes`)."""

    bundles: int = 0
    bytes: int = 0


def write_bundle(connection: Connection, sha256: str, archive: Path, kept: int) -> bool:
    """Write the bundle `sha256` from its `archive` file, inside the caller's transaction, unless the
    database holds it already (False then). Its bytes are hashed as they are written: bytes that are not
    `sha256`'s raise, and the caller's transaction then writes nothing.

    :raises BundleBytesError: the archive cannot be read, or is not the bundle `sha256`.
    """
    if connection.scalar(select(bundles.c.sha256).where(bundles.c.sha256 == sha256)) is not None:
        return False
    connection.execute(
        bundles.insert().values(
            sha256=sha256, archive_bytes=0, kept_bytes=kept, chunks=0, stored_at=time.time()
        )
    )
    digest, size, seq = hashlib.sha256(), 0, 0
    try:
        with archive.open("rb") as source:
            while chunk := source.read(CHUNK_BYTES):
                digest.update(chunk)
                connection.execute(bundle_chunks.insert().values(sha256=sha256, seq=seq, data=chunk))
                size, seq = size + len(chunk), seq + 1
    except OSError as error:
        raise BundleBytesError(f"cannot read the bundle {sha256[:12]}: {error.strerror or error}") from None
    if digest.hexdigest() != sha256:
        raise BundleBytesError(f"the file of the bundle {sha256[:12]} does not hold the bytes of its hash")
    connection.execute(
        update(bundles).where(bundles.c.sha256 == sha256).values(archive_bytes=size, chunks=seq)
    )
    return True


def remove_unnamed_bundles(connection: Connection) -> Freed:
    """Remove every bundle no version names, inside the caller's transaction (the one that forgot the
    versions): what was freed."""
    named = select(bot_uploads.c.sha256)
    rows = connection.execute(
        select(bundles.c.sha256, bundles.c.kept_bytes).where(bundles.c.sha256.not_in(named))
    ).all()
    for sha256, _kept in rows:
        connection.execute(delete(bundle_chunks).where(bundle_chunks.c.sha256 == sha256))
        connection.execute(delete(bundles).where(bundles.c.sha256 == sha256))
    return Freed(len(rows), sum(int(kept) for _sha256, kept in rows))


def take_in_bundle_files(connection: Connection, folder: Path) -> int:
    """Version 7: every bundle a version names and the database lacks, taken in from the archive in
    `folder` (the ladder's bundles folder, where an older arena kept the bundles), inside the upgrade's
    transaction: how many. An archive that is missing or does not hold its hash's bytes is left out
    (logged); its version then cannot start until its bundle is uploaded again."""
    named = set(connection.scalars(select(bot_uploads.c.sha256).distinct()))
    held = set(connection.scalars(select(bundles.c.sha256)))
    taken = 0
    for sha256 in sorted(named - held):
        archive = next(
            (
                folder / f"{sha256}{suffix}"
                for suffix in ARCHIVE_SUFFIXES
                if (folder / f"{sha256}{suffix}").is_file()
            ),
            None,
        )
        if archive is None:
            log.warning("bundle_not_taken_in", sha256=sha256, reason=f"no archive of it in {folder}")
            continue
        try:
            matches = file_sha256(archive) == sha256
        except OSError as error:
            log.warning("bundle_not_taken_in", sha256=sha256, reason=error.strerror or str(error))
            continue
        if not matches:
            log.warning(
                "bundle_not_taken_in", sha256=sha256, reason=f"{archive} is not the bundle of its name"
            )
            continue
        write_bundle(connection, sha256, archive, kept_bytes(folder, sha256))
        log.info("bundle_taken_in", sha256=sha256, archive=str(archive))
        taken += 1
    return taken


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read a chunk at a time.

    :raises OSError: it cannot be read.
    """
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()
