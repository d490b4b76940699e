"""The pairing of a ladder run: the ladder's own, and a run given a pairing of its own (how a sequential
test or a tournament plays its sets through the ladder's machinery)."""

from __future__ import annotations

import asyncio
import math
import random
from pathlib import Path

import pytest
from ladder_support import FAST, registered
from structlog.testing import capture_logs

from arena.ladder import Ladder, LadderError, LadderSettings
from arena.ladder.bots import LocalBots
from arena.ladder.pairing import EventPairing, RatingPairing
from arena.ladder.store import LadderStore
from arena.ladder.store.entries import DuplicateSet
from fiftysix.engine import Ruleset
from sdk import BotServer


class FixedPairing:
    """Always the same two bots, for a given number of sets; resumes only sets of those two."""

    def __init__(self, bots: list[str], sets: int) -> None:
        self.bots = bots
        self.left = sets

    def check(self) -> None:
        pass

    def next_bots(self) -> list[str] | None:
        if self.left == 0:
            return None
        self.left -= 1
        return list(self.bots)

    def may_resume(self, duplicate: DuplicateSet) -> bool:
        return sorted(duplicate.bots) == sorted(self.bots)


def test_a_run_with_a_pairing_of_its_own_plays_only_its_sets(
    tmp_path: Path, servers: list[BotServer]
) -> None:
    store = registered(tmp_path / "ladder.db", servers)
    other = store.sets.create_set(
        4, "pairs", 2, 7, ["bot0", "bot2"], isolated=False
    )  # an unfinished ladder set: not ours
    mine = store.sets.create_set(
        4, "pairs", 2, 8, ["bot1", "bot0"], isolated=False
    )  # an unfinished set of ours: finished first
    settings = LadderSettings(matches=None, deal_cap=2, time_control=FAST, seed=3)
    ladder = Ladder(store, settings, LocalBots(tmp_path), pairing=FixedPairing(["bot0", "bot1"], sets=2))
    report = asyncio.run(ladder.run())
    assert (report.matches, report.sets_rated, report.sets_resumed) == (6, 3, 1)
    assert {match.set_id for match in store.matches.finished()} >= {mine.id}
    assert all(set(match.bot_ranks) == {"bot0", "bot1"} for match in store.matches.finished())
    assert [duplicate.id for duplicate, _missing in store.sets.unfinished_sets()] == [other.id]
    store.close()


def test_the_ladder_pairs_the_least_played_bot_first(tmp_path: Path, servers: list[BotServer]) -> None:
    store = registered(tmp_path / "ladder.db", servers)
    settings = LadderSettings()
    played = {"bot0": 5, "bot1": 0, "bot2": 5}  # as if launched and not stored yet
    for seed in range(20):
        bots = RatingPairing(store, settings, random.Random(seed), played).next_bots()
        assert bots is not None
        assert "bot1" in bots
        assert len(bots) == 2
    store.registry.set_probation("bot1", "tests")
    store.registry.set_probation("bot2", "tests")
    assert RatingPairing(store, settings, random.Random(0), {}).next_bots() is None  # one bot left
    store.close()


def owners_store(path: Path, owners: dict[str, str | None]) -> LadderStore:
    """A ladder file with a bot per key of `owners`, each with that owner."""
    store = LadderStore(path)
    for number, (name, owner) in enumerate(owners.items()):
        store.registry.add_bot(name, address=f"127.0.0.1:{number + 1}", owner=owner)
    return store


OWNER_CASES = [
    # (players, ruleset, owners, bots every group must hold one of each of)
    (4, Ruleset.PAIRS, {"a": "ann", "b": "ann", "c": None}, [{"a", "b"}, {"c"}]),
    (4, Ruleset.PAIRS, {"a": "ann", "b": "bob", "c": "ann", "d": "bob"}, [{"a", "c"}, {"b", "d"}]),
    (6, Ruleset.PAIRS, {"a": "ann", "b": "ann", "c": "bob", "d": None}, [{"a", "b"}, {"c"}, {"d"}]),
    (6, Ruleset.PARTNERSHIP, {"a": "ann", "b": "ann", "c": "ann", "d": None}, [{"a", "b", "c"}, {"d"}]),
    (
        8,
        Ruleset.PAIRS,
        {"a": "ann", "b": "ann", "c": "bob", "d": "bob", "e": None, "f": "cy"},
        [{"a", "b"}, {"c", "d"}, {"e"}, {"f"}],
    ),
    (8, Ruleset.PARTNERSHIP, {"a": "ann", "b": "ann", "c": None}, [{"a", "b"}, {"c"}]),
]


@pytest.mark.parametrize(("players", "ruleset", "owners", "groups"), OWNER_CASES)
def test_the_ladder_never_puts_two_bots_of_one_owner_in_a_set(
    tmp_path: Path, players: int, ruleset: Ruleset, owners: dict[str, str | None], groups: list[set[str]]
) -> None:
    store = owners_store(tmp_path / "ladder.db", owners)
    settings = LadderSettings(players=players, ruleset=ruleset)
    seen: set[frozenset[str]] = set()
    try:
        RatingPairing(store, settings, random.Random(0), {}).check()
        for seed in range(60):
            bots = RatingPairing(store, settings, random.Random(seed), {}).next_bots()
            assert bots is not None
            assert len(bots) == settings.rules.team_count
            assert [len(group & set(bots)) for group in groups] == [1] * len(groups), bots
            seen.add(frozenset(bots))
    finally:
        store.close()
    # Every legal group turns up (the rule skips groups, it does not fix one).
    assert len(seen) == math.prod(len(group) for group in groups)


@pytest.mark.parametrize(
    ("players", "ruleset", "owners"),
    [
        (4, Ruleset.PAIRS, {"a": "ann", "b": "ann"}),
        (4, Ruleset.PAIRS, {"a": "ann", "b": "ann", "c": "ann"}),
        (6, Ruleset.PAIRS, {"a": "ann", "b": "ann", "c": "bob", "d": "bob"}),
        (8, Ruleset.PAIRS, {"a": "ann", "b": None, "c": "cy", "d": "cy", "e": "ann"}),
    ],
)
def test_too_few_owners_pair_nobody_as_too_few_bots_do(
    tmp_path: Path, players: int, ruleset: Ruleset, owners: dict[str, str | None]
) -> None:
    store = owners_store(tmp_path / "ladder.db", owners)
    settings = LadderSettings(players=players, ruleset=ruleset)
    try:
        pairing = RatingPairing(store, settings, random.Random(0), {})
        assert pairing.next_bots() is None
        with pytest.raises(LadderError, match=r"needs bots of at least \d owners \(never two of one owner"):
            pairing.check()
    finally:
        store.close()


def test_bots_without_owners_pair_as_before(tmp_path: Path) -> None:
    """No owner anywhere: the same draws as before the rule (the run's seeds still reproduce it)."""
    store = owners_store(tmp_path / "ladder.db", dict.fromkeys("abcde"))
    settings = LadderSettings(players=8)
    try:
        picks = [RatingPairing(store, settings, random.Random(seed), {}).next_bots() for seed in range(5)]
    finally:
        store.close()
    # What the pairing drew before owners were kept, with these seeds.
    assert picks == [
        ["d", "b", "e", "a"],
        ["a", "e", "d", "b"],
        ["c", "a", "b", "d"],
        ["d", "b", "a", "e"],
        ["c", "e", "a", "b"],
    ]


def test_an_unfinished_set_whose_bots_now_share_an_owner_is_not_resumed(tmp_path: Path) -> None:
    store = owners_store(tmp_path / "ladder.db", {"a": None, "b": None, "c": "cy"})
    try:
        begun = store.sets.create_set(4, "pairs", None, 5, ["a", "b"], isolated=False)
        event_set = store.sets.create_set(4, "pairs", None, 6, ["a", "b"], event="cup", isolated=False)
        store.registry.set_owner("a", "ann")
        store.registry.set_owner("b", "ann")  # the host found that one author wrote both
        pairing = RatingPairing(store, LadderSettings(), random.Random(0), {})
        with capture_logs() as logs:
            assert not pairing.may_resume(begun)
            assert not pairing.may_resume(begun)
        assert [(entry["event"], entry["set_id"], entry["reason"]) for entry in logs] == [
            ("set_skipped", begun.id, "two of its bots have the same owner (ann)")
        ]
        cup = EventPairing(store, LadderSettings(event="cup"), ["a", "b"], iter([]))
        assert cup.may_resume(event_set)  # an event the host runs between bots it chose
        store.registry.set_owner("b", None)
        assert pairing.may_resume(begun)
        ladder = Ladder(store, LadderSettings(), LocalBots(tmp_path))
        store.registry.set_owner("b", "ann")
        assert ladder._claim_unfinished() is None  # left as it is, unfinished, not void
        assert store.sets.void_reason(begun.id) is None
        assert begun.id in {duplicate.id for duplicate, _missing in store.sets.unfinished_sets()}
    finally:
        store.close()


def test_an_event_pairs_one_owners_bots_as_planned(tmp_path: Path) -> None:
    """An SPRT or a tournament between one author's versions: the host chose them, so they meet."""
    store = owners_store(tmp_path / "ladder.db", {"v1": "ann", "v2": "ann"})
    try:
        pairing = EventPairing(store, LadderSettings(event="sprt-1"), ["v1", "v2"], iter([["v1", "v2"]]))
        pairing.check()
        assert pairing.next_bots() == ["v1", "v2"]
        ladder = RatingPairing(store, LadderSettings(), random.Random(0), {})
        assert ladder.next_bots() is None  # the ladder would not pair them
    finally:
        store.close()
