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
import numpy.typing as npt

from arena.ladder.rating.sprt import SprtSettings, expected_score, log_likelihood_ratios
from arena.ladder.rating.tally import set_result
from arena.ladder.rating.values import PairResult, PoolSums

THETA_PER_ELO = math.log(10.0) / 400.0
_Floats = npt.NDArray[np.float64]


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


def set_scores(elo: float, shape: tuple[int, ...], rng: np.random.Generator, rotations: int = 2) -> _Floats:
    """Simulated duplicate-set scores of a bot `elo` stronger than its opponent: the mean of one win
    (probability 1 / (1 + 10^(-elo / 400))) or loss per rotation, the rotations drawn independently."""
    wins = rng.binomial(rotations, expected_score(elo), size=shape)
    return wins / rotations


def simulated_sprts(
    settings: SprtSettings, elo: float, tests: int, rng: np.random.Generator, max_sets: int = 1_000_000
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64]]:
    """Run `tests` SPRTs at once on simulated set scores of a true difference `elo`: for each, 1 when it
    accepted H1, 0 for H0, -1 when it reached `max_sets` undecided; and how many sets it took."""
    outcome = np.full(tests, -1, dtype=np.int8)
    length = np.full(tests, max_sets, dtype=np.int64)
    sums = np.zeros((3, tests))
    running = np.arange(tests)
    played = 0
    chunk = 64
    while running.size and played < max_sets:
        scores = set_scores(elo, (running.size, chunk), rng)
        sets = sums[0, running, None] + np.arange(1, chunk + 1)
        score = sums[1, running, None] + np.cumsum(scores, axis=1)
        squares = sums[2, running, None] + np.cumsum(scores * scores, axis=1)
        ratios = log_likelihood_ratios(sets, score, squares, settings)
        crossed = (ratios >= settings.upper) | (ratios <= settings.lower)
        crossed[:, max(0, max_sets - played) :] = False
        done = crossed.any(axis=1)
        first = crossed.argmax(axis=1)
        finished = running[done]
        outcome[finished] = np.where(ratios[done, first[done]] >= settings.upper, 1, 0)
        length[finished] = played + first[done] + 1
        sums[:, running] = np.stack((sets[:, -1], score[:, -1], squares[:, -1]))
        running = running[~done]
        played += chunk
        chunk = min(chunk * 2, 4096)
    return outcome, length
