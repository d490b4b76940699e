"""The site's live streams: the public events of the matches in play, read from the ladder file by one
poller for every match watched and fanned out to each stream of that match.

One read a tick (`StreamLimits.poll_s`), however many streams are open: the poller asks the store for
what is new in every match that has a stream (`LiveStore.live_updates`, one query), cuts each event to
its public keys and renders it as a server-sent event once, off the event loop, and hands it to every
stream of its match. A stream first sends the backlog after its `after`, read for it alone, then joins
its match's feed: only once it has read as far as the feed has fanned out (so nothing falls between the
two), and it skips what it has sent already (so nothing comes twice). A stream whose client reads slower
than the match is played is dropped once `queue_events` wait for it: it ends (or is cut, when its client
reads nothing at all) and the browser reconnects from its Last-Event-ID, rather than the site holding
events for it without bound. The poller stops when the last stream closes.

Streams are counted as they are asked for, the count checked and taken with no await in between (a burst
cannot slip past the cap), and given back however the stream ends (the client gone, an error, the server
stopping): at most `max_streams` in all (503 past that) and `per_client` from one client (429), a client
being an IPv4 address or an IPv6 /64 (what one host is usually given).

A database server that goes away (restarted, the network cut) does not end the streams: the poller and
the backlogs wait for it with backoff (outages.py; the streams send keep-alives meanwhile), the time it
was away does not count against a match's freshness, and the feeds go on from where they were once it is
back. Only past the wait's bound are the streams ended (the browser reconnects, answered with a 503 until
the server is back).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, TypeVar

import anyio
import structlog
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from arena.ladder.outages import StoreWait
from arena.ladder.store import LadderStore, StoreError, StoreUnreachableError
from arena.runner.public_events import public_only
from arena.site.data import LIVE_FRESH_S, SiteError
from arena.site.stream_limits import StreamLimits

log = structlog.get_logger("site")

T = TypeVar("T")

Message = tuple[int, str | None]
"""An event's sequence number and its server-sent event (None: nothing of it is public)."""


class Reader(Protocol):
    """How the site reads the ladder file: `function` run on a store opened for it, off the event loop."""

    def __call__(self, function: Callable[[LadderStore], T]) -> Awaitable[T]: ...


def client_of(host: str | None) -> str:
    """Whose stream it is, for the cap per client: an IPv4 address, or an IPv6 address's /64."""
    if host is None:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def rendered(events: list[tuple[int, dict[str, Any]]]) -> list[Message]:
    """Events as they are sent: each cut to its public keys, as a server-sent event with its number."""
    messages: list[Message] = []
    for seq, event in events:
        public = public_only(event)
        text = None if public is None else f"id: {seq}\ndata: {json.dumps(public, separators=(',', ':'))}\n\n"
        messages.append((seq, text))
    return messages


def _backlog(match_id: str, after: int, before: float, limit: int, store: LadderStore) -> list[Message]:
    return rendered(store.live.live_events(match_id, after, before=before, limit=limit))


def _updates(
    cursors: dict[str, int], before: float, limit: int, store: LadderStore
) -> tuple[dict[str, list[Message]], frozenset[str]]:
    updates = store.live.live_updates(cursors, before=before, limit=limit)
    return {match_id: rendered(events) for match_id, events in updates.events.items()}, updates.in_play


@dataclass(eq=False)
class Subscriber:
    """One stream's place in its match's feed: what waits to be sent to it."""

    match_id: str
    last: int
    """The newest event number sent to it or waiting for it."""
    waiting: list[str] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    state: str = "open"
    """open; ended (the match is over: send `end`); dropped (too slow: close)."""
    cut: Callable[[], None] | None = None
    """Ends the response at once (while it runs), for a dropped stream that cannot send."""

    def backlog(self, messages: list[Message]) -> str:
        """The messages not sent yet, as one chunk to send now."""
        new = [(seq, text) for seq, text in messages if seq > self.last]
        if new:
            self.last = new[-1][0]
        return "".join(text for _seq, text in new if text is not None)

    def offer(self, messages: list[Message], room: int) -> bool:
        """Queue the messages not sent yet; False when more than `room` would wait."""
        new = [(seq, text) for seq, text in messages if seq > self.last]
        if not new:
            return True
        texts = [text for _seq, text in new if text is not None]
        if len(self.waiting) + len(texts) > room:
            return False
        self.waiting.extend(texts)
        self.last = new[-1][0]
        self.wake.set()
        return True

    def close(self, state: str) -> None:
        self.state = state
        self.wake.set()

    def cut_off(self) -> None:
        """End the response now, if it has not ended."""
        if self.cut is not None:
            self.cut()


@dataclass(eq=False)
class Feed:
    """A match watched: the newest event fanned out, and its streams."""

    cursor: int
    last_event: float
    """When (monotonic) it last had a new event: silent for LIVE_FRESH_S, its runner died."""
    subscribers: set[Subscriber] = field(default_factory=set)


class LiveResponse(StreamingResponse):
    """A live stream: its slot given back and its subscriber gone however the response ends."""

    def __init__(
        self, body: AsyncGenerator[str, None], subscriber: Subscriber, release: Callable[[], None]
    ) -> None:
        super().__init__(
            body,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
        self.messages = body
        self.subscriber = subscriber
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            with anyio.CancelScope() as cancel:
                self.subscriber.cut = cancel.cancel
                await super().__call__(scope, receive, send)
        finally:
            self.subscriber.cut = None
            try:
                await self.messages.aclose()
            finally:
                self.release()


class LiveHub:
    """The live streams of one site: their count, the feeds of the matches watched, the poller."""

    def __init__(
        self, read: Reader, limits: StreamLimits, delay_s: float, store_wait: StoreWait | None = None
    ) -> None:
        self.read = read
        self.limits = limits
        self.delay_s = delay_s
        """Spectators see events this many seconds after they happened."""
        self.store_wait = store_wait or StoreWait(0.0)
        """How the streams wait for a database server that went away (default: not at all)."""
        self.open = 0
        self.by_client: Counter[str] = Counter()
        self.feeds: dict[str, Feed] = {}
        self.poller: asyncio.Task[None] | None = None

    async def stream(
        self, match_id: str, after: int, client: str, check: Callable[[], Awaitable[None]]
    ) -> LiveResponse:
        """The stream of `match_id`'s events after `after` for `client`, once `check` passes (the match is
        in play); a SiteError when the site or the client has as many streams open as it may."""
        self._take(client)
        try:
            await check()
        except BaseException:
            self._release(client)
            raise
        subscriber = Subscriber(match_id, after)
        return LiveResponse(self._messages(subscriber), subscriber, partial(self._release, client))

    def _take(self, client: str) -> None:
        limits = self.limits
        if self.open >= limits.max_streams:
            message = f"every place for a live stream is taken ({limits.max_streams} at once); try again soon"
            raise SiteError(503, message, 30)
        if self.by_client[client] >= limits.per_client:
            message = f"this address has as many live streams open as one client may ({limits.per_client})"
            raise SiteError(429, message, 30)
        self.open += 1
        self.by_client[client] += 1

    def _release(self, client: str) -> None:
        self.open -= 1
        self.by_client[client] -= 1
        if not self.by_client[client]:
            del self.by_client[client]

    async def _messages(self, subscriber: Subscriber) -> AsyncGenerator[str, None]:
        """The stream's server-sent events: its backlog, then its match's feed; `end` when the match is no
        longer in play (stored, given up, or silent for LIVE_FRESH_S: its runner died)."""
        limits = self.limits
        started = last_sent = time.monotonic()
        end = f"event: end\ndata: {json.dumps({'match_id': subscriber.match_id})}\n\n"
        try:
            caught_up = False
            while True:
                feed = self.feeds.get(subscriber.match_id)
                if (feed is None and caught_up) or (feed is not None and subscriber.last >= feed.cursor):
                    self._join(subscriber, feed)  # no await since the check: the feed has not moved on
                    break
                fanned_out = None if feed is None else feed.cursor
                before = time.time() - self.delay_s
                page = await self.store_wait.run(
                    partial(
                        self.read,
                        partial(_backlog, subscriber.match_id, subscriber.last, before, limits.page_events),
                    )
                )
                if not page and fanned_out is not None:
                    yield end  # what the feed sent is gone from the table: the match was stored
                    return
                caught_up = len(page) < limits.page_events
                chunk = subscriber.backlog(page)
                if chunk:
                    last_sent = time.monotonic()
                    yield chunk
            while True:
                now = time.monotonic()
                if now - started >= limits.stream_s:
                    return
                wait = min(limits.keepalive_s - (now - last_sent), limits.stream_s - (now - started))
                try:
                    async with asyncio.timeout(max(wait, 0.0)):
                        await subscriber.wake.wait()
                except TimeoutError:
                    if time.monotonic() - last_sent >= limits.keepalive_s:
                        last_sent = time.monotonic()
                        yield ": keep-alive\n\n"
                    continue
                subscriber.wake.clear()
                chunk = "".join(subscriber.waiting)
                subscriber.waiting.clear()
                if chunk:
                    last_sent = time.monotonic()
                    yield chunk
                if subscriber.state == "ended":
                    yield end
                    return
                if subscriber.state == "dropped":
                    return
        except StoreError as error:
            log.warning("live_stream_unreadable", match_id=subscriber.match_id, reason=str(error))
        finally:
            self._leave(subscriber)

    def _join(self, subscriber: Subscriber, feed: Feed | None) -> None:
        if feed is None:
            feed = self.feeds[subscriber.match_id] = Feed(subscriber.last, time.monotonic())
        feed.subscribers.add(subscriber)
        if self.poller is None:
            self.poller = asyncio.create_task(self._poll())

    def _leave(self, subscriber: Subscriber) -> None:
        feed = self.feeds.get(subscriber.match_id)
        if feed is not None and subscriber in feed.subscribers:
            feed.subscribers.discard(subscriber)
            if not feed.subscribers:
                del self.feeds[subscriber.match_id]

    async def _poll(self) -> None:
        """Read what is new in every match watched, a tick at a time, until no stream is left."""
        unreadable = False
        try:
            while True:
                await asyncio.sleep(self.limits.poll_s)
                if not self.feeds:
                    return
                feeds = dict(self.feeds)
                cursors = {match_id: feed.cursor for match_id, feed in feeds.items()}
                before = time.time() - self.delay_s
                outages = self.store_wait.outages
                try:
                    messages, in_play = await self.store_wait.run(
                        partial(self.read, partial(_updates, cursors, before, self.limits.page_events))
                    )
                except StoreUnreachableError as error:
                    # Away past the wait's bound: the streams end (their clients reconnect later).
                    log.warning("live_feed_given_up", reason=str(error))
                    self._drop_all()
                    return
                except StoreError as error:
                    if not unreadable:
                        log.warning("live_feed_unreadable", reason=str(error))
                    unreadable = True
                    continue
                if unreadable or self.store_wait.outages != outages:
                    self._forgive_silence()
                unreadable = False
                self._fan_out(feeds, messages, in_play)
        except Exception:
            log.exception("live_poller_failed")  # its streams end, and the next one starts a poller
            self._drop_all()
        except asyncio.CancelledError:
            self._drop_all()
            raise
        finally:
            self.poller = None

    def _forgive_silence(self) -> None:
        """The ladder could not be read for a while: no match fell silent meanwhile as far as the site can
        tell, so each feed's freshness starts again now."""
        now = time.monotonic()
        for feed in self.feeds.values():
            feed.last_event = now

    def _drop_all(self) -> None:
        for feed in self.feeds.values():
            for subscriber in feed.subscribers:
                subscriber.close("dropped")
        self.feeds.clear()

    def _fan_out(
        self, feeds: dict[str, Feed], messages: dict[str, list[Message]], in_play: frozenset[str]
    ) -> None:
        now = time.monotonic()
        for match_id, feed in feeds.items():
            if self.feeds.get(match_id) is not feed:
                continue  # all its streams left while the poller read (a new feed starts on its own)
            new = messages.get(match_id, [])
            if new:
                feed.cursor = new[-1][0]
                feed.last_event = now
                for subscriber in list(feed.subscribers):
                    if not subscriber.offer(new, self.limits.queue_events):
                        self._drop(feed, subscriber)
            if (match_id not in in_play and not new) or now - feed.last_event > LIVE_FRESH_S:
                for subscriber in feed.subscribers:
                    subscriber.close("ended")
                del self.feeds[match_id]
            elif not feed.subscribers:
                del self.feeds[match_id]

    def _drop(self, feed: Feed, subscriber: Subscriber) -> None:
        """A stream too slow for its match: it ends once it has sent what waits, or is cut."""
        log.info("live_stream_dropped", match_id=subscriber.match_id, waiting=len(subscriber.waiting))
        subscriber.close("dropped")
        feed.subscribers.discard(subscriber)
        asyncio.get_running_loop().call_later(self.limits.stuck_s, subscriber.cut_off)
