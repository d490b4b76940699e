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

Last, the set-up and tear-down of a match with the channel to each process kept across its matches (what
the ladder does) against a new channel per match, alternating runs at concurrency 1, and their ratio.
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/arena.py shares its name with the `arena` package: take this folder off the import path so that
# `import arena` finds the package, not that script.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import asyncio
import importlib.util
import statistics
import tempfile
import time
from pathlib import Path

import structlog

from arena.ladder import Ladder, LadderReport, LadderSettings, LadderStore, LocalBots, idle_limit_for

SAMPLES = {
    "random": "python -m sample_bots.random_bot --port 0 --port-file {port_file}",
    "rules": "python -m sample_bots.rule_bot --port 0 --port-file {port_file}",
}


async def ladder_run(
    folder: Path, matches: int, concurrency: int, kept_channels: bool = True
) -> tuple[LadderReport, float]:
    """One ladder run; returns its report and the wall time of the matches alone. Without
    `kept_channels`, every match opens its own channels, as before they were kept."""
    store = LadderStore(folder / f"ladder-{concurrency}-{time.perf_counter_ns()}.db")
    for name, command in SAMPLES.items():
        store.add_bot(name, command=command)
    local_bots = LocalBots(folder / "logs", idle_limit=idle_limit_for(concurrency, 4))
    if not kept_channels:
        setattr(local_bots, "channels", lambda addresses: {})  # noqa: B010 (a method replaced)
    try:
        for bot in store.bots():
            # Start the processes before the clock runs: two seats a team, `concurrency` matches at once.
            local_bots.release(await local_bots.acquire(bot, 2 * concurrency))
        ladder = Ladder(store, LadderSettings(matches=matches, concurrency=concurrency, seed=11), local_bots)
        started = time.perf_counter()
        report = await ladder.run()
        return report, time.perf_counter() - started
    finally:
        await local_bots.stop_all()
        store.close()


def transport_round_trip() -> float:
    """p50 seconds of a raw decision round trip to an instant bot in another process (bench/arena.py's)."""
    spec = importlib.util.spec_from_file_location("bench_arena", Path(__file__).with_name("arena.py"))
    assert spec is not None
    assert spec.loader is not None
    bench_arena = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_arena)
    process, port = bench_arena.start_bot_process(
        [str(Path(__file__).with_name("arena.py")), "--serve-instant-bot"]
    )
    try:
        times = asyncio.run(bench_arena.raw_ping_pong(port, bench_arena.recorded_requests(600)))
    finally:
        process.terminate()
        process.wait(10)
    return float(statistics.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=24, help="matches per concurrency level (default 24)")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
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


if __name__ == "__main__":
    main()
