"""The small values of a deal: a move, the phase, a play, a call made, a bid, the contract, a trick.

Immutable and hashable, so views, results and records can share them freely. They are named tuples, not
frozen dataclasses: a deal makes one at every call and every trick, and a frozen dataclass sets each
field through `object.__setattr__`, over twice the cost of building a named tuple.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple, TypeAlias

from fiftysix.engine.calls import Call, parse_call
from fiftysix.engine.cards import Card, Suit, parse_card
from fiftysix.engine.errors import NotationError, quoted

Move: TypeAlias = Card | Call
"""A move is a call during the auction and a card during the play."""


class Phase(Enum):
    """Where a deal stands."""

    AUCTION = "auction"
    PLAY = "play"
    FINISHED = "finished"


def parse_move(text: str, phase: Phase) -> Move:
    """The move `text` names in canonical notation: a call in the auction, a card in the play.

    :raises NotationError: when `text` is not a move of that phase in notation (whatever it is: the
        notation comes from bots and files), or the deal is finished.
    """
    if phase is Phase.PLAY:
        return parse_card(text)
    if phase is Phase.AUCTION:
        return parse_call(text)
    raise NotationError(f"the deal is over: no move is made now, got {quoted(text)}")


class Play(NamedTuple):
    """A card played to a trick by a seat."""

    seat: int
    card: Card


class CallMade(NamedTuple):
    """A call made in the auction by a seat."""

    seat: int
    call: Call


class Bid(NamedTuple):
    """A bid as it stands in the auction: who made it, in which form, and the contract it makes."""

    seat: int
    call: Call
    number: int
    trump: Suit | None


class Contract(NamedTuple):
    """The contract the auction ended with.

    `bid` is None when every player passed: then the team of the player to the dealer's right is
    contracted for 28 no trumps (docs/rules.md#all-pass), and `bidder` is that player.
    `doubling` is 1, 2 (doubled) or 4 (redoubled).
    """

    number: int
    trump: Suit | None
    bidder: int
    team: int
    doubling: int
    bid: Bid | None
    doubler: int | None = None
    redoubler: int | None = None

    @property
    def all_pass(self) -> bool:
        """Whether this contract came from an auction in which everybody passed."""
        return self.bid is None

    def __str__(self) -> str:
        denomination = self.trump.letter if self.trump is not None else "NT"
        text = f"{self.number}{denomination} by seat {self.bidder} (team {self.team})"
        if self.all_pass:
            text += ", all passed"
        if self.doubling == 2:
            text += ", doubled"
        elif self.doubling == 4:
            text += ", redoubled"
        return text


class Trick(NamedTuple):
    """A completed trick: who led, the plays in order, who won it and the points in it."""

    leader: int
    plays: tuple[Play, ...]
    winner: int
    points: int
