"""The finished matches in the ladder's database: each stored in its own transaction the moment it ends,
with its game record (in `match_records`, read by the site's part: browse.py), its started bots' outputs
(outputs.py), its bots' membership rows
(read newest first by index: the probation check) and what it adds to its bots' running totals, computed
above the store (rating.match_tallies) and added here; read back as StoredMatches, whatever the length
of the history. Its faults are kept once, in `matches.faults` (rows.kept_record)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from arena.ladder.rating.values import MatchTally
from arena.ladder.store import relations
from arena.ladder.store.database import upsert
from arena.ladder.store.entries import FinishedMatch, StoredMatch
from arena.ladder.store.file import DuplicateMatchError, every_method_store_errors
from arena.ladder.store.outputs import add_outputs, output_rows
from arena.ladder.store.rows import MatchRows, kept_record, match_columns
from arena.ladder.store.sums import add_totals


@every_method_store_errors
class MatchStore(MatchRows):
    """The store's part that keeps finished matches (and their game records) and reads them back (the
    records: BrowseStore)."""

    def save_match(self, finished: FinishedMatch, tallies: Sequence[MatchTally]) -> None:
        """Store a finished match at once, in its own transaction, with what it adds to its bots' totals
        in its set's pool (`tallies`, one a bot: rating.match_tallies of the match) and its bots' outputs
        (outputs.py); its live events are deleted in the same transaction.

        Storing the same match again changes nothing: a retry after a connection lost during COMMIT
        (which may have committed) finds it stored under its id, as it was given, and counts it stored.

        :raises DuplicateMatchError: when this rotation of the set is stored already, as another match.
        """
        duplicate, match_id = finished.duplicate, finished.id
        faults = [fault.to_json() for fault in finished.faults]
        finished_at = time.time()
        outputs = output_rows(match_id, finished_at, finished.outputs)
        try:
            with self._transaction():
                self._conn.execute(
                    relations.matches.insert().values(
                        id=match_id,
                        set_id=duplicate.id,
                        rotation=finished.rotation,
                        team_bots=json.dumps(list(finished.team_bots)),
                        finished_at=finished_at,
                        reason=finished.reason,
                        ranking=json.dumps(list(finished.ranking)),
                        bot_ranks=json.dumps(finished.bot_ranks),
                        faults=json.dumps(faults),
                        decisions=finished.decisions,
                        seconds=finished.seconds,
                    )
                )
                record = json.dumps(kept_record(finished.record, faults))
                self._conn.execute(relations.match_records.insert().values(match_id=match_id, record=record))
                live = relations.live_events
                self._conn.execute(delete(live).where(live.c.match_id == match_id))
                members = [
                    {"match_id": match_id, "bot": tally.bot, "rank": tally.rank}
                    | {"own_forfeit": tally.own_forfeit, "finished_at": finished_at}
                    for tally in tallies
                ]
                if members:
                    self._conn.execute(relations.match_bots.insert(), members)
                add_outputs(self._conn, outputs)
                add_totals(self._conn, duplicate.pool, tallies)
                counted = upsert(self._conn, relations.pools).values(name=duplicate.pool, matches=1)
                self._conn.execute(
                    counted.on_conflict_do_update(
                        index_elements=["name"], set_={"matches": relations.pools.c.matches + 1}
                    )
                )
        except IntegrityError:
            if self._stored_already(finished):
                return
            raise DuplicateMatchError(
                f"set {duplicate.id} rotation {finished.rotation} is stored already (by another runner?)"
            ) from None

    def _stored_already(self, finished: FinishedMatch) -> bool:
        """Whether `finished` itself is stored: its id (random, so ours) with what it was given."""
        row = self._conn.execute(match_columns().where(relations.matches.c.id == finished.id)).first()
        if row is None:
            return False
        stored = self._stored_match(row)
        return (stored.set_id, stored.rotation, stored.team_bots, stored.reason, stored.ranking) == (
            finished.duplicate.id,
            finished.rotation,
            finished.team_bots,
            finished.reason,
            finished.ranking,
        ) and (stored.faults, stored.decisions, stored.seconds) == (
            finished.faults,
            finished.decisions,
            finished.seconds,
        )

    def finished(self, set_id: int | None = None) -> list[StoredMatch]:
        """Finished matches (of one set, or all), oldest first."""
        statement = match_columns().order_by(relations.matches.c.finished_at, relations.matches.c.id)
        if set_id is not None:
            statement = statement.where(relations.matches.c.set_id == set_id)
        return [self._stored_match(row) for row in self._conn.execute(statement)]

    def recent_matches(self, bot: str | None, count: int) -> list[StoredMatch]:
        """The last `count` finished matches (that `bot` played, when given), newest first: read by
        index, whatever the length of the history."""
        matches, match_bots = relations.matches, relations.match_bots
        if bot is None:
            statement = match_columns().order_by(matches.c.finished_at.desc(), matches.c.id.desc())
        else:
            statement = (
                match_columns()
                .select_from(match_bots.join(matches, matches.c.id == match_bots.c.match_id))
                .where(match_bots.c.bot == bot)
                .order_by(match_bots.c.finished_at.desc(), match_bots.c.match_id.desc())
            )
        return [self._stored_match(row) for row in self._conn.execute(statement.limit(count))]

    def recent_forfeits(self, bot: str, count: int) -> list[bool]:
        """Whether each of the last `count` matches of `bot` (newest first) was a forfeit of its own (a
        fault of its not played on by a substitute): the probation check, read by index."""
        match_bots = relations.match_bots
        rows = self._conn.scalars(
            select(match_bots.c.own_forfeit)
            .where(match_bots.c.bot == bot)
            .order_by(match_bots.c.finished_at.desc(), match_bots.c.match_id.desc())
            .limit(count)
        )
        return [bool(own_forfeit) for own_forfeit in rows]
