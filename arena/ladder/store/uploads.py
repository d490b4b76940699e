"""Uploaded bots and how each command bot starts, in two relations of the ladder's database beside the
register of bots (registry.py), and the bundles' bytes (bundles.py): each written with the version that
first names it, gone with the last. Each machine keeps the bundles it uses unpacked in a cache of its
own (arena/ladder/uploads.py, arena/sandbox/bundles.py).

`bot_uploads` keeps every upload as a version of its bot (its bundle's SHA-256 and its run command); a
new upload is a new version and the old ones stay, so that the matches the old versions played can be
traced to the code that played them. `bot_launches` says, per command bot, whether it runs in the
sandbox and which upload (if any) it runs now, for the command it was registered with; a bot with no
row there, or registered since with another command or an address by a writer that knows nothing of
this relation, is a host's command run unsandboxed, as before uploads existed. A database without the
relations (a read-only file of an older arena) reads as a ladder without uploads."""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import and_, delete, func, or_, select

from arena.ladder.store.bundles import (
    BundleBytesError,
    Freed,
    StoredBundle,
    remove_unnamed_bundles,
    write_bundle,
)
from arena.ladder.store.database import replace
from arena.ladder.store.file import StoreError, StorePart, every_method_store_errors, is_integer, is_number
from arena.ladder.store.relations import bot_launches, bot_uploads, bots, bundle_chunks, bundles, sets


@dataclass(frozen=True, slots=True)
class Upload:
    """One version of an uploaded bot."""

    bot: str
    version: int
    sha256: str
    run: str
    uploaded_at: float


@dataclass(frozen=True, slots=True)
class LaunchRow:
    """How a command bot starts, as `bot_launches` says: in the sandbox or not, and the upload it runs
    (its bundle's SHA-256, run command and version), None for its registered command."""

    sandbox: bool
    sha256: str | None
    run: str | None
    version: int | None = None


@every_method_store_errors
class UploadStore(StorePart):
    """The store's part that keeps the uploads' versions and the command bots' launch settings."""

    def add_upload(
        self, bot: str, sha256: str, run: str, archive: Path | None = None, kept_bytes: int = 0
    ) -> Upload:
        """Record a kept bundle as the next version of `bot`, and its bytes from `archive` (what it takes
        kept: `kept_bytes`) in the same transaction unless the database holds them already. Without an
        `archive` the version names a bundle the database may lack (an older ladder's, whose file was not
        there to take in): it then cannot start.

        :raises StoreError: `archive` cannot be read or is not the bundle `sha256` (nothing is recorded).
        """
        now = time.time()
        with self._transaction():
            if archive is not None:
                try:
                    write_bundle(self._conn, sha256, archive, kept_bytes)
                except BundleBytesError as error:
                    raise StoreError(f"{self.name}: {error}; nothing was recorded") from None
            latest = self._conn.scalar(
                select(func.max(bot_uploads.c.version)).where(bot_uploads.c.bot == bot)
            )
            version = int(latest or 0) + 1
            self._conn.execute(
                bot_uploads.insert().values(bot=bot, version=version, sha256=sha256, run=run, uploaded_at=now)
            )
        return Upload(bot, version, sha256, run, now)

    def set_launch(self, bot: str, command: str, sandbox: bool, version: int | None) -> None:
        """How `bot`, registered with `command`, starts from now on: in the sandbox or not, and which
        upload (None: its command)."""
        row = {"bot": bot, "command": command, "sandbox": int(sandbox), "version": version}
        with self._transaction():
            replace(self._conn, bot_launches, [row])

    def forget_launch(self, bot: str) -> None:
        """`bot` no longer starts from here (removed, or reached at an address); its uploads stay."""
        with self._transaction():
            self._conn.execute(delete(bot_launches).where(bot_launches.c.bot == bot))

    def uploads_of(self, bot: str) -> list[Upload]:
        """Every upload of `bot`, oldest first."""
        if "bot_uploads" not in self._relations():
            return []
        rows = self._conn.execute(
            select(bot_uploads).where(bot_uploads.c.bot == bot).order_by(bot_uploads.c.version)
        )
        uploads = []
        for name, version, sha256, run, uploaded_at in rows:
            if not (
                is_integer(version)
                and isinstance(sha256, str)
                and isinstance(run, str)
                and is_number(uploaded_at)
            ):
                raise self._damaged(f"the uploads of {bot!r}")
            uploads.append(Upload(str(name), version, sha256, run, float(uploaded_at)))
        return uploads

    def all_uploads(self) -> list[Upload]:
        """Every upload of every bot (registered or not), by bot and version."""
        if "bot_uploads" not in self._relations():
            return []
        names = self._conn.scalars(select(bot_uploads.c.bot).distinct().order_by(bot_uploads.c.bot))
        return [upload for name in list(names) for upload in self.uploads_of(str(name))]

    def launched_versions(self) -> dict[str, int]:
        """Per bot, the version its launch names (the one it runs now, for the command it has)."""
        if "bot_launches" not in self._relations():
            return {}
        rows = self._conn.execute(
            select(bot_launches.c.bot, bot_launches.c.version).where(bot_launches.c.version.is_not(None))
        )
        return {str(bot): int(version) for bot, version in rows}

    def open_sets_since(self) -> dict[str, float]:
        """Per bot, when the oldest set that names it and is not over (neither rated nor void) was made."""
        rows = self._conn.execute(
            select(sets.c.id, sets.c.bots, sets.c.created_at).where(
                sets.c.rated_at.is_(None), sets.c.void_reason.is_(None)
            )
        )
        since: dict[str, float] = {}
        for set_id, bots_json, created_at in rows:
            names = self._decoded(bots_json, f"the bots of set {set_id}")
            if not (isinstance(names, list) and is_number(created_at)):
                raise self._damaged(f"set {set_id}")
            for name in names:
                since[str(name)] = min(since.get(str(name), float(created_at)), float(created_at))
        return since

    def remove_uploads(self, versions: Collection[tuple[str, int]]) -> Freed:
        """Forget these versions (bot, version), and the bundles no version names any more, in one
        transaction: what was freed in the database (the machines' caches may then be swept)."""
        with self._transaction():
            for bot, version in versions:
                self._conn.execute(
                    delete(bot_uploads).where(bot_uploads.c.bot == bot, bot_uploads.c.version == version)
                )
            return remove_unnamed_bundles(self._conn) if "bundles" in self._relations() else Freed()

    def bundle(self, sha256: str) -> StoredBundle | None:
        """The bundle `sha256` as the database holds it (None: it does not, or it is a read-only ladder
        of an older arena, which kept bundles in files only)."""
        if "bundles" not in self._relations():
            return None
        row = self._conn.execute(
            select(bundles.c.archive_bytes, bundles.c.kept_bytes, bundles.c.chunks).where(
                bundles.c.sha256 == sha256
            )
        ).first()
        if row is None:
            return None
        archive_bytes, kept_bytes, chunks = row
        if not (is_integer(archive_bytes) and is_integer(kept_bytes) and is_integer(chunks)):
            raise self._damaged(f"the bundle {sha256[:12]}")
        return StoredBundle(sha256, archive_bytes, kept_bytes, chunks)

    def chunk(self, sha256: str, seq: int) -> bytes:
        """The `seq`-th chunk of the bundle `sha256`'s archive (from 0; `bundle` says how many), as the
        database holds it: whoever uses it checks the whole against its hash.

        :raises StoreError: the database holds no such chunk (the bundle was removed meanwhile?).
        """
        data = self._conn.scalar(
            select(bundle_chunks.c.data).where(bundle_chunks.c.sha256 == sha256, bundle_chunks.c.seq == seq)
        )
        if not isinstance(data, bytes | memoryview):
            raise StoreError(f"{self.name} holds no chunk {seq} of the bundle {sha256[:12]}")
        return bytes(data)

    def kept_bytes(self, hashes: Collection[str]) -> int:
        """What the bundles `hashes` take kept, together (those the database lacks count nothing): what
        the uploads' quota counts."""
        if not hashes or "bundles" not in self._relations():
            return 0
        total = 0
        for kept in self._conn.scalars(select(bundles.c.kept_bytes).where(bundles.c.sha256.in_(hashes))):
            if not is_integer(kept):
                raise self._damaged("the size of a bundle")
            total += kept
        return total

    def wanted_bundles(self) -> set[str]:
        """The SHA-256 of every bundle a version names: the bundles to keep.

        :raises StoreError: the file has no uploads' relation (opened read-only, of an older arena), so it
            cannot say; nothing may then be removed.
        """
        if "bot_uploads" not in self._relations():
            raise StoreError(f"{self.name} has no uploads' table: it cannot say which bundles to keep")
        return {str(sha256) for sha256 in self._conn.scalars(select(bot_uploads.c.sha256).distinct())}

    def bundles_of(self, participant: str) -> set[str]:
        """The SHA-256 of the bundles of `participant`'s bots' versions: those of the bot named as their
        token is (the one they upload to) and of every bot they own."""
        if "bot_uploads" not in self._relations():
            return set()
        owned = select(bots.c.name).where(bots.c.owner == participant)
        rows = self._conn.scalars(
            select(bot_uploads.c.sha256)
            .where(or_(bot_uploads.c.bot == participant, bot_uploads.c.bot.in_(owned)))
            .distinct()
        )
        return {str(sha256) for sha256 in rows}

    def sandboxed_bots(self) -> list[str]:
        """The registered bots that run in the sandbox, by name."""
        if "bot_launches" not in self._relations():
            return []
        names = self._conn.scalars(
            select(bot_launches.c.bot)
            .select_from(
                bot_launches.join(
                    bots, and_(bots.c.name == bot_launches.c.bot, bots.c.command == bot_launches.c.command)
                )
            )
            .where(bot_launches.c.sandbox == 1)
            .order_by(bot_launches.c.bot)
        )
        return [str(name) for name in names]

    def launch_row(self, bot: str, command: str) -> LaunchRow | None:
        """How `bot`, registered with `command`, starts (None: as a host's command, unsandboxed)."""
        if "bot_launches" not in self._relations():
            return None
        row = self._conn.execute(
            select(bot_launches.c.sandbox, bot_uploads.c.sha256, bot_uploads.c.run, bot_uploads.c.version)
            .select_from(
                bot_launches.outerjoin(
                    bot_uploads,
                    and_(
                        bot_uploads.c.bot == bot_launches.c.bot,
                        bot_uploads.c.version == bot_launches.c.version,
                    ),
                )
            )
            .where(bot_launches.c.bot == bot, bot_launches.c.command == command)
        ).first()
        if row is None:
            return None
        sandbox, sha256, run, version = row
        if not (
            is_integer(sandbox)
            and (sha256 is None or (isinstance(sha256, str) and isinstance(run, str) and is_integer(version)))
        ):
            raise self._damaged(f"the launch of {bot!r}")
        return LaunchRow(bool(sandbox), sha256, run, version)
