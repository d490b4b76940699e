"""The ladder riding out a PostgreSQL restart (outages.py): a `ladder run` whose server is restarted
mid-run goes on by itself, losing and duplicating nothing; one whose server stays away past
`--store-wait` stops in one line, and the next run finishes its sets; a runner cut off past its leases
finds its sets taken over; the site answers 503 while the server is away and its pages and live streams
as soon as it is back; a connection cut right after a COMMIT reached the server stores nothing twice."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import httpx2
import pytest
from postgres_support import PostgresServer
from sqlalchemy import func, select

from arena.ladder import store_match
from arena.ladder.outages import StoreWait
from arena.ladder.ratings import rate_set
from arena.ladder.store import (
    DuplicateMatchError,
    DuplicateSet,
    FinishedMatch,
    LadderStore,
    StoreUnreachableError,
    event_text,
    relations,
)
from arena.site.app import SiteSettings, create_app
from arena.site.stream_limits import StreamLimits
from tests.arena.ladder.ladder_support import assert_ladder_invariants, events
from tests.arena.site.site_support import served

SHORT = ("--sample-bots", "--deal-cap", "2", "--decision-ms", "2000")
"""Quick matches of the sample bots (two deals at most), with room on the clock for a loaded machine."""


class Proxy:
    """A TCP proxy in front of the server: one client's network to it. `cut()` drops every connection and
    refuses new ones until `mend()` (a network cut between that client and a server that stays up). Once
    `armed`, it lets the next COMMIT through, waits until the server has answered it (committed), and
    cuts that connection instead of passing the answer on: a cut at the worst moment."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.armed = threading.Event()
        self.down = threading.Event()
        self.cuts = 0
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        self.down.set()
        for side in list(self._sockets):
            with contextlib.suppress(OSError):
                side.shutdown(socket.SHUT_RDWR)

    def mend(self) -> None:
        self.down.clear()

    def url(self, database_url: str) -> str:
        """`database_url` through the proxy."""
        return database_url.replace(f":{self.target}/", f":{self.port}/")

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                if self.down.is_set():
                    client.close()
                    continue
                server = socket.create_connection(("127.0.0.1", self.target))
                self._sockets += [client, server]
                cutting = threading.Event()
                threading.Thread(target=self._up, args=(client, server, cutting), daemon=True).start()
                threading.Thread(target=self._down, args=(server, client, cutting), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, cutting: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if self.armed.is_set() and b"COMMIT" in data:
                    self.armed.clear()
                    cutting.set()  # before the server can answer
                server.sendall(data)

    def _down(self, server: socket.socket, client: socket.socket, cutting: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if cutting.is_set():  # the COMMIT's answer: it is done on the server, and never told
                    self.cuts += 1
                    for side in (client, server):
                        side.shutdown(socket.SHUT_RDWR)
                        side.close()
                    return
                client.sendall(data)

    def close(self) -> None:
        self.listener.close()
        for side in self._sockets:
            with contextlib.suppress(OSError):
                side.close()


@pytest.fixture
def proxy(postgres: PostgresServer) -> Iterator[Proxy]:
    opened = Proxy(postgres.port)
    yield opened
    opened.close()


def finished_match(
    match_id: str, duplicate: DuplicateSet, rotation: int, ranking: tuple[int, ...]
) -> FinishedMatch:
    return FinishedMatch(match_id, duplicate, rotation, "one_team_left", ranking, (), {"r": 1}, 10, 0.5)


def test_a_connection_cut_right_after_commit_stores_nothing_twice(
    postgres: PostgresServer, proxy: Proxy
) -> None:
    database = postgres.new_database()
    store = LadderStore(proxy.url(database))
    try:
        store.registry.add_bot("a", address="h:1")
        store.registry.add_bot("b", address="h:2")
        waits = StoreWait(10.0, first_s=0.01)
        # A new set whose COMMIT's answer is lost: found again by its seed, not created twice.
        create = partial(store.sets.create_set, 4, "pairs", None, 2**100 + 7, ["a", "b"], isolated=False)

        def again() -> DuplicateSet:
            return store.sets.set_with_seed(2**100 + 7) or create()

        proxy.armed.set()
        duplicate = asyncio.run(waits.call(create, again))
        assert proxy.cuts == 1
        assert duplicate.id == 1  # the set the lost COMMIT made (a second would have taken id 2)
        sets = store.file._conn.scalar(select(func.count()).select_from(relations.sets))
        assert sets == 1
        # A match whose COMMIT's answer is lost: the call fails, though the match is stored...
        first = finished_match("m-0", duplicate, 0, (1, 2))
        proxy.armed.set()
        with pytest.raises(StoreUnreachableError, match="cannot reach"):
            store_match(store.matches, first)
        assert proxy.cuts == 2
        assert [match.id for match in store.matches.finished(duplicate.id)] == ["m-0"]
        # ... so storing it again finds it stored, as it was given, and counts it once.
        store_match(store.matches, first)
        # The same through the run's wait, for the set's other rotation.
        second = finished_match("m-1", duplicate, 1, (2, 1))
        proxy.armed.set()
        asyncio.run(waits.call(partial(store_match, store.matches, second)))
        assert proxy.cuts == 3
        # Another runner's match of a rotation stored is still refused, as before.
        with pytest.raises(DuplicateMatchError):
            store_match(store.matches, finished_match("other", duplicate, 1, (2, 1)))
        assert [match.id for match in store.matches.finished(duplicate.id)] == ["m-0", "m-1"]
        assert store.ratings.matches_played(duplicate.pool) == {"a": 2, "b": 2}
        assert rate_set(store, duplicate) is not None
        assert_ladder_invariants(store)
    finally:
        store.close()


def ladder_run(database: str, cwd: Path, *args: str) -> subprocess.Popen[str]:
    """`arena ladder run` as a process of its own, logging JSON lines (warnings up) on standard error."""
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "ladder", "run", "--db", database, *SHORT, "--log-json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )


def stored_matches(database: str) -> int:
    store = LadderStore(database)
    try:
        count = store.file._conn.scalar(select(func.count()).select_from(relations.matches))
        return int(count or 0)
    finally:
        store.close()


def in_play(database: str) -> bool:
    """Whether a match is in play after the first two were stored."""
    store = LadderStore(database)
    try:
        live = store.file._conn.scalar(select(func.count()).select_from(relations.live_events))
        stored = store.file._conn.scalar(select(func.count()).select_from(relations.matches))
        return bool(live) and (stored or 0) >= 2
    finally:
        store.close()


def until(condition: Callable[[], bool], what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_run_whose_server_restarts_mid_run_goes_on_by_itself(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    database = postgres.new_database().replace("@", ":hunter2@", 1)  # a password (the server trusts anyone)
    run = ladder_run(database, tmp_path, "--matches", "24", "--concurrency", "2", "--store-wait", "1m")
    try:
        until(lambda: stored_matches(database) >= 4 or run.poll() is not None, "the first matches")
        assert run.poll() is None, run.communicate()[1]
        postgres.restart(down_s=2.0)  # every connection cut, the server away for two seconds
        stdout, stderr = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, stderr
    assert "Played 24 matches (12 sets rated, " in stdout
    assert "hunter2" not in stdout + stderr  # the password is never shown
    waited = events(stderr, "store_unreachable")
    assert waited, stderr  # the run met the outage...
    for line in waited:  # ... and said each attempt in one line: which, when the next, why
        assert isinstance(line["attempt"], int)
        assert isinstance(line["retry_in_s"], float | int)
        reason = line["reason"]
        assert isinstance(reason, str)
        assert "\n" not in reason
        assert reason.startswith("cannot reach postgresql://arena:***@127.0.0.1:")
    assert events(stderr, "store_reached_again")
    assert not events(stderr, "ladder_store_failed")
    store = LadderStore(database)
    try:
        assert_ladder_invariants(store)  # every set whole and rated once, nothing lost nor counted twice
        assert len(store.matches.finished()) == 24
    finally:
        store.close()


def test_a_run_whose_server_stays_away_stops_in_one_line_and_the_next_finishes(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    database = postgres.new_database()
    run = ladder_run(
        database, tmp_path, "--forever", "--concurrency", "2", "--store-wait", "3s", "--lease", "2s"
    )
    try:
        until(lambda: stored_matches(database) >= 2 or run.poll() is not None, "the first matches")
        assert run.poll() is None, run.communicate()[1]
        postgres.stop()
        stopped = time.monotonic()
        try:
            _stdout, stderr = run.communicate(timeout=120)
        finally:
            postgres.start()
    finally:
        if run.poll() is None:
            run.kill()
    assert 3.0 <= time.monotonic() - stopped < 60.0  # it waited, then gave up
    assert run.returncode == 1, stderr
    errors = [line for line in stderr.splitlines() if "error:" in line and not line.startswith("{")]
    assert len(errors) == 1, stderr
    assert errors[0].startswith("arena ladder run: error: the ladder stopped: cannot reach postgresql://")
    assert stderr.endswith(errors[0] + "\n")
    assert events(stderr, "store_unreachable")
    assert events(stderr, "store_wait_exceeded")
    # Nothing stored twice, and what it left unfinished the next run takes over once its leases expire:
    # it finishes the sets, or makes void those whose deals were shown live (never replayed).
    again = ladder_run(database, tmp_path, "--matches", "2")
    _stdout, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr
    assert_void_only_once_shown(database)


def assert_void_only_once_shown(database: str) -> None:
    """Every invariant holds, and the only void sets are those interrupted after their deals were shown."""
    store = LadderStore(database)
    try:
        assert_ladder_invariants(store, voided=True)
        sets = relations.sets.c
        reasons = store.file._conn.scalars(select(sets.void_reason).where(sets.void_reason.is_not(None)))
        assert set(reasons) <= {"interrupted after its deals were shown live"}
    finally:
        store.close()


def publish(database: str, match_id: str, seqs: range) -> None:
    """Write events of a match in play, as the runner's live feed does."""
    store = LadderStore(database)
    try:
        card = {"type": "card", "deal": 1, "seat": 0}
        store.live.add_live_events(match_id, [(seq, time.time(), event_text(card)) for seq in seqs])
    finally:
        store.close()


def test_the_site_answers_503_while_the_server_is_away_then_pages_and_streams_again(
    postgres: PostgresServer,
) -> None:
    database = postgres.new_database()
    publish(database, "m1", range(10))
    limits = StreamLimits(poll_s=0.05, keepalive_s=0.3)
    app = create_app(SiteSettings(database, streams=limits, store_wait_s=60.0))

    async def visit(site: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            assert (await http.get(f"{site}/api/pools")).status_code == 200
            seqs: list[int] = []
            keepalives = 0

            async def watch() -> None:
                nonlocal keepalives
                async with http.stream("GET", f"{site}/api/live/m1/events") as response:
                    assert response.status_code == 200
                    async for line in response.aiter_lines():
                        if line.startswith("id: "):
                            seqs.append(int(line[4:]))
                        elif line == ": keep-alive":
                            keepalives += 1

            stream = asyncio.create_task(watch())
            await until_async(lambda: seqs == list(range(10)), "the backlog")
            await asyncio.to_thread(postgres.stop)
            try:
                for path in ("/api/pools", "/", "/api/live"):
                    away = await http.get(f"{site}{path}")
                    assert away.status_code == 503, path
                    assert away.headers["Retry-After"] == "10"
                api = (await http.get(f"{site}/api/standings")).json()
                assert api == {"error": "the ladder cannot be read now; try again soon"}
                before = keepalives
                await until_async(lambda: keepalives >= before + 2, "keep-alives while the server is away")
                assert not stream.done()  # the stream waits for the server
            finally:
                await asyncio.to_thread(postgres.start)
            back = await http.get(f"{site}/api/pools")
            assert back.status_code == 200, back.text  # no restart of the site
            assert (await http.get(f"{site}/")).status_code == 200
            await asyncio.to_thread(publish, database, "m1", range(10, 20))
            await until_async(lambda: seqs == list(range(20)), "the events written after")
            assert not stream.done()  # the same stream went on, nothing missed or twice
            stream.cancel()
            await asyncio.gather(stream, return_exceptions=True)

    with served(app) as site:
        asyncio.run(visit(site))


async def until_async(condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def test_a_runner_cut_off_past_its_leases_finds_its_sets_taken_over(
    postgres: PostgresServer, proxy: Proxy, tmp_path: Path
) -> None:
    """Runner A loses its network to the server for longer than its leases; runner B takes its sets over
    meanwhile. When A is back it stores what it kept, drops the sets it lost (`lease_lost`), is refused a
    rotation B stored first, and goes on: nothing stored twice, every set rated once or void."""
    database = postgres.new_database()
    first = ladder_run(
        proxy.url(database), tmp_path, "--matches", "12", "--concurrency", "2", "--lease", "2s"
    )
    try:
        # Cut while a match of A is in play (its live events written): A keeps it to store it later.
        until(lambda: in_play(database) or first.poll() is not None, "A's matches in play", 300)
        assert first.poll() is None, first.communicate()[1]
        proxy.cut()
        time.sleep(2.5)  # A's leases expire (renewed every 2/3 s until the cut)
        second = ladder_run(database, tmp_path, "--matches", "4", "--lease", "2s")
        _stdout, second_err = second.communicate(timeout=300)
        assert second.returncode == 0, second_err
        assert first.poll() is None  # A waited for the server all along
        proxy.mend()
        _stdout, first_err = first.communicate(timeout=300)
    finally:
        proxy.mend()
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, first_err
    assert events(first_err, "store_unreachable")
    assert events(first_err, "lease_lost"), first_err  # noticed as soon as the server answered again
    assert_void_only_once_shown(database)
