"""Where a ladder run's sets get their seeds (128 bits from the OS's secure source, or from the run's
`--seed` to reproduce it), and what its match ids say (nothing: random, kept apart from the set and
rotation by the store)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from ladder_support import FAST, registered
from sqlalchemy import select

from arena.ladder import Ladder, LadderSettings, scheduler
from arena.ladder.bots import LocalBots
from arena.ladder.scheduler import set_seeds
from arena.ladder.store import LadderStore, relations
from arena.ladder.store.rows import joined_seed
from fiftysix.record import from_json
from sdk import BotServer


def run(store: LadderStore, folder: Path, seed: int | None, matches: int = 4) -> None:
    settings = LadderSettings(matches=matches, deal_cap=1, time_control=FAST, seed=seed)
    asyncio.run(Ladder(store, settings, LocalBots(folder)).run())


def stored_seeds(store: LadderStore) -> list[int]:
    """Each set's seed, by set id."""
    sets = relations.sets
    rows = store.file._conn.execute(select(sets.c.seed, sets.c.seed_high).order_by(sets.c.id))
    return [joined_seed(low, high) for low, high in rows]


def test_without_a_run_seed_every_set_seed_is_128_bits_from_secrets(
    tmp_path: Path, servers: list[BotServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[int] = []
    asked: list[int] = []

    def randbits(bits: int) -> int:
        asked.append(bits)
        drawn.append(2**127 + 12345 * (len(drawn) + 1))
        return drawn[-1]

    monkeypatch.setattr(scheduler.secrets, "randbits", randbits)
    store = registered(tmp_path / "ladder.db", servers[:2])
    try:
        run(store, tmp_path, seed=None)
        assert asked == [128, 128]  # two sets of two matches
        assert stored_seeds(store) == drawn
        for match in store.matches.finished():
            record = from_json(store.browse.match_record(match.id))
            assert record.seed == drawn[match.set_id - 1]  # the set's matches were dealt from it
    finally:
        store.close()


def test_set_seeds_without_a_run_seed_are_unpredictable() -> None:
    new_seed = set_seeds(None)
    seeds = [new_seed() for _ in range(8)]
    assert len(set(seeds)) == 8
    assert all(0 <= seed < 2**128 for seed in seeds)
    assert max(seeds) >= 2**120  # 8 draws all below 2^120: a chance of 2^-64
    assert set_seeds(None)() not in seeds


def test_a_run_seed_makes_the_set_seeds_reproducible(tmp_path: Path, servers: list[BotServer]) -> None:
    assert [set_seeds(7)() for _ in range(2)] == [set_seeds(7)()] * 2
    first, second = (set_seeds(7), set_seeds(7))
    assert [first() for _ in range(3)] == [second() for _ in range(3)]
    assert set_seeds(7)() != set_seeds(8)()
    runs = []
    for number in range(2):
        store = registered(tmp_path / f"ladder-{number}.db", servers[:2])
        try:
            run(store, tmp_path, seed=7)
            runs.append(stored_seeds(store))
        finally:
            store.close()
    expected = set_seeds(7)
    assert runs[0] == runs[1] == [expected(), expected()]
    assert max(runs[0]) >= 2**64  # 128 bits a set, not the 31 of before


def test_match_ids_say_nothing_of_their_set_and_rotation(tmp_path: Path, servers: list[BotServer]) -> None:
    store = registered(tmp_path / "ladder.db", servers[:2])
    try:
        run(store, tmp_path, seed=3, matches=6)
        matches = store.matches.finished()
        assert len(matches) == 6
        ids = [match.id for match in matches]
        assert len(set(ids)) == 6
        assert all(re.fullmatch("[0-9a-f]{16}", match_id) for match_id in ids)
        # The store keeps which set and rotation each id played, and the site finds a match by its id.
        assert sorted((match.set_id, match.rotation) for match in matches) == [
            (set_id, rotation) for set_id in (1, 2, 3) for rotation in (0, 1)
        ]
        assert store.browse.match_summary(ids[0]).match.id == ids[0]
    finally:
        store.close()
    # The same run seed again: the same seeds and pairings, but other match ids (not drawn from it).
    again = registered(tmp_path / "again.db", servers[:2])
    try:
        run(again, tmp_path, seed=3, matches=6)
        assert {match.id for match in again.matches.finished()}.isdisjoint(ids)
    finally:
        again.close()
