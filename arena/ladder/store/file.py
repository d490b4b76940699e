"""The ladder's SQLite file as a file: its schema and schema versions, opening it (read-write, or
read-only when it cannot or must not be written), upgrading it, its transactions, and SQLite's errors as
StoreErrors. What the file holds is read and written by the store (store.py), through this.

Every error, at opening or later, is a StoreError whose message is one line that names the file: a file
of another program, a damaged one, one the arena cannot write or create, one locked past the timeout.
A foreign or damaged file is refused before anything in it is changed. The file uses SQLite's
write-ahead log; a read-only file is read through a writer's shared memory when one has it open.

Schema versions: 1 (first release); 2 adds `sets.void_reason`; 3 keeps game records in their own table,
each match's bots in an indexed membership table, running totals per bot and pool, and ratings per pool
(see `_SCALE_TABLES`), and adds the leases of sets (several runners on one file) and the health of bots
(see `_ADDED_COLUMNS`); 4 keeps the sums the ratings are fitted from (`_FIT_TABLES`) and each rating's
interval and likelihood of superiority, and drops the moments of pairwise scores; 5 (fair play) adds a
set's seed of 128 bits (`sets.seed_high`), whether its bots were all started by the arena
(`sets.isolated`), when it was first shown live (`sets.shown_at`), and each bot's author (`bots.owner`);
6 marks the bots whose address a participant gave (`bots.participant_address`; on upgrading, those
whose address the audit log says a participant's token wrote last). A file of an older
version is upgraded in place when it is opened for writing, and read as it is when opened read-only (the
tables it lacks are then computed from it into temporary tables, at a cost that grows with its history:
upgrading it once makes reads cheap).
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple
from pathlib import Path
from typing import Any, Final, TypeVar, cast

from sqlalchemy import Column, ColumnElement, Table, delete, null
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError

from arena.errors import ArenaError
from arena.ladder.rating import (
    BotTotals,
    FittedRating,
    PoolSums,
    add_match,
    add_set,
    fit_pool,
    match_tallies,
    set_result,
)
from arena.ladder.store.database import (
    DatabaseError,
    begin_writing,
    check_columns,
    column_names,
    columns_by_table,
    file_connection,
    is_server_url,
    mark_participant_addresses,
    prepare_schema,
    replace,
    schema_version,
    server_connection,
    server_url,
    shown,
    table_names,
    void_sets_dealt_before_version_5,
)
from arena.ladder.store.entries import pool_name
from arena.ladder.store.relations import choice_sets, pair_results, places, ratings
from arena.ladder.store.schema import (
    _ADDED_COLUMNS,
    _ADDED_TABLES,
    _COLUMNS,
    _FIT_TABLES,
    _RATINGS_TABLE,
    _REMOVED_COLUMNS,
    _SCALE_INDEXES,
    _SCALE_TABLES,
    _SCHEMA,
    DEFAULT_DB,
    SCHEMA_VERSION,
)
from fiftysix.wire import FaultRecord


def is_integer(value: Any) -> bool:
    """A whole number (not a bool), as the arena writes them."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite number, as the arena writes them (an edited file may hold 1e999 or a string)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class StoreError(ArenaError, ValueError):
    """A request the store refuses (a duplicate or unknown bot), or a file it cannot use (not a ladder,
    damaged, read-only, locked); the message is one line that names the file."""


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
    def wrapper(self: StoreFile, *args: Any, **kwargs: Any) -> Any:
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
    """An open ladder file: the connection, its transactions, its errors. `LadderStore` builds on it;
    `close()` closes it.

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
        self._absent: set[tuple[str, str]] = set()
        """The (table, column) pairs of later versions that a read-only database of an older version
        lacks: reads take them as NULL (`_column`). A writable one is upgraded on opening: none."""
        """A SQLite file's own connection, which `_conn` runs over; the upgrades of older files use it
        directly. A server database has none."""
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
        """Open a PostgreSQL database: the tables created or checked by database.py's one path."""
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
                prepare_schema(self._conn, self.name)
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
        absent = self._check_columns(version, all_tables=self.read_only)
        if self.read_only:
            self._absent = absent
            if version is not None and version < SCHEMA_VERSION:
                self._derive_for_reading(version)
            return
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        if version is not None and version < SCHEMA_VERSION:
            with self._transaction():
                version = self._version()  # again, under the lock: another runner may have been first
                if version is not None and version < SCHEMA_VERSION:
                    self._upgrade(version)
        prepare_schema(self._conn, self.name)

    def _column(self, column: Column[Any]) -> ColumnElement[Any]:
        """`column` in a SELECT: NULL for a read-only database of an older version that lacks it."""
        table = column.table
        assert isinstance(table, Table)
        if (table.name, column.name) in self._absent:
            return null().label(column.name)
        return column

    def _has_column(self, table: str, column: str) -> bool:
        """Whether the file has `column` (a read-only file of an older version may lack it)."""
        return column in self._columns(table)

    def _tables(self) -> set[str]:
        """The database's own tables (a read-only file of an older version may lack some)."""
        return table_names(self._conn)

    def _version(self) -> int | None:
        """The file's schema version, None for a file without tables; refuses another program's file and
        a newer arena's."""
        return schema_version(self._conn, self.name)

    def _check_columns(self, version: int | None, all_tables: bool) -> set[tuple[str, str]]:
        """Refuse a file whose tables lack columns that this version reads (CREATE TABLE IF NOT EXISTS
        keeps a table of another shape); with `all_tables`, refuse a missing table too. Columns added
        after the file's version are not needed yet (the upgrade adds them): returns those it lacks."""
        later = range((version or 0) + 1, SCHEMA_VERSION + 1)
        excused = {
            (table, column) for step in later for table, column, _declaration in _ADDED_COLUMNS.get(step, ())
        }
        added_tables = {table for step in later for table in _ADDED_TABLES.get(step, ())}
        present_by_table = columns_by_table(self._conn)
        absent = set()
        for table, columns in _COLUMNS.items():
            present = present_by_table.get(table, set())
            if not present:
                if all_tables and table not in added_tables:
                    raise StoreError(f"{self.name} is not a ladder database (it has no table {table!r})")
                continue
            lacking_here = [column for column in columns if column not in present]
            absent |= {(table, column) for column in lacking_here}
            refused = [column for column in lacking_here if (table, column) not in excused]
            if refused:
                lacking = f"table {table!r} has no column {', '.join(refused)}"
                raise StoreError(f"{self.name} is not a ladder database ({lacking})")
        return absent

    def _upgrade(self, version: int) -> None:
        """Bring a file of an older schema version to this one, inside the opening transaction: the tables
        it lacks created as their version first had them, the columns added since, the data moved, the
        indexes made. (A server database began at version 4; prepare_schema adds the later columns.)"""
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                self._db.execute(statement)
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for table, column, declaration in _ADDED_COLUMNS.get(step, ()):
                if column not in self._columns(table):
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
            for upgrade in _DATA_UPGRADES.get(step, ()):
                upgrade(self)
        for statement in _SCALE_INDEXES.split(";"):
            if statement.strip():
                self._db.execute(statement)
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))

    # Version 3 (scale): moving an older file's data into the new tables, or reading an older file.

    def _upgrade_scale(self) -> None:
        """Move the game records into `match_records`, fill the membership, totals and pools from the
        history, and drop the columns moved."""
        # A file of version 1 without a match (or a bot) got its table created in the new shape.
        if "record" in self._columns("matches"):
            self._db.execute("INSERT INTO match_records SELECT id, record FROM matches")
        self._fill_scale_tables()
        self._drop_removed_columns(3)

    def _drop_removed_columns(self, version: int) -> None:
        for table, column in _REMOVED_COLUMNS[version]:
            if column in self._columns(table):
                self._db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")

    def _columns(self, table: str) -> set[str]:
        """The columns the file's own `table` has (none when it lacks the table); temporary tables of the
        same name, made to read an older file, are not looked at."""
        return column_names(self._conn, table)

    def _derive_for_reading(self, version: int) -> None:
        """Read an older file as it is: the tables of later versions computed into temporary ones, its
        records read where they are. A temporary `ratings` (the fit's) shadows a version-3 file's own (the
        sequential Elo's): SQLite reads the temporary schema first."""
        if version < 3:
            self._db.execute(
                "CREATE TEMP VIEW match_records AS SELECT id AS match_id, record FROM main.matches"
            )
            for statement in _SCALE_TABLES.split(";"):
                if "match_records" not in statement and statement.strip():
                    self._db.execute(statement.replace("CREATE TABLE IF NOT EXISTS", "CREATE TEMP TABLE"))
            self._fill_scale_tables()
        if version >= 4:
            return  # a version-4 file lacks columns only (read as NULL: `_column`)
        for statement in (_RATINGS_TABLE + _FIT_TABLES).split(";"):
            if statement.strip():
                self._db.execute(statement.replace("CREATE TABLE IF NOT EXISTS", "CREATE TEMP TABLE"))
        if version == 3:  # its pools lack the count of rated sets
            self._db.execute(
                "CREATE TEMP TABLE pools AS SELECT name, matches, 0 AS rated_sets FROM main.pools"
            )
        for pool, rated_sets in self._fill_fit_tables().items():
            self._db.execute("UPDATE pools SET rated_sets = ? WHERE name = ?", (rated_sets, pool))

    def _fill_scale_tables(self) -> None:
        """Compute `match_bots`, `bot_totals` and `pools` from the matches and sets of a version-2 file:
        the totals as the standings counted them from the history (the ratings are the fit's, version 4)."""
        pools = {
            set_id: pool_name(players, ruleset)
            for set_id, players, ruleset in self._db.execute("SELECT id, players, ruleset FROM main.sets")
        }
        totals: dict[tuple[str, str], BotTotals] = {}
        pool_matches: dict[str, int] = {}
        rows = self._db.execute(
            "SELECT id, set_id, team_bots, bot_ranks, faults, finished_at FROM main.matches"
            " ORDER BY finished_at, id"
        )
        for match_id, set_id, team_bots_json, bot_ranks_json, faults_json, finished_at in rows:
            what = f"match {match_id!r}"
            team_bots = self._decoded(team_bots_json, f"the bots of {what}")
            bot_ranks = self._decoded(bot_ranks_json, f"the ranks of {what}")
            try:
                faults = [FaultRecord.from_json(fault) for fault in self._decoded(faults_json, what)]
                tallies = match_tallies(team_bots, bot_ranks, faults)
            except (TypeError, ValueError, AttributeError, IndexError, KeyError):
                raise self._damaged(what) from None
            pool = pools.get(set_id)
            if pool is None:
                raise self._damaged(what)
            pool_matches[pool] = pool_matches.get(pool, 0) + 1
            for tally in tallies:
                key = (tally.bot, pool)
                totals[key] = add_match(totals.get(key, BotTotals()), tally)
                self._db.execute(
                    "INSERT INTO match_bots VALUES (?, ?, ?, ?, ?)",
                    (match_id, tally.bot, tally.rank, tally.own_forfeit, finished_at),
                )
        for (bot, pool), line in totals.items():
            self._db.execute(
                "INSERT INTO bot_totals VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (bot, pool, *astuple(line)),
            )
        self._db.executemany("INSERT INTO pools (name, matches) VALUES (?, ?)", pool_matches.items())

    # Version 4 (ratings by maximum likelihood): the sums of the rated sets, and the ratings fitted.

    def _upgrade_fit(self) -> None:
        """Fill the sums the fit reads from the rated sets of the history (once), count each pool's rated
        sets, and replace the sequential Elo ratings with each pool's fit."""
        for pool, rated_sets in self._fill_fit_tables().items():
            self._db.execute("UPDATE pools SET rated_sets = ? WHERE name = ?", (rated_sets, pool))
        self._drop_removed_columns(4)

    def _fill_fit_tables(self) -> dict[str, int]:
        """Compute `pair_results`, `choice_sets`, `places` and `ratings` from the rated, not void, sets of the
        history (every earlier rating is replaced); returns each pool's number of rated sets."""
        pools = {
            set_id: pool_name(players, ruleset)
            for set_id, players, ruleset in self._db.execute(
                "SELECT id, players, ruleset FROM main.sets WHERE rated_at IS NOT NULL"
                + (" AND void_reason IS NULL" if self._has_column("sets", "void_reason") else "")
            )
        }
        rankings: dict[int, list[dict[str, int]]] = {}
        for set_id, bot_ranks_json in self._db.execute(
            "SELECT set_id, bot_ranks FROM main.matches ORDER BY set_id, rotation"
        ):
            if set_id in pools:
                ranks = self._decoded(bot_ranks_json, f"the ranks of a match of set {set_id}")
                rankings.setdefault(set_id, []).append(ranks)
        sums: dict[str, PoolSums] = {}
        for set_id, ranks in sorted(rankings.items()):
            try:
                result = set_result(ranks)
            except (TypeError, ValueError, KeyError, AttributeError):
                raise self._damaged(f"the ranks of the matches of set {set_id}") from None
            pool = pools[set_id]
            sums[pool] = add_set(sums.get(pool, PoolSums()), result)
        self._db.execute("DELETE FROM ratings")
        for pool, pool_sums in sums.items():
            self._save_sums(pool, pool_sums)
            self._save_fit(pool, fit_pool(pool_sums).fitted())
        return {pool: pool_sums.rated_sets for pool, pool_sums in sums.items()}

    def _save_sums(self, pool: str, sums: PoolSums) -> None:
        """Write the rows of `sums` into `pool`'s sums (each row given replaced)."""
        pairs = [
            {"pool": pool, "first": first, "second": second}
            | {"sets": line.sets, "score": line.score, "squares": line.squares}
            for (first, second), line in sums.pairs.items()
        ]
        replace(self._conn, pair_results, pairs)
        groups = [
            {"pool": pool, "bots": json.dumps(group), "weight": weight}
            for group, weight in sums.choices.items()
        ]
        replace(self._conn, choice_sets, groups)
        replace(
            self._conn,
            places,
            [{"pool": pool, "bot": bot, "taken": taken} for bot, taken in sums.places.items()],
        )

    def _save_fit(self, pool: str, fitted: Sequence[FittedRating]) -> None:
        """Replace the ratings of `pool` with `fitted`."""
        self._conn.execute(delete(ratings).where(ratings.c.pool == pool))
        if fitted:
            self._conn.execute(
                ratings.insert(),
                [
                    {"bot": line.bot, "pool": pool, "rating": line.rating}
                    | {"margin": line.margin, "superiority": line.superiority}
                    for line in fitted
                ],
            )

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
        if isinstance(error, OperationalError):
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


_DATA_UPGRADES: Final[dict[int, tuple[Callable[[StoreFile], None], ...]]] = {
    3: (StoreFile._upgrade_scale,),
    4: (StoreFile._upgrade_fit,),
    5: (lambda store: void_sets_dealt_before_version_5(store._conn),),
    6: (lambda store: mark_participant_addresses(store._conn),),
}
"""For each schema version, what `_upgrade` does after adding its columns: moving data into new tables."""


def _file_name(text: str) -> str:
    """`text` as a file name: letters, digits, `.`, `_` and `-` kept, anything else `_`."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip(".") or "ladder"
