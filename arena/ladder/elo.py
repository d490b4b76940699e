"""Elo ratings for the ladder: updates from duplicate sets, and a 95% interval per rating.

One duplicate set is one rating event. In a set the same seeded deals are played once for each rotation
of the teams over the seats, so every bot gets every seat of every deal once and most of the luck of
the cards cancels out.

**The update.** For every pair of bots (i, j) in the set, the score of i against j is the mean over the
set's matches of 1 when i ranked above j, 0.5 when they ranked equal and 0 when below. With two bots
that is the usual Elo update:

    R_i' = R_i + K * (S_ij - E_ij),   E_ij = 1 / (1 + 10 ** ((R_j - R_i) / 400))

With three or four bots each pair is updated as above with K / (n - 1), so that a set moves a rating
about as much as a two-bot set does, whatever the number of bots. All pairwise changes of a set are
computed from the ratings before the set and then added together. K = 32 (as the Lux AI ladder does),
the starting rating 1500.

**The interval.** A rating rests on the pairwise results it was built from: over its n pairwise
results (one per opponent per set, each a score in [0, 1]) a bot scored a mean p. The standard error of
p is the sample standard deviation of those scores divided by sqrt(n) (or sqrt(p(1-p)/n) when every
score is the same; p is kept at least 0.5/n away from 0 and 1). It is carried to
the Elo scale through the slope of the Elo curve at p, 400 / (ln 10 * p * (1 - p)): the 95% interval is
the rating plus or minus 1.96 times that. It is the "Elo +/- margin" of cutechess and fastchess, applied
to one bot's results against the field. With no results the interval is infinite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

K_FACTOR: Final = 32.0
START_RATING: Final = 1500.0


def expected_score(rating: float, opponent: float) -> float:
    """The expected score of a bot rated `rating` against one rated `opponent`."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def pair_scores(rankings: Sequence[Mapping[str, int]]) -> dict[tuple[str, str], float]:
    """Mean score of bot i against bot j over a set's matches, for every ordered pair (i, j).

    `rankings` holds one mapping per match of the set: bot name -> rank (1 is best, equal ranks tie).
    """
    if not rankings:
        raise ValueError("a set has at least one match")
    bots = sorted(rankings[0])
    scores: dict[tuple[str, str], float] = {}
    for first in bots:
        for second in bots:
            if first == second:
                continue
            total = 0.0
            for ranking in rankings:
                if ranking[first] < ranking[second]:
                    total += 1.0
                elif ranking[first] == ranking[second]:
                    total += 0.5
            scores[(first, second)] = total / len(rankings)
    return scores


def rating_changes(
    ratings: Mapping[str, float], rankings: Sequence[Mapping[str, int]], k_factor: float = K_FACTOR
) -> dict[str, float]:
    """The change of each bot's rating from one duplicate set (see the module docstring)."""
    scores = pair_scores(rankings)
    bots = sorted(rankings[0])
    k = k_factor / max(1, len(bots) - 1)
    changes = dict.fromkeys(bots, 0.0)
    for (first, second), score in scores.items():
        changes[first] += k * (score - expected_score(ratings[first], ratings[second]))
    return changes


def interval_half_width(scores: Sequence[float]) -> float:
    """Half the width of the 95% interval of a rating resting on these pairwise scores (see above)."""
    count = len(scores)
    if count == 0:
        return math.inf
    mean = sum(scores) / count
    return interval_from_moments(count, mean, sum((score - mean) ** 2 for score in scores))


def interval_from_moments(count: int, mean: float, squared_deviations: float) -> float:
    """`interval_half_width` of `count` scores given their mean and the sum of their squared deviations
    from it (as a running total keeps them); identical scores must give exactly 0.0 deviations."""
    if count == 0:
        return math.inf
    p = min(max(mean, 0.5 / count), 1.0 - 0.5 / count)
    variance = squared_deviations / (count - 1) if count > 1 else 0.0
    if variance == 0.0:
        variance = p * (1.0 - p)
    slope = 400.0 / (math.log(10.0) * p * (1.0 - p))
    return 1.96 * slope * math.sqrt(variance / count)
