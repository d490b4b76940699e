"""The pairing of a ladder run: the ladder's own, and a run given a pairing of its own (how a sequential
test or a tournament plays its sets through the ladder's machinery)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from ladder_support import FAST, registered

from arena.ladder import Ladder, LadderSettings, LocalBots
from arena.ladder.entries import DuplicateSet
from arena.ladder.pairing import RatingPairing
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
    other = store.create_set(
        4, "pairs", 2, 7, ["bot0", "bot2"], isolated=False
    )  # an unfinished ladder set: not ours
    mine = store.create_set(
        4, "pairs", 2, 8, ["bot1", "bot0"], isolated=False
    )  # an unfinished set of ours: finished first
    settings = LadderSettings(matches=None, deal_cap=2, time_control=FAST, seed=3)
    ladder = Ladder(store, settings, LocalBots(tmp_path), pairing=FixedPairing(["bot0", "bot1"], sets=2))
    report = asyncio.run(ladder.run())
    assert (report.matches, report.sets_rated, report.sets_resumed) == (6, 3, 1)
    assert {match.set_id for match in store.matches()} >= {mine.id}
    assert all(set(match.bot_ranks) == {"bot0", "bot1"} for match in store.matches())
    assert [duplicate.id for duplicate, _missing in store.unfinished_sets()] == [other.id]
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
    store.set_probation("bot1", "tests")
    store.set_probation("bot2", "tests")
    assert RatingPairing(store, settings, random.Random(0), {}).next_bots() is None  # one bot left
    store.close()
