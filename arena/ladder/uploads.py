"""Uploaded bots and how each command bot starts: kept in two tables of their own in the ladder's file,
beside the register of store.py, and the bundles in a folder beside the file (`<db>.bundles/`, by
content hash; see arena/sandbox/bundles.py).

`bot_uploads` keeps every upload as a version of its bot (its bundle's SHA-256 and its run command); a
new upload is a new version and the old ones stay, as do their bundles, so that the matches the old
versions played can be traced to the code that played them. `bot_launches` says, per command bot, whether
it runs in the sandbox and which upload (if any) it runs now, for the command it was registered with; a
bot with no row there, or registered since with another command or an address by a writer that knows
nothing of this table, is a host's command run unsandboxed, as before uploads existed. The tables are
created when missing (no schema version is needed for tables of our own), and a file without them reads
as a ladder without uploads.
"""

from __future__ import annotations

import contextlib
import shlex
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from arena.ladder.bot_commands import BotStartError, Launch
from arena.ladder.entries import BotEntry
from arena.ladder.store_file import StoreError
from arena.sandbox.bundles import Bundle, BundleLimits, store_bundle

_TABLES: Final = """
CREATE TABLE IF NOT EXISTS bot_uploads (
    bot TEXT NOT NULL,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    run TEXT NOT NULL,
    uploaded_at REAL NOT NULL,
    PRIMARY KEY (bot, version)
);
CREATE TABLE IF NOT EXISTS bot_launches (
    bot TEXT PRIMARY KEY,
    command TEXT NOT NULL,
    sandbox INTEGER NOT NULL,
    version INTEGER
);
"""


@dataclass(frozen=True, slots=True)
class Upload:
    """One version of an uploaded bot."""

    bot: str
    version: int
    sha256: str
    run: str
    uploaded_at: float


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


class Uploads:
    """The uploads and launch settings of the ladder in `db`. Each call opens a connection of its own and
    closes it (the store's connection is the store's; these calls are rare: one per start of a bot)."""

    def __init__(self, db: Path, limits: BundleLimits | None = None) -> None:
        self.db = db
        self.folder = bundles_folder(db)
        self.limits = limits if limits is not None else BundleLimits()

    def keep(self, archive: Path) -> Bundle:
        """Keep and unpack a bundle (BundleError when it is refused), before any bot is registered."""
        return store_bundle(archive, self.folder, self.limits)

    def add_version(self, bot: str, bundle: Bundle, run: str) -> Upload:
        """Record a kept bundle as the next version of `bot`."""
        now = time.time()
        with self._writing() as db:
            row = db.execute("SELECT max(version) FROM bot_uploads WHERE bot = ?", (bot,)).fetchone()
            version = (row[0] or 0) + 1
            db.execute(
                "INSERT INTO bot_uploads VALUES (?, ?, ?, ?, ?)", (bot, version, bundle.sha256, run, now)
            )
        return Upload(bot, version, bundle.sha256, run, now)

    def set_launch(self, bot: str, command: str, sandbox: bool, version: int | None) -> None:
        """How `bot`, registered with `command`, starts from now on: in the sandbox or not, and which
        upload (None: its command)."""
        with self._writing() as db:
            db.execute(
                "INSERT INTO bot_launches VALUES (?, ?, ?, ?) ON CONFLICT (bot) DO UPDATE"
                " SET command = excluded.command, sandbox = excluded.sandbox, version = excluded.version",
                (bot, command, int(sandbox), version),
            )

    def forget_launch(self, bot: str) -> None:
        """`bot` no longer starts from here (removed, or reached at an address); its uploads stay."""
        with self._writing() as db:
            db.execute("DELETE FROM bot_launches WHERE bot = ?", (bot,))

    def versions(self, bot: str) -> list[Upload]:
        """Every upload of `bot`, oldest first."""
        rows = self._read(
            "SELECT bot, version, sha256, run, uploaded_at FROM bot_uploads WHERE bot = ? ORDER BY version",
            (bot,),
        )
        return [Upload(*row) for row in rows]

    def sandboxed_bots(self) -> list[str]:
        """The registered bots that run in the sandbox, by name."""
        rows = self._read(
            "SELECT bot FROM bot_launches JOIN bots ON bots.name = bot_launches.bot"
            " AND bots.command = bot_launches.command WHERE sandbox = 1 ORDER BY bot",
            (),
        )
        return [str(name) for (name,) in rows]

    def launch_of(self, bot: BotEntry) -> Launch:
        """How `bot` (a command bot) starts now.

        :raises BotStartError: its upload's files are missing (the bundles folder was not restored).
        """
        assert bot.command is not None
        rows = self._read(
            "SELECT bot_launches.sandbox, bot_uploads.sha256, bot_uploads.run FROM bot_launches"
            " LEFT JOIN bot_uploads ON bot_uploads.bot = bot_launches.bot"
            " AND bot_uploads.version = bot_launches.version"
            " WHERE bot_launches.bot = ? AND bot_launches.command = ?",
            (bot.name, bot.command),
        )
        if not rows:
            return Launch(bot.command)
        sandbox, sha256, run = rows[0]
        if sha256 is None:
            return Launch(bot.command, bool(sandbox))
        folder = self.folder / sha256
        if not folder.is_dir():
            raise BotStartError(f"the files of bot {bot.name!r} are missing: {folder}")
        return Launch(run, bool(sandbox), folder)

    def _read(self, query: str, parameters: tuple[object, ...]) -> list[Any]:
        if not self.db.exists():
            return []
        try:
            db = sqlite3.connect(f"{self.db.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
            try:
                return db.execute(query, parameters).fetchall()
            finally:
                db.close()
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                return []  # a ladder without uploads
            raise StoreError(f"cannot read {self.db}: {error}") from None

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """A connection in one transaction, the tables made first when missing; errors as StoreErrors."""
        try:
            db = sqlite3.connect(self.db, isolation_level=None, timeout=30.0)
        except sqlite3.Error as error:
            raise StoreError(f"cannot open {self.db}: {error}") from None
        try:
            db.executescript(_TABLES)
            db.execute("BEGIN IMMEDIATE")
            yield db
            db.execute("COMMIT")
        except sqlite3.Error as error:
            raise StoreError(f"cannot write {self.db}: {error}") from None
        finally:
            db.close()  # without a COMMIT, the transaction is rolled back
