"""The ladder's SQLite store: bots registry, sets, matches stored at once, sets rated exactly once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.elo import START_RATING
from arena.storage import SCHEMA_VERSION, DuplicateMatchError, DuplicateSet, LadderStore, StoreError


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
    faults: list[dict[str, object]] | None = None,
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


def test_sets_are_rated_once_when_complete(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 99, ["a", "b"])
    assert duplicate.team_bots(0) == ("a", "b")
    assert duplicate.team_bots(1) == ("b", "a")
    save(store, duplicate, 0, [1, 2])  # a (team 0) first
    assert store.rate_set(duplicate.id) is None  # one rotation still to play
    assert store.unfinished_sets() == [(duplicate, [1])]
    save(store, duplicate, 1, [2, 1])  # a is now team 1 and first again
    changes = store.rate_set(duplicate.id)
    assert changes == pytest.approx({"a": 16.0, "b": -16.0})
    assert store.rate_set(duplicate.id) is None
    assert store.bot("a").rating == pytest.approx(1516.0)
    assert store.unfinished_sets() == []


def test_a_rotation_is_stored_once(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    save(store, duplicate, 0, [1, 2])
    with pytest.raises(DuplicateMatchError, match="set 1 rotation 0 is stored already"):
        store.save_match("other-id", duplicate, 0, "one_team_left", [1, 2], [], {}, 1, 0.1)
    assert len(store.matches(duplicate.id)) == 1


def test_standings_count_wins_losses_and_faults(store: LadderStore) -> None:
    for name in ("a", "b"):
        store.add_bot(name, address=f"h:{name}")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"])
    timeout = {"seat": 1, "team": 1, "cause": "timeout", "detail": "late", "deal_number": 2}
    save(store, duplicate, 0, [1, 2], [timeout])  # b (team 1) timed out
    illegal = {"seat": 0, "team": 0, "cause": "illegal_move", "detail": "bad", "deal_number": 1}
    save(store, duplicate, 1, [2, 1], [illegal])  # b is team 0 now and played an illegal move
    store.rate_set(duplicate.id)
    standings = {line.bot: line for line in store.standings()}
    assert standings["a"].rank == 1
    assert (standings["a"].matches, standings["a"].wins, standings["a"].losses) == (2, 2, 0)
    assert (standings["b"].wins, standings["b"].losses) == (0, 2)
    assert (standings["b"].timeouts, standings["b"].illegal_moves, standings["b"].crashes) == (1, 1, 0)
    assert (standings["a"].timeouts, standings["a"].illegal_moves) == (0, 0)
    assert standings["a"].interval < float("inf")
    assert standings["a"].to_json()["faults"] == {"timeouts": 0, "illegal_moves": 0, "crashes": 0}


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
    assert store.rate_set(duplicate.id) is None
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
