"""The store on SQLite and on PostgreSQL (the `database` fixture runs each test on both): opening, the
bots registry, creating, listing, claiming and voiding sets, saving and reading matches, streaming the
records, rating a set once, the running totals and pools, the leases of sets and the health of bots, the
site's parts (live events, tokens and the audit log, pages of history), the uploads, errors as one-line
StoreErrors. test_store.py takes the same fixture."""

from __future__ import annotations

import doctest
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from postgres_support import PostgresServer
from sqlalchemy import text, update

from arena.check import CheckItem, CheckReport, Status
from arena.ladder.rating.values import BotTotals, MatchTally
from arena.ladder.ratings import rate_set
from arena.ladder.store import SeatOutput, relations
from arena.ladder.store import browse as store_browse
from arena.ladder.store import outputs as store_outputs
from arena.ladder.store import rows as store_rows
from arena.ladder.store.access import TokenHolder
from arena.ladder.store.checks import UNREGISTERED_KEPT
from arena.ladder.store.database import OLD_DEALS
from arena.ladder.store.entries import BotEntry, isolated
from arena.ladder.store.file import DuplicateMatchError, StoreError
from arena.ladder.store.ladder_store import LadderStore
from arena.ladder.store.relations import bots, meta, pools, sets
from arena.ladder.store.rows import joined_seed, split_seed
from arena.ladder.store.schema import SCHEMA_VERSION
from arena.ladder.store.sums import add_totals
from arena.ladder.store.uploads import LaunchRow
from tests.arena.ladder.match_support import save_match


def tally(bot: str, *, win: bool = False, loss: bool = False, **faults: int) -> MatchTally:
    """A bot's part in one match, with `faults` by group (timeouts, illegal_moves, crashes)."""
    counts = {"timeouts": 0, "illegal_moves": 0, "crashes": 0} | faults
    return MatchTally(bot, 1, win, loss, **counts, own_forfeit=False)


@pytest.fixture
def store(database: str) -> Iterator[LadderStore]:
    """A new ladder store on each dialect."""
    opened = LadderStore(database)
    yield opened
    opened.close()


def test_a_new_database_opens_again_with_its_version(database: str) -> None:
    LadderStore(database).close()
    again = LadderStore(database)
    try:
        assert again.file._conn.scalar(meta.select().with_only_columns(meta.c.value)) == str(SCHEMA_VERSION)
    finally:
        again.close()


def test_running_totals_are_added_and_read(store: LadderStore) -> None:
    """What each match adds to its bots' totals (their tallies) is added to what the pool holds."""
    with store.file._transaction():
        add_totals(store.file._conn, "4p", [tally("alpha", win=True), tally("beta", loss=True, timeouts=1)])
        add_totals(store.file._conn, "6p", [tally("alpha", crashes=1)])
    with store.file._transaction():
        add_totals(store.file._conn, "4p", [tally("alpha", loss=True, illegal_moves=1)])
    assert store.ratings.totals("4p") == {
        "alpha": BotTotals(matches=2, wins=1, losses=1, illegal_moves=1),
        "beta": BotTotals(matches=1, losses=1, timeouts=1),
    }
    assert store.ratings.matches_played("6p") == {"alpha": 1}


def test_pools_are_read_most_matches_first(store: LadderStore) -> None:
    with store.file._transaction():
        store.file._conn.execute(pools.insert(), [{"name": "4p", "matches": 3}, {"name": "6p", "matches": 5}])
    assert store.ratings.pools() == {"6p": 5, "4p": 3}


def test_a_failed_write_saves_nothing(store: LadderStore) -> None:
    with pytest.raises(KeyError), store.file._transaction():  # noqa: PT012 (the write, then the failure)
        add_totals(store.file._conn, "4p", [tally("alpha")])
        raise KeyError("the runner failed")
    assert store.ratings.totals("4p") == {}


def test_a_read_only_store_refuses_to_write(database: str) -> None:
    LadderStore(database).close()
    reader = LadderStore(database, read_only=True)
    try:
        assert reader.ratings.totals("4p") == {}
        with (
            pytest.raises(StoreError, match=r"is read-only \(opened read-only\); nothing was changed$"),
            reader.file._transaction(),
        ):
            add_totals(reader.file._conn, "4p", [tally("alpha")])
    finally:
        reader.close()


def test_an_unreachable_server_is_one_line() -> None:
    with pytest.raises(StoreError) as raised:
        LadderStore("postgresql://arena:secret@127.0.0.1:1/ladder", timeout=1)
    message = str(raised.value)
    assert message.startswith("cannot reach postgresql://arena:***@127.0.0.1:1/ladder (")
    assert "\n" not in message
    assert "secret" not in message


def test_every_game_record_is_streamed_oldest_first_in_pages(
    store: LadderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_browse, "RECORDS_PAGE", 2)
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    for seed in range(3):
        duplicate = store.sets.create_set(4, "pairs", None, seed, ["a", "b"], isolated=False)
        for rotation in range(2):
            save_match(
                store, f"m{seed}{rotation}", duplicate, rotation, "score", [0, 1], [], {"n": seed}, 1, 0.1
            )
        if seed != 1:
            store.sets.void_set(duplicate.id, "over")
    streamed = list(store.browse.game_records())
    assert [match_id for match_id, _record in streamed] == [f"m{s}{r}" for s in range(3) for r in range(2)]
    assert [record for _id, record in streamed][::2] == [{"n": 0}, {"n": 1}, {"n": 2}]
    # Only the sets that are over (the middle set is not: its page of records is skipped, not the rest).
    over = [match_id for match_id, _record in store.browse.game_records(sets_over_only=True)]
    assert over == ["m00", "m01", "m20", "m21"]
    assert store.browse.held_back_matches() == 2
    store.file._conn.execute(
        update(relations.match_records)
        .where(relations.match_records.c.match_id == "m21")
        .values(record="[1]")
    )
    with pytest.raises(StoreError, match=r"is damaged: the record of match 'm21'"):
        list(store.browse.game_records())


def _new_set(store: LadderStore, **columns: object) -> int:
    """A set's row, with any columns given (rated, void); its id."""
    row = {"created_at": 0.0, "players": 4, "ruleset": "pairs", "seed": 1, "bots": '["a", "b"]'}
    with store.file._transaction():
        inserted = store.file._conn.execute(sets.insert().values(row | {"rotations": 2} | columns))
    key = inserted.inserted_primary_key
    assert key is not None
    return int(key[0])


def _may_start_now(store: LadderStore, set_id: int) -> None:
    with store.file._transaction():
        store.file._conn.execute(update(sets).where(sets.c.id == set_id).values(not_before=0))


def test_a_set_is_claimed_by_one_runner_at_a_time(store: LadderStore) -> None:
    free = _new_set(store)
    assert store.leases.claim_set(free, "one", 60.0)
    assert not store.leases.claim_set(free, "two", 60.0)  # held
    assert store.leases.claim_set(free, "one", 60.0)  # its own: renewed
    assert store.leases.renew_leases("one", [free], -1.0) == {free}  # now expired
    assert store.leases.claim_set(free, "two", 60.0)  # taken over after the lease expired
    assert store.leases.renew_leases("one", [free], 60.0) == set()  # "one" lost it
    assert store.leases.renew_leases("one", [], 60.0) == set()
    assert store.leases.release_set(free, "one") == 0.0  # not its own: nothing changes
    assert not store.leases.claim_set(free, "one", 60.0)
    assert store.leases.release_set(free, "two") == 0.0
    assert store.leases.claim_set(free, "one", 60.0)  # released: anybody may claim it


def test_a_set_put_back_waits_doubling(store: LadderStore) -> None:
    put_back = _new_set(store)
    assert store.leases.claim_set(put_back, "two", 60.0)
    assert store.leases.release_set(put_back, "two", retry_s=30.0, retry_max_s=100.0) == 30.0
    assert not store.leases.claim_set(put_back, "two", 60.0)
    _may_start_now(store, put_back)
    assert store.leases.claim_set(put_back, "two", 60.0)
    assert store.leases.release_set(put_back, "two", retry_s=30.0, retry_max_s=100.0) == 60.0
    _may_start_now(store, put_back)
    assert store.leases.claim_set(put_back, "two", 60.0)
    assert store.leases.release_set(put_back, "two", retry_s=30.0, retry_max_s=100.0) == 100.0  # at most


@pytest.mark.parametrize("column", ["rated_at", "void_reason"])
def test_a_rated_or_void_set_is_never_claimed(store: LadderStore, column: str) -> None:
    assert not store.leases.claim_set(
        _new_set(store, **{column: "1" if column == "void_reason" else 1.0}), "a", 9
    )


def test_a_bot_is_down_after_failures_in_a_row_and_up_when_reached(store: LadderStore) -> None:
    with store.file._transaction():
        row = {"name": "alpha", "address": "h:1", "created_at": 0, "updated_at": 0}
        store.file._conn.execute(bots.insert().values(row))
    assert not store.registry.record_host_failure("alpha", down_after=2)
    assert store.registry.down_bots() == {}
    assert store.registry.record_host_failure("alpha", down_after=2)
    assert not store.registry.record_host_failure("alpha", down_after=2)  # down already
    assert list(store.registry.down_bots()) == ["alpha"]
    assert store.registry.record_host_success("alpha")
    assert not store.registry.record_host_success("alpha")  # nothing to write
    assert not store.registry.record_host_success("nobody")
    assert store.registry.down_bots() == {}


def test_bots_are_registered_updated_put_on_probation_and_removed(store: LadderStore) -> None:
    alpha = store.registry.add_bot("alpha", address="localhost:1")
    assert (alpha.name, alpha.address, alpha.command, alpha.rating) == ("alpha", "localhost:1", None, 1500.0)
    store.registry.add_bot("beta", command="python bot.py --port {port}")
    with pytest.raises(StoreError, match=r"^a bot named 'alpha' is already registered$"):
        store.registry.add_bot("alpha", command="x")
    with pytest.raises(StoreError, match=r"^a bot has either an address or a command$"):
        store.registry.add_bot("gamma")
    assert store.registry.update_bot("alpha", command="run").command == "run"
    store.registry.set_probation("beta", "crashed twice")
    assert [(bot.name, bot.probation) for bot in store.registry.bots()] == [
        ("alpha", None),
        ("beta", "crashed twice"),
    ]
    store.registry.remove_bot("beta")
    with pytest.raises(StoreError, match=r"^no bot named 'beta' is registered$"):
        store.registry.bot("beta")
    assert store.registry.bot_ratings() == {}


def test_a_removed_bots_unfinished_sets_are_made_void(store: LadderStore) -> None:
    store.registry.add_bot("alpha", address="localhost:1")
    store.registry.add_bot("beta", address="localhost:2")
    with_alpha = store.sets.create_set(
        4, "pairs", 2, 7, ["alpha", "beta"], lease=("runner", 60.0), isolated=False
    )
    other = store.sets.create_set(6, "pairs", None, 8, ["beta", "beta", "beta"], event="cup", isolated=False)
    assert store.sets.unfinished_sets() == [(with_alpha, [0, 1]), (other, [0, 1, 2])]
    assert not store.leases.claim_set(with_alpha.id, "another", 60.0)  # created claimed
    store.registry.remove_bot("alpha")
    assert store.sets.unfinished_sets() == [(other, [0, 1, 2])]
    assert other.event == "cup"


def test_a_sets_seed_of_128_bits_isolation_and_first_showing_read_back(store: LadderStore) -> None:
    store.registry.add_bot("alpha", address="localhost:1", owner="ann")
    store.registry.add_bot("beta", command="run --port {port}")
    assert [(bot.name, bot.owner) for bot in store.registry.bots()] == [("alpha", "ann"), ("beta", None)]
    seeds = [0, 1, 2**63, 2**64 - 1, 2**64, 2**127 + 5, 2**128 - 1]
    for seed in seeds:
        store.sets.create_set(4, "pairs", None, seed, ["alpha", "beta"], isolated=seed % 2 == 0)
    legacy = _new_set(store, seed=-(2**63 - 1))  # stored before version 5: no upper half, isolation unknown
    for wrong in (-1, 2**128):
        with pytest.raises(ValueError, match=r"from 0 to 2\^128 - 1"):
            store.sets.create_set(4, "pairs", None, wrong, ["alpha", "beta"], isolated=True)
    read = {duplicate.id: duplicate for duplicate, _missing in store.sets.unfinished_sets()}
    assert [read[set_id].seed for set_id in sorted(read)] == [*seeds, -(2**63 - 1)]
    assert [read[set_id].isolated for set_id in sorted(read)] == [seed % 2 == 0 for seed in seeds] + [None]
    assert not any(duplicate.shown for duplicate in read.values())
    store.sets.mark_set_shown(legacy)
    first = store.sets.unfinished_sets()[-1][0].shown_at
    assert first is not None
    time.sleep(0.01)
    store.sets.mark_set_shown(legacy)  # the first time is kept
    store.sets.mark_set_shown(10**6)  # no such set: nothing happens
    assert [duplicate.shown_at for duplicate, _ in store.sets.unfinished_sets()] == [None] * len(seeds) + [
        first
    ]


@given(st.integers(0, 2**128 - 1))
def test_a_seed_splits_into_two_signed_64_bit_columns_and_joins_back(seed: int) -> None:
    low, high = split_seed(seed)
    assert -(2**63) <= low < 2**63
    assert -(2**63) <= high < 2**63
    assert joined_seed(low, high) == seed


def test_the_seed_helpers_examples_hold() -> None:
    results = doctest.testmod(store_rows)
    assert results.failed == 0
    assert results.attempted >= 4
    assert joined_seed(2**31 - 1, None) == 2**31 - 1  # a set stored before version 5
    assert split_seed(2**64) == (0, 1)
    assert split_seed(2**63) == (-(2**63), 0)


@pytest.mark.parametrize(
    ("addresses", "expected"),
    [((None, None), True), ((None, "h:1"), False), (("h:1", "h:2"), False), ((), True)],
)
def test_a_set_is_isolated_when_the_arena_starts_every_bot(
    addresses: tuple[str | None, ...], expected: bool
) -> None:
    bots = [
        BotEntry(f"b{n}", address, "run" if address is None else None, 1500.0, None)
        for n, address in enumerate(addresses)
    ]
    assert isolated(bots) is expected


def _as_version_4(database: str) -> None:
    """Make `database` what the version-4 arena left: today's tables without version 5's columns, a set
    played whole but not rated yet (seed 2^63 - 1) and one with its rotations still to play (seed 5)."""
    store = LadderStore(database)
    store.registry.add_bot("alpha", address="localhost:1")
    store.registry.add_bot("beta", address="localhost:2")
    whole = store.sets.create_set(4, "pairs", None, 2**63 - 1, ["alpha", "beta"], isolated=False)
    for rotation in range(2):
        save_match(store, f"m{rotation}", whole, rotation, "score", [1, 2], [], {}, 1, 0.1)
    store.sets.create_set(4, "pairs", None, 5, ["beta", "alpha"], isolated=False)
    with store.file._transaction():
        for table, column in (("sets", "seed_high"), ("sets", "isolated"), ("sets", "shown_at")):
            store.file._conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))
        store.file._conn.execute(text("ALTER TABLE bots DROP COLUMN owner"))
        store.file._conn.execute(update(meta).values(value="4"))
    store.close()


def test_a_version_4_database_is_read_as_it_is_read_only_and_upgraded_otherwise(database: str) -> None:
    """A PostgreSQL database of version 4 is upgraded like a SQLite file, in one transaction: the columns
    added, its sets with rotations still to play made void (today's engine deals other packs for their
    seeds), then the version; read-only, it is read as it is, the missing columns as unknown."""
    _as_version_4(database)
    reader = LadderStore(database, read_only=True)
    try:
        [(whole, missing), (begun, _)] = reader.sets.unfinished_sets()
        assert (whole.seed, whole.isolated, whole.shown_at, missing) == (2**63 - 1, None, None, [])
        assert begun.seed == 5
        assert reader.registry.bot("alpha").owner is None
        assert reader.file._conn.scalar(meta.select().with_only_columns(meta.c.value)) == "4"
    finally:
        reader.close()
    upgraded = LadderStore(database)
    try:
        version = upgraded.file._conn.scalar(meta.select().with_only_columns(meta.c.value))
        assert version == str(SCHEMA_VERSION)
        assert upgraded.sets.unfinished_sets() == [(whole, [])]  # played whole: still rated
        assert upgraded.sets.void_reason(begun.id) == OLD_DEALS
        assert rate_set(upgraded, whole) is not None
        upgraded.registry.add_bot("gamma", address="localhost:3", owner="gil")
        assert upgraded.registry.bot("gamma").owner == "gil"
        created = upgraded.sets.create_set(4, "pairs", None, 2**100, ["alpha", "gamma"], isolated=False)
        assert upgraded.sets.unfinished_sets() == [(created, [0, 1])]
    finally:
        upgraded.close()


def test_a_server_database_older_than_version_4_is_refused(postgres: PostgresServer) -> None:
    """Versions before 4 moved data in ways only the SQLite store does; no server database had them."""
    database = postgres.new_database()
    store = LadderStore(database)
    with store.file._transaction():
        store.file._conn.execute(update(meta).values(value="3"))
    store.close()
    with pytest.raises(StoreError, match=r"has schema 3: open it with this arena's SQLite store$"):
        LadderStore(database)


def test_a_match_is_saved_once_with_its_totals_and_pool(store: LadderStore) -> None:
    store.registry.add_bot("alpha", address="localhost:1")
    store.registry.add_bot("beta", address="localhost:2")
    duplicate = store.sets.create_set(4, "pairs", 2, 7, ["alpha", "beta"], isolated=False)
    for rotation in (0, 1):
        save_match(store, f"m{rotation}", duplicate, rotation, "score", [0, 1], [], {"deals": []}, 10, 0.5)
    with pytest.raises(DuplicateMatchError, match=r"^set \d+ rotation 1 is stored already"):
        save_match(store, "again", duplicate, 1, "score", [0, 1], [], {}, 10, 0.5)
    assert store.sets.unfinished_sets() == [(duplicate, [])]
    assert [match.id for match in store.matches.finished()] == ["m0", "m1"]
    assert [match.id for match in store.matches.finished(duplicate.id + 1)] == []
    assert [match.id for match in store.matches.recent_matches(None, 1)] == ["m1"]
    assert [match.id for match in store.matches.recent_matches("alpha", 5)] == ["m1", "m0"]
    assert store.matches.recent_forfeits("beta", 5) == [False, False]
    assert store.browse.match_record("m0") == {"deals": []}
    with pytest.raises(StoreError, match=r"^no match 'm9'$"):
        store.browse.match_record("m9")
    assert store.leases.claimable_sets("runner") == [(duplicate, [])]
    assert store.sets.rated_sets() == set()
    assert store.ratings.pools() == {duplicate.pool: 2}
    assert sorted(store.ratings.matches_played(duplicate.pool).values()) == [2, 2]
    assert sum(line.wins for line in store.ratings.totals(duplicate.pool).values()) == 2
    store.sets.void_set(duplicate.id, "the arena failed")
    assert store.sets.void_reason(duplicate.id) == "the arena failed"
    assert store.sets.void_reason(duplicate.id + 1) is None
    assert store.sets.unfinished_sets() == []


def test_a_set_is_rated_once_and_its_ratings_read_back(store: LadderStore) -> None:
    store.registry.add_bot("alpha", address="localhost:1")
    store.registry.add_bot("beta", address="localhost:2")
    duplicate = store.sets.create_set(4, "pairs", 2, 7, ["alpha", "beta"], isolated=False)
    for rotation in (0, 1):  # alpha's team wins both rotations
        ranking = [0, 1] if rotation == 0 else [1, 0]
        save_match(store, f"m{rotation}", duplicate, rotation, "score", ranking, [], {}, 10, 0.5)
    changes = rate_set(store, duplicate)
    assert changes is not None
    assert [change.bot for change in changes] == ["alpha", "beta"]
    assert rate_set(store, duplicate) is None  # rated once
    assert store.sets.rated_sets() == {duplicate.id}
    fitted = store.ratings.fitted_ratings(duplicate.pool)
    assert fitted["alpha"].rating > fitted["beta"].rating
    assert store.registry.bot("alpha", duplicate.pool).rating == fitted["alpha"].rating
    sums = store.ratings.pool_sums(duplicate.pool)
    assert sums.rated_sets == 1
    assert sums.pairs[("alpha", "beta")].sets == 1


def test_live_events_are_added_read_in_order_and_deleted(store: LadderStore) -> None:
    store.live.add_live_events(
        "m1", [(0, time.time(), '{"kind": "start"}'), (1, time.time(), '{"kind": "call"}')]
    )
    store.live.add_live_events("m1", [(1, time.time(), '{"kind": "card"}')])  # a sequence number sent again
    [live] = store.live.live_matches(fresh_s=60)
    assert (live.match_id, live.start, live.events) == ("m1", {"kind": "start"}, 2)
    assert store.live.live_events("m1", after=0) == [(1, {"kind": "card"})]
    assert store.live.is_live("m1")
    store.live.add_live_events("old", [(0, time.time() - 600, "{}")])
    assert store.live.prune_live_events(older_than_s=300) == 1
    store.live.delete_live_events("m1")
    assert not store.live.is_live("m1")
    assert store.live.live_matches(fresh_s=60) == []


def test_the_new_events_of_every_match_watched_are_read_at_once(store: LadderStore) -> None:
    now = time.time()
    store.live.add_live_events("a", [(seq, now, f'{{"n": {seq}}}') for seq in range(8)])
    store.live.add_live_events("b", [(seq, now, f'{{"n": {seq}}}') for seq in range(3)])
    store.live.add_live_events("b", [(3, now + 60, '{"n": 3}')])  # not yet shown (a spectators' delay)
    store.live.add_live_events("c", [(0, now, "{}")])  # not asked about
    updates = store.live.live_updates({"a": 2, "b": -1, "gone": 5}, before=now + 1, limit=4)
    assert updates.events == {
        "a": [(seq, {"n": seq}) for seq in range(3, 7)],  # at most 4 a match
        "b": [(seq, {"n": seq}) for seq in range(3)],
    }
    assert updates.in_play == {"a", "b"}
    assert store.live.live_updates({}).events == {}


def test_tokens_are_kept_as_digests_and_every_write_is_audited(store: LadderStore) -> None:
    token = store.access.add_token("ann", "participant", "host:command-line")
    assert store.access.token_holder(token) == TokenHolder("ann", "participant")
    assert store.access.token_holder(token + "x") is None
    with pytest.raises(StoreError, match="has a token already"):
        store.access.add_token("ann", "host", "host:command-line")
    store.access.record_write("participant:ann", "bot_registered", "ann", "127.0.0.1:1")
    store.access.remove_token("ann", "host:command-line")
    assert store.access.tokens() == []
    assert [entry.action for entry in store.access.audit_log(10)] == [
        "token_removed",
        "bot_registered",
        "token_added",
    ]


def test_a_session_holds_while_its_token_does_and_ends_by_time(store: LadderStore) -> None:
    token = store.access.add_token("ann", "participant", "host:command-line")
    ann = store.access.token_holder(token)
    assert ann is not None
    now = time.time()
    session_id = store.sessions.start(ann, token, now, lifetime_s=100, idle_s=10)
    assert len(session_id) >= 43  # 256 random bits
    kept = store.file._conn.execute(relations.sessions.select()).all()
    assert [row.token_name for row in kept] == ["ann"]
    assert session_id not in {str(value) for row in kept for value in row}  # only its digest is kept
    found = store.sessions.session(session_id, now + 5, idle_s=10)
    assert found is not None
    assert found.holder == TokenHolder("ann", "participant")
    assert store.sessions.session(session_id + "x", now, idle_s=10) is None
    assert store.sessions.session(session_id, now + 11, idle_s=10) is None  # idle too long
    store.sessions.touch(session_id, now + 9)
    assert store.sessions.session(session_id, now + 15, idle_s=10) is not None
    assert store.sessions.session(session_id, now + 100, idle_s=1000) is None  # expired
    store.sessions.end(session_id)
    assert store.sessions.session(session_id, now, idle_s=10) is None
    # Revoked: its sessions end with it. Replaced (another writer removed the token and made a new one
    # of the same name): the session names the old token's digest, which no token has now.
    again = store.sessions.start(ann, token, now, 100, 10)
    store.access.remove_token("ann", "host:command-line")
    assert store.file._conn.execute(relations.sessions.select()).all() == []
    new_token = store.access.add_token("ann", "participant", "host:command-line")
    assert store.sessions.session(again, now, 10) is None
    stale = store.sessions.start(ann, token, now, 100, 10)  # signed in just as the token was replaced
    assert store.sessions.session(stale, now, 10) is None
    assert store.sessions.session(store.sessions.start(ann, new_token, now, 100, 10), now, 10) is not None
    # Sessions ended by time are swept at the next sign-in.
    store.sessions.start(ann, new_token, now + 1000, 100, 10)
    assert len(store.file._conn.execute(relations.sessions.select()).all()) == 1


def test_the_sites_pages_of_history_and_rating_history(store: LadderStore) -> None:
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    for rotation, ranking in enumerate([[1, 2], [2, 1]]):
        save_match(store, f"m{rotation}", duplicate, rotation, "score", ranking, [], {}, 10, 0.5)
    page, more = store.browse.match_page("a", "4p-pairs", 0, 1)
    assert [summary.match.id for summary in page] == ["m1"]
    assert more
    assert not page[0].set_over
    assert (
        page[0].held_back
        == "match m1 is held back until set 1 is over: its other rotations replay the same deals"
    )
    assert rate_set(store, duplicate) is not None
    summary = store.browse.match_summary("m0")
    assert (summary.pool, summary.set_over, summary.held_back) == ("4p-pairs", True, None)
    assert [point.set_id for point in store.browse.rating_history("a", "4p-pairs", 10)] == [duplicate.id]
    assert store.browse.match_page(None, "6p-pairs", 0, 10) == ([], False)


def test_uploads_are_versions_and_launches_follow_the_registered_command(store: LadderStore) -> None:
    store.registry.add_bot("x", command="python bot.py --socket {socket}")
    first = store.uploads.add_upload("x", "a" * 64, "python bot.py --socket {socket}")
    second = store.uploads.add_upload("x", "b" * 64, "python bot.py --socket {socket}")
    assert (
        [upload.version for upload in store.uploads.uploads_of("x")]
        == [first.version, second.version]
        == [1, 2]
    )
    store.uploads.set_launch("x", "python bot.py --socket {socket}", True, 2)
    assert store.uploads.launch_row("x", "python bot.py --socket {socket}") == LaunchRow(
        True, "b" * 64, "python bot.py --socket {socket}", 2
    )
    assert store.uploads.sandboxed_bots() == ["x"]
    assert store.uploads.launch_row("x", "another command") is None  # registered anew by another writer
    store.uploads.forget_launch("x")
    assert store.uploads.sandboxed_bots() == []


def test_checks_are_kept_refused_or_passed_and_read_back_newest_first(store: LadderStore) -> None:
    failed = CheckItem("handshake", Status.FAIL, "did it crash?", "handshake", output="Traceback \u00e9")
    passed = CheckItem("handshake", Status.PASS, "'x' speaks protocol 1", "handshake", {"bot_name": "x"})
    refused = store.checks.record_check("x", "ann", CheckReport("unix:/tmp/arena/bot.sock", 1000, [failed]))
    kept = store.checks.record_check("x", "ann", CheckReport("unix:/tmp/arena/bot.sock", 1000, [passed]), 1)
    other = store.checks.record_check("y", "host:command-line", CheckReport("127.0.0.1:1", 500, [passed]))
    assert (refused.passed, refused.version, kept.passed, kept.version) == (False, None, True, 1)
    assert store.checks.checks_of_bot("x") == [kept, refused]
    assert store.checks.checks_by("ann") == [kept, refused]
    assert store.checks.checks_by("host:command-line") == [other]
    assert store.checks.checks_of_bot("x", limit=1) == [kept]
    assert store.checks.check(refused.id).report.items == [failed]
    assert store.checks.check(refused.id).to_json()["items"] == [failed.to_json()]
    with pytest.raises(StoreError, match="no check"):
        store.checks.check(other.id + 1)
    with store.file._transaction():
        store.file._conn.execute(update(relations.bot_checks).values(report='{"items": 3}'))
    with pytest.raises(StoreError, match="damaged"):
        store.checks.checks_of_bot("x")


def test_a_bot_keeps_its_newest_unregistered_checks_and_every_versions(store: LadderStore) -> None:
    failed = CheckReport("unix:/tmp/arena/bot.sock", 1000, [CheckItem("handshake", Status.FAIL, "no", "h")])
    passed = CheckReport("unix:/tmp/arena/bot.sock", 1000, [CheckItem("handshake", Status.PASS, "ok", "h")])
    registered = store.checks.record_check("x", "ann", passed, 1)
    refused = [store.checks.record_check("x", "ann", failed) for _ in range(UNREGISTERED_KEPT + 3)]
    other = store.checks.record_check("y", "bea", failed)
    kept = store.checks.checks_of_bot("x", limit=1000)
    assert kept == [*refused[::-1][:UNREGISTERED_KEPT], registered]  # the 3 oldest refused ones went
    assert store.checks.checks_of_bot("y") == [other]


def test_what_quotas_and_prunes_read_of_uploads(store: LadderStore) -> None:
    store.registry.add_bot("x", command="run {socket}")
    store.registry.add_bot("y", command="run {socket}", owner="x")  # owned by x: its bundles count for x
    store.uploads.add_upload("x", "a" * 64, "run {socket}")
    store.uploads.add_upload("x", "b" * 64, "run {socket}")
    store.uploads.add_upload("y", "c" * 64, "run {socket}")
    store.uploads.add_upload("z", "a" * 64, "run {socket}")  # a bot removed since, sharing x's first bundle
    store.uploads.set_launch("x", "run {socket}", True, 1)
    assert store.uploads.bundles_of("x") == {"a" * 64, "b" * 64, "c" * 64}
    assert store.uploads.bundles_of("z") == {"a" * 64}
    assert store.uploads.launched_versions() == {"x": 1}
    assert [(upload.bot, upload.version) for upload in store.uploads.all_uploads()] == [
        ("x", 1),
        ("x", 2),
        ("y", 1),
        ("z", 1),
    ]
    open_set = store.sets.create_set(4, "pairs", None, 1, ["x", "y"], isolated=True)
    store.sets.create_set(4, "pairs", None, 2, ["x", "z"], isolated=True)
    since = store.uploads.open_sets_since()
    assert set(since) == {"x", "y", "z"}
    assert since["x"] == since["y"] <= since["z"]
    store.sets.void_set(open_set.id, "a test")
    assert set(store.uploads.open_sets_since()) == {"x", "z"}
    store.uploads.remove_uploads([("x", 1), ("z", 1)])
    assert store.uploads.wanted_bundles() == {"b" * 64, "c" * 64}
    store.access.record_write("participant:x", "bot_uploaded", "x")
    store.access.record_write("participant:x", "bot_removed", "x")
    store.access.record_write("participant:y", "upload_refused", "y")
    assert len(store.access.write_times("participant:x", ["bot_uploaded", "upload_refused"], 0.0)) == 1
    assert store.access.write_times("participant:x", ["bot_uploaded"], time.time() + 60) == []


def test_a_lost_server_connection_is_one_error_then_the_store_connects_again(store: LadderStore) -> None:
    """A server restart (or a network cut) fails the call in flight in one line; the next call connects
    again, inside a transaction too."""
    if store.file._conn.dialect.name != "postgresql":
        pytest.skip("a SQLite file has no connection to lose")
    store.registry.add_bot("a", address="h:1")
    for lost_in_a_write in (False, True):
        other = LadderStore(store.file._conn.engine.url.render_as_string(hide_password=False))
        pid = store.file._conn.scalar(text("SELECT pg_backend_pid()"))
        other.file._conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        other.close()

        def writing() -> None:
            store.registry.add_bot("b", address="h:2")

        call = writing if lost_in_a_write else store.registry.bots
        with pytest.raises(StoreError, match=r"^cannot reach postgresql://"):
            call()
        assert [bot.name for bot in store.registry.bots()] == [
            "a"
        ]  # connected again; the lost write left nothing
    store.registry.add_bot("b", address="h:2")
    assert [bot.name for bot in store.registry.bots()] == ["a", "b"]


def test_a_match_keeps_its_bots_outputs_and_an_entrant_reads_their_own_once_the_set_is_over(
    store: LadderStore,
) -> None:
    duplicate = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=True)
    raw = b"line one\n\x00\xff\xfe not UTF-8 \x1b[2J\n"  # kept as it came, whatever it holds
    outputs = (
        SeatOutput(0, "a", 3, raw, 7, "ann"),
        SeatOutput(1, "b", None, b"b says\n", 0, None),
        SeatOutput(2, "a", 3, b"", 0, "ann"),
    )
    save_match(store, "m1", duplicate, 0, "one_team_left", [1, 2], [], {}, 3, 0.5, outputs[::-1])
    assert store.outputs.of_match("m1") == list(outputs)
    assert store.outputs.of_match("m1")[0].text == "line one\n\x00\ufffd\ufffd not UTF-8 \x1b[2J\n"
    assert store.outputs.own("m1", "ann") == []  # held back: the set is not over
    with pytest.raises(DuplicateMatchError):  # the rotation stored again: nothing of it is kept
        save_match(store, "m2", duplicate, 0, "one_team_left", [1, 2], [], {}, 3, 0.5, outputs)
    assert store.outputs.of_match("m2") == []
    store.sets.void_set(duplicate.id, "a bot was removed")
    assert store.outputs.own("m1", "ann") == [outputs[0], outputs[2]]
    assert store.outputs.own("m1", "b") == [outputs[1]]  # a participant's token is named as their bot
    assert store.outputs.own("m1", "eve") == []
    assert store.outputs.own("no-such-match", "ann") == []


def test_each_bot_keeps_the_outputs_of_its_last_matches(
    store: LadderStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_outputs, "OUTPUTS_KEPT", 2)
    first = store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=True)
    second = store.sets.create_set(4, "pairs", None, 2, ["a", "c"], isolated=True)
    played = [("m1", first, 0, "b"), ("m2", first, 1, "b"), ("m3", second, 0, "c")]
    for match_id, duplicate, rotation, other in played:
        said = (SeatOutput(0, "a", None, match_id.encode(), 0), SeatOutput(1, other, None, b"hi", 0))
        save_match(store, match_id, duplicate, rotation, "one_team_left", [1, 2], [], {}, 3, 0.5, said)
    assert [output.bot for output in store.outputs.of_match("m1")] == ["b"]  # a's third match back: gone
    assert [output.output for output in store.outputs.of_match("m2")] == [b"m2", b"hi"]
    assert [output.output for output in store.outputs.of_match("m3")] == [b"m3", b"hi"]
