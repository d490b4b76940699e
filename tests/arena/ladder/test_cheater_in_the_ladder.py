"""Fair play, proved by a bot that cheats: the cheating bot (tests/bots/cheating_bot.py) remembers every
hand it sees and shares what it knows between the seats and processes it can reach; its claims of hidden
cards are checked against the stored records (tests/fair_play.py, tests/arena/ladder/cheater_ladder.py).

Wherever the arena starts the bot (a command, an upload in the sandbox; 4 and 6 players; one or two
matches at once; on Ray in test_ray.py) it learns nothing: no process sees a deal twice and partners are
separate processes, so it never has a card to claim. The control switches the isolation off (the pool as
it was: a process reused for the next rotation of its set) and the same check finds the leak. A remote
bot is the entrant's own processes, which the arena cannot reset: they leak, and the arena labels them
(and refuses them with --isolated-only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cheater_ladder import cheater_set_score, ladder_file, run_cheater_ladder

from arena.cli import main
from arena.ladder.bots.pool import LocalBots
from arena.ladder.store import LadderStore
from tests.fair_play import LeakReport


def second_rotations(tmp_path: Path) -> set[str]:
    """The ids of the matches played second in their set (rotation 1) in the ladder of `tmp_path`."""
    store = LadderStore(str(ladder_file(tmp_path)))
    try:
        return {match.id for match in store.matches.finished() if match.rotation == 1}
    finally:
        store.close()


def stored_matches(tmp_path: Path) -> int:
    store = LadderStore(str(ladder_file(tmp_path)))
    try:
        return len(store.matches.finished())
    finally:
        store.close()


def assert_true_claims(report: LeakReport) -> None:
    """The cheater never claims a card wrongly: what it says it knows, it knows."""
    assert report.total.claims > 0
    assert report.total.wrong == 0
    assert report.total.own == 0


@pytest.mark.parametrize(
    ("mode", "players", "concurrency", "sets"),
    [
        ("command", 4, 2, 3),
        ("command", 6, 2, 1),
        ("upload", 4, 2, 2),
        ("upload", 6, 1, 1),
    ],
)
def test_a_bot_the_arena_starts_learns_no_hidden_card(
    tmp_path: Path, mode: Any, players: int, concurrency: int, sets: int
) -> None:
    report = run_cheater_ladder(tmp_path, mode, players=players, concurrency=concurrency, sets=sets)
    assert stored_matches(tmp_path) == 2 * sets
    assert report.total.claims == 0, report
    assert report.leaks == 0


def test_the_check_finds_the_leak_when_isolation_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the pool as it was before (a process given any match) lets the second rotation's
    processes know every hand, and the check of the records says so."""
    started = LocalBots.__init__

    def unisolated(self: LocalBots, *args: Any, **kwargs: Any) -> None:
        started(self, *args, **{**kwargs, "isolate_deals": False})

    monkeypatch.setattr(LocalBots, "__init__", unisolated)
    report = run_cheater_ladder(tmp_path, "command", players=4, concurrency=1, sets=2)
    assert_true_claims(report)
    assert report.via.keys() == {"memory"}  # a process that saw the deal before
    assert report.matches.keys() <= second_rotations(tmp_path)
    assert report.leaks > 0


def test_the_cheater_scores_even_against_its_honest_twin_over_40_sets(tmp_path: Path) -> None:
    # The twin plays as the cheater would with nothing to remember: with no leak each duplicate set is
    # level. 40 sets, as issue 21's criterion says (the suite's two workers make room for them).
    report = run_cheater_ladder(tmp_path, "command", players=4, concurrency=2, sets=40, twin=True)
    assert stored_matches(tmp_path) == 80
    assert report.total.claims == 0
    assert abs(cheater_set_score(tmp_path) - 0.5) <= 0.05


def test_remote_bots_that_talk_to_each_other_leak_and_are_labelled(tmp_path: Path) -> None:
    report = run_cheater_ladder(tmp_path, "remote-per-seat", players=4, concurrency=1, sets=2)
    assert_true_claims(report)
    # Partners' hands in the match they play, through the files, and the first rotation's hands in the
    # second: processes the arena does not start, which it can neither reset nor separate.
    assert report.via.keys() == {"memory", "files"}
    assert report.leaks > 0
    assert cheater_set_score(tmp_path, rotations=(1,)) >= 0.5  # it knew every hand there
    # Its sets are recorded as not isolated, and its pool and line say so.
    db = str(ladder_file(tmp_path))
    store = LadderStore(db)
    try:
        assert store.sets.sets_not_isolated() == {"4p-pairs": 2}
    finally:
        store.close()
    # A run of isolated bots only does not pair it: the rule bot is left alone.
    assert main(["ladder", "run", "--matches", "2", "--isolated-only", "--db", db]) == 1
