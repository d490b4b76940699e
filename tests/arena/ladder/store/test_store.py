"""The ladder's store: bots registry, sets, matches stored at once with typed faults, rating events saved
exactly once and whole, damaged rows refused."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select, text

from arena.check import CheckReport
from arena.ladder.rating.values import START_RATING, FittedRating, PairResult, PoolSums
from arena.ladder.store import relations
from arena.ladder.store.access import TokenHolder
from arena.ladder.store.entries import DuplicateSet, FinishedMatch, RatingChange
from arena.ladder.store.file import DuplicateMatchError, RatingsChangedError, StoreError, StorePart
from arena.ladder.store.ladder_store import LadderStore
from arena.runner.address_policy import AddressPolicy
from fiftysix.wire import FaultCause, FaultRecord
from tests.arena.ladder.match_support import save_match


@pytest.fixture
def store(database: str) -> Iterator[LadderStore]:
    """A new ladder store, on SQLite and on PostgreSQL."""
    opened = LadderStore(database)
    yield opened
    opened.close()


def edit(store: LadderStore, statement: str, **values: object) -> None:
    """Change the database behind the store's back, as a hand edit (or damage) would."""
    store.file._conn.execute(text(statement), values)


def on_sqlite_only(store: LadderStore, why: str) -> None:
    if store.file._conn.dialect.name != "sqlite":
        pytest.skip(why)


def test_bots_registry(store: LadderStore) -> None:
    store.registry.add_bot("alice", address="127.0.0.1:5000")
    store.registry.add_bot("bob", command="python -m bob --port {port}")
    assert [bot.name for bot in store.registry.bots()] == ["alice", "bob"]
    assert store.registry.bot("alice").rating == START_RATING
    assert store.registry.bot("bob").where == "command: python -m bob --port {port}"
    store.registry.update_bot("alice", address="127.0.0.1:6000")
    assert store.registry.bot("alice").address == "127.0.0.1:6000"
    store.registry.update_bot("alice", command="run {port}")
    assert store.registry.bot("alice").address is None
    store.registry.set_probation("bob", "crashed 3 times")
    assert store.registry.bot("bob").probation == "crashed 3 times"
    store.registry.remove_bot("alice")
    assert [bot.name for bot in store.registry.bots()] == ["bob"]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (lambda s: s.registry.add_bot("alice", address="h:1"), "already registered"),
        (lambda s: s.registry.bot("nobody"), "no bot named"),
        (lambda s: s.registry.remove_bot("nobody"), "no bot named"),
        (lambda s: s.registry.update_bot("alice"), "either"),
        (lambda s: s.registry.add_bot("carol"), "either an address or a command"),
    ],
)
def test_bad_requests_are_refused(store: LadderStore, action: object, message: str) -> None:
    store.registry.add_bot("alice", address="127.0.0.1:5000")
    with pytest.raises(StoreError, match=message):
        action(store)  # type: ignore[operator]


def save(
    store: LadderStore,
    duplicate: DuplicateSet,
    rotation: int,
    ranking: list[int],
    faults: list[FaultRecord] | None = None,
) -> None:
    save_match(
        store,
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
ADDED = PoolSums({("a", "b"): PairResult(1, 1.0, 1.0)}, rated_sets=1)
"""What that set adds to its pool's sums."""
FITTED = [FittedRating("a", 1516.0, 200.0, 0.9), FittedRating("b", 1484.0, 200.0, None)]


def save_event(store: LadderStore, set_id: int, rated_sets: int = 0) -> bool:
    """Save the rating event of a set that a won against b (EVENT), fitted from `rated_sets` sets."""
    return store.ratings.save_rating_event(set_id, rated_sets, ADDED, FITTED, EVENT)


def rating_events(store: LadderStore) -> list[tuple[int, str, float, float]]:
    events = relations.rating_events
    rows = store.file._conn.execute(select(events).order_by(events.c.set_id, events.c.bot))
    return [tuple(row) for row in rows]  # type: ignore[misc]


def test_a_set_is_unfinished_until_its_rating_event_is_saved_once(store: LadderStore) -> None:
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    duplicate = store.sets.create_set(4, "pairs", None, 99, ["a", "b"], isolated=False)
    assert duplicate.team_bots(0) == ("a", "b")
    assert duplicate.team_bots(1) == ("b", "a")
    save(store, duplicate, 0, [1, 2])
    assert store.sets.unfinished_sets() == [(duplicate, [1])]
    save(store, duplicate, 1, [2, 1])
    assert store.sets.unfinished_sets() == [(duplicate, [])]
    assert save_event(store, duplicate.id) is True
    assert (store.registry.bot("a").rating, store.registry.bot("b").rating) == (1516.0, 1484.0)
    assert store.ratings.fitted_ratings("4p-pairs") == {line.bot: line for line in FITTED}
    assert store.ratings.pool_sums("4p-pairs") == PoolSums(
        {("a", "b"): PairResult(1, 1.0, 1.0)}, rated_sets=1
    )
    assert store.sets.rated_sets() == {duplicate.id}
    assert store.sets.unfinished_sets() == []
    assert rating_events(store) == [(1, "a", 1500.0, 1516.0), (1, "b", 1500.0, 1484.0)]
    assert save_event(store, duplicate.id, 1) is False
    assert store.registry.bot("a").rating == 1516.0
    assert store.ratings.pool_sums("4p-pairs").rated_sets == 1
    assert save_event(store, 99, 1) is False  # no such set


def test_a_rating_event_from_ratings_that_changed_is_refused(store: LadderStore) -> None:
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    other = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    assert save_event(store, other.id) is True  # another runner rated a set of the pool meanwhile
    with pytest.raises(RatingsChangedError, match=r"while set 1 was being rated \(1 other sets of 4p-pairs"):
        save_event(store, duplicate.id)
    assert store.ratings.pool_sums("4p-pairs").pairs == {("a", "b"): PairResult(1, 1.0, 1.0)}
    assert store.sets.rated_sets() == {other.id}


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
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    for statement in FAILING_TRIGGER[store.file._conn.dialect.name]:
        edit(store, statement)
    with pytest.raises(StoreError, match="disk gone"):
        save_event(store, duplicate.id)
    assert rating_events(store) == []
    assert [bot.rating for bot in store.registry.bots()] == [START_RATING, START_RATING]
    assert store.sets.rated_sets() == set()
    assert store.ratings.pool_sums("4p-pairs") == PoolSums()
    edit(store, "DROP TRIGGER fail" + (" ON sets" if store.file._conn.dialect.name == "postgresql" else ""))
    assert save_event(store, duplicate.id) is True
    assert len(rating_events(store)) == 2


def test_the_ratings_of_registered_removed_and_unknown_bots(store: LadderStore) -> None:
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    store.registry.add_bot("new", address="h:3")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save_event(store, duplicate.id)
    store.registry.remove_bot("b")
    assert store.ratings.fitted_ratings("4p-pairs").keys() == {"a", "b"}  # b, removed, stays in the fit
    assert [(bot.name, bot.rating) for bot in store.registry.bots()] == [("a", 1516.0), ("new", START_RATING)]


def test_removing_a_bot_voids_its_unfinished_sets_only(store: LadderStore) -> None:
    for name in "abc":
        store.registry.add_bot(name, address="h:1")
    rated = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, rated, 0, [1, 2])
    save(store, rated, 1, [2, 1])
    save_event(store, rated.id)
    begun = store.sets.create_set(4, "pairs", None, 2, ["b", "a"], isolated=False)
    save(store, begun, 0, [1, 2])
    other = store.sets.create_set(4, "pairs", None, 3, ["a", "c"], isolated=False)
    store.registry.remove_bot("b")
    assert [duplicate.id for duplicate, _missing in store.sets.unfinished_sets()] == [other.id]
    assert store.sets.void_reason(begun.id) == "b was removed"
    assert store.sets.void_reason(rated.id) is None
    assert len(store.matches.finished(begun.id)) == 1  # the history stays


def test_a_rotation_is_stored_once(store: LadderStore) -> None:
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, duplicate, 0, [1, 2])
    with pytest.raises(DuplicateMatchError, match="set 1 rotation 0 is stored already"):
        save_match(store, "other-id", duplicate, 0, "one_team_left", [1, 2], [], {}, 1, 0.1)
    assert len(store.matches.finished(duplicate.id)) == 1


def test_the_same_match_stored_again_is_counted_once(store: LadderStore) -> None:
    """A retry after a connection lost during COMMIT (which may have committed) finds the match stored
    under its own id, as it was given: stored, once; the same id with another content is not ours."""
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    fault = FaultRecord(1, 1, FaultCause.TIMEOUT, "slow", 1, substituted=True, move_number=3)
    for _ in range(2):
        save(store, duplicate, 0, [1, 2], [fault])
    assert [match.id for match in store.matches.finished(duplicate.id)] == ["m1-0"]
    assert store.ratings.matches_played(duplicate.pool) == {"a": 1, "b": 1}
    pools = relations.pools
    assert store.file._conn.scalar(select(pools.c.matches).where(pools.c.name == duplicate.pool)) == 1
    with pytest.raises(DuplicateMatchError, match="set 1 rotation 0 is stored already"):
        save(store, duplicate, 0, [2, 1], [fault])  # its id, another ranking
    with pytest.raises(DuplicateMatchError):
        save_match(store, "m1-0", duplicate, 1, "one_team_left", [1, 2], [fault], {"r": 1}, 10, 0.5)


def test_a_set_is_found_again_by_its_seed(store: LadderStore) -> None:
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    seed = 2**127 + 12345
    made = store.sets.create_set(4, "pairs", 3, seed, ["a", "b"], lease=("me", 60.0), isolated=True)
    store.sets.create_set(4, "pairs", 3, seed + 1, ["b", "a"], isolated=True)
    assert store.sets.set_with_seed(seed) == made
    assert store.sets.set_with_seed(seed + 2) is None


def test_a_void_set_is_never_rated_nor_resumed(store: LadderStore) -> None:
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, duplicate, 0, [1, 2])
    store.sets.void_set(duplicate.id, "arena error in rotation 1")
    assert store.sets.unfinished_sets() == []
    save(store, duplicate, 1, [2, 1])
    assert save_event(store, duplicate.id) is False
    assert store.registry.bot("a").rating == START_RATING
    assert store.sets.void_reason(duplicate.id) == "arena error in rotation 1"
    assert len(store.matches.finished(duplicate.id)) == 2  # kept in the history


FAULT = '[{"seat": 1, "team": 1, "cause": "timeout", "detail": "", "deal_number": 1}]'
"""A stored fault as the first release wrote it (no `substituted`)."""


def test_faults_are_stored_and_read_back_typed(store: LadderStore) -> None:
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    faults = [
        FaultRecord(seat=1, team=1, cause=FaultCause.TIMEOUT, detail="late", deal_number=2),
        FaultRecord(
            seat=2, team=0, cause=FaultCause.PROTOCOL_ERROR, detail="x", deal_number=3, substituted=True
        ),
    ]
    save(store, duplicate, 0, [1, 2], faults)
    [match] = store.matches.finished()
    assert match.faults == tuple(faults)
    stored = store.file._conn.scalar(select(relations.matches.c.faults))
    assert json.loads(stored) == [fault.to_json() for fault in faults]  # the format on disk is unchanged
    assert match.to_json()["faults"] == json.loads(stored)
    json.dumps(match.to_json())


def test_a_records_faults_are_kept_once_and_read_back_where_they_were(store: LadderStore) -> None:
    """The arena's game record lists the match's faults: they are kept in `matches.faults` only, and
    the record reads back as it was given, to the byte (`arena ladder record`, the site, the export)."""
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    faults = [FaultRecord(seat=1, team=1, cause=FaultCause.TIMEOUT, detail="late", deal_number=2)]
    listed = [fault.to_json() for fault in faults]
    record = {"format": "fiftysix-record", "deals": [], "match_id": "m1-0", "faults": listed, "strikes": 2}
    other = {"deals": [], "faults": [{"seat": 0}]}  # not the match's own: kept as given
    save_match(store, "m1-0", duplicate, 0, "forfeit", [2, 1], faults, record, 10, 0.5)
    save_match(store, "m1-1", duplicate, 1, "forfeit", [1, 2], [], other, 10, 0.5)
    kept = dict(store.file._conn.execute(select(relations.match_records)).all())
    assert json.loads(kept["m1-0"])["faults"] is None
    assert json.loads(kept["m1-1"]) == other
    assert json.dumps(store.browse.match_record("m1-0")) == json.dumps(record)
    assert store.browse.match_record("m1-1") == other
    assert dict(store.browse.game_records()) == {"m1-0": record, "m1-1": other}
    edit(
        store, "UPDATE match_records SET record = :record WHERE match_id = 'm1-0'", record=json.dumps(record)
    )
    assert store.browse.match_record("m1-0") == record  # as an older arena kept it: read as it is


def test_a_fault_stored_by_the_first_release_reads_as_a_forfeit(store: LadderStore) -> None:
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, duplicate, 0, [1, 2])
    edit(store, "UPDATE matches SET faults = :faults", faults=FAULT)
    [match] = store.matches.finished()
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
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    save(store, duplicate, 0, [1, 2])
    edit(store, f"UPDATE matches SET {column} = :value", value=value)
    for read in (store.matches.finished, lambda: store.matches.recent_matches("a", 5)):
        with pytest.raises(StoreError, match=rf"is damaged: {what}"):
            read()


@pytest.mark.parametrize(
    "change", ["players = 5", "ruleset = 'bridge'", "deal_cap = 10000000", "bots = '[\"a\"]'", "seed = 'x'"]
)
def test_a_set_the_ladder_could_not_play_is_a_store_error(store: LadderStore, change: str) -> None:
    """The ladder resumes unfinished sets: one it cannot play must stop it with a clear message."""
    if "'x'" in change:
        on_sqlite_only(store, "a PostgreSQL column holds only values of its type")
    store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    edit(store, f"UPDATE sets SET {change}")
    with pytest.raises(StoreError, match=r"is damaged: set 1 does not hold what the arena wrote"):
        store.sets.unfinished_sets()


@pytest.mark.parametrize("rating", ["'high'", "1e999", "-1e999"])
def test_a_bot_row_of_the_wrong_types_is_a_store_error(store: LadderStore, rating: str) -> None:
    on_sqlite_only(store, "a PostgreSQL column holds only values of its type")
    store.registry.add_bot("a", address="h:1")
    edit(store, f"INSERT INTO ratings (bot, pool, rating) VALUES ('a', '4p-pairs', {rating})")
    with pytest.raises(StoreError, match=r"is damaged: the row of bot 'a'"):
        store.registry.bots()


PUBLIC_CALLS: dict[str, Any] = {
    "close": lambda s: s.close(),
    "registry.add_bot": lambda s: s.registry.add_bot("x", address="h:1"),
    "registry.bot": lambda s: s.registry.bot("a"),
    "registry.bots": lambda s: s.registry.bots(),
    "registry.update_bot": lambda s: s.registry.update_bot("a", address="h:9"),
    "registry.set_owner": lambda s: s.registry.set_owner("a", "ann"),
    "registry.remove_bot": lambda s: s.registry.remove_bot("a"),
    "registry.set_probation": lambda s: s.registry.set_probation("a", "why"),
    "sets.create_set": lambda s: s.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False),
    "sets.mark_set_shown": lambda s: s.sets.mark_set_shown(1),
    "sets.unfinished_sets": lambda s: s.sets.unfinished_sets(),
    "sets.set_with_seed": lambda s: s.sets.set_with_seed(1),
    "matches.save_match": lambda s: s.matches.save_match(
        FinishedMatch(
            "m", DuplicateSet(1, 4, "pairs", None, 1, ("a", "b"), 2), 0, "r", (1, 2), (), {}, 1, 0.1
        ),
        [],
    ),
    "sets.void_set": lambda s: s.sets.void_set(1, "why"),
    "sets.void_reason": lambda s: s.sets.void_reason(1),
    "matches.finished": lambda s: s.matches.finished(),
    "matches.recent_matches": lambda s: s.matches.recent_matches(None, 5),
    "browse.match_record": lambda s: s.browse.match_record("m"),
    "ratings.pool_sums": lambda s: s.ratings.pool_sums("4p-pairs"),
    "browse.game_records": lambda s: list(s.browse.game_records()),
    "ratings.fitted_ratings": lambda s: s.ratings.fitted_ratings("4p-pairs"),
    "ratings.save_rating_event": lambda s: save_event(s, 1),
    "sets.rated_sets": lambda s: s.sets.rated_sets(),
    "leases.claim_set": lambda s: s.leases.claim_set(1, "me", 1.0),
    "leases.renew_leases": lambda s: s.leases.renew_leases("me", [1], 1.0),
    "leases.release_set": lambda s: s.leases.release_set(1, "me"),
    "leases.claimable_sets": lambda s: s.leases.claimable_sets("me"),
    "registry.record_host_failure": lambda s: s.registry.record_host_failure("a", 3),
    "registry.record_host_success": lambda s: s.registry.record_host_success("a"),
    "registry.down_bots": lambda s: s.registry.down_bots(),
    "registry.bot_ratings": lambda s: s.registry.bot_ratings(),
    "matches.recent_forfeits": lambda s: s.matches.recent_forfeits("a", 3),
    "outputs.of_match": lambda s: s.outputs.of_match("m"),
    "outputs.own": lambda s: s.outputs.own("m", "a"),
    "ratings.totals": lambda s: s.ratings.totals("4p-pairs"),
    "ratings.matches_played": lambda s: s.ratings.matches_played("4p-pairs"),
    "ratings.pools": lambda s: s.ratings.pools(),
    "sets.sets_not_isolated": lambda s: s.sets.sets_not_isolated(),
    "live.add_live_events": lambda s: s.live.add_live_events("m", [(0, 1.0, "{}")]),
    "live.delete_live_events": lambda s: s.live.delete_live_events("m"),
    "live.prune_live_events": lambda s: s.live.prune_live_events(60),
    "live.live_matches": lambda s: s.live.live_matches(60),
    "live.live_events": lambda s: s.live.live_events("m", -1),
    "live.is_live": lambda s: s.live.is_live("m"),
    "live.live_updates": lambda s: s.live.live_updates({"m": -1}),
    "access.add_token": lambda s: s.access.add_token("a", "participant", "host"),
    "access.remove_token": lambda s: s.access.remove_token("a", "host"),
    "access.tokens": lambda s: s.access.tokens(),
    "access.token_holder": lambda s: s.access.token_holder("a56_x"),
    "access.record_write": lambda s: s.access.record_write("host", "bot_removed", "a"),
    "access.audit_log": lambda s: s.access.audit_log(10),
    "access.address_policy": lambda s: s.access.address_policy(),
    "access.set_address_policy": lambda s: s.access.set_address_policy(
        AddressPolicy.parse("10.0.0.0/8"), "host"
    ),
    "browse.match_page": lambda s: s.browse.match_page(None, None, 0, 10),
    "browse.match_summary": lambda s: s.browse.match_summary("m"),
    "browse.held_back_matches": lambda s: s.browse.held_back_matches(),
    "browse.rating_history": lambda s: s.browse.rating_history("a", "4p-pairs", 10),
    "uploads.add_upload": lambda s: s.uploads.add_upload("a", "0" * 64, "python bot.py"),
    "uploads.set_launch": lambda s: s.uploads.set_launch("a", "run", True, None),
    "uploads.forget_launch": lambda s: s.uploads.forget_launch("a"),
    "uploads.uploads_of": lambda s: s.uploads.uploads_of("a"),
    "uploads.sandboxed_bots": lambda s: s.uploads.sandboxed_bots(),
    "uploads.launch_row": lambda s: s.uploads.launch_row("a", "run"),
    "uploads.all_uploads": lambda s: s.uploads.all_uploads(),
    "uploads.launched_versions": lambda s: s.uploads.launched_versions(),
    "uploads.open_sets_since": lambda s: s.uploads.open_sets_since(),
    "uploads.remove_uploads": lambda s: s.uploads.remove_uploads([("a", 1)]),
    "uploads.wanted_bundles": lambda s: s.uploads.wanted_bundles(),
    "uploads.bundles_of": lambda s: s.uploads.bundles_of("a"),
    "uploads.bundle": lambda s: s.uploads.bundle("0" * 64),
    "uploads.chunk": lambda s: s.uploads.chunk("0" * 64, 0),
    "uploads.kept_bytes": lambda s: s.uploads.kept_bytes({"0" * 64}),
    "access.write_times": lambda s: s.access.write_times("participant:a", ["bot_uploaded"], 0.0),
    "checks.record_check": lambda s: s.checks.record_check("a", "a", CheckReport("h:1", 1000)),
    "checks.checks_of_bot": lambda s: s.checks.checks_of_bot("a"),
    "checks.checks_by": lambda s: s.checks.checks_by("a"),
    "checks.check": lambda s: s.checks.check(1),
    "checks.version_checks": lambda s: s.checks.version_checks("a"),
    "sessions.start": lambda s: s.sessions.start(TokenHolder("a", "participant"), "t", 0.0, 60.0, 60.0),
    "sessions.session": lambda s: s.sessions.session("x", 0.0, 60.0),
    "sessions.touch": lambda s: s.sessions.touch("x", 0.0),
    "sessions.end": lambda s: s.sessions.end("x"),
}


def test_every_public_method_turns_database_errors_into_store_errors(database: str) -> None:
    """With the connection gone (SQLite's closed; the server's ended by the server, as a restart does),
    every call fails inside the database; none may leak a sqlite3, psycopg or SQLAlchemy exception."""
    first = LadderStore(database)
    parts = {name: part for name, part in vars(first).items() if isinstance(part, StorePart)}
    public = {"close"} | {
        f"{name}.{method}"
        for name, part in parts.items()
        for cls in type(part).__mro__
        if issubclass(cls, StorePart)
        for method, value in vars(cls).items()
        if callable(value) and not method.startswith("_")
    }
    assert public == set(PUBLIC_CALLS), "a new public method needs a line here"
    first.registry.add_bot("a", address="h:1")
    first.close()
    for name, call in PUBLIC_CALLS.items():
        store = LadderStore(database)
        if store.file._conn.dialect.name == "sqlite":
            store.file._db.close()
        else:
            other = LadderStore(database)
            pid = store.file._conn.scalar(text("SELECT pg_backend_pid()"))
            other.file._conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
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
        store.registry.add_bot(name, address="unix:/run/another-bot.sock")
    store.registry.add_bot("uploaded", command="python bot.py --socket {socket}")
    writes = [
        ("participant:theirs", "bot_registered", "theirs"),
        ("participant:taken-back", "bot_registered", "taken-back"),
        ("host:command-line", "bot_updated", "taken-back"),
        ("host:boss", "bot_registered", "hosts"),
        ("participant:hosts", "probation_set", "hosts"),  # not a write of its address
        ("participant:uploaded", "bot_uploaded", "uploaded"),
    ]
    for actor, action, target in writes:
        store.access.record_write(actor, action, target)
    waiting = store.sets.create_set(4, "pairs", None, 1, ["theirs", "hosts"], isolated=False)
    edit(store, "ALTER TABLE bots DROP COLUMN participant_address")
    edit(store, "UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    store.file._conn.commit()
    store.close()
    upgraded = LadderStore(database)
    try:
        marked = {bot.name for bot in upgraded.registry.bots() if bot.participant_address}
        assert marked == {"theirs"}
        assert upgraded.sets.void_reason(waiting.id) is None
    finally:
        upgraded.close()
