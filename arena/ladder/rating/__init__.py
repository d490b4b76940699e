"""The rating math, pure: no I/O and nothing of the host. The values it works on (`values`); what a
match adds to its bots' totals and a rated set to its pool's sums (`tally`); ratings by maximum
likelihood (`fit`); the sequential probability ratio test of `arena sprt` (`sprt`); results of simulated
bots, for checking the fit and the test (`simulate`)."""

from __future__ import annotations

from arena.ladder.rating.fit import Fit, fit_pool
from arena.ladder.rating.simulate import set_scores, simulated_sprts, simulated_sums
from arena.ladder.rating.sprt import (
    SetScores,
    SprtSettings,
    decision,
    elo_estimate,
    fixed_length,
    log_likelihood_ratio,
)
from arena.ladder.rating.tally import (
    CRASH_CAUSES,
    ILLEGAL_MOVE_CAUSES,
    TIMEOUT_CAUSES,
    add_match,
    add_set,
    match_tallies,
    set_result,
)
from arena.ladder.rating.values import (
    START_RATING,
    BotTotals,
    FinishingOrder,
    FittedRating,
    MatchTally,
    PairResult,
    PoolSums,
    SetResult,
)

__all__ = [
    "CRASH_CAUSES",
    "ILLEGAL_MOVE_CAUSES",
    "START_RATING",
    "TIMEOUT_CAUSES",
    "BotTotals",
    "FinishingOrder",
    "Fit",
    "FittedRating",
    "MatchTally",
    "PairResult",
    "PoolSums",
    "SetResult",
    "SetScores",
    "SprtSettings",
    "add_match",
    "add_set",
    "decision",
    "elo_estimate",
    "fit_pool",
    "fixed_length",
    "log_likelihood_ratio",
    "match_tallies",
    "set_result",
    "set_scores",
    "simulated_sprts",
    "simulated_sums",
]
