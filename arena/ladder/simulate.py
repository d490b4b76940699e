"""Results between simulated bots of known strength, without playing: what the ratings' and the SPRT's
checks (tests, bench/ratings.py, bench/sprt.py) measure the fit and the test against.

A simulated match is drawn from the model the fit assumes (fit.py): with two bots the first finishes
above with probability 1 / (1 + 10^(-(r_1 - r_2) / 400)); with more, each place goes to one of the bots
still unplaced with probability proportional to 10^(r / 400) (drawn as the order of r plus Gumbel noise,
which is the same). A set is one match per rotation, drawn independently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from arena.ladder.entries import PairResult, PoolSums
from arena.ladder.tally import set_result

THETA_PER_ELO = math.log(10.0) / 400.0


def match_ranks(
    strengths: Mapping[str, float], bots: Sequence[str], rng: np.random.Generator
) -> dict[str, int]:
    """One simulated match of `bots`: each bot's rank (1 best), drawn from their Elo `strengths`."""
    noise = rng.gumbel(size=len(bots))
    keys = [strengths[bot] * THETA_PER_ELO + float(extra) for bot, extra in zip(bots, noise, strict=True)]
    order = sorted(range(len(bots)), key=lambda index: -keys[index])
    return {bots[index]: place + 1 for place, index in enumerate(order)}


def set_rankings(
    strengths: Mapping[str, float], bots: Sequence[str], rng: np.random.Generator
) -> list[dict[str, int]]:
    """One simulated duplicate set of `bots`: a match per rotation."""
    return [match_ranks(strengths, bots, rng) for _rotation in bots]


def simulated_sums(
    strengths: Mapping[str, float], sets: int, teams: int, rng: np.random.Generator
) -> PoolSums:
    """A pool's sums after `sets` simulated sets of `teams` bots each, drawn at random among `strengths`
    (as tally.add_set adds them, without copying the sums at every set)."""
    names = sorted(strengths)
    pairs: dict[tuple[str, str], list[float]] = {}
    choices: dict[tuple[str, ...], float] = {}
    places: dict[str, float] = {}
    for _set in range(sets):
        bots = [names[int(index)] for index in rng.choice(len(names), size=teams, replace=False)]
        result = set_result(set_rankings(strengths, bots, rng))
        for pair, score in result.scores.items():
            line = pairs.setdefault(pair, [0.0, 0.0, 0.0])
            line[0] += 1
            line[1] += score
            line[2] += score * score
        for group, weight in result.choices.items():
            choices[group] = choices.get(group, 0.0) + weight
        for bot, taken in result.places.items():
            places[bot] = places.get(bot, 0.0) + taken
    summed = {pair: PairResult(int(count), score, squares) for pair, (count, score, squares) in pairs.items()}
    return PoolSums(summed, choices, places, sets)
