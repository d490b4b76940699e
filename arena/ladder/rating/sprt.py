"""The sequential probability ratio test of `arena sprt`: is bot A stronger than bot B by elo1 rather
than by elo0? Pure: it reads sums of duplicate-set scores and says whether to go on.

**The observations** are duplicate sets, not matches: a set's score x of A against B is its mean result
over the set's two matches (1 win, 0.5 equal rank, 0 loss), so x is 0, 0.25, 0.5, 0.75 or 1. As
fishtest's pentanomial model counts game pairs played on the same opening with colours reversed, a set
is a pair of matches on the same deals with the seats reversed, and the luck of the cards that they share
cancels in x instead of being counted twice.

**The test** is fishtest's generalized SPRT in its normal approximation (M. Van den Bergh, "A practical
GSPRT", the `LLR_alt2` of fishtest's stats): with x-bar and the mean of x^2 over n sets,

    LLR = n / 2 * log(r0 / r1),  r_s = mean((x - s)^2) = mean(x^2) - 2 s x-bar + s^2,

where s0 and s1 are the expected scores of an Elo difference elo0 and elo1 in the logistic model,
s = 1 / (1 + 10^(-elo / 400)): the empirical distribution of the set scores stands in for their unknown
distribution, so neither a draw rate nor a variance is assumed. The test accepts H1 when the LLR reaches
log((1 - beta) / alpha) and H0 when it falls to log(beta / (1 - alpha)) (Wald's bounds).

**A virtual set.** The sums hold one set more than were played, of the widest spread: half a set scored
0 and half a set scored 1. Without it a few equal scores at the start (two splits in a row, as likely as
a quarter when the bots are close) make r0 or r1 nearly 0 and the LLR jump past a bound: fishtest's
0.001 of each pentanomial outcome is enough for its thousands of game pairs, not for a test that may stop
after a hundred sets. Measured over thousands of simulated tests (tests/arena/ladder/test_sprt.py,
bench/sprt.py) the error rates stay at alpha and beta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

REGULARISER: Final = 0.5
"""The parts of the virtual set scored 0 and scored 1 that the sums hold (see the module docstring)."""
Z_95: Final = 1.959963984540054

Hypothesis = Literal["H0", "H1"]
_Floats = npt.NDArray[np.float64]


def expected_score(elo: float) -> float:
    """The expected score of a bot `elo` points stronger than its opponent (logistic Elo).

    >>> expected_score(0.0), round(expected_score(100.0), 2), round(expected_score(-100.0), 2)
    (0.5, 0.64, 0.36)
    """
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of_score(score: float) -> float:
    """The Elo difference whose expected score is `score` (infinite at 0 and 1).

    >>> round(elo_of_score(0.64)), elo_of_score(0.0), elo_of_score(1.0)
    (100, -inf, inf)
    """
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True, slots=True)
class SprtSettings:
    """H0: A is elo0 stronger than B; H1: elo1 (elo0 < elo1); alpha and beta the chances of accepting
    H1 when H0 holds and H0 when H1 holds."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, got {self.elo0:g} and {self.elo1:g}")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < value < 0.5:
                raise ValueError(f"{name} must be above 0 and below 0.5, got {value:g}")

    @property
    def lower(self) -> float:
        """The LLR at or below which H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass(frozen=True, slots=True)
class SetScores:
    """Sums of set scores of A against B: how many sets, the summed score, the summed squared score."""

    sets: int = 0
    score: float = 0.0
    squares: float = 0.0

    def plus(self, score: float) -> SetScores:
        """The sums with one more set scored `score`."""
        return SetScores(self.sets + 1, self.score + score, self.squares + score * score)

    def reversed(self) -> SetScores:
        """The same sets seen from B: each score x becomes 1 - x."""
        return SetScores(self.sets, self.sets - self.score, self.sets - 2.0 * self.score + self.squares)


def log_likelihood_ratio(scores: SetScores, settings: SprtSettings) -> float:
    """The GSPRT's LLR of H1 against H0 after the sets of `scores` (see the module docstring)."""
    sets, score, squares = (np.array([float(value)]) for value in (scores.sets, scores.score, scores.squares))
    return float(log_likelihood_ratios(sets, score, squares, settings)[0])


def log_likelihood_ratios(sets: _Floats, score: _Floats, squares: _Floats, settings: SprtSettings) -> _Floats:
    """`log_likelihood_ratio` of many tests at once (arrays of their sums), for the simulations."""
    count = sets + 2.0 * REGULARISER
    mean = (score + REGULARISER) / count
    second = (squares + REGULARISER) / count
    s0, s1 = expected_score(settings.elo0), expected_score(settings.elo1)
    r0 = second - 2.0 * s0 * mean + s0 * s0
    r1 = second - 2.0 * s1 * mean + s1 * s1
    return count / 2.0 * np.log(r0 / r1)


def decision(scores: SetScores, settings: SprtSettings) -> Hypothesis | None:
    """The hypothesis the test accepts after the sets of `scores`, or None: go on.

    Ten sets scoring 0.7 on average do not yet tell 0 Elo from 50; thirty times as many do:

    >>> settings = SprtSettings(elo0=0.0, elo1=50.0)
    >>> ten = SetScores()
    >>> for score in (1, 0.5, 1, 0.5, 0.5, 1, 0, 1, 0.5, 1):
    ...     ten = ten.plus(score)
    >>> decision(ten, settings) is None
    True
    >>> decision(SetScores(300, 30 * ten.score, 30 * ten.squares), settings)
    'H1'
    >>> decision(SetScores(400, 200.0, 150.0), settings)  # even, 0.5 a set: no stronger
    'H0'
    """
    ratio = log_likelihood_ratio(scores, settings)
    if ratio >= settings.upper:
        return "H1"
    if ratio <= settings.lower:
        return "H0"
    return None


def elo_estimate(scores: SetScores) -> tuple[float, float, float]:
    """The Elo difference of A over B that the mean set score says, with its 95% interval (the bounds of
    the mean score plus or minus 1.96 standard errors, carried to Elo), from the sums with the test's
    virtual set: so a bot that won every set gets a large, finite difference. NaN without sets.

    >>> [round(elo) for elo in elo_estimate(SetScores(300, 210.0, 180.0))]
    [147, 117, 179]
    >>> estimate, low, high = elo_estimate(SetScores(5, 5.0, 5.0))  # five wins of five
    >>> round(estimate), round(low), high
    (417, 127, inf)
    """
    if scores.sets == 0:
        return math.nan, math.nan, math.nan
    count = scores.sets + 2.0 * REGULARISER
    mean = (scores.score + REGULARISER) / count
    variance = ((scores.squares + REGULARISER) / count - mean * mean) * count / max(count - 1.0, 1.0)
    error = math.sqrt(max(variance, 0.0) / count)
    return elo_of_score(mean), elo_of_score(mean - Z_95 * error), elo_of_score(mean + Z_95 * error)


def fixed_length(settings: SprtSettings, variance: float) -> int:
    """How many sets a fixed-length test of the same power needs: the one-sided z-test of the mean set
    score with level alpha between s0 and s1 that accepts H1 with probability 1 - beta at s1, for set
    scores of the given `variance`."""
    spread = _normal_quantile(1.0 - settings.alpha) + _normal_quantile(1.0 - settings.beta)
    gap = expected_score(settings.elo1) - expected_score(settings.elo0)
    return math.ceil(variance * (spread / gap) ** 2)


def _normal_quantile(probability: float) -> float:
    """The standard normal quantile, by bisection on erf (no scipy needed for two numbers)."""
    low, high = -10.0, 10.0
    for _step in range(100):
        middle = (low + high) / 2.0
        if 0.5 * (1.0 + math.erf(middle / math.sqrt(2.0))) < probability:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0
