"""Uploaded bots' files: the bundles, kept in a folder beside the ladder (`<db>.bundles/`, by content hash;
see arena/sandbox/bundles.py), and how a command bot starts from what the store says of it (its versions
and launch settings are store_uploads.py's).

A bundle stays exactly as long as a version of some bot names it: an upload that is refused (its bot did
not answer, a quota, an error) leaves nothing, and a bundle that a version shares with another, by content
hash, stays while either does. The host prunes old versions (`arena bots prune`, `Uploads.prune`): their
rows go (the audit log keeps each upload's hash) and so do their bundles, unless still named."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from arena.errors import ArenaError
from arena.ladder.bots import BotStartError, Launch
from arena.ladder.store import BotEntry, LadderStore, Upload
from arena.sandbox.bundles import Bundle, BundleLimits, Swept, alone, holding, store_bundle, sweep
from arena.untrusted import safe_text

Unpack = Callable[[Path, Path, BundleLimits], Bundle]
"""How a bundle is kept: arena.sandbox.bundles.store_bundle's signature."""
PRUNE_WAIT_S: Final = 60.0
"""How long a prune waits for the uploads in progress (each takes at most a few minutes)."""


def bundles_folder(db: Path) -> Path:
    """Where the bundles of the ladder in `db` are kept: beside it, so that a backup takes both."""
    return db.with_name(f"{db.name}.bundles")


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
    """The uploads of the ladder in `store`: their bundles on disk, their versions and launch settings in
    the store."""

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
            self.store.uploads.remove_uploads([(upload.bot, upload.version) for upload in going])
            swept = sweep(self.folder, self.store.uploads.wanted_bundles)
        return Pruned(going, len(uploads) - len(going), swept)

    def launch_of(self, bot: BotEntry) -> Launch:
        """How `bot` (a command bot) starts now.

        :raises BotStartError: its upload's files are missing (the bundles folder was not restored).
        """
        assert bot.command is not None
        row = self.store.uploads.launch_row(bot.name, bot.command)
        if row is None:
            return Launch(bot.command)
        if row.sha256 is None or row.run is None:
            return Launch(bot.command, row.sandbox)
        folder = self.folder / row.sha256
        if not folder.is_dir():
            raise BotStartError(f"the files of bot {bot.name!r} are missing: {folder}")
        return Launch(row.run, row.sandbox, folder, row.version)


@dataclass(frozen=True, slots=True)
class Pruned:
    """What `Uploads.prune` did: the versions forgotten, how many were kept, and what was freed."""

    versions: list[Upload]
    kept: int
    swept: Swept


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
