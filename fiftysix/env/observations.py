"""A seat's view as numpy arrays: what a learning agent observes.

Built from `View` alone (`Match.view(seat)`), which holds the seat's own hand and the public record
and never another seat's unplayed card, so no observation can leak one. The vector is flat, float32,
laid out in named parts (`ObservationLayout.parts`), so a policy can slice out what it wants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from fiftysix.engine import ALL_CARDS, MAX_BID, MIN_BID, STARTING_TABLES, MatchRules, Phase, Suit, View
from fiftysix.env.actions import ACTION_COUNT, CALL_COUNT, CARD_COUNT, action_of

_CARD_INDEX: Final = {card: index for index, card in enumerate(ALL_CARDS)}
_PHASES: Final = tuple(Phase)
_DENOMINATIONS: Final[tuple[Suit | None, ...]] = (*Suit, None)
"""Spades, hearts, diamonds, clubs, then no trumps (a no-trump or noes contract)."""
_DOUBLINGS: Final = (1, 2, 4)
_BID_NUMBERS: Final = MAX_BID - MIN_BID + 1


@dataclass(frozen=True)
class ObservationLayout:
    """Where each part sits in the observation vector of a match of `rules` (P seats, T teams).

    Parts, each counted in this deal unless said otherwise (cards index `ALL_CARDS`, calls index
    `actions.ALL_CALLS`, seats and teams are the engine's numbers):

    - `seat` (P): this agent's seat, one-hot. `team_of` (P x T): every seat's team, one-hot.
    - `to_act` (P): whose turn, one-hot (zero once the match is over). `dealer` (P), one-hot.
    - `at_table` (P): the seats still at the table (a team out of tables leaves it).
    - `phase` (3): auction, play, finished, one-hot.
    - `hand` (32): this seat's cards, a count per card (0-2: an 8-player pack has two of each).
    - `played` (P x 32): the cards each seat has played, in completed tricks and on the table.
    - `trick` (P x 32): the card each seat has on the table in the trick being played.
    - `leader` (P): who led the trick on the table, one-hot.
    - `calls` (P x 406): the calls each seat has made (a count: a seat may pass more than once).
    - `bid_number` (29), `bid_denomination` (5: S, H, D, C, no trumps), `bid_seat` (P): the highest
      bid so far, or the contract once the auction is over, one-hot each.
    - `contract` (1): 1 once the contract is fixed. `doubling` (3): 1, 2 or 4, one-hot.
    - `points` (T): card points each team has taken. `tables` (T): tables each team holds (match-long).
    """

    rules: MatchRules
    parts: dict[str, slice] = field(init=False)
    size: int = field(init=False)

    def __post_init__(self) -> None:
        seats, teams = self.rules.players, self.rules.team_count
        sizes = {
            "seat": seats,
            "team_of": seats * teams,
            "to_act": seats,
            "dealer": seats,
            "at_table": seats,
            "phase": len(_PHASES),
            "hand": CARD_COUNT,
            "played": seats * CARD_COUNT,
            "trick": seats * CARD_COUNT,
            "leader": seats,
            "calls": seats * CALL_COUNT,
            "bid_number": _BID_NUMBERS,
            "bid_denomination": len(_DENOMINATIONS),
            "bid_seat": seats,
            "contract": 1,
            "doubling": len(_DOUBLINGS),
            "points": teams,
            "tables": teams,
        }
        parts: dict[str, slice] = {}
        start = 0
        for name, size in sizes.items():
            parts[name] = slice(start, start + size)
            start += size
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "size", start)

    @property
    def high(self) -> float:
        """The largest value any part takes: all the tables of the match, or a deal's points."""
        return float(max(self.rules.team_count * STARTING_TABLES, 56))

    def observation(self, view: View) -> npt.NDArray[np.float32]:
        """The observation vector of `view`."""
        teams = self.rules.team_count
        vector = np.zeros(self.size, dtype=np.float32)
        part = self.parts
        vector[part["seat"].start + view.seat] = 1
        team_of = part["team_of"].start
        for seat, team in enumerate(view.team_of):
            vector[team_of + seat * teams + team] = 1
        if view.to_act is not None:
            vector[part["to_act"].start + view.to_act] = 1
        vector[part["dealer"].start + view.dealer] = 1
        for seat in view.seats:
            vector[part["at_table"].start + seat] = 1
        vector[part["phase"].start + _PHASES.index(view.phase)] = 1
        for card in view.hand:
            vector[part["hand"].start + _CARD_INDEX[card]] += 1
        played = part["played"].start
        for trick in view.tricks:
            for play in trick.plays:
                vector[played + play.seat * CARD_COUNT + _CARD_INDEX[play.card]] += 1
        on_table = part["trick"].start
        for play in view.trick:
            vector[played + play.seat * CARD_COUNT + _CARD_INDEX[play.card]] += 1
            vector[on_table + play.seat * CARD_COUNT + _CARD_INDEX[play.card]] = 1
        if view.trick:
            vector[part["leader"].start + view.trick[0].seat] = 1
        calls = part["calls"].start
        for made in view.calls:
            vector[calls + made.seat * CALL_COUNT + action_of(made.call) - CARD_COUNT] += 1
        contract = view.contract
        if contract is not None:
            number, trump, bidder = contract.number, contract.trump, contract.bidder
            vector[part["contract"].start] = 1
        elif view.high_bid is not None:
            number, trump, bidder = view.high_bid.number, view.high_bid.trump, view.high_bid.seat
        else:
            number = 0
        if number:
            vector[part["bid_number"].start + number - MIN_BID] = 1
            vector[part["bid_denomination"].start + _DENOMINATIONS.index(trump)] = 1
            vector[part["bid_seat"].start + bidder] = 1
        vector[part["doubling"].start + _DOUBLINGS.index(view.doubling)] = 1
        vector[part["points"]] = view.points
        vector[part["tables"]] = view.tables
        return vector

    def action_mask(self, view: View) -> npt.NDArray[np.int8]:
        """1 for each legal action of `view` (all 0 unless this seat is to act)."""
        mask = np.zeros(ACTION_COUNT, dtype=np.int8)
        for move in view.legal_moves:
            mask[action_of(move)] = 1
        return mask
