"""What a bot that only remembers can learn in the ladder as the arena is today, measured by the
cheating bot's claims against the stored records (tests/arena/ladder/cheater_ladder.py).

The arena keeps a bot's processes for its later matches, so the processes that played the first
rotation of a duplicate set play the second, on the same deals, having seen every hand at each DealEnd.
The tests of `command` and `upload` bots state that leak as it is today; once a started process never
sees a deal twice, they flip (see the comments). Remote processes are the entrant's, not the arena's:
whatever the arena does, they may remember and talk to each other, so that leak stays.
"""

from __future__ import annotations

from pathlib import Path

from cheater_ladder import cheater_set_score, ladder_file, run_cheater_ladder

from arena.ladder import LadderStore
from tests.fair_play import LeakReport


def second_rotations(tmp_path: Path) -> set[str]:
    """The ids of the matches played second in their set (rotation 1) in the ladder of `tmp_path`."""
    store = LadderStore(str(ladder_file(tmp_path)))
    try:
        return {match.id for match in store.matches() if match.rotation == 1}
    finally:
        store.close()


def assert_true_claims(report: LeakReport) -> None:
    """The cheater never claims a card wrongly: what it says it knows, it knows."""
    assert report.total.claims > 0
    assert report.total.wrong == 0
    assert report.total.own == 0


def test_command_bots_see_the_deals_of_a_set_twice_today(tmp_path: Path) -> None:
    report = run_cheater_ladder(tmp_path, "command", players=4, concurrency=1, sets=2)
    assert_true_claims(report)
    # Its processes share nothing but what each saw itself: every leak is a deal seen again.
    assert report.via.keys() == {"memory"}
    assert report.matches.keys() <= second_rotations(tmp_path)
    assert report.leaks > 0  # flips to == 0 with the isolation fix


def test_uploaded_bots_in_the_sandbox_see_the_deals_of_a_set_twice_today(tmp_path: Path) -> None:
    report = run_cheater_ladder(tmp_path, "upload", players=4, concurrency=1, sets=1)
    assert_true_claims(report)
    # The sandbox's /tmp is private and the bot's folder read-only: nothing passes between its processes.
    assert report.via.keys() == {"memory"}
    assert report.leaks > 0  # flips to == 0 with the isolation fix


def test_remote_bots_that_talk_to_each_other_know_every_hand_and_win(tmp_path: Path) -> None:
    report = run_cheater_ladder(tmp_path, "remote-per-seat", players=4, concurrency=1, sets=2)
    assert_true_claims(report)
    # Partners' hands in the match they play, through the files, and the first rotation's hands in the
    # second: the arena cannot stop either (its isolation fix leaves this test as it is).
    assert report.via.keys() == {"memory", "files"}
    assert report.leaks > 0
    # The first rotation it plays as the rule bot, the second it knows: a set's score between rule bots
    # is 0.5 (the second rotation mirrors the first), and the cheater wins what it knows.
    assert cheater_set_score(tmp_path, rotations=(1,)) == 1.0
    assert cheater_set_score(tmp_path) >= 0.75
