"""A match's public events published for spectators while it is played: the runner's `on_event` hook
writes them to the store's live events, which `arena serve` reads from another process.

Batched so that watching costs the match little: an event waits in memory, and a timer writes what has
gathered `interval_s` after the first event of a batch, in one transaction (the match's first event is
written at once, so the match is listed as soon as it starts). A match shorter than that costs one write
or two. The rows are deleted when the match is stored (in the same transaction; `close` then drops
what is still waiting) or given up (`discard`). A failure to write is the host's, not the match's: it is
logged once and the feed stops; the match goes on. But a store server that went away (outages.py)
only delays the feed: its events wait in memory (a match's worth at most) and are written, in order and
with nothing missing, once the server answers; while the run knows the server is away, the feed does
not try it (the run's own calls do).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

import structlog

from arena.ladder.outages import StoreWait
from arena.ladder.store import LiveStore, StoreError, StoreUnreachableError, event_text

log = structlog.get_logger("ladder")

FLUSH_INTERVAL_S: Final = 0.25
"""The longest an event waits in memory before it is written."""
AWAY_RETRY_S: Final = 1.0
"""How often a feed looks again whether a store server that went away is back."""


class LiveFeed:
    """The live events of one match, written to the store's `live` part in batches."""

    def __init__(
        self,
        live: LiveStore,
        match_id: str,
        interval_s: float = FLUSH_INTERVAL_S,
        store_wait: StoreWait | None = None,
    ) -> None:
        """`store_wait`: the run's waits for its store, which say whether the server is away (None: never
        taken as away, and an unreachable server stops the feed as any failure does)."""
        self.live = live
        self.match_id = match_id
        self.interval_s = interval_s
        self.store_wait = store_wait
        self.pending: list[tuple[int, float, str]] = []
        self.seq = 0
        self.timer: asyncio.TimerHandle | None = None
        self.closed = False

    def publish(self, event: dict[str, Any]) -> None:
        """Keep an event; the first is written at once, the others within `interval_s`."""
        if self.closed:
            return
        self.pending.append((self.seq, time.time(), event_text(event)))
        self.seq += 1
        if self.seq == 1:
            self.flush()
        else:
            self._flush_later(self.interval_s)

    def flush(self) -> None:
        """Write the events kept so far."""
        self.timer = None
        if self.closed or not self.pending:
            return
        waiting = self.store_wait
        if waiting is not None and waiting.away and not waiting.given_up:
            self._flush_later(AWAY_RETRY_S)
            return
        try:
            self.live.add_live_events(self.match_id, self.pending)
        except StoreUnreachableError as error:
            if waiting is not None and not waiting.given_up:
                self._flush_later(AWAY_RETRY_S)  # kept, in order, for when the server is back
                return
            self.closed = True
            log.warning("live_feed_failed", match_id=self.match_id, reason=str(error))
        except StoreError as error:
            self.closed = True
            log.warning("live_feed_failed", match_id=self.match_id, reason=str(error))
        self.pending.clear()

    def _flush_later(self, delay_s: float) -> None:
        if self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(delay_s, self.flush)

    def close(self) -> None:
        """Stop: the match was stored (its rows went with that transaction); nothing more is written."""
        self.closed = True
        self.pending.clear()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def discard(self) -> None:
        """Stop and forget the match's events: it was not stored (cancelled, failed, or stored by
        another runner)."""
        self.close()
        try:
            self.live.delete_live_events(self.match_id)
        except StoreError as error:
            log.warning("live_feed_not_cleared", match_id=self.match_id, reason=str(error))
