"""The ladder's database as an open file (or server database): opening it (read-write, or read-only
when it cannot or must not be written), checking that it is a ladder and bringing an older one to this
schema version (upgrades.py), its transactions, and the database's errors as StoreErrors; and the base of
the store's parts (`StorePart`), which all read and write through one open file.

Every error, at opening or later, is a StoreError whose message is one line that names the file: a file
of another program, a damaged one, one the arena cannot write or create, one locked past the timeout.
A foreign or damaged file is refused before anything in it is changed. The file uses SQLite's
write-ahead log; a read-only file is read through a writer's shared memory when one has it open.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import math
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TypeVar, cast

from sqlalchemy import Column, ColumnElement, Connection, Table, null
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError

from arena.errors import ArenaError
from arena.ladder.store.bundles import bundles_folder
from arena.ladder.store.database import (
    DatabaseError,
    begin_writing,
    check_columns,
    column_names,
    columns_by_relation,
    file_connection,
    is_server_url,
    prepare_schema,
    relation_names,
    schema_version,
    server_connection,
    server_url,
    shown,
)
from arena.ladder.store.schema import _ADDED_COLUMNS, _ADDED_RELATIONS, _COLUMNS, DEFAULT_DB, SCHEMA_VERSION
from arena.ladder.store.upgrades import Upgrade


def is_integer(value: Any) -> bool:
    """A whole number (not a bool), as the arena writes them."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite number, as the arena writes them (an edited file may hold 1e999 or a string)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class StoreError(ArenaError, ValueError):
    """A request the store refuses (a duplicate or unknown bot), or a file it cannot use (not a ladder,
    damaged, read-only, locked); the message is one line that names the file."""


class StoreUnreachableError(StoreError):
    """A server database that cannot be reached now (restarted, the network cut, shutting down): the one
    StoreError worth waiting out (outages.py); a SQLite file's errors never are."""


class DuplicateMatchError(StoreError):
    """A match of a set's rotation that is stored already (another runner played it)."""


class RatingsChangedError(StoreError):
    """A rating event computed from ratings that changed before it was saved (another runner rated a set
    of the same bots meanwhile): nothing was saved; compute it again from the ratings as they are now."""


DATABASE_ERRORS: Final = (sqlite3.Error, SQLAlchemyError, DatabaseError)
"""What a database may raise; the store turns each into a StoreError (`StoreFile._store_error`)."""

_Method = TypeVar("_Method", bound=Callable[..., Any])
_Class = TypeVar("_Class", bound=type)


def _store_errors(method: _Method) -> _Method:
    """`method`, with any SQLite error turned into a StoreError that names the file and says what it
    means: the command line shows StoreErrors as one line, and nothing else of SQLite leaks out."""

    @functools.wraps(method)
    def wrapper(self: StoreFile | StorePart, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except DATABASE_ERRORS as error:
            self._forget_lost_connection()
            raise self._store_error(error) from None

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
    """An open ladder file: the connection, its transactions, its errors. The store's parts share one
    (`StorePart`); `close()` closes it.

    `read_only`: None opens a file that cannot be written read-only (the read commands still work) and
    any other read-write; False refuses a file that cannot be written; True never writes. Every error,
    at opening or later, is a StoreError that names the file.
    """

    def __init__(
        self, path: str | Path = DEFAULT_DB, *, read_only: bool | None = None, timeout: float = 30.0
    ) -> None:
        self.timeout = timeout
        """Seconds to wait for another program's write to finish before giving up."""
        self._db: sqlite3.Connection
        """A SQLite file's own connection, which `_conn` runs over; the upgrades of older files use it
        directly. A server database has none."""
        self._absent: set[tuple[str, str]] = set()
        """The (relation, column) pairs of later versions that a read-only database of an older version
        lacks: reads take them as NULL (`_column`). A writable one is upgraded on opening: none."""
        if isinstance(path, str) and is_server_url(path):
            self._open_server(path, read_only)
            return
        self.path = Path(path)
        self.name = str(self.path)
        """The database as messages name it: the file's path, or a server database's URL."""
        self.files_stem = self.path
        """Where the files kept beside the ladder start their names (`{stem}-logs/`, `{stem}.bundles/`):
        the SQLite file itself, or for a server database a name in the working folder."""
        self._read_only_reason = self._unwritable_reason()
        if read_only is False and self._read_only_reason:
            raise StoreError(f"{self.name} is read-only ({self._read_only_reason}); this command changes it")
        if read_only and not self._read_only_reason:
            self._read_only_reason = "opened read-only"
        self.read_only = bool(self._read_only_reason)
        self._db = self._connect()
        try:
            # The store's connection (SQLAlchemy Core) over that SQLite connection: one transaction for
            # both.
            self._conn = file_connection(self._db)
        except BaseException:
            self._db.close()
            raise
        try:
            self._prepare()
        except BaseException:
            self._conn.close()
            raise

    def _open_server(self, location: str, read_only: bool | None) -> None:
        """Open a PostgreSQL database: the relations created or checked by database.py's one path."""
        url = server_url(location)
        self.name = shown(url)
        self.path = Path(self.name)
        self.files_stem = Path.cwd() / _file_name(f"{url.host or 'localhost'}-{url.database}")
        self._read_only_reason = "opened read-only" if read_only else ""
        self.read_only = bool(read_only)
        self._conn = server_connection(url, self.timeout)
        try:
            if self.read_only:
                version = schema_version(self._conn, self.name)
                if version is not None:
                    self._absent = check_columns(self._conn, self.name, version)
            else:
                prepare_schema(self._conn, self.name, bundles_folder(self.files_stem))
        except BaseException:
            self._conn.close()
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
        if Path(f"{self.name}-shm").exists():
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
        """Check that the file is a ladder (before changing anything in it), then upgrade a file of an
        older version when allowed, and create what is missing by the one path of both dialects
        (database.prepare_schema)."""
        version = self._version()
        absent = self._check_columns(version, every_relation=self.read_only)
        if self.read_only:
            self._absent = absent
            if version is not None and version < SCHEMA_VERSION:
                Upgrade(self).derive_for_reading(version)
            return
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        if version is not None and version < SCHEMA_VERSION:
            with self._transaction():
                version = self._version()  # again, under the lock: another runner may have been first
                if version is not None and version < SCHEMA_VERSION:
                    Upgrade(self).upgrade(version)
        prepare_schema(self._conn, self.name)

    def _column(self, column: Column[Any]) -> ColumnElement[Any]:
        """`column` in a SELECT: NULL for a read-only database of an older version that lacks it."""
        relation = column.table
        assert isinstance(relation, Table)
        if (relation.name, column.name) in self._absent:
            return null().label(column.name)
        return column

    def _has_column(self, relation: str, column: str) -> bool:
        """Whether the file has `column` (a read-only file of an older version may lack it)."""
        return column in self._columns(relation)

    def _columns(self, relation: str) -> set[str]:
        """The columns the file's own `relation` has (none when it lacks it); temporary relations of the
        same name, made to read an older file, are not looked at."""
        return column_names(self._conn, relation)

    def _relations(self) -> set[str]:
        """The database's own relations (a read-only file of an older version may lack some)."""
        return relation_names(self._conn)

    def _version(self) -> int | None:
        """The file's schema version, None for a file without relations; refuses another program's file and
        a newer arena's."""
        return schema_version(self._conn, self.name)

    def _check_columns(self, version: int | None, every_relation: bool) -> set[tuple[str, str]]:
        """Refuse a file whose relations lack columns that this version reads (CREATE TABLE IF NOT EXISTS
        keeps a relation of another shape); with `every_relation`, refuse a missing relation too. Columns
        added after the file's version are not needed yet (the upgrade adds them): returns those it lacks.
        (The messages say "table", as the SQL does.)"""
        later = range((version or 0) + 1, SCHEMA_VERSION + 1)
        excused = {
            (relation, column)
            for step in later
            for relation, column, _declaration in _ADDED_COLUMNS.get(step, ())
        }
        added_relations = {relation for step in later for relation in _ADDED_RELATIONS.get(step, ())}
        present_by_relation = columns_by_relation(self._conn)
        absent = set()
        for relation, columns in _COLUMNS.items():
            present = present_by_relation.get(relation, set())
            if not present:
                if every_relation and relation not in added_relations:
                    raise StoreError(f"{self.name} is not a ladder database (it has no table {relation!r})")
                continue
            lacking_here = [column for column in columns if column not in present]
            absent |= {(relation, column) for column in lacking_here}
            refused = [column for column in lacking_here if (relation, column) not in excused]
            if refused:
                lacking = f"table {relation!r} has no column {', '.join(refused)}"
                raise StoreError(f"{self.name} is not a ladder database ({lacking})")
        return absent

    def _forget_lost_connection(self) -> None:
        """After the server dropped the connection (a restart, a network cut), clear SQLAlchemy's state of
        it, so that the next call connects again instead of failing forever."""
        connection = getattr(self, "_conn", None)
        if connection is not None and connection.invalidated:
            with contextlib.suppress(*DATABASE_ERRORS):
                connection.rollback()

    def _store_error(self, error: Exception) -> StoreError:
        """The StoreError for an error of the database (one of DATABASE_ERRORS): one line that names it."""
        if isinstance(error, DBAPIError):
            if isinstance(error.orig, sqlite3.Error):
                return StoreError(self._explain(error.orig))
            if _unreachable(error):
                return StoreUnreachableError(self._explain_server(error))
            return StoreError(self._explain_server(error))
        if isinstance(error, sqlite3.Error):
            return StoreError(self._explain(error))
        if isinstance(error, DatabaseError):
            return StoreError(str(error))  # it names the database itself
        lines = str(error).splitlines() or [type(error).__name__]
        return StoreError(f"{getattr(self, 'name', 'the ladder')}: {lines[0]}")

    def _explain(self, error: sqlite3.Error) -> str:
        """One line for a SQLite error: what it means for this file."""
        name = getattr(error, "sqlite_errorname", "") or ""
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return f"{self.name} is locked by another program (waited {self.timeout:g} s); try again later"
        if name.startswith("SQLITE_READONLY"):
            return f"{self.name} is read-only ({error}); nothing was changed"
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            return f"{self.name} is damaged or not a ladder database ({error})"
        if name.startswith("SQLITE_FULL"):
            return f"{self.name}: the disk is full ({error}); nothing was changed"
        if name.startswith("SQLITE_CANTOPEN"):
            return f"cannot open {self.name} ({error})"
        if "no such column" in str(error) or "no such table" in str(error):
            return f"{self.name} is not a ladder database of this arena ({error})"
        return f"{self.name}: database error: {error}"

    def _explain_server(self, error: DBAPIError) -> str:
        """One line for a PostgreSQL error (psycopg's, through SQLAlchemy)."""
        lines = str(error.orig).strip().splitlines()
        detail = lines[0] if lines else type(error.orig).__name__
        if _unreachable(error):
            return f"cannot reach {self.name} ({detail})"
        return f"{self.name}: database error: {detail}"

    def close(self) -> None:
        """Close the file (or the connection to the server)."""
        self._conn.close()  # and SQLite's own connection under it

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        if self.read_only:
            raise StoreError(f"{self.name} is read-only ({self._read_only_reason}); nothing was changed")
        with begin_writing(self._conn):
            yield

    def _decoded(self, text: Any, what: str) -> Any:
        """A JSON column's value; a damaged one (the file was edited by hand?) is a StoreError."""
        try:
            return json.loads(text)
        except (TypeError, ValueError, RecursionError):
            raise self._damaged(what) from None

    def _damaged(self, what: str) -> StoreError:
        return StoreError(f"{self.name} is damaged: {what} does not hold what the arena wrote")


class StorePart:
    """A part of the store (its bots, sets, matches...): its queries, run over the one open file that all
    the parts of a `LadderStore` share. Every public method of a part is wrapped by
    `every_method_store_errors`, so its database errors are StoreErrors that name the file."""

    def __init__(self, file: StoreFile) -> None:
        self._file = file

    @property
    def name(self) -> str:
        """The database as messages name it (StoreFile.name)."""
        return self._file.name

    @property
    def _conn(self) -> Connection:
        return self._file._conn

    def _transaction(self) -> contextlib.AbstractContextManager[None]:
        return self._file._transaction()

    def _column(self, column: Column[Any]) -> ColumnElement[Any]:
        return self._file._column(column)

    def _has_column(self, relation: str, column: str) -> bool:
        return self._file._has_column(relation, column)

    def _relations(self) -> set[str]:
        return self._file._relations()

    def _decoded(self, text: Any, what: str) -> Any:
        return self._file._decoded(text, what)

    def _damaged(self, what: str) -> StoreError:
        return self._file._damaged(what)

    def _store_error(self, error: Exception) -> StoreError:
        return self._file._store_error(error)

    def _forget_lost_connection(self) -> None:
        self._file._forget_lost_connection()


def _unreachable(error: DBAPIError) -> bool:
    """Whether a server's error says it cannot be reached now (refused, gone, restarting, the connection
    dropped), rather than that it refused what was asked."""
    return isinstance(error, OperationalError) or error.connection_invalidated


def _file_name(text: str) -> str:
    """`text` as a file name: letters, digits, `.`, `_` and `-` kept, anything else `_`."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip(".") or "ladder"
