"""The public events of matches in play, in the ladder's file: written in batches by the runner's live
feed (live_feed.py), read by `arena serve` from another process, deleted when the match is stored (in
the same transaction) or given up. A file without the relation (never opened by a writer of this version)
has no match in play."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, func, or_, select

from arena.ladder.store.database import replace
from arena.ladder.store.file import StorePart, every_method_store_errors, is_integer, is_number
from arena.ladder.store.relations import live_events


@dataclass(frozen=True, slots=True)
class LiveMatch:
    """A match in play as the live page shows it: its first event (who sits where), when its events
    began and when the newest was written."""

    match_id: str
    start: dict[str, Any]
    started_at: float
    updated_at: float
    events: int


@dataclass(frozen=True, slots=True)
class LiveUpdates:
    """What is new in several matches in play, read at once (`LiveStore.live_updates`)."""

    events: dict[str, list[tuple[int, dict[str, Any]]]]
    """Each match's new events (sequence number, event), in order; a match with none is absent."""
    in_play: frozenset[str]
    """The matches asked about that still have events kept (a match stored or given up has
    none)."""


@every_method_store_errors
class LiveStore(StorePart):
    """The store's part that keeps the public events of matches in play."""

    def add_live_events(self, match_id: str, events: Sequence[tuple[int, float, str]]) -> None:
        """Append events (sequence number, time, JSON text) of a match in play, in one transaction."""
        rows = [{"match_id": match_id, "seq": seq, "at": at, "event": text} for seq, at, text in events]
        with self._transaction():
            replace(self._conn, live_events, rows)

    def delete_live_events(self, match_id: str) -> None:
        """Forget a match's events (it was stored, cancelled or failed)."""
        with self._transaction():
            self._conn.execute(delete(live_events).where(live_events.c.match_id == match_id))

    def prune_live_events(self, older_than_s: float) -> int:
        """Forget the events of matches whose newest event is older than `older_than_s` seconds (their
        runner died); how many matches."""
        stale = (
            select(live_events.c.match_id)
            .group_by(live_events.c.match_id)
            .having(func.max(live_events.c.at) < time.time() - older_than_s)
        )
        with self._transaction():
            pruned = list(self._conn.scalars(stale))
            if pruned:
                self._conn.execute(delete(live_events).where(live_events.c.match_id.in_(pruned)))
        return len(pruned)

    def live_matches(self, fresh_s: float, before: float | None = None) -> list[LiveMatch]:
        """The matches in play whose newest event is at most `fresh_s` seconds old, newest first; with
        `before`, only events written before that time count (a spectator's delay)."""
        if "live_events" not in self._relations():
            return []
        until = time.time() if before is None else before
        started = func.min(live_events.c.at)
        rows = self._conn.execute(
            select(live_events.c.match_id, started, func.max(live_events.c.at), func.count())
            .where(live_events.c.at <= until)
            .group_by(live_events.c.match_id)
            .having(func.max(live_events.c.at) >= time.time() - fresh_s)
            .order_by(started.desc(), live_events.c.match_id)
        ).all()
        matches = []
        for match_id, started_at, updated_at, count in rows:
            first = self._conn.scalar(
                select(live_events.c.event)
                .where(live_events.c.match_id == match_id)
                .order_by(live_events.c.seq)
                .limit(1)
            )
            start = self._decoded(first, f"a live event of match {match_id!r}")
            if not (isinstance(start, dict) and is_number(started_at) and is_number(updated_at)):
                raise self._damaged(f"the live events of match {match_id!r}")
            matches.append(LiveMatch(str(match_id), start, float(started_at), float(updated_at), int(count)))
        return matches

    def live_events(
        self, match_id: str, after: int, before: float | None = None, limit: int = 500
    ) -> list[tuple[int, dict[str, Any]]]:
        """A match's events after sequence number `after`, in order (at most `limit`); with `before`, only
        those written before that time (a spectator's delay)."""
        if "live_events" not in self._relations():
            return []
        rows = self._conn.execute(
            select(live_events.c.seq, live_events.c.event)
            .where(
                live_events.c.match_id == match_id,
                live_events.c.seq > after,
                live_events.c.at <= (time.time() if before is None else before),
            )
            .order_by(live_events.c.seq)
            .limit(limit)
        )
        events = []
        for seq, text in rows:
            event = self._decoded(text, f"a live event of match {match_id!r}")
            if not (is_integer(seq) and isinstance(event, dict)):
                raise self._damaged(f"the live events of match {match_id!r}")
            events.append((int(seq), event))
        return events

    def live_updates(
        self, cursors: Mapping[str, int], before: float | None = None, limit: int = 500
    ) -> LiveUpdates:
        """The events of every match of `cursors` after its sequence number there (at most `limit` a
        match, in order), with `before` as in `live_events`, and which of them are still in play: one
        query for all, so that the site reads the events once a tick however many matches are watched."""
        if not cursors or "live_events" not in self._relations():
            return LiveUpdates({}, frozenset())
        wanted = or_(
            *(
                and_(live_events.c.match_id == match_id, live_events.c.seq > after)
                for match_id, after in cursors.items()
            )
        )
        number = func.row_number().over(partition_by=live_events.c.match_id, order_by=live_events.c.seq)
        newest = (
            select(live_events.c.match_id, live_events.c.seq, live_events.c.event, number.label("number"))
            .where(wanted, live_events.c.at <= (time.time() if before is None else before))
            .subquery()
        )
        rows = self._conn.execute(
            select(newest.c.match_id, newest.c.seq, newest.c.event)
            .where(newest.c.number <= limit)
            .order_by(newest.c.match_id, newest.c.seq)
        )
        events: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for match_id, seq, text in rows:
            event = self._decoded(text, f"a live event of match {match_id!r}")
            if not (is_integer(seq) and isinstance(event, dict)):
                raise self._damaged(f"the live events of match {match_id!r}")
            events.setdefault(str(match_id), []).append((int(seq), event))
        in_play = self._conn.scalars(
            select(live_events.c.match_id).where(live_events.c.match_id.in_(list(cursors))).distinct()
        )
        return LiveUpdates(events, frozenset(str(match_id) for match_id in in_play))

    def is_live(self, match_id: str) -> bool:
        """Whether a match has live events kept (it is in play, or its runner died)."""
        if "live_events" not in self._relations():
            return False
        found = self._conn.scalar(
            select(live_events.c.seq).where(live_events.c.match_id == match_id).limit(1)
        )
        return found is not None


def event_text(event: dict[str, Any]) -> str:
    """An event as `live_events` keeps it."""
    return json.dumps(event, separators=(",", ":"))
