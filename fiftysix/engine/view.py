"""A seat's view: exactly what one player may know, and nothing more.

This is all that a bot ever sees. It holds the seat's own hand and the public record: the rules in
force, tables, the calls, the contract, the tricks played and the trick on the table, points taken.
Another player's unplayed card never appears in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar, overload

from fiftysix.engine.cards import ALL_CARDS, Card, Suit, pack_for
from fiftysix.engine.rules import MatchRules, TeamSeat
from fiftysix.engine.values import Bid, CallMade, Contract, Move, Phase, Play, Trick

T = TypeVar("T")


class once(Generic[T]):  # noqa: N801  (a decorator, named like `property`)
    """A property worked out on first use and kept in the instance: `functools.cached_property` without
    its lock (Python 3.11 takes one at every first use, a tenth of a search bot's view time)."""

    def __init__(self, compute: Callable[[Any], T]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> once[T]: ...
    @overload
    def __get__(self, instance: object, owner: type[Any]) -> T: ...
    def __get__(self, instance: object | None, owner: type[Any]) -> once[T] | T:
        if instance is None:
            return self
        value = self.compute(instance)
        instance.__dict__[self.name] = value  # the instance's own entry hides this descriptor from now on
        return value


@dataclass(frozen=True)
class View(TeamSeat):
    """One seat's knowledge of the match at one moment.

    The helpers that read the whole deal (`played_cards`, `unseen_cards`, `voids`, `winning_play`) are
    worked out once per view and kept: a bot reads them again and again within a decision. That is why
    the class has no `__slots__` (`once` keeps its values in the instance dictionary).
    """

    seat: int
    rules: MatchRules
    team_of: tuple[int, ...]
    """The team of every seat of the match, including seats whose team is out."""
    seats: tuple[int, ...]
    """The seats still at the table, in playing order."""
    tables: tuple[int, ...]
    """Tables held by each team."""
    teams_out: tuple[int, ...]
    """Teams out of tables, in the order they went out."""
    deal_number: int
    dealer: int
    phase: Phase
    to_act: int | None
    hand: tuple[Card, ...]
    """This seat's cards, sorted spades, hearts, diamonds, clubs and high to low."""
    calls: tuple[CallMade, ...]
    high_bid: Bid | None
    """The highest bid so far (None before any bid, and after an all-pass auction)."""
    doubling: int
    contract: Contract | None
    """The contract, once the auction is over."""
    tricks: tuple[Trick, ...]
    """The tricks completed so far in this deal."""
    trick: tuple[Play, ...]
    """The cards on the table in the trick being played, in order."""
    points: tuple[int, ...]
    """Points each team has taken in this deal so far."""
    legal_moves: tuple[Move, ...] = ()
    """This seat's legal moves when it is the seat to act (derived from the rest; empty otherwise)."""

    @property
    def trump(self) -> Suit | None:
        """The contract's trump suit; None for no trumps or while the auction is on."""
        return self.contract.trump if self.contract is not None else None

    @property
    def led_suit(self) -> Suit | None:
        """The suit led to the trick on the table, or None when this seat is to lead."""
        return self.trick[0].card.suit if self.trick else None

    def cards_of(self, suit: Suit) -> tuple[Card, ...]:
        """This seat's cards of `suit`, high to low."""
        return tuple(card for card in self.hand if card.suit is suit)

    @once
    def winning_play(self) -> Play | None:
        """The play winning the trick on the table so far, or None when the table is empty.

        Highest trump if any trump was played, else highest card of the suit led; of two identical
        cards the one played first wins.
        """
        best: Play | None = None
        trump = self.trump
        for play in self.trick:
            if best is None:
                best = play
            elif play.card.suit is best.card.suit:
                if play.card.rank > best.card.rank:
                    best = play
            elif play.card.suit is trump:
                best = play
        return best

    @once
    def trick_points(self) -> int:
        """Card points in the trick on the table."""
        return sum(play.card.points for play in self.trick)

    @once
    def played_cards(self) -> tuple[Card, ...]:
        """Every card played in this deal so far, completed tricks first, in order."""
        done = tuple(play.card for trick in self.tricks for play in trick.plays)
        return done + tuple(play.card for play in self.trick)

    @once
    def unseen_cards(self) -> tuple[Card, ...]:
        """The cards in other players' hands: the pack for the players at the table less this hand and
        every card played in this deal (each copy of a card listed once), in display order."""
        pack = pack_for(len(self.seats))
        seen = [0] * len(ALL_CARDS)
        for card in self.hand:
            seen[card.index] += 1
        for card in self.played_cards:
            seen[card.index] += 1
        left = []
        for card in pack:  # in display order, so the cards left are too
            if seen[card.index]:
                seen[card.index] -= 1
            else:
                left.append(card)
        return tuple(left)

    @once
    def voids(self) -> Mapping[int, frozenset[Suit]]:
        """For each seat at the table, the suits it has shown out of in this deal (it did not follow)."""
        shown: dict[int, set[Suit]] = {seat: set() for seat in self.seats}
        for plays in [*(trick.plays for trick in self.tricks), self.trick]:
            if plays:
                led = plays[0].card.suit
                for play in plays[1:]:
                    if play.card.suit is not led:
                        shown[play.seat].add(led)
        return MappingProxyType({seat: frozenset(suits) for seat, suits in shown.items()})

    @once
    def cards_left(self) -> Mapping[int, int]:
        """For each seat at the table, how many cards it still holds."""
        played = dict.fromkeys(self.seats, 0)
        for trick in self.tricks:
            for play in trick.plays:
                played[play.seat] += 1
        for play in self.trick:
            played[play.seat] += 1
        dealt = len(pack_for(len(self.seats))) // len(self.seats)
        return MappingProxyType({seat: dealt - count for seat, count in played.items()})

    @property
    def seats_to_play(self) -> tuple[int, ...]:
        """The seats still to play to the trick on the table after this seat, in order."""
        seats = self.seats
        start = seats.index(self.seat)
        still = len(seats) - len(self.trick) - 1
        return tuple(seats[(start + step) % len(seats)] for step in range(1, still + 1))

    @property
    def is_to_act(self) -> bool:
        """Whether this seat is the one to act."""
        return self.to_act == self.seat
