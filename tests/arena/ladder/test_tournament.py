"""Tournaments: the plan of round-robins and gauntlets (two, three and four teams), and `arena tournament`
end to end against real bot servers on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ladder_support import registered

from arena.cli import main
from arena.ladder import LadderSettings
from arena.ladder.pairing import EventPairing, tournament_plan
from arena.ladder.store import LadderStore
from sdk import BotServer


@pytest.mark.parametrize(
    ("form", "bots", "teams", "rounds", "plan"),
    [
        ("round-robin", "abc", 2, 1, ["ab", "ac", "bc"]),
        ("round-robin", "abc", 2, 2, ["ab", "ac", "bc", "ab", "ac", "bc"]),
        ("gauntlet", "abcd", 2, 1, ["ab", "ac", "ad"]),
        ("round-robin", "abcd", 3, 1, ["abc", "abd", "acd", "bcd"]),
        ("gauntlet", "abcd", 3, 1, ["abc", "abd", "acd"]),
        ("round-robin", "abcd", 4, 1, ["abcd"]),
        ("gauntlet", "abcde", 4, 1, ["abcd", "abce", "abde", "acde"]),
    ],
)
def test_the_plan_of_a_tournament(form: str, bots: str, teams: int, rounds: int, plan: list[str]) -> None:
    assert tournament_plan(form, list(bots), teams, rounds) == [list(group) for group in plan]


@pytest.mark.parametrize(
    ("form", "bots", "teams", "message"),
    [
        ("swiss", "abc", 2, "the format is round-robin or gauntlet"),
        ("round-robin", "aba", 2, "a bot is named twice"),
        ("round-robin", "ab", 3, "3 teams need at least 3 bots, got 2"),
    ],
)
def test_a_plan_that_cannot_be_played_is_refused(form: str, bots: str, teams: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tournament_plan(form, list(bots), teams)


def tournament(db: Path, *arguments: str) -> int:
    return main(["tournament", "--db", str(db), *arguments, "--deal-cap", "2", "--decision-ms", "500"])


def test_arena_tournament_plays_every_pairing_and_reports(
    tmp_path: Path, servers: list[BotServer], capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "ladder.db"
    registered(db, servers).close()
    assert tournament(db, "--format", "round-robin", "--bots", "bot0,bot1,bot2", "--event", "rr") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Played 6 matches (3 of 3 sets rated, ")
    assert out[2].startswith("Crosstable of 4p-pairs@rr: ")
    assert out[3].split() == ["bot", "elo", "score", "1", "2", "3"]
    for row in out[4:7]:
        assert row.split()[3].endswith("/2")  # two sets each: one against each other bot
    assert out[8] == "Ratings over the sets of 4p-pairs@rr only:"
    assert out[9].split()[:2] == ["rank", "bot"]
    assert sorted(line.split()[1] for line in out[10:13]) == ["bot0", "bot1", "bot2"]
    # Apart from the ladder: its own pool, which the crosstable and standings read again.
    assert main(["ladder", "--db", str(db), "show", "--crosstable", "--json", "--pool", "4p-pairs@rr"]) == 0
    cells = json.loads(capsys.readouterr().out)
    assert {(cell["bot"], cell["opponent"]) for cell in cells} == {
        (bot, opponent)
        for bot in ("bot0", "bot1", "bot2")
        for opponent in ("bot0", "bot1", "bot2")
        if bot != opponent
    }
    assert main(["ladder", "--db", str(db), "show", "--json"]) == 0
    assert all(line["pool"] == "4p-pairs@rr" for line in json.loads(capsys.readouterr().out))  # only pool


def test_a_three_team_gauntlet(
    tmp_path: Path, servers: list[BotServer], capsys: pytest.CaptureFixture[str]
) -> None:
    """6-player pairs: three teams, so a pairing is three bots; the gauntlet of three bots is one set."""
    db = tmp_path / "ladder.db"
    registered(db, servers).close()
    status = tournament(
        db,
        "--format",
        "gauntlet",
        "--bots",
        "bot2,bot0,bot1",
        "--players",
        "6",
        "--rounds",
        "2",
        "--event",
        "g",
    )
    assert status == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Played 6 matches (2 of 2 sets rated, ")
    assert out[2].startswith("Crosstable of 6p-pairs@g: ")
    ratings = [line.split() for line in out[10:13]]
    assert sorted(row[1] for row in ratings) == ["bot0", "bot1", "bot2"]
    assert all(row[3] == "+/-" for row in ratings)  # every bot has an interval from the fit


@pytest.mark.parametrize(
    ("arguments", "status", "message"),
    [
        (["--format", "round-robin", "--bots", "bot0"], 2, "2 teams need at least 2 bots, got 1"),
        (["--format", "gauntlet", "--bots", "bot0,bot0"], 2, "a bot is named twice"),
        (["--format", "round-robin", "--bots", "bot0,ghost"], 1, "no bot named 'ghost' is registered"),
        (
            ["--format", "round-robin", "--bots", "bot0,bot1", "--players", "8"],
            2,
            "4 teams need at least 4 bots",
        ),
    ],
)
def test_arena_tournament_errors_are_one_line(
    tmp_path: Path,
    servers: list[BotServer],
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    status: int,
    message: str,
) -> None:
    db = tmp_path / "ladder.db"
    registered(db, servers).close()
    assert tournament(db, *arguments) == status
    error = capsys.readouterr().err.splitlines()
    assert error[-1].startswith("arena tournament: error: ")
    assert message in error[-1]


def test_arena_tournament_refuses_a_format_it_does_not_know(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["tournament", "--db", str(tmp_path / "x.db"), "--format", "swiss", "--bots", "a,b"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith("arena tournament: error: argument --format: invalid choice")


def test_an_event_stops_when_a_bot_of_its_next_set_is_down(tmp_path: Path) -> None:
    store = LadderStore(tmp_path / "ladder.db")
    for name in ("a", "b", "c"):
        store.registry.add_bot(name, address="127.0.0.1:1")
    settings = LadderSettings(event="e")
    pairing = EventPairing(
        store, settings, ["a", "b", "c"], iter(tournament_plan("round-robin", ["a", "b", "c"], 2))
    )
    pairing.check()
    assert pairing.next_bots() == ["a", "b"]
    assert store.registry.record_host_failure("c", down_after=1)  # c is marked down
    assert pairing.next_bots() is None
    assert pairing.down == ["c"]
    assert pairing.may_resume(
        store.sets.create_set(4, "pairs", None, 1, ["a", "b"], event="e", isolated=False)
    )
    assert not pairing.may_resume(
        store.sets.create_set(4, "pairs", None, 1, ["a", "b"], isolated=False)
    )  # the ladder's
    store.close()
