"""The compliance check's own opponent in whole matches: an SDK bot, served in this process."""

from __future__ import annotations

import random

from fiftysix.players import RandomPlayer
from sdk import Bot, BotView, MatchInfo, Move


class CheckOpponent(Bot):
    """Random legal cards and a cautious random auction (`RandomPlayer`), seeded by match and seat so
    that a check replays the same way."""

    name = "check-bot-opponent"

    def __init__(self) -> None:
        self.player = RandomPlayer(random.Random(0))

    def on_match_start(self, match: MatchInfo) -> None:
        """Seed from the match and seat."""
        self.player = RandomPlayer(random.Random(f"{match.match_id}/{match.seat}"))

    def decide(self, view: BotView) -> Move:
        """A random legal move, passing often in the auction."""
        return self.player.choose(view, view.legal_moves)
