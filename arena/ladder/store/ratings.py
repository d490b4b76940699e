"""What the standings, the pairing and the fit read of the ladder's database, a row per bot or per group
of bots whatever the length of the history: each bot's running totals per pool, the pools, the sums each
pool's ratings are fitted from and the fitted ratings; and the rating event of a set, applied in one
transaction. What these hold is computed above the store (the rating package); the store adds it up.

Every format (players x ruleset) is its own rating pool (`DuplicateSet.pool`): a bot has a rating per
pool, the starting rating where it has none. A set is rated exactly once: its rating event is saved with
the check that it was neither rated nor made void before, and that no other set of its pool was rated
since its sums were read (RatingsChangedError: compute it again)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import fields
from typing import Any, Final

from sqlalchemy import select, update

from arena.ladder.rating.values import BotTotals, FittedRating, PairResult, PoolSums
from arena.ladder.store import relations
from arena.ladder.store.database import upsert
from arena.ladder.store.entries import RatingChange, pool_name
from arena.ladder.store.file import (
    RatingsChangedError,
    StorePart,
    every_method_store_errors,
    is_integer,
    is_number,
)
from arena.ladder.store.relations import bot_totals
from arena.ladder.store.sums import add_sums, save_fit

_COUNTS: Final = tuple(bot_totals.c[field.name] for field in fields(BotTotals))
"""The columns of the counts, in BotTotals' order."""


def _is_list_of(value: Any, kind: type) -> bool:
    return isinstance(value, list) and all(isinstance(item, kind) for item in value)


def _are_numbers(*values: Any) -> bool:
    return all(is_number(value) for value in values)


@every_method_store_errors
class RatingStore(StorePart):
    """The store's part that keeps the running totals, the pools' sums and ratings, and rating events."""

    def totals(self, pool: str) -> dict[str, BotTotals]:
        """Each bot's running totals in `pool` (every bot that played there, registered or not)."""
        rows = self._conn.execute(select(bot_totals.c.bot, *_COUNTS).where(bot_totals.c.pool == pool))
        return {row[0]: self._bot_totals(row[0], row[1:]) for row in rows}

    def matches_played(self, pool: str) -> dict[str, int]:
        """How many matches each bot played in `pool` (what the pairing reads)."""
        rows = self._conn.execute(
            select(bot_totals.c.bot, bot_totals.c.matches).where(bot_totals.c.pool == pool)
        )
        return {bot: int(matches) for bot, matches in rows}

    def pools(self) -> dict[str, int]:
        """Each pool with a stored match, with its number of matches, most matches first."""
        pools = relations.pools
        rows = self._conn.execute(
            select(pools.c.name, pools.c.matches).order_by(pools.c.matches.desc(), pools.c.name)
        )
        return {name: int(matches) for name, matches in rows}

    def _bot_totals(self, bot: str, row: Sequence[Any]) -> BotTotals:
        if not all(is_integer(value) for value in row):
            raise self._damaged(f"the totals of {bot!r}")
        return BotTotals(*row)

    def pool_sums(self, pool: str) -> PoolSums:
        """The sums `pool`'s ratings are fitted from (a row per pair of bots, per group of bots that met
        and per bot, whatever the length of the history), and its count of rated sets."""
        results, choice_sets, places_table = relations.pair_results, relations.choice_sets, relations.places
        pairs: dict[tuple[str, str], PairResult] = {}
        for first, second, sets, score, squares in self._conn.execute(
            select(
                results.c.first, results.c.second, results.c.sets, results.c.score, results.c.squares
            ).where(results.c.pool == pool)
        ):
            if not (_is_list_of([first, second], str) and is_integer(sets) and _are_numbers(score, squares)):
                raise self._damaged(f"the results of {first!r} and {second!r} in {pool}")
            pairs[(first, second)] = PairResult(sets, float(score), float(squares))
        choices: dict[tuple[str, ...], float] = {}
        for text, weight in self._conn.execute(
            select(choice_sets.c.bots, choice_sets.c.weight).where(choice_sets.c.pool == pool)
        ):
            group = self._decoded(text, f"a group of bots of {pool}")
            if not (_is_list_of(group, str) and len(group) > 1 and is_number(weight)):
                raise self._damaged(f"a group of bots of {pool}")
            choices[tuple(group)] = float(weight)
        places = {}
        for bot, taken in self._conn.execute(
            select(places_table.c.bot, places_table.c.taken).where(places_table.c.pool == pool)
        ):
            if not (isinstance(bot, str) and is_number(taken)):
                raise self._damaged(f"the places of {bot!r} in {pool}")
            places[bot] = float(taken)
        rated = self._conn.scalar(select(relations.pools.c.rated_sets).where(relations.pools.c.name == pool))
        return PoolSums(pairs, choices, places, 0 if rated is None else int(rated))

    def fitted_ratings(self, pool: str) -> dict[str, FittedRating]:
        """Each bot's fitted rating in `pool` (every bot rated there, registered or not)."""
        fitted = {}
        ratings = relations.ratings
        rows = self._conn.execute(
            select(ratings.c.bot, ratings.c.rating, ratings.c.margin, ratings.c.superiority).where(
                ratings.c.pool == pool
            )
        )
        for bot, rating, margin, superiority in rows:
            if not (is_number(rating) and (margin is None or is_number(margin))) or not (
                superiority is None or is_number(superiority)
            ):
                raise self._damaged(f"the rating of {bot!r}")
            width = float("inf") if margin is None else float(margin)
            fitted[bot] = FittedRating(bot, float(rating), width, superiority)
        return fitted

    def save_rating_event(
        self,
        set_id: int,
        rated_sets: int,
        added: PoolSums,
        fitted: Sequence[FittedRating],
        changes: Sequence[RatingChange],
    ) -> bool:
        """Apply a set's rating event in one transaction: what the set adds to its pool's sums (`added`,
        rating.add_set of empty sums and the set's result) added to them, the pool's ratings replaced by
        `fitted` (the fit of the sums with the set), the set's bots' `changes` kept in
        `rating_events`, the set marked rated. Returns False and changes nothing when the set is rated or
        void already (or unknown), so a set is rated exactly once, whoever tries and whenever they are
        killed.

        :raises RatingsChangedError: changing nothing, when the pool no longer has `rated_sets` rated sets
            (another runner rated a set of the pool since its sums were read: the fit is stale).
        """
        sets, pools = relations.sets, relations.pools
        with self._transaction():
            row = self._conn.execute(
                select(
                    sets.c.rated_at, sets.c.void_reason, sets.c.players, sets.c.ruleset, sets.c.event
                ).where(sets.c.id == set_id)
            ).first()
            if row is None or row[0] is not None or row[1] is not None:
                return False
            pool = pool_name(row[2], row[3], row[4])
            counted = self._conn.scalar(select(pools.c.rated_sets).where(pools.c.name == pool))
            now = 0 if counted is None else counted
            if now != rated_sets:
                raise RatingsChangedError(
                    f"{self.name}: ratings changed while set {set_id} was being rated "
                    f"({now - rated_sets} other sets of {pool} rated meanwhile)"
                )
            add_sums(self._conn, pool, added)
            save_fit(self._conn, pool, fitted)
            if changes:
                self._conn.execute(
                    relations.rating_events.insert(),
                    [
                        {"set_id": set_id, "bot": change.bot, "before": change.before, "after": change.after}
                        for change in changes
                    ],
                )
            counting = upsert(self._conn, pools).values(name=pool, matches=0, rated_sets=rated_sets + 1)
            self._conn.execute(
                counting.on_conflict_do_update(
                    index_elements=["name"], set_={"rated_sets": counting.excluded.rated_sets}
                )
            )
            self._conn.execute(update(sets).where(sets.c.id == set_id).values(rated_at=time.time()))
        return True
