"""Uploaded bots' files: the bundles, whose bytes the ladder's database keeps (store/bundles.py, by
content hash), unpacked on each machine that starts them in a bundles folder of its own, a cache by hash
(arena/sandbox/bundles.py); and how a command bot starts from what the store says of it (its versions and
launch settings are store_uploads.py's).

A bundle stays exactly as long as a version of some bot names it: an upload that is refused (its bot did
not answer, a quota, an error) leaves nothing, neither in the database nor in the folder, and a bundle
that a version shares with another, by content hash, stays while either does. The host prunes old
versions (`arena bots prune`, `Uploads.prune`): their rows go (the audit log keeps each upload's hash),
and so do their bundles, from the database and from this machine's folder, unless still named.

Whoever starts an uploaded bot finds its files in this machine's folder (the site that took the upload
has them), or fetches them: the runner from the database (`Uploads.provide`), a Ray worker from the runner
(`keep_sent`, in a folder of its own: `worker_cache`). What is fetched is checked against its hash before
anything of it is unpacked, and an entry is made under a temporary name and renamed last, so a fetch cut
short leaves nothing that is used, and two fetches of one bundle at once keep it once."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shlex
import tempfile
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import structlog

from arena.errors import ArenaError
from arena.ladder.bots import BotStartError, Launch
from arena.ladder.store import BotEntry, Freed, LadderStore, StoreError, Upload, bundles_folder
from arena.sandbox.bundles import (
    Bundle,
    BundleError,
    BundleLimits,
    Swept,
    alone,
    fetching,
    holding,
    own_folder,
    store_bundle,
    sweep,
)
from arena.untrusted import safe_text

log = structlog.get_logger("ladder")

Unpack = Callable[[Path, Path, BundleLimits], Bundle]
"""How a bundle is kept: arena.sandbox.bundles.store_bundle's signature."""
PRUNE_WAIT_S: Final = 60.0
"""How long a prune waits for the uploads in progress (each takes at most a few minutes)."""
CACHE_VARIABLE: Final = "ARENA_BUNDLE_CACHE"
"""The environment variable that names a Ray worker's bundles folder (`worker_cache`)."""

__all__ = [
    "CACHE_VARIABLE",
    "PRUNE_WAIT_S",
    "KeptBundle",
    "Pruned",
    "Unpack",
    "Uploads",
    "bundles_folder",
    "keep_sent",
    "prunable",
    "socket_command",
    "worker_cache",
]


def socket_command(run: str) -> str:
    """An upload's run command as registered: `--socket {socket}` added unless it says where `{socket}`
    goes (the sandbox has no network, so the bot listens on a socket).

    :raises ValueError: a command that is empty, cannot be split as a shell would, or names a port.
    """
    try:
        words = shlex.split(run)
    except ValueError as error:
        raise ValueError(f"the run command cannot be split into words: {error}") from None
    if not words:
        raise ValueError("the run command is empty")
    if "{port}" in run or "{port_file}" in run:
        raise ValueError("an uploaded bot listens on {socket}, not on a port: the sandbox has no network")
    return run if "{socket}" in run else f"{run} --socket {{socket}}"


@dataclass
class KeptBundle:
    """A bundle kept for an upload whose version is not recorded yet: the bundles folder is held (shared)
    until `Uploads.release`, so that nothing removes the bundle meanwhile. Holds no store: it may be
    released from another thread than the one that kept it."""

    bundle: Bundle
    hold: contextlib.ExitStack = field(repr=False)


class Uploads:
    """The uploads of the ladder in `store`: their versions, launch settings and bundles' bytes in the
    store, their bundles unpacked in this machine's folder; the `BundleSource` of the runs on it."""

    def __init__(self, store: LadderStore, limits: BundleLimits | None = None) -> None:
        self.store = store
        self.folder = bundles_folder(store.files_stem)
        self.limits = limits if limits is not None else BundleLimits()

    def keep(self, archive: Path, unpack: Unpack = store_bundle) -> KeptBundle:
        """Keep and unpack a bundle (BundleError when it is refused), before any bot is registered, with
        `unpack` (store_bundle here, or elsewhere: the site's runs in processes of its own); give it to
        `release` once its version is recorded, or refused."""
        hold = contextlib.ExitStack()
        hold.enter_context(holding(self.folder))
        try:
            return KeptBundle(unpack(archive, self.folder, self.limits), hold)
        except BaseException:
            hold.close()
            raise

    def release(self, kept: KeptBundle | None) -> Swept:
        """Let go of a kept bundle; then, unless another upload holds the folder (the last one to let go
        does it), remove every bundle that no version names: this one if its upload was refused, and
        whatever an upload cut short left."""
        if kept is not None:
            kept.hold.close()
        with alone(self.folder) as taken:
            return sweep(self.folder, self.store.uploads.wanted_bundles) if taken else Swept()

    def prune(self, keep: int, names: Collection[str] = ()) -> Pruned:
        """Forget the old versions of the bots `names` (every bot with uploads when empty) that
        `prunable` lets go, and remove the bundles no version names any more, once no upload is in
        progress (waiting up to PRUNE_WAIT_S for those that are).

        :raises ArenaError: a name without uploads, or uploads still in progress.
        """
        if keep < 1:
            raise ValueError(f"a prune keeps each bot's newest version at least, got keep={keep}")
        uploads = self.store.uploads.all_uploads()
        unknown = sorted(set(names) - {upload.bot for upload in uploads})
        if unknown:
            raise ArenaError(f"no uploads of {', '.join(repr(safe_text(name, 64)) for name in unknown)}")
        with alone(self.folder, PRUNE_WAIT_S) as taken:
            if not taken:
                raise ArenaError(f"uploads are still in progress after {PRUNE_WAIT_S:g} s: try again")
            uploads = [
                upload for upload in self.store.uploads.all_uploads() if not names or upload.bot in names
            ]
            launched = self.store.uploads.launched_versions()
            going = prunable(uploads, launched, self.store.uploads.open_sets_since(), keep)
            freed = self.store.uploads.remove_uploads([(upload.bot, upload.version) for upload in going])
            sweep(self.folder, self.store.uploads.wanted_bundles)
        return Pruned(going, len(uploads) - len(going), freed)

    def launch_of(self, bot: BotEntry) -> Launch:
        """How `bot` (a command bot) starts now: an upload from its bundle's entry in this machine's
        folder, which `provide` fills when it lacks it."""
        assert bot.command is not None
        row = self.store.uploads.launch_row(bot.name, bot.command)
        if row is None:
            return Launch(bot.command)
        if row.sha256 is None or row.run is None:
            return Launch(bot.command, row.sandbox)
        return Launch(row.run, row.sandbox, self.folder / row.sha256, row.version, row.sha256)

    async def provide(self, name: str, launch: Launch) -> None:
        """Make this machine's folder hold the bundle `launch.bundle` of the bot `name`: fetched from the
        store when it lacks it (a chunk at a time, giving the event loop its turn between them), checked
        against its hash and unpacked (in a thread).

        :raises BotStartError: the store lacks it, or holds other bytes than its hash's (one line).
        """
        assert launch.bundle is not None
        sha256 = launch.bundle
        if (self.folder / sha256).is_dir():
            return
        try:
            with fetching(self.folder) as archive:
                with archive.open("wb") as target:
                    async for chunk in self._chunks(name, sha256):
                        target.write(chunk)
                kept = await asyncio.to_thread(store_bundle, archive, self.folder, self.limits, sha256)
        except (BundleError, StoreError, OSError) as error:
            raise self._refused(name, sha256, error) from None
        log.info("bundle_fetched", bot=name, sha256=sha256, bytes=kept.bytes)

    async def archive(self, name: str, sha256: str) -> bytes:
        """The archive of the bundle `sha256` of the bot `name`, from the store, checked against its hash.

        :raises BotStartError: the store lacks it, or holds other bytes than its hash's (one line).
        """
        try:
            data = b"".join([chunk async for chunk in self._chunks(name, sha256)])
        except StoreError as error:
            raise self._refused(name, sha256, error) from None
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            mismatch = BundleError(
                f"the bundle's bytes are not those of its hash (expected {sha256[:12]}, got {got[:12]})"
            )
            raise self._refused(name, sha256, mismatch)
        return data

    async def _chunks(self, name: str, sha256: str) -> AsyncIterator[bytes]:
        """The bundle's archive from the store, a chunk at a time, at most `limits.bundle_bytes`.

        :raises BotStartError: the store does not hold it.
        :raises StoreError: it cannot be read.
        :raises BundleError: it is bigger than a bundle may be.
        """
        stored = self.store.uploads.bundle(sha256)
        if stored is None:
            raise BotStartError(
                f"the files of bot {name!r} (bundle {sha256[:12]}) are neither in {self.folder} nor in "
                f"{self.store.name}: upload it again",
                f"its bundle {sha256[:12]} is missing: upload it again",
            )
        if stored.archive_bytes > self.limits.bundle_bytes:
            raise BundleError(f"the bundle has more than {self.limits.bundle_bytes:,} bytes, over the limit")
        for seq in range(stored.chunks):
            yield self.store.uploads.chunk(sha256, seq)
            await asyncio.sleep(0)

    def _refused(self, name: str, sha256: str, error: Exception) -> BotStartError:
        """The one line a bundle that cannot be had is (the host's), and what its author reads of it."""
        if isinstance(error, BotStartError):
            return error
        detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return BotStartError(
            f"the bundle {sha256[:12]} of bot {name!r} from {self.store.name} was refused: {detail}",
            f"its bundle {sha256[:12]} was refused: {detail}" if isinstance(error, BundleError) else None,
        )


def worker_cache() -> Path:
    """A Ray worker's bundles folder, its own and never one the runner names: $ARENA_BUNDLE_CACHE, else
    `arena-bundles-UID` in the worker's temporary folder; made when missing, this user's alone.

    :raises ArenaError: the folder is not this user's alone (another user made it, or may write in it).
    """
    named = os.environ.get(CACHE_VARIABLE)
    return own_folder(Path(named) if named else Path(tempfile.gettempdir()) / f"arena-bundles-{os.getuid()}")


def keep_sent(cache: Path, sha256: str, archive: Callable[[], bytes], limits: BundleLimits) -> Path:
    """The folder of the bundle `sha256` in `cache`, kept from the bytes `archive()` gives (asked for only
    when `cache` lacks it: what the runner sent), checked against its hash and unpacked.

    :raises BundleError: the bytes are not those of the hash, or the bundle is refused.
    """
    folder = cache / sha256
    if folder.is_dir():
        return folder
    with fetching(cache) as path:
        path.write_bytes(archive())
        kept = store_bundle(path, cache, limits, sha256)
    log.info("bundle_received", sha256=sha256, bytes=kept.bytes)
    return kept.folder


@dataclass(frozen=True, slots=True)
class Pruned:
    """What `Uploads.prune` did: the versions forgotten, how many were kept, and the bundles freed."""

    versions: list[Upload]
    kept: int
    freed: Freed


def prunable(
    uploads: Sequence[Upload], launched: Mapping[str, int], open_since: Mapping[str, float], keep: int
) -> list[Upload]:
    """The versions among `uploads` that may be forgotten: none of a bot's newest `keep`, nor the one its
    launch names (`launched`), nor any an unfinished set may have played or may still play: a set of
    the bot made at `open_since[bot]` plays, match by match, whichever version is launched then, so
    every version still launched at or after that time stays (each was launched from its upload until
    the next one's)."""
    going = []
    by_bot: dict[str, list[Upload]] = {}
    for upload in uploads:
        by_bot.setdefault(upload.bot, []).append(upload)
    for bot, versions in by_bot.items():
        versions.sort(key=lambda upload: upload.version)
        since = open_since.get(bot)
        for index, upload in enumerate(versions[: max(0, len(versions) - keep)]):
            replaced_at = versions[index + 1].uploaded_at
            if upload.version == launched.get(bot) or (since is not None and replaced_at > since):
                continue
            going.append(upload)
    return going
