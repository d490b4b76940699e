"""A seat's view: exactly what one player may know, and nothing more.

This is all that a bot ever sees. It holds the seat's own hand and the public record: the rules in
force, tables, the calls, the contract, the tricks played and the trick on the table, points taken.
Another player's unplayed card never appears in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.engine.cards import Card
from arena.engine.deal import Bid, CallMade, Contract, Phase, Play, Trick
from arena.engine.rules import MatchRules

if TYPE_CHECKING:
    from arena.engine.match import Match


@dataclass(frozen=True, slots=True)
class View:
    """One seat's knowledge of the match at one moment."""

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

    @property
    def team(self) -> int:
        """This seat's team."""
        return self.team_of[self.seat]

    @property
    def partners(self) -> tuple[int, ...]:
        """The other seats of this seat's team (all of them, at the table or not)."""
        return tuple(s for s, t in enumerate(self.team_of) if t == self.team and s != self.seat)


def build_view(match: Match, seat: int) -> View:
    """The view of `seat` in `match` (see `Match.view`)."""
    if not 0 <= seat < match.rules.players:
        raise ValueError(f"no seat {seat} in a {match.rules.players}-player match")
    deal = match.deal
    teams_out = tuple(sorted(match.out_in_deal, key=lambda team: (match.out_in_deal[team], team)))
    return View(
        seat=seat,
        rules=match.rules,
        team_of=match.team_of,
        seats=deal.seats,
        tables=tuple(match.tables),
        teams_out=teams_out,
        deal_number=match.deal_number,
        dealer=deal.dealer,
        phase=deal.phase,
        to_act=match.to_act,
        hand=tuple(deal.hands[seat]),
        calls=tuple(deal.calls),
        high_bid=deal.high_bid,
        doubling=deal.doubling,
        contract=deal.contract,
        tricks=tuple(deal.tricks),
        trick=tuple(deal.trick),
        points=tuple(deal.points),
    )
