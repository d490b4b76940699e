"""The public events of matches in play, in the ladder's file: written in batches by the runner's live
feed (live_feed.py), read by `arena serve` from another process, deleted when the match is stored (in
the same transaction) or given up. A file without the table (never opened by a writer of this version)
has no match in play."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.ladder.store_file import StoreFile, every_method_store_errors, is_integer, is_number


@dataclass(frozen=True, slots=True)
class LiveMatch:
    """A match in play as the live table shows it: its first event (who sits where), when its events
    began and when the newest was written."""

    match_id: str
    start: dict[str, Any]
    started_at: float
    updated_at: float
    events: int


@every_method_store_errors
class LiveStore(StoreFile):
    """The store's part that keeps the public events of matches in play."""

    def add_live_events(self, match_id: str, events: Sequence[tuple[int, float, str]]) -> None:
        """Append events (sequence number, time, JSON text) of a match in play, in one transaction."""
        with self._transaction():
            self._db.executemany(
                "INSERT OR REPLACE INTO live_events VALUES (?, ?, ?, ?)",
                [(match_id, seq, at, text) for seq, at, text in events],
            )

    def delete_live_events(self, match_id: str) -> None:
        """Forget a match's events (it was stored, cancelled or failed)."""
        with self._transaction():
            self._db.execute("DELETE FROM live_events WHERE match_id = ?", (match_id,))

    def prune_live_events(self, older_than_s: float) -> int:
        """Forget the events of matches whose newest event is older than `older_than_s` seconds (their
        runner died); how many matches."""
        limit = time.time() - older_than_s
        with self._transaction():
            cursor = self._db.execute(
                "DELETE FROM live_events WHERE match_id IN"
                " (SELECT match_id FROM live_events GROUP BY match_id HAVING max(at) < ?)",
                (limit,),
            )
        return cursor.rowcount

    def live_matches(self, fresh_s: float, before: float | None = None) -> list[LiveMatch]:
        """The matches in play whose newest event is at most `fresh_s` seconds old, newest first; with
        `before`, only events written before that time count (a spectator's delay)."""
        if "live_events" not in self._tables():
            return []
        until = time.time() if before is None else before
        rows = self._db.execute(
            "SELECT match_id, min(at), max(at), count(*) FROM live_events WHERE at <= ?"
            " GROUP BY match_id HAVING max(at) >= ? ORDER BY min(at) DESC, match_id",
            (until, time.time() - fresh_s),
        ).fetchall()
        matches = []
        for match_id, started_at, updated_at, count in rows:
            first = self._db.execute(
                "SELECT event FROM live_events WHERE match_id = ? ORDER BY seq LIMIT 1", (match_id,)
            ).fetchone()
            start = self._decoded(first[0], f"a live event of match {match_id!r}")
            if not (isinstance(start, dict) and is_number(started_at) and is_number(updated_at)):
                raise self._damaged(f"the live events of match {match_id!r}")
            matches.append(LiveMatch(str(match_id), start, float(started_at), float(updated_at), int(count)))
        return matches

    def live_events(
        self, match_id: str, after: int, before: float | None = None, limit: int = 500
    ) -> list[tuple[int, dict[str, Any]]]:
        """A match's events after sequence number `after`, in order (at most `limit`); with `before`, only
        those written before that time (a spectator's delay)."""
        if "live_events" not in self._tables():
            return []
        rows = self._db.execute(
            "SELECT seq, event FROM live_events WHERE match_id = ? AND seq > ? AND at <= ? ORDER BY seq"
            " LIMIT ?",
            (match_id, after, time.time() if before is None else before, limit),
        )
        events = []
        for seq, text in rows:
            event = self._decoded(text, f"a live event of match {match_id!r}")
            if not (is_integer(seq) and isinstance(event, dict)):
                raise self._damaged(f"the live events of match {match_id!r}")
            events.append((int(seq), event))
        return events

    def is_live(self, match_id: str) -> bool:
        """Whether a match has events in the live table (it is in play, or its runner died)."""
        if "live_events" not in self._tables():
            return False
        row = self._db.execute("SELECT 1 FROM live_events WHERE match_id = ? LIMIT 1", (match_id,))
        return row.fetchone() is not None


def event_text(event: dict[str, Any]) -> str:
    """An event as the live table keeps it."""
    return json.dumps(event, separators=(",", ":"))
