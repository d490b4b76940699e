"""`python -m tests.arena.ladder.ray_live_runner LADDER ADDRESS TIMELINE [options]`: a ladder run on the
Ray cluster at ADDRESS as `arena ladder run --ray` plays it, noting its live timeline (live_timeline.py)
and writing it to TIMELINE as JSON. In a process of its own, since Ray's driver changes its process."""

from __future__ import annotations

import argparse
import asyncio
import functools
from pathlib import Path

from arena.ladder import Ladder, LadderSettings, set_play
from arena.ladder.bots import LocalBots
from arena.ladder.live_feed import LiveFeed
from arena.ladder.live_gate import Publish
from arena.ladder.match_play import MatchOrder, NotStarted, PlayedMatch, Replay
from arena.ladder.ray_play import RayMatches
from arena.ladder.run_bots import ladder_bots
from arena.sandbox.bubblewrap import Sandbox
from fiftysix.wire import TimeControl
from tests.arena.ladder.live_timeline import Timeline, watched_store


class WatchedRay(RayMatches):
    """Plays on Ray, noting every public event as it reaches the runner, before the gate takes it."""

    def __init__(self, address: str, local_bots: LocalBots, timeline: Timeline) -> None:
        super().__init__(address, local_bots)
        self.timeline = timeline

    async def play(
        self,
        order: MatchOrder,
        not_started: NotStarted,
        on_event: Publish | None,
        replay: Replay | None = None,
    ) -> PlayedMatch | None:
        noted, replayed = self.timeline.watch(order, on_event, replay)
        return await super().play(order, not_started, noted, replayed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("ladder", type=Path)
    parser.add_argument("address")
    parser.add_argument("timeline", type=Path)
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--deal-cap", type=int, default=3)
    parser.add_argument("--decision-ms", type=int, default=500)
    args = parser.parse_args()
    # Written as soon as released, as in test_fair_live.py: quick matches would otherwise be stored (and
    # their waiting events dropped) before a batch is due.
    set_play.LiveFeed = functools.partial(LiveFeed, interval_s=0.0)  # type: ignore[misc]
    timeline = Timeline()
    store = watched_store(args.ladder, timeline)
    settings = LadderSettings(
        matches=args.matches,
        concurrency=args.concurrency,
        seed=args.seed,
        deal_cap=args.deal_cap,
        time_control=TimeControl(args.decision_ms, args.decision_ms),
    )
    local_bots = ladder_bots(store, Sandbox(), idle_limit=8)
    matches = WatchedRay(args.address, local_bots, timeline)

    async def run() -> None:
        try:
            await Ladder(store, settings, local_bots, matches=matches).run()
        finally:
            await local_bots.stop_all()

    try:
        asyncio.run(run())
    finally:
        matches.close()
        store.close()
        args.timeline.write_text(timeline.to_json())


if __name__ == "__main__":
    main()
