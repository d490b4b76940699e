"""The ladder on a real local Ray cluster: `ray start --head` in a temporary folder with two worker CPUs,
every port its own (tests/ray_cluster.py), for the whole module, stopped at the end. Skipped where Ray is
not installed, except under CI.

The cluster's processes (and so the command bots its workers start) can import a module that the runs
joining it cannot (`WORKER_ONLY`): a bot whose files exist only where the workers run."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli import main
from arena.ladder.ray_play import MATCH_RETRIES
from arena.ladder.store import LadderStore
from sample_bots.rule_bot import RuleBot
from sdk import BotServer, start
from tests.arena.ladder.ladder_support import assert_ladder_invariants
from tests.arena.ladder.live_timeline import Timeline, assert_live_was_fair
from tests.ray_cluster import NodeSpec, RayClusterError, environment, free_port, ray_cluster, require_ray

BOTS = Path(__file__).resolve().parents[2] / "bots"


TOKEN = secrets.token_hex(32)
"""The test cluster's own authentication token: whatever token the user has (~/.ray) is neither read nor
made."""


WORKER_ONLY = "worker_only_bot"
"""A module only the cluster's processes import (the Ray test bot, from a folder of the cluster's own)."""


def _environment(*more_paths: Path) -> dict[str, str]:
    """The environment of the runs joining the cluster (and of the cluster, with `more_paths` importable
    too): this checkout importable, the token."""
    joining = environment(TOKEN)
    paths = [joining["PYTHONPATH"], *map(str, more_paths)]
    return {**joining, "PYTHONPATH": os.pathsep.join(paths)}


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The address of a Ray cluster of this test module's own: one node of two CPUs, in a session of its
    own (tests/ray_cluster.py), stopped at the end of the module; its processes import `WORKER_ONLY`."""
    command = require_ray()
    worker_only = Path(tempfile.mkdtemp(prefix="ray-worker-only-", dir="/tmp"))
    (worker_only / f"{WORKER_ONLY}.py").write_text("from tests.bots.ray_bot import main\n\nmain()\n")
    try:
        with ray_cluster([NodeSpec(cpus=2)], _environment(worker_only), command) as running:
            yield running.address
    except RayClusterError as error:
        pytest.fail(str(error))
    finally:
        shutil.rmtree(worker_only, ignore_errors=True)


def _arena(*args: str, cwd: Path | None = None) -> str:
    """Run `arena` in a process of its own (Ray's driver changes its process: `print` among others) and
    return its standard output; it must succeed. `cwd`: where a PostgreSQL ladder's logs go."""
    finished = subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        env=_environment(),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    return finished.stdout


def _run_ladder(path: Path | str, cluster: str, matches: int, concurrency: int, seed: int) -> str:
    """`arena ladder run` of `matches` quick matches on `cluster`; its standard output."""
    return _arena(
        *("ladder", "run", "--db", str(path), "--matches", str(matches), "--seed", str(seed)),
        *("--concurrency", str(concurrency), "--decision-ms", "500", "--bank-ms", "500", "--ray", cluster),
    )


def _command(trace: Path, *flags: str) -> str:
    return f"python {BOTS / 'ray_bot.py'} --port-file {{port_file}} --trace {trace} {' '.join(flags)}"


def test_a_ladder_on_ray_rates_every_set_once(cluster: str, servers: list[BotServer], tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    path = tmp_path / "ladder.db"
    store = LadderStore(path)
    store.registry.add_bot("remote0", address=f"127.0.0.1:{servers[0].port}")
    store.registry.add_bot("remote1", address=f"127.0.0.1:{servers[1].port}")
    store.registry.add_bot("started", command=_command(trace))
    store.close()
    out = _run_ladder(path, cluster, matches=8, concurrency=2, seed=7)
    assert "Played 8 matches (4 sets rated, 0 faults)" in out
    assert "void" not in out
    store = LadderStore(path)
    assert_ladder_invariants(store)
    # What the command bot wrote on the worker came back with each of its matches: its two seats each.
    for match in store.matches.finished():
        kept = [output.bot for output in store.outputs.of_match(match.id)]
        assert kept == (["started"] * 2 if "started" in match.team_bots else [])
    store.close()
    # The command bot was started on Ray workers only, for its checks as for its matches.
    started = trace.read_text().splitlines()
    assert started
    assert all(line.startswith("ray-worker") for line in started), started


def test_a_match_whose_worker_dies_is_played_again_and_stored_once(
    cluster: str, servers: list[BotServer], tmp_path: Path
) -> None:
    trace = tmp_path / "trace"
    marker = tmp_path / "killed"
    path = tmp_path / "ladder.db"
    store = LadderStore(path)
    store.registry.add_bot("remote0", address=f"127.0.0.1:{servers[0].port}")
    store.registry.add_bot("remote1", address=f"127.0.0.1:{servers[1].port}")
    store.registry.add_bot("killer", command=_command(trace, "--kill-worker-once", str(marker)))
    store.close()
    out = _run_ladder(path, cluster, matches=8, concurrency=2, seed=11)
    assert marker.exists()  # a worker was killed mid-match (while the other played on) ...
    assert not Path(f"/proc/{marker.read_text()}").exists()
    assert "Played 8 matches (4 sets rated, 0 faults)" in out, out  # ... its match played again, stored once
    assert "void" not in out
    store = LadderStore(path)
    assert_ladder_invariants(store)
    store.close()


def test_sixty_matches_on_ray_keep_every_invariant_with_a_worker_killed(
    cluster: str, servers: list[BotServer], database: str, tmp_path: Path
) -> None:
    """Issue 16's test of done: 3 bots and 60 matches on the Ray cluster, with the store on SQLite and on
    PostgreSQL, one worker process killed with SIGKILL mid-match; the same invariants on both (every set
    rated once, nothing lost, the standings equal to those recomputed from the stored matches)."""
    marker = tmp_path / "killed"
    store = LadderStore(database)
    store.registry.add_bot("remote0", address=f"127.0.0.1:{servers[0].port}")
    store.registry.add_bot("remote1", address=f"127.0.0.1:{servers[1].port}")
    store.registry.add_bot("killer", command=_command(tmp_path / "trace", "--kill-worker-once", str(marker)))
    store.close()
    out = _arena(
        *("ladder", "run", "--db", database, "--matches", "60", "--seed", "16", "--deal-cap", "2"),
        *("--concurrency", "2", "--decision-ms", "500", "--bank-ms", "500", "--ray", cluster),
        cwd=tmp_path,
    )
    assert marker.exists()
    assert not Path(f"/proc/{marker.read_text()}").exists()
    assert "Played 60 matches (30 sets rated, 0 faults)" in out, out
    store = LadderStore(database)
    try:
        assert_ladder_invariants(store)
        assert len(store.matches.finished()) == 60
    finally:
        store.close()


def test_a_match_whose_retries_run_out_makes_its_set_void_and_the_run_goes_on(
    cluster: str, servers: list[BotServer], tmp_path: Path
) -> None:
    marker = tmp_path / "killed"
    path = tmp_path / "ladder.db"
    store = LadderStore(path)
    store.registry.add_bot("remote0", address=f"127.0.0.1:{servers[0].port}")
    store.registry.add_bot(
        "killer", command=_command(tmp_path / "trace", "--kill-worker-always", str(marker))
    )
    store.close()
    out = _run_ladder(path, cluster, matches=2, concurrency=1, seed=5)
    # Each set's first match lost its worker in every attempt: the first and each of Ray's retries.
    assert len(marker.read_text().split()) == 2 * (1 + MATCH_RETRIES), out
    for set_id in (1, 2):
        assert (
            f"Set {set_id} was made void (never rated): arena error in rotation 0: WorkerCrashedError" in out
        )
    assert "2 matches failed by an error of the arena's own" in out
    store = LadderStore(path)
    try:
        assert store.sets.unfinished_sets() == []
        assert store.sets.rated_sets() == set()
        assert store.matches.finished() == []  # nothing of a lost attempt is stored
        assert (
            store.sets.void_reason(1)
            == store.sets.void_reason(2)
            == "arena error in rotation 0: WorkerCrashedError"
        )
    finally:
        store.close()


def test_ladder_run_on_ray_with_the_sample_bots(cluster: str, tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    out = _arena("ladder", "run", "--db", str(path), "--sample-bots", "--matches", "4", "--ray", cluster)
    assert "Played 4 matches (2 sets rated, 0 faults)" in out
    store = LadderStore(path)
    assert_ladder_invariants(store)
    store.close()


def test_ladder_run_on_ray_fails_in_one_line_without_ray(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert main(["ladder", "run", "--db", str(tmp_path / "ladder.db"), "--sample-bots", "--ray"]) == 1
    line = capsys.readouterr().err.strip()
    assert line == (
        "arena ladder run: error: --ray needs Ray, which is not installed: "
        "pip install 'fiftysix-arena[cluster]'"
    )


def test_ladder_run_on_ray_fails_in_one_line_when_nobody_listens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_ray()
    address = f"127.0.0.1:{free_port()}"
    assert main(["ladder", "run", "--db", str(tmp_path / "ladder.db"), "--ray", address]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith(f"arena ladder run: error: cannot reach the Ray cluster at {address}: ")


def test_a_cheating_bot_on_ray_workers_learns_no_hidden_card(cluster: str, tmp_path: Path) -> None:
    """The pool of each Ray worker keeps the fair-play rule too: no process sees a deal twice."""
    from tests.arena.ladder.cheater_ladder import run_cheater_ladder

    report = run_cheater_ladder(
        tmp_path, "command", players=4, concurrency=2, sets=2, ray=(cluster, _environment())
    )
    store = LadderStore(tmp_path / "arena.db")
    try:
        assert len(store.matches.finished()) == 4
    finally:
        store.close()
    # The cheater's processes ran on the workers, and their logs (where claims would be) were read.
    logs = list((tmp_path / "arena.db-logs").rglob("cheater-*.log"))
    assert logs
    assert all(log.parent.name.startswith("worker-") for log in logs)  # its checks ran there too
    assert report.total.claims == 0
    assert report.leaks == 0


def test_a_command_bot_whose_files_are_only_on_the_workers_is_checked_and_played_there(
    cluster: str, servers: list[BotServer], tmp_path: Path
) -> None:
    trace = tmp_path / "trace"
    command = f"python -m {WORKER_ONLY} --port-file {{port_file}} --trace {trace}"
    # The runner's machine (here: the runs' environment) cannot start it.
    where = subprocess.run(
        ["python", "-m", WORKER_ONLY], env=_environment(), capture_output=True, text=True, check=False
    )
    assert f"No module named {WORKER_ONLY}" in where.stderr
    path = tmp_path / "ladder.db"
    store = LadderStore(path)
    store.registry.add_bot("remote0", address=f"127.0.0.1:{servers[0].port}")
    store.registry.add_bot("onworkers", command=command)
    store.close()
    out = _run_ladder(path, cluster, matches=2, concurrency=2, seed=3)
    assert "Played 2 matches (1 sets rated, 0 faults)" in out, out
    assert "marked down" not in out
    assert "put back" not in out  # its check passed the first time
    assert "void" not in out
    started = trace.read_text().splitlines()
    assert started
    assert all(line.startswith("ray-worker") for line in started), started
    store = LadderStore(path)
    try:
        assert_ladder_invariants(store)
        assert not store.registry.down_bots()
    finally:
        store.close()


def test_matches_on_ray_are_live_behind_the_gate_and_a_lost_match_is_played_again_or_its_set_void(
    cluster: str, tmp_path: Path
) -> None:
    """Two sets between a remote rule bot and a command rule bot (matches of more than a deal) that kills
    its worker twice: at its first decision
    (nothing of the set shown yet: the match is played again, under a new id) and, in the same set, past
    the first deal once the set has been shown (the set is made void). Every event of every match came
    back to the runner in order and went through the gate: what was written to the live table is what
    the matches played, each match's rows once and in order, no move before every rotation ended its
    deal (live_timeline.py)."""
    once, shown = tmp_path / "killed-once", tmp_path / "killed-when-shown"
    path = tmp_path / "ladder.db"
    remote = start(RuleBot)
    try:
        store = LadderStore(path)
        store.registry.add_bot("remote", address=f"127.0.0.1:{remote.port}")
        flags = ("--kill-worker-once", str(once), "--kill-worker-when-shown", str(shown))
        command = _command(tmp_path / "trace", *flags, "--ladder", str(path), "--rules")
        store.registry.add_bot("killer", command=command)
        store.close()
        timeline_file = tmp_path / "timeline.json"
        runner = [sys.executable, "-m", "tests.arena.ladder.ray_live_runner", str(path), cluster]
        finished = subprocess.run(
            [*runner, str(timeline_file), "--matches", "4", "--seed", "26", "--decision-ms", "20000"],
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    finally:
        remote.stop(0)
    assert finished.returncode == 0, finished.stderr[-3000:]
    for marker in (once, shown):
        assert not Path(f"/proc/{marker.read_text()}").exists()  # a worker was killed each time
    timeline = Timeline.read(timeline_file)
    store = LadderStore(path)
    try:
        assert store.sets.void_reason(1) is not None
        assert store.sets.void_reason(1).endswith(": WorkerCrashedError")  # lost after it was shown
        assert store.sets.rated_sets() == {2}
        assert store.sets.unfinished_sets() == []
        assert sorted(match.rotation for match in store.matches.finished(2)) == [0, 1]
        assert assert_live_was_fair(timeline, store) > 0
        # The match lost before its set was shown was played again under a new id; what its first
        # attempt had shown (who sits where) was deleted with it, never written again under its id.
        by_rotation: dict[str, list[str]] = {}
        for _began, _seed, rotation, match_id in timeline.attempts:
            by_rotation.setdefault(rotation, []).append(match_id)
        replayed = [attempts for attempts in by_rotation.values() if len(attempts) > 1]
        assert replayed
        for attempts in replayed:
            first = [
                event["type"] for _at, match_id, _seq, event in timeline.written if match_id == attempts[0]
            ]
            assert first in ([], ["match_start"])
        assert store.live.live_matches(fresh_s=3600.0) == []  # every match's rows deleted or stored
    finally:
        store.close()
