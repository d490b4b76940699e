"""A match's public events published for spectators while it is played: the runner's `on_event` hook
writes them to the store's live table, which `arena serve` reads from another process.

Batched so that watching costs the match little: events wait in memory and are written in one
transaction when a deal ends, when the match starts or ends, or when `interval_s` has passed
since the last write (a spectator sees a move at most that much late, plus the site's own delay). The
rows are deleted when the match is stored (in the same transaction) or given up (`discard`). A failure
to write is the host's, not the match's: it is logged once and the feed stops; the match goes on.
"""

from __future__ import annotations

import time
from typing import Any, Final

import structlog

from arena.ladder.store import LadderStore
from arena.ladder.store_file import StoreError
from arena.ladder.store_live import event_text

log = structlog.get_logger("ladder")

FLUSH_INTERVAL_S: Final = 0.25
"""The longest an event waits in memory before it is written."""

_FLUSH_NOW: Final = frozenset({"match_start", "deal_end", "match_end"})


class LiveFeed:
    """The live events of one match, written to `store` in batches."""

    def __init__(self, store: LadderStore, match_id: str, interval_s: float = FLUSH_INTERVAL_S) -> None:
        self.store = store
        self.match_id = match_id
        self.interval_s = interval_s
        self.pending: list[tuple[int, float, str]] = []
        self.seq = 0
        self.flushed_at = time.monotonic()
        self.broken = False

    def publish(self, event: dict[str, Any]) -> None:
        """Keep an event; write the batch when it is due."""
        if self.broken:
            return
        self.pending.append((self.seq, time.time(), event_text(event)))
        self.seq += 1
        if event["type"] in _FLUSH_NOW or time.monotonic() - self.flushed_at >= self.interval_s:
            self.flush()

    def flush(self) -> None:
        """Write the events kept so far."""
        if self.broken or not self.pending:
            return
        try:
            self.store.add_live_events(self.match_id, self.pending)
        except StoreError as error:
            self.broken = True
            log.warning("live_feed_failed", match_id=self.match_id, reason=str(error))
        self.pending.clear()
        self.flushed_at = time.monotonic()

    def discard(self) -> None:
        """Forget the match's events (it was not stored: cancelled, failed, or stored by another
        runner); a stored match's are gone already."""
        self.pending.clear()
        self.broken = True
        try:
            self.store.delete_live_events(self.match_id)
        except StoreError as error:
            log.warning("live_feed_not_cleared", match_id=self.match_id, reason=str(error))
