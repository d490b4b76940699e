"""Ladder throughput: matches per minute at concurrency 1, 2 and 4, and where the time goes.

Run by hand: `python bench/ladder.py [--matches 24]`. For each concurrency it makes a fresh ladder file,
registers the two sample bots as local commands (the arena starts them, one process per seat), plays the
same seeded matches and prints:

- matches per minute (wall clock, bot start-up excluded: the bots are started before the clock runs);
- where a match's time goes, summed over matches: the arena's own work per decision (engine, view,
  encoding, checking), waiting for the bots (gRPC transport plus the bots' own thinking, split using a
  raw stream ping-pong measured in the same run), match set-up and tear-down (handshake, streams,
  end-of-deal messages), and storage (writing matches, rating sets).

With concurrency above 1 the per-match times overlap, so their sum exceeds the wall time.

Then the set-up and tear-down of a match with the channel to each process kept across its matches (what
the ladder does) against a new channel per match, alternating runs at concurrency 1, and their ratio.

Last, what fair play costs (`--isolation`, or alone with `--isolation-only`): at concurrency 1, 2 and 4,
the ladder as it plays (no process plays two matches on the same deals: each rotation of a set gets
processes that have not seen its deals) against a pool that reuses idle processes for any match
(`isolate_deals=False`), alternating in rounds from a cold start (no process started before the clock:
starting them is the cost), with matches per minute, processes started per match and the ratio of the
two rates.

With `--ray` (the `cluster` extra), instead: matches per minute against instant bots
(bench/arena_overhead.py's, two processes reached by address, so that the bots cost next to nothing and
the arena's own work shows) played in process and on local Ray clusters (tests/ray_cluster.py's: `ray
start` sessions in temporary folders, stopped at the end) of the same 2 CPUs, as one node of 2 CPUs and
as two nodes of 1 (`--nodes 1` or `--nodes 2` for one of them), by 1 and by 2 workers at once
(`--concurrency` 1 and 2), alternating in rounds; the medians, their ratios to the in-process runner and
those of 2 nodes to 1; and the runner's own time per match (storing and rating each match), which bounds
the rate of one runner however many workers play. `--db URL` keeps the ladders in that PostgreSQL
database instead of SQLite files (each run empties it first).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

import arena_overhead
import structlog

from arena.ladder import Ladder, LadderReport, LadderSettings
from arena.ladder.bots import LocalBots, idle_limit_for
from arena.ladder.match_play import MatchPlayer
from arena.ladder.store import LadderStore

ROOT: Final = Path(__file__).resolve().parents[1]
"""The checkout, whose tests/ray_cluster.py starts the local clusters of `--ray`."""
INSTANT_BOT: Final = [arena_overhead.__file__, "--serve-instant-bot"]
"""The command line of bench/arena_overhead.py's instant bot (run by this interpreter)."""
SAMPLES = {
    "random": "python -m sample_bots.random_bot --port 0 --port-file {port_file}",
    "rules": "python -m sample_bots.rule_bot --port 0 --port-file {port_file}",
}


async def isolation_run(folder: Path, matches: int, concurrency: int, isolate: bool) -> tuple[float, float]:
    """One ladder run of the two sample bots from a cold start; matches per minute (bot starts included)
    and processes started per match."""
    store = LadderStore(folder / f"isolation-{concurrency}-{isolate}-{time.perf_counter_ns()}.db")
    for name, command in SAMPLES.items():
        store.registry.add_bot(name, command=command)
    local_bots = LocalBots(folder / "logs", idle_limit=idle_limit_for(concurrency, 4), isolate_deals=isolate)
    try:
        settings = LadderSettings(matches=matches, concurrency=concurrency, seed=11)
        report, wall = await timed_run(Ladder(store, settings, local_bots))
        return report.matches / wall * 60, local_bots.started / max(1, report.matches)
    finally:
        await local_bots.stop_all()
        store.close()


def isolation_comparison(matches: int, rounds: int) -> None:
    """Matches per minute and processes started per match, isolated against reusing, alternating."""
    levels = (1, 2, 4)
    rates: dict[tuple[int, bool], list[float]] = {
        (level, isolate): [] for level in levels for isolate in (True, False)
    }
    starts: dict[tuple[int, bool], list[float]] = {key: [] for key in rates}
    with tempfile.TemporaryDirectory() as folder:
        for _round in range(rounds):
            for level in levels:
                for isolate in (True, False):
                    rate, started = asyncio.run(isolation_run(Path(folder), matches, level, isolate))
                    rates[level, isolate].append(rate)
                    starts[level, isolate].append(started)
    print("")
    print(f"Fair play's cost: {matches} 4-player matches a run from a cold start, medians of {rounds} rounds")
    print(
        f"{'concurrency':>11}  {'isolated/min':>12}  {'reusing/min':>11}  {'ratio':>5}  "
        f"{'starts/match':>12}  {'reusing':>7}"
    )
    for level in levels:
        isolated, reusing = (statistics.median(rates[level, isolate]) for isolate in (True, False))
        started, started_reusing = (statistics.median(starts[level, isolate]) for isolate in (True, False))
        print(
            f"{level:>11}  {isolated:>12.0f}  {reusing:>11.0f}  {isolated / reusing:>5.2f}  "
            f"{started:>12.2f}  {started_reusing:>7.2f}"
        )


async def ladder_run(
    folder: Path, matches: int, concurrency: int, kept_channels: bool = True
) -> tuple[LadderReport, float]:
    """One ladder run; returns its report and the wall time of the matches alone. Without
    `kept_channels`, every match opens its own channels, as a pool that kept none would."""
    store = LadderStore(folder / f"ladder-{concurrency}-{time.perf_counter_ns()}.db")
    for name, command in SAMPLES.items():
        store.registry.add_bot(name, command=command)
    local_bots = LocalBots(folder / "logs", idle_limit=idle_limit_for(concurrency, 4))
    if not kept_channels:
        setattr(local_bots, "channels", lambda addresses: {})  # noqa: B010 (a method replaced)
    try:
        for bot in store.registry.bots():
            # Start the processes before the clock runs: two seats a team, `concurrency` matches at once.
            local_bots.release(await local_bots.acquire(bot, 2 * concurrency))
        return await timed_run(
            Ladder(store, LadderSettings(matches=matches, concurrency=concurrency, seed=11), local_bots)
        )
    finally:
        await local_bots.stop_all()
        store.close()


async def timed_run(ladder: Ladder) -> tuple[LadderReport, float]:
    """Run `ladder`; its report and the wall time of its matches."""
    started = time.perf_counter()
    report = await ladder.run()
    return report, time.perf_counter() - started


def transport_round_trip() -> float:
    """p50 seconds of a raw decision round trip to an instant bot in another process
    (bench/arena_overhead.py's)."""
    process, port = arena_overhead.start_bot_process(INSTANT_BOT)
    try:
        times = asyncio.run(arena_overhead.raw_ping_pong(port, arena_overhead.recorded_requests(600)))
    finally:
        process.terminate()
        process.wait(10)
    return float(statistics.median(times))


async def instant_run(
    db: str, ports: list[int], matches: int, concurrency: int, player: MatchPlayer | None, logs: Path
) -> tuple[LadderReport, float]:
    """One ladder run of two instant bots reached by address; its report and the wall time of the
    matches. `player`: where the matches are played (None: in process)."""
    if db.startswith("postgresql"):
        from sqlalchemy import create_engine, text  # the cluster extra's

        engine = create_engine(db.replace("postgresql://", "postgresql+psycopg://", 1))
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        engine.dispose()
    store = LadderStore(db)
    for index, port in enumerate(ports):
        store.registry.add_bot(f"instant{index}", address=f"127.0.0.1:{port}")
    local_bots = LocalBots(logs, idle_limit=0)
    try:
        settings = LadderSettings(matches=matches, concurrency=concurrency, seed=11)
        return await timed_run(Ladder(store, settings, local_bots, matches=player))
    finally:
        await local_bots.stop_all()
        store.close()


RAY_ROWS: Final = {1: "Ray 1 node", 2: "Ray 2 nodes"}
"""How each cluster of `ray_comparison` shows in its table."""


def ray_comparison(matches: int, rounds: int, db: str | None, nodes: list[int]) -> None:
    """Matches per minute in process and on Ray clusters of 1 and of 2 nodes (the same 2 CPUs: one node
    of 2, or two of 1) with 1 and 2 matches at once, alternating in rounds; the runner's cost."""
    from arena.ladder.ray_play import RayMatches  # the cluster extra's

    # The tests' local clusters (tests/ray_cluster.py): every port of every node its own, so that this
    # benchmark runs beside the tests.
    sys.path.insert(0, str(ROOT))
    from tests.ray_cluster import NodeSpec, environment, ray_cluster

    bots = [arena_overhead.start_bot_process(INSTANT_BOT) for _ in range(2)]
    ports = [port for _process, port in bots]
    shapes = {1: [NodeSpec(cpus=2)], 2: [NodeSpec(cpus=1), NodeSpec(cpus=1)]}
    rows = ["in process", *(RAY_ROWS[count] for count in nodes)]
    rates: dict[tuple[str, int], list[float]] = {(row, workers): [] for row in rows for workers in (1, 2)}
    runner_ms: dict[tuple[str, int], list[float]] = {key: [] for key in rates}
    # One token for every cluster and for this process, their driver.
    cluster_environment = environment()
    os.environ.update({key: cluster_environment[key] for key in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")})
    try:
        with contextlib.ExitStack() as clusters, tempfile.TemporaryDirectory() as folder:
            addresses = {
                RAY_ROWS[count]: clusters.enter_context(
                    ray_cluster(shapes[count], cluster_environment)
                ).address
                for count in nodes
            }
            logs = Path(folder) / "logs"
            runs = 0

            def measure(row: str, player: MatchPlayer | None, workers: int, kept: bool = True) -> None:
                nonlocal runs
                runs += 1
                where = db or str(Path(folder) / f"ladder-{runs}.db")
                report, wall = asyncio.run(instant_run(where, ports, matches, workers, player, logs))
                if kept:
                    rates[row, workers].append(report.matches / wall * 60)
                    runner_ms[row, workers].append(report.storage_seconds / report.matches * 1e3)

            for _round in range(rounds):
                for row in rows:
                    if row not in addresses:
                        for workers in (1, 2):
                            measure(row, None, workers)
                        continue
                    # One driver joins one cluster at a time: each round joins anew, and a run not
                    # counted starts the new job's worker processes on every node.
                    on_ray = RayMatches(addresses[row], LocalBots(logs, idle_limit=0))
                    try:
                        measure(row, on_ray, 2, kept=False)
                        for workers in (1, 2):
                            measure(row, on_ray, workers)
                    finally:
                        on_ray.close()
    finally:
        for process, _port in bots:
            process.kill()
            process.wait()
    print(f"Two instant bots, {matches} 4-player matches a run, medians of {rounds} alternating rounds")
    print("(Ray: the same 2 CPUs, one node of 2 or two nodes of 1; ratio: to in process at as many at once)")
    print(
        f"{'played':>11}  {'at once':>7}  {'matches/min':>11}  {'ratio':>5}  {'to 1 node':>9}"
        f"  {'storing ms/match':>16}"
    )
    for (row, workers), values in rates.items():
        rate = statistics.median(values)
        base = statistics.median(rates["in process", workers])
        one_node = rates.get((RAY_ROWS[1], workers))
        to_one_node = f"{rate / statistics.median(one_node):.2f}" if one_node and row != "in process" else "-"
        runner = statistics.median(runner_ms[row, workers])
        print(
            f"{row:>11}  {workers:>7}  {rate:>11.0f}  {rate / base:>5.2f}  {to_one_node:>9}  {runner:>16.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=24, help="matches per concurrency level (default 24)")
    parser.add_argument("--ray", action="store_true", help="compare in-process and Ray runners (see above)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds with --ray (default 3)")
    parser.add_argument("--db", help="with --ray: a PostgreSQL URL to keep the ladders in, emptied each run")
    parser.add_argument(
        "--nodes",
        type=int,
        nargs="+",
        choices=(1, 2),
        default=[1, 2],
        help="with --ray: the clusters, of 1 node and of 2 (default: both, side by side)",
    )
    parser.add_argument("--isolation", action="store_true", help="end with fair play's cost (see above)")
    parser.add_argument("--isolation-only", action="store_true", help="only fair play's cost")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    if args.ray:
        ray_comparison(args.matches, args.rounds, args.db, sorted(set(args.nodes)))
        return
    if args.isolation_only:
        isolation_comparison(args.matches, args.rounds)
        return
    with tempfile.TemporaryDirectory() as folder:
        print(
            f"Ladder of the two sample bots, {args.matches} 4-player matches per run, bots as local commands"
        )
        print(f"{'concurrency':>11}  {'matches/min':>11}  {'decisions/s':>11}")
        reports = []
        for concurrency in (1, 2, 4):
            report, wall = asyncio.run(ladder_run(Path(folder), args.matches, concurrency))
            reports.append((concurrency, report, wall))
            print(f"{concurrency:>11}  {report.matches / wall * 60:>11.0f}  {report.decisions / wall:>11.0f}")
    transport = transport_round_trip()
    print("")
    print(f"Raw stream round trip to an instant bot (the transport alone): {transport * 1e6:.0f} us p50")
    print("Where the time goes (sums over the matches of each run, seconds):")
    print(
        f"{'concurrency':>11}  {'arena work':>10}  {'gRPC':>7}  {'bots':>7}  {'setup':>7}  {'storage':>8}"
        f"  {'total':>7}"
    )
    for concurrency, report, _wall in reports:
        arena_work = report.decision_seconds - report.waited_seconds
        grpc_time = min(report.waited_seconds, transport * report.decisions)
        bots = report.waited_seconds - grpc_time
        setup = report.match_seconds - report.decision_seconds
        total = report.match_seconds + report.storage_seconds
        print(
            f"{concurrency:>11}  {arena_work:>10.2f}  {grpc_time:>7.2f}  {bots:>7.2f}  {setup:>7.2f}"
            f"  {report.storage_seconds:>8.3f}  {total:>7.2f}"
        )
    print("")
    for concurrency, report, _wall in reports:
        per_decision = (report.decision_seconds - report.waited_seconds) / report.decisions * 1e6
        waiting = report.waited_seconds / report.decisions * 1e6
        storage = report.storage_seconds / max(1, report.matches) * 1e3
        decisions = report.decisions / max(1, report.matches)
        print(
            f"concurrency {concurrency}: per decision {per_decision:.0f} us of arena work and"
            f" {waiting:.0f} us waiting for the bot; {storage:.1f} ms of storage per match;"
            f" {decisions:.0f} decisions a match"
        )
    setups: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as folder:
        for _round in range(3):
            for kept in (True, False):
                report, _wall = asyncio.run(ladder_run(Path(folder), args.matches, 1, kept_channels=kept))
                setups[kept].append((report.match_seconds - report.decision_seconds) / report.matches)
    kept_ms, fresh_ms = (statistics.median(setups[kept]) * 1e3 for kept in (True, False))
    print("")
    print(
        f"Set-up and tear-down per match (median of 3 runs each, alternating): channels kept {kept_ms:.1f} ms"
        f", a new channel per match {fresh_ms:.1f} ms; ratio {kept_ms / fresh_ms:.2f}"
    )
    if args.isolation:
        isolation_comparison(args.matches, args.rounds)


if __name__ == "__main__":
    main()
