"""A ladder run's memory stays flat, and what bounds a run: a number of matches, a duration, a stop."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from numbers import Real
from pathlib import Path

import pytest

from arena.ladder import Ladder, LadderReport, LadderSettings, LadderStore, LocalBots
from arena.ladder.scheduler import VOIDED_SETS_KEPT, _SetInPlay
from fiftysix.wire import TimeControl
from sample_bots.random_bot import RandomBot
from sdk import BotServer, start

FAST = TimeControl(decision_ms=500, bank_ms=500)


@pytest.fixture(scope="module")
def servers() -> Iterator[list[BotServer]]:
    running = [start(RandomBot) for _ in range(2)]
    yield running
    for server in running:
        server.stop(0)


def registered(path: Path, servers: list[BotServer]) -> LadderStore:
    store = LadderStore(path)
    for index, server in enumerate(servers):
        store.add_bot(f"bot{index}", address=f"127.0.0.1:{server.port}")
    return store


def shape(report: LadderReport) -> dict[str, int | None]:
    """Each field of the report: None for a number, the length of anything that holds several."""
    sizes: dict[str, int | None] = {}
    for field in dataclasses.fields(report):
        value = getattr(report, field.name)
        sizes[field.name] = None if isinstance(value, Real) else len(value)
    return sizes


def test_a_run_report_does_not_grow_with_the_matches(tmp_path: Path, servers: list[BotServer]) -> None:
    reports = []
    for matches in (2, 10):
        store = registered(tmp_path / f"ladder-{matches}.db", servers)
        settings = LadderSettings(matches=matches, deal_cap=2, time_control=FAST, seed=5)
        reports.append(asyncio.run(Ladder(store, settings, LocalBots(tmp_path)).run()))
        store.close()
    short, long = reports
    assert (short.matches, long.matches) == (2, 10)
    assert shape(short) == shape(long)
    assert long.decisions > short.decisions > 0  # what bench/ladder.py divides by the matches


def test_a_report_names_the_first_voided_sets_and_counts_the_rest(
    tmp_path: Path, servers: list[BotServer]
) -> None:
    store = registered(tmp_path / "ladder.db", servers)
    ladder = Ladder(store, LadderSettings(), LocalBots(tmp_path))
    for seed in range(VOIDED_SETS_KEPT + 5):
        in_play = _SetInPlay(store.create_set(4, "pairs", 2, seed, ["bot0", "bot1"]))
        ladder._void(in_play, "arena error")
        ladder._void(in_play, "arena error again")  # a set is made void once
    assert ladder.report.sets_voided == VOIDED_SETS_KEPT + 5
    assert len(ladder.report.voided_sets) == VOIDED_SETS_KEPT
    assert store.unfinished_sets() == []
    store.close()
