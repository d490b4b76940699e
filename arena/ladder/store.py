"""The ladder's SQLite file: registered bots, duplicate sets, finished matches, ratings.

Every finished match is written in its own transaction the moment it ends, and a set's rating event is
applied in one transaction with the check that it was not applied before, so a ladder killed at any
point (even by SIGKILL) loses no finished match and never rates a set twice; the next run resumes the
unfinished sets. A set in which the arena itself failed (an error of ours, not of a bot) is made void:
kept in the history, never rated, never resumed. The file uses SQLite's write-ahead log.

Schema versions: 1 (first release); 2 adds `sets.void_reason`. A file of an older version is upgraded in
place when it is opened.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar, cast

from arena.ladder.elo import START_RATING
from fiftysix.engine import MatchRules, Ruleset
from fiftysix.wire import FaultRecord

SCHEMA_VERSION: Final = 2
DEFAULT_DB: Final = "arena.db"

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    address TEXT,
    command TEXT,
    rating REAL NOT NULL,
    probation TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    CHECK ((address IS NULL) <> (command IS NULL))
);
CREATE TABLE IF NOT EXISTS sets (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    players INTEGER NOT NULL,
    ruleset TEXT NOT NULL,
    deal_cap INTEGER,
    seed INTEGER NOT NULL,
    bots TEXT NOT NULL,
    rotations INTEGER NOT NULL,
    rated_at REAL,
    void_reason TEXT
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    set_id INTEGER NOT NULL REFERENCES sets (id),
    rotation INTEGER NOT NULL,
    team_bots TEXT NOT NULL,
    finished_at REAL NOT NULL,
    reason TEXT NOT NULL,
    ranking TEXT NOT NULL,
    bot_ranks TEXT NOT NULL,
    faults TEXT NOT NULL,
    record TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    seconds REAL NOT NULL,
    UNIQUE (set_id, rotation)
);
CREATE TABLE IF NOT EXISTS rating_events (
    set_id INTEGER NOT NULL REFERENCES sets (id),
    bot TEXT NOT NULL,
    before REAL NOT NULL,
    after REAL NOT NULL,
    PRIMARY KEY (set_id, bot)
);
"""


_ADDED_COLUMNS: Final = {2: (("sets", "void_reason", "TEXT"),)}
"""For each schema version, the columns it added to tables of the version before: `_upgrade` adds them,
and a read-only file of an older version is read without them."""


def _columns_of(schema: str) -> dict[str, tuple[str, ...]]:
    """Each table of `schema` with its columns, from SQLite itself (the schema text stays the one source)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema)
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})")) for table in tables}
    finally:
        db.close()


_COLUMNS: Final = _columns_of(_SCHEMA)


class StoreError(ValueError):
    """A request the store refuses (a duplicate or unknown bot), or a file it cannot use (not a ladder,
    damaged, read-only, locked); the message is one line that names the file."""


class DuplicateMatchError(StoreError):
    """A match of a set's rotation that is stored already (another runner played it)."""


class RatingsChangedError(StoreError):
    """A rating event computed from ratings that changed before it was saved (another runner rated a set
    of the same bots meanwhile): nothing was saved; compute it again from the ratings as they are now."""


@dataclass(frozen=True, slots=True)
class BotEntry:
    """A registered bot: reached at `address` (host:port), or started from `command` by the arena."""

    name: str
    address: str | None
    command: str | None
    rating: float
    probation: str | None

    @property
    def where(self) -> str:
        """The address, or the command that starts the bot."""
        return self.address if self.address is not None else f"command: {self.command}"


@dataclass(frozen=True, slots=True)
class DuplicateSet:
    """A pairing played as one match per rotation of the teams over the seats, on the same deals."""

    id: int
    players: int
    ruleset: str
    deal_cap: int | None
    seed: int
    bots: tuple[str, ...]
    rotations: int

    def team_bots(self, rotation: int) -> tuple[str, ...]:
        """The bot of each team in a rotation: rotation r moves every bot r teams on."""
        count = len(self.bots)
        return tuple(self.bots[(team - rotation) % count] for team in range(count))


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One bot's part in a set's rating event: its rating before the set and after it."""

    bot: str
    before: float
    after: float


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A finished match as the ladder keeps it."""

    id: str
    set_id: int
    rotation: int
    team_bots: tuple[str, ...]
    reason: str
    ranking: tuple[int, ...]
    bot_ranks: dict[str, int]
    faults: tuple[FaultRecord, ...]
    decisions: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """The match as a JSON-ready dictionary (faults as the store keeps them)."""
        return {
            "id": self.id,
            "set_id": self.set_id,
            "rotation": self.rotation,
            "team_bots": list(self.team_bots),
            "reason": self.reason,
            "ranking": list(self.ranking),
            "bot_ranks": dict(self.bot_ranks),
            "faults": [fault.to_json() for fault in self.faults],
            "decisions": self.decisions,
            "seconds": self.seconds,
        }


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_list_of(value: Any, kind: type) -> bool:
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def _are_rules(players: int, ruleset: str, deal_cap: int | None) -> bool:
    """Whether a stored set's settings make a match (the ladder plays it next)."""
    try:
        MatchRules(players, Ruleset.parse(ruleset), deal_cap)
    except ValueError:
        return False
    return True


_Method = TypeVar("_Method", bound=Callable[..., Any])
_Class = TypeVar("_Class", bound=type)


def _store_errors(method: _Method) -> _Method:
    """`method`, with any SQLite error turned into a StoreError that names the file and says what it
    means: the command line shows StoreErrors as one line, and nothing else of SQLite leaks out."""

    @functools.wraps(method)
    def wrapper(self: LadderStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as error:
            raise StoreError(self._explain(error)) from None

    return cast(_Method, wrapper)


def _every_method_store_errors(cls: _Class) -> _Class:
    """Wrap every public method (and `__init__`) of `cls` with `_store_errors`, so that a method added
    later cannot forget it."""
    for name, value in list(vars(cls).items()):
        if inspect.isfunction(value) and (not name.startswith("_") or name == "__init__"):
            setattr(cls, name, _store_errors(value))
    return cls


@_every_method_store_errors
class LadderStore:
    """The ladder's SQLite file. Open it with `LadderStore(path)`; close it with `close()`.

    `read_only`: None opens a file that cannot be written read-only (the read commands still work) and
    any other read-write; False refuses a file that cannot be written; True never writes. Every error,
    at opening or later, is a StoreError that names the file.
    """

    def __init__(
        self, path: str | Path = DEFAULT_DB, *, read_only: bool | None = None, timeout: float = 30.0
    ) -> None:
        self.path = Path(path)
        self.timeout = timeout
        """Seconds to wait for another program's write to finish before giving up."""
        self._read_only_reason = self._unwritable_reason()
        if read_only is False and self._read_only_reason:
            raise StoreError(f"{self.path} is read-only ({self._read_only_reason}); this command changes it")
        if read_only and not self._read_only_reason:
            self._read_only_reason = "opened read-only"
        self.read_only = bool(self._read_only_reason)
        self._db = self._connect()
        try:
            self._prepare()
        except BaseException:
            self._db.close()
            raise

    def _unwritable_reason(self) -> str:
        """Why the file cannot be written ("" when it can), or a StoreError when it cannot be used."""
        path, folder = self.path, self.path.parent
        try:
            if path.is_dir():
                raise StoreError(f"{path} is a directory, not a ladder database file")
            if not path.exists():
                if not folder.is_dir():
                    raise StoreError(f"cannot create {path}: the folder {folder} does not exist")
                if not os.access(folder, os.W_OK | os.X_OK):
                    raise StoreError(f"cannot create {path}: no permission to write in {folder}")
                return ""
        except OSError as error:
            raise StoreError(f"cannot open {path}: {error.strerror}") from None
        if not os.access(path, os.R_OK):
            raise StoreError(f"cannot read {path}: permission denied")
        if not os.access(path, os.W_OK):
            return "no permission to write it"
        if not os.access(folder, os.W_OK | os.X_OK):
            # The write-ahead log lives beside the file.
            return f"no permission to write in its folder {folder}"
        return ""

    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            return sqlite3.connect(self.path, isolation_level=None, timeout=self.timeout)
        uri = self.path.resolve().as_uri()
        if Path(f"{self.path}-shm").exists():
            # A writer may have the file open: read through its shared memory, consistently.
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, timeout=self.timeout)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return db
            except sqlite3.OperationalError:
                db.close()
        # Nobody has it open (or we cannot share the memory): read the file as it is on disk, without
        # creating files beside it that its owner could not write later.
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None)

    def _prepare(self) -> None:
        """Check that the file is a ladder (before changing anything in it), then create or upgrade the
        tables when needed and allowed."""
        version = self._version()
        self._check_columns(version, all_tables=self.read_only)
        if self.read_only:
            return
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        if version != SCHEMA_VERSION or not _COLUMNS.keys() <= self._tables():
            with self._transaction():
                version = self._version()  # again, under the lock: another runner may have been first
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                if version is None:
                    self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                elif version < SCHEMA_VERSION:
                    self._upgrade(version)
            self._check_columns(SCHEMA_VERSION, all_tables=True)

    def _tables(self) -> set[str]:
        rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {name for (name,) in rows if not name.startswith("sqlite_")}

    def _version(self) -> int | None:
        """The file's schema version, None for a file without tables; refuses another program's file and
        a newer arena's."""
        tables = self._tables()
        if not tables:
            return None
        row = None
        if "meta" in tables:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        text = str(row[0]) if row is not None else ""
        if not text.isdecimal() or len(text) > 9:
            listed = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
            raise StoreError(f"{self.path} is not a ladder database (it holds other tables: {listed})")
        if int(text) > SCHEMA_VERSION:
            raise StoreError(f"{self.path} was written by a newer arena (schema {text})")
        return int(text)

    def _check_columns(self, version: int | None, all_tables: bool) -> None:
        """Refuse a file whose tables lack columns that this version reads (CREATE TABLE IF NOT EXISTS
        keeps a table of another shape); with `all_tables`, refuse a missing table too. Columns added
        after the file's version are not needed yet: the upgrade adds them."""
        excused = {
            (table, column)
            for step in range((version or 0) + 1, SCHEMA_VERSION + 1)
            for table, column, _declaration in _ADDED_COLUMNS.get(step, ())
        }
        for table, columns in _COLUMNS.items():
            present = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            if not present:
                if all_tables:
                    raise StoreError(f"{self.path} is not a ladder database (it has no table {table!r})")
                continue
            missing = [
                column for column in columns if column not in present and (table, column) not in excused
            ]
            if missing:
                lacking = f"table {table!r} has no column {', '.join(missing)}"
                raise StoreError(f"{self.path} is not a ladder database ({lacking})")

    def _upgrade(self, version: int) -> None:
        """Bring a file of an older schema version to this one, inside the opening transaction."""
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for table, column, declaration in _ADDED_COLUMNS.get(step, ()):
                present = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
                if column not in present:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))

    def _explain(self, error: sqlite3.Error) -> str:
        """One line for a SQLite error: what it means for this file."""
        name = getattr(error, "sqlite_errorname", "") or ""
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return f"{self.path} is locked by another program (waited {self.timeout:g} s); try again later"
        if name.startswith("SQLITE_READONLY"):
            return f"{self.path} is read-only ({error}); nothing was changed"
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            return f"{self.path} is damaged or not a ladder database ({error})"
        if name.startswith("SQLITE_FULL"):
            return f"{self.path}: the disk is full ({error}); nothing was changed"
        if name.startswith("SQLITE_CANTOPEN"):
            return f"cannot open {self.path} ({error})"
        if "no such column" in str(error) or "no such table" in str(error):
            return f"{self.path} is not a ladder database of this arena ({error})"
        return f"{self.path}: database error: {error}"

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        if self.read_only:
            raise StoreError(f"{self.path} is read-only ({self._read_only_reason}); nothing was changed")
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:  # SQLite rolls back by itself after some errors
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _decoded(self, text: Any, what: str) -> Any:
        """A JSON column's value; a damaged one (the file was edited by hand?) is a StoreError."""
        try:
            return json.loads(text)
        except (TypeError, ValueError, RecursionError):
            raise self._damaged(what) from None

    def _damaged(self, what: str) -> StoreError:
        return StoreError(f"{self.path} is damaged: {what} does not hold what the arena wrote")

    # Bots.

    def add_bot(self, name: str, address: str | None = None, command: str | None = None) -> BotEntry:
        """Register a bot by address or by command; a name already taken is refused."""
        if (address is None) == (command is None):
            raise StoreError("a bot has either an address or a command")
        now = time.time()
        try:
            with self._transaction():
                self._db.execute(
                    "INSERT INTO bots (name, address, command, rating, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (name, address, command, START_RATING, now, now),
                )
        except sqlite3.IntegrityError:
            raise StoreError(f"a bot named {name!r} is already registered") from None
        return self.bot(name)

    def bot(self, name: str) -> BotEntry:
        """The bot registered as `name`."""
        row = self._db.execute(
            "SELECT name, address, command, rating, probation FROM bots WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            raise StoreError(f"no bot named {name!r} is registered")
        return self._bot_entry(row)

    def bots(self) -> list[BotEntry]:
        """Every registered bot, by name."""
        rows = self._db.execute("SELECT name, address, command, rating, probation FROM bots ORDER BY name")
        return [self._bot_entry(row) for row in rows]

    def _bot_entry(self, row: Sequence[Any]) -> BotEntry:
        name, address, command, rating, probation = row
        if not (
            isinstance(name, str)
            and all(value is None or isinstance(value, str) for value in (address, command, probation))
            and _is_number(rating)
        ):
            raise self._damaged(f"the row of bot {name!r}")
        return BotEntry(name, address, command, float(rating), probation)

    def update_bot(self, name: str, address: str | None = None, command: str | None = None) -> BotEntry:
        """Give a bot a new address or command (its rating and history stay)."""
        self.bot(name)
        if (address is None) == (command is None):
            raise StoreError("give either a new address or a new command")
        with self._transaction():
            self._db.execute(
                "UPDATE bots SET address = ?, command = ?, updated_at = ? WHERE name = ?",
                (address, command, time.time(), name),
            )
        return self.bot(name)

    def remove_bot(self, name: str) -> None:
        """Unregister a bot; its finished matches stay in the history."""
        self.bot(name)
        with self._transaction():
            self._db.execute("DELETE FROM bots WHERE name = ?", (name,))

    def set_probation(self, name: str, reason: str | None) -> None:
        """Put a bot on probation (skipped by the ladder) with a reason, or take it off with None."""
        self.bot(name)
        with self._transaction():
            self._db.execute(
                "UPDATE bots SET probation = ?, updated_at = ? WHERE name = ?", (reason, time.time(), name)
            )

    # Sets and matches.

    def create_set(
        self, players: int, ruleset: str, deal_cap: int | None, seed: int, bots: Sequence[str]
    ) -> DuplicateSet:
        """Record a new duplicate set before its first match is played."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO sets (created_at, players, ruleset, deal_cap, seed, bots, rotations)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (time.time(), players, ruleset, deal_cap, seed, json.dumps(list(bots)), len(bots)),
            )
        assert cursor.lastrowid is not None
        return DuplicateSet(cursor.lastrowid, players, ruleset, deal_cap, seed, tuple(bots), len(bots))

    def unfinished_sets(self) -> list[tuple[DuplicateSet, list[int]]]:
        """Sets not rated yet, each with the rotations still to play (possibly none)."""
        rows = self._db.execute(
            "SELECT id, players, ruleset, deal_cap, seed, bots, rotations FROM sets"
            " WHERE rated_at IS NULL AND void_reason IS NULL ORDER BY id"
        ).fetchall()
        unfinished = []
        for set_id, players, ruleset, deal_cap, seed, bots_json, rotations in rows:
            bots = self._decoded(bots_json, f"the bots of set {set_id}")
            if not (
                all(_is_integer(value) for value in (set_id, players, seed, rotations))
                and isinstance(ruleset, str)
                and (deal_cap is None or _is_integer(deal_cap))
                and _is_list_of(bots, str)
                and rotations == len(bots)
                and _are_rules(players, ruleset, deal_cap)
            ):
                raise self._damaged(f"set {set_id}")
            duplicate = DuplicateSet(set_id, players, ruleset, deal_cap, seed, tuple(bots), rotations)
            done = {
                played
                for (played,) in self._db.execute(
                    "SELECT rotation FROM matches WHERE set_id = ?", (duplicate.id,)
                )
            }
            unfinished.append((duplicate, [r for r in range(duplicate.rotations) if r not in done]))
        return unfinished

    def save_match(
        self,
        match_id: str,
        duplicate: DuplicateSet,
        rotation: int,
        reason: str,
        ranking: Sequence[int],
        faults: Sequence[FaultRecord],
        record: dict[str, Any],
        decisions: int,
        seconds: float,
    ) -> None:
        """Store a finished match at once, in its own transaction.

        :raises DuplicateMatchError: when this rotation of the set is stored already.
        """
        team_bots = duplicate.team_bots(rotation)
        bot_ranks = {bot: ranking[team] for team, bot in enumerate(team_bots)}
        try:
            with self._transaction():
                self._db.execute(
                    "INSERT INTO matches (id, set_id, rotation, team_bots, finished_at, reason, ranking,"
                    " bot_ranks, faults, record, decisions, seconds)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        match_id,
                        duplicate.id,
                        rotation,
                        json.dumps(list(team_bots)),
                        time.time(),
                        reason,
                        json.dumps(list(ranking)),
                        json.dumps(bot_ranks),
                        json.dumps([fault.to_json() for fault in faults]),
                        json.dumps(record),
                        decisions,
                        seconds,
                    ),
                )
        except sqlite3.IntegrityError:
            raise DuplicateMatchError(
                f"set {duplicate.id} rotation {rotation} is stored already (by another runner?)"
            ) from None

    def void_set(self, set_id: int, reason: str) -> None:
        """Mark a set void: its stored matches stay in the history, it is never rated nor resumed."""
        with self._transaction():
            self._db.execute(
                "UPDATE sets SET void_reason = ? WHERE id = ? AND rated_at IS NULL", (reason, set_id)
            )

    def void_reason(self, set_id: int) -> str | None:
        """Why a set is void, or None."""
        row = self._db.execute("SELECT void_reason FROM sets WHERE id = ?", (set_id,)).fetchone()
        return None if row is None else row[0]

    def matches(self, set_id: int | None = None) -> list[StoredMatch]:
        """Finished matches (of one set, or all), oldest first."""
        if set_id is None:
            return self._select_matches("", (), "finished_at, id")
        return self._select_matches("WHERE set_id = ?", (set_id,), "finished_at, id")

    def recent_matches(self, bot: str | None, count: int) -> list[StoredMatch]:
        """The last `count` finished matches (that `bot` played, when given), newest first."""
        if bot is None:
            return self._select_matches("", (), "finished_at DESC, id DESC", count)
        return self._select_matches(
            "WHERE json_extract(bot_ranks, '$.' || json_quote(?)) IS NOT NULL",
            (bot,),
            "finished_at DESC, id DESC",
            count,
        )

    def _select_matches(
        self, where: str, parameters: tuple[Any, ...], order: str, limit: int = -1
    ) -> list[StoredMatch]:
        rows = self._db.execute(
            "SELECT id, set_id, rotation, team_bots, reason, ranking, bot_ranks, faults, decisions, seconds"
            f" FROM matches {where} ORDER BY {order} LIMIT ?",
            (*parameters, limit),
        )
        return [self._stored_match(row) for row in rows]

    def _stored_match(self, row: Sequence[Any]) -> StoredMatch:
        """A row of `matches`, checked: a damaged row is a StoreError, not a crash in the standings."""
        match_id, set_id, rotation, team_bots, reason, ranking, bot_ranks, faults, decisions, seconds = row
        what = f"match {match_id!r}"
        team_bots = self._decoded(team_bots, f"the bots of {what}")
        ranking = self._decoded(ranking, f"the ranking of {what}")
        bot_ranks = self._decoded(bot_ranks, f"the ranks of {what}")
        faults = self._decoded(faults, f"the faults of {what}")
        if not (
            isinstance(match_id, str)
            and all(_is_integer(value) for value in (set_id, rotation, decisions))
            and isinstance(reason, str)
            and _is_number(seconds)
            and _is_list_of(team_bots, str)
            and _is_list_of(ranking, int)
            and isinstance(bot_ranks, dict)
            and all(_is_integer(rank) for rank in bot_ranks.values())
        ):
            raise self._damaged(what)
        return StoredMatch(
            match_id,
            set_id,
            rotation,
            tuple(team_bots),
            reason,
            tuple(ranking),
            bot_ranks,
            self._faults(faults, len(team_bots), f"the faults of {what}"),
            decisions,
            float(seconds),
        )

    def _faults(self, stored: Any, teams: int, what: str) -> tuple[FaultRecord, ...]:
        """The faults of a match, as `save_match` wrote them: each of one of its `teams`."""
        if not isinstance(stored, list):
            raise self._damaged(what)
        try:
            faults = tuple(FaultRecord.from_json(fault) for fault in stored)
        except ValueError:
            raise self._damaged(what) from None
        if any(fault.team >= teams for fault in faults):
            raise self._damaged(what)
        return faults

    def match_record(self, match_id: str) -> dict[str, Any]:
        """The game record of a stored match."""
        row = self._db.execute("SELECT record FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            raise StoreError(f"no match {match_id!r}")
        record = self._decoded(row[0], f"the record of match {match_id!r}")
        if not isinstance(record, dict):
            raise self._damaged(f"the record of match {match_id!r}")
        return record

    def ratings(self, bots: Iterable[str]) -> dict[str, float]:
        """The current rating of each of `bots` that has one: a registered bot's, or a removed bot's last
        (from its rating events). A bot neither registered nor ever rated is left out."""
        known = {bot: self._rating(bot) for bot in bots}
        return {bot: rating for bot, rating in known.items() if rating is not None}

    def _rating(self, bot: str) -> float | None:
        row = self._db.execute("SELECT rating FROM bots WHERE name = ?", (bot,)).fetchone()
        if row is None:
            row = self._db.execute(
                "SELECT after FROM rating_events WHERE bot = ? ORDER BY set_id DESC LIMIT 1", (bot,)
            ).fetchone()
        if row is None:
            return None
        if not _is_number(row[0]):
            raise self._damaged(f"the rating of {bot!r}")
        return float(row[0])

    def save_rating_event(self, set_id: int, changes: Sequence[RatingChange]) -> bool:
        """Apply a set's rating event in one transaction: its rows of `rating_events`, each bot's new
        rating, the set marked rated. Returns False and changes nothing when the set is rated or void
        already (or unknown), so a set is rated exactly once, whoever tries and whenever they are killed.

        :raises RatingsChangedError: changing nothing, when a bot's rating is no longer its `before`
            (another runner rated a set of that bot since it was read).
        """
        with self._transaction():
            row = self._db.execute(
                "SELECT rated_at, void_reason FROM sets WHERE id = ?", (set_id,)
            ).fetchone()
            if row is None or row[0] is not None or row[1] is not None:
                return False
            # A bot with no rating at all (neither registered nor rated) has none that could have moved.
            moved = [
                change.bot for change in changes if self._rating(change.bot) not in (None, change.before)
            ]
            if moved:
                raise RatingsChangedError(
                    f"{self.path}: ratings changed while set {set_id} was being rated (of {', '.join(moved)})"
                )
            for change in changes:
                self._db.execute(
                    "INSERT INTO rating_events VALUES (?, ?, ?, ?)",
                    (set_id, change.bot, change.before, change.after),
                )
                self._db.execute("UPDATE bots SET rating = ? WHERE name = ?", (change.after, change.bot))
            self._db.execute("UPDATE sets SET rated_at = ? WHERE id = ?", (time.time(), set_id))
        return True

    def rated_sets(self) -> set[int]:
        """The ids of the sets whose rating event was applied."""
        return {set_id for (set_id,) in self._db.execute("SELECT id FROM sets WHERE rated_at IS NOT NULL")}
