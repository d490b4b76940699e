"""What the site reads to browse the ladder's history: a page of matches (of a bot, of a pool), one
match's summary, and a bot's rating history in a pool. Each read is by index and bounded by a page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.ladder.entries import StoredMatch, pool_name
from arena.ladder.store_file import StoreError, every_method_store_errors, is_integer, is_number
from arena.ladder.store_rows import MatchRows

_SUMMARY_COLUMNS = (
    "matches.id, matches.set_id, matches.rotation, matches.team_bots, matches.reason, matches.ranking,"
    " matches.bot_ranks, matches.faults, matches.decisions, matches.seconds,"
    " matches.finished_at, sets.players, sets.ruleset,"
    " sets.rated_at IS NOT NULL OR sets.void_reason IS NOT NULL"
)


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """A finished match with its pool, when it ended, and whether its set is over (rated or void): the
    set's other rotations replay the same deals, so its records stay private until then."""

    match: StoredMatch
    pool: str
    finished_at: float
    set_over: bool


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A bot's rating after one of its rated sets."""

    set_id: int
    at: float
    before: float
    after: float


@every_method_store_errors
class BrowseStore(MatchRows):
    """The store's part that the site's pages read."""

    def match_page(
        self, bot: str | None, pool: str | None, offset: int, limit: int
    ) -> tuple[list[MatchSummary], bool]:
        """Finished matches, newest first (of `bot`, in `pool`, when given), `limit` from `offset`, and
        whether there are more."""
        where: list[str] = []
        parameters: list[Any] = []
        source = "matches JOIN sets ON sets.id = matches.set_id"
        order = "matches.finished_at DESC, matches.id DESC"
        if bot is not None:
            source = (
                "match_bots JOIN matches ON matches.id = match_bots.match_id"
                " JOIN sets ON sets.id = matches.set_id"
            )
            where.append("match_bots.bot = ?")
            parameters.append(bot)
            order = "match_bots.finished_at DESC, match_bots.match_id DESC"
        if pool is not None:
            players, _, ruleset = pool.partition("p-")
            where.append("sets.players = ? AND sets.ruleset = ?")
            parameters.extend([int(players), ruleset])
        condition = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._db.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM {source} {condition} ORDER BY {order} LIMIT ? OFFSET ?",
            (*parameters, limit + 1, offset),
        ).fetchall()
        return [self._summary(row) for row in rows[:limit]], len(rows) > limit

    def match_summary(self, match_id: str) -> MatchSummary:
        """One finished match's summary."""
        row = self._db.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM matches JOIN sets ON sets.id = matches.set_id"
            " WHERE matches.id = ?",
            (match_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"no match {match_id!r}")
        return self._summary(row)

    def _summary(self, row: Sequence[Any]) -> MatchSummary:
        finished_at, players, ruleset, set_over = row[10:]
        if not (is_number(finished_at) and is_integer(players) and isinstance(ruleset, str)):
            raise self._damaged(f"match {row[0]!r}")
        return MatchSummary(
            self._stored_match(row[:10]), pool_name(players, ruleset), float(finished_at), bool(set_over)
        )

    def rating_history(self, bot: str, pool: str, limit: int) -> list[RatingPoint]:
        """The bot's last `limit` rating events in `pool`, oldest first."""
        players, _, ruleset = pool.partition("p-")
        rows = self._db.execute(
            "SELECT rating_events.set_id, sets.rated_at, before, after FROM rating_events"
            " JOIN sets ON sets.id = rating_events.set_id"
            " WHERE rating_events.bot = ? AND sets.players = ? AND sets.ruleset = ?"
            " ORDER BY sets.rated_at DESC, sets.id DESC LIMIT ?",
            (bot, int(players), ruleset, limit),
        ).fetchall()
        points = []
        for set_id, at, before, after in reversed(rows):
            if not (is_integer(set_id) and all(is_number(value) for value in (at, before, after))):
                raise self._damaged(f"the rating events of {bot!r}")
            points.append(RatingPoint(set_id, float(at), float(before), float(after)))
        return points
