"""What the site reads to browse the ladder's history: a page of matches (of a bot, of a pool), one
match's summary and game record, a bot's rating history in a pool; and every game record, streamed (the
export). Each read is by index and bounded by a page."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import ColumnElement, Select, func, not_, or_, select, tuple_

from arena.ladder.store import relations
from arena.ladder.store.entries import StoredMatch, pool_name
from arena.ladder.store.file import (
    DATABASE_ERRORS,
    StoreError,
    every_method_store_errors,
    is_integer,
    is_number,
)
from arena.ladder.store.rows import MatchRows, given_record, match_columns


def set_is_over() -> ColumnElement[bool]:
    """Whether a set (of a query that joins `sets`) is over: rated or void. Until then its matches'
    records and faults' details are not public: its other rotations replay the same deals."""
    sets = relations.sets
    return or_(sets.c.rated_at.is_not(None), sets.c.void_reason.is_not(None))


def _summaries() -> Select[Any]:
    """A stored match's columns (`MatchRows._stored_match`), when it ended, its pool's players and
    ruleset, and whether its set is over."""
    sets, matches = relations.sets, relations.matches
    return match_columns().add_columns(matches.c.finished_at, sets.c.players, sets.c.ruleset, set_is_over())


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """A finished match with its pool, when it ended, and whether its set is over (rated or void): the
    set's other rotations replay the same deals, so its records stay private until then."""

    match: StoredMatch
    pool: str
    finished_at: float
    set_over: bool

    @property
    def held_back(self) -> str | None:
        """Why the match's record is not given now (its set is not over), or None."""
        if self.set_over:
            return None
        return (
            f"match {self.match.id} is held back until set {self.match.set_id} is over: "
            "its other rotations replay the same deals"
        )

    def to_json(self) -> dict[str, Any]:
        """The match as everything public shows it (the site, its API, `arena ladder matches`): its
        faults' details only once its set is over (an illegal move's message names the seat's legal
        cards); before that, each fault's cause, seat and deal, its detail None."""
        data = self.match.to_json()
        if not self.set_over:
            for fault in data["faults"]:
                fault["detail"] = None
        return {**data, "pool": self.pool, "finished_at": self.finished_at, "set_over": self.set_over}


RECORDS_PAGE: Final = 32
"""Game records read at a time when the whole history is streamed (`game_records`): a match's record is
tens of KB, so a page stays near a MB, and a query by index per 32 records costs nothing next to them."""


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
        sets, matches, match_bots = relations.sets, relations.matches, relations.match_bots
        joined = matches.join(sets, sets.c.id == matches.c.set_id)
        statement = _summaries()
        if bot is None:
            statement = statement.select_from(joined).order_by(
                matches.c.finished_at.desc(), matches.c.id.desc()
            )
        else:
            statement = (
                statement.select_from(match_bots.join(joined, matches.c.id == match_bots.c.match_id))
                .where(match_bots.c.bot == bot)
                .order_by(match_bots.c.finished_at.desc(), match_bots.c.match_id.desc())
            )
        if pool is not None:
            players, _, ruleset = pool.partition("p-")
            statement = statement.where(sets.c.players == int(players), sets.c.ruleset == ruleset)
        rows = self._conn.execute(statement.limit(limit + 1).offset(offset)).all()
        return [self._summary(row) for row in rows[:limit]], len(rows) > limit

    def match_summary(self, match_id: str) -> MatchSummary:
        """One finished match's summary."""
        sets, matches = relations.sets, relations.matches
        row = self._conn.execute(
            _summaries()
            .select_from(matches.join(sets, sets.c.id == matches.c.set_id))
            .where(matches.c.id == match_id)
        ).first()
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

    def held_back_matches(self) -> int:
        """How many stored matches belong to sets that are not over (their records are held back)."""
        sets, matches = relations.sets, relations.matches
        count = self._conn.scalar(
            select(func.count())
            .select_from(matches.join(sets, sets.c.id == matches.c.set_id))
            .where(not_(set_is_over()))
        )
        return int(count or 0)

    def rating_history(self, bot: str, pool: str, limit: int) -> list[RatingPoint]:
        """The bot's last `limit` rating events in `pool`, oldest first."""
        players, _, ruleset = pool.partition("p-")
        sets, events = relations.sets, relations.rating_events
        rows = self._conn.execute(
            select(events.c.set_id, sets.c.rated_at, events.c.before, events.c.after)
            .select_from(events.join(sets, sets.c.id == events.c.set_id))
            .where(events.c.bot == bot, sets.c.players == int(players), sets.c.ruleset == ruleset)
            .order_by(sets.c.rated_at.desc(), sets.c.id.desc())
            .limit(limit)
        ).all()
        points = []
        for set_id, at, before, after in reversed(rows):
            if not (is_integer(set_id) and all(is_number(value) for value in (at, before, after))):
                raise self._damaged(f"the rating events of {bot!r}")
            points.append(RatingPoint(set_id, float(at), float(before), float(after)))
        return points

    def match_record(self, match_id: str) -> dict[str, Any]:
        """The game record of a stored match."""
        matches, records = relations.matches, relations.match_records
        row = self._conn.execute(
            select(records.c.record, matches.c.faults)
            .select_from(records.join(matches, matches.c.id == records.c.match_id))
            .where(records.c.match_id == match_id)
        ).first()
        if row is None:
            raise StoreError(f"no match {match_id!r}")
        return self._record(match_id, *row)

    def _record(self, match_id: str, kept: Any, faults: Any) -> dict[str, Any]:
        what = f"the record of match {match_id!r}"
        record = given_record(
            self._decoded(kept, what), self._decoded(faults, f"the faults of match {match_id!r}")
        )
        if not isinstance(record, dict):
            raise self._damaged(what)
        return record

    def game_records(self, sets_over_only: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every stored match's id and game record (with `sets_over_only`, of the matches whose set is
        over: what may be published), oldest first, read in pages of `RECORDS_PAGE` by the index on
        (finished_at, id): the whole history never sits in memory, and no cursor stays open between pages
        (a server-side cursor would hold a transaction). A damaged record, or a database error while
        reading, is a StoreError (raised by the iteration)."""
        return self._records_from(None, sets_over_only)

    def _records_from(
        self, after: tuple[float, str] | None, sets_over_only: bool
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        # A generator runs after the method that made it returned: its database errors are turned into
        # StoreErrors here, not by the wrapper of every public method.
        matches, records, sets = relations.matches, relations.match_records, relations.sets
        joined = matches.join(records, records.c.match_id == matches.c.id)
        if sets_over_only:
            joined = joined.join(sets, sets.c.id == matches.c.set_id)
        statement = (
            select(matches.c.finished_at, matches.c.id, records.c.record, matches.c.faults)
            .select_from(joined)
            .order_by(matches.c.finished_at, matches.c.id)
            .limit(RECORDS_PAGE)
        )
        if sets_over_only:
            statement = statement.where(set_is_over())
        while True:
            page = statement
            if after is not None:
                page = statement.where(tuple_(matches.c.finished_at, matches.c.id) > tuple_(*after))
            try:
                rows = self._conn.execute(page).all()
            except DATABASE_ERRORS as error:
                raise self._store_error(error) from None
            for _finished_at, match_id, kept, faults in rows:
                yield match_id, self._record(match_id, kept, faults)
            if len(rows) < RECORDS_PAGE:
                return
            after = (rows[-1][0], rows[-1][1])
