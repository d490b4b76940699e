"""How many duplicate sets `arena sprt` needs, against a fixed-length test of the same power.

Run by hand: `python bench/sprt.py [--tests 1000]`. For H0 = 0 Elo against H1 = +10, +20 and +50 Elo
(alpha = beta = 0.05), it simulates SPRTs on set scores drawn directly (arena/ladder/rating/simulate.py: two
matches a set, each won with the logistic probability of the true difference; no matches played) at the
true differences 0 and elo1, and prints the mean and 90th percentile of the sets each needed, the rates of
false positives and negatives, and the length of the fixed-length test (a one-sided z-test of the mean set
score) with the same alpha and beta: the SPRT's saving.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from arena.ladder.rating import SprtSettings, fixed_length, set_scores, simulated_sprts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    for elo1 in (10.0, 20.0, 50.0):
        settings = SprtSettings(0.0, elo1)
        # The variance of a set's score midway between the hypotheses, for the fixed-length test.
        variance = float(set_scores(elo1 / 2, (200_000,), rng).var())
        fixed = fixed_length(settings, variance)
        started = time.perf_counter()
        shown = []
        for truth, wrong in ((0.0, 1), (elo1, 0)):
            outcome, lengths = simulated_sprts(settings, truth, args.tests, rng)
            shown.append(
                f"at {truth:+g}: mean {lengths.mean():,.0f} sets (90% within "
                f"{np.percentile(lengths, 90):,.0f}), wrong {np.mean(outcome == wrong):.3f}"
            )
        seconds = time.perf_counter() - started
        print(
            f"H1 {elo1:+g} Elo, {args.tests} tests each ({seconds:.1f} s): SPRT "
            + "; ".join(shown)
            + f". Fixed-length test of the same power: {fixed:,} sets"
        )


if __name__ == "__main__":
    main()
