"""The ladder's SQLite file as a file: its schema and schema versions, opening it (read-write, or
read-only when it cannot or must not be written), upgrading it, its transactions, and SQLite's errors as
StoreErrors. What the file holds is read and written by the store (store.py), through this.

Every error, at opening or later, is a StoreError whose message is one line that names the file: a file
of another program, a damaged one, one the arena cannot write or create, one locked past the timeout.
A foreign or damaged file is refused before anything in it is changed. The file uses SQLite's
write-ahead log; a read-only file is read through a writer's shared memory when one has it open.

Schema versions: 1 (first release); 2 adds `sets.void_reason`; 3 adds the leases of sets (several runners
on one file) and the health of bots (see _ADDED_COLUMNS). A file of an older version is upgraded in
place when it is opened for writing, and read as it is when opened read-only.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TypeVar, cast

from arena.errors import ArenaError

SCHEMA_VERSION: Final = 3
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


_ADDED_COLUMNS: Final = {
    2: (("sets", "void_reason", "TEXT"),),
    # Version 3, leases and bot health: a set is claimed by one runner at a time (`lease_owner` until
    # `lease_until`, renewed while it plays); a set put back because a bot did not answer when it started
    # waits until `not_before` (`start_failures` doubles the wait). A bot the host failed to reach or start
    # `host_failures` times in a row is `down_since` then, until it answers again.
    3: (
        ("sets", "lease_owner", "TEXT"),
        ("sets", "lease_until", "REAL"),
        ("sets", "not_before", "REAL"),
        ("sets", "start_failures", "INTEGER NOT NULL DEFAULT 0"),
        ("bots", "down_since", "REAL"),
        ("bots", "host_failures", "INTEGER NOT NULL DEFAULT 0"),
    ),
}
"""For each schema version, the columns it added to tables of the version before: `_upgrade` adds them
(to a new file too, when its CREATE TABLE does not have them), and a read-only file of an older version
is read without them."""


def _columns_of(schema: str) -> dict[str, tuple[str, ...]]:
    """Each table of `schema` with its columns, from SQLite itself (the schema text stays the one source)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema)
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})")) for table in tables}
    finally:
        db.close()


def _with_added_columns(columns: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """`columns`, with those of `_ADDED_COLUMNS` that the CREATE TABLE statements do not have."""
    added = dict(columns)
    for step in sorted(_ADDED_COLUMNS):
        for table, column, _declaration in _ADDED_COLUMNS[step]:
            if column not in added[table]:
                added[table] = (*added[table], column)
    return added


_COLUMNS: Final = _with_added_columns(_columns_of(_SCHEMA))


class StoreError(ArenaError, ValueError):
    """A request the store refuses (a duplicate or unknown bot), or a file it cannot use (not a ladder,
    damaged, read-only, locked); the message is one line that names the file."""


class DuplicateMatchError(StoreError):
    """A match of a set's rotation that is stored already (another runner played it)."""


class RatingsChangedError(StoreError):
    """A rating event computed from ratings that changed before it was saved (another runner rated a set
    of the same bots meanwhile): nothing was saved; compute it again from the ratings as they are now."""


_Method = TypeVar("_Method", bound=Callable[..., Any])
_Class = TypeVar("_Class", bound=type)


def _store_errors(method: _Method) -> _Method:
    """`method`, with any SQLite error turned into a StoreError that names the file and says what it
    means: the command line shows StoreErrors as one line, and nothing else of SQLite leaks out."""

    @functools.wraps(method)
    def wrapper(self: StoreFile, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as error:
            raise StoreError(self._explain(error)) from None

    return cast(_Method, wrapper)


def every_method_store_errors(cls: _Class) -> _Class:
    """Wrap every public method (and `__init__`) of `cls` with `_store_errors`, so that a method added
    later cannot forget it."""
    for name, value in list(vars(cls).items()):
        if inspect.isfunction(value) and (not name.startswith("_") or name == "__init__"):
            setattr(cls, name, _store_errors(value))
    return cls


@every_method_store_errors
class StoreFile:
    """An open ladder file: the connection, its transactions, its errors. `LadderStore` builds on it;
    `close()` closes it.

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
                if version is None or version < SCHEMA_VERSION:
                    self._upgrade(version or 0)
            self._check_columns(SCHEMA_VERSION, all_tables=True)

    def _has_column(self, table: str, column: str) -> bool:
        """Whether the file has `column` (a read-only file of an older version may lack it)."""
        return any(row[1] == column for row in self._db.execute(f"PRAGMA table_info({table})"))

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
        """Bring a file of an older schema version (0: a new file) to this one, inside the opening
        transaction."""
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
