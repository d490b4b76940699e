"""What the ladder's tests share: a time control and a ladder file with served bots registered (the
`servers` fixture is in conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from arena.ladder.rating.fit import fit_pool
from arena.ladder.rating.tally import add_set, set_result
from arena.ladder.rating.values import PoolSums
from arena.ladder.store import LadderStore, relations
from arena.ladder.store.entries import pool_name
from fiftysix.wire import TimeControl
from sdk import BotServer
from tests.arena.ladder.test_standings import scanned_totals

FAST = TimeControl(decision_ms=500, bank_ms=500)
"""A time control for ladder tests: quick, and far from any timeout of a random bot."""


def registered(path: Path, servers: list[BotServer]) -> LadderStore:
    """A ladder file at `path` with the bots of `servers` registered as bot0, bot1, ..."""
    store = LadderStore(path)
    for index, server in enumerate(servers):
        store.registry.add_bot(f"bot{index}", address=f"127.0.0.1:{server.port}")
    return store


def events(stderr: str, name: str) -> list[dict[str, object]]:
    """The JSON log lines (`--log-json`) named `name` in a command's standard error."""
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == name]


def assert_ladder_invariants(store: LadderStore, voided: bool = False) -> None:
    """What a ladder run must leave, whatever happened during it (a runner or a worker killed): every set
    played whole and rated exactly once (one rating event per bot of the set), no match lost or stored
    twice, and the stored standings (running totals, the fit's sums, the ratings) equal to those
    recomputed from the stored matches. With `voided`, sets made void are allowed (a run stopped after
    their deals were shown live): never rated, their matches kept and counted in the totals."""
    assert store.sets.unfinished_sets() == []
    columns = relations.sets.c
    sets = store.file._conn.execute(
        select(columns.id, columns.rotations, columns.bots).where(columns.void_reason.is_(None))
    ).all()
    assert sets
    if not voided:
        assert store.file._conn.scalar(select(func.count()).where(columns.void_reason.is_not(None))) == 0
    assert store.sets.rated_sets() == {set_id for set_id, _rotations, _bots in sets}
    expected_sums: dict[str, PoolSums] = {}
    pool_of = {
        set_id: pool_name(players, ruleset, event)
        for set_id, players, ruleset, event in store.file._conn.execute(
            select(columns.id, columns.players, columns.ruleset, columns.event)
        )
    }
    for set_id, rotations, bots in sets:
        matches = store.matches.finished(set_id)
        assert sorted(match.rotation for match in matches) == list(range(rotations))
        events = relations.rating_events
        changed = store.file._conn.scalars(select(events.c.bot).where(events.c.set_id == set_id)).all()
        assert sorted(changed) == sorted(json.loads(bots))
        pool = pool_of[set_id]
        result = set_result([match.bot_ranks for match in sorted(matches, key=lambda match: match.rotation)])
        expected_sums[pool] = add_set(expected_sums.get(pool, PoolSums()), result)
    for pool, sums in expected_sums.items():
        in_pool = [
            match for set_id in pool_of if pool_of[set_id] == pool for match in store.matches.finished(set_id)
        ]
        assert store.ratings.totals(pool) == scanned_totals(in_pool)
        stored = store.ratings.pool_sums(pool)
        assert stored.rated_sets == sums.rated_sets
        assert stored.pairs.keys() == sums.pairs.keys()
        for pair, line in sums.pairs.items():
            assert (stored.pairs[pair].sets, stored.pairs[pair].score) == (
                line.sets,
                pytest.approx(line.score),
            )
        fitted = {line.bot: line.rating for line in fit_pool(sums).fitted()}
        assert {
            bot: line.rating for bot, line in store.ratings.fitted_ratings(pool).items()
        } == pytest.approx(fitted)
