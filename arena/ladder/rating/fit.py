"""Ratings by maximum likelihood, as Ordo and BayesElo compute chess rating lists: one fit over all the
rated sets of a pool, so the result does not depend on the order in which they were played.

**The models.** Each bot i has a strength theta_i. In a pool of two-team sets (Bradley-Terry) bot i beats
bot j with probability e^theta_i / (e^theta_i + e^theta_j); a set's score s of i against j (its mean
result over the set's rotations: 1 win, 0.5 equal rank, 0 loss) counts as s of a win and 1 - s of a
loss, so the likelihood of a set is p^s (1 - p)^(1 - s). In a pool of three- and four-team sets
(Plackett-Luce) the finishing order of each match of a rated set is drawn best first, each place going
to one of the bots still unplaced with probability proportional to e^theta. Either way a rating speaks
of one match: 400 Elo more is 10 to 1 odds of finishing above.

**Ties.** Bots with equal totals in a set share a place. Such an order counts as the average of the
log-likelihoods of every strict order that breaks the ties: two bots tied for a place each "win" it
half the time. This is Plackett-Luce's version of Bradley-Terry's draw as half a win and half a loss,
and, like it, adds no parameter.

**The prior.** Bradley-Terry has no finite maximum for a bot that won every set (or lost every one),
nor for groups of bots that never met. So every bot also plays one virtual drawn set against a virtual
opponent of strength 0 (the pool's centre), as BayesElo's prior of virtual draws does: a bot with only
wins gets a large but finite rating, with a wide interval, and the virtual results weigh less and less
as real ones add up.

**The scale.** Elo points are 400 / ln 10 times theta (400 Elo is a factor 10 in the odds), shifted so
that the mean of the pool's bots is 1500.

**Intervals.** From the observed information: the inverse of the negative Hessian of the log-posterior
at its maximum is the covariance of the thetas. A bot's 95% interval is 1.96 standard errors of its
rating's difference from the pool's mean (the mean moves with every rating, as Ordo reports it), and
the likelihood of superiority of i over j is Phi((theta_i - theta_j) / sd(theta_i - theta_j)). In
two-team pools the covariance is scaled by the spread the set scores show around the fit (quasi-
likelihood, see `dispersion`): a set's score, a mean over two matches, spreads less than one win or
loss, and the intervals would be too wide without it. Plackett-Luce counts matches, not sets, and is
left as it is (the duplicate deals make a set's matches cancel each other's luck, if anything).

**Cost.** The likelihood depends on sums only: per pair of bots the sets played and the summed score,
per finishing order its count. The store keeps those, so a refit after every set costs what the number
of bots (and of distinct orders) costs, not the length of the history. Newton's method converges in a
few steps (the log-posterior is concave).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from arena.ladder.rating.values import START_RATING, FittedRating, PairResult, PoolSums

ELO_PER_THETA: Final = 400.0 / math.log(10.0)
"""Elo points per unit of theta (natural log of the odds)."""
PRIOR_DRAWS: Final = 1.0
"""Virtual drawn sets each bot plays against the pool's centre (see the module docstring)."""
Z_95: Final = 1.959963984540054
MINIMUM_DISPERSION: Final = 0.25
"""The least spread of set scores the intervals assume (see `dispersion`)."""
MINIMUM_FREEDOM: Final = 10
"""Degrees of freedom (sets beyond the bots' count) below which the spread is not estimated."""

_Floats = npt.NDArray[np.float64]
_Ints = npt.NDArray[np.intp]


@dataclass(frozen=True, slots=True)
class Fit:
    """A pool's fitted ratings: per bot (in `bots` order) the Elo rating and the 95% half-width, and the
    covariance of the thetas (for likelihoods of superiority)."""

    bots: tuple[str, ...]
    ratings: tuple[float, ...]
    margins: tuple[float, ...]
    covariance: _Floats

    def superiority(self, first: str, second: str) -> float:
        """The likelihood that `first` is stronger than `second` (0.5 when the data cannot tell)."""
        return self._superiority(self.bots.index(first), self.bots.index(second))

    def _superiority(self, i: int, j: int) -> float:
        variance = self.covariance[i, i] + self.covariance[j, j] - 2.0 * self.covariance[i, j]
        difference = (self.ratings[i] - self.ratings[j]) / ELO_PER_THETA
        if variance <= 0.0:
            return 0.5 if difference == 0.0 else float(difference > 0.0)
        return 0.5 * (1.0 + math.erf(difference / math.sqrt(2.0 * variance)))

    def fitted(self) -> list[FittedRating]:
        """Each bot's rating and margin, best first (ties by name), with its likelihood of superiority
        over the next bot below it (None for the last)."""
        order = sorted(range(len(self.bots)), key=lambda index: (-self.ratings[index], self.bots[index]))
        lines = []
        for place, index in enumerate(order):
            below = order[place + 1] if place + 1 < len(order) else None
            lines.append(
                FittedRating(
                    self.bots[index],
                    self.ratings[index],
                    self.margins[index],
                    None if below is None else self._superiority(index, below),
                )
            )
        return lines


def fit_pool(sums: PoolSums, start: Mapping[str, float] | None = None) -> Fit:
    """Fit a pool from its sums: Plackett-Luce on the choices and places when it has any (a pool of
    three- or four-team sets), else Bradley-Terry on the pairs. `start`: ratings to start Newton's method
    from (the pool's last fit, which is close: a set moves little), else 1500 for all.

    Two bots that won a set each: even, centred on 1500, with wide intervals:

    >>> from arena.ladder.rating.tally import add_set, set_result
    >>> sums = add_set(PoolSums(), set_result([{"a": 1, "b": 2}, {"a": 1, "b": 2}]))
    >>> sums = add_set(sums, set_result([{"a": 2, "b": 1}, {"a": 2, "b": 1}]))
    >>> fit = fit_pool(sums)
    >>> fit.bots, [round(rating) for rating in fit.ratings], fit.margins[0] > 200
    (('a', 'b'), [1500, 1500], True)
    """
    if sums.choices:
        bots = sorted({bot for group in sums.choices for bot in group})
        arrays = _choice_arrays(bots, sums.choices, sums.places)
    else:
        bots = sorted({bot for pair in sums.pairs for bot in pair})
        arrays = _pair_arrays(bots, sums.pairs)
    known = start or {}
    initial = np.array([(known.get(bot, START_RATING) - START_RATING) / ELO_PER_THETA for bot in bots])
    theta, covariance = _maximise(initial, *arrays)
    if not sums.choices:
        covariance = covariance * dispersion(bots, sums.pairs, theta)
    if not bots:
        return Fit((), (), (), covariance)
    centre = np.full(len(bots), 1.0 / len(bots))
    # Var(theta_i - mean): C_ii - 2 (C centre)_i + centre' C centre.
    spread = np.diag(covariance) - 2.0 * covariance @ centre + centre @ covariance @ centre
    ratings = START_RATING + ELO_PER_THETA * (theta - theta.mean())
    margins = Z_95 * ELO_PER_THETA * np.sqrt(np.maximum(spread, 0.0))
    return Fit(tuple(bots), tuple(ratings.tolist()), tuple(margins.tolist()), covariance)


def dispersion(bots: Sequence[str], pairs: Mapping[tuple[str, str], PairResult], theta: _Floats) -> float:
    """How much the set scores spread around the fit, relative to a win-or-loss result's p (1 - p):
    Pearson's statistic over the degrees of freedom, from the sums (sum of (s - p)^2 is squares - 2 p
    score + sets p^2). A set of two matches scores 0.5 as often as luck splits it, so its score spreads
    less than one match's: about half as much (0.5) when the two matches are independent, less when the
    duplicate deals cancel luck. Kept at least MINIMUM_DISPERSION (two bots that always split would
    otherwise get a zero-width interval) and 1 when there are too few sets to tell."""
    index = {bot: number for number, bot in enumerate(bots)}
    pearson = 0.0
    sets = 0
    for (first, second), line in pairs.items():
        p = 1.0 / (1.0 + math.exp(theta[index[second]] - theta[index[first]]))
        pearson += (line.squares - 2.0 * p * line.score + line.sets * p * p) / (p * (1.0 - p))
        sets += line.sets
    freedom = sets - (len(bots) - 1)
    if freedom < MINIMUM_FREEDOM:
        return 1.0
    return max(pearson / freedom, MINIMUM_DISPERSION)


def _pair_arrays(
    bots: Sequence[str], pairs: Mapping[tuple[str, str], PairResult]
) -> tuple[_Floats, _Ints, _Floats]:
    """Bradley-Terry's sums as choices between two: each pair is a choice weighted by its sets."""
    index = {bot: number for number, bot in enumerate(bots)}
    wins = np.zeros(len(bots))
    members = np.empty((len(pairs), 2), dtype=np.intp)
    weights = np.empty(len(pairs))
    for row, ((first, second), result) in enumerate(pairs.items()):
        wins[index[first]] += result.score
        wins[index[second]] += result.sets - result.score
        members[row] = (index[first], index[second])
        weights[row] = result.sets
    return wins, members, weights


def _choice_arrays(
    bots: Sequence[str], choices: Mapping[tuple[str, ...], float], places: Mapping[str, float]
) -> tuple[_Floats, _Ints, _Floats]:
    """Plackett-Luce's sums as arrays: the places each bot took, and each group of unplaced bots
    (padded with -1 to the largest) with its weight."""
    index = {bot: number for number, bot in enumerate(bots)}
    width = max(len(group) for group in choices)
    pad = [-1] * width
    members = np.array(
        [[index[bot] for bot in group] + pad[len(group) :] for group in choices], dtype=np.intp
    )
    wins = np.array([places.get(bot, 0.0) for bot in bots])
    return wins, members, np.fromiter(choices.values(), dtype=np.float64, count=len(choices))


def _maximise(theta: _Floats, wins: _Floats, members: _Ints, weights: _Floats) -> tuple[_Floats, _Floats]:
    """Maximise sum(wins * theta) - sum(weight * log sum_{members} e^theta) plus the prior, by Newton's
    method from `theta` (`members` lists each choice's bots, padded with -1): theta and its covariance
    (the inverse of the negative Hessian)."""
    count = len(theta)
    if count == 0:
        return theta, np.zeros((0, 0))
    padded = np.where(members < 0, count, members)  # the pad points at a bot of strength -inf
    value, gradient, hessian = _evaluate(theta, wins, padded, weights)
    for _step in range(100):
        step = np.linalg.solve(-hessian, gradient)
        scale = 1.0
        while True:  # backtrack: far from the maximum a full Newton step may overshoot
            trial = _evaluate(theta + scale * step, wins, padded, weights)
            if trial[0] >= value - 1e-9 * abs(value) or scale < 1e-6:
                break
            scale /= 2.0
        theta = theta + scale * step
        value, gradient, hessian = trial
        if float(np.max(np.abs(scale * step))) < 1e-9:
            break
    return theta, np.asarray(np.linalg.inv(-hessian), dtype=np.float64)


def _evaluate(
    theta: _Floats, wins: _Floats, padded: _Ints, weights: _Floats
) -> tuple[float, _Floats, _Floats]:
    """The log-posterior at `theta`, its gradient and its Hessian."""
    count = len(theta)
    size = count + 1
    extended = np.append(theta, -np.inf)[padded]
    top = extended.max(axis=1, keepdims=True)
    odds = np.exp(extended - top)
    total = odds.sum(axis=1, keepdims=True)
    probabilities = odds / total
    # The prior: PRIOR_DRAWS drawn sets against strength 0, log(p^0.5 (1-p)^0.5) each.
    logistic = 1.0 / (1.0 + np.exp(-theta))
    prior = -PRIOR_DRAWS * (np.logaddexp(0.0, theta) - 0.5 * theta)
    value = float(wins @ theta - weights @ (top[:, 0] + np.log(total[:, 0])) + prior.sum())
    expected = probabilities * weights[:, None]
    gradient = wins - np.bincount(padded.ravel(), expected.ravel(), minlength=size)[:count]
    gradient = gradient + PRIOR_DRAWS * (0.5 - logistic)
    # Hessian of -log sum e^theta over a choice: p p' - diag(p), weighted. Each pair of members once
    # (wherever it lands, M + M' puts it on both sides; the diagonal is then counted twice).
    hessian = np.zeros(size * size)
    width = padded.shape[1]
    for first in range(width):
        for second in range(first, width):
            cells = padded[:, first] * size + padded[:, second]
            hessian += np.bincount(
                cells, expected[:, first] * probabilities[:, second], minlength=size * size
            )
    matrix = hessian.reshape(size, size)
    matrix = matrix + matrix.T - np.diag(np.diag(matrix))
    diagonal = np.bincount(padded.ravel(), expected.ravel(), minlength=size)
    matrix = (matrix - np.diag(diagonal))[:count, :count]
    matrix = matrix - np.diag(PRIOR_DRAWS * logistic * (1.0 - logistic))
    return value, gradient, matrix
