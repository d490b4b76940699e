"""Writing the running sums kept beside the history, so that no read walks through it: each bot's totals
per pool (what a match adds, as the rating package's tally counts it), each pool's sums (what a rated set
adds) and the ratings fitted from them. The match, the rating event and the upgrades of older files write
them through here; the store adds what it is given and computes nothing of the rating math."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from sqlalchemy import Connection, delete

from arena.ladder.rating.values import FittedRating, MatchTally, PoolSums
from arena.ladder.store.database import accumulate, replace
from arena.ladder.store.relations import bot_totals, choice_sets, pair_results, places, ratings


def add_totals(connection: Connection, pool: str, tallies: Sequence[MatchTally]) -> None:
    """Add what a match adds to each of its bots' totals in `pool` (`tallies`, one a bot)."""
    accumulate(
        connection,
        bot_totals,
        [{"bot": tally.bot, "pool": pool, **asdict(tally.totals)} for tally in tallies],
    )


def _rows(
    pool: str, sums: PoolSums
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of `sums` in `pair_results`, `choice_sets` and `places`."""
    pairs = [
        {"pool": pool, "first": first, "second": second}
        | {"sets": line.sets, "score": line.score, "squares": line.squares}
        for (first, second), line in sums.pairs.items()
    ]
    groups = [
        {"pool": pool, "bots": json.dumps(group), "weight": weight} for group, weight in sums.choices.items()
    ]
    taken = [{"pool": pool, "bot": bot, "taken": taken} for bot, taken in sums.places.items()]
    return pairs, groups, taken


def add_sums(connection: Connection, pool: str, added: PoolSums) -> None:
    """Add `added` (what a rated set adds: tally.add_set of empty sums) to `pool`'s sums, row by row."""
    for relation, rows in zip((pair_results, choice_sets, places), _rows(pool, added), strict=True):
        accumulate(connection, relation, rows)


def replace_sums(connection: Connection, pool: str, sums: PoolSums) -> None:
    """Write the rows of `sums` into `pool`'s sums, each row given replaced."""
    for relation, rows in zip((pair_results, choice_sets, places), _rows(pool, sums), strict=True):
        replace(connection, relation, rows)


def save_fit(connection: Connection, pool: str, fitted: Sequence[FittedRating]) -> None:
    """Replace the ratings of `pool` with `fitted`."""
    connection.execute(delete(ratings).where(ratings.c.pool == pool))
    if fitted:
        connection.execute(
            ratings.insert(),
            [
                {"bot": line.bot, "pool": pool, "rating": line.rating}
                | {"margin": line.margin, "superiority": line.superiority}
                for line in fitted
            ],
        )
