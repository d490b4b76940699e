"""Storage whose cost per match does not grow with the history, and rating pools: the running totals
equal what a scan of the whole history counts; the queries made per match and per set are index searches;
each format is rated in its own pool."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli import main
from arena.ladder.rating.tally import add_set, set_result
from arena.ladder.rating.values import PoolSums
from arena.ladder.ratings import rate_set
from arena.ladder.standings import ladder_standings
from arena.ladder.store.entries import DuplicateSet
from arena.ladder.store.ladder_store import LadderStore
from fiftysix.wire import FaultCause, FaultRecord
from tests.arena.ladder.match_support import save_match
from tests.arena.ladder.test_standings import scanned_totals

BOTS = ["a", "b", "c", "d"]

fault_strategy = st.builds(
    lambda team, cause, substituted: FaultRecord(
        seat=team, team=team, cause=cause, detail="", deal_number=1, substituted=substituted
    ),
    st.integers(0, 2),
    st.sampled_from(list(FaultCause)),
    st.booleans(),
)
set_strategy = st.tuples(
    st.permutations(BOTS).map(lambda bots: bots[:3]),
    st.lists(st.lists(st.integers(1, 3), min_size=3, max_size=3), min_size=3, max_size=3),
    st.lists(st.lists(fault_strategy, max_size=3), min_size=3, max_size=3),
    st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(sets=st.lists(set_strategy, min_size=1, max_size=6))
def test_running_totals_equal_the_scan_of_the_whole_history(
    sets: list[tuple[list[str], list[list[int]], list[list[FaultRecord]], bool]],
) -> None:
    """Random 6-player sets (3 teams) with random faults, some rated: each bot's stored totals equal
    what the standings counted from every stored match before version 3."""
    with tempfile.TemporaryDirectory() as folder:
        store = LadderStore(Path(folder) / "ladder.db")
        for name in BOTS:
            store.registry.add_bot(name, address="h:1")
        rated: set[int] = set()
        for bots, rankings, faults, rate in sets:
            duplicate = store.sets.create_set(6, "pairs", None, 1, bots, isolated=False)
            for rotation in range(3):
                match_id = f"m{duplicate.id}-{rotation}"
                ranking = rankings[rotation]
                save_match(store, match_id, duplicate, rotation, "r", ranking, faults[rotation], {}, 1, 0.1)
            if rate and rate_set(store, duplicate) is not None:
                rated.add(duplicate.id)
        expected = scanned_totals(store.matches.finished())
        stored = store.ratings.totals("6p-pairs")
        assert stored.keys() == expected.keys()
        for name, line in expected.items():
            got = stored[name]
            assert (got.matches, got.wins, got.losses, got.timeouts, got.illegal_moves, got.crashes) == (
                line.matches,
                line.wins,
                line.losses,
                line.timeouts,
                line.illegal_moves,
                line.crashes,
            )
        assert store.ratings.matches_played("6p-pairs") == {
            name: line.matches for name, line in expected.items()
        }
        assert store.ratings.pools() == {"6p-pairs": 3 * len(sets)}
        # The fit's sums equal those of a scan of the rated sets.
        expected_sums = PoolSums()
        for set_id in sorted(rated):
            expected_sums = add_set(
                expected_sums, set_result([m.bot_ranks for m in store.matches.finished(set_id)])
            )
        sums = store.ratings.pool_sums("6p-pairs")
        assert sums.rated_sets == len(rated)
        assert sums.choices == pytest.approx(expected_sums.choices)
        assert sums.places == pytest.approx(expected_sums.places)
        assert sums.pairs.keys() == expected_sums.pairs.keys()
        for pair, line in expected_sums.pairs.items():
            assert sums.pairs[pair].sets == line.sets
            assert (sums.pairs[pair].score, sums.pairs[pair].squares) == pytest.approx(
                (line.score, line.squares)
            )
        store.close()


def played(store: LadderStore, players: int, ranks: dict[str, int]) -> DuplicateSet:
    """A set of the bots of `ranks`, each ranked the same in every rotation."""
    duplicate = store.sets.create_set(players, "pairs", None, 1, list(ranks), isolated=False)
    for rotation in range(duplicate.rotations):
        ranking = [ranks[bot] for bot in duplicate.team_bots(rotation)]
        save_match(store, f"m{duplicate.id}-{rotation}", duplicate, rotation, "r", ranking, [], {}, 1, 0.1)
    return duplicate


def test_pools_are_rated_apart(tmp_path: Path) -> None:
    """A 4-player set and a 6-player set of the same bots each move their own pool's ratings only."""
    store = LadderStore(tmp_path / "ladder.db")
    for name in "abc":
        store.registry.add_bot(name, address="h:1")
    four = played(store, 4, {"a": 1, "b": 2})
    assert rate_set(store, four) is not None
    assert store.registry.bot("a", "4p-pairs").rating > 1500
    assert store.registry.bot("a", "6p-pairs").rating == 1500
    six = played(store, 6, {"a": 3, "b": 1, "c": 2})
    before = store.registry.bot("a", "4p-pairs").rating
    assert rate_set(store, six) is not None
    assert store.registry.bot("a", "4p-pairs").rating == before
    assert store.registry.bot("a", "6p-pairs").rating < 1500
    assert store.registry.bot("c", "4p-pairs").rating == 1500
    assert store.registry.bot_ratings()["a"].keys() == {"4p-pairs", "6p-pairs"}
    assert store.ratings.pools() == {"6p-pairs": 3, "4p-pairs": 2}
    # Standings per pool: the default is the pool with the most matches.
    assert {line.pool for line in ladder_standings(store)} == {"6p-pairs"}
    four_lines = {line.bot: line for line in ladder_standings(store, "4p-pairs")}
    assert (four_lines["a"].matches, four_lines["a"].wins, four_lines["c"].matches) == (2, 2, 0)
    store.close()


def plan(db: sqlite3.Connection, query: str, parameters: tuple[object, ...]) -> str:
    return " / ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {query}", parameters))


def test_the_queries_of_each_match_and_set_search_indexes(tmp_path: Path) -> None:
    """What the ladder reads per match (probation, the set's matches, ratings) and per set (pairing,
    ratings) searches an index: no scan of matches, membership or totals."""
    path = tmp_path / "ladder.db"
    store = LadderStore(path)
    store.registry.add_bot("a", address="h:1")
    store.registry.add_bot("b", address="h:2")
    rate_set(store, played(store, 4, {"a": 1, "b": 2}))
    store.close()
    db = sqlite3.connect(path)
    queries = {
        "probation": (
            "SELECT own_forfeit FROM match_bots WHERE bot = ?"
            " ORDER BY finished_at DESC, match_id DESC LIMIT ?",
            ("a", 3),
        ),
        "recent matches of a bot": (
            "SELECT matches.id, faults FROM match_bots JOIN matches ON matches.id = match_bots.match_id"
            " WHERE match_bots.bot = ?"
            " ORDER BY match_bots.finished_at DESC, match_bots.match_id DESC LIMIT ?",
            ("a", 1),
        ),
        "recent matches": ("SELECT id FROM matches ORDER BY finished_at DESC, id DESC LIMIT ?", (20,)),
        "matches of a set": ("SELECT id FROM matches WHERE set_id = ? ORDER BY finished_at, id", (1,)),
        "record": ("SELECT record FROM match_records WHERE match_id = ?", ("m1-0",)),
        "pairing counts": ("SELECT bot, matches FROM bot_totals WHERE pool = ?", ("4p-pairs",)),
        "totals of a bot": ("SELECT matches FROM bot_totals WHERE bot = ? AND pool = ?", ("a", "4p-pairs")),
        "rating": ("SELECT rating FROM ratings WHERE bot = ? AND pool = ?", ("a", "4p-pairs")),
        "ratings of a pool": ("SELECT bot, rating FROM ratings WHERE pool = ?", ("4p-pairs",)),
        "pair results": (
            "SELECT sets FROM pair_results WHERE pool = ? AND first = ? AND second = ?",
            ("4p-pairs", "a", "b"),
        ),
        "sums of a pool": ("SELECT first, sets FROM pair_results WHERE pool = ?", ("4p-pairs",)),
        "groups of a pool": ("SELECT bots, weight FROM choice_sets WHERE pool = ?", ("6p-pairs",)),
        "group": ("SELECT weight FROM choice_sets WHERE pool = ? AND bots = ?", ("6p-pairs", '["a", "b"]')),
        "places of a pool": ("SELECT bot, taken FROM places WHERE pool = ?", ("6p-pairs",)),
        "places of a bot": ("SELECT taken FROM places WHERE pool = ? AND bot = ?", ("6p-pairs", "a")),
        "rated sets": ("SELECT rated_sets FROM pools WHERE name = ?", ("4p-pairs",)),
        "set": ("SELECT rated_at, void_reason, players, ruleset FROM sets WHERE id = ?", (1,)),
        "unfinished sets": (
            "SELECT id FROM sets WHERE rated_at IS NULL AND void_reason IS NULL ORDER BY id",
            (),
        ),
    }
    for what, (query, parameters) in queries.items():
        shown = plan(db, query, parameters)
        if "LIMIT" in query and "WHERE" not in query:
            # The newest of all matches: a walk down an index that stops after LIMIT rows.
            assert shown == "SCAN matches USING COVERING INDEX matches_by_time", f"{what}: {shown}"
        elif what == "unfinished sets":
            # A walk over a partial index that holds the open sets only.
            assert shown == "SCAN sets USING INDEX sets_open", f"{what}: {shown}"
        else:
            assert "SCAN" not in shown, f"{what}: {shown}"
            assert "SEARCH" in shown, f"{what}: {shown}"
    db.close()


def test_ladder_show_lists_the_pools_and_shows_the_one_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "ladder.db"
    store = LadderStore(db)
    for name in "abc":
        store.registry.add_bot(name, address="h:1")
    rate_set(store, played(store, 4, {"a": 1, "b": 2}))
    rate_set(store, played(store, 6, {"a": 3, "b": 1, "c": 2}))
    store.close()
    assert main(["ladder", "--db", str(db), "show"]) == 0
    shown = capsys.readouterr().out
    assert shown.splitlines()[0] == "Pool 6p-pairs; pools: 6p-pairs (3 matches), 4p-pairs (2 matches)"
    assert main(["ladder", "--db", str(db), "show", "--pool", "4p-pairs", "--json"]) == 0
    lines = json.loads(capsys.readouterr().out)
    assert [(line["bot"], line["pool"], line["matches"]) for line in lines] == [
        ("a", "4p-pairs", 2),
        ("c", "4p-pairs", 0),
        ("b", "4p-pairs", 2),
    ]
    assert main(["ladder", "--db", str(db), "show", "--pool", "5p-pairs"]) == 1
    assert "no pool '5p-pairs'" in capsys.readouterr().err
    assert main(["bots", "--db", str(db), "list", "--json"]) == 0
    [a, _, _] = json.loads(capsys.readouterr().out)
    assert a["pool"] == "6p-pairs"
    assert a["ratings"].keys() == {"4p-pairs", "6p-pairs"}
