"""The SPRT (arena/ladder/rating/sprt.py): known answers, error rates measured over thousands of
simulated tests, and `arena sprt` end to end against real bot servers on loopback."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from ladder_support import registered

from arena.cli import main
from arena.ladder.rating.simulate import simulated_sprts
from arena.ladder.rating.sprt import (
    SetScores,
    SprtSettings,
    decision,
    elo_estimate,
    elo_of_score,
    expected_score,
    fixed_length,
    log_likelihood_ratio,
)
from sdk import BotServer


def test_wald_bounds_and_the_logistic_scale() -> None:
    settings = SprtSettings(0, 10)
    assert settings.lower == pytest.approx(math.log(0.05 / 0.95))
    assert settings.upper == pytest.approx(math.log(0.95 / 0.05))
    assert expected_score(0) == 0.5
    assert elo_of_score(expected_score(123.0)) == pytest.approx(123.0)
    with pytest.raises(ValueError, match="elo0 must be below elo1"):
        SprtSettings(10, 10)
    with pytest.raises(ValueError, match=r"alpha must be above 0 and below 0\.5"):
        SprtSettings(0, 10, alpha=0.5)


def test_the_llr_leans_to_the_hypothesis_the_scores_are_near() -> None:
    settings = SprtSettings(0, 50)
    near_zero = SetScores()
    near_fifty = SetScores()
    for index in range(400):
        near_zero = near_zero.plus([0.0, 0.5, 0.5, 1.0][index % 4])  # mean 0.5
        near_fifty = near_fifty.plus([0.5, 1.0, 0.5, 0.5, 1.0, 0.0, 0.5, 1.0][index % 8])  # mean 0.625
    assert log_likelihood_ratio(near_zero, settings) < settings.lower
    assert decision(near_zero, settings) == "H0"
    assert log_likelihood_ratio(near_fifty, settings) > settings.upper
    assert decision(near_fifty, settings) == "H1"
    assert decision(SetScores(), settings) is None
    assert abs(log_likelihood_ratio(SetScores(), settings)) < 0.05  # the virtual set alone says little


def test_a_few_equal_scores_do_not_decide_at_once() -> None:
    """Two splits (0.5) at the start must not look like proof of zero spread around elo0."""
    settings = SprtSettings(0, 10)
    splits = SetScores().plus(0.5).plus(0.5)
    assert decision(splits, settings) is None


def test_reversed_scores_are_seen_from_the_other_bot() -> None:
    scores = SetScores().plus(1.0).plus(0.5).plus(0.25)
    mirror = SetScores().plus(0.0).plus(0.5).plus(0.75)
    assert scores.reversed() == pytest.approx(mirror)
    elo, low, high = elo_estimate(scores)
    assert low < elo < high
    assert elo_estimate(SetScores().plus(1.0).plus(1.0))[0] < math.inf  # finite for all wins


@pytest.mark.parametrize(("elo0", "elo1"), [(0.0, 40.0), (-20.0, 20.0)])
def test_error_rates_over_two_thousand_simulated_tests_stay_within_alpha_and_beta(
    elo0: float, elo1: float
) -> None:
    """At the true difference elo0, H1 is accepted (a false positive) at most alpha of the time; at elo1,
    H0 (a false negative) at most beta of the time; each allowing 1.5 standard errors of the measure."""
    settings = SprtSettings(elo0, elo1, alpha=0.05, beta=0.05)
    rng = np.random.default_rng(2026)
    tests = 2000
    allowance = 1.5 * math.sqrt(0.05 * 0.95 / tests)
    at_h0, _ = simulated_sprts(settings, elo0, tests, rng)
    at_h1, lengths = simulated_sprts(settings, elo1, tests, rng)
    assert (at_h0 == -1).sum() == (at_h1 == -1).sum() == 0  # every test decides
    assert (at_h0 == 1).mean() <= settings.alpha + allowance
    assert (at_h1 == 0).mean() <= settings.beta + allowance
    # And the test is worth it: fewer sets on average than the fixed-length test of the same power.
    assert lengths.mean() < fixed_length(settings, variance=0.125)


def arena(db: Path, *arguments: str) -> int:
    return main(["sprt", "--db", str(db), *arguments, "--deal-cap", "2", "--decision-ms", "500"])


def test_arena_sprt_accepts_h0_and_h1_and_stops_at_max_sets(
    tmp_path: Path, servers: list[BotServer], capsys: pytest.CaptureFixture[str]
) -> None:
    """Two random bots are equal: against H1 = +400 Elo, H0 is accepted (exit 1); against H0 = -400, H1
    (exit 0); with --max-sets 2 and bounds out of reach, no decision (exit 3). Each set is stored in the
    event's own pool and the ladder's ratings do not move."""
    db = tmp_path / "ladder.db"
    registered(db, servers).close()
    assert arena(db, "bot0", "bot1", "--elo0", "0", "--elo1", "400", "--event", "one") == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "SPRT bot0 vs bot1 in 4p-pairs@one: H0 Elo +0, H1 Elo +400, alpha 0.05, beta 0.05; "
        "LLR bounds (-2.94, +2.94)"
    )
    assert out[1].startswith("set 1: bot0 scored ")
    assert "LLR " in out[1]
    assert " (-2.94, +2.94); Elo " in out[1]
    assert out[-2] == "H0 accepted: bot0 - bot1 is +0 Elo rather than +400"
    assert out[-1].startswith("Elo bot0 - bot1: ")
    assert out[-1].endswith("pool 4p-pairs@one")
    sets = len([line for line in out if line.startswith("set ")])
    assert 2 <= sets <= 40

    assert arena(db, "bot1", "bot0", "--elo0", "-400", "--elo1", "0", "--event", "two") == 0
    assert "H1 accepted: bot1 - bot0 is +0 Elo rather than -400" in capsys.readouterr().out

    assert arena(db, "bot0", "bot2", "--elo0", "0", "--elo1", "5", "--max-sets", "2", "--event", "three") == 3
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out[1:3]] == ["set 1", "set 2"]
    assert out[-2] == "No decision after 2 sets"

    # The same event again goes on from its sets.
    assert arena(db, "bot0", "bot2", "--elo0", "0", "--elo1", "5", "--max-sets", "3", "--event", "three") == 3
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "Going on from 2 sets already played in 4p-pairs@three"
    assert out[2].startswith("set 3: ")
    assert out[-2] == "No decision after 3 sets"

    db_rows = sqlite3.connect(db).execute("SELECT DISTINCT event FROM sets ORDER BY event").fetchall()
    assert db_rows == [("one",), ("three",), ("two",)]
    assert main(["ladder", "--db", str(db), "show", "--json", "--pool", "4p-pairs"]) == 0
    assert "1500" in capsys.readouterr().out  # the ladder's pool: nothing rated there
    assert main(["ladder", "--db", str(db), "show", "--pool", "4p-pairs@three"]) == 0
    assert capsys.readouterr().out.startswith("Pool 4p-pairs@three; pools: ")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["bot0", "bot1", "--elo0", "10", "--elo1", "0"], "elo0 must be below elo1"),
        (["bot0", "bot0", "--elo0", "0", "--elo1", "10"], "A and B are the same bot"),
        (
            ["bot0", "bot1", "--elo0", "0", "--elo1", "10", "--players", "6"],
            "has 3 teams: an SPRT is between",
        ),
        (["bot0", "nobody", "--elo0", "0", "--elo1", "10"], "no bot named 'nobody' is registered"),
    ],
)
def test_arena_sprt_errors_are_one_line(
    tmp_path: Path,
    servers: list[BotServer],
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    message: str,
) -> None:
    db = tmp_path / "ladder.db"
    registered(db, servers).close()
    status = arena(db, *arguments)
    error = capsys.readouterr().err
    assert status == (1 if "registered" in message else 2)
    assert error.count("\n") == 1
    assert error.startswith("arena sprt: error: ")
    assert message in error


def test_arena_sprt_refuses_numbers_out_of_bounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for option, value in (("--alpha", "0.5"), ("--elo1", "inf"), ("--max-sets", "0"), ("--event", "a b")):
        with pytest.raises(SystemExit) as exited:
            main(
                [
                    "sprt",
                    "--db",
                    str(tmp_path / "x.db"),
                    "a",
                    "b",
                    "--elo0",
                    "0",
                    "--elo1",
                    "10",
                    option,
                    value,
                ]
            )
        assert exited.value.code == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1
        assert error.startswith("arena sprt: error: argument ")
