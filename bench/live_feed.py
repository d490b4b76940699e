"""The cost of watching: what publishing a match's public events adds to each decision of a ladder.

Run by hand: `python bench/live_feed.py [--matches 200]`. It plays random 4-player matches in the
engine alone (no bots, no gRPC: the cost measured is the hook's, not the transport's) and, for every
move, builds its public events as the runner's `on_event` hook does and hands them to the ladder's
`LiveFeed` on a real ladder file, inside an event loop, as a ladder run does. It prints, per decision:

- the time spent in the hook (building the events, JSON, the batch, its timer) with the writes;
- the writes alone: transactions per match and milliseconds per transaction.

The matches are played at the engine's own speed, far faster than over gRPC, so each batch gathers
more events than in a real run and a real run writes more often: compare `--pace-us`, which waits that
long per decision (a ladder's decision takes about 500 us), so batches gather as in a run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.ladder.live_feed import LiveFeed
from arena.ladder.store import LadderStore, LiveStore
from arena.runner import public_events
from fiftysix.engine import Match, MatchRules


class TimedLive(LiveStore):
    """The store's live events, timing their writes."""

    writes: list[float]

    def add_live_events(self, match_id: str, events: Any) -> None:
        started = time.perf_counter()
        super().add_live_events(match_id, events)
        self.writes.append(time.perf_counter() - started)


async def play(live: TimedLive, matches: int, pace_s: float) -> tuple[float, int]:
    """Seconds spent in the hook, and decisions."""
    rng = random.Random(1)
    spent = 0.0
    decisions = 0
    for number in range(matches):
        feed = LiveFeed(live, f"bench-{number}")
        match = Match(MatchRules(4), seed=number)
        names = ["a", "b", "a", "b"]
        started = time.perf_counter()
        feed.publish(public_events.match_start(f"bench-{number}", match.rules, names))
        feed.publish(public_events.deal_start(match.deal_number, match.dealer, match.seats))
        spent += time.perf_counter() - started
        while not match.is_over:
            seat = match.deal.to_act
            move = rng.choice(match.legal_moves())
            deal = match.deal_number
            result = match.apply(seat, move)
            decisions += 1
            started = time.perf_counter()
            feed.publish(public_events.move_made(deal, seat, move))
            if result is not None:
                feed.publish(public_events.deal_end(result))
                if not match.is_over:
                    feed.publish(public_events.deal_start(match.deal_number, match.dealer, match.seats))
            spent += time.perf_counter() - started
            if pace_s:
                await asyncio.sleep(pace_s)  # the timer's writes run here, as between a run's decisions
        feed.close()
        # Storing the match deletes its events in the same transaction; here, apart and not timed.
        live.delete_live_events(f"bench-{number}")
    return spent, decisions


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=200, help="matches (default 200)")
    parser.add_argument(
        "--pace-us", type=int, default=500, help="wait per decision, microseconds (default 500)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = LadderStore(Path(folder) / "ladder.db")
        live = TimedLive(store.file)
        live.writes = []
        try:
            spent, decisions = asyncio.run(play(live, args.matches, args.pace_us / 1e6))
        finally:
            store.close()
    writes = live.writes
    print(f"{args.matches} matches, {decisions} decisions, {args.pace_us} us a decision between moves")
    print(f"hook with its writes: {spent / decisions * 1e6:.1f} us per decision")
    print(
        f"writes: {len(writes) / args.matches:.1f} transactions a match, "
        f"median {statistics.median(writes) * 1e3:.2f} ms, "
        f"{sum(writes) / decisions * 1e6:.1f} us per decision"
    )


if __name__ == "__main__":
    main()
