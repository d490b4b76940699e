"""Where the ladder's store lives, as SQLAlchemy sees it: a SQLite file (the default) or a PostgreSQL
database (`--db postgresql://user@host/dbname`, through psycopg 3), one engine and connection layer for
both, and the schema created, checked and upgraded by one code path (the `Table`s of relations.py).

Transactions are ours, not SQLAlchemy's: the connection runs in autocommit and `begin_writing` opens a
transaction that holds the whole database's write lock until it ends, on SQLite by BEGIN IMMEDIATE and on
PostgreSQL by a transaction-level advisory lock, so that several runners on one database see exactly the
same guarantees on both (a set claimed once, rated once) without retry loops. SQLAlchemy is a dependency
(the SQLite store goes through it too); psycopg, PostgreSQL's driver, is the optional extra `[cluster]`,
loaded by SQLAlchemy only for a `postgresql://` database."""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection, Engine, Table, create_engine, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import NullPool
from sqlalchemy.schema import CreateColumn

from arena.ladder.store import relations
from arena.ladder.store.bundles import take_in_bundle_files
from arena.ladder.store.relations import LADDER_RELATIONS, METADATA, meta
from arena.ladder.store.schema import _ADDED_COLUMNS, _ADDED_RELATIONS, SCHEMA_VERSION

_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
"""How `--db` names a database on a server rather than a file: a URL's scheme (only PostgreSQL's is
served; any other is refused in one line rather than taken for a file name)."""

_WRITE_LOCK: Final = 5_656_000_056
"""The PostgreSQL advisory lock that a writing transaction holds: one key for the whole ladder, since
SQLite's write lock, which the store's guarantees were built on, is one for the whole file too."""


class DatabaseError(ValueError):
    """A location or database this layer refuses; the store turns it into a StoreError."""


def is_server_url(location: str) -> bool:
    """Whether `--db` names a database on a server (PostgreSQL) rather than a SQLite file."""
    return _URL.match(location) is not None


def server_url(location: str) -> URL:
    """The SQLAlchemy URL of a `postgresql://` location, with the psycopg 3 driver (SQLAlchemy's own
    default for `postgresql://` is psycopg2, which the arena does not use)."""
    scheme = location.split("://", 1)[0]
    try:
        url = make_url(location)
    except (ArgumentError, ValueError):
        raise DatabaseError(
            f"--db {scheme}://...: not a database URL (postgresql://user@host/dbname)"
        ) from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.drivername != "postgresql+psycopg":
        raise DatabaseError(
            f"--db {scheme}://...: only postgresql:// (psycopg 3) databases are served;"
            " a SQLite ladder is a file path"
        )
    if not url.database:
        raise DatabaseError(f"{shown(url)}: name the database (postgresql://user@host/dbname)")
    return url


def shown(url: URL) -> str:
    """The URL as messages name it: without its password, without the driver's name."""
    return url.set(drivername="postgresql").render_as_string(hide_password=True)


_handed = threading.local()
"""The SQLite connection that the process's file engine hands out next (see `file_connection`)."""
_engines: dict[Hashable, Engine] = {}
_engines_lock = threading.Lock()


def _engine(key: Hashable, make: Callable[[], Engine]) -> Engine:
    """The process's engine for `key`, made once: an engine keeps the statements it compiled, so every
    store opened after the first (the site opens one per request) skips compiling them again."""
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            engine = _engines[key] = make()
        return engine


def _handed_connection() -> sqlite3.Connection:
    connection: sqlite3.Connection = _handed.connection
    return connection


def file_connection(db: sqlite3.Connection) -> Connection:
    """A Core connection, in autocommit like the server's, over the SQLite connection `db` that the store
    opened (read-write, read-only through a writer's shared memory, or immutable). Closing it closes
    `db`."""
    engine = _engine(
        "sqlite",
        lambda: create_engine(
            "sqlite://", creator=_handed_connection, poolclass=NullPool, isolation_level="AUTOCOMMIT"
        ),
    )
    _handed.connection = db
    try:
        return engine.connect()
    finally:
        del _handed.connection


def server_connection(url: URL, timeout: float) -> Connection:
    """A Core connection to a PostgreSQL database, in autocommit (see `begin_writing`), from the process's
    pool of connections to it; a connection found dead is replaced when taken (pre-ping)."""
    try:
        import psycopg  # noqa: F401 (SQLAlchemy loads it; said here in one line when it is missing)
    except ImportError:
        raise DatabaseError(
            f"{shown(url)}: a PostgreSQL store needs psycopg: pip install 'fiftysix-arena[cluster]'"
        ) from None
    seconds = max(1, round(timeout))
    engine = _engine(
        (url.render_as_string(hide_password=False), seconds),
        lambda: create_engine(
            url, isolation_level="AUTOCOMMIT", pool_pre_ping=True, connect_args={"connect_timeout": seconds}
        ),
    )
    return engine.connect()


def connect(location: str, timeout: float = 30.0) -> Connection:
    """A connection to `--db`: a PostgreSQL URL, or else the path of a SQLite file (opened read-write)."""
    if is_server_url(location):
        return server_connection(server_url(location), timeout)
    return file_connection(sqlite3.connect(location, isolation_level=None, timeout=timeout))


@contextmanager
def begin_writing(connection: Connection) -> Iterator[None]:
    """A transaction that holds the database's write lock until it commits (or rolls back on an error)."""
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        connection.exec_driver_sql("BEGIN")
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_WRITE_LOCK})")
    try:
        yield
    except BaseException:
        if connection.invalidated:
            connection.rollback()  # the connection was lost, and its transaction with it
        elif _in_transaction(connection):
            connection.exec_driver_sql("ROLLBACK")
        raise
    connection.exec_driver_sql("COMMIT")


def _in_transaction(connection: Connection) -> bool:
    """Whether the database still has our transaction open (SQLite ends one by itself after some
    errors)."""
    raw = connection.connection.dbapi_connection
    if connection.dialect.name == "sqlite":
        return bool(getattr(raw, "in_transaction", False))
    return True


def upsert(connection: Connection, relation: Table) -> sqlite.Insert | postgresql.Insert:
    """An INSERT into `relation` that can take ON CONFLICT DO UPDATE: each dialect has its own construct,
    with the same API, and SQLite and PostgreSQL spell the SQL the same way."""
    if connection.dialect.name == "sqlite":
        return sqlite.insert(relation)
    return postgresql.insert(relation)


def replace(connection: Connection, relation: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert `rows` into `relation`, each replacing the row of the same primary key (SQLite's INSERT OR
    REPLACE): the one statement Core spells per dialect, with the same API on both."""
    if rows:
        connection.execute(_replacing(connection.dialect.name, relation, tuple(rows[0])), list(rows))


@functools.lru_cache(maxsize=64)
def _replacing(dialect: str, relation: Table, columns: tuple[str, ...]) -> sqlite.Insert | postgresql.Insert:
    """The statement of `replace`, built once per relation and columns (building one costs more than
    running it: the store writes rows through it, and through `accumulate`, for every match and set)."""
    statement = sqlite.insert(relation) if dialect == "sqlite" else postgresql.insert(relation)
    keys = [column.name for column in relation.primary_key.columns]
    others = {name: statement.excluded[name] for name in columns if name not in keys}
    return statement.on_conflict_do_update(index_elements=keys, set_=others)


def accumulate(connection: Connection, relation: Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert `rows` into `relation`, each adding its values (every column but the primary key's) to the row
    of the same key when there is one: the running counts and sums kept beside the history."""
    if rows:
        connection.execute(_accumulating(connection.dialect.name, relation, tuple(rows[0])), list(rows))


@functools.lru_cache(maxsize=64)
def _accumulating(
    dialect: str, relation: Table, columns: tuple[str, ...]
) -> sqlite.Insert | postgresql.Insert:
    """The statement of `accumulate`, built once per relation and columns (as `_replacing`)."""
    statement = sqlite.insert(relation) if dialect == "sqlite" else postgresql.insert(relation)
    keys = [column.name for column in relation.primary_key.columns]
    sums = {name: relation.c[name] + statement.excluded[name] for name in columns if name not in keys}
    return statement.on_conflict_do_update(index_elements=keys, set_=sums)


def relation_names(connection: Connection) -> set[str]:
    """The database's own relations (not SQLite's internal ones, nor temporary ones). Read from the
    catalogue directly: SQLAlchemy's inspector costs milliseconds, and the store asks on every opening."""
    if connection.dialect.name == "sqlite":
        rows = connection.exec_driver_sql("SELECT name FROM main.sqlite_master WHERE type = 'table'")
    else:
        rows = connection.exec_driver_sql(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )
    return {str(name) for (name,) in rows if not str(name).startswith("sqlite_")}


def columns_by_relation(connection: Connection) -> dict[str, set[str]]:
    """Each of the database's own relations with its columns, in one query of the catalogue."""
    if connection.dialect.name == "sqlite":
        rows = connection.exec_driver_sql(
            "SELECT relation.name, columns.name FROM main.sqlite_master AS relation"
            " JOIN pragma_table_info(relation.name, 'main') AS columns WHERE relation.type = 'table'"
        )
    else:
        rows = connection.exec_driver_sql(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema()"
        )
    found: dict[str, set[str]] = {}
    for relation, column in rows:
        found.setdefault(str(relation), set()).add(str(column))
    return found


def column_names(connection: Connection, relation: str) -> set[str]:
    """The columns `relation` has in the database (none when it lacks it)."""
    return columns_by_relation(connection).get(relation, set())


def schema_version(connection: Connection, name: str) -> int | None:
    """The database's schema version, None when it has no relations; refuses another program's database
    and a newer arena's (DatabaseError, naming it as `name`)."""
    relations_found = relation_names(connection)
    if not relations_found:
        return None
    text = ""
    if "meta" in relations_found:
        text = str(connection.scalar(select(meta.c.value).where(meta.c.key == "schema_version")) or "")
    if not text.isdecimal() or len(text) > 9:
        listed = ", ".join(sorted(relations_found)[:5]) + (", ..." if len(relations_found) > 5 else "")
        raise DatabaseError(f"{name} is not a ladder database (it holds other tables: {listed})")
    if int(text) > SCHEMA_VERSION:
        raise DatabaseError(f"{name} was written by a newer arena (schema {text})")
    return int(text)


SERVER_FIRST_VERSION: Final = 4
"""The first schema version a PostgreSQL database had: later ones only add columns (schema.py's
`_ADDED_COLUMNS`), which `prepare_schema` adds on either dialect; the data moves of earlier versions are
SQLite's (upgrades.py upgrades such a file before it gets here)."""


def prepare_schema(connection: Connection, name: str, bundles: Path | None = None) -> None:
    """Create the relations of an empty database, and those missing from a database of this version (the
    site's, the uploads'); bring a database of an older version that only lacks columns (from
    SERVER_FIRST_VERSION on) to this one, taking in the bundle files of `bundles` (its bundles folder
    on this machine) for version 7; check that every relation has the columns this arena reads. One
    transaction, under the write lock: another runner may be doing the same. A complete database of this
    version is only read (no lock: opening it does not wait for another program's write)."""
    if schema_version(connection, name) == SCHEMA_VERSION and set(METADATA.tables) <= relation_names(
        connection
    ):
        check_columns(connection, name)
        return
    with begin_writing(connection):
        version = schema_version(connection, name)
        if version is not None and version < SERVER_FIRST_VERSION:
            raise DatabaseError(f"{name} has schema {version}: open it with this arena's SQLite store")
        METADATA.create_all(connection, checkfirst=True)
        if version is None:
            connection.execute(meta.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
        elif version < SCHEMA_VERSION:
            _add_columns(connection, version)
            if version < 5:
                void_sets_dealt_before_version_5(connection)
            if version < 6:
                mark_participant_addresses(connection)
            if version < 7 and bundles is not None:
                take_in_bundle_files(connection, bundles)
            connection.execute(
                meta.update().where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION))
            )
        check_columns(connection, name)


def _add_columns(connection: Connection, version: int) -> None:
    """Add the columns of the versions after `version` that the database lacks, each declared as its
    `Table` declares it in the connection's dialect."""
    present = columns_by_relation(connection)
    for step in range(version + 1, SCHEMA_VERSION + 1):
        for relation, column, _sqlite_declaration in _ADDED_COLUMNS.get(step, ()):
            if column not in present.get(relation, set()):
                declared = CreateColumn(METADATA.tables[relation].c[column]).compile(
                    dialect=connection.dialect
                )
                connection.exec_driver_sql(f"ALTER TABLE {relation} ADD COLUMN {declared}")


OLD_DEALS: Final = "left unfinished by an arena before schema 5, which dealt other packs for its seed"
"""Why `void_sets_dealt_before_version_5` made a set void."""


def void_sets_dealt_before_version_5(connection: Connection) -> None:
    """Version 5 changed what a seed deals (the keyed shuffle of fiftysix/engine/seeds.py): a set left
    unfinished before it could not deal its rotations still to play what its first ones were dealt, and
    its seed was small enough to guess from a deal. So it is made void, as a set is when a bot is
    removed (one whose every rotation was played is still rated: it deals nothing more)."""
    sets, matches = relations.sets, relations.matches
    played = select(func.count()).where(matches.c.set_id == sets.c.id).scalar_subquery()
    connection.execute(
        update(sets)
        .where(sets.c.rated_at.is_(None), sets.c.void_reason.is_(None), played < sets.c.rotations)
        .values(void_reason=OLD_DEALS)
    )


ADDRESS_WRITES: Final = ("bot_registered", "bot_updated", "bot_uploaded")
"""The audit log's actions that give a bot its address or command."""


def mark_participant_addresses(connection: Connection) -> None:
    """Version 6 checks the addresses participants give against the host's address policy: a bot whose
    address was last written with a participant's token (the audit log says by whom) is marked, so that
    an address a participant registered before (a `unix:` socket, loopback) is checked too."""
    if "audit" not in relation_names(connection):
        return
    audit, bots = relations.audit, relations.bots
    writes = audit.alias("writes")
    newest = (
        select(func.max(writes.c.id))
        .where(writes.c.target == bots.c.name, writes.c.action.in_(ADDRESS_WRITES))
        .correlate(bots)
        .scalar_subquery()
    )
    writer = select(audit.c.actor).where(audit.c.id == newest).correlate(bots).scalar_subquery()
    connection.execute(
        update(bots)
        .where(bots.c.address.is_not(None), writer.like("participant:%"))
        .values(participant_address=1)
    )


def check_columns(connection: Connection, name: str, version: int = SCHEMA_VERSION) -> set[tuple[str, str]]:
    """Refuse a database whose relations lack a column this arena reads (CREATE TABLE IF NOT EXISTS keeps
    a relation of another shape). A database of an older `version` (read-only, so not upgraded) may lack
    the columns added after it: returns those it lacks, which reads take as NULL. (The messages say
    "table", as the SQL does.)"""
    later = {
        (relation, column)
        for step in range(version + 1, SCHEMA_VERSION + 1)
        for relation, column, _declaration in _ADDED_COLUMNS.get(step, ())
    }
    added = {
        relation
        for step in range(version + 1, SCHEMA_VERSION + 1)
        for relation in _ADDED_RELATIONS.get(step, ())
    }
    present_by_relation = columns_by_relation(connection)
    absent = set()
    for relation in sorted(LADDER_RELATIONS):
        present = present_by_relation.get(relation, set())
        if not present and relation in added:
            continue  # a relation of a later version: read as empty
        columns = METADATA.tables[relation].columns
        missing = [column.name for column in columns if column.name not in present]
        absent |= {(relation, column) for column in missing if (relation, column) in later}
        missing = [column for column in missing if (relation, column) not in later]
        if missing:
            lacking = f"table {relation!r} has no column {', '.join(missing)}"
            raise DatabaseError(f"{name} is not a ladder database ({lacking})")
    return absent
