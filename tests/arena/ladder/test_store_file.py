"""The ladder's SQLite file: opening, upgrading a version-1 file, refusing foreign and damaged files
before changing them, locks, read-only files; every SQLite error a StoreError that names the file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.ladder.entries import RatingChange
from arena.ladder.standings import ladder_standings
from arena.ladder.store import LadderStore
from arena.ladder.store_file import SCHEMA_VERSION, StoreError


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a ladder database"):
        LadderStore(path)


def test_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    first = LadderStore(path)
    first.add_bot("a", address="h:1")
    first.close()
    second = LadderStore(path)
    assert second.bot("a").address == "h:1"


def test_a_version_1_file_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE sets (id INTEGER PRIMARY KEY, created_at REAL NOT NULL, players INTEGER NOT NULL,
            ruleset TEXT NOT NULL, deal_cap INTEGER, seed INTEGER NOT NULL, bots TEXT NOT NULL,
            rotations INTEGER NOT NULL, rated_at REAL);
        INSERT INTO sets VALUES (1, 0, 4, 'pairs', NULL, 5, '["a", "b"]', 2, NULL);
        """
    )
    db.commit()
    db.close()
    store = LadderStore(path)
    [(duplicate, missing)] = store.unfinished_sets()
    assert (duplicate.seed, missing) == (5, [0, 1])
    assert store.void_reason(1) is None
    assert store.claim_set(1, "me", 60.0)  # the columns of version 3 were added
    assert store.down_bots() == {}
    store.close()
    version = sqlite3.connect(path).execute("SELECT value FROM meta WHERE key = 'schema_version'")
    assert version.fetchone() == (str(SCHEMA_VERSION),)


# Files the store cannot use: every SQLite error is a StoreError that names the file.


def filled_store(path: Path, bots: int = 400) -> None:
    """A ladder file whose bots table spans many pages (so a damaged page is read late, not at opening)."""
    store = LadderStore(path)
    for number in range(bots):
        store.add_bot(f"bot-{number:04}", command=f"run --port {{port}} --padding {'x' * 200}")
    store.close()


def damage_the_end(path: Path) -> None:
    """Overwrite the last half of the file with garbage: page 1 (the schema) stays readable."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:] = bytes(range(256)) * ((len(data) - middle) // 256 + 1)
    path.write_bytes(bytes(data[: len(data)]))


def test_a_page_damaged_late_is_a_store_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    filled_store(path)
    damage_the_end(path)
    store = LadderStore(path)  # the schema pages are intact: the damage shows only on a query
    with pytest.raises(StoreError, match=rf"^{path} is damaged or not a ladder database \("):
        store.bots()
    with pytest.raises(StoreError, match=str(path)):
        ladder_standings(store)


def test_another_programs_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE bots (id INTEGER PRIMARY KEY, nickname TEXT)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(
        StoreError, match=rf"^{path} is not a ladder database \(it holds other tables: bots\)"
    ):
        LadderStore(path)
    assert path.read_bytes() == before


def test_a_table_without_the_columns_this_version_reads_is_refused(tmp_path: Path) -> None:
    """CREATE TABLE IF NOT EXISTS keeps a `bots` table of another shape; queries would then fail with
    'no such column' on every command."""
    path = tmp_path / "odd.db"
    db = sqlite3.connect(path)
    db.executescript(
        f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');
        CREATE TABLE bots (name TEXT PRIMARY KEY, rating REAL);
        """
    )
    db.close()
    before = path.read_bytes()
    message = rf"^{path} is not a ladder database \(table 'bots' has no column address, command, probation"
    with pytest.raises(StoreError, match=message):
        LadderStore(path)
    assert path.read_bytes() == before


def test_a_schema_version_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        INSERT INTO meta VALUES ('schema_version', 'x');
        """
    )
    db.close()
    with pytest.raises(StoreError, match="not a ladder database"):
        LadderStore(path)


def test_a_lock_held_beyond_the_timeout_is_a_store_error_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    LadderStore(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute(
        "INSERT INTO bots (name, address, command, rating, probation, created_at, updated_at)"
        " VALUES ('theirs', 'h:1', NULL, 1500, NULL, 0, 0)"
    )
    store = LadderStore(path, timeout=0.1)  # opening a current file only reads: no lock needed
    with pytest.raises(StoreError, match=rf"^{path} is locked by another program \(waited 0.1 s\)"):
        store.add_bot("mine", address="h:2")
    assert store.bots() == []  # a reader is not blocked by the writer
    other.execute("COMMIT")
    other.close()
    assert [bot.name for bot in store.bots()] == ["theirs"]
    store.add_bot("mine", address="h:2")
    assert [bot.name for bot in store.bots()] == ["mine", "theirs"]


def test_read_only_reads_and_refuses_every_write(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    writable = LadderStore(path)
    writable.add_bot("a", address="h:1")
    writable.add_bot("b", address="h:2")
    duplicate = writable.create_set(4, "pairs", None, 1, ["a", "b"])
    writable.save_match("m1-0", duplicate, 0, "one_team_left", [1, 2], [], {"r": 1}, 10, 0.5)
    writable.close()
    store = LadderStore(path, read_only=True)
    assert store.read_only
    assert [line.bot for line in ladder_standings(store)] == ["a", "b"]
    assert store.match_record("m1-0") == {"r": 1}
    for write in (
        lambda: store.add_bot("c", address="h:3"),
        lambda: store.set_probation("a", "why"),
        lambda: store.remove_bot("a"),
        lambda: store.create_set(4, "pairs", None, 1, ["a", "b"]),
        lambda: store.save_match("m1-1", duplicate, 1, "one_team_left", [2, 1], [], {}, 10, 0.5),
        lambda: store.void_set(duplicate.id, "why"),
        lambda: store.save_rating_event(duplicate.id, [RatingChange("a", 1500.0, 1516.0)]),
    ):
        with pytest.raises(
            StoreError, match=rf"^{path} is read-only \(opened read-only\); nothing was changed"
        ):
            write()
    assert len(store.matches()) == 1


def test_a_read_only_file_of_version_1_is_read_without_upgrading(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    LadderStore(path).close()
    db = sqlite3.connect(path)
    db.executescript(
        """
        ALTER TABLE sets DROP COLUMN void_reason;
        ALTER TABLE sets DROP COLUMN lease_owner;
        ALTER TABLE sets DROP COLUMN lease_until;
        ALTER TABLE sets DROP COLUMN not_before;
        ALTER TABLE sets DROP COLUMN start_failures;
        ALTER TABLE bots DROP COLUMN down_since;
        ALTER TABLE bots DROP COLUMN host_failures;
        UPDATE meta SET value = '1' WHERE key = 'schema_version';
        INSERT INTO bots VALUES ('a', 'h:1', NULL, 1510, NULL, 0, 0);
        """
    )
    db.close()
    store = LadderStore(path, read_only=True)
    assert [(line.bot, line.rating) for line in ladder_standings(store)] == [("a", 1510)]
    version = sqlite3.connect(path).execute("SELECT value FROM meta WHERE key = 'schema_version'")
    assert version.fetchone() == ("1",)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda folder: folder, "is a directory, not a ladder database file"),
        (
            lambda folder: folder / "missing" / "ladder.db",
            "cannot create .*: the folder .*missing does not exist",
        ),
    ],
)
def test_a_path_that_cannot_be_a_ladder_file(tmp_path: Path, make: Any, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        LadderStore(make(tmp_path))
