"""A finished duplicate set's rating event: which bots it moves and by how much.

The event is computed here with elo.py from the matches of the set and the ratings before it, and the
store saves it in one transaction that also marks the set rated, refusing a set rated or made void
meanwhile. So a set is rated exactly once: a ladder killed before that transaction commits (even by
SIGKILL) leaves the set unrated for the next run to rate, one killed after it finds the set rated.

The ratings are read before the transaction: another runner on the same file may rate another set of
the same bots in between. The store then refuses the event (RatingsChangedError) and it is computed
again from the new ratings, so no set is rated from stale ratings and no other set's change is lost.
A bot removed since the set was played counts with its last rating, and one never rated with the
starting rating. Ratings are per pool (a format: players x ruleset): a set moves the ratings of its own
pool only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from arena.ladder.elo import START_RATING, rating_changes
from arena.ladder.entries import DuplicateSet, RatingChange
from arena.ladder.store import LadderStore
from arena.ladder.store_file import RatingsChangedError

ATTEMPTS: Final = 5
"""How many times a set's rating event is computed while other runners keep changing the ratings of its
bots first; then the RatingsChangedError (a StoreError) stops the run."""


def rating_event(ratings: Mapping[str, float], rankings: Sequence[Mapping[str, int]]) -> list[RatingChange]:
    """The rating event of a set whose matches ranked its bots as `rankings` (one mapping per match: bot
    name -> rank, 1 best), from the `ratings` before it (a bot without one starts at START_RATING)."""
    before = {bot: ratings.get(bot, START_RATING) for bot in sorted(rankings[0])}
    changes = rating_changes(before, rankings)
    return [RatingChange(bot, before[bot], before[bot] + changes[bot]) for bot in before]


def rate_set(store: LadderStore, duplicate: DuplicateSet) -> list[RatingChange] | None:
    """Rate a finished set once: its rating event, or None when the set is not finished yet, is void,
    or was rated already (by another runner, perhaps)."""
    matches = store.matches(duplicate.id)
    if len(matches) < duplicate.rotations:
        return None
    rankings = [match.bot_ranks for match in matches]
    attempt = 1
    while True:
        event = rating_event(store.ratings(rankings[0], duplicate.pool), rankings)
        try:
            saved = store.save_rating_event(duplicate.id, event)
        except RatingsChangedError:
            if attempt == ATTEMPTS:
                raise
            attempt += 1
        else:
            return event if saved else None
