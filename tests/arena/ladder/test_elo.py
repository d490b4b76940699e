"""Known-answer tests for the ladder's Elo updates and intervals (formulas in arena/ladder/elo.py)."""

from __future__ import annotations

import math

import pytest

from arena.ladder.elo import K_FACTOR, expected_score, interval_half_width, pair_scores, rating_changes


@pytest.mark.parametrize(
    ("rating", "opponent", "expected"),
    [(1500, 1500, 0.5), (1700, 1500, 0.7597469), (1500, 1700, 0.2402531), (1900, 1500, 0.9090909)],
)
def test_expected_score(rating: float, opponent: float, expected: float) -> None:
    assert expected_score(rating, opponent) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("ratings", "rankings", "changes"),
    [
        # Two bots, equal ratings, one wins both matches of the set: +/- K/2.
        ({"a": 1500, "b": 1500}, [{"a": 1, "b": 2}, {"a": 1, "b": 2}], {"a": 16.0, "b": -16.0}),
        # A split set between equals changes nothing.
        ({"a": 1500, "b": 1500}, [{"a": 1, "b": 2}, {"a": 2, "b": 1}], {"a": 0.0, "b": 0.0}),
        # The underdog (200 below) wins the set: 32 * (1 - 0.2402531).
        ({"a": 1500, "b": 1700}, [{"a": 1, "b": 2}, {"a": 1, "b": 2}], {"a": 24.311901, "b": -24.311901}),
        # The favourite wins as expected: 32 * (1 - 0.7597469).
        ({"a": 1700, "b": 1500}, [{"a": 1, "b": 2}, {"a": 1, "b": 2}], {"a": 7.688099, "b": -7.688099}),
        # Equal ranks score 0.5 each.
        ({"a": 1500, "b": 1500}, [{"a": 1, "b": 1}, {"a": 1, "b": 1}], {"a": 0.0, "b": 0.0}),
        # Three equal bots finishing a, b, c: K/(n-1) = 16 per pair.
        (
            {"a": 1500, "b": 1500, "c": 1500},
            [{"a": 1, "b": 2, "c": 3}] * 3,
            {"a": 16.0, "b": 0.0, "c": -16.0},
        ),
        # Four equal bots, two sharing second place: a +12, b and c 0, d -12 (K/3 = 32/3 per pair).
        (
            {"a": 1500, "b": 1500, "c": 1500, "d": 1500},
            [{"a": 1, "b": 2, "c": 2, "d": 4}] * 4,
            {"a": 16.0, "b": 0.0, "c": 0.0, "d": -16.0},
        ),
    ],
)
def test_rating_changes(
    ratings: dict[str, float], rankings: list[dict[str, int]], changes: dict[str, float]
) -> None:
    computed = rating_changes(ratings, rankings)
    assert computed == pytest.approx(changes, abs=1e-5)
    assert sum(computed.values()) == pytest.approx(0.0, abs=1e-9)


def test_pair_scores_average_over_the_set() -> None:
    scores = pair_scores([{"a": 1, "b": 2}, {"a": 2, "b": 1}, {"a": 1, "b": 1}, {"a": 1, "b": 2}])
    assert scores[("a", "b")] == pytest.approx(0.625)
    assert scores[("b", "a")] == pytest.approx(0.375)


def test_k_factor_is_documented_value() -> None:
    assert K_FACTOR == 32


@pytest.mark.parametrize(
    ("scores", "half_width"),
    [
        # Mean 0.5, sample variance 1/3 over 4 results: 1.96 * 400/(ln10 * 0.25) * sqrt(1/12).
        ([1.0, 0.0, 1.0, 0.0], 1.96 * 400 / (math.log(10) * 0.25) * math.sqrt(1 / 12)),
        # All won: p clipped to 1 - 0.5/4 = 0.875 and the binomial variance p(1-p) used.
        ([1.0] * 4, 1.96 * 400 / (math.log(10) * 0.875 * 0.125) * math.sqrt(0.875 * 0.125 / 4)),
        ([], math.inf),
    ],
)
def test_interval(scores: list[float], half_width: float) -> None:
    assert interval_half_width(scores) == pytest.approx(half_width)


def test_interval_narrows_with_more_results() -> None:
    few = interval_half_width([1.0, 0.0, 0.5] * 3)
    many = interval_half_width([1.0, 0.0, 0.5] * 30)
    assert many < few / 2
