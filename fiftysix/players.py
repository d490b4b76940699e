"""Built-in in-process players, for `arena play`, tests and benchmarks (remote bots use the SDK)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from fiftysix.engine import MIN_BID, PASS, Call, Move, Phase, View


class RandomPlayer:
    """Plays a uniformly random legal card; in the auction, passes often and raises by little.

    Uniformly random calls would nearly always bid the auction up to 56 (there are hundreds of bids and
    one pass) and end most matches in two deals. So in the auction this player passes with
    `pass_probability` and otherwise picks at random among pass, double, redouble and the bids that make
    one of the `raise_span` lowest numbers still open (the first bid: at most 27 + `raise_span`). The
    golden transcripts are played by it (`fiftysix.transcript.random_chooser`), so a change here shows
    in their diff.
    """

    def __init__(self, rng: random.Random, pass_probability: float = 0.6, raise_span: int = 3) -> None:
        self.rng = rng
        self.pass_probability = pass_probability
        self.raise_span = raise_span

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        """Pick a move from `legal` for the seat whose `view` is given."""
        if view.phase is not Phase.AUCTION:
            return self.rng.choice(legal)
        if self.rng.random() < self.pass_probability:
            return PASS  # always legal in the auction
        current = view.high_bid.number if view.high_bid is not None else 0
        ceiling = max(current, MIN_BID - 1) + self.raise_span
        modest = [
            move
            for move in legal
            if isinstance(move, Call) and (not move.is_bid or move.contract_number(current) <= ceiling)
        ]
        return self.rng.choice(modest)
