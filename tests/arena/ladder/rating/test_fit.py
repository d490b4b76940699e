"""Ratings by maximum likelihood (arena/ladder/rating/fit.py): known answers, ties, the prior, and, by
simulation, intervals that cover the true strengths as often as they say."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.ladder.rating.fit import ELO_PER_THETA, MINIMUM_DISPERSION, dispersion, fit_pool
from arena.ladder.rating.simulate import simulated_sums
from arena.ladder.rating.tally import add_set, order_choices
from arena.ladder.rating.values import START_RATING, FinishingOrder, PairResult, PoolSums, SetResult


def pair(sets: int, score: float, squares: float | None = None) -> PairResult:
    """A head-to-head whose scores were all wins or losses (squares = score) unless told."""
    return PairResult(sets, score, score if squares is None else squares)


def pairs(results: dict[tuple[str, str], PairResult]) -> PoolSums:
    return PoolSums(results)


def orders(counts: dict[FinishingOrder, int]) -> PoolSums:
    """The sums of matches that finished in these orders, as many times each."""
    sums = PoolSums()
    for order, count in counts.items():
        choices, places = order_choices(order)
        for _match in range(count):
            sums = add_set(sums, SetResult({}, choices, places))
    return sums


def test_a_lot_of_evidence_gives_the_elo_difference_of_the_score() -> None:
    # 3 to 1 is 400 log10(3) = 190.8 Elo apart; the prior's pull is small after 4,000 sets.
    fit = fit_pool(pairs({("a", "b"): pair(4000, 3000.0)}))
    assert fit.bots == ("a", "b")
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * math.log10(3), abs=0.5)
    assert sum(fit.ratings) / 2 == pytest.approx(START_RATING)
    assert fit.superiority("a", "b") == pytest.approx(1.0)
    assert fit.superiority("a", "b") + fit.superiority("b", "a") == pytest.approx(1.0)


def test_the_mean_is_1500_and_order_follows_the_scores() -> None:
    results = {("a", "b"): pair(10, 7.0), ("b", "c"): pair(10, 7.0), ("a", "c"): pair(10, 8.0)}
    fit = fit_pool(PoolSums(results))
    assert sum(fit.ratings) / 3 == pytest.approx(START_RATING)
    assert fit.ratings[0] > fit.ratings[1] > fit.ratings[2]
    fitted = fit.fitted()
    assert [line.bot for line in fitted] == ["a", "b", "c"]
    assert [line.superiority is None for line in fitted] == [False, False, True]
    assert 0.5 < fitted[0].superiority < 1.0  # type: ignore[operator]


def test_a_bot_that_won_every_set_gets_a_finite_rating_and_a_wide_interval() -> None:
    fit = fit_pool(pairs({("a", "b"): pair(5, 5.0)}))
    assert all(math.isfinite(rating) for rating in fit.ratings)
    assert fit.ratings[0] > fit.ratings[1]
    assert 100 < fit.margins[0] < 1000


def test_bots_that_never_met_are_rated_with_the_prior() -> None:
    fit = fit_pool(pairs({("a", "b"): pair(20, 15.0), ("c", "d"): pair(20, 15.0)}))
    assert fit.ratings[0] == pytest.approx(fit.ratings[2])
    assert fit.superiority("a", "c") == pytest.approx(0.5)


def test_plackett_luce_of_two_bots_is_bradley_terry() -> None:
    matches = orders({(("a",), ("b",)): 30, (("b",), ("a",)): 10})
    assert fit_pool(matches).ratings == pytest.approx(fit_pool(pairs({("a", "b"): pair(40, 30.0)})).ratings)


def test_a_tie_counts_as_half_of_each_order() -> None:
    """A tied place is the average of the orders that break it, as a draw is half a win in Bradley-Terry."""
    tied = fit_pool(orders({(("a",), ("b", "c")): 4, (("b",), ("a",), ("c",)): 1}))
    broken = fit_pool(
        orders({(("a",), ("b",), ("c",)): 2, (("a",), ("c",), ("b",)): 2, (("b",), ("a",), ("c",)): 1})
    )
    assert tied.ratings == pytest.approx(broken.ratings)
    two = fit_pool(orders({(("a", "b"),): 2, (("a",), ("b",)): 3}))
    assert two.ratings == pytest.approx(fit_pool(pairs({("a", "b"): pair(5, 4.0)})).ratings)


def test_the_spread_of_split_sets_narrows_the_intervals() -> None:
    """Sets of two independent matches score 0.5 half the time between equals: they spread half as much
    as single wins and losses, and the fit's intervals say so."""
    wins_and_losses = fit_pool(pairs({("a", "b"): pair(100, 50.0)}))
    splits = fit_pool(pairs({("a", "b"): pair(100, 50.0, 25 + 50 * 0.25)}))
    theta = np.zeros(2)
    assert dispersion(["a", "b"], {("a", "b"): pair(100, 50.0, 37.5)}, theta) == pytest.approx(0.5 * 100 / 99)
    assert splits.margins[0] == pytest.approx(wins_and_losses.margins[0] * math.sqrt(0.5), rel=1e-6)
    always_split = {("a", "b"): pair(100, 50.0, 25.0)}
    assert dispersion(["a", "b"], always_split, theta) == MINIMUM_DISPERSION


def test_no_sets_no_ratings() -> None:
    fit = fit_pool(PoolSums())
    assert (fit.bots, fit.fitted()) == ((), [])


@pytest.mark.parametrize(("teams", "sets"), [(2, 120), (4, 40)])
def test_the_intervals_cover_the_true_strengths_95_times_in_100(teams: int, sets: int) -> None:
    """200 seeded simulations of 6 bots of known strength (spread 150 Elo): each bot's 95% interval
    around its fitted rating covers its true difference from the mean in about 95% of cases (1,200
    intervals: the binomial standard error is 0.6%, so 0.92 to 0.98 allows for the prior's pull too)."""
    rng = np.random.default_rng(12)
    covered = total = 0
    for _simulation in range(200):
        truth = {f"bot{index}": float(value) for index, value in enumerate(rng.normal(0.0, 150.0, 6))}
        fit = fit_pool(simulated_sums(truth, sets, teams, rng))
        mean = sum(truth.values()) / len(truth)
        for bot, rating, margin in zip(fit.bots, fit.ratings, fit.margins, strict=True):
            covered += abs((rating - START_RATING) - (truth[bot] - mean)) <= margin
            total += 1
    assert 0.92 <= covered / total <= 0.98


def test_the_scale_is_elo() -> None:
    assert pytest.approx(400 / math.log(10)) == ELO_PER_THETA
