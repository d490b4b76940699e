"""What the ladder computes for the store with the rating package: what a finished match adds to its
bots' running totals, and a finished duplicate set's rating event (the set added to its pool's sums, and
the pool refitted). The store adds up and keeps what it is given, in the transactions that keep it whole.

The ratings are a maximum-likelihood fit over every rated set of the pool (fit.py), computed from the
pool's sums (per pair of bots, per finishing order), never from the history. Here the set's result is
computed from its matches, added to the sums read from the store, and the pool refitted; the store adds
the set's part to the sums and saves the fit in one transaction that also marks the set rated, refusing
a set rated or made void meanwhile. So a set is rated exactly once: a ladder killed before that
transaction commits (even by SIGKILL) leaves the set unrated for the next run to rate, one killed after
it finds the set rated.

The sums are read before the transaction: another runner on the same file may rate another set of the
same pool in between. The store then refuses the event (RatingsChangedError: the pool's count of rated
sets moved) and it is computed again from the new sums, so no fit misses a set. Ratings are per pool (a
format: players x ruleset): a set moves the ratings of its own pool only.
"""

from __future__ import annotations

from typing import Final

from arena.ladder.rating import START_RATING, PoolSums, add_set, fit_pool, match_tallies, set_result
from arena.ladder.store import (
    DuplicateSet,
    FinishedMatch,
    LadderStore,
    MatchStore,
    RatingChange,
    RatingsChangedError,
)

ATTEMPTS: Final = 5
"""How many times a set's rating event is computed while other runners keep rating sets of its pool
first; then the RatingsChangedError (a StoreError) stops the run."""


def store_match(matches: MatchStore, finished: FinishedMatch) -> None:
    """Store a finished match, with what it adds to each of its bots' running totals (tally.py counts it).

    :raises DuplicateMatchError: when this rotation of the set is stored already.
    """
    matches.save_match(finished, match_tallies(finished.team_bots, finished.bot_ranks, finished.faults))


def rate_set(store: LadderStore, duplicate: DuplicateSet) -> list[RatingChange] | None:
    """Rate a finished set once: the ratings of its bots before and after the refit, or None when the set
    is not finished yet, is void, or was rated already (by another runner, perhaps)."""
    matches = store.matches.finished(duplicate.id)
    if len(matches) < duplicate.rotations:
        return None
    result = set_result([match.bot_ranks for match in matches])
    added = add_set(PoolSums(), result)
    bots = sorted(matches[0].bot_ranks)
    attempt = 1
    while True:
        sums = store.ratings.pool_sums(duplicate.pool)
        before = store.ratings.fitted_ratings(duplicate.pool)
        start = {bot: line.rating for bot, line in before.items()}
        fitted = fit_pool(add_set(sums, result), start).fitted()
        after = {line.bot: line.rating for line in fitted}
        event = [
            RatingChange(bot, before[bot].rating if bot in before else START_RATING, after[bot])
            for bot in bots
        ]
        try:
            saved = store.ratings.save_rating_event(duplicate.id, sums.rated_sets, added, fitted, event)
        except RatingsChangedError:
            if attempt == ATTEMPTS:
                raise
            attempt += 1
        else:
            return event if saved else None
