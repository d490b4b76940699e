"""The ladder's store: bots registry, sets, matches stored at once with typed faults, rating events saved
exactly once and whole, damaged rows refused."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select, text

from arena.ladder.rating.values import START_RATING, FittedRating, PairResult, PoolSums, SetResult
from arena.ladder.store import relations
from arena.ladder.store.entries import DuplicateSet, RatingChange
from arena.ladder.store.file import DuplicateMatchError, RatingsChangedError, StoreError, StoreFile
from arena.ladder.store.ladder_store import LadderStore
from arena.runner.address_policy import AddressPolicy
from fiftysix.wire import FaultCause, FaultRecord


@pytest.fixture
def store(database: str) -> Iterator[LadderStore]:
    """A new ladder store, on SQLite and on PostgreSQL."""
    opened = LadderStore(database)
    yield opened
    opened.close()


def edit(store: LadderStore, statement: str, **values: object) -> None:
    """Change the database behind the store's back, as a hand edit (or damage) would."""
    store._conn.execute(text(statement), values)


def on_sqlite_only(store: LadderStore, why: str) -> None:
    if store._conn.dialect.name != "sqlite":
        pytest.skip(why)


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
RESULT = SetResult({("a", "b"): 1.0}, {}, {})
FITTED = [FittedRating("a", 1516.0, 200.0, 0.9), FittedRating("b", 1484.0, 200.0, None)]


def save_event(store: LadderStore, set_id: int, rated_sets: int = 0) -> bool:
    """Save the rating event of a set that a won against b (EVENT), fitted from `rated_sets` sets."""
    return store.save_rating_event(set_id, rated_sets, RESULT, FITTED, EVENT)


def rating_events(store: LadderStore) -> list[tuple[int, str, float, float]]:
    events = relations.rating_events
    rows = store._conn.execute(select(events).order_by(events.c.set_id, events.c.bot))
    return [tuple(row) for row in rows]  # type: ignore[misc]


def test_a_set_is_unfinished_until_its_rating_event_is_saved_once(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 99, ["a", "b"], isolated=False)
    assert duplicate.team_bots(0) == ("a", "b")
    assert duplicate.team_bots(1) == ("b", "a")
    save(store, duplicate, 0, [1, 2])
    assert store.unfinished_sets() == [(duplicate, [1])]
    save(store, duplicate, 1, [2, 1])
    assert store.unfinished_sets() == [(duplicate, [])]
    assert save_event(store, duplicate.id) is True
    assert (store.bot("a").rating, store.bot("b").rating) == (1516.0, 1484.0)
    assert store.fitted_ratings("4p-pairs") == {line.bot: line for line in FITTED}
    assert store.pool_sums("4p-pairs") == PoolSums({("a", "b"): PairResult(1, 1.0, 1.0)}, rated_sets=1)
    assert store.rated_sets() == {duplicate.id}
    assert store.unfinished_sets() == []
    assert rating_events(store) == [(1, "a", 1500.0, 1516.0), (1, "b", 1500.0, 1484.0)]
    assert save_event(store, duplicate.id, 1) is False
    assert store.bot("a").rating == 1516.0
    assert store.pool_sums("4p-pairs").rated_sets == 1
    assert save_event(store, 99, 1) is False  # no such set


def test_a_rating_event_from_ratings_that_changed_is_refused(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    other = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    assert save_event(store, other.id) is True  # another runner rated a set of the pool meanwhile
    with pytest.raises(RatingsChangedError, match=r"while set 1 was being rated \(1 other sets of 4p-pairs"):
        save_event(store, duplicate.id)
    assert store.pool_sums("4p-pairs").pairs == {("a", "b"): PairResult(1, 1.0, 1.0)}
    assert store.rated_sets() == {other.id}


FAILING_TRIGGER = {
    "sqlite": [
        "CREATE TRIGGER fail BEFORE UPDATE OF rated_at ON sets BEGIN SELECT RAISE(ABORT, 'disk gone'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION fail() RETURNS trigger AS $$ BEGIN RAISE 'disk gone'; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER fail BEFORE UPDATE OF rated_at ON sets FOR EACH ROW EXECUTE FUNCTION fail()",
    ],
}
"""A trigger that fails the last step of saving a rating event, as a full disk would."""


def test_a_rating_event_is_saved_whole_or_not_at_all(store: LadderStore) -> None:
    """Rows, ratings and the set's mark are one transaction: a failure at the last step (or a SIGKILL
    anywhere before the commit) leaves none of them, and the set can be rated later, once."""
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    for statement in FAILING_TRIGGER[store._conn.dialect.name]:
        edit(store, statement)
    with pytest.raises(StoreError, match="disk gone"):
        save_event(store, duplicate.id)
    assert rating_events(store) == []
    assert [bot.rating for bot in store.bots()] == [START_RATING, START_RATING]
    assert store.rated_sets() == set()
    assert store.pool_sums("4p-pairs") == PoolSums()
    edit(store, "DROP TRIGGER fail" + (" ON sets" if store._conn.dialect.name == "postgresql" else ""))
    assert save_event(store, duplicate.id) is True
    assert len(rating_events(store)) == 2


def test_the_ratings_of_registered_removed_and_unknown_bots(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    store.add_bot("new", address="h:3")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save_event(store, duplicate.id)
    store.remove_bot("b")
    assert store.fitted_ratings("4p-pairs").keys() == {"a", "b"}  # b, removed, stays in the fit
    assert [(bot.name, bot.rating) for bot in store.bots()] == [("a", 1516.0), ("new", START_RATING)]


def test_removing_a_bot_voids_its_unfinished_sets_only(store: LadderStore) -> None:
    for name in "abc":
        store.add_bot(name, address="h:1")
    rated = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, rated, 0, [1, 2])
    save(store, rated, 1, [2, 1])
    save_event(store, rated.id)
    begun = store.create_set(4, "pairs", None, 2, ["b", "a"], isolated=False)
    save(store, begun, 0, [1, 2])
    other = store.create_set(4, "pairs", None, 3, ["a", "c"], isolated=False)
    store.remove_bot("b")
    assert [duplicate.id for duplicate, _missing in store.unfinished_sets()] == [other.id]
    assert store.void_reason(begun.id) == "b was removed"
    assert store.void_reason(rated.id) is None
    assert len(store.matches(begun.id)) == 1  # the history stays


def test_a_rotation_is_stored_once(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, duplicate, 0, [1, 2])
    with pytest.raises(DuplicateMatchError, match="set 1 rotation 0 is stored already"):
        store.save_match("other-id", duplicate, 0, "one_team_left", [1, 2], [], {}, 1, 0.1)
    assert len(store.matches(duplicate.id)) == 1


def test_a_void_set_is_never_rated_nor_resumed(store: LadderStore) -> None:
    store.add_bot("a", address="h:1")
    store.add_bot("b", address="h:2")
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, duplicate, 0, [1, 2])
    store.void_set(duplicate.id, "arena error in rotation 1")
    assert store.unfinished_sets() == []
    save(store, duplicate, 1, [2, 1])
    assert save_event(store, duplicate.id) is False
    assert store.bot("a").rating == START_RATING
    assert store.void_reason(duplicate.id) == "arena error in rotation 1"
    assert len(store.matches(duplicate.id)) == 2  # kept in the history


FAULT = '[{"seat": 1, "team": 1, "cause": "timeout", "detail": "", "deal_number": 1}]'
"""A stored fault as the first release wrote it (no `substituted`)."""


def test_faults_are_stored_and_read_back_typed(store: LadderStore) -> None:
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    faults = [
        FaultRecord(seat=1, team=1, cause=FaultCause.TIMEOUT, detail="late", deal_number=2),
        FaultRecord(
            seat=2, team=0, cause=FaultCause.PROTOCOL_ERROR, detail="x", deal_number=3, substituted=True
        ),
    ]
    save(store, duplicate, 0, [1, 2], faults)
    [match] = store.matches()
    assert match.faults == tuple(faults)
    stored = store._conn.scalar(select(relations.matches.c.faults))
    assert json.loads(stored) == [fault.to_json() for fault in faults]  # the format on disk is unchanged
    assert match.to_json()["faults"] == json.loads(stored)
    json.dumps(match.to_json())


def test_a_fault_stored_by_the_first_release_reads_as_a_forfeit(store: LadderStore) -> None:
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, duplicate, 0, [1, 2])
    edit(store, "UPDATE matches SET faults = :faults", faults=FAULT)
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
    duplicate = store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, duplicate, 0, [1, 2])
    edit(store, f"UPDATE matches SET {column} = :value", value=value)
    for read in (store.matches, lambda: store.recent_matches("a", 5)):
        with pytest.raises(StoreError, match=rf"is damaged: {what}"):
            read()


@pytest.mark.parametrize(
    "change", ["players = 5", "ruleset = 'bridge'", "deal_cap = 10000000", "bots = '[\"a\"]'", "seed = 'x'"]
)
def test_a_set_the_ladder_could_not_play_is_a_store_error(store: LadderStore, change: str) -> None:
    """The ladder resumes unfinished sets: one it cannot play must stop it with a clear message."""
    if "'x'" in change:
        on_sqlite_only(store, "a PostgreSQL column holds only values of its type")
    store.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    edit(store, f"UPDATE sets SET {change}")
    with pytest.raises(StoreError, match=r"is damaged: set 1 does not hold what the arena wrote"):
        store.unfinished_sets()


@pytest.mark.parametrize("rating", ["'high'", "1e999", "-1e999"])
def test_a_bot_row_of_the_wrong_types_is_a_store_error(store: LadderStore, rating: str) -> None:
    on_sqlite_only(store, "a PostgreSQL column holds only values of its type")
    store.add_bot("a", address="h:1")
    edit(store, f"INSERT INTO ratings (bot, pool, rating) VALUES ('a', '4p-pairs', {rating})")
    with pytest.raises(StoreError, match=r"is damaged: the row of bot 'a'"):
        store.bots()


PUBLIC_CALLS: dict[str, Any] = {
    "close": lambda s: s.close(),
    "add_bot": lambda s: s.add_bot("x", address="h:1"),
    "bot": lambda s: s.bot("a"),
    "bots": lambda s: s.bots(),
    "update_bot": lambda s: s.update_bot("a", address="h:9"),
    "set_owner": lambda s: s.set_owner("a", "ann"),
    "remove_bot": lambda s: s.remove_bot("a"),
    "set_probation": lambda s: s.set_probation("a", "why"),
    "create_set": lambda s: s.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False),
    "mark_set_shown": lambda s: s.mark_set_shown(1),
    "unfinished_sets": lambda s: s.unfinished_sets(),
    "save_match": lambda s: s.save_match(
        "m", DuplicateSet(1, 4, "pairs", None, 1, ("a", "b"), 2), 0, "r", [1, 2], [], {}, 1, 0.1
    ),
    "void_set": lambda s: s.void_set(1, "why"),
    "void_reason": lambda s: s.void_reason(1),
    "matches": lambda s: s.matches(),
    "recent_matches": lambda s: s.recent_matches(None, 5),
    "match_record": lambda s: s.match_record("m"),
    "pool_sums": lambda s: s.pool_sums("4p-pairs"),
    "game_records": lambda s: list(s.game_records()),
    "fitted_ratings": lambda s: s.fitted_ratings("4p-pairs"),
    "save_rating_event": lambda s: save_event(s, 1),
    "rated_sets": lambda s: s.rated_sets(),
    "claim_set": lambda s: s.claim_set(1, "me", 1.0),
    "renew_leases": lambda s: s.renew_leases("me", [1], 1.0),
    "release_set": lambda s: s.release_set(1, "me"),
    "claimable_sets": lambda s: s.claimable_sets("me"),
    "record_host_failure": lambda s: s.record_host_failure("a", 3),
    "record_host_success": lambda s: s.record_host_success("a"),
    "down_bots": lambda s: s.down_bots(),
    "bot_ratings": lambda s: s.bot_ratings(),
    "recent_forfeits": lambda s: s.recent_forfeits("a", 3),
    "totals": lambda s: s.totals("4p-pairs"),
    "matches_played": lambda s: s.matches_played("4p-pairs"),
    "pools": lambda s: s.pools(),
    "sets_not_isolated": lambda s: s.sets_not_isolated(),
    "add_live_events": lambda s: s.add_live_events("m", [(0, 1.0, "{}")]),
    "delete_live_events": lambda s: s.delete_live_events("m"),
    "prune_live_events": lambda s: s.prune_live_events(60),
    "live_matches": lambda s: s.live_matches(60),
    "live_events": lambda s: s.live_events("m", -1),
    "is_live": lambda s: s.is_live("m"),
    "live_updates": lambda s: s.live_updates({"m": -1}),
    "add_token": lambda s: s.add_token("a", "participant", "host"),
    "remove_token": lambda s: s.remove_token("a", "host"),
    "tokens": lambda s: s.tokens(),
    "token_holder": lambda s: s.token_holder("a56_x"),
    "record_write": lambda s: s.record_write("host", "bot_removed", "a"),
    "audit_log": lambda s: s.audit_log(10),
    "address_policy": lambda s: s.address_policy(),
    "set_address_policy": lambda s: s.set_address_policy(AddressPolicy.parse("10.0.0.0/8"), "host"),
    "match_page": lambda s: s.match_page(None, None, 0, 10),
    "match_summary": lambda s: s.match_summary("m"),
    "held_back_matches": lambda s: s.held_back_matches(),
    "rating_history": lambda s: s.rating_history("a", "4p-pairs", 10),
    "add_upload": lambda s: s.add_upload("a", "0" * 64, "python bot.py"),
    "set_launch": lambda s: s.set_launch("a", "run", True, None),
    "forget_launch": lambda s: s.forget_launch("a"),
    "uploads_of": lambda s: s.uploads_of("a"),
    "sandboxed_bots": lambda s: s.sandboxed_bots(),
    "launch_row": lambda s: s.launch_row("a", "run"),
    "uploads": lambda s: s.uploads(),
    "launched_versions": lambda s: s.launched_versions(),
    "open_sets_since": lambda s: s.open_sets_since(),
    "remove_uploads": lambda s: s.remove_uploads([("a", 1)]),
    "wanted_bundles": lambda s: s.wanted_bundles(),
    "bundles_of": lambda s: s.bundles_of("a"),
    "write_times": lambda s: s.write_times("participant:a", ["bot_uploaded"], 0.0),
}


def test_every_public_method_turns_database_errors_into_store_errors(database: str) -> None:
    """With the connection gone (SQLite's closed; the server's ended by the server, as a restart does),
    every call fails inside the database; none may leak a sqlite3, psycopg or SQLAlchemy exception."""
    public = {
        name
        for cls in LadderStore.__mro__
        if issubclass(cls, StoreFile)
        for name, value in vars(cls).items()
        if callable(value) and not name.startswith("_")
    }
    assert public == set(PUBLIC_CALLS), "a new public method needs a line here"
    first = LadderStore(database)
    first.add_bot("a", address="h:1")
    first.close()
    for name, call in PUBLIC_CALLS.items():
        store = LadderStore(database)
        if store._conn.dialect.name == "sqlite":
            store._db.close()
        else:
            other = LadderStore(database)
            pid = store._conn.scalar(text("SELECT pg_backend_pid()"))
            other._conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            other.close()
        if name == "close":
            continue  # closing twice is allowed
        with pytest.raises(StoreError, match=re.escape(store.name)):
            call(store)
        store.close()


def test_an_upgrade_to_version_6_marks_the_addresses_participants_gave(database: str) -> None:
    """A bot whose address a participant's token wrote last (the audit log says) is checked by the host's
    address policy from version 6 on, though it was registered before; the host's own bots are not. The
    upgrade touches nothing else (the unfinished sets of version 5 stay as they were)."""
    store = LadderStore(database)
    for name in ("theirs", "taken-back", "hosts", "unaudited"):
        store.add_bot(name, address="unix:/run/another-bot.sock")
    store.add_bot("uploaded", command="python bot.py --socket {socket}")
    writes = [
        ("participant:theirs", "bot_registered", "theirs"),
        ("participant:taken-back", "bot_registered", "taken-back"),
        ("host:command-line", "bot_updated", "taken-back"),
        ("host:boss", "bot_registered", "hosts"),
        ("participant:hosts", "probation_set", "hosts"),  # not a write of its address
        ("participant:uploaded", "bot_uploaded", "uploaded"),
    ]
    for actor, action, target in writes:
        store.record_write(actor, action, target)
    waiting = store.create_set(4, "pairs", None, 1, ["theirs", "hosts"], isolated=False)
    edit(store, "ALTER TABLE bots DROP COLUMN participant_address")
    edit(store, "UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    store._conn.commit()
    store.close()
    upgraded = LadderStore(database)
    try:
        marked = {bot.name for bot in upgraded.bots() if bot.participant_address}
        assert marked == {"theirs"}
        assert upgraded.void_reason(waiting.id) is None
    finally:
        upgraded.close()
