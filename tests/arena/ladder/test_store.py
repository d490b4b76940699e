"""The ladder's SQLite store: bots registry, sets, matches stored at once, sets rated exactly once."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.ladder.elo import START_RATING
from arena.ladder.standings import ladder_standings
from arena.ladder.store import (
    SCHEMA_VERSION,
    DuplicateMatchError,
    DuplicateSet,
    LadderStore,
    RatingChange,
    RatingsChangedError,
    StoreError,
)
from fiftysix.wire import FaultCause, FaultRecord


@pytest.fixture
def store(tmp_path: Path) -> LadderStore:
    return LadderStore(tmp_path / "ladder.db")


def test_bots_registry(store: LadderStore) -> None:
    store.add_bot("alice", address="127.0.0.1:5000")
    store.add_bot("bob", command="python -m bob --port {port}")
    assert [bot.name for bot in store.bots()] == ["alice", "bob"]
    assert store.bot("alice").rating == START_RATING
    assert store.bot("bob").where == "command: python -m bob --port {port}"
    store.update_bot("alice", address="127.0.0.1:6000")
    assert store.bot("alice").address == "127.0.0.1:6000"
    store.update_bot("alice", command="run {port}")
    assert store.bot("alice").address is None
    store.set_probation("bob", "crashed 3 times")
    assert store.bot("bob").probation == "crashed 3 times"
    store.remove_bot("alice")
    assert [bot.name for bot in store.bots()] == ["bob"]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (lambda s: s.add_bot("alice", address="h:1"), "already registered"),
        (lambda s: s.bot("nobody"), "no bot named"),
        (lambda s: s.remove_bot("nobody"), "no bot named"),
        (lambda s: s.update_bot("alice"), "either"),
        (lambda s: s.add_bot("carol"), "either an address or a command"),
    ],
)
def test_bad_requests_are_refused(store: LadderStore, action: object, message: str) -> None:
    store.add_bot("alice", address="127.0.0.1:5000")
    with pytest.raises(StoreError, match=message):
        action(store)  # type: ignore[operator]


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a ladder database"):
        LadderStore(path)


def save(
    store: LadderStore,
    duplicate: DuplicateSet,
    rotation: int,
    ranking: list[int],
    faults: list[FaultRecord] | None = None,
) -> None:
    store.save_match(
        f"m{duplicate.id}-{rotation}",
        duplicate,
        rotation,
        "one_team_left",
        ranking,
        faults or [],
        {"r": 1},
        10,
        0.5,
    )


EVENT = [RatingChange("a", START_RATING, 1516.0), RatingChange("b", START_RATING, 1484.0)]
"""A rating event of a set of bots a and b, both at the starting rating before it."""


def rating_events(store: LadderStore) -> list[tuple[int, str, float, float]]:
    return sqlite3.connect(store.path).execute("SELECT * FROM rating_events ORDER BY set_id, bot").fetchall()


def test_a_set_is_unfinished_until_its_rating_event_is_saved_once(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 99, ["a", "b"])
    assert duplicate.team_bots(0) == ("a", "b")
    assert duplicate.team_bots(1) == ("b", "a")
    save(store, duplicate, 0, [1, 2])
    assert store.unfinished_sets() == [(duplicate, [1])]
    save(store, duplicate, 1, [2, 1])
    assert store.unfinished_sets() == [(duplicate, [])]
    assert store.save_rating_event(duplicate.id, EVENT) is True
    assert (store.bot("a").rating, store.bot("b").rating) == (1516.0, 1484.0)
    assert store.rated_sets() == {duplicate.id}
    assert store.unfinished_sets() == []
    assert rating_events(store) == [(1, "a", 1500.0, 1516.0), (1, "b", 1500.0, 1484.0)]
    assert store.save_rating_event(duplicate.id, [RatingChange("a", 1516.0, 1600.0)]) is False
    assert store.bot("a").rating == 1516.0
    assert store.save_rating_event(99, EVENT) is False  # no such set


def test_a_rating_event_from_ratings_that_changed_is_refused(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    writer = sqlite3.connect(store.path)
    writer.execute("UPDATE bots SET rating = 1510 WHERE name = 'b'")  # another runner rated b meanwhile
    writer.commit()
    writer.close()
    with pytest.raises(RatingsChangedError, match=r"ratings changed while set 1 was being rated \(of b\)"):
        store.save_rating_event(duplicate.id, EVENT)
    assert rating_events(store) == []
    assert store.bot("a").rating == START_RATING
    assert store.rated_sets() == set()


def test_a_rating_event_is_saved_whole_or_not_at_all(store: LadderStore) -> None:
    """Rows, ratings and the set's mark are one transaction: a failure at the last step (or a SIGKILL
    anywhere before the commit) leaves none of them, and the set can be rated later, once."""
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    writer = sqlite3.connect(store.path)
    writer.execute(
        "CREATE TRIGGER fail BEFORE UPDATE OF rated_at ON sets BEGIN SELECT RAISE(ABORT, 'disk gone'); END"
    )
    writer.commit()
    with pytest.raises(StoreError, match="disk gone"):
        store.save_rating_event(duplicate.id, EVENT)
    assert rating_events(store) == []
    assert [bot.rating for bot in store.bots()] == [START_RATING, START_RATING]
    assert store.rated_sets() == set()
    writer.execute("DROP TRIGGER fail")
    writer.commit()
    writer.close()
    assert store.save_rating_event(duplicate.id, EVENT) is True
    assert len(rating_events(store)) == 2


def test_the_ratings_of_registered_removed_and_unknown_bots(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    store.save_rating_event(duplicate.id, EVENT)
    store.remove_bot("b")
    assert store.ratings(["a", "b", "never"]) == {"a": 1516.0, "b": 1484.0}


def test_a_rotation_is_stored_once(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    save(store, duplicate, 0, [1, 2])
    with pytest.raises(DuplicateMatchError, match="set 1 rotation 0 is stored already"):
        store.save_match("other-id", duplicate, 0, "one_team_left", [1, 2], [], {}, 1, 0.1)
    assert len(store.matches(duplicate.id)) == 1


def test_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    first = LadderStore(path)
    first.add_bot("a", address="h:1")
    first.close()
    second = LadderStore(path)
    assert second.bot("a").address == "h:1"


def test_a_void_set_is_never_rated_nor_resumed(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    save(store, duplicate, 0, [1, 2])
    store.void_set(duplicate.id, "arena error in rotation 1")
    assert store.unfinished_sets() == []
    save(store, duplicate, 1, [2, 1])
    assert store.save_rating_event(duplicate.id, EVENT) is False
    assert store.bot("a").rating == START_RATING
    assert store.void_reason(duplicate.id) == "arena error in rotation 1"
    assert len(store.matches(duplicate.id)) == 2  # kept in the history


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


FAULT = '[{"seat": 1, "team": 1, "cause": "timeout", "detail": "", "deal_number": 1}]'
"""A stored fault as the first release wrote it (no `substituted`)."""


def test_faults_are_stored_and_read_back_typed(store: LadderStore) -> None:
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    faults = [
        FaultRecord(seat=1, team=1, cause=FaultCause.TIMEOUT, detail="late", deal_number=2),
        FaultRecord(
            seat=2, team=0, cause=FaultCause.PROTOCOL_ERROR, detail="x", deal_number=3, substituted=True
        ),
    ]
    save(store, duplicate, 0, [1, 2], faults)
    [match] = store.matches()
    assert match.faults == tuple(faults)
    stored = sqlite3.connect(store.path).execute("SELECT faults FROM matches").fetchone()[0]
    assert json.loads(stored) == [fault.to_json() for fault in faults]  # the format on disk is unchanged
    assert match.to_json()["faults"] == json.loads(stored)
    json.dumps(match.to_json())


def test_a_fault_stored_by_the_first_release_reads_as_a_forfeit(store: LadderStore) -> None:
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    save(store, duplicate, 0, [1, 2])
    writer = sqlite3.connect(store.path)
    writer.execute("UPDATE matches SET faults = ?", (FAULT,))
    writer.commit()
    writer.close()
    [match] = store.matches()
    assert match.faults == (FaultRecord(1, 1, FaultCause.TIMEOUT, "", 1, substituted=False),)


@pytest.mark.parametrize(
    ("column", "value", "what"),
    [
        ("faults", "{not json", "the faults of match 'm1-0'"),
        ("faults", FAULT.replace('"team": 1', '"team": 7'), "the faults of match 'm1-0'"),
        ("faults", FAULT.replace('"timeout"', '"asleep"'), "the faults of match 'm1-0'"),
        ("faults", FAULT.replace('"seat": 1, ', ""), "the faults of match 'm1-0'"),
        ("faults", FAULT[1:-1], "the faults of match 'm1-0'"),
        ("bot_ranks", '{"a": "first"}', "match 'm1-0'"),
        ("team_bots", "[" * 100_000, "the bots of match 'm1-0'"),
    ],
    ids=[
        "not JSON",
        "fault of no team",
        "unknown cause",
        "fault without a seat",
        "faults not a list",
        "rank not a number",
        "deep nesting",
    ],
)
def test_a_damaged_row_is_a_store_error(store: LadderStore, column: str, value: str, what: str) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    save(store, duplicate, 0, [1, 2])
    writer = sqlite3.connect(store.path)
    writer.execute(f"UPDATE matches SET {column} = ?", (value,))
    writer.commit()
    writer.close()
    for read in (store.matches, lambda: store.recent_matches("a", 5)):
        with pytest.raises(StoreError, match=rf"is damaged: {what}"):
            read()


@pytest.mark.parametrize(
    "change", ["players = 5", "ruleset = 'bridge'", "deal_cap = 10000000", "bots = '[\"a\"]'", "seed = 'x'"]
)
def test_a_set_the_ladder_could_not_play_is_a_store_error(store: LadderStore, change: str) -> None:
    """The ladder resumes unfinished sets: one it cannot play must stop it with a clear message."""
    store.create_set(4, "pairs", None, 1, ["a", "b"])
    writer = sqlite3.connect(store.path)
    writer.execute(f"UPDATE sets SET {change}")
    writer.commit()
    writer.close()
    with pytest.raises(StoreError, match=r"is damaged: set 1 does not hold what the arena wrote"):
        store.unfinished_sets()


def test_a_bot_row_of_the_wrong_types_is_a_store_error(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    writer = sqlite3.connect(store.path)
    writer.execute("UPDATE bots SET rating = 'high'")
    writer.commit()
    writer.close()
    with pytest.raises(StoreError, match=r"is damaged: the row of bot 'a'"):
        store.bots()


def test_a_lock_held_beyond_the_timeout_is_a_store_error_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    LadderStore(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO bots VALUES ('theirs', 'h:1', NULL, 1500, NULL, 0, 0)")
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
    save(writable, duplicate, 0, [1, 2])
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
        lambda: save(store, duplicate, 1, [2, 1]),
        lambda: store.void_set(duplicate.id, "why"),
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


PUBLIC_CALLS: dict[str, Any] = {
    "close": lambda s: s.close(),
    "add_bot": lambda s: s.add_bot("x", address="h:1"),
    "bot": lambda s: s.bot("a"),
    "bots": lambda s: s.bots(),
    "update_bot": lambda s: s.update_bot("a", address="h:9"),
    "remove_bot": lambda s: s.remove_bot("a"),
    "set_probation": lambda s: s.set_probation("a", "why"),
    "create_set": lambda s: s.create_set(4, "pairs", None, 1, ["a", "b"]),
    "unfinished_sets": lambda s: s.unfinished_sets(),
    "save_match": lambda s: s.save_match(
        "m", DuplicateSet(1, 4, "pairs", None, 1, ("a", "b"), 2), 0, "r", [1, 2], [], {}, 1, 0.1
    ),
    "void_set": lambda s: s.void_set(1, "why"),
    "void_reason": lambda s: s.void_reason(1),
    "matches": lambda s: s.matches(),
    "recent_matches": lambda s: s.recent_matches(None, 5),
    "match_record": lambda s: s.match_record("m"),
    "ratings": lambda s: s.ratings(["a"]),
    "save_rating_event": lambda s: s.save_rating_event(1, []),
    "rated_sets": lambda s: s.rated_sets(),
}


def test_every_public_method_turns_sqlite_errors_into_store_errors(tmp_path: Path) -> None:
    """With the connection gone, every call fails inside SQLite; none may leak a sqlite3 exception."""
    public = {
        name for name, value in vars(LadderStore).items() if callable(value) and not name.startswith("_")
    }
    assert public == set(PUBLIC_CALLS), "a new public method needs a line here"
    LadderStore(tmp_path / "ladder.db").add_bot("a", address="h:1")
    for name, call in PUBLIC_CALLS.items():
        store = LadderStore(tmp_path / "ladder.db")
        store._db.close()
        if name == "close":
            continue  # closing twice is allowed
        with pytest.raises(StoreError, match=str(tmp_path / "ladder.db")):
            call(store)
