"""Ladder storage at scale: does the cost of a match stay flat as the history grows?

Run by hand: `python bench/ladder_scale.py [--sizes 1000 10000 100000] [--rounds 5]`. It fills one
ladder file per size in a temporary folder through the store's own API (each match stored in its own
transaction by `save_match`, each set rated by `rate_set`, as a run does; game records of about 3 KB,
one match in ten with a fault, rarely a forfeit), saying how long each fill took. Then, alternating the
sizes round by round so that the machine's drift hits them alike, it plays the ladder's bookkeeping of
sets of 4-player matches on each file, without the games: pairing (`RatingPairing.next_bots`), creating the
set, storing each match, the probation check of its bots, rating the set. It prints the cost per match
at each size, the time of the standings that `ladder show` prints, and the ratio of the cost at the
largest size to the cost at the smallest (the target: at most 1.5).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import structlog

from arena.cli.listings import format_standings
from arena.ladder import Ladder, LadderSettings, ladder_standings, rate_set, store_match
from arena.ladder.bots import LocalBots
from arena.ladder.store import DuplicateSet, FinishedMatch, LadderStore
from fiftysix.wire import FaultCause, FaultRecord

BOTS = [f"bot-{number:02}" for number in range(12)]
SETS_PER_ROUND = 50
"""Sets (of 2 matches each) measured per size per round."""


def record(rng: random.Random) -> dict[str, object]:
    """A game record of about 3 KB: the shape matters less than its size, which the store carries."""
    return {
        "version": 1,
        "deals": [
            {"number": deal, "moves": [rng.randrange(10**6) for _ in range(60)]} for deal in range(1, 5)
        ],
    }


def store_set(store: LadderStore, ladder: Ladder, rng: random.Random, bots: list[str]) -> DuplicateSet:
    """Create a set of `bots`, store its matches with the probation check of each, and rate it."""
    duplicate = store.sets.create_set(4, "pairs", None, rng.getrandbits(128), bots, isolated=False)
    for rotation in range(duplicate.rotations):
        ranking = (1, 2) if rng.random() < 0.5 else (2, 1)
        faults = []
        if rng.random() < 0.1:
            # Mostly played on by a substitute: no bot goes on probation in a long fill.
            faults.append(FaultRecord(1, 1, FaultCause.TIMEOUT, "slow", 1, substituted=rng.random() < 0.9))
        match_id = f"{rng.getrandbits(64):016x}"  # as random as the ladder's (new_match_id), but seeded
        finished = FinishedMatch(
            match_id, duplicate, rotation, "one_team_left", ranking, tuple(faults), record(rng), 900, 1.0
        )
        store_match(store.matches, finished)
        for name in duplicate.team_bots(rotation):
            ladder.player.check_probation(name)
    rate_set(store, duplicate)
    return duplicate


def ladder_on(store: LadderStore, folder: Path, seed: int) -> Ladder:
    settings = LadderSettings(matches=None, seed=seed)
    return Ladder(store, settings, LocalBots(folder / "logs"))


def fill(path: Path, matches: int, folder: Path) -> float:
    """A ladder file holding `matches` matches; returns the seconds it took."""
    started = time.perf_counter()
    store = LadderStore(path)
    for name in BOTS:
        store.registry.add_bot(name, address="127.0.0.1:1")
    ladder = ladder_on(store, folder, 1)
    rng = random.Random(matches)
    for _ in range(matches // 2):
        store_set(store, ladder, rng, rng.sample(BOTS, 2))
    store.close()
    return time.perf_counter() - started


def measure(path: Path, folder: Path, seed: int) -> tuple[float, float]:
    """Seconds per match of the ladder's bookkeeping (pairing, storing, probation, rating) over
    SETS_PER_ROUND sets, and seconds of the standings of `ladder show`."""
    store = LadderStore(path)
    ladder = ladder_on(store, folder, seed)
    rng = random.Random(seed)
    started = time.perf_counter()
    for _ in range(SETS_PER_ROUND):
        bots = ladder.pairing.next_bots()
        assert bots is not None
        store_set(store, ladder, rng, bots)
    per_match = (time.perf_counter() - started) / (2 * SETS_PER_ROUND)
    started = time.perf_counter()
    format_standings(ladder_standings(store))
    show = time.perf_counter() - started
    store.close()
    return per_match, show


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    sizes: list[int] = sorted(args.sizes)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        paths = {size: folder / f"ladder-{size}.db" for size in sizes}
        for size in sizes:
            seconds = fill(paths[size], size, folder)
            megabytes = paths[size].stat().st_size / 1e6
            print(f"filled {size:>7} matches in {seconds:6.1f} s ({megabytes:.0f} MB)", flush=True)
        per_match: dict[int, list[float]] = {size: [] for size in sizes}
        show: dict[int, list[float]] = {size: [] for size in sizes}
        for round_number in range(args.rounds):
            order = sizes if round_number % 2 == 0 else sizes[::-1]
            for size in order:
                cost, shown = measure(paths[size], folder, 100 + round_number)
                per_match[size].append(cost)
                show[size].append(shown)
    print("")
    print(f"{'stored':>8}  {'per match (median)':>18}  {'ladder show':>11}")
    for size in sizes:
        print(
            f"{size:>8}  {statistics.median(per_match[size]) * 1e3:>15.2f} ms"
            f"  {statistics.median(show[size]) * 1e3:>8.2f} ms"
        )
    smallest, largest = sizes[0], sizes[-1]
    ratio = statistics.median(per_match[largest]) / statistics.median(per_match[smallest])
    verdict = "within" if ratio <= 1.5 else "above"
    print(f"cost per match at {largest} / at {smallest}: {ratio:.2f} ({verdict} the target of 1.5)")


if __name__ == "__main__":
    main()
