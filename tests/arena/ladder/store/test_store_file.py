"""The ladder's SQLite file: opening, upgrading a version-1 file, refusing foreign and damaged files
before changing them, locks, read-only files; every SQLite error a StoreError that names the file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena.ladder.rating.fit import fit_pool
from arena.ladder.rating.values import PairResult, PoolSums
from arena.ladder.ratings import rate_set
from arena.ladder.standings import ladder_standings
from arena.ladder.store.database import OLD_DEALS
from arena.ladder.store.file import StoreError
from arena.ladder.store.ladder_store import LadderStore
from arena.ladder.store.schema import SCHEMA_VERSION
from tests.arena.ladder.match_support import save_match


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a ladder database"):
        LadderStore(path)


def test_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    first = LadderStore(path)
    first.registry.add_bot("a", address="h:1")
    first.close()
    second = LadderStore(path)
    assert second.registry.bot("a").address == "h:1"


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
    # Its set had every rotation to play, on deals today's engine no longer deals from its seed.
    assert store.sets.unfinished_sets() == []
    assert store.sets.void_reason(1) == OLD_DEALS
    created = store.sets.create_set(4, "pairs", None, 5, ["a", "b"], isolated=False)
    assert store.leases.claim_set(created.id, "me", 60.0)  # the columns of version 3 were added
    assert store.registry.down_bots() == {}
    store.close()
    version = sqlite3.connect(path).execute("SELECT value FROM meta WHERE key = 'schema_version'")
    assert version.fetchone() == (str(SCHEMA_VERSION),)


VERSION_2 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE bots (
    name TEXT PRIMARY KEY,
    address TEXT,
    command TEXT,
    rating REAL NOT NULL,
    probation TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    CHECK ((address IS NULL) <> (command IS NULL))
);
CREATE TABLE sets (
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
CREATE TABLE matches (
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
CREATE TABLE rating_events (
    set_id INTEGER NOT NULL REFERENCES sets (id),
    bot TEXT NOT NULL,
    before REAL NOT NULL,
    after REAL NOT NULL,
    PRIMARY KEY (set_id, bot)
);
"""
"""The schema of version 2, as the arena wrote it."""

TIMEOUT = (
    '{"seat": 1, "team": 1, "cause": "timeout", "detail": "slow", "deal_number": 1, "substituted": false}'
)
VERSION_2_HISTORY = f"""
INSERT INTO meta VALUES ('schema_version', '2');
INSERT INTO bots VALUES ('a', 'h:1', NULL, 1516, NULL, 0, 0), ('b', 'h:2', NULL, 1484, NULL, 0, 0);
INSERT INTO sets VALUES (1, 0, 4, 'pairs', NULL, 5, '["a", "b"]', 2, 10, NULL);
INSERT INTO sets VALUES (2, 0, 6, 'pairs', NULL, 6, '["a", "b", "c"]', 3, NULL, NULL);
INSERT INTO matches VALUES ('m1-0', 1, 0, '["a", "b"]', 1, 'r', '[1, 2]', '{{"a": 1, "b": 2}}', '[{TIMEOUT}]',
    '{{"r": 10}}', 5, 0.1);
INSERT INTO matches VALUES ('m1-1', 1, 1, '["b", "a"]', 2, 'r', '[2, 1]', '{{"b": 2, "a": 1}}', '[]',
    '{{"r": 11}}', 5, 0.1);
INSERT INTO matches VALUES ('m2-0', 2, 0, '["a", "b", "c"]', 3, 'r', '[1, 2, 3]',
    '{{"a": 1, "b": 2, "c": 3}}', '[]', '{{"r": 20}}', 5, 0.1);
INSERT INTO rating_events VALUES (1, 'a', 1500, 1516), (1, 'b', 1500, 1484);
"""
"""Two bots that played a rated 4-player set (b timed out once) and began a 6-player set with a removed
bot c."""


def version_2_file(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.executescript(VERSION_2 + VERSION_2_HISTORY)
    db.close()
    return path


def schema_version(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
    finally:
        db.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_a_version_2_file_keeps_its_history_records_and_ratings(tmp_path: Path, read_only: bool) -> None:
    """Read-write, it is upgraded in place (records moved to their own table, totals and ratings per pool
    filled); read-only, it is read as it is, unchanged, with the same answers."""
    path = version_2_file(tmp_path / "v2.db")
    store = LadderStore(path, read_only=read_only)
    assert [match.id for match in store.matches.finished()] == ["m1-0", "m1-1", "m2-0"]
    assert store.browse.match_record("m1-1") == {"r": 11}
    assert store.ratings.pools() == {"4p-pairs": 2, "6p-pairs": 1}
    # The sequential Elo ratings are replaced by the fit of the rated sets: a won set 1 against b.
    expected = fit_pool(PoolSums({("a", "b"): PairResult(1, 1.0, 1.0)}))
    assert store.registry.bot("a", "4p-pairs").rating == pytest.approx(expected.ratings[0])
    assert store.registry.bot("a", "4p-pairs").rating > 1500 > store.registry.bot("b", "4p-pairs").rating
    assert store.registry.bot("b", "6p-pairs").rating == 1500
    lines = {line.bot: line for line in ladder_standings(store)}
    assert {line.pool for line in lines.values()} == {"4p-pairs"}
    assert (lines["a"].matches, lines["a"].wins, lines["b"].losses, lines["b"].timeouts) == (2, 2, 2, 1)
    assert lines["a"].interval < float("inf")
    six = {line.bot: line for line in ladder_standings(store, "6p-pairs")}
    assert (six["a"].matches, six["a"].wins, six["a"].interval) == (1, 1, float("inf"))
    assert store.matches.recent_forfeits("b", 3) == [False, False, True]
    assert [match.id for match in store.matches.recent_matches("c", 5)] == ["m2-0"]
    store.close()
    if read_only:
        assert schema_version(path) == "2"
        columns = [row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(matches)")]
        assert "record" in columns
    else:
        assert schema_version(path) == str(SCHEMA_VERSION)
        db = sqlite3.connect(path)
        assert "record" not in [row[1] for row in db.execute("PRAGMA table_info(matches)")]
        assert db.execute("SELECT count(*) FROM match_records").fetchone() == (3,)
        db.close()
        again = LadderStore(path)  # a current file opens as it is
        assert again.browse.match_record("m2-0") == {"r": 20}
        again.close()


VERSION_3 = Path(__file__).parent / "fixtures" / "ladder-v3.sql"
"""A file written by the version-3 arena: bots a, b and c (c removed since); in 4p-pairs two rated sets
of a and b (a won one, the other split), one of b and c (b won), a void set and an unfinished one; in
6p-pairs two rated sets of a, b and c."""


@pytest.mark.parametrize("read_only", [False, True])
def test_a_version_3_file_keeps_its_history_and_is_rated_by_the_fit(tmp_path: Path, read_only: bool) -> None:
    """Read-write, it is upgraded in place: the sums built once from its rated sets, the ratings replaced
    by the fit of each pool, the moments of version 3 dropped; read-only, the same answers, unchanged."""
    path = tmp_path / "v3.db"
    db = sqlite3.connect(path)
    db.executescript(VERSION_3.read_text(encoding="utf-8"))
    db.close()
    store = LadderStore(path, read_only=read_only)
    assert len(store.matches.finished()) == 2 + 2 + 2 + 2 + 3 + 3 + 1
    assert store.browse.match_record("m1-1") == {"r": 11}
    sums = store.ratings.pool_sums("4p-pairs")
    assert sums.pairs == {("a", "b"): PairResult(2, 1.5, 1.25), ("b", "c"): PairResult(1, 1.0, 1.0)}
    assert (sums.choices, sums.rated_sets) == ({}, 3)
    expected = fit_pool(sums)
    fitted = store.ratings.fitted_ratings("4p-pairs")
    assert fitted.keys() == {"a", "b", "c"}  # c, removed, keeps its rating in the fit
    for bot, rating, margin in zip(expected.bots, expected.ratings, expected.margins, strict=True):
        assert (fitted[bot].rating, fitted[bot].margin) == pytest.approx((rating, margin))
    # Two sets of three matches of three bots: two places given in each match.
    assert sum(store.ratings.pool_sums("6p-pairs").places.values()) == pytest.approx(2 * 3 * 2)
    assert [line.bot for line in ladder_standings(store, "4p-pairs")] == ["a", "b"]
    assert len(store.matches.recent_matches("c", 20)) == 2 + 2 + 3 + 3 + 1
    store.close()
    db = sqlite3.connect(path)
    columns = {row[1] for row in db.execute("PRAGMA table_info(bot_totals)")}
    if read_only:
        assert schema_version(path) == "3"
        assert "pair_m2" in columns
    else:
        assert schema_version(path) == str(SCHEMA_VERSION)
        assert "pair_m2" not in columns
        assert db.execute("SELECT name, rated_sets FROM pools ORDER BY name").fetchall() == [
            ("4p-pairs", 3),
            ("6p-pairs", 2),
        ]
        db.close()
        again = LadderStore(path)  # rating goes on from the sums
        duplicate = again.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
        for rotation in range(2):
            save_match(
                again, f"n{rotation}", duplicate, rotation, "r", [2, 1], [], {}, 1, 0.1
            )  # b, then a: split
        assert rate_set(again, duplicate) is not None
        assert again.ratings.pool_sums("4p-pairs").pairs[("a", "b")] == PairResult(3, 2.0, 1.5)
        again.close()


VERSION_4 = Path(__file__).parent / "fixtures" / "ladder-v4.sql"
"""A file written by the version-4 arena: see its first lines."""


@pytest.mark.parametrize("read_only", [False, True])
def test_a_version_4_file_gets_the_columns_of_version_5(tmp_path: Path, read_only: bool) -> None:
    """Read-write, it is upgraded in place (the columns added, the version raised, its sets that still
    had rotations to play made void: today's engine deals other packs for their seeds); read-only, it is
    read as it is, the new columns taken as unknown. Either way its old seeds (negative, 31-bit, 64-bit)
    read back as stored."""
    path = tmp_path / "v4.db"
    db = sqlite3.connect(path)
    db.executescript(VERSION_4.read_text(encoding="utf-8"))
    db.close()
    store = LadderStore(path, read_only=read_only)
    assert [(bot.name, bot.owner) for bot in store.registry.bots()] == [("a", None), ("b", None), ("c", None)]
    assert store.browse.match_record("m1-1") == {"r": 11}
    assert [line.bot for line in ladder_standings(store)] == ["a", "b", "c"]  # a beat b, b beat c
    unfinished = {duplicate.id: (duplicate, missing) for duplicate, missing in store.sets.unfinished_sets()}
    store.close()
    db = sqlite3.connect(path)
    columns = {row[1] for row in db.execute("PRAGMA table_info(sets)")}
    seeds = db.execute("SELECT seed FROM sets ORDER BY id").fetchall()
    db.close()
    assert seeds == [(-(2**63 - 1),), (2**31 - 1,), (2**63 - 1,), (12345,), (77,)]
    if read_only:
        assert schema_version(path) == "4"
        assert "seed_high" not in columns
        assert sorted(unfinished) == [3, 4, 5]
        third, missing = unfinished[3]
        assert (third.seed, third.deal_cap, missing) == (2**63 - 1, 3, [1])
        assert (unfinished[4][0].seed, unfinished[4][0].event) == (12345, "cup")
        assert (third.isolated, third.shown, unfinished[4][0].isolated) == (None, False, None)
        return
    assert schema_version(path) == str(SCHEMA_VERSION)
    assert {"seed_high", "isolated", "shown_at"} <= columns
    fifth, missing = unfinished.pop(5)
    assert (fifth.seed, fifth.isolated, missing) == (77, None, [])  # played whole: still to be rated
    assert unfinished == {}
    again = LadderStore(path)
    assert again.sets.void_reason(3) == again.sets.void_reason(4) == OLD_DEALS
    assert rate_set(again, fifth) is not None
    again.registry.update_bot("a", command="run-a")
    duplicate = again.sets.create_set(4, "pairs", None, 2**128 - 1, ["a", "b"], isolated=True)
    again.sets.mark_set_shown(duplicate.id)
    [(read, _missing)] = again.sets.unfinished_sets()
    assert (read.seed, read.isolated, read.shown) == (2**128 - 1, True, True)
    again.close()


# Files the store cannot use: every SQLite error is a StoreError that names the file.


def filled_store(path: Path, bots: int = 400) -> None:
    """A ladder file whose bots table spans many pages (so a damaged page is read late, not at opening)."""
    store = LadderStore(path)
    for number in range(bots):
        store.registry.add_bot(f"bot-{number:04}", command=f"run --port {{port}} --padding {'x' * 200}")
    store.close()


def damage_the_end(path: Path) -> None:
    """Overwrite the last quarter of the file with garbage: the schema (its first pages) stays readable."""
    data = bytearray(path.read_bytes())
    middle = len(data) * 3 // 4
    data[middle:] = bytes(range(256)) * ((len(data) - middle) // 256 + 1)
    path.write_bytes(bytes(data[: len(data)]))


def test_a_page_damaged_late_is_a_store_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    filled_store(path)
    damage_the_end(path)
    store = LadderStore(path)  # the schema pages are intact: the damage shows only on a query
    with pytest.raises(StoreError, match=rf"^{path} is damaged or not a ladder database \("):
        store.registry.bots()
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
        "INSERT INTO bots (name, address, command, probation, created_at, updated_at)"
        " VALUES ('theirs', 'h:1', NULL, NULL, 0, 0)"
    )
    store = LadderStore(path, timeout=0.1)  # opening a current file only reads: no lock needed
    with pytest.raises(StoreError, match=rf"^{path} is locked by another program \(waited 0.1 s\)"):
        store.registry.add_bot("mine", address="h:2")
    assert store.registry.bots() == []  # a reader is not blocked by the writer
    other.execute("COMMIT")
    other.close()
    assert [bot.name for bot in store.registry.bots()] == ["theirs"]
    store.registry.add_bot("mine", address="h:2")
    assert [bot.name for bot in store.registry.bots()] == ["mine", "theirs"]


def test_read_only_reads_and_refuses_every_write(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    writable = LadderStore(path)
    writable.registry.add_bot("a", address="h:1")
    writable.registry.add_bot("b", address="h:2")
    duplicate = writable.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save_match(writable, "m1-0", duplicate, 0, "one_team_left", [1, 2], [], {"r": 1}, 10, 0.5)
    writable.close()
    store = LadderStore(path, read_only=True)
    assert store.read_only
    assert [line.bot for line in ladder_standings(store)] == ["a", "b"]
    assert store.browse.match_record("m1-0") == {"r": 1}
    for write in (
        lambda: store.registry.add_bot("c", address="h:3"),
        lambda: store.registry.set_probation("a", "why"),
        lambda: store.registry.remove_bot("a"),
        lambda: store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False),
        lambda: save_match(store, "m1-1", duplicate, 1, "one_team_left", [2, 1], [], {}, 10, 0.5),
        lambda: store.sets.void_set(duplicate.id, "why"),
        lambda: store.ratings.save_rating_event(duplicate.id, 0, PoolSums(), [], []),
    ):
        with pytest.raises(
            StoreError, match=rf"^{path} is read-only \(opened read-only\); nothing was changed"
        ):
            write()
    assert len(store.matches.finished()) == 1


def test_a_read_only_file_of_version_1_is_read_without_upgrading(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    db = sqlite3.connect(path)
    db.executescript(
        VERSION_2.replace("rated_at REAL,\n    void_reason TEXT", "rated_at REAL")
        + """
        INSERT INTO meta VALUES ('schema_version', '1');
        INSERT INTO bots VALUES ('a', 'h:1', NULL, 1510, NULL, 0, 0);
        """
    )
    db.close()
    store = LadderStore(path, read_only=True)
    # Its one sequential Elo rating is gone: no rated set, so the starting rating.
    assert [(line.bot, line.rating) for line in ladder_standings(store)] == [("a", 1500)]
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
