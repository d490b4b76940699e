"""How long the ratings' maximum-likelihood fit takes: 100 bots and 100,000 sets (target: under 2 s).

Run by hand: `python bench/ratings.py [--bots 100] [--sets 100000] [--rounds 3]`. For two-team sets
(Bradley-Terry on the pairwise sums) and four-team sets (Plackett-Luce on the finishing orders of their
four matches each, read a place at a time), it simulates the sets between bots of known strength
(arena/ladder/rating/simulate.py; not timed), then times `fit_pool` on the sums as the store keeps them: what
the ladder does after every rated set. The fit's cost depends on the number of pairs (at most bots^2 / 2)
and of groups of bots that met (at most bots^4 / 24 with four teams, fewer when the pairing brings close
ratings together), not on the number of sets. It prints the best time of the rounds and how far the
fitted ratings are from the truth.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from arena.ladder.rating import START_RATING, fit_pool, simulated_sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--sets", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    truth = {f"bot{index:03}": float(value) for index, value in enumerate(rng.normal(0.0, 200.0, args.bots))}
    mean = sum(truth.values()) / len(truth)
    for teams, model in ((2, "Bradley-Terry"), (4, "Plackett-Luce")):
        started = time.perf_counter()
        sums = simulated_sums(truth, args.sets, teams, rng)
        simulated = time.perf_counter() - started
        best = warm = float("inf")
        for _round in range(args.rounds):
            started = time.perf_counter()
            fit = fit_pool(sums)
            best = min(best, time.perf_counter() - started)
            # As the ladder refits after a set: from the last fit's ratings.
            started = time.perf_counter()
            fit_pool(sums, dict(zip(fit.bots, fit.ratings, strict=True)))
            warm = min(warm, time.perf_counter() - started)
        errors = [
            abs(rating - START_RATING - (truth[bot] - mean))
            for bot, rating in zip(fit.bots, fit.ratings, strict=True)
        ]
        print(
            f"{model} ({teams} teams): {args.bots} bots, {args.sets} sets ({len(sums.pairs)} pairs, "
            f"{len(sums.choices)} groups of unplaced bots; simulated in {simulated:.1f} s): fit in "
            f"{best:.3f} s from 1500, {warm:.3f} s from the last fit; mean error {np.mean(errors):.1f} "
            f"Elo, mean 95% margin {np.mean(fit.margins):.1f}"
        )


if __name__ == "__main__":
    main()
