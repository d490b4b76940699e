"""A bot that plays a uniformly random legal move: the baseline every bot should beat.

Run it: `python -m sample_bots.random_bot --port 50051`.
"""

from __future__ import annotations

import random

from sample_bots.run import run_bot
from sdk import Bot, BotView, MatchInfo, Move


class RandomBot(Bot):
    """Picks uniformly among the legal moves (so it bids high and often: hundreds of bids, one pass)."""

    name = "random"
    version = "1.0.0"
    author = "fiftysix arena"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def on_match_start(self, match: MatchInfo) -> None:
        """Seed from the match and seat, so a rerun of a match plays the same moves."""
        self.rng.seed(f"{match.match_id}/{match.seat}")

    def decide(self, view: BotView) -> Move:
        """A random legal move."""
        return self.rng.choice(view.legal_moves)


if __name__ == "__main__":
    run_bot(RandomBot)
