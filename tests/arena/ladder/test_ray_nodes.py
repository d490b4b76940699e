"""The ladder on a Ray cluster of two nodes on this machine (tests/ray_cluster.py: a head and a second
node, each a `ray start` session with its own CPU, folder and ports), the store on PostgreSQL, and the
second node killed mid-run: the run goes on on the head and the ladder keeps every invariant.

The steps are methods of `LadderOnNodes`, so that a test of a whole event adds its own between them (a
PostgreSQL restart, a look at the site) without another harness. Skipped where Ray or PostgreSQL is
missing, except under CI."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pytest
from postgres_support import PostgresServer
from sqlalchemy import select

from arena.ladder.store import LadderStore, relations
from tests.arena.ladder.ladder_support import assert_ladder_invariants
from tests.ray_cluster import NodeSpec, RayCluster, RayClusterError, RayNode, ray_cluster, require_ray

BOTS: Final = Path(__file__).resolve().parents[2] / "bots"

PLAYERS: Final = 4
"""The players of a match (`arena ladder run`'s default), each seat a process of a command bot."""

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
