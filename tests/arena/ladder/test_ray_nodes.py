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

from arena.ladder.store import LadderStore
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

    def register(self, *names: str) -> None:
        """Register each name as a command bot, tests/bots/ray_bot.py, which notes where it runs."""
        command = f"python {BOTS / 'ray_bot.py'} --port-file {{port_file}} --trace {self.trace}"
        store = LadderStore(self.database)
        try:
            for name in names:
                store.registry.add_bot(name, command=command)
        finally:
            store.close()

    def start(self, matches: int, seed: int, concurrency: int = 2) -> None:
        """Start the runner: `matches` quick matches (two deals each), `concurrency` at once."""
        self.runner = subprocess.Popen(
            [
                *(sys.executable, "-m", "arena.cli", "ladder", "run", "--db", self.database),
                *("--matches", str(matches), "--seed", str(seed), "--deal-cap", "2"),
                *("--concurrency", str(concurrency), "--decision-ms", "500", "--bank-ms", "500"),
                *("--ray", self.cluster.address),
            ],
            cwd=self.folder,
            env=self.cluster.environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
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
        """How many times a seat's bot began a match on `node`, from the bots' logs (every seat of a match
        is a process of its own, which writes where it runs at the match's start)."""
        return sum(
            log.read_text(errors="replace").count(f"ray node {node.folder}\n")
            for log in self.folder.rglob("*.log")
        )

    def stored_on(self, node: RayNode) -> int:
        return list(self.played_on().values()).count(str(node.folder))

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
        out, err = self.runner.communicate(timeout=WAIT_S)
        assert self.runner.returncode == 0, err[-3000:]
        return out

    def assert_invariants(self) -> None:
        store = LadderStore(self.database)
        try:
            assert_ladder_invariants(store)
        finally:
            store.close()

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
    head, second = run.cluster.nodes
    run.register("north", "south", "east")
    run.start(matches=8, seed=26)

    # Killed once a match played on the second node is stored: early in the run, often mid-match.
    run.wait_for("match stored from the second node", lambda: run.stored_on(second) > 0)
    run.kill_node(second)
    out = run.finish()

    assert "Played 8 matches (4 sets rated, 0 faults)" in out, out
    assert "void" not in out
    run.assert_invariants()
    # Matches really ran on the second node before it died, mid-run ...
    assert str(second.folder) in run.stored_at_kill.values()
    assert len(run.stored_at_kill) < 8
    # ... none begun there after (a match in play there when it died was played again on the head, from
    # its seed; one whose outcome had reached the runner was stored) ...
    assert run.stored_on(second) <= run.begun_at_kill
    # ... and the run went on on the head.
    head_at_kill = list(run.stored_at_kill.values()).count(str(head.folder))
    assert run.stored_on(head) == 8 - run.stored_on(second) > head_at_kill
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
