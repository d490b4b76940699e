"""Uploaded bots' files: the bundles, kept in a folder beside the ladder (`<db>.bundles/`, by content hash;
see arena/sandbox/bundles.py), and how a command bot starts from what the store says of it (its versions
and launch settings are store_uploads.py's).

A bundle stays exactly as long as a version of some bot names it: an upload that is refused (its bot did
not answer, a quota, an error) leaves nothing, and a bundle that a version shares with another, by content
hash, stays while either does."""

from __future__ import annotations

import contextlib
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from arena.ladder.bot_commands import BotStartError, Launch
from arena.ladder.entries import BotEntry
from arena.ladder.store import LadderStore
from arena.sandbox.bundles import Bundle, BundleLimits, alone, holding, store_bundle, sweep


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

    def keep(self, archive: Path) -> KeptBundle:
        """Keep and unpack a bundle (BundleError when it is refused), before any bot is registered; give
        it to `release` once its version is recorded, or refused."""
        hold = contextlib.ExitStack()
        hold.enter_context(holding(self.folder))
        try:
            return KeptBundle(store_bundle(archive, self.folder, self.limits), hold)
        except BaseException:
            hold.close()
            raise

    def release(self, kept: KeptBundle | None) -> int:
        """Let go of a kept bundle; then, unless another upload holds the folder (the last one to let go
        does it), remove every bundle that no version names: this one if its upload was refused, and
        whatever an upload cut short left. The bytes freed."""
        if kept is not None:
            kept.hold.close()
        with alone(self.folder) as taken:
            return sweep(self.folder, self.store.wanted_bundles) if taken else 0

    def launch_of(self, bot: BotEntry) -> Launch:
        """How `bot` (a command bot) starts now.

        :raises BotStartError: its upload's files are missing (the bundles folder was not restored).
        """
        assert bot.command is not None
        row = self.store.launch_row(bot.name, bot.command)
        if row is None:
            return Launch(bot.command)
        if row.sha256 is None or row.run is None:
            return Launch(bot.command, row.sandbox)
        folder = self.folder / row.sha256
        if not folder.is_dir():
            raise BotStartError(f"the files of bot {bot.name!r} are missing: {folder}")
        return Launch(row.run, row.sandbox, folder)
