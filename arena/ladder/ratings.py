"""A finished duplicate set's rating event: the set added to its pool's sums, and the pool refitted.

The ratings are a maximum-likelihood fit over every rated set of the pool (fit.py), computed from the
pool's sums (per pair of bots, per finishing order), never from the history. Here the set's result is
computed from its matches, added to the sums read from the store, and the pool refitted; the store saves
it all in one transaction that also marks the set rated, refusing a set rated or made void meanwhile.
So a set is rated exactly once: a ladder killed before that transaction commits (even by SIGKILL)
leaves the set unrated for the next run to rate, one killed after it finds the set rated.

The sums are read before the transaction: another runner on the same file may rate another set of the
same pool in between. The store then refuses the event (RatingsChangedError: the pool's count of rated
sets moved) and it is computed again from the new sums, so no fit misses a set. Ratings are per pool (a
format: players x ruleset): a set moves the ratings of its own pool only.
"""

from __future__ import annotations

from typing import Final

from arena.ladder.rating import START_RATING, add_set, fit_pool, set_result
from arena.ladder.store import DuplicateSet, LadderStore, RatingChange, RatingsChangedError

ATTEMPTS: Final = 5
"""How many times a set's rating event is computed while other runners keep rating sets of its pool
first; then the RatingsChangedError (a StoreError) stops the run."""


def rate_set(store: LadderStore, duplicate: DuplicateSet) -> list[RatingChange] | None:
    """Rate a finished set once: the ratings of its bots before and after the refit, or None when the set
    is not finished yet, is void, or was rated already (by another runner, perhaps)."""
    matches = store.matches(duplicate.id)
    if len(matches) < duplicate.rotations:
        return None
    result = set_result([match.bot_ranks for match in matches])
    bots = sorted(matches[0].bot_ranks)
    attempt = 1
    while True:
        sums = store.pool_sums(duplicate.pool)
        before = store.fitted_ratings(duplicate.pool)
        start = {bot: line.rating for bot, line in before.items()}
        fitted = fit_pool(add_set(sums, result), start).fitted()
        after = {line.bot: line.rating for line in fitted}
        event = [
            RatingChange(bot, before[bot].rating if bot in before else START_RATING, after[bot])
            for bot in bots
        ]
        try:
            saved = store.save_rating_event(duplicate.id, sums.rated_sets, result, fitted, event)
        except RatingsChangedError:
            if attempt == ATTEMPTS:
                raise
            attempt += 1
        else:
            return event if saved else None
