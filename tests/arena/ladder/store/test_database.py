"""The store's database layer on both dialects: the schema created from the Core `Table`s, its version,
a foreign or newer database refused, transactions under the write lock; and today's SQLite file and a
file created from the `Table`s taken by either side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, insert, select

from arena.ladder.store.database import (
    DatabaseError,
    begin_writing,
    check_columns,
    column_names,
    connect,
    is_server_url,
    prepare_schema,
    relation_names,
    schema_version,
    server_url,
    shown,
)
from arena.ladder.store.ladder_store import LadderStore
from arena.ladder.store.relations import LADDER_RELATIONS, METADATA, bot_totals, meta
from arena.ladder.store.schema import _COLUMNS, SCHEMA_VERSION


@pytest.fixture
def connection(database: str) -> Iterator[Connection]:
    """A connection to an empty database of each dialect."""
    with connect(database) as opened:
        yield opened


def test_the_tables_match_the_sqlite_schema() -> None:
    """schema.py's SQL text (which an older SQLite file is upgraded through) and the `Table`s describe the
    same tables and columns of this version."""
    ladder = {name: {column.name for column in METADATA.tables[name].columns} for name in LADDER_RELATIONS}
    assert ladder == {name: set(columns) for name, columns in _COLUMNS.items()}


def test_an_empty_database_gets_every_table_and_the_version(connection: Connection) -> None:
    prepare_schema(connection, "the ladder")
    assert relation_names(connection) == set(METADATA.tables)
    assert schema_version(connection, "the ladder") == SCHEMA_VERSION
    prepare_schema(connection, "the ladder")  # again: nothing to do
    assert connection.scalar(select(meta.c.value).where(meta.c.key == "schema_version")) == str(
        SCHEMA_VERSION
    )


def test_a_database_of_another_program_is_refused(connection: Connection) -> None:
    connection.exec_driver_sql("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(DatabaseError, match=r"^the ladder is not a ladder database \(.*invoices\)$"):
        prepare_schema(connection, "the ladder")
    assert relation_names(connection) == {"invoices"}  # refused before anything was changed


def test_a_newer_arenas_database_is_refused(connection: Connection) -> None:
    prepare_schema(connection, "the ladder")
    connection.execute(meta.update().values(value=str(SCHEMA_VERSION + 1)))
    with pytest.raises(DatabaseError, match=rf"written by a newer arena \(schema {SCHEMA_VERSION + 1}\)$"):
        prepare_schema(connection, "the ladder")


def test_a_table_of_another_shape_is_refused(connection: Connection) -> None:
    connection.exec_driver_sql("CREATE TABLE bot_totals (bot TEXT, pool TEXT)")
    meta.create(connection)
    connection.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
    with pytest.raises(DatabaseError, match=r"table 'bot_totals' has no column matches, wins"):
        prepare_schema(connection, "the ladder")


def test_a_failed_transaction_leaves_nothing(connection: Connection) -> None:
    prepare_schema(connection, "the ladder")
    row = {"bot": "a", "pool": "p", **dict.fromkeys(("matches", "wins", "losses"), 1)}
    row |= dict.fromkeys(("timeouts", "illegal_moves", "crashes"), 0)

    def fail_after_writing() -> None:
        with begin_writing(connection):
            connection.execute(bot_totals.insert().values(row))
            raise RuntimeError("the runner failed")

    with pytest.raises(RuntimeError):
        fail_after_writing()
    assert connection.scalar(select(bot_totals.c.bot)) is None
    with begin_writing(connection):
        connection.execute(bot_totals.insert().values(row))
    assert connection.scalar(select(bot_totals.c.wins)) == 1


def test_a_file_made_from_the_tables_opens_in_todays_store(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    with connect(str(path)) as connection:
        prepare_schema(connection, str(path))
    store = LadderStore(path)
    try:
        assert store.registry.add_bot("alpha", address="localhost:1").name == "alpha"
    finally:
        store.close()


def test_todays_file_passes_the_tables_check(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    LadderStore(path).close()
    with connect(str(path)) as connection:
        assert schema_version(connection, str(path)) == SCHEMA_VERSION
        check_columns(connection, str(path))
        assert column_names(connection, "sets") >= {"lease_owner", "event"}


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("postgresql://arena@db.example/ladder", "postgresql+psycopg://arena@db.example/ladder"),
        ("postgres://arena@db.example/ladder", "postgresql+psycopg://arena@db.example/ladder"),
        ("postgresql+psycopg://arena:secret@db:5433/l", "postgresql+psycopg://arena:secret@db:5433/l"),
    ],
)
def test_server_urls_use_psycopg_3(location: str, expected: str) -> None:
    assert is_server_url(location)
    assert server_url(location).render_as_string(hide_password=False) == expected


def test_messages_hide_the_password() -> None:
    assert shown(server_url("postgresql://arena:secret@db/ladder")) == "postgresql://arena:***@db/ladder"


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("postgresql://arena@db.example", "name the database"),
        ("postgresql+psycopg2://arena@db/ladder", "only postgresql:// \\(psycopg 3\\)"),
        ("mysql://arena:secret@db/ladder", "^--db mysql://...: only postgresql://"),
        ("sqlite:///srv/ladder.db", "a SQLite ladder is a file path$"),
        ("postgresql://arena:secret@[::1/ladder", "^--db postgresql://...: not a database URL"),
        ("postgresql://arena:secret@db:port/ladder", "^--db postgresql://...: not a database URL"),
    ],
)
def test_bad_server_urls_are_refused(location: str, message: str) -> None:
    assert is_server_url(location)  # a URL, never taken for a file's name
    with pytest.raises(DatabaseError, match=message) as refused:
        server_url(location)
    assert "secret" not in str(refused.value)


def test_a_path_is_a_sqlite_file() -> None:
    assert not is_server_url("arena.db")
    assert not is_server_url("/srv/ladders/postgresql.db")
