"""Riding out a store that went away: a PostgreSQL server restarted, or the network to it cut.

A call that finds the server unreachable (StoreUnreachableError) is tried again with backoff, each attempt
logged in one line (`store_unreachable`: the attempt, the seconds until the next, the reason), for at
most `bound_s` from when the outage was first met; past that the error is raised as it would have been
at once (a bound of 0 raises it at once). One outage is one wait, however many callers meet it: while
the store is away one caller at a time tries it (the others queue behind it), so a run of K matches
logs one line an attempt, not K. Every other StoreError (a refused request, a damaged row, a locked
SQLite file, which SQLite itself waits for) is raised at once.

A retried call must be safe to run again: it may have been done in full before its connection was lost
(a COMMIT whose answer never came). Reads are; the store's writes that the runner retries are made so
(a match is stored once by its id, a lease claimed again by its owner is its own); `again` runs a
different call after the first failure, for a write that must first look whether it was done (a new
set, found again by its seed).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import structlog

from arena.ladder.store import StoreUnreachableError

log = structlog.get_logger("store")

T = TypeVar("T")

DEFAULT_STORE_WAIT_S: Final = 300.0
"""How long a run or the site waits for a store that went away before it gives up (`--store-wait`):
long enough for a server's restart or a failover, short enough that a host finds a dead server."""
FIRST_RETRY_S: Final = 0.5
"""The first wait before the store is tried again; doubled at each attempt, up to LONGEST_RETRY_S."""
LONGEST_RETRY_S: Final = 10.0


class StoreWait:
    """The waits of one program (a run, the site) for its store: callers share the outage and the bound."""

    def __init__(
        self, bound_s: float, first_s: float = FIRST_RETRY_S, longest_s: float = LONGEST_RETRY_S
    ) -> None:
        self.bound_s = bound_s
        self.first_s = first_s
        self.longest_s = longest_s
        self._lock = asyncio.Lock()
        self._away_since: float | None = None
        """When (monotonic) the store was found away; None while it answers."""
        self._attempts = 0
        self._error: StoreUnreachableError | None = None
        self.given_up = False
        """The last outage outlasted the bound: a call that fails now raises at once, until one succeeds."""
        self.outages = 0
        """How many outages ended with the store answering again."""
        self.on_back: list[Callable[[], None]] = []
        """Called when the store answers again after an outage (the run renews its leases at once)."""

    @property
    def away(self) -> bool:
        """Whether the store was found unreachable and has not answered since."""
        return self._away_since is not None or self.given_up

    async def call(self, function: Callable[[], T], again: Callable[[], T] | None = None) -> T:
        """`function()` once the store answers; `again()` instead for the attempts after the first failure
        (default: `function` again).

        :raises StoreUnreachableError: the store stayed away past the bound.
        """

        async def first() -> T:
            return function()

        async def later() -> T:
            return (again or function)()

        return await self.run(first, later)

    async def run(
        self, function: Callable[[], Awaitable[T]], again: Callable[[], Awaitable[T]] | None = None
    ) -> T:
        """`call` for a call that is awaited (the site reads off the event loop)."""
        attempt = function
        if self._away_since is None:
            try:
                return await self._tried(attempt)
            except StoreUnreachableError as error:
                self._found_away(error)
            attempt = again or function
        async with self._lock:
            while True:
                if self._away_since is not None:
                    await self._pause()
                try:
                    return await self._tried(attempt)
                except StoreUnreachableError as error:
                    self._found_away(error)
                attempt = again or function

    async def _tried(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """`attempt()`; whatever it gives but an unreachable server, the store answered (a refusal, such
        as a rotation stored already, is an answer too)."""
        try:
            result = await attempt()
        except StoreUnreachableError:
            raise
        except Exception:
            self._answered()
            raise
        self._answered()
        return result

    def _found_away(self, error: StoreUnreachableError) -> None:
        if self.given_up:
            raise error
        if self._away_since is None:
            self._away_since = time.monotonic()
            self._attempts = 0
        self._attempts += 1
        self._error = error

    async def _pause(self) -> None:
        """Wait before the next attempt; past the bound, give up with the last error."""
        assert self._away_since is not None
        assert self._error is not None
        waited = time.monotonic() - self._away_since
        if waited >= self.bound_s:
            error = self._error
            self.given_up = True
            self._away_since = None
            if self.bound_s > 0:
                log.error("store_wait_exceeded", waited_s=round(waited, 1), attempts=self._attempts)
            raise error
        delay = min(self.first_s * 2 ** min(self._attempts - 1, 30), self.longest_s, self.bound_s - waited)
        log.warning(
            "store_unreachable", attempt=self._attempts, retry_in_s=round(delay, 2), reason=str(self._error)
        )
        await asyncio.sleep(delay)

    def _answered(self) -> None:
        if self._away_since is not None or self.given_up:
            away = 0.0 if self._away_since is None else time.monotonic() - self._away_since
            log.warning("store_reached_again", attempts=self._attempts, away_s=round(away, 1))
            self._away_since = None
            self.given_up = False
            self._attempts = 0
            self.outages += 1
            for hook in self.on_back:
                hook()
