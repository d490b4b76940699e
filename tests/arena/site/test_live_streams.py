"""The live streams under a crowd: the cap exact under a burst (503, then the slots back), the cap per
client, every event to every stream in order whenever it joins (no gap, no duplicate), one read a tick
for every match watched, the end of a match, a slow client dropped, the slots given back when the server
stops. Through a real uvicorn server on loopback where a client is involved; the hub itself where the
timing must be forced. The events are written to a real ladder file as the ladder's live feed writes
them."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import structlog
from site_support import served
from starlette.concurrency import run_in_threadpool
from structlog.testing import capture_logs

from arena.ladder.outages import StoreWait
from arena.ladder.store import LadderStore, StoreUnreachableError
from arena.ladder.store.live import LiveStore, LiveUpdates, event_text
from arena.site.app import SiteSettings, create_app
from arena.site.live import LiveHub, LiveResponse, client_of
from arena.site.stream_limits import StreamLimits

FAST = StreamLimits(poll_s=0.05)
"""Limits for tests: the poller ticks every 50 ms."""


def card(seq: int) -> dict[str, Any]:
    """A public event that says its own number (as its deal)."""
    return {"type": "card", "deal": seq, "seat": seq % 4, "card": "JS"}


def publish(path: Path, match_id: str, seqs: range) -> None:
    """Write events of a match in play, in one transaction, as the ladder's live feed does."""
    store = LadderStore(path)
    try:
        store.live.add_live_events(match_id, [(seq, time.time(), event_text(card(seq))) for seq in seqs])
    finally:
        store.close()


def forget(path: Path, match_id: str) -> None:
    store = LadderStore(path)
    try:
        store.live.delete_live_events(match_id)
    finally:
        store.close()


@pytest.fixture
def ladder(tmp_path: Path) -> Path:
    """A ladder file with one match in play, `m1`, its first 10 events written."""
    path = tmp_path / "ladder.db"
    publish(path, "m1", range(10))
    return path


async def until(condition: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


class Watcher:
    """A stream read to its end in the background: each event's number, and whether it said `end`."""

    def __init__(self, client: httpx2.AsyncClient, url: str, headers: dict[str, str] | None = None) -> None:
        self.seqs: list[int] = []
        self.ended = False
        self.status = 0
        self.opened = asyncio.Event()
        self.task = asyncio.create_task(self._read(client, url, headers or {}))

    async def _read(self, client: httpx2.AsyncClient, url: str, headers: dict[str, str]) -> None:
        async with client.stream("GET", url, headers=headers) as response:
            self.status = response.status_code
            self.opened.set()
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    self.seqs.append(int(line[4:]))
                elif line.startswith("data: ") and self.seqs and "match_id" not in line:
                    assert json.loads(line[6:]) == card(self.seqs[-1])
                elif line == "event: end":
                    self.ended = True

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


@asynccontextmanager
async def client(local_address: str | None = None) -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.AsyncHTTPTransport(
        local_address=local_address, limits=httpx2.Limits(max_connections=None)
    )
    async with httpx2.AsyncClient(transport=transport, timeout=30) as opened:
        yield opened


def test_a_burst_past_the_cap_opens_exactly_the_cap_and_the_slots_come_back(ladder: Path) -> None:
    app = create_app(SiteSettings(ladder, streams=StreamLimits(max_streams=5, per_client=100, poll_s=0.05)))
    hub: LiveHub = app.state.live

    async def burst(site: str) -> None:
        async with client() as http:
            watchers = [Watcher(http, f"{site}/api/live/m1/events") for _ in range(20)]
            await until(lambda: all(watcher.opened.is_set() for watcher in watchers), "every answer")
            statuses = sorted(watcher.status for watcher in watchers)
            assert statuses == [200] * 5 + [503] * 15
            assert hub.open == 5
            refused = await http.get(f"{site}/api/live/m1/events")
            assert refused.status_code == 503
            assert refused.headers["retry-after"] == "30"
            assert refused.json() == {
                "error": "every place for a live stream is taken (5 at once); try again soon"
            }
            assert "\n" not in refused.text
            for watcher in watchers:
                await watcher.close()
            await until(lambda: hub.open == 0 and not hub.by_client, "the slots given back")
            await until(lambda: hub.poller is None and not hub.feeds, "the poller to stop")
            again = [Watcher(http, f"{site}/api/live/m1/events") for _ in range(5)]
            await until(lambda: all(watcher.opened.is_set() for watcher in again), "the streams reopened")
            assert [watcher.status for watcher in again] == [200] * 5
            for watcher in again:
                await watcher.close()

    with served(app) as site:
        asyncio.run(burst(site))


def test_one_client_may_not_take_every_stream(ladder: Path) -> None:
    app = create_app(SiteSettings(ladder, streams=StreamLimits(max_streams=10, per_client=2, poll_s=0.05)))

    async def crowd(site: str) -> None:
        url = f"{site}/api/live/m1/events"
        async with client() as http, client(local_address="127.0.0.2") as other:
            mine = [Watcher(http, url), Watcher(http, url)]
            await until(lambda: all(watcher.opened.is_set() for watcher in mine), "two streams")
            third = await http.get(url)
            assert third.status_code == 429
            assert third.json()["error"] == "this address has as many live streams open as one client may (2)"
            assert third.headers["retry-after"] == "30"
            theirs = Watcher(other, url)  # another address: its own share
            await until(theirs.opened.is_set, "another client's stream")
            assert theirs.status == 200
            for watcher in [*mine, theirs]:
                await watcher.close()

    with served(app) as site:
        asyncio.run(crowd(site))


def test_every_stream_gets_every_event_in_order_whenever_it_joins(ladder: Path) -> None:
    """Streams join at random moments while the match is written, from the start, from the middle (by
    `after` or by Last-Event-ID), or from ahead of what is written: each gets exactly the events after
    its start, in order, once."""
    app = create_app(SiteSettings(ladder, streams=FAST))
    rng = random.Random(56)
    total = 300

    async def watch(site: str) -> None:
        written = [10]

        def write() -> None:
            store = LadderStore(ladder)
            try:
                while written[0] < total:
                    batch = range(written[0], min(written[0] + rng.randrange(1, 6), total))
                    store.live.add_live_events(
                        "m1", [(seq, time.time(), event_text(card(seq))) for seq in batch]
                    )
                    written[0] = batch[-1] + 1
                    time.sleep(0.005)
            finally:
                store.close()

        async with client() as http:
            writer = asyncio.create_task(asyncio.to_thread(write))
            watchers: list[tuple[int, Watcher]] = []
            for number in range(12):
                await asyncio.sleep(rng.uniform(0, 0.15))
                after = rng.choice([-1, rng.randrange(-1, written[0]), min(written[0] + 3, total - 10)])
                url = f"{site}/api/live/m1/events"
                if number % 3 == 0:
                    watcher = Watcher(http, url, {"Last-Event-ID": str(after)})
                else:
                    watcher = Watcher(http, f"{url}?after={after}")
                watchers.append((after, watcher))
            await writer
            await until(lambda: all(w.seqs[-1:] == [total - 1] for _after, w in watchers), "every event")
            for after, watcher in watchers:
                assert watcher.seqs == list(range(after + 1, total)), after
                await watcher.close()

    with served(app) as site:
        asyncio.run(watch(site))


def test_a_stored_match_ends_its_streams(ladder: Path) -> None:
    app = create_app(SiteSettings(ladder, streams=FAST))

    async def watch(site: str) -> None:
        async with client() as http:
            watchers = [Watcher(http, f"{site}/api/live/m1/events") for _ in range(3)]
            await until(lambda: all(len(w.seqs) == 10 for w in watchers), "the backlog")
            await asyncio.to_thread(forget, ladder, "m1")  # stored: its live events go
            await asyncio.wait_for(asyncio.gather(*(w.task for w in watchers)), 10)
            assert all(watcher.ended for watcher in watchers)
            await until(lambda: app.state.live.open == 0, "the slots given back")

    with served(app) as site:
        asyncio.run(watch(site))


def test_streams_are_given_back_when_the_server_stops(ladder: Path) -> None:
    app = create_app(SiteSettings(ladder, streams=FAST))
    hub: LiveHub = app.state.live
    stopped = threading.Event()

    async def watch(site: str) -> None:
        async with client() as http:
            watchers = [Watcher(http, f"{site}/api/live/m1/events") for _ in range(3)]
            await until(lambda: all(len(w.seqs) == 10 for w in watchers), "the backlog")
            assert hub.open == 3
            stopped.set()
            await asyncio.wait_for(asyncio.gather(*(w.task for w in watchers), return_exceptions=True), 20)

    with served(app, graceful_s=0.5) as site:
        thread = threading.Thread(target=asyncio.run, args=(watch(site),))
        thread.start()
        assert stopped.wait(20)
    thread.join(20)
    assert (hub.open, hub.by_client, hub.feeds, hub.poller) == (0, {}, {}, None)


@pytest.mark.parametrize(
    ("host", "client"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("::ffff:203.0.113.7", "203.0.113.7"),  # IPv4 over an IPv6 socket: the same client
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),  # one host's /64: one client
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("testclient", "testclient"),
        (None, "unknown"),
    ],
)
def test_a_client_is_an_ipv4_address_or_an_ipv6_64(host: str | None, client: str) -> None:
    assert client_of(host) == client


# The hub itself, where the timing must be forced.


def counting_reader(path: Path, store_class: type[LadderStore] = LadderStore) -> Any:
    """How the site reads (a store opened read-only for each read, in a thread), with `store_class`."""

    async def read(function: Callable[[LadderStore], Any]) -> Any:
        def run() -> Any:
            store = store_class(path, read_only=True)
            try:
                return function(store)
            finally:
                store.close()

        return await run_in_threadpool(run)

    return read


async def no_check() -> None:
    return None


async def collect(response: LiveResponse, into: list[str]) -> None:
    async for chunk in response.messages:
        into.append(chunk)


def seqs_of(chunks: list[str]) -> list[int]:
    return [int(line[4:]) for chunk in chunks for line in chunk.splitlines() if line.startswith("id: ")]


def test_a_stream_that_joins_while_the_feed_moves_on_misses_nothing(ladder: Path) -> None:
    """The feed fans out events 10 to 19 while a new stream's backlog read (which saw 0 to 9) is under
    way: the stream reads on before it joins, and gets every event once."""
    hold, held = threading.Event(), threading.Event()
    armed = [False]

    class SlowBacklog(LadderStore):
        def live_events(self, *args: Any, **kwargs: Any) -> list[tuple[int, dict[str, Any]]]:
            events = super().live_events(*args, **kwargs)
            if armed[0]:
                armed[0] = False
                held.set()
                assert hold.wait(10)
            return events

    async def scenario() -> None:
        hub = LiveHub(counting_reader(ladder, SlowBacklog), FAST, 0.0)
        first: list[str] = []
        reading_first = asyncio.create_task(collect(await hub.stream("m1", -1, "a", no_check), first))
        await until(lambda: "m1" in hub.feeds, "the first stream to join")
        armed[0] = True
        second: list[str] = []
        reading_second = asyncio.create_task(collect(await hub.stream("m1", -1, "b", no_check), second))
        await asyncio.to_thread(held.wait, 10)
        await asyncio.to_thread(publish, ladder, "m1", range(10, 20))
        await until(lambda: seqs_of(first)[-1:] == [19], "the feed to fan out 19")
        hold.set()
        await until(lambda: len(hub.feeds["m1"].subscribers) == 2, "the second stream to join")
        await asyncio.to_thread(publish, ladder, "m1", range(20, 30))
        await until(lambda: seqs_of(second)[-1:] == [29], "the second stream to get 29")
        assert seqs_of(first) == list(range(30))
        assert seqs_of(second) == list(range(30))
        for task in (reading_first, reading_second):
            task.cancel()
        await asyncio.gather(reading_first, reading_second, return_exceptions=True)

    asyncio.run(scenario())


def test_one_read_a_tick_serves_every_stream_of_every_match(ladder: Path) -> None:
    publish(ladder, "m2", range(5))
    publish(ladder, "m3", range(5))
    reads: list[set[str]] = []

    class CountedLive(LiveStore):
        def live_updates(self, cursors: Any, *args: Any, **kwargs: Any) -> LiveUpdates:
            reads.append(set(cursors))
            return super().live_updates(cursors, *args, **kwargs)

    class Counted(LadderStore):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.live = CountedLive(self.file)

    async def scenario() -> None:
        hub = LiveHub(counting_reader(ladder, Counted), StreamLimits(poll_s=0.1), 0.0)
        chunks: list[list[str]] = [[] for _ in range(30)]
        tasks = [
            asyncio.create_task(
                collect(await hub.stream(f"m{1 + number % 3}", -1, str(number), no_check), into)
            )
            for number, into in enumerate(chunks)
        ]
        await until(lambda: sum(len(feed.subscribers) for feed in hub.feeds.values()) == 30, "every join")
        reads.clear()
        await asyncio.sleep(1.0)
        assert 1 <= len(reads) <= 11  # at most one a tick (not one a stream), for thirty streams
        assert all(asked == {"m1", "m2", "m3"} for asked in reads)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await until(lambda: hub.poller is None, "the poller to stop")

    asyncio.run(scenario())


def test_a_slow_stream_is_dropped_not_buffered(ladder: Path) -> None:
    """A stream whose client does not read is dropped once more events wait than the limit: it ends
    (without `end`: the browser reconnects from its Last-Event-ID), and the match's feed stops."""

    async def scenario() -> None:
        hub = LiveHub(counting_reader(ladder), StreamLimits(poll_s=0.02, queue_events=5), 0.0)
        response = await hub.stream("m1", -1, "a", no_check)
        assert seqs_of([await anext(response.messages)]) == list(range(10))
        joined = asyncio.create_task(anext(response.messages))
        await until(lambda: "m1" in hub.feeds, "the join")
        await asyncio.to_thread(publish, ladder, "m1", range(10, 13))
        assert seqs_of([await joined]) == [10, 11, 12]  # read: then it stops reading
        with structlog.testing.capture_logs() as logs:
            await asyncio.to_thread(publish, ladder, "m1", range(13, 30))
            await until(lambda: not hub.feeds, "the drop")
        assert [entry["event"] for entry in logs] == ["live_stream_dropped"]
        with pytest.raises(StopAsyncIteration):
            await anext(response.messages)
        await until(lambda: hub.poller is None, "the poller to stop")

    asyncio.run(scenario())


def test_a_dropped_stream_whose_client_reads_nothing_is_cut(ladder: Path) -> None:
    """The response of a dropped stream that cannot even send (its client stopped reading) ends
    `stuck_s` later, and its slot is given back."""

    async def scenario() -> None:
        hub = LiveHub(counting_reader(ladder), StreamLimits(poll_s=0.02, queue_events=5, stuck_s=0.2), 0.0)
        response = await hub.stream("m1", -1, "a", no_check)
        sent: list[bytes] = []
        never = asyncio.Event()

        async def receive() -> dict[str, Any]:
            await never.wait()  # the client never hangs up
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message.get("body", b""))
            if len(sent) > 2:  # the headers, the backlog, then a client that no longer reads
                await never.wait()

        scope = {"type": "http", "asgi": {"spec_version": "2.3"}, "method": "GET"}
        answering = asyncio.create_task(response(scope, receive, send))
        await until(lambda: "m1" in hub.feeds, "the join")
        await asyncio.to_thread(publish, ladder, "m1", range(10, 12))
        await until(lambda: len(sent) == 3, "a chunk it cannot send")
        await asyncio.to_thread(publish, ladder, "m1", range(12, 30))
        await asyncio.wait_for(answering, 5)
        assert hub.open == 0
        assert not hub.feeds

    asyncio.run(scenario())


def test_a_server_away_keeps_the_streams_until_the_wait_is_over(ladder: Path) -> None:
    """The poller waits for a database server that went away (the streams kept, fed again from where
    they were once it answers, the silence not counted against the match's freshness); past the site's
    `--store-wait` it gives up and the streams end, their clients to reconnect."""
    away = threading.Event()

    class RestartingLive(LiveStore):
        def live_updates(self, *args: Any, **kwargs: Any) -> LiveUpdates:
            if away.is_set():
                raise StoreUnreachableError("cannot reach postgresql://arena@db/ladder (connection refused)")
            return super().live_updates(*args, **kwargs)

    class Restarting(LadderStore):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.live = RestartingLive(self.file)

    async def scenario() -> None:
        hub = LiveHub(counting_reader(ladder, Restarting), FAST, 0.0, StoreWait(0.8, first_s=0.05))
        chunks: list[str] = []
        reading = asyncio.create_task(collect(await hub.stream("m1", -1, "a", no_check), chunks))
        await until(lambda: "m1" in hub.feeds and seqs_of(chunks) == list(range(10)), "the backlog")
        away.set()
        await asyncio.sleep(0.4)  # within the wait: the stream stays
        assert not reading.done()
        hub.feeds["m1"].last_event -= 3600  # as if silent for an hour: the outage does not count
        away.clear()
        await asyncio.sleep(0.3)  # back, a few ticks with nothing new: the match is still in play
        assert not reading.done()
        await asyncio.to_thread(publish, ladder, "m1", range(10, 15))
        await until(lambda: seqs_of(chunks)[-1:] == [14], "the events written while it was away")
        assert seqs_of(chunks) == list(range(15))
        assert not reading.done()
        away.set()  # away again, now past the wait
        await asyncio.wait_for(reading, 10)
        assert hub.feeds == {}
        assert hub.poller is None
        assert "event: end" not in "".join(chunks)  # cut, not ended: the match may still be in play

    with capture_logs() as logs:
        asyncio.run(scenario())
    assert [entry["event"] for entry in logs if entry["event"].startswith("live_feed")] == [
        "live_feed_given_up"
    ]
