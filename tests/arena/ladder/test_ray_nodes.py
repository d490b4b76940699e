"""The ladder on a Ray cluster of two nodes on this machine (tests/ray_cluster.py: a head and a second
node, each a `ray start` session with its own CPU, folder and ports), the store on PostgreSQL, and the
second node killed mid-run: the run goes on on the head and the ladder keeps every invariant. And issue
26's whole event in one run: besides, `arena serve` in a process of its own, watched by a spectator
(`Spectator`) who sees a match of the second node live, and PostgreSQL restarted mid-run.

The steps are methods of `LadderOnNodes`, so that each test adds its own between them. Skipped where Ray
or PostgreSQL is missing, except under CI."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx2
import pytest
from postgres_support import PostgresServer
from sqlalchemy import select

from arena.ladder.store import LadderStore, relations
from tests.arena.ladder.ladder_support import assert_ladder_invariants, events
from tests.arena.sandbox.site_server import serving
from tests.ray_cluster import NodeSpec, RayCluster, RayClusterError, RayNode, ray_cluster, require_ray

BOTS: Final = Path(__file__).resolve().parents[2] / "bots"

PLAYERS: Final = 4
"""The players of a match (`arena ladder run`'s default), each seat a process of a command bot."""

MATCHES: Final = 16
"""The matches of the whole event's run: eight sets of two rotations."""

WAIT_S: Final = 90.0
"""The most a step waits for what it expects (a bound against hanging, not a timed assertion)."""


@pytest.fixture
def two_nodes() -> Iterator[RayCluster]:
    """A head and a second node of one CPU each: two matches at once, one on each node (Ray fills the
    driver's node, the head, first). A test's own cluster, since a test may kill a node of it."""
    command = require_ray()
    try:
        with ray_cluster([NodeSpec(cpus=1), NodeSpec(cpus=1)], command=command) as cluster:
            yield cluster
    except RayClusterError as error:
        pytest.fail(str(error))


@dataclass
class LadderOnNodes:
    """A ladder kept on PostgreSQL whose matches a runner (`arena ladder run --ray`, in a process of its
    own) plays on `cluster`, with the steps of a test during the run."""

    cluster: RayCluster
    database: str
    folder: Path
    """The runner's working folder (where the bots' logs go) and the bots' trace."""
    runner: subprocess.Popen[str] | None = None
    stored_at_kill: dict[str, str] = field(default_factory=dict)
    """`played_on()` just before a node was killed."""
    begun_at_kill: int = 0
    """How many matches had begun on the killed node (stored or not) when it was killed."""

    @property
    def trace(self) -> Path:
        return self.folder / "trace"

    @property
    def match_trace(self) -> Path:
        return self.folder / "matches"

    @property
    def error_file(self) -> Path:
        """The runner's standard error, read as it writes (`errors()`)."""
        return self.folder / "runner-stderr"

    def errors(self) -> str:
        """What the runner has written to its standard error so far."""
        return self.error_file.read_text(errors="replace") if self.error_file.exists() else ""

    def register(self, *names: str, flags: str = "") -> None:
        """Register each name as a command bot, tests/bots/ray_bot.py (with `flags`), which notes where it
        runs."""
        command = f"python {BOTS / 'ray_bot.py'} --port-file {{port_file}} --trace {self.trace}"
        command += f" --match-trace {self.match_trace} {flags}"
        store = LadderStore(self.database)
        try:
            for name in names:
                store.registry.add_bot(name, command=command)
        finally:
            store.close()

    def start(self, matches: int, seed: int, *options: str, concurrency: int = 2) -> None:
        """Start the runner: `matches` quick matches (two deals each), `concurrency` at once, with `ladder
        run`'s `options`; its standard error to `error_file`."""
        with self.error_file.open("w") as errors:
            self.runner = subprocess.Popen(
                [
                    *(sys.executable, "-m", "arena.cli", "ladder", "run", "--db", self.database),
                    *("--matches", str(matches), "--seed", str(seed), "--deal-cap", "2"),
                    *("--concurrency", str(concurrency), "--decision-ms", "500", "--bank-ms", "500"),
                    *("--ray", self.cluster.address),
                    *options,
                ],
                cwd=self.folder,
                env=self.cluster.environment,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )

    def running(self) -> bool:
        return self.runner is not None and self.runner.poll() is None

    def played_on(self) -> dict[str, str]:
        """Each stored match and the Ray node it was played on (the folder that its bots wrote at its
        start, the same at every seat)."""
        store = LadderStore(self.database, read_only=True)
        try:
            nodes: dict[str, str] = {}
            for match in store.matches.finished():
                written = {
                    line.removeprefix("ray node ")
                    for output in store.outputs.of_match(match.id)
                    for line in output.text.splitlines()
                    if line.startswith("ray node ")
                }
                assert len(written) == 1, (match.id, written)
                nodes[match.id] = written.pop()
            return nodes
        finally:
            store.close()

    def wait_for(self, what: str, condition: Callable[[], bool]) -> None:
        """Wait until `condition()` holds, while the runner runs."""
        deadline = time.monotonic() + WAIT_S
        while not condition():
            if not self.running():
                pytest.fail(f"the run ended before {what}: {self.finish()}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} within {WAIT_S:.0f} s")
            time.sleep(0.3)

    def seat_starts_on(self, node: RayNode) -> int:
        """How many times a seat's bot began a match on `node`, from the bots' trace of matches (every
        seat of a match is a process of its own, which notes where it runs at the match's start)."""
        if not self.match_trace.exists():
            return 0
        return self.match_trace.read_text().count(f"{node.folder} ")

    def stored_on(self, node: RayNode) -> int:
        return len(self.stored_from(node))

    def stored_from(self, node: RayNode) -> list[str]:
        """The matches stored that were played on `node`."""
        return [match for match, folder in self.played_on().items() if folder == str(node.folder)]

    def kill_node(self, node: RayNode) -> None:
        """Kill `node`'s whole session at once, mid-run (its raylet, workers and their bots, its agents),
        noting what was stored and begun by then."""
        self.stored_at_kill = self.played_on()
        self.begun_at_kill = -(-self.seat_starts_on(node) // PLAYERS)
        assert self.running(), "the run was over before the node was killed"
        node.kill()

    def stop(self) -> None:
        """Stop the runner if it still runs (a test that failed midway)."""
        if self.running():
            assert self.runner is not None
            self.runner.terminate()
            try:
                self.runner.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.runner.kill()
                self.runner.communicate()

    def finish(self) -> str:
        """Wait for the runner to end; its standard output (it must have succeeded)."""
        assert self.runner is not None
        out, _ = self.runner.communicate(timeout=WAIT_S)
        assert self.runner.returncode == 0, self.errors()[-3000:]
        return out

    def assert_reported(self, out: str, matches: int) -> None:
        """The run's report against the store, once a node was lost mid-run: nothing lost or stored twice
        (the invariants), every set rated once or made void, void only for the match in play on the lost
        node if its set's deals had been shown live (else it was played again on the head: it lost its
        worker before its deals were public), and every match stored reported, with no fault."""
        store = LadderStore(self.database)
        try:
            assert_ladder_invariants(store, voided=True)
            stored = len(store.matches.finished())
            rated = len(store.sets.rated_sets())
            sets = relations.sets.c
            voids = dict(
                store.file._conn.execute(
                    select(sets.id, sets.void_reason).where(sets.void_reason.is_not(None))
                ).all()
            )
        finally:
            store.close()
        assert f"Played {stored} matches ({rated} sets rated, 0 faults)" in out, out
        assert len(voids) <= 1, voids
        assert stored == matches - len(voids)
        assert rated + len(voids) == matches // 2
        for set_id, reason in voids.items():
            assert f"Set {set_id} was made void (never rated): {reason}" in out
            assert reason.endswith((": NodeDiedError", ": WorkerCrashedError")), reason

    def assert_went_on_without(self, lost: RayNode) -> None:
        """Matches ran on `lost` until it was killed, none began there after (one in play then was lost
        with it; one whose outcome had reached the runner was stored), and the run went on on the
        others."""
        assert str(lost.folder) in self.stored_at_kill.values()
        assert self.stored_on(lost) <= self.begun_at_kill
        elsewhere_at_kill = [node for node in self.stored_at_kill.values() if node != str(lost.folder)]
        assert len(self.played_on()) - self.stored_on(lost) > len(elsewhere_at_kill)

    def wait_for_exit(self, pids: list[int]) -> None:
        """Wait until none of the processes `pids` is left."""
        deadline = time.monotonic() + WAIT_S
        while left := [pid for pid in pids if Path(f"/proc/{pid}").exists()]:
            if time.monotonic() > deadline:
                pytest.fail(f"processes {left} still there {WAIT_S:.0f} s after the end of the run")
            time.sleep(0.3)

    def bots_started_on(self, node: RayNode) -> list[int]:
        """The pids of the bots that Ray workers of `node` started (from the trace)."""
        pids = []
        for line in self.trace.read_text().splitlines():
            fields = line.split()
            if fields[0] == "ray-worker" and fields[2] == str(node.folder):
                pids.append(int(fields[3]))
        return pids


@dataclass
class Spectator:
    """Someone watching `arena serve` at `site` as a browser does: the live list read again and again,
    and each match listed in play streamed from its start (a thread each) until the site ends the
    stream; the calls and cards each stream showed, by match id. Refusals (a 503 while the store is
    away, a 404 for a match over by the time its stream was asked for) are a spectator's to shrug off."""

    site: str
    moves: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """The calls and cards shown, by match id (a match listed in play, whether or not it shows any)."""
    listed_at: dict[str, float] = field(default_factory=dict)
    """When each match was first listed in play (`time.monotonic()`)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while `moves` and `listed_at` change or are read."""
    stopping: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.http = httpx2.Client(base_url=self.site, timeout=httpx2.Timeout(30.0, read=120.0))
        self._spawn(self._list)

    def _spawn(self, target: Callable[..., None], *args: str) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self.threads.append(thread)
        thread.start()

    def _list(self) -> None:
        while not self.stopping.is_set():
            with contextlib.suppress(httpx2.HTTPError):
                answer = self.http.get("/api/live")
                if answer.status_code == 200:
                    for match in answer.json():
                        with self.lock:
                            new = match["match_id"] not in self.moves
                            if new:
                                self.moves[match["match_id"]] = []
                                self.listed_at[match["match_id"]] = time.monotonic()
                        if new:
                            self._spawn(self._watch, match["match_id"])
            self.stopping.wait(0.1)

    def _watch(self, match_id: str) -> None:
        with (
            contextlib.suppress(httpx2.HTTPError),
            self.http.stream("GET", f"/api/live/{match_id}/events") as stream,
        ):
            if stream.status_code != 200:
                return
            for line in stream.iter_lines():
                event = json.loads(line.removeprefix("data: ")) if line.startswith("data: ") else {}
                if event.get("type") in ("call", "card"):
                    with self.lock:
                        self.moves[match_id].append(event)

    def listed(self) -> set[str]:
        """The matches the site has listed in play."""
        with self.lock:
            return set(self.listed_at)

    def shown(self, since: float = 0.0) -> set[str]:
        """The matches whose moves the site showed while they were in play (first listed `since`)."""
        with self.lock:
            return {match for match, at in self.listed_at.items() if at >= since and self.moves[match]}

    def stop(self) -> None:
        """List no more (the streams open end with their matches, or with the site)."""
        self.stopping.set()

    def close(self) -> None:
        """Once the site has stopped: wait for the threads (every stream cut), and close the client."""
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=WAIT_S)
        self.http.close()


def assert_shown_as_played(moves: list[dict[str, Any]], record: dict[str, Any]) -> None:
    """`moves`, shown live, are the first moves of the match of `record`, deal by deal, in order."""
    for kind, key in (("call", "calls"), ("card", "cards")):
        for deal in record["deals"]:
            shown = [move[kind] for move in moves if move["type"] == kind and move["deal"] == deal["number"]]
            assert shown == deal[key][: len(shown)], (kind, deal["number"])


@pytest.fixture
def run(two_nodes: RayCluster, postgres: PostgresServer, tmp_path: Path) -> Iterator[LadderOnNodes]:
    """A ladder on a new PostgreSQL database of its own, played on `two_nodes`; its runner stopped at the
    end, before the cluster."""
    ladder = LadderOnNodes(two_nodes, postgres.new_database(), tmp_path)
    yield ladder
    ladder.stop()


def test_a_ladder_on_two_nodes_goes_on_on_the_head_when_the_second_node_dies(run: LadderOnNodes) -> None:
    second = run.cluster.nodes[1]
    run.register("north", "south", "east")
    run.start(matches=8, seed=26)

    # Killed once a match played on the second node is stored: early in the run, often as its next match
    # starts there.
    run.wait_for("match stored from the second node", lambda: run.stored_on(second) > 0)
    run.kill_node(second)
    out = run.finish()

    run.assert_reported(out, 8)
    assert len(run.stored_at_kill) < 8  # killed mid-run
    run.assert_went_on_without(second)
    # The second node's bots went with it (their supervisors stop them once their worker is gone, within
    # a grace period).
    lost = run.bots_started_on(second)
    assert lost
    run.wait_for_exit(lost)


def unreachable(run: LadderOnNodes) -> list[dict[str, Any]]:
    """The runner's log lines of an attempt to reach a store that is away."""
    return events(run.errors(), "store_unreachable")


def test_a_whole_event_on_two_nodes_live_through_a_database_restart_and_a_node_lost(
    run: LadderOnNodes, postgres: PostgresServer
) -> None:
    """Issue 26's event in one run: the site, a process of its own, shows a match of the second node
    live; PostgreSQL is restarted mid-run and the run goes on by itself (`--store-wait`), on both nodes;
    then the second node is killed mid-run. Nothing is lost or stored twice, and the run reports it all."""
    second = run.cluster.nodes[1]
    # Rule bots that take their time past the first deal: the moves the gate shows (a deal once both
    # rotations have ended it) stay on the site a while before the match is over and stored.
    run.register("north", "south", "east", flags="--rules --think-ms 20")
    (run.folder / "site").mkdir()
    with serving(run.database, "--store-wait", "2m", cwd=run.folder / "site") as site:
        spectator = Spectator(f"http://127.0.0.1:{site.port}")
        try:
            run.start(MATCHES, 26, "--store-wait", "2m", "--log-json")

            # 1. A match of the second node, its moves read from the site while it was in play.
            def shown_from_second() -> list[str]:
                shown = spectator.shown()
                return [match for match in run.stored_from(second) if match in shown]

            run.wait_for("match of the second node shown live", lambda: bool(shown_from_second()))
            watched = shown_from_second()[0]

            # 2. PostgreSQL restarted while a match is in play: the run and the site wait for it, and go
            # on by themselves, on both nodes and live.
            run.wait_for("match in play", lambda: bool(spectator.listed() - set(run.played_on())))
            second_before = run.stored_on(second)
            postgres.stop()
            try:
                run.wait_for("the runner waiting for the store", lambda: bool(unreachable(run)))
            finally:
                postgres.start()
            restarted = time.monotonic()
            run.wait_for(
                "match of the second node stored after the restart",
                lambda: run.stored_on(second) > second_before,
            )
            run.wait_for("match shown live after the restart", lambda: bool(spectator.shown(restarted)))

            # 3. The second node killed mid-run, while it plays a match (begun there, not stored): the match
            # is played again on the head, or its set made void if its deals were shown.
            run.wait_for(
                "match in play on the second node",
                lambda: run.seat_starts_on(second) > PLAYERS * run.stored_on(second),
            )
            run.kill_node(second)
            out = run.finish()
        finally:
            spectator.stop()
        # What the site showed live was what was played, move for move (fair play: test_fair_live.py).
        shown = spectator.shown() & set(run.played_on())  # a match lost with the node is not stored
        assert watched in shown
        for match in shown:
            status, record, _headers = site.request("GET", f"/api/matches/{match}")
            assert status == 200, record
            assert_shown_as_played(spectator.moves[match], record)
    spectator.close()
    # The run rode the outage out, each attempt a line.
    assert events(run.errors(), "store_reached_again")
    assert not events(run.errors(), "ladder_store_failed")
    assert all(line["reason"].startswith("cannot reach postgresql://") for line in unreachable(run))
    run.assert_reported(out, MATCHES)
    run.assert_went_on_without(second)


def test_two_clusters_on_one_machine_share_no_port() -> None:
    """Two test runs at once, each with its clusters: every port of every node its own (Ray's fixed
    defaults, 6379, 10001, 52365, made the second cluster fail), and the first cluster unharmed."""
    command = require_ray()
    with (
        ray_cluster([NodeSpec(cpus=1)], command=command) as first,
        ray_cluster([NodeSpec(cpus=1), NodeSpec(cpus=1)], command=command) as second,
    ):
        ports = [node.listening_ports() for node in [*first.nodes, *second.nodes]]
        assert all(ports)
        assert sum(map(len, ports)) == len(set().union(*ports))
        assert all(node.alive() for node in [*first.nodes, *second.nodes])
        assert first.address != second.address
