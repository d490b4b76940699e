"""Ladder memory: does a long run's memory stay flat?

Run by hand: `python bench/ladder_memory.py [--matches 2000] [--early 200]`. It plays a real ladder in
this process (the sample bots as local commands, so their memory is theirs, not the runner's): short
4-player matches (one deal), two at a time, and reads the runner's resident memory (VmRSS, Linux) after
`--early` matches and after the last. It prints both and their ratio (the target: at most 1.2). A run
that kept every match's outcome grew by tens of kilobytes a match; one that keeps sums stays flat.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from pathlib import Path

import structlog

from arena.ladder import Ladder, LadderReport, LadderSettings
from arena.ladder.bots import LocalBots, idle_limit_for
from arena.ladder.store import LadderStore
from arena.runner import MatchOutcome

SAMPLES = {
    "random": "python -m sample_bots.random_bot --port 0 --port-file {port_file}",
    "rules": "python -m sample_bots.rule_bot --port 0 --port-file {port_file}",
}
CONCURRENCY = 2


def resident_kib() -> int:
    """This process's resident memory in KiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit("VmRSS not found: this benchmark reads Linux's /proc")


async def run(folder: Path, matches: int, early: int) -> tuple[int, int, float]:
    """Play the ladder; the resident memory after `early` matches and after the last, and the seconds."""
    store = LadderStore(folder / "ladder.db")
    for name, command in SAMPLES.items():
        store.registry.add_bot(name, command=command)
    local_bots = LocalBots(folder / "logs", idle_limit=idle_limit_for(CONCURRENCY, 4))
    samples: dict[str, int] = {}

    def sample(outcome: MatchOutcome, report: LadderReport) -> None:
        if report.matches == early:
            gc.collect()
            samples["early"] = resident_kib()

    settings = LadderSettings(matches=matches, concurrency=CONCURRENCY, deal_cap=1, seed=5)
    ladder = Ladder(store, settings, local_bots, on_match=sample)
    started = time.perf_counter()
    try:
        await ladder.run()
        gc.collect()
        samples["late"] = resident_kib()
    finally:
        await local_bots.stop_all()
        store.close()
    return samples["early"], samples["late"], time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--early", type=int, default=200)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    with tempfile.TemporaryDirectory(prefix="ladder-memory-") as folder:
        early, late, seconds = asyncio.run(run(Path(folder), args.matches, args.early))
    print(f"{args.matches} matches in {seconds:.0f} s, {CONCURRENCY} at a time")
    print(f"runner's resident memory after {args.early:>5} matches: {early / 1024:7.1f} MiB")
    print(f"runner's resident memory after {args.matches:>5} matches: {late / 1024:7.1f} MiB")
    print(f"ratio: {late / early:.3f} (target: at most 1.2)")


if __name__ == "__main__":
    main()
